"""The node's sensed-obstacle sources: parameters, ``PointCloud2`` subscriptions, TF, statuses.

For each name in ``obstacle_sources`` the node declares ``NAME.topic``, ``NAME.point_radius``,
... (``node_parameters.SOURCE_PARAMETERS``, nav2's style) and subscribes to the topic with the
sensor-data QoS. Each cloud (:meth:`ObstacleIntake.on_cloud`):

1. is decoded (``ros/point_cloud.py``): a malformed one (no x/y/z field, a wrong point step,
   data too short, an empty frame) is **refused** with its reason; one larger than
   ``max_points`` is **truncated** to its first points; NaN points are dropped and counted by
   the point set. A refused cloud leaves the source's previous one in use (it goes stale in
   time); every case is counted and named in ``/diagnostics`` and a throttled warning;
2. its frame is resolved by TF in the world frame **at the cloud's stamp** (the node's TF
   source; the latest transform within ``transform_tolerance``); an unstamped cloud or a frame
   TF cannot resolve is refused the same way;
3. goes to the monitor (``monitor/obstacle_sources.py``: self filter, point set), which uses it
   from the next evaluation on; the node evaluates at once;
4. is drawn on ``~/markers`` (``ros/cloud_markers.py``: the points in use and those the self
   filter removed), while someone subscribes.
"""

from __future__ import annotations

import re
import time
from collections import deque

import numpy as np

from ambf_collision.monitor.obstacle_sources import SourceSpec
from ambf_collision.ros.node_parameters import SOURCE_PARAMETERS
from ambf_collision.ros.parameters import ConfigError, declare_parameters
from ambf_collision.ros.point_cloud import decode_cloud

__all__ = ["ObstacleIntake", "source_specs"]

_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


def source_specs(names, values: dict) -> list:
    """:class:`SourceSpec` per source name from the checked parameter values ``{"NAME.key":
    value}``; ConfigError naming the parameter for a bad combination."""
    specs = []
    for name in names:
        v = {key: values[f"{name}.{key}"] for key in SOURCE_PARAMETERS}
        if v["min_range"] > v["max_range"]:
            raise ConfigError(f"parameter {name}.min_range: {v['min_range']:g} m is above "
                              f"{name}.max_range {v['max_range']:g} m")
        if v["report_distance"] != -1.0 and v["report_distance"] < 0.0:
            raise ConfigError(f"parameter {name}.report_distance: must be -1 (use "
                              "environment_report_distance) or a distance >= 0 m, got "
                              f"{v['report_distance']!r}")
        specs.append(SourceSpec(name, v["point_radius"], v["voxel_size"], v["min_range"],
                                v["max_range"], v["source_timeout"], v["self_filter_padding"],
                                tuple(v["bodies"]), v["report_distance"]))
    return specs


class _Counts:
    """One source's running counts and its last cloud's note, for ``/diagnostics``."""

    def __init__(self):
        self.clouds = self.refused = self.truncated = 0
        self.last_refusal = ""
        self.last_note = None
        self.seconds = deque(maxlen=256)   # the last clouds' intake wall times (s)

    def took(self, seconds: float) -> None:
        """One cloud's intake: from its arrival to the end of the evaluation that used it."""
        self.seconds.append(seconds)

    def summary(self) -> str:
        text = f"{self.clouds} clouds"
        if self.last_note is not None and self.seconds:
            ms = np.array(self.seconds) * 1e3
            text += (f"; last: {self.last_note.text()}; intake to evaluation (last {len(ms)}) "
                     f"median {np.median(ms):.2f} ms, p99 {np.percentile(ms, 99):.2f} ms")
        if self.truncated:
            text += f"; {self.truncated} truncated"
        if self.refused:
            text += f"; {self.refused} refused (last: {self.last_refusal})"
        return text


