"""The ``collision_monitor`` ROS 2 node: a thin adapter over ``monitor.CollisionMonitor``.

Messages in -> monitor calls -> messages out. All decisions (merging, validation, status,
staleness, rate cap, warning throttle, no NaN) live in ``monitor.py``; this module converts
messages and clocks, looks up root transforms (``ros_tf.py``) and publishes.

Topics (relative names are remappable; ``~`` is the node's name):

- in: ``joint_states`` (sensor_msgs/JointState, sensor-data QoS; several publishers with partial
  joint sets merge); ``/tf``, ``/tf_static`` (only for ``root_frames``).
- out: ``~/contacts`` (ContactArray) on every evaluation and at ``heartbeat_rate`` when no joint
  state arrives; ``~/probes`` (ProbeArray) with it when probe files are given; ``~/markers``
  (visualization_msgs/MarkerArray) at ``marker_rate`` only while someone subscribes;
  ``/diagnostics`` (diagnostic_msgs/DiagnosticArray) at 1 Hz.
- services: ``~/enable`` (std_srvs/SetBool), ``~/reload`` (std_srvs/Trigger).

Parameters: see ``config/collision_monitor.yaml`` (every one documented there) and
:data:`PARAMETERS`. Times in seconds on the node's clock (ROS time, or sim time with
``use_sim_time``); distances in metres.
"""

from __future__ import annotations

import math
import time

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import (FloatingPointRange, ParameterDescriptor, ParameterType,
                                SetParametersResult)
from rclpy.clock import JumpThreshold
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from ambf_collision.monitor import monitor as mon
from ambf_collision.msg import ContactArray, ProbeArray
from ambf_collision.ros.convert import (ContactArraySerializer, ContactArrayWriter,
                                       JointStateDecoder, ProbeArraySerializer, ProbeArrayWriter,
                                       Stamp, stamp_msg)
from ambf_collision.ros.run import run_node
from ambf_collision.ros.tf import TfSource

_D = ParameterType.PARAMETER_DOUBLE
_B = ParameterType.PARAMETER_BOOL
_S = ParameterType.PARAMETER_STRING
_SA = ParameterType.PARAMETER_STRING_ARRAY

# name: (default, type, description, (min, max) or None, read_only)
PARAMETERS = {
    "adf_files": ([""], _SA, "AMBF ADF files (paths: absolute, package://ambf_collision/..., or "
                  "relative to the current folder / the package share folder), one world", None, True),
    "probe_files": ([""], _SA, "tactile probe YAML files (same path rules); empty: no probes",
                    None, True),
    "world_frame": ("world", _S, "frame of every published position and of the root transforms",
                    None, True),
    "root_frames": ([""], _SA, "per ADF file (parallel to adf_files) the TF frame that places its "
                    "root bodies (T_world_frame * T_location); '' = the ADF location in world_frame",
                    None, True),
    "ignore_pairs": ([""], _SA, "body pairs never checked, 'bodyA:bodyB' (fnmatch patterns)",
                     None, True),
    "check_pairs": ([""], _SA, "body pairs always checked, 'bodyA:bodyB' (fnmatch patterns)",
                    None, True),
    "report_distance": (0.05, _D, "pairs closer than this (m) are published as contacts",
                        (0.0, 100.0), False),
    "max_rate": (1000.0, _D, "cap on evaluations per second (Hz); joint states arriving faster "
                 "are coalesced into the next allowed evaluation, the latest is never dropped",
                 (0.01, 100000.0), False),
    "heartbeat_rate": (10.0, _D, "status publications per second (Hz) while no joint state "
                       "arrives", (0.01, 1000.0), False),
    "joint_state_timeout": (0.5, _D, "joint states older than this (s) are STALE; 0 turns the "
                            "check off", (0.0, 3600.0), False),
    "transform_tolerance": (0.1, _D, "the latest root transform is used when it is at most this "
                            "much (s) older than the joint-state stamp", (0.0, 3600.0), False),
    "future_tolerance": (0.5, _D, "joint-state stamps further than this (s) in the future are "
                         "rejected (BAD_JOINT_STATE)", (0.0, 3600.0), False),
    "max_stamp_age": (60.0, _D, "joint-state stamps older than this (s) on arrival are rejected "
                      "(BAD_JOINT_STATE)", (0.001, 1e9), False),
    "publish_markers": (True, _B, "publish ~/markers (only while subscribed)", None, False),
    "marker_rate": (20.0, _D, "marker arrays per second (Hz)", (0.01, 1000.0), False),
}

_CONFIG_KEYS = ("report_distance", "max_rate", "heartbeat_rate", "joint_state_timeout",
                "future_tolerance", "max_stamp_age")
