"""Solid-solid distances through coal, and exact half-space pairs."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

coal = pytest.importorskip("coal")

from ambf_collision.geometry.coal_bridge import solid_pair_distance, to_coal  # noqa: E402
from ambf_collision.geometry.shapes import (  # noqa: E402
    BOX, CONE, CONVEX, CYLINDER, Box, Capsule, Cone, ConvexHull, Cylinder, Plane, Sphere,
)
from ambf_collision.geometry.solids import point_solid_distance, segment_solid_distance  # noqa: E402
from ambf_collision.geometry.transforms import axis_angle_to_matrix, matrix_to_quat, quat_to_matrix  # noqa: E402

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
quat = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-3).map(np.array)
size = st.floats(0.05, 1.0)


def arrays(shape):
    """(kind, center, rot, half, hull) of a posed solid for solid_distance."""
    R = quat_to_matrix(shape.orientation)
    c = np.asarray(shape.position, float)
    if isinstance(shape, Box):
        return BOX, c, R, 0.5 * shape.size, None
    if isinstance(shape, ConvexHull):
        return CONVEX, c, R, np.zeros(3), [shape.vertices]
    return (CONE if isinstance(shape, Cone) else CYLINDER), c, R, np.array([shape.radius, shape.radius,
                                                                            0.5 * shape.height]), None


def sdf(shape, p):
    kind, c, R, h, hull = arrays(shape)
    return point_solid_distance(kind, np.atleast_2d(p), c[None], R[None], h[None], None, None, hull)[0][0]


def make(kind, c, q, a, b, verts_seed=0):
    o = matrix_to_quat(quat_to_matrix(q))
    if kind == "box":
        return Box([2 * a, 2 * b, a + b], c, o)
    if kind == "cylinder":
        return Cylinder(a, 2 * b, c, o)
    if kind == "cone":
        return Cone(a, 2 * b, c, o)
    return ConvexHull(np.random.default_rng(verts_seed).uniform(-a, a, (9, 3)), c, o)


SOLIDS = ("box", "cylinder", "cone", "convex")


def check_contact(s1, s2, res, tol=1e-9):
    d, p1, p2, n = res
    assert np.isfinite(d) and np.all(np.isfinite(p1)) and np.all(np.isfinite(p2)) and np.all(np.isfinite(n))
    assert abs(np.linalg.norm(n) - 1) < 1e-9
    assert np.allclose(p2, p1 + d * n, atol=tol)
    for s, p in ((s1, p1), (s2, p2)):
        if not isinstance(s, Plane):
            assert abs(sdf(s, p)) < tol  # witness point on its shape's surface


# ------------------------------------------------------------------------------------- hand-derived

def test_box_box_and_box_cylinder_and_cylinder_cone_hand():
    b1 = Box([1.0, 1.0, 1.0])
    b2 = Box([2.0, 2.0, 2.0], [3.0, 0.2, 0.1])
    d, p1, p2, n = solid_pair_distance(b1, b2)
    assert abs(d - 1.5) < 1e-9 and np.allclose(n, [1, 0, 0], atol=1e-9)
    cyl = Cylinder(1.0, 2.0, [0.0, 0.0, 0.0])
    box = Box([1.0, 1.0, 1.0], [3.0, 0.0, 0.0], matrix_to_quat(axis_angle_to_matrix([0, 0, 1], np.pi / 4)))
    d, p1, p2, n = solid_pair_distance(cyl, box)  # the box's vertical edge at x = 3 - sqrt(1/2) faces the axis
    assert abs(d - (3.0 - np.sqrt(0.5) - 1.0)) < 1e-9 and np.allclose(n, [1, 0, 0], atol=1e-8)
    cone = Cone(0.5, 1.0, [0.0, 0.0, 1.75])  # base at z = 1.25, cylinder top at 1
    d, p1, p2, n = solid_pair_distance(cyl, cone)
    assert abs(d - 0.25) < 1e-9 and np.allclose(n, [0, 0, 1], atol=1e-9)
    # penetration: box sunk 0.2 into the cylinder's top cap
    d, p1, p2, n = solid_pair_distance(cyl, Box([0.4, 0.4, 0.4], [0.0, 0.0, 1.0]))
    assert abs(d + 0.2) < 1e-9 and np.allclose(n, [0, 0, 1], atol=1e-9)


def test_two_planes_rejected():
    with pytest.raises(ValueError, match="two planes"):
        solid_pair_distance(Plane([0, 0, 1], 0.0), Plane([0, 1, 0], 0.0))


def test_capsule_vs_box_agrees_with_segment_distance():
    rng = np.random.default_rng(2)
    for _ in range(30):
        box = Box(rng.uniform(0.1, 1, 3), rng.normal(size=3), matrix_to_quat(quat_to_matrix(rng.normal(size=4))))
        a, b = rng.normal(size=3) * 2, rng.normal(size=3) * 2
        r = 0.05
        d, on, x, n = segment_solid_distance(BOX, a[None], b[None], box.position[None], box.rotation[None],
                                             0.5 * box.size[None], None, None)
        if d[0] - r <= 1e-6:
            continue  # coal's EPA is not the reference for penetration here
        dc, p1, p2, nc = solid_pair_distance(Capsule(a, b, r), box)
        assert abs(dc - (d[0] - r)) < 1e-9
        assert np.allclose(p2, x[0], atol=1e-6) and np.allclose(nc, -n[0], atol=1e-6)


# ------------------------------------------------------------------------------------- planes: exact

@settings(max_examples=80, deadline=None)
@given(kind=st.sampled_from(SOLIDS), c=vec3, q=quat, a=size, b=size, nrm=vec3, off=finite)
def test_plane_vs_solid_closed_form(kind, c, q, a, b, nrm, off):
    if np.linalg.norm(nrm) < 1e-3:
        nrm = np.array([0.0, 0.0, 1.0])
    plane = Plane(nrm, off)
    s = make(kind, c, q, a, b)
    d, p1, p2, n = solid_pair_distance(plane, s)
    check_contact(plane, s, (d, p1, p2, n), tol=1e-12)
    assert abs(plane.normal @ p1 - plane.offset) < 1e-12  # p1 on the plane
    # independent: minimum of n.x - offset over dense surface samples / vertices of the solid
    R, t = quat_to_matrix(s.orientation), s.position
    if kind == "box":
        corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * 0.5 * s.size
        ref = np.min((corners @ R.T + t) @ plane.normal) - plane.offset
        assert abs(d - ref) < 1e-12
    elif kind == "convex":
        ref = np.min((s.vertices @ R.T + t) @ plane.normal) - plane.offset
        assert abs(d - ref) < 1e-12
    else:
        th = np.linspace(0, 2 * np.pi, 20001)
        zs = [-0.5 * s.height, 0.5 * s.height] if kind == "cylinder" else [-0.5 * s.height]
        pts = [np.stack([s.radius * np.cos(th), s.radius * np.sin(th), np.full_like(th, z)], 1) for z in zs]
        if kind == "cone":
            pts.append(np.array([[0.0, 0.0, 0.5 * s.height]]))
        ref = np.min((np.concatenate(pts) @ R.T + t) @ plane.normal) - plane.offset
        assert ref - 1e-6 <= d <= ref + 1e-12  # sampled rim: an upper bound within (2 pi / 20000)^2 r
    # swapped: same distance, flipped normal, swapped witnesses
    d2, q1, q2, n2 = solid_pair_distance(s, plane)
    assert d2 == d and np.array_equal(q1, p2) and np.array_equal(q2, p1) and np.array_equal(n2, -n)
    # coal agrees where it supports the pair (separated)
    if d > 1e-3:
        g1, tf1 = to_coal(plane)
        g2, tf2 = to_coal(s)
        req, res = coal.DistanceRequest(), coal.DistanceResult()
        req.gjk_tolerance = 1e-10
        assert abs(coal.distance(g1, tf1, g2, tf2, req, res) - d) < 1e-8


# ------------------------------------------------------------------------------------- solid-solid

@settings(max_examples=80, deadline=None)
@given(k1=st.sampled_from(SOLIDS), k2=st.sampled_from(SOLIDS), c1=vec3, c2=vec3, q1=quat, q2=quat,
       a1=size, b1=size, a2=size, b2=size)
def test_solid_pairs_symmetry_and_witnesses(k1, k2, c1, c2, q1, q2, a1, b1, a2, b2):
    s1 = make(k1, c1, q1, a1, b1, 1)
    s2 = make(k2, 2 * c2, q2, a2, b2, 2)
    r12 = solid_pair_distance(s1, s2)
    r21 = solid_pair_distance(s2, s1)
    d = r12[0]
    if d > 1e-6:  # separated: GJK distances are exact to ~1e-10, its witnesses on curved surfaces to ~1e-5
        assert abs(r21[0] - d) < 1e-8
        check_contact(s1, s2, r12, tol=1e-5)
        assert np.allclose(r21[3], -r12[3], atol=1e-4)
        # the witnesses are mutual nearest points: the exact point SDFs give the same distance
        assert abs(sdf(s2, r12[1]) - d) < 1e-8 and abs(sdf(s1, r12[2]) - d) < 1e-8
    elif d < -1e-6:  # coal's EPA depth is unreliable for curved solids; both orders must see penetration
        assert r21[0] < 0 and np.all(np.isfinite(r21[3])) and np.all(np.isfinite(r12[3]))
    # invariance under a common rigid motion
    R = axis_angle_to_matrix([0.3, -0.5, 0.8], 1.1)
    t = np.array([0.4, -2.0, 1.5])
    m = solid_pair_distance(s1.transformed(R, t), s2.transformed(R, t))
    if d > 1e-6:
        assert abs(m[0] - d) < 1e-8
