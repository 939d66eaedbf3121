"""Boxes, cylinders, cones and hulls against triangle meshes (geometry/mesh_solid.py).

Oracles, independent of the traversal under test:
- coal's BVHModel distance when apart (1e-9 m), the mesh in its own frame and posed in the world
  (the solid then brought into the mesh frame by core_in_frame);
- brute force: GJK of the solid against every triangle (the minimum and its lowest index, bit for
  bit);
- the winding number (written in test_mesh_distance) of points inside the solid, for the sign;
- a closed cube mesh, whose inside is a box: coal's exact box-box penetration depth bounds the
  reported depth, and hand values where the deepest point is a corner;
- hand values: a box in a cup's hollow, which the cup's hull swallows; touching a vertex, an
  edge; a zero-size box (a point: point_phi's value).
"""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.gjk import SCRATCH_ROWS, core_distance_in
from ambf_collision.geometry.mesh_distance import point_phi
from ambf_collision.geometry.mesh_solid import solid_mesh
from ambf_collision.geometry.shapes import Box, Cone, ConvexHull, Cylinder
from ambf_collision.geometry.support import core_in_frame, core_of, triangle_core
from ambf_collision.geometry.transforms import axis_angle_to_matrix, matrix_to_quat
from ambf_collision.geometry.trimesh import TriangleMesh
from ambf_collision.geometry.world_shapes import World, WorldShapes, hull_arrays
from test_mesh_distance import MESHES, brute_distance, built, winding

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
from ambf_collision.geometry.coal_bridge import coal_distance, coal_mesh, distance_request, to_coal  # noqa: E402


def cores(shapes):
    """The shapes' cores (their own frame) and the hull arrays."""
    w = WorldShapes.from_shapes(shapes)
    W, H = World(*w.arrays()), hull_arrays(w.hulls)
    return [core_of(W, H, k) for k in range(len(shapes))], H


def run(C, H, m, hint=-1):
    return solid_mesh(C, H.vertices, H.neighbor_start, H.neighbors, *m.arrays(), int(m.closed), hint)


def random_solids(m, k, seed, size=0.15):
    """Boxes, cylinders, cones and hulls (a quarter each) of random poses about the mesh's box,
    sized ``size`` of the mesh's diagonal."""
    rng = np.random.default_rng(seed)
    lo, hi = m.vertices.min(axis=0), m.vertices.max(axis=0)
    span = np.linalg.norm(hi - lo)
    out = []
    for i in range(k):
        x = lo - 0.15 * span + rng.random(3) * (hi - lo + 0.3 * span)
        q = matrix_to_quat(axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, np.pi)))
        s = span * size * rng.uniform(0.2, 1.0, 3)
        kind = i % 4
        if kind == 0:
            out.append(Box(s, x, q))
        elif kind == 1:
            out.append(Cylinder(0.5 * s[0], s[1], x, q))
        elif kind == 2:
            out.append(Cone(0.5 * s[0], s[1], x, q))
        else:
            out.append(ConvexHull(rng.normal(size=(12, 3)) * 0.4 * s, x, q))
    return out


def inner_points(shape, k, rng):
    """``k`` random points inside a solid (world frame)."""
    if isinstance(shape, ConvexHull):
        w = rng.dirichlet(np.ones(len(shape.vertices)), k)
        local = w @ shape.vertices
    else:
        if isinstance(shape, Box):
            h = 0.5 * shape.size
        else:
            h = np.array([shape.radius, shape.radius, 0.5 * shape.height])
        local = (rng.random((4 * k, 3)) * 2 - 1) * h
        if isinstance(shape, Cone):
            local = local[np.hypot(local[:, 0], local[:, 1]) <= h[0] * (0.5 - local[:, 2] / (2 * h[2]))]
        elif isinstance(shape, Cylinder):
            local = local[np.hypot(local[:, 0], local[:, 1]) <= h[0]]
        local = local[:k]
    return local @ shape.rotation.T + shape.position


