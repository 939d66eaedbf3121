"""Where a mesh robot's evaluation spends its time: per pair kind, GJK iterations, support calls,
hill-climb steps, EPA runs (issue 36 §2: measured before choosing a lever).

Run: ``python bench/profile_hull_pairs.py [--models DIR] [--states K] [FILE]`` (default: AMBF's PR2
under DIR = ``$AMBF_MODELS``).

Two measurements at K random joint states (every joint in its limits):

- times (compiled): the whole ``Model.evaluate`` with every pair computed (``data.exact`` False),
  the same pairs' ``pair_kernels.convex_pair`` / closed forms in one compiled loop (the
  difference is kinematics, shapes to world, table views, contacts), and per pair kind the median
  time of one pair (the pair computed 50 times in a compiled loop);
- counts (the kernels' Python functions, ``py_func``, run with counting wrappers; the arithmetic is
  the same): per pair kind the mean GJK iterations, support calls, hill-climb moves and neighbour
  dot products, and how many pairs went to EPA.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from numba import njit
from numba.core.registry import CPUDispatcher

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ambf_collision.geometry import epa, epa_polytope, gjk, pair_kernels, simplex, support  # noqa: E402
from ambf_collision.geometry.shapes import KIND_NAMES, PLANE  # noqa: E402
from ambf_collision.geometry.world_shapes import World, make_hulls, make_world  # noqa: E402
from ambf_collision.model import Model  # noqa: E402
from bench_ambf_robots import random_positions  # noqa: E402


@njit(cache=True)
def _time_pairs(kind, a, b, radius, rot, half, normal, offset, hull_id, mesh_id, vertices, vertex_start,
                face_normal, face_offset, face_start, centre, bound_radius, neighbor_start,
                neighbors, pairs, reps, out_d):
    """Every pair of ``pairs`` by the evaluate kernel's per-pair kernels (``pairs.evaluate_pairs``'
    calls), ``reps`` times."""
    W = make_world(kind, a, b, radius, rot, half, normal, offset, hull_id, mesh_id)
    H = make_hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
                   bound_radius, neighbor_start, neighbors)
    scratch = np.empty((gjk.SCRATCH_ROWS, 9))
    for _ in range(reps):
        for p in range(pairs.shape[0]):
            k1, k2 = pairs[p, 0], pairs[p, 1]
            d, x1, x2, n, done = pair_kernels.closed_form(W, k1, k2)
            if not done and W.kind[k1] != PLANE and W.kind[k2] != PLANE:   # as evaluate_pairs
                d = gjk.convex_distance_in(W, H, k1, k2, scratch)[0]
            elif not done:
                d, x1, x2, n = pair_kernels.convex_pair(W, H, k1, k2)
            out_d[p] = d


def kind_of(model, s1, s2) -> str:
    return "-".join(sorted(KIND_NAMES[model.shapes[s].kind] for s in (s1, s2)))


class Counts:
    """Counting wrappers around the kernels' Python functions (``py_func``)."""

    def __init__(self):
        self.calls = collections.Counter()
        self.moves = self.dots = 0
        self.installed = {}

    def install(self):
        originals = {}
        for mod in (support, gjk, epa, epa_polytope, simplex, pair_kernels):
            for name, obj in list(vars(mod).items()):
                if isinstance(obj, CPUDispatcher):
                    originals[(mod, name)] = obj
        wrapped = {}
        for (mod, name), obj in originals.items():
            if id(obj) not in wrapped:
                wrapped[id(obj)] = self._wrap(obj)
            setattr(mod, name, wrapped[id(obj)])
        self.installed = originals

    def uninstall(self):
        for (mod, name), obj in self.installed.items():
            setattr(mod, name, obj)

    def _wrap(self, dispatcher):
        name, fn = dispatcher.py_func.__name__, dispatcher.py_func
        if name == "hull_climb":
            return self._climb
        calls = self.calls

        def counted(*args):
            calls[name] += 1
            return fn(*args)
        return counted

    def _climb(self, V, neighbor_start, neighbors, first, hint, v0, v1, v2):
        """support.hull_climb's walk, counting its moves and neighbour dot products."""
        self.calls["hull_climb"] += 1
        if first < 0:
            return -1, 0.0, 0.0, 0.0
        best = hint if hint >= 0 else first
        best_value = V[best, 0] * v0 + V[best, 1] * v1 + V[best, 2] * v2
        moved = True
        while moved:
            moved = False
            for j in range(neighbor_start[best], neighbor_start[best + 1]):
                i = neighbors[j]
                self.dots += 1
                value = V[i, 0] * v0 + V[i, 1] * v1 + V[i, 2] * v2
                if value > best_value:
                    best, best_value, moved = i, value, True
                    self.moves += 1
        return best, V[best, 0], V[best, 1], V[best, 2]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", nargs="?", type=Path)
    ap.add_argument("--models", type=Path,
                    default=Path(os.environ["AMBF_MODELS"]) if os.environ.get("AMBF_MODELS") else None)
    ap.add_argument("--states", type=int, default=20)
    args = ap.parse_args(argv)
    path = args.file or args.models / "robots/blender-pr2.yaml"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Model.from_files([path])
    data = model.create_data()
    names = list(model.joint_names)
    states = random_positions(model, np.random.default_rng(36), args.states)
    pairs = np.ascontiguousarray(model.pairs, dtype=np.int64)
    H = model.hulls.arrays()
    kinds = [kind_of(model, a, b) for a, b in pairs.tolist()]
    verts = np.diff(model.hulls.vertex_start)
    print(f"{path.name}: {len(pairs)} pairs, {len(verts)} hulls, vertices per hull: mean "
          f"{verts.mean():.0f}, max {verts.max()}, neighbours per vertex "
          f"{len(model.hulls.neighbors) / verts.sum():.1f}")

    # -- times
    whole, loop = [], []
    per_pair = np.zeros((len(states), len(pairs)))
    out = np.zeros(len(pairs))
    one = np.zeros(1)
    for r, q in enumerate(states):
        for rep in range(2):   # the first of each is a warm-up
            data.exact[:] = False
            model.set_joint_positions(data, names, q)
            t0 = time.perf_counter()
            model.evaluate(data)
            t1 = time.perf_counter()
            _time_pairs(*data.world.arrays(), *H, pairs, 1, out)
            t2 = time.perf_counter()
        whole.append(t1 - t0)
        loop.append(t2 - t1)
        for p in range(len(pairs)):
            t0 = time.perf_counter()
            _time_pairs(*data.world.arrays(), *H, pairs[p:p + 1], 50, one)
            per_pair[r, p] = (time.perf_counter() - t0) / 50
    print(f"evaluate, every pair computed: {1e6 * np.median(whole):.1f} us; the pairs' kernels alone "
          f"in one compiled loop: {1e6 * np.median(loop):.1f} us; sum of per-pair medians "
          f"{1e6 * np.median(per_pair, axis=0).sum():.1f} us (includes ~0.1 us call overhead each / 50)")

    # -- counts
    boundable = model.pair_distance.pair_table["boundable"]
    counts = Counts()
    by_kind = collections.defaultdict(lambda: collections.Counter())
    counts.install()
    try:
        for q in states[:max(2, args.states // 4)]:
            model.set_joint_positions(data, names, q)
            model.evaluate(data)
            W = World(*data.world.arrays())
            p1, p2, n = np.empty(3), np.empty(3), np.empty(3)
            for p, (k1, k2) in enumerate(pairs.tolist()):
                if not boundable[p]:   # closed forms (PairDistance: not a GJK/EPA pair)
                    by_kind[kinds[p]]["closed form"] += 1
                    by_kind[kinds[p]]["n"] += 1
                    continue
                counts.calls.clear()
                counts.moves = counts.dots = 0
                gjk.convex_distance(W, H, k1, k2, p1, p2, n)
                c = by_kind[kinds[p]]
                c["n"] += 1
                c["gjk iterations"] += counts.calls["closest_on_simplex"]
                c["supports"] += counts.calls["core_support"]
                c["climbs"] += counts.calls["hull_climb"]
                c["moves"] += counts.moves
                c["dots"] += counts.dots
                c["epa"] += counts.calls["epa_penetration"]
    finally:
        counts.uninstall()
    med = np.median(per_pair, axis=0)
    print("| pair kind | pairs | us per pair (p50) | us total | GJK iterations | support calls | "
          "climbs | climb moves | neighbour dots | EPA share |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for kind in sorted(set(kinds), key=lambda k: -med[[i for i, x in enumerate(kinds) if x == k]].sum()):
        idx = [i for i, x in enumerate(kinds) if x == kind]
        c = by_kind[kind]
        m = max(c["n"] - c["closed form"], 1)
        print(f"| {kind} | {len(idx)} | {1e6 * np.median(med[idx]):.2f} | {1e6 * med[idx].sum():.1f} | "
              f"{c['gjk iterations'] / m:.1f} | {c['supports'] / m:.1f} | {c['climbs'] / m:.1f} | "
              f"{c['moves'] / m:.1f} | {c['dots'] / m:.1f} | {c['epa'] / m:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
