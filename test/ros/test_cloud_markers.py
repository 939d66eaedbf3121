"""Cloud markers written with NumPy (ambf_collision.ros.cloud_markers.CloudMarkerWriter) against
rclpy's own serialization of the same MarkerArray (``cloud_markers``), in every shape (either
marker empty), every string length (each shifts the fields' alignment), over the point limit,
and with points a rounding step apart from each other."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from visualization_msgs.msg import MarkerArray  # noqa: E402

from ambf_collision.ros.cloud_markers import CloudMarkerWriter, cloud_markers  # noqa: E402


def _rclpy(name, in_use, removed, frame, stamp, limit=2000) -> MarkerArray:
    """What a subscriber reads of rclpy's serialization of :func:`cloud_markers`."""
    return deserialize_message(serialize_message(cloud_markers(name, in_use, removed, frame, stamp,
                                                               limit)), MarkerArray)


def _drawn(n: int, limit: int = 2000) -> int:
    """Points drawn of n: every k-th, k the smallest stride leaving at most ``limit``."""
    stride = max(1, -(-n // limit))
    return len(range(0, n, stride))


@pytest.mark.parametrize("name, frame", [("c", "w"), ("cam", "world"), ("camera_1", "map"),
                                         ("stereo", "odom_frame"), ("lidar_top_x", "base")])
def test_every_shape_and_string_length_reads_back_as_rclpys_bytes(name, frame):
    rng = np.random.default_rng(len(name) + 7 * len(frame))
    writer = CloudMarkerWriter(name, frame)
    for n_use, n_removed in ((40, 9), (40, 0), (0, 9), (0, 0), (1, 1), (5000, 2500), (3, 4001)):
        in_use, removed = rng.normal(size=(n_use, 3)), rng.normal(size=(n_removed, 3))
        stamp = Time(sec=int(rng.integers(0, 2**31)), nanosec=int(rng.integers(0, 10**9)))
        got = deserialize_message(writer.serialize(in_use, removed, stamp), MarkerArray)
        assert got == _rclpy(name, in_use, removed, frame, stamp), (n_use, n_removed)
        assert [len(m.points) for m in got.markers] == [_drawn(n_use), _drawn(n_removed)]


def test_points_keep_every_bit_and_the_stride_follows_the_limit():
    writer = CloudMarkerWriter("camera", "world", limit=7)
    x = 1.0 + np.arange(30) * np.finfo(float).eps   # neighbours one rounding step apart
    in_use = np.column_stack([x, -x, x * 1e-300])
    got = deserialize_message(writer.serialize(in_use, in_use[:2], Time(sec=1)), MarkerArray)
    sent = in_use[::5]   # 30 points, at most 7: every 5th
    assert [(p.x, p.y, p.z) for p in got.markers[0].points] == [tuple(r) for r in sent.tolist()]
    assert len(got.markers[1].points) == 2
    assert got == _rclpy("camera", in_use, in_use[:2], "world", Time(sec=1), limit=7)


def test_a_later_stamp_and_count_replace_the_earlier_ones():
    writer = CloudMarkerWriter("camera", "world")
    rng = np.random.default_rng(3)
    first = writer.serialize(rng.normal(size=(50, 3)), rng.normal(size=(4, 3)), Time(sec=9))
    pts = rng.normal(size=(8, 3))
    second = deserialize_message(writer.serialize(pts, pts[:1], Time(sec=10, nanosec=5)),
                                 MarkerArray)
    assert [m.header.stamp.sec for m in second.markers] == [10, 10]
    assert [m.header.stamp.nanosec for m in second.markers] == [5, 5]
    assert [len(m.points) for m in second.markers] == [8, 1]
    assert deserialize_message(first, MarkerArray).markers[0].header.stamp.sec == 9
