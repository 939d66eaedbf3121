"""Self filter (geometry/point_filter.py): the points within a padding of shapes.

Oracle: brute force, every point against every shape one by one from Python with the package's
exact point kernels (``oracle`` of test_point_set: ``point_signed_distance_batch``, and
``point_phi`` for meshes); a point is marked when its distance to some shape is <= padding.
"""

from __future__ import annotations

import time

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.point_filter import points_near_shapes
from ambf_collision.geometry.point_set import PointSet
from ambf_collision.geometry.shapes import MESH, PLANE, Box, Mesh, Sphere
from ambf_collision.geometry.trimesh import TriangleMesh
from ambf_collision.geometry.world_shapes import WorldShapes
from test_point_set import every_kind, oracle, quat


def kinds(rng):
    """Every kind of test_point_set (a convex hull and a concave closed torus mesh among them)
    and an open mesh (the torus with a strip of faces removed)."""
    V, F = mx.torus(R=0.12, r=0.04, n=20, m=10)
    open_torus = TriangleMesh.build(V, F[:-30])
    return every_kind(rng) + [Mesh(open_torus, rng.uniform(-0.5, 0.5, 3), quat(rng))]


def distances(world, shapes, P):
    """(K, N): the oracle's signed distance of every point to every shape."""
    return np.array([oracle(world, k, P)[0] for k in shapes])


def expected(ps, world, shapes, padding):
    """Tree-order mask by brute force."""
    if not len(shapes):
        return np.zeros(len(ps), bool)
    return (distances(world, shapes, ps.points) <= padding).any(axis=0)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("padding", [0.0, 0.013, 0.1])
def test_every_kind_alone_and_together_equals_brute_force(seed, padding):
    rng = np.random.default_rng(seed)
    world = WorldShapes.from_shapes(kinds(rng))
    P = rng.uniform(-0.8, 0.8, (1500, 3))   # around, near and inside every shape
    ps = PointSet(P)
    D = distances(world, range(len(world)), ps.points)
    for k in range(len(world)):
        got = points_near_shapes(ps, world, [k], padding)
        np.testing.assert_array_equal(got, D[k] <= padding, err_msg=f"shape {k}")
    solids = [k for k in range(len(world)) if world.kind[k] != PLANE]
    evals = np.zeros(len(solids), np.int64)
    got = points_near_shapes(ps, world, solids, padding, evaluations=evals)
    np.testing.assert_array_equal(got, (D[solids] <= padding).any(axis=0))
    assert got.any() and not got.all()
    assert evals.max() < len(P) // 2   # pruned


@pytest.mark.parametrize("seed", [3, 4])
def test_points_exactly_at_the_padding(seed):
    """The padding set to a point's own distance (the oracle's value, bit for bit: the same
    compiled kernel) marks it; the next smaller float does not (nor any point beyond it). Meshes:
    the oracle's local frame is NumPy's product (rounded differently), so there the points
    within 1e-12 m of the padding are left out of the comparison."""
    rng = np.random.default_rng(seed)
    world = WorldShapes.from_shapes(kinds(rng))
    P = rng.uniform(-0.8, 0.8, (800, 3))
    ps = PointSet(P)
    for k in range(len(world)):
        d = distances(world, [k], ps.points)[0]
        tol = 1e-12 if world.kind[k] == MESH else 0.0
        for j in rng.choice(np.flatnonzero((d > 0) & (d < 0.3)), 3, replace=False):
            for pad in (d[j], np.nextafter(d[j], 0.0)):
                got = points_near_shapes(ps, world, [k], pad)
                sure = np.abs(d - pad) > tol
                np.testing.assert_array_equal(got[sure], (d <= pad)[sure], err_msg=f"shape {k}")
                if not tol:
                    assert got[j] == (pad == d[j])


def test_padding_zero_surface_and_inside():
    """Hand-derived: a box with exact half extents (0.25, 0.5, 1) and a sphere of radius 0.5:
    points on the surfaces (d = 0) and inside count at padding 0, a point 1e-9 outside not."""
    world = WorldShapes.from_shapes([Box([0.5, 1.0, 2.0], [0.0, 0.0, 0.0]),
                                     Sphere([5.0, 0.0, 0.0], 0.5)])
    P = np.array([[0.25, 0.1, 0.2], [0.0, 0.0, 0.0], [0.25 + 1e-9, 0.0, 0.0],
                  [5.5, 0.0, 0.0], [5.0, 0.1, 0.0], [5.0, 0.0, 0.5 + 1e-9], [2.0, 2.0, 2.0]])
    ps = PointSet(P)
    rows = points_near_shapes(ps, world, None, 0.0, input_rows=True)
    np.testing.assert_array_equal(rows, [True, True, False, True, True, False, False])
    rows = points_near_shapes(ps, world, None, 2e-9, input_rows=True)
    np.testing.assert_array_equal(rows, [True, True, True, True, True, True, False])


