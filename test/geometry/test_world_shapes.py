"""WorldShapes / LinkShapes: the array layout, shapes moved to world by the compiled kernel
(against each shape's own ``transformed``, a NumPy path through quaternions), two worlds of one
LinkShapes independent, and clear errors."""

import numpy as np
import pytest

from ambf_collision.geometry.shapes import (BOX, CAPSULE, CONE, CONVEX, CYLINDER, PLANE, SPHERE, Box,
                                            Capsule, Cone, ConvexHull, Cylinder, Plane, ShapeError,
                                            Sphere)
from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.geometry.world_shapes import SHAPE_DTYPE, LinkShapes, WorldShapes, shape_at

TET = np.array([[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [-0.1, -0.1, -0.1]])


def all_kinds():
    return [Sphere([0.1, 0.2, 0.3], 0.1), Capsule([0, 0, 0], [0.2, 0.1, 0], 0.05),
            Box([0.2, 0.3, 0.4], [0.1, 0, 0], [0, 0, 0.6, 0.8]),
            Cylinder(0.1, 0.3, [0, 0.2, 0], [0.1, 0.2, 0.3, 0.9]),
            Cone(0.15, 0.2, [0, 0, 0.1], [0.3, 0.1, 0, 0.9]), Plane([0, 0.3, 1], -0.1),
            ConvexHull(TET, [0.1, 0.2, 0.3], [0, 0.2, 0, 0.9])]


def test_layout_hand_values():
    w = WorldShapes.from_shapes(all_kinds())
    assert w.kind.tolist() == [SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX]
    assert w.kind.dtype == np.int64 and w.hull_id.dtype == np.int64
    assert w.hull_id.tolist() == [-1, -1, -1, -1, -1, -1, 0]
    np.testing.assert_array_equal(w.a[0], w.b[0])
    np.testing.assert_array_equal(w.b[1], [0.2, 0.1, 0])
    np.testing.assert_array_equal(w.half[2], [0.1, 0.15, 0.2])
    np.testing.assert_array_equal(w.half[3], [0.1, 0.1, 0.15])
    assert w.radius.tolist() == [0.1, 0.05, 0.0, 0.1, 0.15, 0.0, 0.0]
    n = np.array([0, 0.3, 1]) / np.hypot(0.3, 1)
    np.testing.assert_allclose(w.normal[5], n, rtol=1e-15)
    np.testing.assert_allclose(w.a[5], -0.1 * n, rtol=1e-15)     # the point offset * normal
    np.testing.assert_array_equal(w.rot[0], np.eye(3))
    np.testing.assert_array_equal(w.rot[5], np.eye(3))
    assert w.hulls is not None
    assert w.table.dtype == SHAPE_DTYPE and w.table.flags.c_contiguous
    for x in w.arrays():   # the fields are views of the one record table (CONTRACT.md update)
        assert np.shares_memory(x, w.table) and x.dtype in (np.float64, np.int64)


def test_shape_at_round_trip():
    shapes = all_kinds()
    w = WorldShapes.from_shapes(shapes)
    for k, s in enumerate(shapes):
        back = shape_at(w, None, k)
        assert back.kind == s.kind
        w2 = WorldShapes.from_shapes([back])
        for name in ("a", "b", "radius", "rot", "half", "normal", "offset"):
            np.testing.assert_allclose(getattr(w2, name)[0], getattr(w, name)[k], atol=1e-15)


@pytest.mark.parametrize("seed", range(3))
def test_to_world_equals_each_shape_transformed(seed):
    rng = np.random.default_rng(seed)
    shapes = all_kinds()
    F = 3
    fi = rng.integers(0, F, len(shapes))
    link = LinkShapes(shapes, fi)
    R = quat_to_matrix(rng.normal(size=(F, 4)))
    t = rng.normal(size=(F, 3))
    w = link.to_world(R, t)
    ref = WorldShapes.from_shapes([s.transformed(R[f], t[f]) for s, f in zip(shapes, fi)])
    for name in ("kind", "a", "b", "radius", "rot", "half", "normal", "offset", "hull_id"):
        np.testing.assert_allclose(getattr(w, name), getattr(ref, name), atol=1e-15, err_msg=name)


def test_two_worlds_of_one_link_are_independent():
    shapes = all_kinds()
    link = LinkShapes(shapes, [0] * len(shapes))
    w1, w2 = link.new_world(), link.new_world()
    link.to_world(np.eye(3)[None], np.zeros((1, 3)), w1)
    before = w1.copy()
    link.to_world(quat_to_matrix([0.1, 0.2, 0.3, 0.9])[None], np.ones((1, 3)), w2)
    for x, y in zip(w1.arrays(), before.arrays()):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(w1.a, w2.a)
    # the link's own arrays are read-only constants
    with pytest.raises(ValueError):
        link.local.a[0, 0] = 1.0


def test_errors_name_the_problem():
    with pytest.raises(ShapeError, match="frame_index"):
        LinkShapes([Sphere([0, 0, 0], 1.0)], [0, 1])
    with pytest.raises(ShapeError, match="frame_index: must be >= 0"):
        LinkShapes([Sphere([0, 0, 0], 1.0)], [-1])
    with pytest.raises(ShapeError, match=r"shapes\[1\]"):
        WorldShapes.from_shapes([Sphere([0, 0, 0], 1.0), "box"])
    link = LinkShapes([Sphere([0, 0, 0], 1.0)], [2])
    with pytest.raises(ValueError, match="frame index 2 out of range"):
        link.to_world(np.eye(3)[None], np.zeros((1, 3)))
    with pytest.raises(ValueError, match=r"body_R \(B,3,3\)"):
        link.to_world(np.eye(3), np.zeros(3))
    with pytest.raises(ValueError, match="out holds 2 shapes"):
        link.to_world(np.tile(np.eye(3), (3, 1, 1)), np.zeros((3, 3)), WorldShapes(2))
