"""Exact point signed distances to every shape kind (compiled kernel, batch entry).

Oracles: hand-derived values; coal for outside points (GJK is exact there to its tolerance);
dense surface samples for inside points (coal's EPA is unreliable deep inside cylinders); each
solid's surface equations; a hand-built HullSet (a cube equals the box; a tetrahedron, a square,
a segment and a point with hand-derived distances); invariance under a common rigid motion.
"""

from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from conftest import examples

from ambf_collision.geometry.hulls import Hulls
from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.shapes import (BOX, CONE, CONVEX, CYLINDER, Box, Capsule, Cone,
                                            ConvexHull, Cylinder, Plane, ShapeError, Sphere)
from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix
from ambf_collision.geometry.world_shapes import WorldShapes

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
quat = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-3).map(np.array)
size = st.floats(0.02, 1.0)
S5 = np.sqrt(5.0)


def psd(shape, p):
    """d, nearest, normal of one point against one shape object."""
    d, x, n = point_signed_distance_batch(WorldShapes.from_shapes([shape]), None, [0],
                                          np.atleast_2d(p))
    return d[0], x[0], n[0]


def coal_hull(coal, shape):
    """coal Convex of a ConvexHull shape built from the HullSet's own triangles (an oracle for
    the distance code, not for the hull)."""
    w = WorldShapes.from_shapes([shape])
    pts = coal.StdVec_Vec3s()
    for v in w.hulls.hull_vertices(0):
        pts.append(v)
    tris = coal.StdVec_Triangle()
    for a, b, c in w.hulls.hull_triangles(0):
        tris.append(coal.Triangle(int(a), int(b), int(c)))
    return coal.Convex(pts, tris), coal.Transform3s(w.rot[0], w.a[0])


def solid(kind, c, q, sx, sy, sz, hull_pts=None):
    if kind == BOX:
        return Box(2 * np.array([sx, sy, sz]), c, q)
    if kind == CYLINDER:
        return Cylinder(sx, 2 * sz, c, q)
    if kind == CONE:
        return Cone(sx, 2 * sz, c, q)
    return ConvexHull(hull_pts, c, q)


def local_half(shape):
    if shape.kind == BOX:
        return 0.5 * shape.size
    return np.array([shape.radius, shape.radius, 0.5 * shape.height])


def on_surface_local(kind, x, half, tol=1e-12):
    """Surface equations in the local frame (hand-written per solid)."""
    if kind == BOX:
        inside = np.all(np.abs(x) <= half + tol)
        return bool(inside and np.any(np.abs(np.abs(x) - half) <= tol))
    R, H = half[0], half[2]
    r, z = np.hypot(x[0], x[1]), x[2]
    if kind == CYLINDER:
        return bool((abs(r - R) <= tol and abs(z) <= H + tol) or (abs(abs(z) - H) <= tol and r <= R + tol))
    base = abs(z + H) <= tol and r <= R + tol
    slant = abs(r - R * (H - z) / (2 * H)) <= tol * 4 and -H - tol <= z <= H + tol
    return bool(base or slant)


def surface_samples(kind, half, n=200):
    """Dense local surface points (upper bounds of an inside point's depth)."""
    u = np.linspace(-1, 1, n)
    if kind == BOX:
        a, b = (x.ravel() for x in np.meshgrid(u, u))
        pts = []
        for ax in range(3):
            o = [i for i in range(3) if i != ax]
            for s in (-1, 1):
                P = np.zeros((a.size, 3))
                P[:, ax] = s * half[ax]
                P[:, o[0]] = a * half[o[0]]
                P[:, o[1]] = b * half[o[1]]
                pts.append(P)
        return np.concatenate(pts)
    R, H = half[0], half[2]
    th = np.linspace(0, 2 * np.pi, 2 * n)
    T, Z = (x.ravel() for x in np.meshgrid(th, u))
    Tc, Rc = (x.ravel() for x in np.meshgrid(th, (u * 0.5 + 0.5) * R))
    if kind == CYLINDER:
        side = np.stack([R * np.cos(T), R * np.sin(T), Z * H], 1)
        caps = [np.stack([Rc * np.cos(Tc), Rc * np.sin(Tc), np.full(Tc.size, s * H)], 1) for s in (-1, 1)]
        return np.concatenate([side] + caps)
    rad = R * (1 - Z) / 2
    side = np.stack([rad * np.cos(T), rad * np.sin(T), Z * H], 1)
    base = np.stack([Rc * np.cos(Tc), Rc * np.sin(Tc), np.full(Tc.size, -H)], 1)
    return np.concatenate([side, base])