_STRICTLY_POSITIVE = ("max_rate", "heartbeat_rate", "marker_rate", "max_stamp_age")
_LEVELS = {mon.STATUS_OK: DiagnosticStatus.OK, mon.STATUS_DISABLED: DiagnosticStatus.OK,
           mon.STATUS_STALE_JOINT_STATE: DiagnosticStatus.WARN,
           mon.STATUS_NO_JOINT_STATE: DiagnosticStatus.WARN,
           mon.STATUS_BAD_JOINT_STATE: DiagnosticStatus.ERROR,
           mon.STATUS_TF_UNAVAILABLE: DiagnosticStatus.ERROR}


class ConfigError(ValueError):
    """A parameter value that makes the node unable to start (names the parameter)."""


def _nonempty(values) -> list:
    return [v for v in values if v]


# ----------------------------------------------------------------------------- the scene


class _EmptyModel:
    """Stand-in when no ADF file is given: no joints, no pairs (the node only reports status)."""

    joint_names: list = []
    body_names: list = []

    def create_data(self):
        return None

    def set_joint_positions(self, data, names, positions):
        return list(names)

    def evaluate(self, data, root_poses=None, report_distance=0.05, near_only=False):
        from types import SimpleNamespace

        import numpy as np

        return SimpleNamespace(min_distance=math.inf, pairs_checked=0, distances=np.zeros(0),
                               contacts=[])


class Scene:
    """What the ADF and probe files compile into: model, probe set and the probe callable."""

    def __init__(self, adf_paths, probe_paths, ignore=(), check=()):
        from ambf_collision.ros.paths import resolve_package_path

        self.adf_paths = [resolve_package_path(p) for p in adf_paths]
        self.probe_paths = [resolve_package_path(p) for p in probe_paths]
        if self.adf_paths:
            from ambf_collision.model.filtering import Overrides
            from ambf_collision.model import Model

            self.model = Model.from_files(self.adf_paths,
                                          overrides=Overrides.from_strings(ignore, check))
        else:
            self.model = _EmptyModel()
        self.probe_set = None
        self._probe_run = None
        specs = []
        if self.probe_paths:
            from ambf_collision.probes.probe_set import load_probe_file

            for p in self.probe_paths:
                specs += load_probe_file(p, self.model.body_names)
            if specs and getattr(self.model, "link_shapes", None) is not None:
                self._probe_run, self.probe_set = mon.model_probe_evaluator(self.model, specs)

    def probe_callable(self):
        """``probes(model, data, result)`` for the monitor, or None without probes."""
        return self._probe_run


# ----------------------------------------------------------------------------- the node


