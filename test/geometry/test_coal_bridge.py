"""coal_bridge, the coal oracle: shapes to coal geometries (hulls from HullSet), coal's distance.

Oracles: hand-derived geometry, closed-form plane distances (vertices, sampled rims), and the
support certificate of gjk_reference (a separation's witness points on both supporting planes).
"""

import warnings

import numpy as np
import pytest
from gjk_reference import support_values, world_of
from hypothesis import given, settings
from conftest import examples
from hypothesis import strategies as st

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")

from ambf_collision.geometry.coal_bridge import (
    coal_distance,
    coal_geometry,
    solid_pair_distance,
    to_coal,
)
from ambf_collision.geometry.shapes import (
    BOX,
    CONE,
    CONVEX,
    CYLINDER,
    Box,
    Capsule,
    Cone,
    ConvexHull,
    Cylinder,
    Plane,
    Sphere,
)
from ambf_collision.geometry.transforms import (
    axis_angle_to_matrix,
    matrix_to_quat,
    quat_to_matrix,
)

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
quat = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-3).map(np.array)
size = st.floats(0.05, 1.0)
SOLIDS = ("box", "cylinder", "cone", "convex")


def make(kind, c, q, a, b, verts_seed=0):
    o = matrix_to_quat(quat_to_matrix(q))
    if kind == "box":
        return Box([2 * a, 2 * b, a + b], c, o)
    if kind == "cylinder":
        return Cylinder(a, 2 * b, c, o)
    if kind == "cone":
        return Cone(a, 2 * b, c, o)
    return ConvexHull(np.random.default_rng(verts_seed).uniform(-a, a, (9, 3)), c, o)


def test_hand_derived():
    d, _, _, n = solid_pair_distance(Box([1.0, 1.0, 1.0]), Box([2.0, 2.0, 2.0], [3.0, 0.2, 0.1]))
    assert abs(d - 1.5) < 1e-9 and np.allclose(n, [1, 0, 0], atol=1e-9)
    cyl = Cylinder(1.0, 2.0, [0.0, 0.0, 0.0])
    box = Box([1.0, 1.0, 1.0], [3.0, 0.0, 0.0], matrix_to_quat(axis_angle_to_matrix([0, 0, 1], np.pi / 4)))
    d, _, _, n = solid_pair_distance(cyl, box)  # the box's vertical edge at x = 3 - sqrt(1/2)
    assert abs(d - (3.0 - np.sqrt(0.5) - 1.0)) < 1e-9 and np.allclose(n, [1, 0, 0], atol=1e-8)
    d, _, _, n = solid_pair_distance(cyl, Cone(0.5, 1.0, [0.0, 0.0, 1.75]))  # base at z = 1.25
    assert abs(d - 0.25) < 1e-9 and np.allclose(n, [0, 0, 1], atol=1e-9)
    d, _p1, _p2, n = solid_pair_distance(cyl, Box([0.4, 0.4, 0.4], [0.0, 0.0, 1.0]))  # sunk 0.2
    assert abs(d + 0.2) < 1e-9 and np.allclose(n, [0, 0, 1], atol=1e-9)
    d, _, _, n = solid_pair_distance(Sphere([0.0, 0.0, 3.0], 0.5), Capsule([0, 0, 0], [0, 0, 1.0], 0.25))
    assert abs(d - 1.25) < 1e-9 and np.allclose(n, [0, 0, -1], atol=1e-9)


def test_two_planes_rejected():
    with pytest.raises(ValueError, match="two planes"):
        solid_pair_distance(Plane([0, 0, 1], 0.0), Plane([0, 1, 0], 0.0))