# ------------------------------------------------------------------------------------- against coal

@settings(max_examples=examples(150), deadline=None)
@given(kind=st.sampled_from((BOX, CYLINDER, CONE, CONVEX)), c=vec3, q=quat, sx=size, sy=size, sz=size,
       p=vec3, seed=st.integers(0, 2**31 - 1))
def test_outside_points_match_coal(kind, c, q, sx, sy, sz, p, seed):
    coal = pytest.importorskip("coal")
    from ambf_collision.geometry.coal_bridge import coal_distance, to_coal
    hull_pts = np.random.default_rng(seed).uniform(-0.5, 0.5, (10, 3)) if kind == CONVEX else None
    shape = solid(kind, c, q, sx, sy, sz, hull_pts)
    point = c + 1.5 * p
    d, x, n = psd(shape, point)
    assert np.isfinite([d, *x, *n]).all()
    assert abs(np.linalg.norm(n) - 1) < 1e-12
    np.testing.assert_allclose(x + d * n, point, atol=1e-12, rtol=0)
    if d > 1e-6 or kind in (BOX, CONVEX):  # coal's EPA (inside) is trusted for polytopes only
        g, tf = to_coal(shape) if kind != CONVEX else coal_hull(coal, shape)
        dc = coal_distance(g, tf, coal.Sphere(0.0), coal.Transform3s(np.eye(3), point))[0]
        assert abs(dc - d) < 1e-9


@pytest.mark.slow
@settings(max_examples=examples(100), deadline=None)
@given(kind=st.sampled_from((BOX, CYLINDER, CONE)), sx=size, sy=size, sz=size,
       f=st.tuples(st.floats(-0.99, 0.99), st.floats(-0.99, 0.99), st.floats(-0.99, 0.99)))
def test_inside_depth_is_attained_and_minimal(kind, sx, sy, sz, f):
    """Inside: |d| is attained (the nearest point is on the surface) and no surface sample is
    nearer."""
    shape = solid(kind, np.zeros(3), [0, 0, 0, 1.0], sx, sy, sz)
    half = local_half(shape)
    x = np.array(f) * half
    if kind in (CYLINDER, CONE):
        x[:2] *= 0.7  # inside the disc
    if kind == CONE:
        x[:2] *= (1 - f[2]) / 2  # inside the cone's profile
    d, near, n = psd(shape, x)
    assert d <= 0
    assert on_surface_local(kind, near, half)
    assert abs(np.linalg.norm(x - near) - abs(d)) < 1e-12
    assert abs(d) <= np.min(np.linalg.norm(surface_samples(kind, half) - x, axis=1)) + 1e-12


@settings(max_examples=examples(100), deadline=None)
@given(kind=st.sampled_from((BOX, CYLINDER, CONE)), c=vec3, q=quat, sx=size, sy=size, sz=size, p=vec3,
       q2=quat, t2=vec3)
def test_nearest_is_on_surface_and_rigid_motion_invariant(kind, c, q, sx, sy, sz, p, q2, t2):
    shape = solid(kind, c, q, sx, sy, sz)
    point = c + 1.5 * p
    d, x, n = psd(shape, point)
    local = quat_to_matrix(shape.orientation).T @ (x - c)
    assert on_surface_local(kind, local, local_half(shape))
    assert abs(psd(shape, x)[0]) < 1e-12
    R, t = quat_to_matrix(q2), t2
    d2, x2, n2 = psd(shape.transformed(R, t), R @ point + t)
    assert abs(d2 - d) < 1e-14


