"""Per-stage cost of one collision_monitor evaluation, in process (issue 6: node compute < 0.5 ms).

Model: examples/demo/demo_arm.yaml with the 256 probes of examples/demo/demo_probes_256.yaml,
driven along the demo joint script (self-contact, floor contact and probe touch phases). Each
cycle times, in microseconds:

  accept            monitor.on_joint_state(names, array('d') positions, stamp, now)
                    (validation + merge of a JointState-like input, as rclpy delivers it)
  monitor step      monitor.step(now): status, set_joint_positions, evaluate(near_only=True),
                    probes, NaN guard,
                    MonitorOutput; split below into its parts, measured again on the same state:
    set_joint_pos.    model.set_joint_positions
    evaluate          model.evaluate(near_only=True): one compiled call (kinematics, shapes to
                      world, pair distances, contact order) and its result object [geometry core]
    probes            the scene's probe evaluator (256 probes)
    monitor rest      monitor.step with evaluate and probes answering from this cycle's results,
                      minus set_joint_pos.: status, NaN guard, MonitorOutput, bookkeeping
  contacts msg      ContactArrayWriter.fill (needs the built workspace: source scripts/activate.sh)
  contacts bytes    ContactArraySerializer.serialize (the CDR bytes the node publishes raw)
  probes msg        ProbeArrayWriter.fill (message objects; rclpy then converts them per field)
  probes bytes      ProbeArraySerializer.serialize (the CDR bytes the node publishes raw)
  markers bytes     build_markers: the serialized MarkerArray (shapes, contacts, probes), on every
                    50th cycle (as the node at 1 kHz with marker_rate 20 Hz; not in the total)
  node callback     CollisionMonitorNode._on_joint_state_raw (the node's raw joint_states callback)
                    end to end on serialized JointState bytes (decode, clock, monitor,
                    conversion, publish with no subscriber), when rclpy is importable

The reference of the same run is the 0.5 ms target of issue 6; the total is
accept + monitor step + the contact and probe conversions the node uses (bytes when available). "outside geometry" removes the geometry-core row.
Issue 14's target: the node's compute per evaluation, the evaluate and probes rows (medians),
under 50 us.

Run: .venv/bin/python bench/bench_node_path.py [--cycles N]
     (with ROS messages: bash -c 'source scripts/activate.sh && python bench/bench_node_path.py')
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from array import array
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
try:  # the built workspace (source scripts/activate.sh) also provides ambf_collision.msg
    import ambf_collision.monitor.scene  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO))

from ambf_collision.monitor.config import MonitorConfig  # noqa: E402
from ambf_collision.monitor.monitor import CollisionMonitor  # noqa: E402
from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array  # noqa: E402

ADF = "examples/demo/demo_arm.yaml"
PROBES = "examples/demo/demo_probes_256.yaml"
TARGET_US = 500.0
COMPUTE_TARGET_US = 50.0  # issue 14: evaluate + probes of the demo arm with 256 probes


def _load_scene():
    """The demo scene as the node builds it (monitor.scene.load_scene)."""
    from ambf_collision.monitor.scene import load_scene

    return load_scene([str(REPO / ADF)], [str(REPO / PROBES)])


def _writers(scene):
    try:
        from ambf_collision.ros.convert import (ContactArraySerializer, ContactArrayWriter,
                                               ProbeArraySerializer, ProbeArrayWriter, stamp_msg)
    except ImportError as err:
        print(f"(message conversion not timed: {err}; source scripts/activate.sh)")
        return None
    ps = scene.probe_set
    args = ("world", ps.names, ps.bodies, scene.model.body_names)
    pw, ser = ProbeArrayWriter(*args), ProbeArraySerializer(*args)
    cw, cser = ContactArrayWriter("world"), ContactArraySerializer("world")
    return (cw, pw, stamp_msg, (ser if ser.matches(pw) else None),
            (cser if cser.matches(cw) else None))


def _inputs(model, cycles):
    names = [n.rsplit("/", 1)[-1] for n in model.joint_names]
    names = [n for n in names if n in JOINT_NAMES]
    order = [JOINT_NAMES.index(n) for n in names]
    return names, [array("d", demo_joint_array(t)[order].tolist())
                   for t in np.linspace(0.0, 16.0, cycles)]


def run_stages(cycles: int):
    scene = _load_scene()
    model = scene.model
    monitor = CollisionMonitor(model, MonitorConfig(), probes=scene.probes)
    writers = _writers(scene)
    names, qs = _inputs(model, cycles)
    data = monitor.data
    rows = {k: [] for k in ("accept", "monitor step", "set_joint_pos.", "evaluate", "probes",
                            "monitor rest",
                            "contacts msg", "contacts bytes", "probes msg", "probes bytes",
                            "markers bytes")}
    marker_cache: dict = {}
    pc = time.perf_counter
    rd = monitor.config.report_distance
    n_contacts = 0
    t_start = 1000.0
    for i, q in enumerate(qs):
        now = t_start + i * 1e-3
        t0 = pc()
        monitor.on_joint_state(names, q, now, now)
        t1 = pc()
        out = monitor.step(now)
        t2 = pc()
        rows["accept"].append(t1 - t0)
        rows["monitor step"].append(t2 - t1)
        n_contacts += len(out.contacts)
        if writers is not None:
            cw, pw, stamp_msg, ser, cser = writers
            st = stamp_msg(out.stamp)
            t0 = pc()
            cw.fill(out, st)
            t1 = pc()
            if cser is not None:
                cser.serialize(out, st)
                rows["contacts bytes"].append(pc() - t1)
            t1 = pc()
            pw.fill(out.status, st, out.probes)
            t2 = pc()
            if ser is not None:
                ser.serialize(out.status, st, out.probes)
            t3 = pc()
            rows["contacts msg"].append(t1 - t0)
            rows["probes msg"].append(t2 - t1)
            if ser is not None:
                rows["probes bytes"].append(t3 - t2)
            if i % 50 == 0:
                from ambf_collision.ros.markers import build_markers

                t0 = pc()
                build_markers(model, out.result, out.probes, "world", st, near=rd,
                              cache=marker_cache)
                rows["markers bytes"].append(pc() - t0)
        # the parts of the step, again on the same state
        m = monitor.merger
        t0 = pc()
        model.set_joint_positions(data, m.joint_names, m.positions)
        t1 = pc()
        r = model.evaluate(data, report_distance=rd, near_only=True)
        t2 = pc()
        probe_result = scene.probes(model, data, r)
        t3 = pc()
        rows["set_joint_pos."].append(t1 - t0)
        rows["evaluate"].append(t2 - t1)
        rows["probes"].append(t3 - t2)
        # the monitor's own overhead: evaluate and probes answer from this cycle's results
        real_probes = monitor.probes
        model.evaluate = lambda *a_, **k_: r
        monitor.probes = lambda *a_: probe_result
        t2 = pc()
        monitor.step(now)
        t3 = pc()
        monitor.probes = real_probes
        del model.evaluate
        rows["monitor rest"].append(t3 - t2)
    a = {k: np.array(v) * 1e6 for k, v in rows.items() if v}
    a["monitor rest"] = a["monitor rest"] - a["set_joint_pos."]
    return a, n_contacts / len(qs)


def node_callback(cycles: int):
    """Times (us) of CollisionMonitorNode._on_joint_state_raw with serialized JointState
    messages (what the node's raw subscription hands it)."""
    try:
        import rclpy
        from rclpy.context import Context
        from rclpy.parameter import Parameter
        from rclpy.serialization import serialize_message
        from sensor_msgs.msg import JointState

        from ambf_collision.ros.node import CollisionMonitorNode
    except ImportError as err:
        print(f"(node callback not timed: {err})")
        return None
    ctx = Context()
    # max_rate high: callbacks run back to back (faster than the default 1 kHz cap once the
    # evaluation is fast), and every one of them must evaluate, not defer to the rate timer
    rclpy.init(context=ctx, args=["--ros-args", "-r", "__ns:=/bench_node_path",
                                  "-p", "heartbeat_rate:=0.5", "-p", "publish_markers:=false",
                                  "-p", "max_rate:=100000.0"])
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        node = CollisionMonitorNode(context=ctx, parameter_overrides=[
            Parameter("adf_files", value=[ADF]), Parameter("probe_files", value=[PROBES])])
    finally:
        os.chdir(cwd)
    try:
        names, qs = _inputs(node.model, cycles)
        msgs = []
        for q in qs:
            js = JointState()
            js.name = names
            js.position = q
            msgs.append(js)
        times = []
        evaluations = node.monitor.evaluations
        for js in msgs:
            ns = node.get_clock().now().nanoseconds
            js.header.stamp.sec, js.header.stamp.nanosec = ns // 10**9, ns % 10**9
            raw = serialize_message(js)
            t0 = time.perf_counter()
            node._on_joint_state_raw(raw)
            times.append(time.perf_counter() - t0)
        if node.monitor.evaluations - evaluations != len(msgs):
            print(f"(node callback: {node.monitor.evaluations - evaluations} evaluations for "
                  f"{len(msgs)} messages)")
        return np.array(times) * 1e6
    finally:
        node.destroy_node()
        rclpy.shutdown(context=ctx)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=2000)
    args = ap.parse_args(argv)
    run_stages(min(200, args.cycles))  # warm-up
    a, contacts = run_stages(args.cycles)
    order = ["accept", "monitor step", "set_joint_pos.", "evaluate", "probes", "monitor rest",
             "contacts msg", "contacts bytes", "probes msg", "probes bytes", "markers bytes"]
    print(f"demo model + 256 probes, {args.cycles} cycles along the demo script, "
          f"{contacts:.2f} contacts per cycle on average")
    print(f"{'stage':<22}{'mean us':>10}{'median us':>11}{'p99 us':>9}")
    for k in order:
        if k not in a:
            continue
        v = a[k]
        indent = "  " if k in order[2:6] else ""
        print(f"{indent + k:<22}{v.mean():10.1f}{np.median(v):11.1f}{np.percentile(v, 99):9.1f}")
    total_keys = ["accept", "monitor step",
                  "contacts bytes" if "contacts bytes" in a else "contacts msg",
                  "probes bytes" if "probes bytes" in a else "probes msg"]
    total = sum(a[k].mean() for k in total_keys if k in a)
    geom = a["evaluate"].mean()
    print(f"{'total (node compute)':<22}{total:10.1f}   = {total / TARGET_US:.2f} x the "
          f"{TARGET_US:.0f} us target")
    print(f"{'outside geometry':<22}{total - geom:10.1f}   = {(total - geom) / TARGET_US:.2f} x "
          f"target (geometry core {geom:.1f} us)")
    evaluate, probes = np.median(a["evaluate"]), np.median(a["probes"])
    met = evaluate + probes < COMPUTE_TARGET_US
    print(f"target evaluate + probes < {COMPUTE_TARGET_US:.0f} us (medians): "
          f"{'MET' if met else 'NOT MET'} ({evaluate:.1f} + {probes:.1f} = {evaluate + probes:.1f} us)")
    cb = node_callback(min(args.cycles, 2000))
    if cb is not None:
        print(f"{'node callback':<22}{cb.mean():10.1f}{np.median(cb):11.1f}"
              f"{np.percentile(cb, 99):9.1f}   = {cb.mean() / TARGET_US:.2f} x target "
              "(incl. clock and publish)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
