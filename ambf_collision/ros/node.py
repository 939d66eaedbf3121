"""The ``collision_monitor`` ROS 2 node: a thin adapter over ``monitor.CollisionMonitor``.

Messages in -> monitor calls -> messages out. All decisions (merging, validation, status,
staleness, rate cap, warning throttle, no NaN) live in ``ambf_collision/monitor``; this module
converts messages and clocks, looks up root transforms (``ros/tf.py``) and publishes.

Topics (relative names are remappable and take the node's namespace; ``~`` is the node's name):

- in: ``joint_state_topics`` (default ``joint_states``; sensor_msgs/JointState, sensor-data
  QoS; several publishers and topics with partial joint sets merge); ``/tf``, ``/tf_static``
  (only for ``root_frames``); ``/clock`` with ``use_sim_time``.
- out: ``~/contacts`` (ContactArray) on every evaluation and at ``heartbeat_rate`` when no joint
  state arrives; ``~/probes`` (ProbeArray) with it when probe files are given; ``~/markers``
  (visualization_msgs/MarkerArray) at ``marker_rate`` only while someone subscribes;
  ``/diagnostics`` (diagnostic_msgs/DiagnosticArray) every ``diagnostics_period``.
- services: ``~/enable`` (std_srvs/SetBool), ``~/reload`` (std_srvs/Trigger).

Parameters: ``ros/node_parameters.py`` (each one documented in ``config/collision_monitor.yaml``).
Times in seconds on the node's clock (ROS time, or sim time with ``use_sim_time``); when that
clock jumps back (a bag loop, a simulator reset) everything that depends on time is reset and
the node publishes again at once.
"""

from __future__ import annotations

import math
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import JumpThreshold
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from ambf_collision.monitor.config import MonitorConfig
from ambf_collision.monitor.monitor import CollisionMonitor
from ambf_collision.monitor.scene import load_scene
from ambf_collision.msg import ContactArray, ProbeArray
from ambf_collision.ros.convert import (ContactArraySerializer, ContactArrayWriter,
                                       JointStateDecoder, ProbeArraySerializer, ProbeArrayWriter,
                                       Stamp, stamp_msg)
from ambf_collision.ros.diagnostics import closure_summary, diagnostic_report, milliseconds
from ambf_collision.ros.node_parameters import MONITOR_KEYS, PARAMETERS
from ambf_collision.ros.parameters import ConfigError, declare_parameters, on_set_parameters
from ambf_collision.ros.paths import resolve_package_path
from ambf_collision.ros.run import run_node
from ambf_collision.ros.tf import TfSource

__all__ = ["PARAMETERS", "CollisionMonitorNode", "ConfigError", "main"]

NO_ADF = "no ADF file given (parameter adf_files): nothing is monitored"