class CollisionMonitorNode(Node):
    """Evaluates the ADF collision model for every joint state and publishes the results."""

    def __init__(self, **kwargs):
        super().__init__("collision_monitor", **kwargs)
        # the node's clock is the system clock unless ROS time (use_sim_time) is active: told
        # by the clock's own jump callback on activation and deactivation (see _now)
        clock = self.get_clock()
        self._ros_time_active = clock.ros_time_is_active
        self._clock_change = clock.create_jump_callback(
            JumpThreshold(min_forward=None, min_backward=None, on_clock_change=True),
            post_callback=self._on_clock_change)
        for name, (default, ptype, text, rng, ro) in PARAMETERS.items():
            d = ParameterDescriptor(type=ptype, description=text, read_only=ro)
            if rng is not None:
                d.floating_point_range = [FloatingPointRange(from_value=rng[0], to_value=rng[1])]
            self.declare_parameter(name, default, d)
        p = {n: self.get_parameter(n).value for n in PARAMETERS}
        self.world_frame = p["world_frame"]
        self.adf_param = _nonempty(p["adf_files"])
        self.probe_param = _nonempty(p["probe_files"])
        self.overrides = (_nonempty(p["ignore_pairs"]), _nonempty(p["check_pairs"]))
        self.root_frames = list(p["root_frames"])
        if self.root_frames == [""]:
            self.root_frames = [""] * len(self.adf_param)
        if len(self.root_frames) != len(self.adf_param):
            raise ConfigError(f"parameter root_frames: {len(self.root_frames)} entries for "
                              f"{len(self.adf_param)} adf_files (give one frame per file, '' = none)")
        self.config = mon.MonitorConfig(**{k: float(p[k]) for k in _CONFIG_KEYS})
        try:
            self.config.validate()
        except ValueError as err:
            raise ConfigError(str(err)) from None
        self.publish_markers = bool(p["publish_markers"])
        self.marker_rate = float(p["marker_rate"])

        self.scene = Scene(self.adf_param, self.probe_param, *self.overrides)
        self._install_scene(self.scene, previous=None)

        self.tf = TfSource(self, float(p["transform_tolerance"]))
        self._root_index = [i for i, f in enumerate(self.root_frames) if f]
        self._root_poses = [None] * len(self.root_frames) if self._root_index else None
        self._tf_reason = ""

        # (float stamp, builtin Time or None: not built yet, sec, nanosec) of the last good
        # joint state
        self._stamp_pair = (None, None, 0, 0)
        self._joint_state_decoder = JointStateDecoder()  # decode_joint_state, names reused
        self._last_marker = -math.inf
        self.markers_published = 0
        self._stats = {"cycles": 0, "compute": 0.0, "compute_max": 0.0, "cycle": 0.0,
                       "cycle_max": 0.0}
        self._last_out = None

        self.contacts_pub = self.create_publisher(ContactArray, "~/contacts", 10)
        self.probes_pub = self.create_publisher(ProbeArray, "~/probes", 10)
        from visualization_msgs.msg import MarkerArray

        self.markers_pub = self.create_publisher(MarkerArray, "~/markers", 1)
        self.diag_pub = self.create_publisher(DiagnosticArray, "/diagnostics", 10)
        # raw: the serialized JointState is decoded here (names, positions, stamp only), which
        # costs a fraction of rclpy's conversion into a Python message
        self.sub = self.create_subscription(JointState, "joint_states", self._on_joint_state_raw,
                                            qos_profile_sensor_data, raw=True)
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/reload", self._on_reload)
        self.heartbeat_timer = self.create_timer(1.0 / self.config.heartbeat_rate, self._on_heartbeat)
        self.deferred_timer = self.create_timer(1.0 / self.config.max_rate, self._on_deferred)
        self.deferred_timer.cancel()
        self.diag_timer = self.create_timer(1.0, self._on_diagnostics)
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.get_logger().info(
            f"collision_monitor: {len(self.adf_param)} ADF file(s), {len(self.model.joint_names)} "
            f"joint(s), {self._probe_count()} probe(s), world frame '{self.world_frame}', "
            f"TF: {self.tf.backend}")

    # -- scene -----------------------------------------------------------------------------
    def _install_scene(self, scene: Scene, previous):
        """A fresh monitor for ``scene``; joint values known before carry over by name."""
        monitor = mon.CollisionMonitor(scene.model, self.config, probes=scene.probe_callable())
        if previous is not None:
            old = previous.merger
            new = monitor.merger
            for i, name in enumerate(new.joint_names):
                j = old.index.get(name)
                if j is not None and old.received[j]:
                    new.positions[i] = old.positions[j]
                    new.joint_stamps[i] = old.joint_stamps[j]
                    new.received[i] = True
            new.stamp, new.arrival, new.good_count = old.stamp, old.arrival, old.good_count
            monitor.enabled = previous.enabled
        self.scene = scene
        self.model = scene.model
        self.monitor = monitor
        self.contact_writer = ContactArrayWriter(self.world_frame)
        # contact arrays, too, go out as serialized bytes when they match the middleware's own
        # serialization of the writer's message (checked once here); else as messages
        cser = ContactArraySerializer(self.world_frame)
        self.contact_serializer = cser if cser.matches(self.contact_writer) else None
        ps = scene.probe_set
        self.probe_writer = (ProbeArrayWriter(self.world_frame, ps.names, ps.result.body,
                                              scene.model.body_names) if ps is not None else None)
        # probe arrays are published as serialized bytes when that matches the middleware's own
        # serialization of the message exactly (checked once here); else as messages
        self.probe_serializer = None
        if ps is not None:
            ser = ProbeArraySerializer(self.world_frame, ps.names, ps.result.body,
                                       scene.model.body_names)
            if ser.matches(self.probe_writer):
                self.probe_serializer = ser

    def _probe_count(self) -> int:
        return len(self.scene.probe_set) if self.scene.probe_set is not None else 0

    # -- clock -----------------------------------------------------------------------------
    def _now(self) -> float:
        """The node's clock (s). Without ROS time it reads what rcl's system clock reads
        (CLOCK_REALTIME, as ``time.time_ns``) directly: ``Clock.now()`` builds an rclpy ``Time``
        (~20 us with cold caches, ~3 us for ``time.time_ns``)."""
        if self._ros_time_active:
            return self.get_clock().now().nanoseconds * 1e-9
        return time.time_ns() * 1e-9

    def _on_clock_change(self, jump) -> None:
        """ROS time (use_sim_time) activated or deactivated: :meth:`_now` follows."""
        self._ros_time_active = self.get_clock().ros_time_is_active

    # -- inputs ----------------------------------------------------------------------------
    def _on_joint_state(self, msg: JointState):
        """A ``JointState`` message object."""
        t0 = time.perf_counter()
        st = msg.header.stamp
        self._joint_state(msg.name, msg.position, st.sec, st.nanosec, st, t0)

    def _on_joint_state_raw(self, data: bytes):
        """A serialized ``JointState`` (the subscription's raw callback): decoded by
        ``JointStateDecoder`` (``decode_joint_state``, the names of a repeated name block reused);
        other encodings, and data it finds malformed, go through rclpy's
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
            self._joint_state(msg.name, msg.position, st.sec, st.nanosec, st, t0)
        else:
            names, positions, sec, nanosec = decoded
            self._joint_state(names, positions, sec, nanosec, None, t0)

    def _joint_state(self, names, positions, sec: int, nanosec: int, st, t0: float):
        """``st``: the message's ``builtin_interfaces/Time`` (None: made from sec, nanosec
        when the state is accepted), republished as the outputs' stamp."""
        now = self._now()
        stamp = sec + nanosec * 1e-9
        accepted, _ = self.monitor.on_joint_state(names, positions, stamp, now)
        if accepted:  # the Time message is built only if a message (not bytes) needs it
            self._stamp_pair = (self.monitor.merger.stamp, st, sec, nanosec)
        self._cycle(now, t0)

    def _on_heartbeat(self):
        now = self._now()
        period = 1.0 / self.monitor.config.heartbeat_rate
        if now - self.monitor.last_output_time >= 0.5 * period:
            self._cycle(now, time.perf_counter(), force=True)

    def _on_deferred(self):
        self.deferred_timer.cancel()
        self._cycle(self._now(), time.perf_counter())

    def _update_root_poses(self, now: float) -> bool:
        """Look up every file's root frame (latest within the tolerance); False when one is
        missing (its reason kept for the warning)."""
        if not self._root_index:
            return True
        m = self.monitor.merger
        stamp = m.stamp if m.good_count else now
        for i in self._root_index:
            pose, why = self.tf.lookup(self.world_frame, self.root_frames[i], stamp)
            if pose is None:
                self._tf_reason = f"root frame of {self.adf_param[i]}: {why}"
                return False
            self._root_poses[i] = pose
        self._tf_reason = ""
        return True

    # -- one cycle -------------------------------------------------------------------------
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
        s = self._stats
        cycle = time.perf_counter() - t0
        if out.evaluated:
            s["cycles"] += 1
            s["compute"] += out.compute_time
            s["compute_max"] = max(s["compute_max"], out.compute_time)
            s["cycle"] += cycle
            s["cycle_max"] = max(s["cycle_max"], cycle)
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
        if (isinstance(self.monitor.model, _EmptyModel) and out.status == mon.STATUS_OK
                and self.monitor.merger.good_count == 0):
            out.status, out.reason = mon.STATUS_NO_JOINT_STATE, "no joint state yet"
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
        if (self.publish_markers and out.result is not None
                and now - self._last_marker >= 1.0 / self.marker_rate
                and self.markers_pub.get_subscription_count() > 0):
            self._last_marker = now
            self._publish_markers(out, self._stamp(out))

    def _publish_markers(self, out, stamp):
        try:
            from ambf_collision.ros.markers import build_markers
        except ImportError as err:
            self.get_logger().warning(f"markers unavailable: {err}", throttle_duration_sec=30.0)
            return
        if isinstance(self.model, _EmptyModel):
            return
        arr = build_markers(self.model, out.result, out.probes, self.world_frame, stamp,
                            near=self.monitor.config.report_distance)
        self.markers_pub.publish(arr)
        self.markers_published += 1

    # -- diagnostics -----------------------------------------------------------------------
    def _on_diagnostics(self):
        now = self._now()
        out = self._last_out
        m = self.monitor
        s = self._stats
        n = s["cycles"]
        status = out.status if out is not None else mon.STATUS_NO_JOINT_STATE
        reason = out.reason if out is not None else "no output yet"
        if status == mon.STATUS_TF_UNAVAILABLE and self._tf_reason:
            reason = self._tf_reason
        evals = [t for t in m._eval_times if now - t <= m.RATE_WINDOW]
        values = {
            "status": mon.STATUS_NAMES.get(status, str(status)),
            "evaluation_rate_hz": f"{len(evals) / m.RATE_WINDOW:.1f}",
            "compute_time_ms": f"{1e3 * s['compute'] / n:.4f}" if n else "nan",
            "compute_time_max_ms": f"{1e3 * s['compute_max']:.4f}",
            "cycle_time_ms": f"{1e3 * s['cycle'] / n:.4f}" if n else "nan",
            "cycle_time_max_ms": f"{1e3 * s['cycle_max']:.4f}",
            "joint_state_age_s": f"{m.merger.age(now):.4f}",
            "min_distance_m": f"{out.min_distance:.6f}" if out is not None else "inf",
            "pairs_checked": str(out.pairs_checked if out is not None else 0),
            "evaluations": str(m.evaluations),
            "joint_states_good": str(m.merger.good_count),
            "joint_states_bad": str(m.merger.bad_count),
            "coalesced": str(m.limiter.coalesced),
            "probes": str(self._probe_count()),
            "markers_published": str(self.markers_published),
            "tf_backend": self.tf.backend,
        }
        for k in ("cycles", "compute", "compute_max", "cycle", "cycle_max"):
            s[k] = 0 if k == "cycles" else 0.0
        st = DiagnosticStatus(level=_LEVELS.get(status, DiagnosticStatus.WARN),
                              name=f"{self.get_name()}: collision monitor",
                              message=mon.STATUS_NAMES.get(status, "") + (f": {reason}" if reason else ""),
                              hardware_id=self.get_fully_qualified_name(),
                              values=[KeyValue(key=k, value=v) for k, v in values.items()])
        arr = DiagnosticArray(status=[st])
        arr.header.stamp = self.get_clock().now().to_msg()
        self.diag_pub.publish(arr)

    # -- services --------------------------------------------------------------------------
    def _on_enable(self, request, response):
        now = self._now()
        self.monitor.set_enabled(bool(request.data), now)
        self._cycle(now, time.perf_counter(), force=True)
        response.success = True
        response.message = "enabled" if request.data else "disabled (publishing status only)"
        return response

    def _on_reload(self, request, response):
        try:
            scene = Scene(self.adf_param, self.probe_param, *self.overrides)
        except (ValueError, OSError) as err:  # AdfError, ProbeError, ShapeError, missing file
            response.success = False
            response.message = f"reload failed, previous model kept: {err}"
            self.get_logger().error(response.message)
            return response
        self._install_scene(scene, previous=self.monitor)
        response.success = True
        response.message = (f"reloaded {len(scene.adf_paths)} ADF file(s), "
                            f"{self._probe_count()} probe(s), {len(self.model.joint_names)} joint(s)")
        self.get_logger().info(response.message)
        self._cycle(self._now(), time.perf_counter(), force=True)
        return response

    # -- run-time parameters ---------------------------------------------------------------
    def _on_set_parameters(self, params) -> SetParametersResult:
        changes = {}
        other = {}
        for prm in params:
            name, value = prm.name, prm.value
            if name not in PARAMETERS:
                continue
            if isinstance(value, float) and not math.isfinite(value):
                return SetParametersResult(successful=False, reason=f"{name}: must be finite")
            if name in _STRICTLY_POSITIVE and not value > 0.0:
                return SetParametersResult(successful=False,
                                           reason=f"{name}: must be > 0, got {value}")
            if name in _CONFIG_KEYS:
                changes[name] = float(value)
            else:
                other[name] = value
        if "transform_tolerance" in other and not other["transform_tolerance"] >= 0.0:
            return SetParametersResult(successful=False, reason="transform_tolerance: must be >= 0")
        if changes:
            try:
                self.config = self.monitor.update_config(**changes)
            except ValueError as err:
                return SetParametersResult(successful=False, reason=str(err))
        if "heartbeat_rate" in changes:
            self.destroy_timer(self.heartbeat_timer)
            self.heartbeat_timer = self.create_timer(1.0 / self.config.heartbeat_rate,
                                                     self._on_heartbeat)
        if "max_rate" in changes:
            self.destroy_timer(self.deferred_timer)
            self.deferred_timer = self.create_timer(1.0 / self.config.max_rate, self._on_deferred)
            self.deferred_timer.cancel()
        if "transform_tolerance" in other:
            self.tf.tolerance = float(other["transform_tolerance"])
        if "publish_markers" in other:
            self.publish_markers = bool(other["publish_markers"])
        if "marker_rate" in other:
            self.marker_rate = float(other["marker_rate"])
        return SetParametersResult(successful=True)


def main(argv=None) -> int:
    """Run the node until SIGINT/SIGTERM: exit 0 then; 2 with one line on a bad file/parameter."""
    return run_node(CollisionMonitorNode, "collision_monitor", argv)


if __name__ == "__main__":
    raise SystemExit(main())
