"""Mesh against mesh (geometry/mesh_mesh.py).

Oracles: coal's BVHModel distance between the two meshes when apart (1e-9 m); brute force over all
triangle pairs (the minimum and its lowest pair, bit for bit); the winding number of the vertices
for the sign; hand values on box-shaped meshes (a cube nested in a cube, two bars crossing like a
plus sign, coplanar faces, identical meshes at one pose) whose true depth is known.
"""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.mesh_mesh import mesh_mesh
from ambf_collision.geometry.transforms import axis_angle_to_matrix
from ambf_collision.geometry.triangles import triangle_triangle
from ambf_collision.geometry.trimesh import TriangleMesh
from test_mesh_distance import MESHES, brute_distance, built, winding

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
from ambf_collision.geometry.coal_bridge import coal_mesh, distance_request  # noqa: E402


def run(m1, m2, R, t, h1=-1, h2=-1):
    Rt = tuple(tuple(map(float, r)) for r in R)
    return mesh_mesh(*m1.arrays(), int(m1.closed), *m2.arrays(), int(m2.closed), Rt, tuple(map(float, t)),
                     int(h1), int(h2))


def box_mesh(h, centre=(0.0, 0.0, 0.0)):
    """A closed box of half extents ``h`` about ``centre`` (12 triangles, outward)."""
    V = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float) * h + centre
    F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    return TriangleMesh.build(V, mx.outward(V, F))


def poses(m1, m2, k, seed, reach=(0.2, 0.9)):
    """``k`` random poses of mesh 2 whose centre is ``reach`` (times 0.6 the two diagonals) from
    mesh 1's centre."""
    rng = np.random.default_rng(seed)
    s1 = np.linalg.norm(np.ptp(m1.vertices, axis=0))
    s2 = np.linalg.norm(np.ptp(m2.vertices, axis=0))
    c1 = m1.vertices.mean(axis=0)
    for _ in range(k):
        R = axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, np.pi))
        u = rng.normal(size=3)
        x = c1 + u / np.linalg.norm(u) * rng.uniform(*reach) * (s1 + s2) * 0.6
        yield R, x - R @ m2.vertices.mean(axis=0)


PAIRS = [("torus", "bowl"), ("trefoil", "trefoil"), ("cup", "l_bracket"), ("rings", "torus")]


@pytest.mark.parametrize("n1,n2", PAIRS)
def test_apart_against_coal(n1, n2):
    m1, m2 = built(n1), built(n2)
    c1, c2 = coal_mesh(*MESHES[n1]()), coal_mesh(*MESHES[n2]())
    req = distance_request()
    compared = 0
    for R, t in poses(m1, m2, 40, seed=len(n1 + n2)):
        d, p1, p2, n, t1, t2 = run(m1, m2, R, t)
        np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-12)
        assert abs(np.linalg.norm(n) - 1) < 1e-12 and 0 <= t1 < len(m1.faces) and 0 <= t2 < len(m2.faces)
        res = coal.DistanceResult()
        dc = coal.distance(c1, coal.Transform3s(), c2, coal.Transform3s(R, t), req, res)
        if dc < 1e-6 or d <= 0:
            continue
        compared += 1
        assert d == pytest.approx(dc, abs=1e-9)
        assert brute_distance(m1.vertices, m1.faces, np.array([p1]))[0] < 1e-12
        assert brute_distance(m2.vertices, m2.faces, np.array([R.T @ (np.array(p2) - t)]))[0] < 1e-12
    assert compared >= 10


@pytest.mark.parametrize("reach", [(0.2, 0.9), (5.0, 60.0)])
def test_brute_force_over_all_pairs_and_hints(reach):
    """Near and far (up to 60 times the sizes: the distance is nearly flat over the facing
    surfaces, where the bound along the best pair's direction prunes)."""
    m1 = TriangleMesh.build(*mx.torus(n=12, m=6))
    m2 = built("l_bracket")
    m2 = TriangleMesh.build(m2.vertices * 10.0, m2.faces)
    rng = np.random.default_rng(3)
    compared = 0
    for R, t in poses(m1, m2, 12, seed=2, reach=reach):
        got = run(m1, m2, R, t)
        for h in rng.integers(0, [len(m1.faces), len(m2.faces)], (2, 2)):
            assert run(m1, m2, R, t, h[0], h[1]) == got
        X = m2.vertices                           # R x + t as the kernel rounds it (no BLAS)
        W = np.stack([X[:, 0] * R[i, 0] + X[:, 1] * R[i, 1] + X[:, 2] * R[i, 2] + t[i] for i in range(3)], axis=1)
        best, pair = np.inf, None
        for u in range(len(m1.faces)):
            a, b, c = (tuple(map(float, m1.vertices[i])) for i in m1.faces[u])
            for v in range(len(m2.faces)):
                p, q, r = (tuple(map(float, W[i])) for i in m2.faces[v])
                d2 = triangle_triangle(a, b, c, p, q, r)[0]
                if d2 < best:
                    best, pair = d2, (u, v)
        if best == 0.0 or got[0] <= 0:
            continue
        compared += 1
        assert got[0] == np.sqrt(best) and (got[4], got[5]) == pair
    assert compared >= 6


