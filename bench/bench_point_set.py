"""Point obstacle sets (issue 39, library part): build and query cost, against peers measured in
the same run.

Clouds (24,000 points, seeded, metres, world frame of examples/demo/demo_arm.yaml):
  surfaces  what a depth camera beside the arm sees: a wall behind it (10,000 points), the floor
            (6,000), the table top (4,000) and a hand-sized ball near the forearm (4,000), 1 mm
            noise;
  volume    uniform in the box [-1, 1] x [-1, 1] x [0, 1.6] around the arm (the hard case:
            points all around and inside every shape).

Build (issue target: at most 2 ms for 24,000 points): ``PointSet(points, radius)``, the
whole Python call (validation, selection, Morton k-d tree), in a kept BuildScratch and in a new
one; its compiled stages alone; the same points with a 1 cm voxel filter; peers: a median-split k-d tree (quickselect along the longest
axis of each node's cell, in this file) built from the same points, and NumPy's stable argsort
of the Morton keys in a shuffled order (what sorting alone costs outside numba).

Query: the demo arm's 6 robot shapes (base cylinder, 4 capsules, fingertip sphere; floor and
table are the environment) along the demo joint script (``--poses`` poses over one period),
each pose's nearest ball per shape (radius 5 mm) in one compiled call; peer: a compiled
brute-force scan of every point through the same exact kernel (``point_row``); both agree
on every pose (checked; the run fails otherwise). Also the same query on the median-split tree.
Evaluation: ``Model.evaluate(data, near_only=True)`` (what the node calls) alone and followed
by the query of its 6 robot shapes (issue target: at most +50 us); the joints move by 1e-4 rad
between calls (no pair kept from the previous call), both timings include setting them.

Times are medians and 99th percentiles of single calls (time.perf_counter_ns); the machine is
shared (2 cores, other jobs running), so compare the ratios of one run.

Measured 2026-12-07, 16:15 UTC (2 cores shared with a CI run and other sessions; ``--poses 40
--builds 100``); in brackets 23:30 UTC, after the build kept the set's arrays in its scratch
and sorted codes and rows only:

| | surfaces | volume |
|---|---|---|
| build, ``PointSet(points, radius, scratch=kept)``, median / p99 | 1.02 / 1.30 ms (0.59 / 1.07) | 1.00 / 1.33 ms (0.56 / 0.89) |
| build, ``PointSet(points, radius)`` (new scratch), median | 3.27 ms (1.81) | 0.99 ms (0.69) |
| of which the Morton radix sort | 0.64 ms (0.27) | 0.63 ms (0.29) |
| build with a 1 cm voxel filter (kept scratch) | 1.57 ms | 1.38 ms |
| peer: median-split k-d tree | 4.76 ms | 5.00 ms |
| peer: NumPy stable argsort of the keys alone | 1.47 ms | 1.51 ms |
| query, 6 shapes, one compiled call, median | 43 us (7.2 us a shape) | 31 us (5.1 us a shape) |
| same query on the median-split tree | 49 us | 30 us |
| peer: brute-force scan, 6 shapes | 3.13 ms (521 us a shape) | 3.16 ms (526 us a shape) |
| exact evaluations per shape, mean / max | 58 / 154 | 32 / 60 |
| ``evaluate`` alone / with the query, median | 12.5 / 61.8 us | 12.4 / 47.6 us |
| added to the evaluation, median | 49.3 us | 35.3 us |

A new scratch per build costs its page faults when glibc maps its blocks afresh (its default
for blocks over 128 kB; whether it does depends on the process's allocation history: 3.3 ms for
the surfaces cloud, 1.0 ms for the volume cloud in the same run; with
``MALLOC_MMAP_THRESHOLD_=1000000000 MALLOC_TRIM_THRESHOLD_=1000000000`` an earlier run built
both in 0.8-1.0 ms): keep one BuildScratch. The query's time includes ~6.5 us of argument
unboxing of the Python-to-compiled call (an empty query of no shape costs that), which a query
inside the evaluate kernel would not pay.

Run: PYTHONPATH=. python bench/bench_point_set.py [--poses N] [--builds N]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ambf_collision.demo.trajectory import PERIOD, demo_joint_array, JOINT_NAMES  # noqa: E402
from ambf_collision.geometry.mesh_set import no_meshes  # noqa: E402
from ambf_collision.geometry.point_query import PointTree, _nearest_entry, shape_bounds  # noqa: E402
from ambf_collision.geometry.points import point_row  # noqa: E402
from ambf_collision.geometry.shapes import CONVEX, MESH  # noqa: E402
from ambf_collision.geometry.point_build import (LEAF_SIZE, morton_order,  # noqa: E402
                                                 select_points, split_nodes, tree_boxes)
from ambf_collision.geometry.point_set import BuildScratch, PointSet  # noqa: E402
from ambf_collision.geometry.world_shapes import hull_arrays, shape_row, world_of  # noqa: E402
from ambf_collision.model import Model  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RADIUS = 0.005


def clouds(rng) -> dict:
    """The two 24,000-point clouds of the module docstring."""
    def square(n, lo, hi, fixed_axis, value):
        p = rng.uniform(lo, hi, (n, 3))
        p[:, fixed_axis] = value
        return p
    wall = square(10_000, (-0.8, -1.0, 0.0), (-0.8, 1.0, 1.5), 0, -0.8)
    floor = square(6_000, (-1.0, -1.0, 0.0), (1.0, 1.0, 0.0), 2, 0.0)
    table = square(4_000, (0.425, -0.175, 0.0), (0.675, 0.175, 0.0), 2, 0.30)
    u = rng.normal(size=(4_000, 3))
    hand = np.array([0.3, 0.3, 0.9]) + 0.08 * u / np.linalg.norm(u, axis=1, keepdims=True)
    surfaces = np.concatenate([wall, floor, table, hand]) + rng.normal(0, 1e-3, (24_000, 3))
    volume = rng.uniform((-1.0, -1.0, 0.0), (1.0, 1.0, 1.6), (24_000, 3))
    return {"surfaces": surfaces, "volume": volume}


# ------------------------------------------------------------------ peer: median-split k-d tree

@njit(cache=True, error_model="numpy")
def _nth(Q, idx, lo, hi, k, axis):
    """Quickselect (Hoare, median of three) of rank ``k`` along ``axis`` in rows lo..hi."""
    while hi > lo:
        m = (lo + hi) // 2
        a, b, c = Q[lo, axis], Q[m, axis], Q[hi, axis]
        pivot = max(min(a, b), min(max(a, b), c))
        i, j = lo, hi
        while i <= j:
            while Q[i, axis] < pivot:
                i += 1
            while Q[j, axis] > pivot:
                j -= 1
            if i <= j:
                for x in range(3):
                    Q[i, x], Q[j, x] = Q[j, x], Q[i, x]
                idx[i], idx[j] = idx[j], idx[i]
                i += 1
                j -= 1
        if k <= j:
            hi = j
        elif k >= i:
            lo = i
        else:
            return


@njit(cache=True, error_model="numpy")
def median_tree(P, leaf):
    """A balanced k-d tree of ``P`` in PointSet's layout: median split along the longest axis
    of each node's cell."""
    n = P.shape[0]
    pts = P.copy()
    idx = np.arange(n)
    nodes = np.zeros((2 * n + 1, 2), np.int64)
    cell = np.empty((2 * n + 1, 6))
    for a in range(3):
        cell[0, a], cell[0, 3 + a] = pts[:, a].min(), pts[:, a].max()
    nodes[0, 0], nodes[0, 1] = 0, n
    used, i = 1, 0
    while i < used:
        start, count = nodes[i, 0], nodes[i, 1]
        i += 1
        if count <= leaf:
            continue
        axis = np.argmax(cell[i - 1, 3:] - cell[i - 1, :3])
        mid = start + count // 2
        _nth(pts, idx, start, start + count - 1, mid, axis)
        for c in range(2):
            cell[used + c] = cell[i - 1]
        cell[used, 3 + axis] = cell[used + 1, axis] = pts[mid, axis]
        nodes[used, 0], nodes[used, 1] = start, mid - start
        nodes[used + 1, 0], nodes[used + 1, 1] = mid, start + count - mid
        nodes[i - 1, 0], nodes[i - 1, 1] = used, 0
        used += 2
    nodes = nodes[:used]
    return pts, idx, nodes, tree_boxes(pts, nodes, np.empty((nodes.shape[0], 6)))


