"""Batched LinkShapes/PairDistance/point_signed_distance equal the single-pair results."""

import numpy as np
import pytest

import exact_reference as ex
from ambf_collision.batch import LinkShapes, PairDistance, point_signed_distance
from ambf_collision.distance import distance
from ambf_collision.shapes import Box, Capsule, Cylinder, Plane, Sphere
from ambf_collision.transforms import quat_to_matrix


def scene(rng, solids):
    shapes = []
    for k in range(24):
        if k % 3 == 0:
            shapes.append(Sphere(rng.uniform(-.5, .5, 3), rng.uniform(0, .1)))
        else:
            a = rng.uniform(-.5, .5, 3)
            shapes.append(Capsule(a, a if k % 7 == 0 else a + rng.uniform(-.3, .3, 3), rng.uniform(0, .1)))
    if solids:
        shapes += [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
                   Plane([0, 0, 1], -0.4)]
    return shapes


@pytest.mark.parametrize("solids", [False, True])
def test_batch_equals_single_pair_in_world(solids):
    rng = np.random.default_rng(3)
    shapes = scene(rng, solids)
    n = len(shapes)
    F = 4
    fi = rng.integers(0, F, n)
    ls = LinkShapes(shapes, fi)
    pairs = np.array([(i, j) for i in range(n) for j in range(n) if i != j and (i + j) % 3])
    pairs = pairs[[not (isinstance(shapes[i], Plane) and isinstance(shapes[j], Plane)) for i, j in pairs]]
    pd = PairDistance(ls, pairs)
    for trial in range(2):  # buffers reused across calls
        R = quat_to_matrix(rng.normal(size=(F, 4)))
        t = rng.normal(size=(F, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            si = shapes[i].transformed(R[fi[i]], t[fi[i]])
            sj = shapes[j].transformed(R[fi[j]], t[fi[j]])
            c = distance(si, sj)
            assert res.distance[k] == pytest.approx(c.distance, abs=1e-9)
            np.testing.assert_allclose(res.point_1[k], c.point_1, atol=1e-9)
            np.testing.assert_allclose(res.point_2[k], c.point_2, atol=1e-9)
            np.testing.assert_allclose(res.normal[k], c.normal, atol=1e-9)
            np.testing.assert_allclose(res.position[k], c.position, atol=1e-9)
        assert np.all(np.isfinite(res.normal))


def test_capsule_batch_against_exact_reference():
    rng = np.random.default_rng(5)
    shapes = scene(rng, False)
    ls = LinkShapes(shapes, np.zeros(len(shapes), int))
    pairs = np.array([(i, j) for i in range(len(shapes)) for j in range(i + 1, len(shapes))])
    res = PairDistance(ls, pairs).compute(ls.to_world(np.eye(3)[None], np.zeros((1, 3))))
    for k, (i, j) in enumerate(pairs):
        seg = [(s.center, s.center) if isinstance(s, Sphere) else (s.a, s.b) for s in (shapes[i], shapes[j])]
        exact = ex.capsule_distance(*seg[0], shapes[i].radius, *seg[1], shapes[j].radius)
        assert res.distance[k] == pytest.approx(exact, abs=1e-9)


def test_plane_moved_by_frame():
    ls = LinkShapes([Plane([0, 0, 1], 0.5)], [0])
    R = quat_to_matrix([0, np.sin(np.pi / 4), 0, np.cos(np.pi / 4)])  # z -> x
    w = ls.to_world(R[None], np.array([[2.0, 0, 0]]))
    np.testing.assert_allclose(w.normal[0], [1, 0, 0], atol=1e-15)
    assert w.offset[0] == pytest.approx(2.5)


def test_point_signed_distance_sphere_capsule_and_box():
    shapes = [Sphere([0, 0, 0], 1.0), Capsule([0, 0, 0], [0, 0, 2], 0.5), Box([2, 2, 2])]
    ls = LinkShapes(shapes, [0, 0, 0])
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    pts = np.array([[3.0, 0, 0], [0, 0, 0], [0.2, 0, 1.0], [0, 0, 1.0], [0.5, 0, 0]])
    d, x, n = point_signed_distance(w, [0, 0, 1, 1, 2], pts)
    np.testing.assert_allclose(d, [2.0, -1.0, -0.3, -0.5, -0.5])
    np.testing.assert_allclose(x[0], [1, 0, 0])
    np.testing.assert_array_equal(n[1], [0, 0, 1])           # centre: +z fallback
    np.testing.assert_allclose(x[2], [0.5, 0, 1.0])
    assert abs(n[3][2]) < 1e-15 and np.linalg.norm(n[3]) == pytest.approx(1)  # on axis
    np.testing.assert_allclose(x[4], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(pts - x, d[:, None] * n, atol=1e-12)


def test_solid_pairs_reuse_coal_geometry_across_cycles():
    """Solid-solid pairs (coal geometries built once, poses refilled per cycle) equal coal on
    freshly built posed shapes in every cycle, with shapes shared by several pairs and a plane."""
    from ambf_collision.batch import shape_at
    from ambf_collision.coal_bridge import solid_pair_distance
    from ambf_collision.shapes import Cone, ConvexHull
    shapes = [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
              Cone(.15, .2, [0, 0, .1]), ConvexHull([[0, 0, 0], [.2, 0, 0], [0, .2, 0], [0, 0, .2]]),
              Plane([0, 0, 1], -0.4)]
    ls = LinkShapes(shapes, [0, 1, 2, 3, 0])
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    pd = PairDistance(ls, pairs)
    rng = np.random.default_rng(11)
    for cycle in range(4):
        q = rng.normal(size=(4, 4))
        R = np.stack([quat_to_matrix(v / np.linalg.norm(v)) for v in q])
        t = rng.uniform(-.3, .3, (4, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            d, p1, p2, n = solid_pair_distance(shape_at(w, i), shape_at(w, j))
            assert res.distance[k] == pytest.approx(d, abs=1e-9), (cycle, i, j)
            np.testing.assert_allclose(res.point_1[k], p1, atol=1e-8)
            np.testing.assert_allclose(res.point_2[k], p2, atol=1e-8)
            np.testing.assert_allclose(res.normal[k], n, atol=1e-7)
            np.testing.assert_allclose(res.position[k], 0.5 * (p1 + p2), atol=1e-8)


def test_capsule_solid_groups_recomputed_each_cycle_both_orders():
    """Sphere/capsule - solid pairs of every solid kind, the solid as shape 1 and as shape 2,
    some capsules through a solid (penetration path): every cycle with new poses equals fresh
    single-pair ``distance()`` on the posed shapes (no stale gather, staging or sign)."""
    from ambf_collision.shapes import Cone, ConvexHull
    solids = [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
              Cone(.15, .2, [0, 0, .1]), ConvexHull([[0, 0, 0], [.2, 0, 0], [0, .2, 0], [0, 0, .2]]),
              Plane([0, 0, 1], -0.05)]
    rounds = [Sphere([0.3, 0.1, 0.0], 0.05), Capsule([-.3, 0, 0], [.3, 0, 0], 0.02),  # through the box
              Capsule([0.1, 0.2, -.5], [0.1, 0.2, .5], 0.03), Sphere([0, 0, 0], 0.0),
              Capsule([0.5, 0.5, 0.5], [0.6, 0.4, 0.3], 0.04)]
    shapes = solids + rounds
    S, Q = len(solids), len(rounds)
    fi = [0, 1, 1, 0, 2] + [0, 3, 0, 2, 3]
    ls = LinkShapes(shapes, fi)
    pairs = []
    for i in range(S):
        for j in range(S, S + Q):
            pairs.append((i, j) if (i + j) % 2 else (j, i))
            if i + j < 9:
                pairs.append((j, i) if (i + j) % 2 else (i, j))
    pairs = np.array(pairs)
    pd = PairDistance(ls, pairs)
    np.testing.assert_array_equal(pd.result.points[:len(pairs)], pd.result.point_1)
    rng = np.random.default_rng(21)
    penetrating = 0
    for cycle in range(4):
        if cycle == 0:
            R, t = np.tile(np.eye(3), (4, 1, 1)), np.zeros((4, 3))
        else:
            R = quat_to_matrix(rng.normal(size=(4, 4)))
            t = rng.uniform(-.1, .1, (4, 3))
        res = pd.compute(ls.to_world(R, t))
        for k, (i, j) in enumerate(pairs):
            c = distance(shapes[i].transformed(R[fi[i]], t[fi[i]]), shapes[j].transformed(R[fi[j]], t[fi[j]]))
            assert res.distance[k] == pytest.approx(c.distance, abs=1e-9), (cycle, i, j)
            np.testing.assert_allclose(res.point_1[k], c.point_1, atol=1e-8)
            np.testing.assert_allclose(res.point_2[k], c.point_2, atol=1e-8)
            np.testing.assert_allclose(res.normal[k], c.normal, atol=1e-7)
            np.testing.assert_allclose(res.position[k], c.position, atol=1e-8)
            penetrating += c.distance < 0
        assert np.all(np.isfinite(res.normal))
    assert penetrating >= 4
