"""Cost of a continuous step (``Model.evaluate_motion``) against the discrete evaluation, on the
demo arm, in the same run (issue 38 §5).

Workloads (the joint positions change at every evaluation):

- ``script 1 kHz`` / ``script 100 Hz``: the demo's joint script (``demo/trajectory.py``: free
  motion, self contact, floor contact, table probe; joint speeds up to ~1.5 rad/s) sampled every
  1 ms / 10 ms, over its whole 16 s period;
- ``contact 1 kHz`` / ``contact 100 Hz``: at the table-probe contact pose, every joint
  oscillating by 0.05 rad at 1 Hz (about 0.3 rad/s; the fingertip presses 2 mm in and out).

Each cycle of the discrete run is ``set_joint_positions`` + ``evaluate(near_only=True)`` (what
the node runs); each cycle of the continuous run is the same ``set_joint_positions`` +
``evaluate_motion(data, q_previous, data.q, near_only=True)``. The two runs alternate in
rounds and the median round is kept (the machine is shared). Reported: µs per cycle of each,
the ratio (targets: <= 2 at 1 kHz, <= 4 at 100 Hz), the mean number of exact distance samples
per step, the swept contacts seen.

Run: ``.venv/bin/python bench/bench_motion.py [--rounds 7]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array  # noqa: E402
from ambf_collision.model import Model  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
PROBE = np.array([0.0, 0.6738, 1.4358, 1.0320])


def workloads():
    """``{name: (T, 4) joint positions}``."""
    out = {}
    for rate in (1000, 100):
        t = np.arange(0.0, PERIOD, 1.0 / rate)
        out[f"script {rate // 1000 or rate} {'kHz' if rate == 1000 else 'Hz'}"] = np.array(
            [demo_joint_array(x) for x in t])
        out[f"contact {rate // 1000 or rate} {'kHz' if rate == 1000 else 'Hz'}"] = (
            PROBE + 0.05 * np.sin(2.0 * np.pi * t[:, None] + np.arange(4)))
    return out


def run(model, names, qs, motion: bool, stats: bool = False):
    """µs per cycle over ``qs`` (``stats``: also the mean samples per step and the swept
    contacts, counted outside the timed runs)."""
    data = model.create_data()
    model.set_joint_positions(data, names, qs[0])
    model.evaluate(data, near_only=True)
    samples = swept = 0
    t0 = time.perf_counter()
    if motion:
        for q in qs[1:]:
            previous = data.q.copy()
            model.set_joint_positions(data, names, q)
            r = model.evaluate_motion(data, previous, data.q, near_only=True)
            if stats:
                samples += int(r.samples.sum())
                swept += int(r.swept.sum())
    else:
        for q in qs[1:]:
            model.set_joint_positions(data, names, q)
            model.evaluate(data, near_only=True)
    us = (time.perf_counter() - t0) / (len(qs) - 1) * 1e6
    return us, samples / (len(qs) - 1), swept


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    model = Model.from_files([REPO / "examples" / "demo" / "demo_arm.yaml"])
    names = list(JOINT_NAMES)
    loads = workloads()
    for qs in loads.values():   # compile and warm
        run(model, names, qs[:50], False)
        run(model, names, qs[:50], True)
    print(f"{'workload':<16} {'steps':>6} {'discrete us':>12} {'motion us':>10} {'ratio':>6} "
          f"{'samples/step':>13} {'swept':>6}")
    for name, qs in loads.items():
        disc, mot = [], []
        for _ in range(args.rounds):
            disc.append(run(model, names, qs, False)[0])
            mot.append(run(model, names, qs, True)[0])
        samples, swept = run(model, names, qs, True, stats=True)[1:]
        d, m = statistics.median(disc), statistics.median(mot)
        print(f"{name:<16} {len(qs) - 1:>6} {d:>12.2f} {m:>10.2f} {m / d:>6.2f} {samples:>13.3f} "
              f"{swept:>6}")


if __name__ == "__main__":
    main()
