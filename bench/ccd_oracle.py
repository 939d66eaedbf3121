"""Many randomized continuous steps against the dense oracle (issue 38 §4: 100,000 steps).

For each model (the demo arm, the thin instrument ``test/model/adf_models/thin_blade.yaml``):
steps start at a random pose within the joint limits that has a pair within ``--near`` m of
touching (so that steps cross contact boundaries), and move every joint by a random amount of
up to ``--scale`` rad (or m) each way. Each step is checked against the oracle of
``test/motion_oracle.py`` (the ordinary evaluation at ``n + 1`` sub-steps, then bisection of the
first sign change to 1e-12), with ``n`` chosen per step so that no shape moves more than
``--margin`` m between two sub-steps (measured on 64 probes of the step): a contact the oracle
can miss is then shallower than the margin. A contact the oracle misses but the motion reports
is checked at its ``s``: within ``MOTION_TOUCH_DISTANCE`` there, or <= 0 at ``s + 1e-6``.

Reported per model: steps, oracle contacts (at s = 0, during the step, swept: apart at both
ends), missed contacts (must be 0), the largest ``|s - s_oracle|``, the contacts reported
earlier than the oracle's (verified) or that the oracle did not see (verified), sub-steps.

Run: ``.venv/bin/python bench/ccd_oracle.py --steps 50000`` (per model; ~12 ms per step).
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "test"))

from motion_oracle import Oracle, sample_count  # noqa: E402
from ambf_collision.geometry.tolerances import MOTION_TIME_TOLERANCE, MOTION_TOUCH_DISTANCE  # noqa: E402
from ambf_collision.model import Model  # noqa: E402

MODELS = {"demo": REPO / "examples" / "demo" / "demo_arm.yaml",
          "thin": REPO / "test" / "model" / "adf_models" / "thin_blade.yaml"}


def limits(model):
    lo = np.array([j.limits[0] if j.limits else -math.pi for j in model.world.joints], float)
    hi = np.array([j.limits[1] if j.limits else math.pi for j in model.world.joints], float)
    lo[~model.kinematics.movable] = hi[~model.kinematics.movable] = 0.0
    return lo, hi


def check(name, steps, scale, near, margin, seed):
    model = Model.from_files([MODELS[name]])
    oracle, data = Oracle(model), model.create_data()
    lo, hi = limits(model)
    rng = np.random.default_rng(seed)
    tally = dict(steps=0, at_start=0, during=0, swept=0, missed=0, early=0, extra=0, substeps=0)
    worst = 0.0
    t0 = time.perf_counter()
    while tally["steps"] < steps:
        q0 = rng.uniform(lo, hi)
        if oracle.distances(q0, q0, 0.0).min() > near:
            continue
        q1 = np.clip(q0 + rng.uniform(-scale, scale, size=q0.shape), lo, hi)
        n = sample_count(oracle.largest_move(q0, q1), 64, margin)
        first, _ = oracle.step(q0, q1, n)
        r = model.evaluate_motion(data, q0, q1)
        tally["steps"] += 1
        tally["substeps"] += n
        if tally["steps"] % 2000 == 0:
            print(f"{name} (so far): {tally} largest |s - s_oracle| {worst:.3g} "
                  f"({time.perf_counter() - t0:.0f} s)", flush=True)
        for p in np.flatnonzero(np.isfinite(first) | r.contact):
            s = r.time[p]
            if math.isfinite(first[p]):
                tally["at_start" if first[p] == 0.0 else "during"] += 1
                if first[p] > 0.0 and r.discrete.distances[p] > 0.0:
                    tally["swept"] += 1
                if not r.contact[p] or s > first[p] + MOTION_TIME_TOLERANCE:
                    tally["missed"] += 1
                    print(f"MISSED {name} q0={q0.tolist()} q1={q1.tolist()} pair {p} "
                          f"oracle {first[p]} motion {s}")
                    continue
                if s >= first[p] - MOTION_TIME_TOLERANCE:
                    worst = max(worst, abs(s - first[p]))
                    continue
            # reported before the oracle saw it: touching at s, or <= 0 within the tolerance
            ok = (oracle.distances(q0, q1, s)[p] <= MOTION_TOUCH_DISTANCE
                  or oracle.distances(q0, q1, min(s + MOTION_TIME_TOLERANCE, 1.0))[p] <= 0.0)
            tally["early" if math.isfinite(first[p]) else "extra"] += 1
            if not ok:
                tally["missed"] += 1
                print(f"WRONG {name} q0={q0.tolist()} q1={q1.tolist()} pair {p} s {s}")
    seconds = time.perf_counter() - t0
    print(f"{name}: {tally} largest |s - s_oracle| {worst:.3g} ({seconds:.0f} s)", flush=True)
    return tally, worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=1000, help="steps per model")
    parser.add_argument("--scale", type=float, default=0.05, help="rad (or m) per joint, each way")
    parser.add_argument("--near", type=float, default=0.02, help="m: a start pose this near")
    parser.add_argument("--margin", type=float, default=2e-4, help="m between two sub-steps")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    args = parser.parse_args()
    missed = 0
    for name in args.models:
        tally, _ = check(name, args.steps, args.scale, args.near, args.margin, args.seed)
        missed += tally["missed"]
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