def test_nested_cubes_hand_value():
    """A cube of half 0.2 at (0.1, 0, 0) inside one of half 1: its centre is 0.9 deep in the
    outer one (and inside itself), so d = -0.9; the true depth is 1.1 (+x)."""
    outer, inner = box_mesh(1.0), box_mesh(0.2, (0.1, 0.0, 0.0))
    d, p1, p2, n, _, _ = run(outer, inner, np.eye(3), np.zeros(3))
    assert d == pytest.approx(-0.9, abs=1e-15)
    np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-15)
    d2 = run(inner, outer, np.eye(3), np.zeros(3))[0]                      # the other way round
    assert d2 == pytest.approx(-0.9, abs=1e-15)


def test_bars_crossing_like_a_plus_sign():
    """No vertex of either bar is inside the other; the crossing edges of bar 2 are 0.05 deep in
    bar 1, the common centre 0.1 deep in bar 1: d = -0.1; the true depth is 0.15 (bar 2 up)."""
    bar1 = box_mesh(np.array([1.0, 0.1, 0.1]))
    bar2 = box_mesh(np.array([0.1, 1.0, 0.05]))
    d = run(bar1, bar2, np.eye(3), np.zeros(3))[0]
    assert d == pytest.approx(-0.1, abs=1e-15)
    # moved off-centre (the centres no longer inside both): the edges alone keep it negative
    d = run(bar1, bar2, np.eye(3), (0.0, 0.5, 0.0))[0]
    assert -0.15 <= d < -0.04


def test_coplanar_faces_and_identical_meshes():
    bar1 = box_mesh(np.array([1.0, 0.1, 0.1]))
    bar2 = box_mesh(np.array([0.1, 1.0, 0.1]))                    # top and bottom faces coplanar
    d = run(bar1, bar2, np.eye(3), np.zeros(3))[0]
    assert -0.2 <= d < 0
    cube = box_mesh(0.5)
    d, p1, p2, n, _, _ = run(cube, cube, np.eye(3), np.zeros(3))
    assert d == pytest.approx(-0.5, abs=1e-15)                     # its centre; the true depth is 1
    torus = built("torus")
    d, p1, p2, n, _, _ = run(torus, torus, np.eye(3), np.zeros(3))
    assert d <= 0 and np.all(np.isfinite(np.r_[p1, p2, n]))
    # touching faces exactly: two unit cubes side by side
    d = run(cube, cube, np.eye(3), (1.0, 0.0, 0.0))[0]
    assert d == 0.0


@pytest.mark.parametrize("n1,n2", [("torus", "torus"), pytest.param("trefoil", "trefoil", marks=pytest.mark.slow),
                                   pytest.param("rings", "bowl", marks=pytest.mark.slow)])
def test_sign_against_the_winding_number(n1, n2):
    """A vertex of one mesh inside the other gives d < 0; surfaces that meet (coal: collision)
    give d <= 0; d < 0 only with a vertex inside or meeting surfaces (nested meshes have all
    their vertices inside, so a third of them is enough)."""
    m1, m2 = built(n1), built(n2)
    c1, c2 = coal_mesh(*MESHES[n1]()), coal_mesh(*MESHES[n2]())
    req = distance_request()
    negatives = 0
    for R, t in poses(m1, m2, 12, seed=7):
        d = run(m1, m2, R, t)[0]
        W = m2.vertices[::3] @ R.T + t                  # a third of the vertices (the oracle's cost)
        inside = (np.any(np.round(winding(m1.vertices, m1.faces, W)) == 1)
                  or np.any(np.round(winding(m2.vertices, m2.faces, (m1.vertices[::3] - t) @ R)) == 1))
        res = coal.DistanceResult()
        meet = coal.distance(c1, coal.Transform3s(), c2, coal.Transform3s(R, t), req, res) <= 0
        if inside:
            assert d < 0
        if meet:
            assert d <= 0
        if d < 0:
            negatives += 1
            assert inside or meet
    assert negatives >= 3


def test_open_meshes_that_intersect_give_zero():
    V, F = mx.torus()
    m = TriangleMesh.build(V, F[1:])
    assert not m.closed
    d, p1, p2, n, _, _ = run(m, m, axis_angle_to_matrix([1.0, 0.0, 0.0], 0.3), (0.2, 0.0, 0.0))
    assert d == 0.0 and abs(np.linalg.norm(n) - 1) < 1e-12