def test_input_rows_with_dropped_points():
    """Over the input rows: NaN rows, rows out of range and voxel-merged rows are False; kept
    rows as the oracle says."""
    rng = np.random.default_rng(6)
    world = WorldShapes.from_shapes(kinds(rng))
    P = rng.uniform(-0.8, 0.8, (2000, 3))
    P[::9, 0] = np.nan
    ps = PointSet(P, voxel_size=0.05, origin=np.zeros(3), min_range=0.1, max_range=1.2)
    assert ps.n_nonfinite and ps.n_out_of_range and ps.n_voxel_merged
    rows = points_near_shapes(ps, world, None, 0.05, input_rows=True)
    want = np.zeros(len(P), bool)
    want[ps.index] = expected(ps, world, range(len(world)), 0.05)
    np.testing.assert_array_equal(rows, want)
    assert want.any()


def test_empty_cloud_and_no_shapes():
    rng = np.random.default_rng(7)
    world = WorldShapes.from_shapes(kinds(rng))
    for P in (np.zeros((0, 3)), np.full((3, 3), np.nan)):
        ps = PointSet(P)
        evals = np.full(len(world), 7, np.int64)
        assert points_near_shapes(ps, world, None, 0.1, evaluations=evals).shape == (0,)
        assert not evals.any()
        assert not points_near_shapes(ps, world, None, 0.1, input_rows=True).any()
    ps = PointSet(rng.uniform(-0.8, 0.8, (100, 3)))
    got = points_near_shapes(ps, world, [], 10.0)
    assert got.shape == (100,) and not got.any()


def test_bad_arguments():
    world = WorldShapes.from_shapes([Sphere([0.0, 0.0, 0.0], 0.1)])
    ps = PointSet(np.zeros((2, 3)))
    for pad in (-1e-3, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="padding"):
            points_near_shapes(ps, world, None, pad)
    with pytest.raises(ValueError, match="out of range"):
        points_near_shapes(ps, world, [1], 0.1)


def test_clusters_inside_shapes_are_marked_wholesale():
    """Dense clusters well inside and far outside a mesh and a box: the Lipschitz box-centre
    bounds decide whole nodes; far fewer evaluations than points, same mask as brute force."""
    rng = np.random.default_rng(8)
    V, F = mx.torus(R=0.3, r=0.1, n=32, m=16)
    world = WorldShapes.from_shapes([Mesh(TriangleMesh.build(V, F), [0.0, 0.0, 0.0]),
                                     Box([0.4, 0.4, 0.4], [2.0, 0.0, 0.0])])
    centres = [[0.3, 0.0, 0.0], [0.0, -0.3, 0.0], [2.0, 0.0, 0.0], [1.0, 1.0, 1.0], [-1.0, 0.5, 0.2]]
    P = np.concatenate([rng.normal(0.0, 0.01, (2000, 3)) + c for c in centres])
    ps = PointSet(P)
    evals = np.zeros(2, np.int64)
    got = points_near_shapes(ps, world, None, 0.02, evaluations=evals)
    np.testing.assert_array_equal(got, expected(ps, world, [0, 1], 0.02))
    assert got.sum() >= 5500 and evals.max() < 600, (got.sum(), evals)


def test_time_demo_arm_24k(capsys):
    """Timing (printed): 24,000 points of a camera's view of the demo arm (3,000 on the arm's
    own surfaces, the rest on a wall, the floor and the table) against the arm's 6 robot shapes,
    padding 2 cm; checked against brute force once."""
    from pathlib import Path

    from ambf_collision.model import Model

    root = Path(__file__).resolve().parents[2]
    model = Model.from_files([str(root / "examples/demo/demo_arm.yaml")])
    data = model.create_data()
    robot = model.body_tree[model.body_index("base")]
    shapes = np.flatnonzero(model.body_tree[model.shape_body] == robot).astype(np.int64)
    world = data.world
    rng = np.random.default_rng(9)
    near = rng.uniform((-0.3, -0.3, 0.0), (0.3, 0.3, 1.0), (3000, 3))
    d, y, _ = zip(*(oracle(world, k, near) for k in shapes))
    nearest = np.argmin(np.array(d), axis=0)
    on_arm = np.array(y)[nearest, np.arange(len(near))] + rng.normal(0, 1e-3, (len(near), 3))
    wall = np.column_stack([np.full(9000, -0.8), rng.uniform(-1, 1, 9000), rng.uniform(0, 1.5, 9000)])
    floor = np.column_stack([rng.uniform(-1, 1, (8000, 2)), np.zeros(8000)])
    table = np.column_stack([rng.uniform(0.425, 0.675, 4000), rng.uniform(-0.175, 0.175, 4000),
                             np.full(4000, 0.30)])
    P = np.concatenate([on_arm, wall, floor, table])
    ps = PointSet(P)
    got = points_near_shapes(ps, world, shapes, 0.02)
    np.testing.assert_array_equal(got, expected(ps, world, shapes, 0.02))
    assert got.sum() >= 2900
    evals = np.zeros(len(shapes), np.int64)
    t = []
    for _ in range(200):
        t0 = time.perf_counter()
        points_near_shapes(ps, world, shapes, 0.02, evaluations=evals)
        t.append(time.perf_counter() - t0)
    t = np.sort(t) * 1e6
    with capsys.disabled():
        print(f"\nself filter, 24,000 points, demo arm ({len(shapes)} shapes, padding 2 cm): "
              f"median {t[100]:.0f} us, p99 {t[198]:.0f} us; {got.sum()} points marked; "
              f"evaluations per shape {evals.tolist()}")