@settings(max_examples=examples(80), deadline=None)
@given(kind=st.sampled_from(SOLIDS), c=vec3, q=quat, a=size, b=size, nrm=vec3, off=finite)
def test_plane_vs_solid_closed_form(kind, c, q, a, b, nrm, off):
    if np.linalg.norm(nrm) < 1e-3:
        nrm = np.array([0.0, 0.0, 1.0])
    plane = Plane(nrm, off)
    s = make(kind, c, q, a, b)
    d, p1, p2, n = solid_pair_distance(plane, s)
    assert np.allclose(n, plane.normal, atol=1e-12) and np.allclose(p2, p1 + d * n, atol=1e-9)
    assert abs(plane.normal @ p1 - plane.offset) < 1e-9  # p1 on the plane
    R, t = quat_to_matrix(s.orientation), s.position
    if kind in ("box", "convex"):
        corners = (np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.5 * s.size
                   if kind == "box" else s.vertices)
        ref = np.min((corners @ R.T + t) @ plane.normal) - plane.offset
        assert abs(d - ref) < 1e-12
    else:
        th = np.linspace(0, 2 * np.pi, 20001)
        zs = [-0.5 * s.height, 0.5 * s.height] if kind == "cylinder" else [-0.5 * s.height]
        pts = [np.stack([s.radius * np.cos(th), s.radius * np.sin(th), np.full_like(th, z)], 1) for z in zs]
        if kind == "cone":
            pts.append(np.array([[0.0, 0.0, 0.5 * s.height]]))
        ref = np.min((np.concatenate(pts) @ R.T + t) @ plane.normal) - plane.offset
        assert ref - 1e-6 <= d <= ref + 1e-12  # sampled rim: an upper bound within (2 pi / 20000)^2 r
    d2, _, _, n2 = solid_pair_distance(s, plane)  # swapped
    assert abs(d2 - d) < 1e-12 and np.allclose(n2, -n, atol=1e-12)


@settings(max_examples=examples(30), deadline=None)
@given(k1=st.sampled_from(SOLIDS), k2=st.sampled_from(SOLIDS), c1=vec3, c2=vec3, q1=quat, q2=quat,
       a1=size, b1=size, a2=size, b2=size)
def test_separated_solids_are_certified(k1, k2, c1, c2, q1, q2, a1, b1, a2, b2):
    """Apart, coal's witness points lie on both supporting planes along its normal: its distance
    is exact (to its tolerance) whatever the shapes; under a common rigid motion it is unchanged."""
    s1 = make(k1, c1, q1, a1, b1, 1)
    s2 = make(k2, 3 * c2 + [8.0, 0.0, 0.0], q2, a2, b2, 2)  # each within 2 m of its centre: apart
    d, p1, p2, n = solid_pair_distance(s1, s2)
    assert d > 0 and abs(np.linalg.norm(n) - 1) < 1e-9 and np.allclose(p2, p1 + d * n, atol=1e-9)
    # (coal stops GJK on curved surfaces at its tolerance: its witnesses are good to ~1e-9 m)
    assert abs(n @ p1 - support_values(s1, n)[0]) < 1e-8 and abs(-n @ p2 - support_values(s2, -n)[0]) < 1e-8
    R, t = axis_angle_to_matrix([0.3, -0.5, 0.8], 1.1), np.array([0.4, -2.0, 1.5])
    assert abs(solid_pair_distance(s1.transformed(R, t), s2.transformed(R, t))[0] - d) < 1e-8


def test_hulls_are_the_package_hulls():
    """A ConvexHull reaches coal as the HullSet hull (qhull): same vertices, the interior and
    duplicate points dropped, a flat cloud as its polygon."""
    rng = np.random.default_rng(0)
    cloud = np.vstack([rng.normal(size=(300, 3)), rng.normal(size=(300, 3)) * 0.1])  # many inner points
    shape = ConvexHull(cloud)
    geometry, _ = to_coal(shape)
    hulls = world_of([shape])[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        points = np.array(geometry.points())
    assert sorted(map(tuple, points)) == sorted(map(tuple, hulls.hull_vertices(0)))
    sheet = ConvexHull([[0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0.5, 0.5, 0]])
    d, *_ = solid_pair_distance(sheet, Sphere([0.5, 0.5, 1.0], 0.25))
    assert abs(d - 0.75) < 1e-9


def test_coal_geometry_is_the_local_to_coal():
    rng = np.random.default_rng(1)
    for kind, shape in ((BOX, Box([0.2, 0.4, 0.6])), (CYLINDER, Cylinder(0.3, 0.5)), (CONE, Cone(0.3, 0.5)),
                        (CONVEX, ConvexHull(rng.uniform(-0.3, 0.3, (12, 3))))):
        half = (0.5 * shape.size if kind == BOX else
                np.zeros(3) if kind == CONVEX else np.array([shape.radius, shape.radius, 0.5 * shape.height]))
        local = coal_geometry(kind, half, getattr(shape, "vertices", None))
        other, tf = to_coal(Sphere([1.5, 0.2, -0.1], 0.1))
        a = coal_distance(local, coal.Transform3s(), other, tf)[0]
        b = coal_distance(*to_coal(shape), other, tf)[0]
        assert abs(a - b) < 1e-12
    with pytest.raises(ValueError, match="unsupported kind"):
        coal_geometry(0, np.zeros(3))
