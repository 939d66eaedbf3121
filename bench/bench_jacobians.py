#!/usr/bin/env python3
"""What the controller outputs (issue 13) cost per evaluation of the demo arm.

Along one period of the demo trajectory (``--poses`` evenly spaced poses, joint velocities
given), per pose:

- ``evaluate``: ``Model.evaluate(near_only=True, report_distance)`` as the node calls it
  (kinematics, shapes, pairs, contact order, and the Jacobians, rates and body-frame points of
  the reported contacts), in microseconds;
- ``jacobians``: the contact rows alone (``jacobians.write_contact_rows``: world vectors,
  Jacobians, rates, local points; the same compiled function, called in a loop from a small
  njit wrapper here for the contacts of that pose), so ``evaluate - jacobians`` is the
  evaluation without them;
- node side: the monitor's NaN guard of the rows (``monitor/sanitize.finite_contacts``) and the
  serializer's added bytes (``ContactArraySerializer.serialize`` with vs without the Jacobians,
  rates, local points and joint names), when rclpy and the built messages are importable.

Reported for the node's report distance (0.05 m) and with every pair reported (a worst case:
``report_distance`` +inf). Issue 13's target: the outputs add at most 20 % to node compute.

    python3 bench/bench_jacobians.py [--poses 200] [--repeats 200]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from numba import njit

REPO = Path(__file__).resolve().parents[1]
try:  # the installed package (with its messages) when the workspace is sourced
    import ambf_collision  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO))

from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array  # noqa: E402
from ambf_collision.model import Model  # noqa: E402
from ambf_collision.model.evaluate_kernel import data_tables, model_tables  # noqa: E402
from ambf_collision.model.contact_rows import GEOMETRY_VALUES, contact_row_width  # noqa: E402
from ambf_collision.model.jacobians import write_contact_rows  # noqa: E402


@njit(cache=False)
def _jacobians_only(model, data, n, repeats):
    """``repeats`` calls of the evaluate kernel's contact rows for the first ``n`` contacts."""
    K, link, C, H, pair_bodies, _environment = model_tables(model)
    D, velocity, W, R, contact_index, rows, moved = data_tables(data)
    for _ in range(repeats):
        write_contact_rows(K, D, velocity, pair_bodies, R, contact_index, n, rows)
    return n


def _per_call(fn, repeats: int) -> float:
    """Best of 3 means of ``repeats`` calls (s)."""
    best = math.inf
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(repeats):
            fn()
        best = min(best, (time.perf_counter() - t0) / repeats)
    return best


def measure(model, report: float, poses: int, repeats: int) -> dict:
    data = model.create_data()
    rng = np.random.default_rng(0)
    velocity = rng.uniform(-1.0, 1.0, len(JOINT_NAMES))
    model.set_joint_velocities(data, JOINT_NAMES, velocity)
    _jacobians_only(model.buffer, data.buffer, 0, 1)  # compile
    ev, jac, counts = [], [], []
    for t in np.linspace(0.0, PERIOD, poses, endpoint=False):
        model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(t))
        r = model.evaluate(data, report_distance=report, near_only=True)
        n = len(r.contact_index)
        ev.append(_per_call(lambda: model.evaluate(data, report_distance=report, near_only=True),
                            repeats))
        t0 = time.perf_counter()
        _jacobians_only(model.buffer, data.buffer, n, repeats * 10)
        jac.append((time.perf_counter() - t0) / (repeats * 10))
        counts.append(n)
    ev, jac = np.array(ev), np.array(jac)
    return {"evaluate_us": 1e6 * ev.mean(), "jacobians_us": 1e6 * jac.mean(),
            "contacts_mean": float(np.mean(counts)), "contacts_max": int(np.max(counts)),
            "share": float(jac.sum() / (ev.sum() - jac.sum()))}


def node_side(model, repeats: int):
    """(monitor guard us, serializer with outputs us, without us, contacts) for 3 contacts, or
    None without rclpy and the built messages."""
    try:
        from ambf_collision.monitor.sanitize import finite_contacts
        from ambf_collision.ros.convert import ContactArraySerializer, stamp_msg
    except ImportError:
        return None
    data = model.create_data()
    model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(3.9))  # self-contact hold
    r = model.evaluate(data, report_distance=0.1, near_only=True)
    info, rows = r.contact_info[:3], r.contact_rows[:3]
    n = len(info)
    guard = _per_call(lambda: finite_contacts(info, rows), repeats)
    common = dict(status=0, min_distance=r.min_distance, pairs_checked=r.pairs_checked,
                  contact_info=info)
    with_out = SimpleNamespace(**common, contact_rows=rows, joint_names=model.joint_names,
                               velocities_given=True)
    bare = np.zeros((n, contact_row_width(0)))  # the geometry only: no Jacobian, zeros after
    bare[:, :GEOMETRY_VALUES] = rows[:, :GEOMETRY_VALUES]
    without = SimpleNamespace(**common, contact_rows=bare, joint_names=[], velocities_given=False)
    s, st = ContactArraySerializer("world"), stamp_msg(1.0)
    return (1e6 * guard, 1e6 * _per_call(lambda: s.serialize(with_out, st), repeats),
            1e6 * _per_call(lambda: s.serialize(without, st), repeats), n)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--poses", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=200)
    args = ap.parse_args(argv)
    model = Model.from_files([str(REPO / "examples" / "demo" / "demo_arm.yaml")])
    print(f"demo arm: {len(model.joint_names)} joints, {len(model.pairs)} pairs; "
          f"{args.poses} poses of the demo trajectory, velocities given")
    for label, report in (("report 0.05 m (node default)", 0.05), ("every pair reported", math.inf)):
        m = measure(model, report, args.poses, args.repeats)
        print(f"  {label:<30} evaluate {m['evaluate_us']:7.2f} us, of which the contact rows "
              f"(Jacobians, rates, local points) {m['jacobians_us']:6.3f} us ({m['contacts_mean']:.2f} contacts mean, "
              f"{m['contacts_max']} max): +{100 * m['share']:.1f} % over the evaluation without")
    ns = node_side(model, args.repeats * 5)
    if ns is None:
        print("  node side: rclpy / built messages not importable (run with the workspace sourced)")
    else:
        guard, with_out, without, n = ns
        print(f"  node side, {n} contacts: monitor NaN guard {guard:.2f} us; ContactArray serializer "
              f"{with_out:.2f} us with the outputs, {without:.2f} us without (+{with_out - without:.2f} us)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