# ------------------------------------------------------------------ peer: brute-force scan

@njit(cache=True, error_model="numpy")
def brute(table, P, shapes, radius, out):
    """Every point through the exact kernel ``point_row`` (the demo arm has no hull or mesh),
    per shape: the smallest signed distance minus the radius into ``out[q]``."""
    W = world_of(table)
    for q in range(shapes.shape[0]):
        s = shape_row(W, shapes[q])
        best = math.inf
        for j in range(P.shape[0]):
            best = min(best, point_row(s, (P[j, 0], P[j, 1], P[j, 2]))[0])
        out[q] = best - radius


# ------------------------------------------------------------------ timing

def timed(fn, repeat: int) -> np.ndarray:
    """Microseconds of ``repeat`` single calls of ``fn()`` (after one warm-up call)."""
    fn()
    t = np.empty(repeat)
    for i in range(repeat):
        t0 = time.perf_counter_ns()
        fn()
        t[i] = time.perf_counter_ns() - t0
    return t / 1e3


def stat(t: np.ndarray) -> str:
    return f"median {np.median(t):9.1f} us   p99 {np.percentile(t, 99):9.1f} us"


def bench_build(name: str, P: np.ndarray, builds: int) -> None:
    print(f"\n== build, cloud '{name}' ({len(P):,} points)")
    scratch = BuildScratch(len(P))
    keep, world, sorted_points, key, key2, idx, idx2, work, boxes = scratch.arrays()
    R, t, o = np.eye(3), np.zeros(3), np.zeros(3)
    rows = select_points(P, R, t, o, 0.0, math.inf, False, keep, world)[0].copy()
    pts, ix, codes = (a.copy() for a in morton_order(world, rows, sorted_points, key, key2, idx,
                                                      idx2))
    nodes = split_nodes(codes, np.int64(LEAF_SIZE), work).copy()
    shuffled = codes[np.random.default_rng(0).permutation(len(codes))]   # the keys unsorted
    lines = [
        ("PointSet(points, radius), kept scratch", lambda: PointSet(P, RADIUS, scratch=scratch)),
        ("PointSet(points, radius), new scratch", lambda: PointSet(P, RADIUS)),
        ("  selection (placed, finite, range)",
         lambda: select_points(P, R, t, o, 0.0, math.inf, False, keep, world)),
        ("  Morton order (radix sort)",
         lambda: morton_order(world, rows, sorted_points, key, key2, idx, idx2)),
        ("  node splits", lambda: split_nodes(codes, np.int64(LEAF_SIZE), work)),
        ("  node boxes", lambda: tree_boxes(pts, nodes, boxes)),
        ("PointSet with voxel_size 0.01 m", lambda: PointSet(P, RADIUS, voxel_size=0.01, scratch=scratch)),
        ("peer: median-split k-d tree", lambda: median_tree(P, np.int64(LEAF_SIZE))),
        ("peer: NumPy argsort of the keys", lambda: np.argsort(shuffled, kind="stable")),
    ]
    for label, fn in lines:
        print(f"  {label:40s} {stat(timed(fn, builds))}")
    ps = PointSet(P, RADIUS, voxel_size=0.01)
    print(f"  voxel 0.01 m keeps {len(ps):,} of {len(P):,}; tree nodes {len(nodes):,}")