# ------------------------------------------------------------------------------------- hand-derived

def hand(shape, p):
    return psd(shape, np.asarray(p, float))


def test_box_hand_cases():
    b = Box([2.0, 4.0, 6.0])
    d, x, n = hand(b, [0.25, 0.5, 0.0])  # inside, nearest face x = +1 at depth 0.75
    assert d == -0.75 and np.array_equal(x, [1.0, 0.5, 0.0]) and np.array_equal(n, [1, 0, 0])
    d, x, n = hand(b, [0.0, 0.0, 0.0])  # centre: the x faces (depth 1), + side
    assert d == -1.0 and np.array_equal(n, [1, 0, 0])
    d, x, n = hand(Box([2.0, 2.0, 2.0]), [0.0, 0.0, 0.0])  # three-way tie -> x, + face
    assert d == -1.0 and np.array_equal(n, [1, 0, 0])
    d, x, n = hand(b, [-1.0, 2.0, 0.5])  # on an edge: the lowest axis of the tie, - face
    assert d == 0.0 and np.array_equal(x, [-1.0, 2.0, 0.5]) and np.array_equal(n, [-1, 0, 0])
    d, x, n = hand(b, [2.0, 3.0, 4.0])  # outside a corner: sqrt(3)
    assert abs(d - np.sqrt(3)) < 1e-15 and np.array_equal(x, [1, 2, 3])
    np.testing.assert_allclose(n, np.ones(3) / np.sqrt(3), atol=1e-15)
    d, x, n = hand(b, [1.0, 2.0, 3.0])  # exactly at a corner
    assert d == 0.0 and np.array_equal(x, [1, 2, 3]) and np.array_equal(n, [1, 0, 0])
    d, x, n = hand(Box([0.0, 2.0, 2.0]), [0.5, 0.0, 0.0])  # zero thickness
    assert d == 0.5 and np.array_equal(n, [1, 0, 0])


def test_cylinder_hand_cases():
    c = Cylinder(1.0, 4.0)  # radius 1, half height 2
    d, x, n = hand(c, [0.0, 0.0, 0.0])  # on the axis: lateral at depth 1, radial fallback +x
    assert d == -1.0 and np.array_equal(x, [1, 0, 0]) and np.array_equal(n, [1, 0, 0])
    d, x, n = hand(c, [0.0, 0.0, 1.5])  # on the axis near the top cap
    assert d == -0.5 and np.array_equal(x, [0, 0, 2]) and np.array_equal(n, [0, 0, 1])
    d, x, n = hand(c, [0.0, 0.0, -1.0])  # tie lateral/cap -> cap (bottom)
    assert d == -1.0 and np.array_equal(n, [0, 0, -1])
    d, x, n = hand(c, [0.6, 0.8, 2.0])  # on the rim
    assert abs(d) < 1e-15 and np.allclose(x, [0.6, 0.8, 2.0], atol=1e-15)
    d, x, n = hand(c, [1.8, 2.4, 3.0])  # beyond the rim: (2, 1) in (r, z) -> sqrt(5)
    assert abs(d - S5) < 1e-15 and np.allclose(x, [0.6, 0.8, 2.0], atol=1e-15)
    np.testing.assert_allclose(n, np.array([1.2, 1.6, 1.0]) / S5, atol=1e-15)
    d, x, n = hand(c, [0.0, 0.0, 5.0])  # above, on the axis
    assert d == 3.0 and np.array_equal(x, [0, 0, 2]) and np.array_equal(n, [0, 0, 1])