def brute(C, H, m):
    """Minimum GJK distance of the solid over all triangles and the lowest index attaining it."""
    scratch = np.zeros((SCRATCH_ROWS, 9))
    best, bt = np.inf, -1
    V, F = m.vertices, m.faces
    for t in range(len(F)):
        T = triangle_core(*(tuple(map(float, V[i])) for i in F[t]))
        d = core_distance_in(C, T, H.vertices, H.neighbor_start, H.neighbors, scratch)[0]
        if d < best:
            best, bt = d, t
    return best, bt


@pytest.mark.parametrize("name", sorted(MESHES))
def test_apart_against_coal(name):
    m = built(name)
    cm = coal_mesh(*MESHES[name]())
    req, res = distance_request(), coal.DistanceResult()
    shapes = random_solids(m, 48, seed=len(name))
    Cs, H = cores(shapes)
    compared = 0
    for s, C in zip(shapes, Cs):
        d, p1, p2, n, t = run(C, H, m)
        assert np.isfinite(d) and 0 <= t < len(m.faces)
        np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-12)
        assert abs(np.linalg.norm(n) - 1) < 1e-12
        g, tf = to_coal(s)
        dc = coal_distance(g, tf, cm, coal.Transform3s(), req, res)[0]
        if dc < 1e-6 or d <= 0:
            continue
        compared += 1
        assert d == pytest.approx(dc, abs=1e-9), (type(s).__name__)
        assert brute_distance(m.vertices, m.faces, np.array([p2]))[0] < 1e-12
    assert compared >= 12


def test_mesh_posed_in_the_world_through_core_in_frame():
    """The mesh at a random pose (R, t); the solid's world core brought into the mesh frame:
    coal's distance with the mesh's transform; witnesses mapped back lie on the posed mesh."""
    name = "trefoil"
    m = built(name)
    cm = coal_mesh(*MESHES[name]())
    req, res = distance_request(), coal.DistanceResult()
    rng = np.random.default_rng(8)
    R = axis_angle_to_matrix(rng.normal(size=3), 1.1)
    t = rng.normal(size=3) * 0.2
    local = random_solids(m, 24, seed=3)
    world = [s.transformed(R, t) for s in local]
    Cs, H = cores(world)
    Rt = tuple(tuple(map(float, r)) for r in R)
    compared = 0
    for s, C in zip(world, Cs):
        d, p1, p2, n, _ = run(core_in_frame(C, Rt, tuple(map(float, t))), H, m)
        g, tf = to_coal(s)
        dc = coal_distance(g, tf, cm, coal.Transform3s(R, t), req, res)[0]
        if dc < 1e-6 or d <= 0:
            continue
        compared += 1
        assert d == pytest.approx(dc, abs=1e-9)
        # the same as the solid given in the mesh frame directly
        (C_local,), H_local = cores([s.transformed(R.T, -R.T @ t)])
        assert run(C_local, H_local, m)[0] == pytest.approx(d, abs=1e-12)
    assert compared >= 6


@pytest.mark.parametrize("name", ["l_bracket", "small_torus"])
def test_brute_force_over_all_triangles(name):
    """Apart (no triangle touching, the centre outside): the minimum over all triangles and its
    lowest index, bit for bit; and any hint gives the same result."""
    m = built(name) if name in MESHES else TriangleMesh.build(*mx.torus(n=16, m=8))
    shapes = random_solids(m, 24, seed=5, size=0.3)
    Cs, H = cores(shapes)
    rng = np.random.default_rng(1)
    compared = 0
    for s, C in zip(shapes, Cs):
        ref, rt = brute(C, H, m)
        got = run(C, H, m)
        for hint in rng.integers(0, len(m.faces), 2):
            assert run(C, H, m, int(hint)) == got
        if ref <= 0 or winding(m.vertices, m.faces, np.array([s.position]))[0] > 0.5:
            continue
        compared += 1
        assert got[0] == ref and got[4] == rt
    assert compared >= 8


def cube_mesh(h=1.0):
    """The closed cube [-h, h]^3 as 12 triangles, outward."""
    V = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)], dtype=float)
    F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return V, mx.outward(V, F)