def bench_query(name: str, P: np.ndarray, poses: int) -> None:
    model = Model.from_files([str(ROOT / "examples/demo/demo_arm.yaml")])
    data = model.create_data()
    robot = model.body_tree[model.body_index("base")]
    shapes = np.flatnonzero(model.body_tree[model.shape_body] == robot).astype(np.int64)
    world = data.world
    assert not np.isin(world.kind[shapes], (CONVEX, MESH)).any()   # what `brute` computes
    H, M = hull_arrays(world.hulls), no_meshes()
    centre, outer = shape_bounds(world)
    ps = PointSet(P, RADIUS)
    mt = median_tree(P, np.int64(LEAF_SIZE))
    trees = {"Morton k-d tree": PointTree(*ps.arrays()), "median k-d tree": PointTree(*mt)}
    cut = math.inf
    K = len(shapes)
    out, out_index, ref = np.empty((K, 10)), np.empty((K, 2), np.int64), np.empty(K)
    joint_sets = [demo_joint_array(PERIOD * i / poses) for i in range(poses)]
    print(f"\n== query, cloud '{name}': {K} robot shapes of the demo arm, {poses} poses")
    times = {label: [] for label in (*trees, "brute force", "evaluate", "evaluate + query")}
    evals = {label: [] for label in trees}
    for q in joint_sets:
        flip = [q, q + 1e-4]   # the arm moves at every call: no pair is kept from the last one

        def evaluate():
            flip.reverse()
            model.set_joint_positions(data, JOINT_NAMES, flip[0])
            model.evaluate(data, near_only=True)

        def evaluate_query():
            evaluate()
            _nearest_entry(world.table, H, M, trees["Morton k-d tree"], centre, outer, shapes,
                           RADIUS, cut, out, out_index)
        times["evaluate"].append(timed(evaluate, 20))
        times["evaluate + query"].append(timed(evaluate_query, 20))
        model.set_joint_positions(data, JOINT_NAMES, q)
        model.evaluate(data, near_only=True)
        brute(world.table, P, shapes, RADIUS, ref)
        times["brute force"].append(timed(lambda: brute(world.table, P, shapes, RADIUS, ref), 2))
        for label, T in trees.items():
            times[label].append(timed(lambda: _nearest_entry(world.table, H, M, T, centre, outer,
                                                             shapes, RADIUS, cut, out, out_index), 20))
            if not np.array_equal(out[:, 0], ref):
                raise SystemExit(f"{label} disagrees with brute force: {out[:, 0]} vs {ref}")
            evals[label].append(out_index[:, 1].copy())
    for label, t in times.items():
        t = np.concatenate(t)
        per = f"  ({np.median(t) / K:7.2f} us per shape)" if label in (*trees, "brute force") else ""
        print(f"  {label:22s} {stat(t)}{per}")
    extra = np.concatenate(times["evaluate + query"]) - np.median(np.concatenate(times["evaluate"]))
    print(f"  {'added to evaluate':22s} median {np.median(extra):9.1f} us")
    for label, e in evals.items():
        e = np.array(e)
        print(f"  exact evaluations per shape, {label}: mean {e.mean():.1f}, max {e.max()} "
              f"(of {len(P):,} points)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--poses", type=int, default=100)
    ap.add_argument("--builds", type=int, default=200)
    args = ap.parse_args()
    for name, P in clouds(np.random.default_rng(39)).items():
        bench_build(name, P, args.builds)
        bench_query(name, P, args.poses)


if __name__ == "__main__":
    main()
