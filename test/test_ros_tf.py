"""The TF fallback buffer (ambf_collision.ros_tf.TransformCache): chains, inverses, tolerance.

Expectations are written by hand: rotations by 90 degrees about z map x -> y exactly, so every
composed point is a small integer vector.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ambf_collision.ros_tf import TransformCache

S2 = math.sqrt(0.5)
QZ90 = (0.0, 0.0, S2, S2)  # [x, y, z, w]: +90 deg about z
QID = (0.0, 0.0, 0.0, 1.0)


def _apply(pose, x):
    R, t = pose
    return R @ np.asarray(x, float) + t


@pytest.fixture
def tree():
    """world <- base (translate +1 x, static); base <- link (yaw 90 deg, translate +2 y, t=10);
    world <- cam (translate +5 z, t=10)."""
    c = TransformCache()
    assert c.set_from_quaternion("world", "base", QID, (1, 0, 0), 0.0, static=True)
    assert c.set_from_quaternion("base", "link", QZ90, (0, 2, 0), 10.0)
    assert c.set_from_quaternion("world", "cam", QID, (0, 0, 5), 10.0)
    return c


def test_chain_composes_outward(tree):
    pose, why = tree.lookup("world", "link", 10.0, 0.1)
    assert why == ""
    # link's x axis point (1,0,0) -> rotated to (0,1,0) -> +(0,2,0) in base -> +(1,0,0) in world
    np.testing.assert_allclose(_apply(pose, (1, 0, 0)), (1, 3, 0), atol=1e-12)
    np.testing.assert_allclose(_apply(pose, (0, 0, 0)), (1, 2, 0), atol=1e-12)


def test_inverse_and_sibling_lookup(tree):
    pose, _ = tree.lookup("link", "world", 10.0, 0.1)
    # the world point (1,3,0) is link's (1,0,0)
    np.testing.assert_allclose(_apply(pose, (1, 3, 0)), (1, 0, 0), atol=1e-12)
    pose, _ = tree.lookup("cam", "link", 10.0, 0.1)
    # link origin is (1,2,0) in world, i.e. (1,2,-5) in cam
    np.testing.assert_allclose(_apply(pose, (0, 0, 0)), (1, 2, -5), atol=1e-12)
    pose, _ = tree.lookup("base", "link", 10.0, 0.1)  # target is an ancestor
    np.testing.assert_allclose(_apply(pose, (1, 0, 0)), (0, 3, 0), atol=1e-12)


def test_identity_for_same_frame_and_leading_slash(tree):
    pose, why = tree.lookup("/world", "world", 0.0, 0.0)
    np.testing.assert_array_equal(pose[0], np.eye(3))
    pose, _ = tree.lookup("/world", "/base", 123.0, 0.0)
    np.testing.assert_allclose(pose[1], (1, 0, 0))


def test_tolerance_applies_to_dynamic_links_only(tree):
    # needed at t=10.3 with tolerance 0.1: the link stamped 10.0 is too old
    pose, why = tree.lookup("world", "link", 10.3, 0.1)
    assert pose is None and "'link'" in why and "0.300 s" in why
    # the static base never expires
    pose, why = tree.lookup("world", "base", 1e6, 0.1)
    assert pose is not None, why
    # within tolerance and newer-than-needed stamps are fine
    assert tree.lookup("world", "link", 10.05, 0.1)[0] is not None
    assert tree.lookup("world", "link", 9.0, 0.1)[0] is not None


def test_unknown_and_disconnected_frames_name_the_problem(tree):
    pose, why = tree.lookup("world", "nowhere", 10.0, 0.1)
    assert pose is None and "'nowhere'" in why and "unknown" in why
    tree.set_from_quaternion("island", "rock", QID, (0, 0, 0), 10.0)
    pose, why = tree.lookup("world", "rock", 10.0, 0.1)
    assert pose is None and "not connected" in why


def test_older_dynamic_stamp_does_not_replace_newer(tree):
    assert not tree.set_from_quaternion("base", "link", QID, (0, 0, 0), 9.0)
    pose, _ = tree.lookup("base", "link", 10.0, 0.1)
    np.testing.assert_allclose(pose[1], (0, 2, 0))
    assert tree.set_from_quaternion("base", "link", QID, (0, 7, 0), 11.0)
    pose, _ = tree.lookup("base", "link", 11.0, 0.1)
    np.testing.assert_allclose(pose[1], (0, 7, 0))


@pytest.mark.parametrize("q,t", [((0, 0, 0, 0), (0, 0, 0)), (QID, (math.nan, 0, 0)),
                                 ((math.inf, 0, 0, 1), (0, 0, 0))],
                         ids=["zero-quaternion", "nan-translation", "inf-rotation"])
def test_degenerate_transforms_are_refused(q, t):
    c = TransformCache()
    assert not c.set_from_quaternion("world", "x", q, t, 1.0)
    assert c.lookup("world", "x", 1.0, 1.0)[0] is None


def test_unnormalised_quaternion_is_normalised():
    c = TransformCache()
    c.set_from_quaternion("world", "x", (0, 0, 2.0, 2.0), (0, 0, 0), 1.0)
    pose, _ = c.lookup("world", "x", 1.0, 0.1)
    np.testing.assert_allclose(_apply(pose, (1, 0, 0)), (0, 1, 0), atol=1e-12)


def test_cycle_does_not_hang():
    c = TransformCache()
    c.set_from_quaternion("a", "b", QID, (1, 0, 0), 1.0)
    c.set_from_quaternion("b", "a", QID, (1, 0, 0), 1.0)
    pose, why = c.lookup("world", "a", 1.0, 0.1)
    assert pose is None
