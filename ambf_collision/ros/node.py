"""The ``collision_monitor`` ROS 2 node: a thin adapter over ``monitor.CollisionMonitor``.

Messages in -> monitor calls -> messages out. All decisions (merging, validation, status,
staleness, rate cap, warning throttle, no NaN) live in ``ambf_collision/monitor``; this module
converts messages and clocks, looks up root transforms (``ros/tf.py``) and publishes
(``ros/node_outputs.py``, ``ros/marker_publisher.py``).

Topics (relative names are remappable and take the node's namespace; ``~`` is the node's name):

- in: ``joint_state_topics`` (default ``joint_states``; sensor_msgs/JointState, sensor-data
  QoS; several publishers and topics with partial joint sets merge); ``/tf``, ``/tf_static``
  (for ``root_frames``; read in slices of bounded time, ``ros/tf_intake.py``); ``/clock`` with
  ``use_sim_time``.
- out: ``~/contacts`` (ContactArray) on every evaluation and at ``heartbeat_rate`` when no joint
  state arrives; ``~/probes`` (ProbeArray) with it when probe files are given (each is built
  and published only while it has a subscriber: nothing is spent on a message no one reads;
  without a ``~/probes`` subscriber the probes are evaluated only for the markers);
  ``~/markers`` (visualization_msgs/MarkerArray) of the latest evaluation, at most
  ``marker_rate`` per second and only while someone subscribes: built 0.3 ms after an
  evaluation's answers are out, once local subscribers have read them (``marker_publisher.py``),
  or by a timer at ``marker_rate`` for the last evaluation when they stop;
  ``/diagnostics`` (diagnostic_msgs/DiagnosticArray) from a thread of its own, exactly one
  message per ``diagnostics_period`` of wall time, however busy the executor is.
- services: ``~/enable`` (std_srvs/SetBool), ``~/reload`` (std_srvs/Trigger: the files are read
  and compiled in a worker thread while the node keeps evaluating the old model and publishing;
  the new model is installed between two evaluations, ``ros/scene_loading.py``).

Evaluations follow the joint states, held to ``max_rate`` on average and to a share of the time
(``monitor/scheduling.py``): faster input coalesces into the next evaluation (counted in
``/diagnostics``), the newest state is always evaluated, and nothing queues without bound.

Parameters: ``ros/node_parameters.py`` (each one documented in ``config/collision_monitor.yaml``).
Times in seconds on the node's clock (ROS time, or sim time with ``use_sim_time``); when that
clock jumps back (a bag loop, a simulator reset) everything that depends on time is reset and
the node publishes again at once.
"""

from __future__ import annotations

import time

from rcl_interfaces.msg import SetParametersResult
from rclpy.clock import JumpThreshold
from rclpy.duration import Duration
from rclpy.exceptions import InvalidTopicNameException
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

from ambf_collision.monitor.config import MonitorConfig
from ambf_collision.monitor.monitor import CollisionMonitor
from ambf_collision.ros.joint_state_decoding import JointStateDecoder, JointStateTooLarge
from ambf_collision.ros.marker_publisher import MarkerPublisher
from ambf_collision.ros.node_diagnostics import DiagnosticsPublisher
from ambf_collision.ros.node_outputs import ResultPublisher
from ambf_collision.ros.node_parameters import (MONITOR_KEYS, PAIR_KEYS, PARAMETERS,
                                                check_combination, check_pairs_syntax,
                                                check_report_distances)
from ambf_collision.ros.obstacle_intake import ObstacleIntake
from ambf_collision.ros.parameters import ConfigError, declare_parameters, on_set_parameters
from ambf_collision.ros.run import one_line, run_node
from ambf_collision.ros.scene_loading import (PreparedScene, SceneLoader, load_node_scene,
                                              reload_scene, with_pairs)
from ambf_collision.ros.tf import TfSource

__all__ = ["PARAMETERS", "CollisionMonitorNode", "ConfigError", "main"]

