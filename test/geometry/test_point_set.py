"""Point obstacle sets (geometry/point_set.py, geometry/point_query.py).

Oracle: brute force over every point with the package's point kernels, called one by one from
Python (``point_signed_distance_batch`` for every kind but meshes, ``point_phi`` for meshes):
the nearest ball's distance is the smallest signed distance minus the radius, its point the
lowest row reaching it. The voxel filter against a dict of cells built here; the tree's
invariants from its own arrays; selection against NumPy masks.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.mesh_distance import point_phi
from ambf_collision.geometry.point_query import nearest_balls
from ambf_collision.geometry.point_set import BuildScratch, PointSet
from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.shapes import (MESH, Box, Capsule, Cone, ConvexHull, Cylinder, Mesh,
                                            Plane, Sphere)
from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix
from ambf_collision.geometry.trimesh import TriangleMesh
from ambf_collision.geometry.world_shapes import WorldShapes

TOL = 1e-12   # m


def quat(rng):
    q = rng.normal(size=4)
    return q / np.linalg.norm(q)


def every_kind(rng, offset=(0.0, 0.0, 0.0)):
    """One shape of each kind, posed at random within 0.5 m of ``offset``."""
    o = np.asarray(offset, float)

    def c():
        return o + rng.uniform(-0.5, 0.5, 3)
    torus = TriangleMesh.build(*mx.torus(R=0.15, r=0.05, n=24, m=12))
    n = rng.normal(size=3)
    return [Sphere(c(), 0.1), Capsule(c(), c(), 0.05), Box([0.2, 0.1, 0.3], c(), quat(rng)),
            Cylinder(0.1, 0.3, c(), quat(rng)), Cone(0.1, 0.25, c(), quat(rng)),
            ConvexHull(rng.normal(size=(15, 3)) * 0.1, c(), quat(rng)),
            Plane(n / np.linalg.norm(n), float(o[2]) - 0.3),
            Mesh(torus, c(), quat(rng))]


def oracle(world, k, P):
    """``(d (N,), nearest (N,3), normal (N,3))`` of every point to shape ``k``, one by one."""
    if world.kind[k] != MESH:
        return point_signed_distance_batch(world, None, np.full(len(P), k), P)
    tm = world.meshes.meshes[int(world.mesh_id[k])]
    R, t = world.rot[k], world.a[k]
    d, x, n = np.empty(len(P)), np.empty((len(P), 3)), np.empty((len(P), 3))
    d[:], x[:], n[:] = np.inf, 0.0, 0.0
    for i, p in enumerate(P):
        if not np.isfinite(p).all():
            continue
        q = R.T @ (p - t)
        d[i], _, y, m = point_phi(*tm.arrays(), np.int64(tm.closed), tuple(q), np.int64(-1))
        x[i], n[i] = R @ np.array(y) + t, -(R @ np.array(m))
    return d, x, n


def check(ps, world, P, radius, shapes=None):
    """The query of every shape equals the brute-force oracle; witnesses consistent."""
    res = nearest_balls(ps, world, shapes)
    for q, k in enumerate(range(len(world)) if shapes is None else shapes):
        d, x, n = oracle(world, k, P)
        finite = np.isfinite(P).all(axis=1)
        d = np.where(finite, d, np.inf)
        i = int(np.argmin(d))   # the first row of the minimum
        assert abs(res.distance[q] - (d[i] - radius)) <= TOL, (k, res.distance[q], d[i] - radius)
        j = int(res.index[q])
        assert j == i
        np.testing.assert_allclose(res.point_shape[q], x[j], atol=TOL)
        np.testing.assert_allclose(res.normal[q], n[j], atol=TOL)
        np.testing.assert_allclose(res.point_obstacle[q], P[j] - radius * n[j], atol=TOL)
        gap = res.point_obstacle[q] - res.point_shape[q]
        np.testing.assert_allclose(gap, res.distance[q] * res.normal[q], atol=1e-9)
        assert abs(np.linalg.norm(res.normal[q]) - 1.0) < 1e-12
    return res


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_clouds_equal_the_brute_force_oracle_for_every_kind(seed):
    rng = np.random.default_rng(seed)
    world = WorldShapes.from_shapes(every_kind(rng))
    P = rng.uniform(-0.8, 0.8, (400, 3))   # points around, near and inside every shape
    radius = 0.01 * seed
    res = check(PointSet(P, radius), world, P, radius)
    assert (res.distance < 0).any() and (res.distance > 0).any()
    assert res.evaluations.max() < len(P)   # pruned (a plane sees half the cloud at most)


def test_clustered_cloud_prunes_to_few_evaluations():
    rng = np.random.default_rng(5)
    world = WorldShapes.from_shapes(every_kind(rng))
    P = np.concatenate([rng.normal(0, 0.01, (3000, 3)) + rng.uniform(-1, 1, 3) for _ in range(8)])
    res = check(PointSet(P, 0.002), world, P, 0.002)
    assert res.evaluations.max() < 300   # of 24,000 points (bounding spheres alone: 6,253)


def test_empty_cloud_reports_nothing():
    world = WorldShapes.from_shapes(every_kind(np.random.default_rng(3)))
    for P in (np.zeros((0, 3)), np.full((4, 3), np.nan)):
        ps = PointSet(P, 0.01)
        assert len(ps) == 0 and ps.n_nonfinite == len(P)
        res = nearest_balls(ps, world)
        assert np.all(res.distance == np.inf) and np.all(res.index == -1)
        assert not res.point_shape.any() and not res.normal.any() and not res.point_obstacle.any()


def test_one_point_and_duplicates():
    rng = np.random.default_rng(4)
    world = WorldShapes.from_shapes(every_kind(rng))
    P = rng.uniform(-0.8, 0.8, (1, 3))
    check(PointSet(P, 0.0), world, P, 0.0)
    P = np.repeat(rng.uniform(-0.8, 0.8, (20, 3)), 3, axis=0)[rng.permutation(60)]
    check(PointSet(P, 0.005), world, P, 0.005)   # the first row of equal points wins


def test_point_on_the_surface_and_inside():
    box = Box([0.5, 1.0, 2.0], [0.0, 0.0, 0.0])   # half extents 0.25, 0.5, 1: exact in binary
    sphere = Sphere([5.0, 0.0, 0.0], 0.5)
    world = WorldShapes.from_shapes([box, sphere])
    P = np.array([[0.25, 0.0, 0.0],    # on the box's +x face
                  [5.0, 0.0, 0.5],     # on the sphere
                  [9.0, 9.0, 9.0]])
    res = nearest_balls(PointSet(P, 0.25), world)
    np.testing.assert_array_equal(res.distance, [-0.25, -0.25])
    np.testing.assert_array_equal(res.index, [0, 1])
    np.testing.assert_array_equal(res.normal, [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(res.point_shape, P[:2])
    np.testing.assert_array_equal(res.point_obstacle, [[0.0, 0.0, 0.0], [5.0, 0.0, 0.25]])
    P = np.array([[0.0, 0.0, 0.75], [5.0, 0.125, 0.0], [5.0, 0.0, 0.0]])   # inside: deepest wins
    res = nearest_balls(PointSet(P, 0.0), world)
    np.testing.assert_array_equal(res.distance, [-0.25, -0.5])
    np.testing.assert_array_equal(res.index, [0, 2])


def test_shape_far_from_every_point():
    rng = np.random.default_rng(6)
    world = WorldShapes.from_shapes(every_kind(rng, offset=(1000.0, -500.0, 20.0))[:6])
    P = rng.uniform(-1.0, 1.0, (2000, 3))
    res = check(PointSet(P, 0.01), world, P, 0.01)
    assert res.distance.min() > 1000.0
    assert res.evaluations.max() < len(P) // 4   # the points near the cloud's nearest corner


def test_cutoff():
    rng = np.random.default_rng(7)
    world = WorldShapes.from_shapes(every_kind(rng))
    P = rng.uniform(-0.8, 0.8, (300, 3))
    ps = PointSet(P, 0.01)
    full = nearest_balls(ps, world)
    cut = np.median(full.distance)
    res = nearest_balls(ps, world, cutoff=cut)
    near = full.distance <= cut
    np.testing.assert_array_equal(res.distance[near], full.distance[near])
    np.testing.assert_array_equal(res.index[near], full.index[near])
    assert np.all(res.distance[~near] == np.inf) and np.all(res.index[~near] == -1)


def test_the_tree_holds_every_kept_point_once_in_nested_boxes():
    rng = np.random.default_rng(8)
    P = np.concatenate([rng.normal(size=(3000, 3)), np.zeros((50, 3)),   # a pile of equal points
                        rng.uniform(-1, 1, (500, 3)) * [1, 1, 0]])          # a flat patch
    ps = PointSet(P)
    np.testing.assert_array_equal(np.sort(ps.index), np.arange(len(P)))
    np.testing.assert_array_equal(ps.points, P[ps.index])
    for i, (first, count) in enumerate(ps.nodes):
        lo, hi = ps.boxes[i, :3], ps.boxes[i, 3:]
        if count:
            assert 1 <= count <= 8
            pts = ps.points[first:first + count]
            np.testing.assert_array_equal(lo, pts.min(axis=0))
            np.testing.assert_array_equal(hi, pts.max(axis=0))
        else:
            for child in (first, first + 1):
                assert child > i
                assert np.all(ps.boxes[child, :3] >= lo) and np.all(ps.boxes[child, 3:] <= hi)
    leaves = ps.nodes[ps.nodes[:, 1] > 0]
    assert leaves[:, 1].sum() == len(P)


def test_voxel_filter_keeps_the_first_point_of_each_cell():
    rng = np.random.default_rng(9)
    P = rng.uniform(-0.5, 0.5, (3000, 3))
    for v in (0.0, 0.05, 0.2):
        ps = PointSet(P, 0.0, voxel_size=v)
        if v == 0.0:
            assert len(ps) == len(P) and ps.n_voxel_merged == 0
            continue
        first = {}
        for i, p in enumerate(P):
            first.setdefault(tuple(np.floor(p / v).astype(int)), i)
        assert sorted(ps.index.tolist()) == sorted(first.values())
        assert ps.n_voxel_merged == len(P) - len(first)
        # the distance to the filtered set: not below the full set's, at most sqrt(3) v above
        world = WorldShapes.from_shapes(every_kind(rng)[:7])
        full = nearest_balls(PointSet(P, 0.0), world).distance
        kept = nearest_balls(ps, world).distance
        assert np.all(kept >= full) and np.all(kept <= full + math.sqrt(3.0) * v)


def test_nonfinite_points_are_dropped_and_counted():
    rng = np.random.default_rng(10)
    P = rng.uniform(-0.8, 0.8, (500, 3))
    P[::7, 1] = np.nan
    P[3::11, 2] = np.inf
    P[5::13, 0] = -np.inf
    bad = ~np.isfinite(P).all(axis=1)
    ps = PointSet(P, 0.01, voxel_size=0.0)
    assert ps.n_nonfinite == bad.sum() and len(ps) == (~bad).sum()
    assert not np.isin(ps.index, np.flatnonzero(bad)).any()
    world = WorldShapes.from_shapes(every_kind(rng))
    check(ps, world, P, 0.01)   # indices are rows of the array given, NaN rows included


def test_range_filter():
    rng = np.random.default_rng(11)
    P = rng.uniform(-2, 2, (2000, 3))
    o = np.array([0.3, -0.2, 0.1])
    r = np.linalg.norm(P - o, axis=1)
    ps = PointSet(P, origin=o, min_range=0.5, max_range=1.5)
    keep = (r >= 0.5) & (r <= 1.5)
    np.testing.assert_array_equal(np.sort(ps.index), np.flatnonzero(keep))
    assert ps.n_out_of_range == (~keep).sum()
    assert len(PointSet(P, min_range=0.5, max_range=1.5)) == len(P)   # no origin: no filter


def test_very_large_coordinates():
    rng = np.random.default_rng(12)
    world = WorldShapes.from_shapes(every_kind(rng, offset=(1e7, -3e7, 2e6))[:7])
    P = 1e7 * np.array([1.0, -3.0, 0.2]) + rng.uniform(-0.8, 0.8, (300, 3))
    check(PointSet(P, 0.01), world, P, 0.01)
    wide = np.concatenate([P, [[1e300, -1e300, 1e300], [-1e300, 1e300, 0.0]]])   # extent overflows
    ps = PointSet(wide, 0.01)
    assert len(ps) == len(wide)
    check(ps, world, wide, 0.01)
    with pytest.raises(ValueError, match="2\\^21 cells along x"):
        PointSet(wide, 0.01, voxel_size=0.01)


@pytest.mark.parametrize("kwargs, match", [
    ({"points": np.zeros((4, 2))}, "an \\(N, 3\\) array, got shape \\(4, 2\\)"),
    ({"points": [["a", "b", "c"]]}, "an \\(N, 3\\) array of numbers"),
    ({"point_radius": -0.1}, "point_radius must be finite and >= 0"),
    ({"point_radius": math.inf}, "point_radius must be finite and >= 0"),
    ({"voxel_size": math.nan}, "voxel_size must be finite and >= 0"),
    ({"min_range": 2.0, "max_range": 1.0}, "min_range 2.0 > max_range 1.0"),
    ({"origin": [0.0, 1.0]}, "origin must be 3 finite numbers"),
    ({"pose": (np.eye(3)[:2], np.zeros(3))}, "pose rotation must be 3x3 finite numbers"),
    ({"pose": (np.eye(3), [0.0, math.nan, 0.0])}, "pose translation must be 3 finite numbers"),
])
def test_bad_parameters_are_refused(kwargs, match):
    args = {"points": np.zeros((4, 3)), **kwargs}
    with pytest.raises(ValueError, match=match):
        PointSet(**args)


def test_queries_follow_a_rigid_motion():
    """Moving shapes and points by one rigid motion moves the results with it (an oracle
    independent of the kernels' own frames)."""
    rng = np.random.default_rng(13)
    shapes = every_kind(rng)[:6]
    P = rng.uniform(-0.8, 0.8, (500, 3))
    R, t = quat_to_matrix(quat(rng)), rng.uniform(-3, 3, 3)
    moved = []
    for s in shapes:
        if isinstance(s, Sphere):
            moved.append(Sphere(R @ s.center + t, s.radius))
        elif isinstance(s, Capsule):
            moved.append(Capsule(R @ s.a + t, R @ s.b + t, s.radius))
        else:
            moved.append(dataclasses.replace(s, position=R @ s.position + t, orientation=matrix_to_quat(
                R @ quat_to_matrix(s.orientation))))
    a = nearest_balls(PointSet(P, 0.01), WorldShapes.from_shapes(shapes))
    b = nearest_balls(PointSet(P @ R.T + t, 0.01), WorldShapes.from_shapes(moved))
    np.testing.assert_allclose(b.distance, a.distance, atol=1e-12)
    np.testing.assert_array_equal(b.index, a.index)
    np.testing.assert_allclose(b.point_shape, a.point_shape @ R.T + t, atol=1e-12)
    np.testing.assert_allclose(b.normal, a.normal @ R.T, atol=1e-12)


def test_a_kept_scratch_builds_the_same_sets_and_leaves_earlier_ones_alone():
    rng = np.random.default_rng(14)
    scratch = BuildScratch(10)
    sets, fresh = [], []
    for n in (500, 40, 2000, 0, 700):   # grows, shrinks, grows
        P = rng.uniform(-1, 1, (n, 3))
        sets.append(PointSet(P, 0.01, voxel_size=0.05 * (n % 2), scratch=scratch))
        fresh.append(PointSet(P, 0.01, voxel_size=0.05 * (n % 2)))
    assert scratch.capacity == 2000
    for a, b in zip(sets, fresh):
        for x, y in zip(a.arrays(), b.arrays()):
            np.testing.assert_array_equal(x, y)
            assert not x.flags.writeable


def test_a_subset_keeps_the_chosen_points_and_names_their_input_rows():
    rng = np.random.default_rng(11)
    P = rng.uniform(-1.0, 1.0, (500, 3))
    P[7] = np.nan
    ps = PointSet(P, point_radius=0.01, voxel_size=0.05)
    keep = rng.random(len(ps)) < 0.6
    sub = ps.subset(keep, BuildScratch())
    assert len(sub) == int(keep.sum()) and sub.point_radius == 0.01
    assert sorted(sub.index.tolist()) == sorted(ps.index[keep].tolist())
    np.testing.assert_array_equal(sub.points, P[sub.index])   # each point is its input row
    assert (sub.n_input, sub.n_nonfinite, sub.n_voxel_merged) == (500, 1, ps.n_voxel_merged)
    # the tree made again without a sort answers every kind as brute force over the kept rows
    hidden = P.copy()
    hidden[np.setdiff1d(np.arange(len(P)), sub.index)] = np.nan
    check(sub, WorldShapes.from_shapes(every_kind(rng)), hidden, 0.01)
    assert np.all(np.diff(sub.codes) >= 0)   # still in Morton order
    with pytest.raises(ValueError, match="keep must be"):
        ps.subset(keep[:-1])


def test_a_pose_places_the_points_as_numpy_does_and_the_range_counts_from_the_sensor():
    rng = np.random.default_rng(15)
    P = rng.uniform(-2.0, 2.0, (3000, 3))
    P[::17] = np.nan
    P[5] = [1e308, 1e308, 0.0]   # finite, but placed it overflows: dropped as not finite
    R, t = quat_to_matrix(quat(rng)), np.array([0.8, -0.3, 0.4])
    placed = PointSet(P, 0.01, pose=(R, t), origin=t, min_range=0.4, max_range=1.7)
    with np.errstate(invalid="ignore", over="ignore"):
        world = P @ R.T + t
        r = np.linalg.norm(P, axis=1)   # the range from the sensor: a rotation keeps lengths
    kept = np.isfinite(world).all(axis=1) & (r >= 0.4) & (r <= 1.7)
    np.testing.assert_array_equal(np.sort(placed.index), np.flatnonzero(kept))
    assert placed.n_nonfinite == int((~np.isfinite(world).all(axis=1)).sum()) == 177
    np.testing.assert_allclose(placed.points, world[placed.index], rtol=0, atol=1e-15)
    check(placed, WorldShapes.from_shapes(every_kind(rng)), np.where(kept[:, None], world, np.nan),
          0.01)


def test_a_scratch_reused_after_its_set_is_dropped_is_written_in_place_and_never_under_a_holder():
    rng = np.random.default_rng(16)
    scratch = BuildScratch()
    P, Q = rng.uniform(-1, 1, (800, 3)), rng.uniform(-1, 1, (600, 3))
    first = PointSet(P, 0.01, scratch=scratch)
    assert scratch.holds(first) and np.shares_memory(first.points, scratch.sorted_points)
    kept = first.points.copy()
    second = PointSet(Q, 0.01, scratch=scratch)   # `first` is still held: it takes copies
    assert not np.shares_memory(first.points, scratch.sorted_points)
    np.testing.assert_array_equal(first.points, kept)
    assert scratch.holds(second) and not scratch.holds(first)
    memory = scratch.sorted_points
    del first, second
    third = PointSet(P, 0.01, scratch=scratch)   # nothing held: built in place, no new array
    assert scratch.sorted_points is memory and np.shares_memory(third.points, memory)
    np.testing.assert_array_equal(third.points, kept)
    keep = rng.random(len(third)) < 0.5
    sub = third.subset(keep, scratch)   # into its own scratch: `third` takes copies first
    np.testing.assert_array_equal(third.points, kept)
    np.testing.assert_array_equal(sub.points, kept[keep])
