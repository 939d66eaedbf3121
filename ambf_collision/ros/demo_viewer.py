"""The ``demo_viewer`` executable: the demo's output when RViz is not available.

Listens to the collision_monitor's ``~/contacts`` and ``~/probes`` and to ``joint_states``, and

* prints the compact live view (:mod:`ambf_collision.demo.live_view`) every ``--period`` seconds: in
  place on a terminal, as plain appended blocks otherwise (CI logs, pipes);
* writes a PNG picture of the scene (:mod:`ambf_collision.demo.scene_render`) to
  ``<output-dir>/demo_scene.png`` every ``--png-period`` seconds and at the end, using the model
  loaded from the same parameter file as the node and the latest joint state; the first frame
  with a penetrating contact *and* a touching probe is also kept as ``demo_scene_contact.png``.

Stops cleanly on SIGINT, SIGTERM or after ``--duration`` seconds (0: until stopped); exit 0.
Bad parameter or model files: a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import yaml

__all__ = ["main", "load_node_parameters", "output_from_messages"]


def load_node_parameters(path, node_name="collision_monitor") -> dict:
    """The ``ros__parameters`` of ``node_name`` (or ``/**``) in a ROS 2 parameter file."""
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as err:
        raise ValueError(f"{path}: cannot read parameter file: {err}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{path}: not a ROS 2 parameter file (top level must be a mapping)")
    for key in (node_name, "/" + node_name, "/**"):
        entry = doc.get(key)
        if isinstance(entry, dict):
            params = entry.get("ros__parameters")
            if not isinstance(params, dict):
                raise ValueError(f"{path}: entry '{key}': missing key 'ros__parameters'")
            return params
    raise ValueError(f"{path}: no entry '{node_name}' or '/**' with 'ros__parameters'")


def _vec(v):
    return np.array([v.x, v.y, v.z], dtype=float)


def output_from_messages(contacts_msg, probes_msg, now: float, rate: float,
                         compute_time: float = 0.0):
    """A :class:`ambf_collision.monitor.MonitorOutput` rebuilt from the published messages (for
    the live view and the picture): distances in m, forces in N, world frame."""
    from ambf_collision.model.contact_rows import contact_row, contact_row_width
    from ambf_collision.monitor.monitor import STATUS_NAMES, MonitorOutput

    cs = contacts_msg.contacts
    info = [(c.body_1, c.body_2, c.shape_1, c.shape_2) for c in cs]
    rows = (np.array([contact_row(c.distance, _vec(c.point_1), _vec(c.point_2), _vec(c.position),
                                  _vec(c.normal), c.jacobian, c.distance_rate,
                                  _vec(c.point_1_local), _vec(c.point_2_local)) for c in cs])
            if cs else np.zeros((0, contact_row_width(len(contacts_msg.joint_names)))))
    probes = None
    if probes_msg is not None and len(probes_msg.probes):
        ps = probes_msg.probes
        names = [p.name for p in ps]
        force = np.array([_vec(p.force) for p in ps]).reshape(-1, 3)
        in_contact = np.array([p.in_contact for p in ps], dtype=bool)
        patch_names = list(dict.fromkeys(n.split("/", 1)[0] for n in names if "/" in n))
        pf = np.zeros((len(patch_names), 3))
        pin = np.zeros(len(patch_names), dtype=int)
        for j, pn in enumerate(patch_names):
            sel = np.array([n.startswith(pn + "/") for n in names])
            pf[j] = force[sel].sum(axis=0)
            pin[j] = int(np.count_nonzero(in_contact & sel))
        probes = SimpleNamespace(
            names=names, body=[p.body for p in ps], position=np.array([_vec(p.position) for p in ps]),
            normal=np.array([_vec(p.normal) for p in ps]), in_contact=in_contact,
            depth=np.array([p.depth for p in ps]), area=np.array([p.area for p in ps]), force=force,
            contact_normal=np.array([_vec(p.contact_normal) for p in ps]),
            distance=np.array([p.distance for p in ps]), patch_names=patch_names, patch_force=pf,
            patch_in_contact=pin, patch_area=np.zeros(len(patch_names)))
    status = int(contacts_msg.status)
    return MonitorOutput(
        stamp=contacts_msg.header.stamp.sec + 1e-9 * contacts_msg.header.stamp.nanosec,
        status=status, reason="" if status == 0 else STATUS_NAMES.get(status, "").lower(),
        min_distance=float(contacts_msg.min_distance), pairs_checked=int(contacts_msg.pairs_checked),
        contact_info=info, contact_rows=rows, probes=probes, evaluated=status in (0, 2, 3), time=now,
        evaluation_rate=rate, compute_time=compute_time)


def diagnostics_values(msg, node_name="collision_monitor") -> dict:
    """``{key: value}`` of the node's status in a diagnostic_msgs/DiagnosticArray ({} if absent)."""
    for st in msg.status:
        if st.name.split(":", 1)[0].strip("/").endswith(node_name):
            return {kv.key: kv.value for kv in st.values}
    return {}


def _float(text, default=0.0) -> float:
    try:
        x = float(text)
    except (TypeError, ValueError):
        return default
    return x if math.isfinite(x) else default


class _Scene:
    """The model of the parameter file, posed by the latest joint state, for the PNG picture."""

    def __init__(self, params: dict):
        from ambf_collision.monitor.scene import load_scene
        from ambf_collision.ros.paths import resolve_package_path

        files = [p for p in params.get("adf_files", []) if p]
        if not files:
            raise ValueError("parameter file names no 'adf_files'")
        self.model = load_scene(files, resolve=resolve_package_path).model
        self.data = self.model.create_data()
        self.report_distance = float(params.get("report_distance", 0.05))
        self.names, self.positions = [], []

    def set_joints(self, names, positions):
        self.names, self.positions = list(names), list(positions)

    def render(self, path, out) -> bool:
        """Write the PNG; False (with the reason printed once) when scene_render is missing."""
        try:
            from ambf_collision.demo.scene_render import render_scene_png
        except ImportError as err:
            print(f"demo_viewer: no PNG ({err})", file=sys.stderr)
            return False
        if self.names:
            self.model.set_joint_positions(self.data, self.names, self.positions)
        result = self.model.evaluate(self.data, report_distance=self.report_distance)
        tmp = Path(str(path) + ".tmp.png")
        render_scene_png(str(tmp), self.model, result, out.probes, time=out.time,
                         report_distance=self.report_distance)
        os.replace(tmp, path)
        return True


def _parse(argv):
    ap = argparse.ArgumentParser(prog="demo_viewer", description=__doc__.splitlines()[0])
    ap.add_argument("--params-file", default="config/demo.yaml")
    ap.add_argument("--node-name", default="collision_monitor")
    ap.add_argument("--output-dir", default="demo_output")
    ap.add_argument("--duration", type=float, default=0.0, help="s; 0 = until stopped")
    ap.add_argument("--period", type=float, default=0.5, help="s between live-view refreshes")
    ap.add_argument("--png-period", type=float, default=2.0, help="s between PNG writes")
    ap.add_argument("--ansi", choices=("auto", "on", "off"), default="auto",
                    help="redraw in place (auto: when stdout is a terminal)")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    import signal

    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.signals import SignalHandlerOptions
    from diagnostic_msgs.msg import DiagnosticArray
    from sensor_msgs.msg import JointState

    from ambf_collision.demo.live_view import LiveView
    from ambf_collision.msg import ContactArray, ProbeArray

    args_all = list(sys.argv[1:] if argv is None else argv)
    ros_args = []
    if "--ros-args" in args_all:
        i = args_all.index("--ros-args")
        args_all, ros_args = args_all[:i], args_all[i:]
    args = _parse(args_all)
    try:
        params = load_node_parameters(args.params_file, args.node_name)
        scene = _Scene(params)
    except (ValueError, OSError) as err:  # AdfError / ShapeError / bad parameter file
        print(f"demo_viewer: {err}", file=sys.stderr)
        return 2
    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ansi = sys.stdout.isatty() if args.ansi == "auto" else args.ansi == "on"
    view = LiveView(period=args.period, ansi=ansi)

    # SIGINT/SIGTERM only ask the loop below to stop (as ``run.run_node`` does): rclpy's own
    # handlers would shut the context down, and a signal during start-up would then make the
    # next create_subscription raise.
    rclpy.init(args=["demo_viewer"] + ros_args, signal_handler_options=SignalHandlerOptions.NO)
    stop = []
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda number, frame: stop.append(number))
    node = rclpy.create_node("demo_viewer")
    state = SimpleNamespace(contacts=None, probes=None, count=0, t_rate=time.monotonic(), n_rate=0,
                            rate=0.0, compute=0.0, min_seen=math.inf, png=0, contact_png=False, last_png=-math.inf,
                            png_ok=True, renderer=None)
    ns = "/" + args.node_name.strip("/")

    def on_contacts(msg):
        state.contacts = msg
        state.count += 1
        state.n_rate += 1
        if msg.status in (0, 2, 3) and math.isfinite(msg.min_distance):
            state.min_seen = min(state.min_seen, msg.min_distance)

    node.create_subscription(ContactArray, ns + "/contacts", on_contacts, 50)
    node.create_subscription(ProbeArray, ns + "/probes", lambda m: setattr(state, "probes", m), 50)

    def on_diagnostics(msg):
        values = diagnostics_values(msg, args.node_name)
        if values:
            state.compute = 1e-3 * _float(values.get("compute_time_ms"))

    node.create_subscription(DiagnosticArray, "/diagnostics", on_diagnostics, 10)
    node.create_subscription(JointState, "joint_states",
                             lambda m: scene.set_joints(m.name, m.position), qos_profile_sensor_data)

    def render(name, out):
        try:
            state.png_ok = scene.render(out_dir / name, out)
        except Exception as err:  # never let the picture stop the demo
            print(f"demo_viewer: PNG failed: {type(err).__name__}: {err}", file=sys.stderr)
            state.png_ok = False
            return
        if state.png_ok:
            state.png += 1

    def write_png(name="demo_scene.png", wait=False):
        """Render in a worker thread (one at a time; skipped while one runs), so that the
        subscriptions keep being served while matplotlib draws; ``wait``: render here."""
        if not state.png_ok or state.contacts is None:
            return
        out = output_from_messages(state.contacts, state.probes, time.monotonic() - t_start, state.rate,
                                   state.compute)
        if state.renderer is not None and state.renderer.is_alive():
            if not wait:
                return
            state.renderer.join()
        if wait:
            render(name, out)
        else:
            state.renderer = threading.Thread(target=render, args=(name, out), daemon=True)
            state.renderer.start()

    def tick():
        now = time.monotonic()
        if now - state.t_rate >= 1.0:
            state.rate, state.n_rate, state.t_rate = state.n_rate / (now - state.t_rate), 0, now
        if state.contacts is None:
            return
        out = output_from_messages(state.contacts, state.probes, now - t_start, state.rate,
                                   state.compute)
        text = view.update(out, now)
        if text is not None:
            print(text, flush=True)
        touching = out.probes is not None and bool(np.any(out.probes.in_contact))
        if not state.contact_png and out.min_distance < 0 and touching:
            write_png("demo_scene_contact.png")
            state.contact_png = True
        if now - state.last_png >= args.png_period:
            state.last_png = now
            write_png()

    t_start = time.monotonic()
    node.create_timer(min(0.1, args.period), tick)
    print(f"demo_viewer: listening to {ns}/contacts and {ns}/probes "
          f"(domain {os.environ.get('ROS_DOMAIN_ID', '0')}); PNG in {out_dir}/", flush=True)
    try:  # a signal only sets ``stop``: nothing here raises KeyboardInterrupt or shuts the context
        while not stop and (args.duration <= 0 or time.monotonic() - t_start < args.duration):
            rclpy.spin_once(node, timeout_sec=0.1)
    finally:
        write_png(wait=True)
        node.destroy_node()
        rclpy.try_shutdown()
    seen = f"{state.min_seen * 1e3:+.1f} mm" if math.isfinite(state.min_seen) else "none"
    print(f"demo_viewer: {state.count} contact messages, smallest distance seen {seen}, "
          f"{state.png} PNG write(s) to {out_dir}/demo_scene.png", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