NO_ADF = "no ADF file given (parameter adf_files): nothing is monitored"


class CollisionMonitorNode(Node):
    """Evaluates the ADF collision model for every joint state and publishes the results."""

    def __init__(self, **kwargs):
        super().__init__("collision_monitor", **kwargs)
        p = declare_parameters(self, PARAMETERS)
        check_combination(p)
        self.params = p
        self.world_frame = p["world_frame"]
        self.root_frames = p["root_frames"]
        self.config = MonitorConfig(**{k: p[k] for k in MONITOR_KEYS})

        # the node's clock is the system clock unless ROS time (use_sim_time) is active: told
        # by the clock's own jump callback, which also reports jumps back (see _on_clock_jump)
        clock = self.get_clock()
        self._ros_time_active = clock.ros_time_is_active
        self._clock_jumps = clock.create_jump_callback(
            JumpThreshold(min_forward=None, min_backward=Duration(nanoseconds=-1),
                          on_clock_change=True), post_callback=self._on_clock_jump)

        self.tf = TfSource(self, p["transform_tolerance"], now=self.now,
                           future_tolerance=p["future_tolerance"],
                           force_fallback=p["tf_backend"] == "fallback")
        self._root_poses = [None] * len(self.root_frames) if self.root_frames else None
        self.tf_reason = ""  # why the root transforms are missing ("" when found)
        self._joint_state_decoder = JointStateDecoder()
        self.last_output = None  # the MonitorOutput last published
        self.loader = SceneLoader(wake=self._wake_executor)
        self.markers = MarkerPublisher(self, p["marker_rate"], p["publish_markers"],
                                       self._build_markers)
        self.results = ResultPublisher(self)  # before the load: subscribers find it meanwhile
        sources = p["obstacle_sources"]
        self.obstacles = ObstacleIntake(self, sources) if sources else None

        self.install_scene(self.load_scene_files(p), previous=None)

        # raw: the serialized JointState is decoded here (names, positions, stamp only), which
        # costs a fraction of rclpy's conversion into a Python message
        self.joint_state_subs = []
        for i, topic in enumerate(p["joint_state_topics"]):
            try:
                self.joint_state_subs.append(self.create_subscription(
                    JointState, topic, lambda data, source=i: self._on_joint_state_raw(data, source),
                    qos_profile_sensor_data, raw=True))
            except (InvalidTopicNameException, ValueError, TypeError) as err:
                raise ConfigError(f"parameter joint_state_topics: {topic!r} is not a valid topic "
                                  f"name ({' '.join(str(err).split()[:12])})") from None
        self.create_service(SetBool, "~/enable", self._on_enable)
        self.create_service(Trigger, "~/reload", self._on_reload)
        self.heartbeat_timer = self.create_timer(1.0 / self.config.heartbeat_rate, self._on_heartbeat)
        self.deferred_timer = self.create_timer(1.0 / self.config.max_rate, self._on_deferred)
        self.deferred_timer.cancel()
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self.diagnostics = DiagnosticsPublisher(self, p["diagnostics_period"])
        topics = ", ".join(sub.topic_name for sub in self.joint_state_subs)
        self.get_logger().info(
            f"{self.get_fully_qualified_name()}: {len(self.scene.adf_paths)} ADF file(s), "
            f"{len(self.model.joint_names)} joint(s), {self.scene.probe_count()} probe(s), "
            f"joint states from {topics}, world frame '{self.world_frame}', TF: {self.tf.backend}")

    # -- scene -------------------------------------------------------------------------------
    def load_scene_files(self, params) -> PreparedScene:
        """The scene of ``params``, loaded here (start-up; raises naming file, entry, key),
        with its ``padding``."""
        prepared = load_node_scene(params, self.world_frame)
        return with_pairs(prepared, params) if params["padding"] else prepared

    def install_scene(self, prepared: PreparedScene, previous) -> None:
        """Make ``prepared`` the node's scene, with a fresh monitor that continues from
        ``previous`` (joint values by name, enabled flag, counters); loading warnings go to the
        ROS logger. Runs on the executor, between two evaluations."""
        scene = prepared.scene
        if prepared.compiled:
            import numba

            where = numba.config.CACHE_DIR or "next to the sources"
            self.get_logger().info(
                f"JIT: numba compiled {prepared.compiled} function(s) of the core, not compiled "
                f"by the build (sources edited since, or no build step); the scene took "
                f"{prepared.seconds:.1f} s to load (kept in numba's cache, {where}, for the next "
                "start)")
        for line in scene.warnings:
            self.get_logger().warning(line)
        if scene.empty:
            self.get_logger().warning(NO_ADF)
        files = self.params["joint_state_files"]
        if files == [-1]:
            files = [-1] * len(self.params["joint_state_topics"])
        try:
            monitor = CollisionMonitor(scene.model, self.config, probes=scene.probes,
                                       required_joints=self.params["required_joints"],
                                       joint_sources=[None if f < 0 else f for f in files],
                                       joint_aliases=self.params["joint_aliases"],
                                       idle_reason=NO_ADF if scene.empty else "",
                                       obstacle_sources=self.obstacles.specs if self.obstacles else ())
        except ValueError as err:  # required_joints, joint_aliases or a source's bodies unknown
            raise ConfigError(f"parameter {err}") from None
        if previous is not None:
            monitor.take_over(previous)
        monitor.set_report_distances(self.params["self_report_distance"],
                                     self.params["environment_report_distance"])
        self.prepared = prepared
        self.scene = scene
        self.model = scene.model
        self.monitor = monitor
        self.results.new_scene(prepared)
        self.markers.new_scene(prepared.marker_cache)  # the layout the load drew (same model)
        self.last_output = None

    # -- clock -------------------------------------------------------------------------------
    def now(self) -> float:
        """The node's clock (s). Without ROS time it reads what rcl's system clock reads
        (CLOCK_REALTIME, as ``time.time_ns``) directly, without building an rclpy ``Time``."""
        if self._ros_time_active:
            return self.get_clock().now().nanoseconds * 1e-9
        return time.time_ns() * 1e-9

    def _on_clock_jump(self, jump) -> None:
        """ROS time activated or deactivated (:meth:`_now` follows), or the clock jumped back: a
        bag loop or a simulator reset. Then every time the node remembers lies in the future:
        the monitor's schedule and ages and the TF buffer are reset, and an output goes out at
        once."""
        self._ros_time_active = self.get_clock().ros_time_is_active
        delta = jump.delta.nanoseconds * 1e-9
        if delta >= 0.0:
            return
        now = self.now()
        self.get_logger().warning(f"clock jumped back by {-delta:.3f} s to {now:.3f} s: "
                                  "rate limiter, heartbeat, joint-state ages and TF cleared")
        self.monitor.on_clock_jump_back(now)
        self.tf.clear()
        self._cycle(now, time.perf_counter(), force=True)

    # -- inputs ------------------------------------------------------------------------------
    def _on_joint_state_raw(self, data: bytes, source: int = 0):
        """A serialized ``JointState`` (the subscription's raw callback): decoded by
        ``JointStateDecoder``; other encodings, and data it finds malformed, go through rclpy's
        deserializer; data that rclpy cannot read either is dropped with a throttled warning."""
        t0 = time.perf_counter()
        try:
            decoded = self._joint_state_decoder.decode(data, velocity=True)
        except JointStateTooLarge as err:  # refused unread: its cost stays bounded
            now = self.now()
            self.monitor.on_bad_joint_state("length", str(err), now)
            self._cycle(now, t0)
            return
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
            self._joint_state(msg.name, msg.position, st.sec, st.nanosec, st, t0, source,
                              msg.velocity)
        else:
            names, positions, sec, nanosec, velocities = decoded
            self._joint_state(names, positions, sec, nanosec, None, t0, source, velocities)

    def _joint_state(self, names, positions, sec, nanosec, st, t0: float, source: int,
                     velocities=None):
        """``st``: the message's ``builtin_interfaces/Time`` (None: made from sec, nanosec
        when the state is accepted), republished as the outputs' stamp. ``velocities``: the
        message's ``velocity`` (the contacts' distance rates, ``monitor/joint_states.py``)."""
        now = self.now()
        accepted, _ = self.monitor.on_joint_state(names, positions, sec + nanosec * 1e-9, now,
                                                  source, velocities)
        if accepted:
            if sec or nanosec:
                self.results.joint_state_accepted(self.monitor.output_stamp(now), st, sec, nanosec)
            else:  # unstamped, taken with accept_unstamped: stamped on arrival, never 0
                self.results.joint_state_accepted(None, None, 0, 0)
        self._cycle(now, t0)

    def input_arrived(self, t0: float) -> None:
        """An input other than a joint state changed the scene (a cloud, ``ros/obstacle_intake.py``):
        evaluate when the rate limiter allows. ``t0``: ``perf_counter`` at its arrival."""
        self._cycle(self.now(), t0)

    def publish_now(self) -> None:
        """Evaluate (when the status allows) and publish at once, whatever the rate limiter
        says (a reload, a clock jump, ``~/enable``)."""
        self._cycle(self.now(), time.perf_counter(), force=True)

    def _on_heartbeat(self):
        now = self.now()
        if self.monitor.heartbeat_due(now, checked_every=self.heartbeat_timer.timer_period_ns * 1e-9):
            self._cycle(now, time.perf_counter(), force=True)

    def _on_deferred(self):
        self.deferred_timer.cancel()
        self._cycle(self.now(), time.perf_counter())

    def _update_root_poses(self, now: float) -> bool:
        """Look up every file's root frame (latest within the tolerance); False when one is
        missing (its reason kept for the warning)."""
        if not self.root_frames:
            return True
        stamp = self.monitor.output_stamp(now)
        for i, frame in enumerate(self.root_frames):
            if not frame:
                continue
            pose, why = self.tf.lookup(self.world_frame, frame, stamp)
            if pose is None:
                self.tf_reason = f"root frame of {self.scene.adf_paths[i]}: {why}"
                return False
            self._root_poses[i] = pose
        self.tf_reason = ""
        return True

    # -- one cycle ---------------------------------------------------------------------------
    def _cycle(self, now: float, t0: float, force: bool = False):
        """Evaluate and publish when the rate limiter allows (or ``force``: heartbeat, enable,
        reload, clock jump); otherwise the deferred timer brings the newest state back. The
        contacts go out first, then the probes (evaluated now only for a ``~/probes``
        subscriber; else for the markers, when they are built)."""
        monitor = self.monitor
        if not (force or monitor.evaluation_due(now)):
            if monitor.next_wakeup() is not None and self.deferred_timer.is_canceled():
                self.deferred_timer.reset()
            return
        tf_ok = self._update_root_poses(now)
        out = monitor.step(now, root_poses=self._root_poses if tf_ok else None, tf_ok=tf_ok,
                           probes=False)
        self.results.publish_contacts(out)
        if self.results.probes_wanted():
            monitor.add_probes(out)
            self.results.publish_probes(out)
        for w in out.warnings:
            self.get_logger().warning(w)
        if not tf_ok:
            self.get_logger().warning(f"TF unavailable: {self.tf_reason}", throttle_duration_sec=5.0)
        cycle = time.perf_counter() - t0
        monitor.account(cycle)
        if out.evaluated:
            self.diagnostics.add_cycle(out.compute_time, cycle)
            if not self.scene.empty:
                self.markers.offer(out)
        self.last_output = out

    def _build_markers(self, out, cache) -> bytes:
        """The serialized MarkerArray of ``out`` (:class:`MarkerPublisher` calls it; imported on
        first use, as the marker kernels compile then)."""
        from ambf_collision.ros.markers import build_markers

        for w in self.monitor.add_probes(out):  # (a cycle without a ~/probes subscriber)
            self.get_logger().warning(w)
        return build_markers(self.model, out.result, out.probes, self.world_frame,
                             self.results.stamp(out), near=self.monitor.config.report_distance,
                             cache=cache,
                             contacts=(out.contact_info, out.contact_rows, out.contact_swept))

    def destroy_node(self):
        """Stops the diagnostics thread first (it publishes through this node; absent when the
        constructor failed before starting it)."""
        diagnostics = getattr(self, "diagnostics", None)
        if diagnostics is not None:
            diagnostics.stop()
        return super().destroy_node()

    # -- services ----------------------------------------------------------------------------
    def _on_enable(self, request, response):
        self.monitor.set_enabled(bool(request.data), self.now())
        self.publish_now()
        response.success = True
        response.message = "enabled" if request.data else "disabled (publishing status only)"
        return response

    def _wake_executor(self):
        """Wake the executor from the loader thread, so that ``~/reload`` resumes at once (an
        executor waiting for events does not notice a future completed by another thread)."""
        executor = self.executor
        if executor is not None and hasattr(executor, "wake"):
            executor.wake()

    async def _on_reload(self, request, response):
        """``~/reload`` (``scene_loading.reload_scene``)."""
        return await reload_scene(self, response)

    # -- run-time parameters -----------------------------------------------------------------
    def _on_set_parameters(self, params) -> SetParametersResult:
        changes, reason = on_set_parameters(PARAMETERS, params)
        if changes is None:
            return SetParametersResult(successful=False, reason=reason)
        try:
            check_report_distances(changes)
            rebuilt = None
            if any(k in changes for k in PAIR_KEYS):  # the pair list, rebuilt now
                wanted = dict(self.params, **changes)
                check_pairs_syntax(wanted)
                rebuilt = with_pairs(self.prepared, wanted, loading=False)
        except ValueError as err:  # ConfigError, or the model's (a pattern matching no body)
            return SetParametersResult(successful=False, reason=one_line(err))
        monitor_changes = {k: v for k, v in changes.items() if k in MONITOR_KEYS}
        if monitor_changes:
            try:
                self.config = self.monitor.update_config(**monitor_changes)
            except ValueError as err:
                return SetParametersResult(successful=False, reason=str(err))
        self.params.update(changes)
        if rebuilt is not None:  # installed between two evaluations: the next one uses it
            self.install_scene(rebuilt, previous=self.monitor)
        self.monitor.set_report_distances(self.params["self_report_distance"],
                                          self.params["environment_report_distance"])
        if "heartbeat_rate" in changes:
            self.heartbeat_timer = self._new_timer(self.heartbeat_timer, 1.0 / self.config.heartbeat_rate,
                                                   self._on_heartbeat)
        if "max_rate" in changes:
            self.deferred_timer = self._new_timer(self.deferred_timer, 1.0 / self.config.max_rate,
                                                  self._on_deferred)
            self.deferred_timer.cancel()
        if "diagnostics_period" in changes:
            self.diagnostics.period = changes["diagnostics_period"]
        if "marker_rate" in changes:
            self.markers.set_rate(changes["marker_rate"])
        if "transform_tolerance" in changes:
            self.tf.tolerance = changes["transform_tolerance"]
        if "future_tolerance" in changes:
            self.tf.intake.future_tolerance = changes["future_tolerance"]
        if "publish_markers" in changes:
            self.markers.enabled = changes["publish_markers"]
        return SetParametersResult(successful=True)

    def _new_timer(self, old, period: float, callback):
        self.destroy_timer(old)
        return self.create_timer(period, callback)


def main(argv=None) -> int:
    """Run the node until SIGINT/SIGTERM: exit 0 then; 2 with one line on a bad file/parameter."""
    return run_node(CollisionMonitorNode, "collision_monitor", argv, restore_signals=False)


if __name__ == "__main__":
    raise SystemExit(main())