def test_cone_hand_cases():
    c = Cone(1.0, 2.0)  # apex (0,0,1), base radius 1 at z = -1, slant normal (2,1)/sqrt5 in (r,z)
    d, x, n = hand(c, [0.0, 0.0, 1.0])  # apex
    assert d == 0.0 and np.array_equal(x, [0, 0, 1])
    np.testing.assert_allclose(n, [2 / S5, 0, 1 / S5], atol=1e-15)
    d, x, n = hand(c, [0.0, 0.0, 3.0])  # above the apex
    assert d == 2.0 and np.array_equal(x, [0, 0, 1]) and np.array_equal(n, [0, 0, 1])
    d, x, n = hand(c, [0.0, 0.0, -3.0])  # below the base centre
    assert d == 2.0 and np.array_equal(x, [0, 0, -1]) and np.array_equal(n, [0, 0, -1])
    d, x, n = hand(c, [0.0, 0.0, 0.0])  # centre: slant at 1/sqrt5 < base at 1
    assert abs(d + 1 / S5) < 1e-15 and np.allclose(n, [2 / S5, 0, 1 / S5], atol=1e-15)
    d, x, n = hand(c, [0.0, 1.0, -1.0])  # on the base rim
    assert abs(d) < 1e-15 and np.allclose(x, [0, 1, -1], atol=1e-15)
    d, x, n = hand(c, [0.0, 2.0, -2.0])  # beyond the rim: sqrt2 to (0,1,-1)
    assert abs(d - np.sqrt(2)) < 1e-15 and np.allclose(x, [0, 1, -1], atol=1e-15)
    d, x, n = hand(c, [3.0, 0.0, 2.0])  # nearest on the slant: (r-R) 2H/L + (z+H) R/L
    assert abs(d - ((3 - 1) * 2 + (2 + 1) * 1) / S5) < 1e-15
    d, x, n = hand(c, [0.0, 0.0, -0.9])  # near the base inside: base at 0.1
    assert abs(d + 0.1) < 1e-15 and np.array_equal(n, [0, 0, -1])


def test_flat_cones_have_no_interior():
    """R = 0 (a needle) and H = 0 (a disc): hand-derived distances."""
    d, x, n = hand(Cone(0.0, 2.0), [0.0, 0.0, 3.0])  # 2 above the needle's tip
    assert d == 2.0 and np.allclose(x, [0, 0, 1]) and np.allclose(n, [0, 0, 1])
    assert hand(Cone(0.0, 2.0), [0.0, 0.0, 0.5])[0] == 0.0  # on the needle
    d, x, n = hand(Cone(1.0, 0.0), [3.0, 0.0, 0.0])  # in the disc's plane, 2 beyond its rim
    assert d == 2.0 and np.allclose(x, [1, 0, 0]) and np.allclose(n, [1, 0, 0])


def test_plane_sphere_capsule_hand_cases():
    d, x, n = hand(Plane([0.0, 0.6, 0.8], 1.0), [3.0, 1.0, 2.0])
    assert abs(d - (0.6 + 1.6 - 1.0)) < 1e-15 and np.allclose(x + d * n, [3, 1, 2], atol=1e-15)
    d, x, n = hand(Sphere([0, 0, 0], 1.0), [3.0, 0, 0])
    assert d == 2.0 and np.array_equal(x, [1, 0, 0])
    d, x, n = hand(Sphere([0, 0, 0], 1.0), [0.0, 0, 0])  # the centre: +z fallback
    assert d == -1.0 and np.array_equal(n, [0, 0, 1]) and np.array_equal(x, [0, 0, 1])
    cap = Capsule([0, 0, 0], [0, 0, 2], 0.5)
    d, x, n = hand(cap, [0.2, 0, 1.0])
    assert abs(d + 0.3) < 1e-15 and np.allclose(x, [0.5, 0, 1.0], atol=1e-15)
    d, x, n = hand(cap, [0.0, 0, 1.0])  # on the axis: unit(d x e_x) = (0, 1, 0)... of z x x = +y
    assert d == -0.5 and np.array_equal(n, [0, 1, 0]) and np.array_equal(x, [0, 0.5, 1.0])
    d, x, n = hand(cap, [0.0, 0, 3.0])  # beyond the end b
    assert d == 0.5 and np.array_equal(n, [0, 0, 1])


# ------------------------------------------------------------------------------------- hulls, hand-built