def test_box_sunk_in_a_cube_mesh_hand_values():
    m = TriangleMesh.build(*cube_mesh())
    assert m.closed
    (C,), H = cores([Box([0.4, 0.4, 0.4], [0.0, 0.0, 0.9])])      # z in [0.7, 1.1]
    d, p1, p2, n, _ = run(C, H, m)
    assert d == pytest.approx(-0.3, abs=1e-15)                      # its bottom corners, 0.3 deep
    np.testing.assert_allclose(n, (0, 0, -1), atol=1e-15)          # the mesh moves down
    assert p1[2] == pytest.approx(0.7, abs=1e-15) and p2[2] == pytest.approx(1.0, abs=1e-15)
    (C,), H = cores([Box([0.4, 0.4, 0.4], [0.1, -0.2, 0.3])])       # wholly inside
    d, p1, p2, n, _ = run(C, H, m)
    assert d == pytest.approx(-0.9, abs=1e-15)      # its corner (-0.1, 0, 0.1): 0.9 deep (and PD = 0.9, up)
    np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-15)


def test_cube_mesh_against_coal_box_box_depth():
    """Random solids about a closed cube mesh: apart, coal's distance to the mesh; overlapping,
    negative and never deeper than coal's exact penetration depth against the solid cube (the
    mesh's inside)."""
    V, F = cube_mesh(0.5)
    m = TriangleMesh.build(V, F)
    req, res = distance_request(), coal.DistanceResult()
    cube_g, cube_tf = to_coal(Box([1.0, 1.0, 1.0]))
    cm = coal_mesh(V, F)
    shapes = random_solids(m, 80, seed=21, size=0.4)
    Cs, H = cores(shapes)
    deep = 0
    for s, C in zip(shapes, Cs):
        d = run(C, H, m)[0]
        g, tf = to_coal(s)
        pd = coal_distance(g, tf, cube_g, cube_tf, req, res)[0]
        if pd > 1e-9:
            assert d == pytest.approx(coal_distance(g, tf, cm, coal.Transform3s(), req, res)[0], abs=1e-9)
            assert d == pytest.approx(pd, abs=1e-9)
        elif pd < -1e-9:
            deep += 1
            assert pd - 1e-9 <= d < 0
    assert deep >= 20


@pytest.mark.parametrize("name", ["torus", "cup", "trefoil", "rings"])
def test_sign_against_the_winding_number(name):
    """A solid with a point inside the mesh (winding number 1) gets d < 0; a solid with d < 0
    has a point inside or its surface meets the mesh (coal reports a collision)."""
    m = built(name)
    cm = coal_mesh(*MESHES[name]())
    req, res = distance_request(), coal.DistanceResult()
    rng = np.random.default_rng(4)
    shapes = random_solids(m, 40, seed=11, size=0.2)
    Cs, H = cores(shapes)
    negatives = positives = 0
    for s, C in zip(shapes, Cs):
        d = run(C, H, m)[0]
        P = inner_points(s, 60, rng)
        w = np.round(winding(m.vertices, m.faces, np.r_[P, [s.position]]))
        g, tf = to_coal(s)
        touches = coal_distance(g, tf, cm, coal.Transform3s(), req, res)[0] <= 1e-12
        if np.any(w == 1):
            assert d < 0
        if d < 0:
            negatives += 1
            assert np.any(w == 1) or touches
        else:
            positives += 1
    assert negatives >= 5 and positives >= 5


def test_box_in_a_cups_hollow_which_its_hull_swallows():
    Ro, Ri, H_, t = 0.05, 0.04, 0.06, 0.01
    m = TriangleMesh.build(*mx.cup(Ro, Ri, H_, t, n=48))
    gap, h = 0.003, 0.01
    box = Box([2 * h] * 3, [0.0, 0.0, t + gap + h])
    (C,), H = cores([box])
    d, p1, p2, n, _ = run(C, H, m)
    assert d == pytest.approx(gap, abs=1e-15)
    np.testing.assert_allclose(n, (0, 0, -1), atol=1e-15)
    assert p2[2] == pytest.approx(t, abs=1e-15)
    from scipy.spatial import ConvexHull as Qhull
    eq = Qhull(m.vertices).equations
    corners = np.array([[x, y, z] for x in (-h, h) for y in (-h, h) for z in (-h, h)]) + box.position
    assert np.max(corners @ eq[:, :3].T + eq[:, 3]) < -h               # deep inside the hull


