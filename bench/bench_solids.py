"""Capsule-vs-solid segment distances: accuracy of the fast path against the bisection reference
(20,000 random cases per kind) and time per call for K = 1, 2, 3, 4, 5, 10, 21, 100, 1000 (1 and 2: the
node's usual near_only call, a box or cylinder near the arm) against the reference
and against coal called per pair from Python (with nearest points), all measured in this run. The fast
path's time is the best of 7 runs (small K is dominated by the per-NumPy-call overhead and the best
run is the least disturbed by other load on the machine). Last, BOX calls of K = 1 .. BOX_SCALAR_ROWS + 1
rows: the row-by-row Python path against the NumPy kernel on the same inputs."""

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from ambf_collision.geometry.shapes import BOX, CONE, CYLINDER, Box, Capsule, Cone, Cylinder  # noqa: E402
from ambf_collision.geometry.solids import segment_solid_distance, segment_solid_distance_bisect  # noqa: E402
from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix  # noqa: E402

NAMES = {BOX: "box", CYLINDER: "cylinder", CONE: "cone"}


def cases(kind, K, rng):
    c = rng.normal(size=(K, 3))
    R = quat_to_matrix(rng.normal(size=(K, 4)))
    h = rng.uniform(0.05, 1, (K, 3))
    if kind != BOX:
        h[:, 1] = h[:, 0]
    return rng.normal(size=(K, 3)) * 1.5 + c, rng.normal(size=(K, 3)) * 1.5 + c, c, R, h


def per_call(f, n, runs=1):
    f()
    best = float("inf")
    for _ in range(runs):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best


def main():
    rng = np.random.default_rng(0)
    print("accuracy vs bisection reference (20000 cases per kind)")
    for kind in NAMES:
        a, b, c, R, h = cases(kind, 20000, rng)
        d0 = segment_solid_distance_bisect(kind, a, b, c, R, h, None, None)[0]
        d1 = segment_solid_distance(kind, a, b, c, R, h, None, None)[0]
        print(f"  {NAMES[kind]:9s} max|d_new - d_ref| = {np.max(np.abs(d1 - d0)):.2e} m  "
              f"(separated {np.sum(d0 > 0)})")
    try:
        from ambf_collision.geometry.coal_bridge import solid_pair_distance
    except ImportError:
        solid_pair_distance = None
    print("time per call (us): new, bisection reference, coal per pair; ratios")
    for K in (1, 2, 3, 4, 5, 10, 21, 100, 1000):
        for kind in NAMES:
            a, b, c, R, h = cases(kind, K, rng)
            n = 20 if K >= 1000 else 100
            tn = per_call(lambda: segment_solid_distance(kind, a, b, c, R, h, None, None), n, 7)
            to = per_call(lambda: segment_solid_distance_bisect(kind, a, b, c, R, h, None, None), max(3, n // 10))
            tc = float("nan")
            if solid_pair_distance is not None:
                sol = [Box(2 * h[k], c[k], matrix_to_quat(R[k])) if kind == BOX else
                       (Cylinder if kind == CYLINDER else Cone)(h[k, 0], 2 * h[k, 2], c[k], matrix_to_quat(R[k]))
                       for k in range(K)]
                caps = [Capsule(a[k], b[k], 0.01) for k in range(K)]
                tc = per_call(lambda: [solid_pair_distance(caps[k], sol[k]) for k in range(K)], 3)
            print(f"  K={K:5d} {NAMES[kind]:9s} new {tn * 1e6:9.1f}  ref {to * 1e6:9.1f}  coal {tc * 1e6:9.1f}"
                  f"   ref/new {to / tn:6.1f}  coal/new {tc / tn:6.2f}")

    box_rows(rng)


def box_rows(rng):
    """BOX calls of a few rows: the row-by-row Python path against the NumPy kernel (the path
    above BOX_SCALAR_ROWS), same inputs, best of 7 runs."""
    from ambf_collision.geometry import solids as sd
    print(f"box, row-by-row path (K <= {sd.BOX_SCALAR_ROWS}) vs NumPy kernel, time per call (us)")
    limit = sd.BOX_SCALAR_ROWS
    for K in range(1, limit + 2):
        a, b, c, R, h = cases(BOX, K, rng)
        t_rows = per_call(lambda: segment_solid_distance(BOX, a, b, c, R, h, None, None), 200, 7)
        sd.BOX_SCALAR_ROWS = 0
        try:
            t_np = per_call(lambda: segment_solid_distance(BOX, a, b, c, R, h, None, None), 200, 7)
        finally:
            sd.BOX_SCALAR_ROWS = limit
        print(f"  K={K}  rows {t_rows * 1e6:6.1f}  numpy {t_np * 1e6:6.1f}  ratio {t_rows / t_np:5.2f}")


if __name__ == "__main__":
    main()