def hull_set(vertices, normals, offsets, edges):
    """A one-hull HullSet built by hand (the arrays the kernel reads): vertices, face planes and
    the vertex pairs joined by edges."""
    V = np.array(vertices, float).reshape(-1, 3)
    N = np.array(normals, float).reshape(-1, 3)
    E = np.array(edges, np.int64).reshape(-1, 2)
    both = np.concatenate([E, E[:, ::-1]])
    both = both[np.lexsort((both[:, 1], both[:, 0]))]
    start = np.concatenate([[0], np.cumsum(np.bincount(both[:, 0], minlength=len(V)))])
    arr = Hulls(V, np.array([0, len(V)]), N, np.array(offsets, float), np.array([0, len(N)]),
                V.mean(0, keepdims=True), np.array([np.linalg.norm(V - V.mean(0), axis=1).max()]),
                start.astype(np.int64), both[:, 1].copy())
    return SimpleNamespace(arrays=lambda: arr)


def ring(*cycle):
    """The edges of a closed polygon through the given vertex indices."""
    return [(a, b) for a, b in zip(cycle, cycle[1:] + cycle[:1])]


def hull_world(hs, position=(0, 0, 0), q=(0, 0, 0, 1)):
    w = WorldShapes(1, hs)
    w.kind[0] = CONVEX
    w.hull_id[0] = 0
    w.a[0] = w.b[0] = position
    w.rot[0] = quat_to_matrix(np.array(q, float))
    return w


CUBE_V = [[x, y, z] for x in (-1, 1) for y in (-2, 2) for z in (-0.5, 0.5)]  # index 4x + 2y + z


def cube_hull():
    normals = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
    edges = [(i, i ^ bit) for i in range(8) for bit in (1, 2, 4) if i < i ^ bit]   # 12 cube edges
    return hull_set(CUBE_V, normals, [1, 1, 2, 2, 0.5, 0.5], edges)


@pytest.mark.slow
def test_cube_hull_equals_box():
    rng = np.random.default_rng(3)
    q = rng.normal(size=4)
    c = rng.normal(size=3)
    box = WorldShapes.from_shapes([Box([2, 4, 1], c, q)])
    hull = hull_world(cube_hull(), c, q / np.linalg.norm(q))
    hull.rot[0] = box.rot[0]
    pts = c + rng.uniform(-3, 3, (500, 3))
    db, xb, nb = point_signed_distance_batch(box, None, np.zeros(500, int), pts)
    dh, xh, nh = point_signed_distance_batch(hull, None, np.zeros(500, int), pts)
    assert np.max(np.abs(db - dh)) < 1e-14
    assert np.max(np.abs(xb - xh)) < 1e-13
    assert np.max(np.abs(nb[db > 1e-9] - nh[db > 1e-9])) < 1e-12
    assert (db < 0).sum() > 10


def test_tetrahedron_hand_values():
    s3 = np.sqrt(3.0)
    hs = hull_set([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
                  [[-1, 0, 0], [0, -1, 0], [0, 0, -1], [1 / s3, 1 / s3, 1 / s3]],
                  [0, 0, 0, 1 / s3], [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)])
    w = hull_world(hs)
    pts = [[1, 1, 1], [0.1, 0.1, 0.1], [-1, -1, -1], [2, 0, 0], [0.5, -1, 0], [0.25, 0.25, 0.25]]
    d, x, n = point_signed_distance_batch(w, None, [0] * 6, pts)
    np.testing.assert_allclose(d, [2 / s3, -0.1, s3, 1.0, 1.0, -0.25 / s3], atol=1e-15)
    np.testing.assert_allclose(x[0], [1 / 3, 1 / 3, 1 / 3], atol=1e-15)  # on the slanted face
    np.testing.assert_allclose(x[2], [0, 0, 0], atol=1e-15)              # the corner
    np.testing.assert_allclose(x[4], [0.5, 0, 0], atol=1e-15)            # on an edge
    np.testing.assert_array_equal(n[1], [-1, 0, 0])     # inside, three-way tie: the first face
    np.testing.assert_allclose(n[5], np.ones(3) / s3, atol=1e-15)  # the slanted face is nearest
    np.testing.assert_allclose(np.asarray(pts) - x, d[:, None] * n, atol=1e-15)