def test_touching_a_vertex_an_edge_and_a_face_exactly():
    m = TriangleMesh.build(*cube_mesh())
    for centre in ([1.25, 1.25, 1.25], [1.25, 1.25, 0.1], [1.25, 0.3, 0.1]):   # vertex, edge, face
        (C,), H = cores([Box([0.5, 0.5, 0.5], centre)])
        d, p1, p2, n, _ = run(C, H, m)
        assert d == 0.0 or abs(d) < 1e-15
        assert np.all(np.isfinite(n)) and abs(np.linalg.norm(n) - 1) < 1e-12
        (C,), H = cores([Box([0.5, 0.5, 0.5], np.array(centre) + 0.01)])
        assert run(C, H, m)[0] > 0


def test_zero_size_box_is_a_point():
    m = built("torus")
    rng = np.random.default_rng(2)
    for x in rng.normal(size=(12, 3)) * 0.8:
        (C,), H = cores([Box([0.0, 0.0, 0.0], x)])
        d = run(C, H, m)[0]
        phi = point_phi(*m.arrays(), 1, tuple(map(float, x)), -1)[0]
        assert d == pytest.approx(phi, abs=1e-12)


def test_open_mesh_crossing_is_negative_apart_is_unsigned():
    V, F = mx.torus()
    m = TriangleMesh.build(V, F[1:])
    assert not m.closed
    (C,), H = cores([Cylinder(0.05, 0.1, [1.0, 0.0, 0.0])])          # in the tube, not touching
    d = run(C, H, m)[0]
    assert d > 0
    (C,), H = cores([Box([0.2, 0.2, 0.2], [1.3, 0.0, 0.0])])          # across the outer wall
    d, p1, p2, n, t = run(C, H, m)
    assert -0.2 <= d < 0
    np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-12)


def test_triangle_core_support_and_core_in_frame():
    """A triangle core's support is its best corner (the first on ties, exact ties on purpose);
    a core moved into a frame (R, t) has the support R^T (s(R d') - t) along d', every kind."""
    from ambf_collision.geometry.support import NONE, core_support
    rng = np.random.default_rng(6)
    a, b, c = (tuple(map(float, x)) for x in rng.normal(size=(3, 3)))
    T = triangle_core(a, b, c)
    empty = np.zeros((0, 3)), np.zeros(1, np.int64), np.zeros(0, np.int64)
    for d in rng.normal(size=(20, 3)):
        got = core_support(T, *empty, *map(float, d), NONE)[:3]
        expected = (a, b, c)[int(np.argmax([np.dot(d, x) for x in (a, b, c)]))]
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-15)     # a + (b - a) rounds
    flat = triangle_core((1.0, 0.0, 0.0), (1.0, 1.0, 0.0), (0.0, 0.0, 0.0))
    for d, expected in (((0.0, 0.0, 1.0), (1.0, 0.0, 0.0)), ((1.0, 0.0, 0.0), (1.0, 0.0, 0.0)),
                        ((0.0, -1.0, 0.0), (1.0, 0.0, 0.0)), ((-1.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
                        ((1.0, 1.0, 0.0), (1.0, 1.0, 0.0))):
        assert core_support(flat, *empty, *d, NONE)[:3] == expected        # ties: a, then b
    R = axis_angle_to_matrix(rng.normal(size=3), 0.8)
    t = rng.normal(size=3)
    Rt, tt = tuple(tuple(map(float, r)) for r in R), tuple(map(float, t))
    shapes = random_solids(built("torus"), 8, seed=9)
    Cs, H = cores(shapes)
    arrays = (H.vertices, H.neighbor_start, H.neighbors)
    for C in Cs + [T]:
        M = core_in_frame(C, Rt, tt)
        for d in rng.normal(size=(10, 3)):
            world = np.array(core_support(C, *arrays, *map(float, R @ d), NONE)[:3])
            local = np.array(core_support(M, *arrays, *map(float, d), NONE)[:3])
            np.testing.assert_allclose(local, R.T @ (world - t), atol=1e-14)
        np.testing.assert_allclose((M.m0, M.m1, M.m2), R.T @ (np.array((C.m0, C.m1, C.m2)) - t), atol=1e-14)
