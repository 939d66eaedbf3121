"""``/diagnostics`` of the node: one ``diagnostic_msgs/DiagnosticArray`` per ``diagnostics_period`` of
wall time, from a thread of its own (:class:`~ambf_collision.ros.diagnostics.PeriodicThread`), however
busy the executor is. What the values and levels mean: ``ros/diagnostics.py``.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from ambf_collision.ros.diagnostics import (CycleStats, PeriodicThread, closure_summary,
                                            diagnostic_report, milliseconds, number)

__all__ = ["DiagnosticsPublisher"]


class DiagnosticsPublisher:
    """Publishes the node's status every ``period`` s (> 0) beside the executor.

    It only reads what the executor's callbacks write (single attribute reads and copies of
    the node's ``monitor``, ``last_output``, ``scene``, ``model``, ``prepared``, ``tf``,
    ``loader``, ``markers``): a value may be one evaluation old. The executor adds each
    evaluation's times with :meth:`add_cycle`."""

    def __init__(self, node, period: float):
        self.node = node
        self._stats = CycleStats()
        self._tf_refused = 0
        self._publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
        self._thread = PeriodicThread(
            period, self.publish, "ambf_collision diagnostics",
            on_error=lambda err: node.get_logger().error(f"diagnostics: {err}",
                                                         throttle_duration_sec=60.0)).start()

    @property
    def period(self) -> float:
        """Seconds between two messages (the ``diagnostics_period`` parameter)."""
        return self._thread.period

    @period.setter
    def period(self, seconds: float) -> None:
        self._thread.period = seconds

    def add_cycle(self, compute: float, cycle: float) -> None:
        """One evaluation's compute and callback time (s)."""
        self._stats.add(compute, cycle)

    def stop(self) -> None:
        """Stop the thread (before the node is destroyed: it publishes through it)."""
        self._thread.stop()

    def publish(self) -> None:
        """One ``/diagnostics`` message, and a throttled warning when TF transforms were refused
        since the last one."""
        node = self.node
        now = node.now()
        out = node.last_output
        m = node.monitor
        if out is None:
            status, reason = m.status(now)[:2]
        else:
            status, reason = out.status, out.reason
        if node.tf_reason and out is not None and not out.evaluated:
            reason = node.tf_reason
        tf = dict(node.tf.intake.counts)
        refused = tf["future"] + tf["invalid"] + tf["frames"] + tf["dropped"]
        if refused > self._tf_refused:
            self._tf_refused = refused
            node.get_logger().warning(f"TF: {node.tf.intake.last_refusal} ({refused} refused so "
                                      "far)", throttle_duration_sec=5.0)
        stats, self._stats = self._stats, CycleStats()
        values = {
            "evaluation_rate_hz": number(m.evaluation_rate(now), ".1f"),
            **stats.values(),
            "joint_state_age_s": number(m.joint_state_age(now), ".4f"),
            "min_distance_m": number(out.min_distance, ".6f") if out is not None else "inf",
            "pairs_checked": str(out.pairs_checked if out is not None else 0),
            **{k: str(v) for k, v in m.counts().items()},
            "continuous": m.steps.summary() if m.config.continuous else "off",
            "probes": str(node.scene.probe_count()),
            "markers_published": str(node.markers.published),
            "tf_backend": node.tf.backend,
            "tf_received": str(tf["stored"]),
            "tf_slice_cpu_max_ms": milliseconds(node.tf.intake.longest_slice),
            "tf_refused": (f"future {tf['future']}, invalid {tf['invalid']}, frames "
                           f"{tf['frames']}, dropped {tf['dropped']}"),
            "scene_load_s": number(node.prepared.seconds, ".3f"),
            "reloading": "true" if node.loader.busy else "false",
            **(node.obstacles.diagnostics() if node.obstacles is not None else {}),
        }
        closure = closure_summary(node.model, out.result) if out is not None and out.result else {}
        stale = out.stale_joints if out is not None else ()  # (as the reason names them)
        level, message, values = diagnostic_report(status, reason, values, m.unreceived(),
                                                   closure, stale, m.forgotten_joints(now))
        st = DiagnosticStatus(level=bytes([level]), name=f"{node.get_name()}: collision monitor",
                              message=message, hardware_id=node.get_fully_qualified_name(),
                              values=[KeyValue(key=k, value=v) for k, v in values.items()])
        arr = DiagnosticArray(status=[st])
        arr.header.stamp = node.get_clock().now().to_msg()
        self._publisher.publish(arr)