class ObstacleIntake:
    """The obstacle sources of one node (module docstring). ``node``: the
    ``CollisionMonitorNode`` (its ``monitor``, ``tf``, ``world_frame``, ``now``,
    ``input_arrived``)."""

    def __init__(self, node, names):
        from rclpy.qos import qos_profile_sensor_data
        from sensor_msgs.msg import PointCloud2

        bad = [n for n in names if not _NAME.match(n)]
        if bad:
            raise ConfigError(f"parameter obstacle_sources: {bad[0]!r} is not a source name "
                              "(letters, digits and '_', starting with a letter)")
        if len(set(names)) != len(names):
            raise ConfigError(f"parameter obstacle_sources: names must be unique, got {names}")
        self.node = node
        table = {f"{n}.{key}": spec for n in names for key, spec in SOURCE_PARAMETERS.items()}
        self.values = declare_parameters(node, table)
        self.specs = source_specs(names, self.values)
        self.counts = {n: _Counts() for n in names}
        self._marker_due: dict = {}   # per source: perf_counter() from which markers may go out
        self._marker_writers: dict = {}   # per source: its CloudMarkerWriter (bytes, NumPy)
        self.subscriptions = []
        for n in names:
            topic = self.values[f"{n}.topic"] or n
            try:
                self.subscriptions.append(node.create_subscription(
                    PointCloud2, topic, lambda msg, source=n: self.on_cloud(source, msg),
                    qos_profile_sensor_data))
            except Exception as err:  # noqa: BLE001 - rclpy's invalid-name exceptions vary
                raise ConfigError(f"parameter {n}.topic: {topic!r} is not a valid topic name "
                                  f"({' '.join(str(err).split()[:12])})") from None

    def on_cloud(self, source: str, msg) -> None:
        """One ``PointCloud2`` of ``source`` (module docstring); never raises."""
        t0 = time.perf_counter()
        node, counts = self.node, self.counts[source]
        counts.clouds += 1
        cloud = decode_cloud(msg, int(self.values[f"{source}.max_points"]))
        reason = cloud.refused
        stamp = cloud.stamp.sec + cloud.stamp.nanosec * 1e-9
        if not reason and stamp == 0.0:
            reason = "unstamped (header.stamp 0): its pose cannot be known"
        pose = None
        if not reason:
            pose, why = node.tf.lookup(node.world_frame, cloud.frame_id, stamp)
            if pose is None:
                reason = f"TF of '{cloud.frame_id}' at {stamp:.3f} s: {why}"
        if not reason:
            if cloud.truncated_from:
                counts.truncated += 1
                node.get_logger().warning(
                    f"obstacle source {source}: cloud of {cloud.truncated_from} points truncated "
                    f"to its first {len(cloud.points)} ({source}.max_points)",
                    throttle_duration_sec=5.0)
            try:
                counts.last_note = node.monitor.on_cloud(source, cloud.points, pose, stamp,
                                                         node.now())
            except ValueError as err:   # the monitor refused it (a reload replaced the source)
                reason = str(err)
        if reason:
            counts.refused += 1
            counts.last_refusal = reason
            node.get_logger().warning(f"obstacle source {source}: cloud refused: {reason}",
                                      throttle_duration_sec=5.0)
            return
        node.input_arrived(t0)
        counts.took(time.perf_counter() - t0)
        self._offer_markers(source, cloud.stamp)

    def _offer_markers(self, source: str, stamp) -> None:
        """The source's cloud markers (``ros/cloud_markers.py``, serialized with NumPy), at most
        ``marker_rate`` per second and only while someone subscribes to ``~/markers``."""
        markers, now = self.node.markers, time.perf_counter()
        if now < self._marker_due.get(source, 0.0) or not markers.wanted():
            return
        self._marker_due[source] = now + markers.period
        writer = self._marker_writers.get(source)
        if writer is None or writer.frame != self.node.world_frame:
            from ambf_collision.ros.cloud_markers import CloudMarkerWriter

            writer = self._marker_writers[source] = CloudMarkerWriter(source,
                                                                      self.node.world_frame)
        src = self.node.monitor.obstacles.sources[source]
        markers.publish_other(writer.serialize(src.cloud.point_set.points, src.removed_points,
                                               stamp))

    def diagnostics(self) -> dict:
        """``{"source NAME": summary}`` per source."""
        return {f"source {n}": c.summary() for n, c in self.counts.items()}