def test_degenerate_hulls_hand_values():
    """A square (its two sides and side planes, a diagonal among its edges), a segment and a
    point, in the HullSet's documented representation."""
    square = hull_set([[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
                      [[0, 0, 1], [0, 0, -1], [0, -1, 0], [1, 0, 0], [0, 1, 0], [-1, 0, 0]],
                      [0, 0, 0, 1, 1, 0], ring(0, 1, 2, 3) + [(0, 2)])
    pts = [[0.5, 0.5, 0.3], [0.5, 0.5, -0.2], [0.5, 0.5, 0.0], [2.0, 0.5, 0.0]]
    d, x, n = point_signed_distance_batch(hull_world(square), None, [0] * 4, pts)
    np.testing.assert_allclose(d, [0.3, 0.2, 0.0, 1.0], atol=1e-15)
    np.testing.assert_array_equal(n[:3], [[0, 0, 1], [0, 0, -1], [0, 0, 1]])  # in the plane: +n
    np.testing.assert_allclose(n[3], [1, 0, 0], atol=1e-15)
    seg = hull_set([[0, 0, 0], [1, 0, 0]],
                   [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]],
                   [1, 0, 0, 0, 0, 0], [(0, 1)])
    d, x, n = point_signed_distance_batch(hull_world(seg), None, [0, 0, 0], [[0.5, 1, 0], [3, 0, 0], [0.5, 0, 0]])
    np.testing.assert_allclose(d, [1.0, 2.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(x[:2], [[0.5, 0, 0], [1, 0, 0]], atol=1e-15)
    np.testing.assert_array_equal(n[2], [0, 1, 0])     # on it: the first plane through it
    pt = hull_set([[0.2, 0.2, 0.2]], [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]],
                  [0.2, -0.2, 0.2, -0.2, 0.2, -0.2], [])
    d, x, n = point_signed_distance_batch(hull_world(pt, [1, 0, 0]), None, [0], [[1.2, 0.2, 1.2]])
    assert abs(d[0] - 1.0) < 1e-15 and np.allclose(n[0], [0, 0, 1]) and np.allclose(x[0], [1.2, 0.2, 0.2])


# ------------------------------------------------------------------------------------- batch, errors

def test_batch_mixes_kinds_and_errors_are_clear():
    shapes = [Sphere([0, 0, 0], 1.0), Capsule([0, 0, 0], [0, 0, 2], 0.5), Box([2, 2, 2]),
              Cylinder(0.5, 1.0), Cone(0.5, 1.0), Plane([0, 0, 1], 0.0)]
    w = WorldShapes.from_shapes(shapes)
    pts = np.array([[3.0, 0, 0], [0, 0, 0], [0.5, 0, 0], [0, 0, 0.1], [0, 0, 0.6], [0, 0, -1.0]])
    d, x, n = point_signed_distance_batch(w, None, np.arange(6), pts)
    np.testing.assert_allclose(d, [2.0, -0.5, -0.5, -0.4, 0.1, -1.0], atol=1e-15)
    with pytest.raises(ValueError, match="2 shape indices for 1 points"):
        point_signed_distance_batch(w, None, [0, 1], [[0, 0, 0]])
    with pytest.raises(ValueError, match="shape index 6 out of range 0..5"):
        point_signed_distance_batch(w, None, [6], [[0, 0, 0]])
    bad = w.copy()
    bad.kind[0] = 9
    with pytest.raises(ShapeError, match=r"shapes\[0\]: unknown kind 9"):
        point_signed_distance_batch(bad, None, [0], [[0, 0, 0]])
    h = hull_world(None)
    with pytest.raises(ValueError, match="need their HullSet"):
        point_signed_distance_batch(h, None, [0], [[0, 0, 0]])
    d, _, _ = point_signed_distance_batch(w, None, [], np.zeros((0, 3)))
    assert d.shape == (0,)


def test_posed_hull_from_shapes_matches_posed_box():
    """The HullSet built by WorldShapes.from_shapes from a cube's corners (plus inside points)
    gives the posed box's distances."""
    rng = np.random.default_rng(9)
    corners = np.array(CUBE_V, float)
    verts = np.concatenate([corners, rng.uniform(-0.4, 0.4, (20, 3))])
    q = matrix_to_quat(quat_to_matrix(rng.normal(size=4)))
    c = rng.normal(size=3)
    w = WorldShapes.from_shapes([Box([2, 4, 1], c, q), ConvexHull(verts, c, q)])
    pts = c + rng.uniform(-3, 3, (300, 3))
    db, xb, _ = point_signed_distance_batch(w, None, np.zeros(300, int), pts)
    dh, xh, _ = point_signed_distance_batch(w, None, np.ones(300, int), pts)
    assert np.max(np.abs(db - dh)) < 1e-14 and np.max(np.abs(xb - xh)) < 1e-13


def _triangle_distances(P, A, B, C):
    """Distance of each point P (K,3) to each triangle (T,3) x 3 (brute force, NumPy): the
    interior projection when inside, else the nearest of the three edges. (K, T)."""
    def seg(P, X, Y):
        d = Y - X
        t = np.clip(np.einsum("ktj,tj->kt", P[:, None] - X[None], d) / np.einsum("tj,tj->t", d, d), 0, 1)
        return np.linalg.norm(P[:, None] - (X[None] + t[..., None] * d[None]), axis=2)
    best = np.minimum(np.minimum(seg(P, A, B), seg(P, B, C)), seg(P, C, A))
    n = np.cross(B - A, C - A)
    n /= np.linalg.norm(n, axis=1, keepdims=True)
    h = np.einsum("ktj,tj->kt", P[:, None] - A[None], n)
    Y = P[:, None] - h[..., None] * n[None]
    inside = np.ones_like(h, dtype=bool)
    for X, Z in ((A, B), (B, C), (C, A)):
        inside &= np.einsum("ktj,tj->kt", np.cross(Z[None] - X[None], Y - X[None]), n) >= 0
    return np.where(inside, np.minimum(best, np.abs(h)), best)


@pytest.mark.parametrize("seed", range(4))
def test_hull_distances_equal_brute_force_over_its_triangles(seed):
    """Points near a random qhull hull (near its edges and vertices too): |d| equals the brute-
    force distance to the HullSet's triangles; the sign is the inside test of its face planes;
    x = nearest + d n."""
    rng = np.random.default_rng(seed)
    cloud = rng.normal(size=(25, 3)) * [0.3, 0.2, 0.1]
    w = WorldShapes.from_shapes([ConvexHull(cloud)])
    V = w.hulls.hull_vertices(0)
    T = V[w.hulls.hull_triangles(0)]
    # around vertices, edge midpoints and at random, inside and outside
    mids = 0.5 * (T[:, 0] + T[:, 1])
    pts = np.concatenate([V + rng.normal(size=V.shape) * 0.05, mids + rng.normal(size=mids.shape) * 0.05,
                          rng.normal(size=(300, 3)) * 0.3])
    d, x, n = point_signed_distance_batch(w, None, np.zeros(len(pts), int), pts)
    ref = _triangle_distances(pts, T[:, 0], T[:, 1], T[:, 2]).min(axis=1)
    N, off = w.hulls.hull_faces(0)
    inside = (pts @ N.T - off).max(axis=1) < 0
    assert inside.sum() > 20 and (~inside).sum() > 200
    np.testing.assert_allclose(np.abs(d), ref, atol=1e-14)
    assert np.array_equal(d < 0, inside)
    np.testing.assert_allclose(x + d[:, None] * n, pts, atol=1e-13)
    np.testing.assert_allclose(np.linalg.norm(n, axis=1), 1.0, atol=1e-12)