class CollisionMonitorNode(Node):
    """Evaluates the ADF collision model for every joint state and publishes the results."""

    def __init__(self, **kwargs):
        super().__init__("collision_monitor", **kwargs)
        p = declare_parameters(self, PARAMETERS)
        self.params = p
        self.world_frame = p["world_frame"]
        self.root_frames = p["root_frames"] if any(p["root_frames"]) else []
        self._check_lists(p)
        self.config = MonitorConfig(**{k: p[k] for k in MONITOR_KEYS})
        self.publish_markers = p["publish_markers"]
        self.marker_rate = p["marker_rate"]

        # the node's clock is the system clock unless ROS time (use_sim_time) is active: told
        # by the clock's own jump callback, which also reports jumps back (see _on_clock_jump)
        clock = self.get_clock()
        self._ros_time_active = clock.ros_time_is_active
        self._clock_jumps = clock.create_jump_callback(
            JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1),
                          on_clock_change=True), post_callback=self._on_clock_jump)

        self.tf = TfSource(self, p["transform_tolerance"],
                           force_fallback=p["tf_backend"] == "fallback")
        self._root_poses = [None] * len(self.root_frames) if self.root_frames else None
        self._tf_reason = ""
        self._stamp_pair = (None, None, 0, 0)  # (float stamp, Time or None, sec, nanosec)
        self._joint_state_decoder = JointStateDecoder()
        self._last_marker = -math.inf
        self.markers_published = 0
        self._stats = _CycleStats()
        self._last_out = None

        self._install_scene(self._load_scene(), previous=None)

        self.contacts_pub = self.create_publisher(ContactArray, "~/contacts", 10)
        self.probes_pub = self.create_publisher(ProbeArray, "~/probes", 10)
        from visualization_msgs.msg import MarkerArray

        self.markers_pub = self.create_publisher(MarkerArray, "~/markers", 1)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # raw: the serialized JointState is decoded here (names, positions, stamp only), which
        # costs a fraction of rclpy's conversion into a Python message
        self.joint_state_subs = [
            self.create_subscription(JointState, topic,
                                     lambda data, source=i: self._on_joint_state_raw(data, source),
                                     qos_profile_sensor_data, raw=True)
            for i, topic in enumerate(p["joint_state_topics"])]
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/reload", self._on_reload)
        self.heartbeat_timer = self.create_timer(1.0 / self.config.heartbeat_rate, self._on_heartbeat)
        self.deferred_timer = self.create_timer(1.0 / self.config.max_rate, self._on_deferred)
        self.deferred_timer.cancel()
        self.diag_timer = self.create_timer(p["diagnostics_period"], self._on_diagnostics)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        topics = ", ".join(sub.topic_name for sub in self.joint_state_subs)
        self.get_logger().info(
            f"{self.get_fully_qualified_name()}: {len(self.scene.adf_paths)} ADF file(s), "
            f"{len(self.model.joint_names)} joint(s), {self.scene.probe_count()} probe(s), "
            f"joint states from {topics}, world frame '{self.world_frame}', TF: {self.tf.backend}")

    def _check_lists(self, p) -> None:
        """Per-file and per-topic lists must match the files and topics (ConfigError)."""
        n_files = len(p["adf_files"])
        if self.root_frames and len(self.root_frames) != n_files:
            raise ConfigError(f"parameter root_frames: {len(self.root_frames)} entries for "
                              f"{n_files} adf_files (one frame per file, '' = none)")
        ns = p["adf_namespaces"]
        if ns and len(ns) != n_files:
            raise ConfigError(f"parameter adf_namespaces: {len(ns)} entries for {n_files} "
                              "adf_files (one per file)")
        if p["tf_backend"] not in ("auto", "fallback"):
            raise ConfigError(f"parameter tf_backend: must be 'auto' or 'fallback', "
                              f"got {p['tf_backend']!r}")
        if not p["joint_state_topics"]:
            raise ConfigError("parameter joint_state_topics: names no topic")
        files = p["joint_state_files"]
        if files != [-1]:
            if len(files) != len(p["joint_state_topics"]):
                raise ConfigError(f"parameter joint_state_files: {len(files)} entries for "
                                  f"{len(p['joint_state_topics'])} joint_state_topics (one per "
                                  "topic, or [-1])")
            bad = [f for f in files if not -1 <= f < n_files]
            if bad:
                raise ConfigError(f"parameter joint_state_files: {bad[0]} is not the index of "
                                  f"one of the {n_files} adf_files (or -1)")

    # -- scene -------------------------------------------------------------------------------
    def _load_scene(self):
        """The scene of the parameters (raises ValueError/OSError naming file, entry, key)."""
        p = self.params
        namespaces = p["adf_namespaces"] or None
        scene = load_scene(p["adf_files"], p["probe_files"], namespaces=namespaces,
                           ignore_pairs=p["ignore_pairs"], check_pairs=p["check_pairs"],
                           coupling_files=p["coupling_files"], couplings=p["couplings"],
                           resolve=resolve_package_path)
        for line in scene.warnings:
            self.get_logger().warning(line)
        if scene.empty:
            self.get_logger().warning(NO_ADF)
        return scene

    def _install_scene(self, scene, previous):
        """A fresh monitor for ``scene``; joint values known before carry over by name."""
        files = self.params["joint_state_files"]
        if files == [-1]:
            files = [-1] * len(self.params["joint_state_topics"])
        sources = [None if f < 0 else f for f in files]
        monitor = CollisionMonitor(scene.model, self.config, probes=scene.probes,
                                   required_joints=self.params["required_joints"],
                                   joint_sources=sources,
                                   idle_reason=NO_ADF if scene.empty else "")
        if previous is not None:
            monitor.take_over(previous)
        self.scene = scene
        self.model = scene.model
        self.monitor = monitor
        self.contact_writer = ContactArrayWriter(self.world_frame)
        # contact and probe arrays go out as serialized bytes when that matches the middleware's
        # own serialization of the writer's message exactly (checked once here); else as messages
        cser = ContactArraySerializer(self.world_frame)
        self.contact_serializer = cser if cser.matches(self.contact_writer) else None
        ps = scene.probe_set
        self.probe_writer = self.probe_serializer = None
        if ps is not None:
            self.probe_writer = ProbeArrayWriter(self.world_frame, ps.names, ps.bodies,
                                                 scene.model.body_names)
            ser = ProbeArraySerializer(self.world_frame, ps.names, ps.bodies,
                                       scene.model.body_names)
            self.probe_serializer = ser if ser.matches(self.probe_writer) else None

    # -- clock -------------------------------------------------------------------------------
    def _now(self) -> float:
        """The node's clock (s). Without ROS time it reads what rcl's system clock reads
        (CLOCK_REALTIME, as ``time.time_ns``) directly, without building an rclpy ``Time``."""
        if self._ros_time_active:
            return self.get_clock().now().nanoseconds * 1e-9
        return time.time_ns() * 1e-9

    def _on_clock_jump(self, jump) -> None:
        """ROS time activated or deactivated (:meth:`_now` follows), or the clock jumped back: a
        bag loop or a simulator reset. Then every time the node remembers lies in the future:
        the monitor's schedule and ages, the TF buffer and the marker timer are reset, and an
        output goes out at once."""
        self._ros_time_active = self.get_clock().ros_time_is_active
        delta = jump.delta.nanoseconds * 1e-9
        if delta >= 0.0:
            return
        now = self._now()
        self.get_logger().warning(f"clock jumped back by {-delta:.3f} s to {now:.3f} s: "
                                  "rate limiter, heartbeat, joint-state ages and TF cleared")
        self.monitor.on_clock_jump_back(now)
        self.tf.clear()
        self._last_marker = -math.inf
        self._cycle(now, time.perf_counter(), force=True)

    # -- inputs ------------------------------------------------------------------------------
    def _on_joint_state_raw(self, data: bytes, source: int = 0):
        """A serialized ``JointState`` (the subscription's raw callback): decoded by
        ``JointStateDecoder``; other encodings, and data it finds malformed, go through rclpy's
        deserializer; data that rclpy cannot read either is dropped with a throttled warning."""
        t0 = time.perf_counter()
        try:
            decoded = self._joint_state_decoder.decode(data)
        except ValueError:
            decoded = None
        if decoded is None:
            try:
                msg = deserialize_message(data, JointState)
            except Exception as err:  # noqa: BLE001 - the node survives any input
                self.get_logger().warning(f"unreadable joint state ({len(data)} bytes): {err}",
                                          throttle_duration_sec=5.0)
                return
            st = msg.header.stamp
            self._joint_state(msg.name, msg.position, st.sec, st.nanosec, st, t0, source)
        else:
            names, positions, sec, nanosec = decoded
            self._joint_state(names, positions, sec, nanosec, None, t0, source)

    def _joint_state(self, names, positions, sec, nanosec, st, t0: float, source: int):
        """``st``: the message's ``builtin_interfaces/Time`` (None: made from sec, nanosec
        when the state is accepted), republished as the outputs' stamp."""
        now = self._now()
        accepted, _ = self.monitor.on_joint_state(names, positions, sec + nanosec * 1e-9, now,
                                                  source)
        if accepted:
            self._stamp_pair = (self.monitor.merger.stamp, st, sec, nanosec)
        self._cycle(now, t0)

    def _on_heartbeat(self):
        now = self._now()
        period = 1.0 / self.monitor.config.heartbeat_rate
        since = now - self.monitor.last_output_time
        if since >= 0.5 * period or since < 0.0:
            self._cycle(now, time.perf_counter(), force=True)

    def _on_deferred(self):
        self.deferred_timer.cancel()
        self._cycle(self._now(), time.perf_counter())

    def _update_root_poses(self, now: float) -> bool:
        """Look up every file's root frame (latest within the tolerance); False when one is
        missing (its reason kept for the warning)."""
        if not self.root_frames:
            return True
        m = self.monitor.merger
        stamp = m.stamp if m.good_count else now
        for i, frame in enumerate(self.root_frames):
            if not frame:
                continue
            pose, why = self.tf.lookup(self.world_frame, frame, stamp)
            if pose is None:
                self._tf_reason = f"root frame of {self.scene.adf_paths[i]}: {why}"
                return False
            self._root_poses[i] = pose
        self._tf_reason = ""
        return True

    # -- one cycle ---------------------------------------------------------------------------
    def _cycle(self, now: float, t0: float, force: bool = False):
        monitor = self.monitor
        if not (force or monitor.limiter.due(now)):
            if monitor.limiter.pending:  # capped by max_rate: run it (coalesced) a period later
                self.deferred_timer.reset()
            return
        tf_ok = self._update_root_poses(now)
        out = monitor.step(now, root_poses=self._root_poses if tf_ok else None, tf_ok=tf_ok,
                           on_contacts=self._publish_contacts)
        self._publish(out, now)
        for w in out.warnings:
            self.get_logger().warning(w)
        if not tf_ok:
            self.get_logger().warning(f"TF unavailable: {self._tf_reason}", throttle_duration_sec=5.0)
        if out.evaluated:
            self._stats.add(out.compute_time, time.perf_counter() - t0)
        self._last_out = out

    def _stamp(self, out) -> Time:
        """``builtin_interfaces/Time`` of ``out.stamp``: the accepted joint state's own stamp
        when ``out`` carries it (built once from its sec and nanosec when it came raw)."""
        f, msg, sec, nanosec = self._stamp_pair
        if f != out.stamp:
            return stamp_msg(out.stamp)
        if msg is None:
            msg = Time(sec=sec, nanosec=nanosec)
            self._stamp_pair = (f, msg, sec, nanosec)
        return msg

    def _serializer_stamp(self, out):
        """The stamp the serializers write (``sec``, ``nanosec``): as :meth:`_stamp`, without
        building a ``Time`` message for the joint state's own stamp."""
        f, msg, sec, nanosec = self._stamp_pair
        return Stamp(sec, nanosec) if f == out.stamp else self._stamp(out)

    def _publish_contacts(self, out):
        """``~/contacts``, called by ``monitor.step`` as soon as the contacts are final (before
        the probes are evaluated)."""
        cser = self.contact_serializer
        self.contacts_pub.publish(cser.serialize(out, self._serializer_stamp(out))
                                  if cser is not None
                                  else self.contact_writer.fill(out, self._stamp(out)))

    def _publish(self, out, now: float):
        """``~/probes`` and (when due and subscribed) ``~/markers`` of a finished step."""
        pw = self.probe_writer
        if pw is not None:
            ser = self.probe_serializer
            if out.probes is None:
                self.probes_pub.publish(pw.empty(out.status, self._stamp(out)))
            elif ser is not None:
                self.probes_pub.publish(ser.serialize(out.status, self._serializer_stamp(out),
                                                      out.probes))
            else:
                self.probes_pub.publish(pw.fill(out.status, self._stamp(out), out.probes))
        if (self.publish_markers and out.result is not None and not self.scene.empty
                and now - self._last_marker >= 1.0 / self.marker_rate
                and self.markers_pub.get_subscription_count() > 0):
            self._last_marker = now
            self._publish_markers(out, self._stamp(out))

    def _publish_markers(self, out, stamp):
        from ambf_collision.ros.markers import build_markers

        arr = build_markers(self.model, out.result, out.probes, self.world_frame, stamp,
                            near=self.monitor.config.report_distance)
        self.markers_pub.publish(arr)
        self.markers_published += 1

    # -- diagnostics -------------------------------------------------------------------------
    def _on_diagnostics(self):
        now = self._now()
        out = self._last_out
        m = self.monitor
        if out is None:
            status, reason = m.status(now)[:2]
        else:
            status, reason = out.status, out.reason
        if self._tf_reason and out is not None and not out.evaluated:
            reason = self._tf_reason
        s = self._stats
        values = {
            "evaluation_rate_hz": f"{m.evaluation_rate(now):.1f}",
            "compute_time_ms": milliseconds(s.mean("compute")),
            "compute_time_max_ms": milliseconds(s.compute_max),
            "cycle_time_ms": milliseconds(s.mean("cycle")),
            "cycle_time_max_ms": milliseconds(s.cycle_max),
            "joint_state_age_s": f"{m.merger.age(now):.4f}",
            "min_distance_m": f"{out.min_distance:.6f}" if out is not None else "inf",
            "pairs_checked": str(out.pairs_checked if out is not None else 0),
            "evaluations": str(m.evaluations),
            "joint_states_good": str(m.merger.good_count),
            "joint_states_bad": str(m.merger.bad_count),
            "coalesced": str(m.limiter.coalesced),
            "probes": str(self.scene.probe_count()),
            "markers_published": str(self.markers_published),
            "tf_backend": self.tf.backend,
        }
        s.reset()
        closure = closure_summary(self.model, out.result) if out is not None and out.result else {}
        level, message, values = diagnostic_report(status, reason, values, m.unreceived(),
                                                   closure)
        st = DiagnosticStatus(level=bytes([level]), name=f"{self.get_name()}: collision monitor",
                              message=message, hardware_id=self.get_fully_qualified_name(),
                              values=[KeyValue(key=k, value=v) for k, v in values.items()])
        arr = DiagnosticArray(status=[st])
        arr.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(arr)

    # -- services ----------------------------------------------------------------------------
    def _on_enable(self, request, response):
        now = self._now()
        self.monitor.set_enabled(bool(request.data), now)
        self._cycle(now, time.perf_counter(), force=True)
        response.success = True
        response.message = "enabled" if request.data else "disabled (publishing status only)"
        return response

    def _on_reload(self, request, response):
        try:
            scene = self._load_scene()
        except (ValueError, OSError) as err:  # AdfError, ProbeError, ShapeError, missing file
            response.success = False
            response.message = f"reload failed, previous model kept: {err}"
            self.get_logger().error(response.message)
            return response
        self._install_scene(scene, previous=self.monitor)
        response.success = True
        response.message = (f"reloaded {len(scene.adf_paths)} ADF file(s), "
                            f"{scene.probe_count()} probe(s), {len(self.model.joint_names)} joint(s)")
        self.get_logger().info(response.message)
        self._cycle(self._now(), time.perf_counter(), force=True)
        return response

    # -- run-time parameters -----------------------------------------------------------------
    def _on_set_parameters(self, params) -> SetParametersResult:
        changes, reason = on_set_parameters(PARAMETERS, params)
        if changes is None:
            return SetParametersResult(successful=False, reason=reason)
        monitor_changes = {k: v for k, v in changes.items() if k in MONITOR_KEYS}
        if monitor_changes:
            try:
                self.config = self.monitor.update_config(**monitor_changes)
            except ValueError as err:
                return SetParametersResult(successful=False, reason=str(err))
        self.params.update(changes)
        if "heartbeat_rate" in changes:
            self.destroy_timer(self.heartbeat_timer)
            self.heartbeat_timer = self.create_timer(1.0 / self.config.heartbeat_rate,
                                                     self._on_heartbeat)
        if "max_rate" in changes:
            self.destroy_timer(self.deferred_timer)
            self.deferred_timer = self.create_timer(1.0 / self.config.max_rate, self._on_deferred)
            self.deferred_timer.cancel()
        if "diagnostics_period" in changes:
            self.destroy_timer(self.diag_timer)
            self.diag_timer = self.create_timer(changes["diagnostics_period"], self._on_diagnostics)
        if "transform_tolerance" in changes:
            self.tf.tolerance = changes["transform_tolerance"]
        if "publish_markers" in changes:
            self.publish_markers = changes["publish_markers"]
        if "marker_rate" in changes:
            self.marker_rate = changes["marker_rate"]
        return SetParametersResult(successful=True)


class _CycleStats:
    """Compute and cycle times (s) of the evaluations since the last diagnostics message."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.cycles = 0
        self.compute = self.cycle = self.compute_max = self.cycle_max = 0.0

    def add(self, compute: float, cycle: float):
        self.cycles += 1
        self.compute += compute
        self.cycle += cycle
        self.compute_max = max(self.compute_max, compute)
        self.cycle_max = max(self.cycle_max, cycle)

    def mean(self, name: str) -> float:
        return getattr(self, name) / self.cycles if self.cycles else math.nan


def main(argv=None) -> int:
    """Run the node until SIGINT/SIGTERM: exit 0 then; 2 with one line on a bad file/parameter."""
    return run_node(CollisionMonitorNode, "collision_monitor", argv)


if __name__ == "__main__":
    raise SystemExit(main())
