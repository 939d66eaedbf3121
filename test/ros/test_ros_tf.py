"""TF for the node (ros/tf.py): the fallback buffer (TransformCache: chains, inverses,
tolerance), the tf2_ros backend's lookup rules, and both backends agreeing on the same input.

Expectations are written by hand: rotations by 90 degrees about z map x -> y exactly, so every
composed point is a small integer vector.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ambf_collision.ros.tf import TransformCache

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


# -- the tf2_ros backend's lookup rules (TfSource._lookup_tf2) ----------------------------------
# tf2_ros is not on PyPI: here its Buffer is replaced by a stand-in with the same two calls
# (can_transform with a zero timeout, lookup_transform; Time() = the latest), so that the rules
# this package adds on top of it (latest within the tolerance, static chains, refusals) run in
# every environment with rclpy. The real Buffer is exercised by the test after these.


def _ts(stamp_s, q=QZ90, t=(1.0, 2.0, 3.0)):
    from types import SimpleNamespace as NS

    sec = int(stamp_s)
    return NS(header=NS(stamp=NS(sec=sec, nanosec=int(round((stamp_s - sec) * 1e9)))),
              transform=NS(rotation=NS(x=q[0], y=q[1], z=q[2], w=q[3]),
                           translation=NS(x=t[0], y=t[1], z=t[2])))


class _Buffer:
    """``tf2_ros.Buffer``'s can_transform / lookup_transform over one list of transforms per
    (target, source); ``Time()`` (0 ns) asks for the latest."""

    def __init__(self, transforms=None, error=None):
        self.transforms = transforms or {}
        self.error = error

    def _find(self, target, source, when):
        if self.error is not None:
            raise self.error
        found = self.transforms.get((target, source), [])
        ns = when.nanoseconds
        if ns == 0:
            return found[-1] if found else None
        for ts in found:
            if ts.header.stamp.sec * 10**9 + ts.header.stamp.nanosec == ns:
                return ts
        return None

    def can_transform(self, target, source, when, timeout):
        assert timeout.nanoseconds == 0, "the node must never wait for a transform"
        return self._find(target, source, when) is not None

    def lookup_transform(self, target, source, when):
        return self._find(target, source, when)


def _tf2_source(buffer, tolerance=0.1):
    pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
    from ambf_collision.ros.tf import TfSource

    src = object.__new__(TfSource)  # what __init__ sets up when tf2_ros is importable
    src.backend, src._buffer, src.tolerance, src.cache, src._subs = "tf2_ros", buffer, tolerance, None, []
    return src


def test_tf2_backend_uses_the_stamped_transform_when_present():
    buf = _Buffer({("world", "base"): [_ts(10.0), _ts(11.0, q=QID, t=(9.0, 9.0, 9.0))]})
    pose, why = _tf2_source(buf).lookup("world", "base", 10.0)
    assert why == ""
    np.testing.assert_allclose(_apply(pose, (1, 0, 0)), (1.0, 3.0, 3.0), atol=1e-15)  # x -> y, +t


@pytest.mark.parametrize("stamp, ok", [(11.05, True), (11.2, False)])
def test_tf2_backend_takes_the_latest_within_the_tolerance(stamp, ok):
    buf = _Buffer({("world", "base"): [_ts(10.0), _ts(11.0, q=QID)]})
    pose, why = _tf2_source(buf, tolerance=0.1).lookup("world", "base", stamp)
    if ok:
        np.testing.assert_allclose(_apply(pose, (0, 0, 0)), (1.0, 2.0, 3.0))
    else:
        assert pose is None and "older than needed (tolerance 0.1 s)" in why


def test_tf2_backend_static_chain_never_expires():
    buf = _Buffer({("world", "table"): [_ts(0.0, q=QID)]})  # stamp 0: static transforms only
    pose, why = _tf2_source(buf, tolerance=0.1).lookup("world", "table", 1000.0)
    assert why == "" and np.allclose(pose[1], (1.0, 2.0, 3.0))


@pytest.mark.parametrize("buf, words", [
    (_Buffer(), "no transform 'world' <- 'base'"),
    (_Buffer(error=RuntimeError("extrapolation into the future")), "extrapolation into the future"),
    (_Buffer({("world", "base"): [_ts(5.0, q=(0.0, 0.0, 0.0, 0.0))]}), "invalid rotation"),
    (_Buffer({("world", "base"): [_ts(5.0, t=(0.0, math.nan, 0.0))]}), "not finite"),
])
def test_tf2_backend_refusals_name_the_problem(buf, words):
    pose, why = _tf2_source(buf).lookup("world", "base", 5.0)
    assert pose is None and words in why


def test_clear_dynamic_keeps_static_links(tree):
    """After a clock jump back the dynamic links go; the static world <- base stays."""
    tree.clear_dynamic()
    assert tree.lookup("world", "base", 5.0, 0.0)[0] is not None
    assert "unknown" in tree.lookup("world", "link", 10.0, 0.1)[1]
    assert tree.set_from_quaternion("base", "link", QZ90, (0, 2, 0), 1.0)  # older stamp: taken


@pytest.fixture
def ros_node():
    pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
    import rclpy
    from rclpy.context import Context

    ctx = Context()
    rclpy.init(context=ctx)
    node = rclpy.create_node("test_tf_backends", context=ctx)
    yield node
    node.destroy_node()
    rclpy.shutdown(context=ctx)


def _stamped(parent, child, stamp, q, t):
    from geometry_msgs.msg import TransformStamped

    ts = TransformStamped()
    ts.header.frame_id, ts.child_frame_id = parent, child
    ts.header.stamp.sec, ts.header.stamp.nanosec = int(stamp), int(round(stamp % 1 * 1e9))
    ts.transform.rotation.x, ts.transform.rotation.y = q[0], q[1]
    ts.transform.rotation.z, ts.transform.rotation.w = q[2], q[3]
    (ts.transform.translation.x, ts.transform.translation.y,
     ts.transform.translation.z) = t
    return ts


def _real_tf2_source(node):
    from ros_harness import require_module
    from ambf_collision.ros.tf import TfSource

    tf2_ros = require_module("tf2_ros")
    src = TfSource(node, tolerance=0.1)
    assert src.backend == "tf2_ros" and isinstance(src._buffer, tf2_ros.Buffer)
    return src


def test_tf2_backend_with_the_real_buffer(ros_node):
    src = _real_tf2_source(ros_node)
    src._buffer.set_transform(_stamped("world", "base", 10.0, QZ90, (1.0, 2.0, 0.0)), "test")
    pose, why = src.lookup("world", "base", 10.0)
    assert why == ""
    np.testing.assert_allclose(_apply(pose, (1, 0, 0)), (1.0, 3.0, 0.0), atol=1e-12)
    assert src.lookup("world", "base", 10.5)[0] is None  # latest is 0.5 s old: > tolerance
    src.clear()  # a clock jump back: the dynamic transform goes
    assert src.lookup("world", "base", 10.0)[0] is None


def test_both_backends_agree_on_slash_names_and_static_transforms(ros_node):
    """The same transforms, some named '/world' as ROS 1 wrote them, given to tf2_ros and to
    the fallback cache: every lookup (targets with and without '/', static at any stamp, a
    dynamic chain at its stamp and within the tolerance) gives the same pose or both refuse."""
    from tf2_msgs.msg import TFMessage

    from ambf_collision.ros.tf import TfSource

    tf2 = _real_tf2_source(ros_node)
    fallback = TfSource(ros_node, tolerance=0.1, force_fallback=True)
    assert fallback.backend == "fallback"
    static = [_stamped("/world", "fixture", 3.0, QZ90, (0.0, 0.7, 0.0))]
    dynamic = [_stamped("world", "mover", 10.0, QID, (-0.5, 0.0, 0.0)),
               _stamped("mover", "/tool", 10.0, QZ90, (0.0, 0.0, 0.25))]
    for ts in static:
        tf2._buffer.set_transform_static(ts, "test")
    for ts in dynamic:
        tf2._buffer.set_transform(ts, "test")
    fallback._on_tf(TFMessage(transforms=static), True)
    fallback._on_tf(TFMessage(transforms=dynamic), False)
    # the intake reads one slice of bounded time per message and leaves the rest to the node's
    # slice timer, which nothing spins here: read all of it (on a busy machine the slice ended
    # before '/tool', which the fallback then did not know)
    while fallback.intake.work():
        pass
    expect = {("world", "fixture"): (0.0, 1.7, 0.0), ("world", "tool"): (-0.5, 1.0, 0.25)}
    for target in ("world", "/world"):
        for source, stamp in (("fixture", 0.0), ("/fixture", 1e6), ("tool", 10.0),
                              ("/tool", 10.05), ("tool", 10.5), ("tool", 9.0)):
            a, why_a = tf2.lookup(target, source, stamp)
            b, why_b = fallback.lookup(target, source, stamp)
            assert (a is None) == (b is None), (target, source, stamp, why_a, why_b)
            if a is None:
                assert stamp == 10.5 and "older than needed" in why_a + why_b
                continue
            np.testing.assert_allclose(a[0], b[0], atol=1e-12)
            np.testing.assert_allclose(a[1], b[1], atol=1e-12)
            key = (target.lstrip("/"), source.lstrip("/"))
            np.testing.assert_allclose(_apply(a, (1, 0, 0)), expect[key], atol=1e-12)
