"""Geometry benchmark: this project's batched distances vs coal called per pair from Python.

Run: ``python bench/bench_geometry.py [--quick]``. Workloads (seeded, metres):
W1: 40 capsules + 30 spheres + 30 capsules, all pairs but a random 10% (~4,455), with witness
points and normals; W2: 1,000 sphere probes (5 mm) against 40 capsules (40,000 pairs);
W3: 10, 100, 1,000, 10,000 capsule pairs. Prints ns per pair for both, in the same run, and
the ratio. Targets: W1 <= 100 ns/pair and >= 40x faster than coal with witness points;
W3 at 10 pairs < 20 us per call.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ambf_collision.geometry.pairs import PairDistance  # noqa: E402
from ambf_collision.geometry.world_shapes import LinkShapes  # noqa: E402
from ambf_collision.geometry.shapes import Capsule, Sphere  # noqa: E402


def random_capsule(rng, length=(0.05, 0.4), radius=(0.01, 0.08)):
    a = rng.uniform(-0.5, 0.5, 3)
    u = rng.normal(size=3)
    u /= np.linalg.norm(u)
    return Capsule(a, a + rng.uniform(*length) * u, rng.uniform(*radius))


def w1_shapes(rng):
    shapes = [random_capsule(rng) for _ in range(40)]
    shapes += [Sphere(rng.uniform(-0.5, 0.5, 3), rng.uniform(0.01, 0.08)) for _ in range(30)]
    shapes += [random_capsule(rng) for _ in range(30)]
    n = len(shapes)
    pairs = np.array([(i, j) for i in range(n) for j in range(i + 1, n)])
    keep = rng.permutation(len(pairs))[: int(round(0.9 * len(pairs)))]
    return shapes, pairs[np.sort(keep)]


def best_time(fn, repeat, number):
    """Best mean seconds per call over ``repeat`` rounds of ``number`` calls."""
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def ours(shapes, pairs, repeat, number):
    ls = LinkShapes(shapes, np.zeros(len(shapes), dtype=int))
    world = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    pd = PairDistance(ls, pairs)
    pd.compute(world)
    return best_time(lambda: pd.compute(world), repeat, number)


def coal_per_pair(shapes, pairs, repeat, witness=True):
    """Seconds for one pass of coal.distance over all pairs (best of ``repeat``)."""
    import coal
    from ambf_collision.geometry.coal_bridge import to_coal

    objs = [to_coal(s) for s in shapes]
    req = coal.DistanceRequest()
    # coal 3 always computes nearest points (enable_nearest_points is deprecated); the
    # witness variant additionally reads them and the normal back into Python.
    req.enable_signed_distance = True
    res = coal.DistanceResult()
    items = [(objs[i][0], objs[i][1], objs[j][0], objs[j][1]) for i, j in pairs]

    def run():
        for g1, t1, g2, t2 in items:
            res.clear()
            coal.distance(g1, t1, g2, t2, req, res)
            if witness:
                res.getNearestPoint1(), res.getNearestPoint2(), res.normal

    return best_time(run, repeat, 1)


def report(name, shapes, pairs, repeat, number, coal_repeat):
    P = len(pairs)
    t_ours = ours(shapes, pairs, repeat, number)
    t_coal = coal_per_pair(shapes, pairs, coal_repeat)
    t_coal_nw = coal_per_pair(shapes, pairs, coal_repeat, witness=False)
    ns, ns_c, ns_cn = (1e9 * t / P for t in (t_ours, t_coal, t_coal_nw))
    print(f"{name:28s} pairs {P:6d}  ours {ns:8.1f} ns/pair ({1e6 * t_ours:9.1f} us/call)  "
          f"coal+witness {ns_c:8.1f} ns/pair (x{ns_c / ns:6.1f})  coal {ns_cn:8.1f} (x{ns_cn / ns:6.1f})")
    return ns, ns_c, t_ours


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer repetitions")
    a = ap.parse_args(argv)
    repeat, coal_repeat = (3, 1) if a.quick else (7, 3)
    rng = np.random.default_rng(20260101)

    shapes, pairs = w1_shapes(rng)
    ns1, nsc1, _ = report("W1 capsules+spheres", shapes, pairs, repeat, 50 if a.quick else 300, coal_repeat)

    caps = [random_capsule(rng) for _ in range(40)]
    probes = [Sphere(rng.uniform(-0.5, 0.5, 3), 0.005) for _ in range(1000)]
    pairs2 = np.array([(40 + p, c) for p in range(1000) for c in range(40)])
    report("W2 1000 probes x 40 caps", caps + probes, pairs2, repeat, 5 if a.quick else 30,
           1 if a.quick else 2)

    t10 = None
    for n in (10, 100, 1000, 10000):
        shapes3 = [random_capsule(rng) for _ in range(2 * n)]
        pairs3 = np.arange(2 * n).reshape(n, 2)
        number = max(3, 200000 // n) if not a.quick else max(2, 20000 // n)
        _, _, t = report(f"W3 {n} capsule pairs", shapes3, pairs3, repeat, number,
                         1 if n >= 1000 else coal_repeat)
        if n == 10:
            t10 = t
    ok1 = ns1 <= 100.0
    ok2 = nsc1 / ns1 >= 40.0
    ok3 = t10 < 20e-6
    print(f"target W1 <= 100 ns/pair: {'MET' if ok1 else 'NOT MET'} ({ns1:.1f})")
    print(f"target W1 >= 40x coal with witness: {'MET' if ok2 else 'NOT MET'} (x{nsc1 / ns1:.1f})")
    print(f"target W3 10 pairs < 20 us/call: {'MET' if ok3 else 'NOT MET'} ({1e6 * t10:.1f} us)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
