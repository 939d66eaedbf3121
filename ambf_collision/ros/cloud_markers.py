"""RViz markers of the obstacle sources' clouds, on the node's ``~/markers``.

Per source ``NAME`` one ``visualization_msgs/MarkerArray`` with two POINTS markers in the world
frame, namespace ``source/NAME``: id 0 the points in use (light blue), id 1 the points the self
filter removed as the robot's own image (orange). At most ``limit`` points each, an even stride
over the cloud (a view, not the data). Published after each cloud, at most ``marker_rate`` per
second per source and only while someone subscribes (``ros/obstacle_intake.py``).

:func:`cloud_markers` builds the message as rclpy objects: a ``geometry_msgs/Point`` per point,
6 ms for two markers of 2,000 points and 3 ms more to serialize them (2026-12-07), which at
20 Hz kept the executor from a 1 kHz joint-state stream long enough to lose states.
:class:`CloudMarkerWriter` writes the same bytes with NumPy (tens of microseconds): rclpy
serializes the array once per shape (each marker with no point or one sentinel point), and each
cloud's points are spliced in where the sentinel's 24 bytes were, behind its sequence length.
A point is three float64 (24 bytes), so every later field keeps its 8-byte alignment; an empty
marker keeps rclpy's own layout. Each shape is checked once against rclpy: the spliced bytes of
random points must read back (``deserialize_message``) as rclpy's serialization of
:func:`cloud_markers`' message does.
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from rclpy.serialization import deserialize_message, serialize_message
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ambf_collision.ros.marker_geometry import ORANGE

__all__ = ["IN_USE", "CloudMarkerWriter", "cloud_markers"]

IN_USE = (0.45, 0.75, 1.0)   # light blue: the points an evaluation uses
POINT_SIZE = 0.004           # m: drawn size of a point (its ball may be smaller)


def _sample(points: np.ndarray, limit: int) -> np.ndarray:
    """At most ``limit`` rows of ``points (n,3)``: an even stride (a view)."""
    return points[::max(1, -(-len(points) // limit))]


def _points(points: np.ndarray, limit: int) -> list:
    return [Point(x=x, y=y, z=z) for x, y, z in _sample(points, limit).tolist()]


def cloud_markers(name: str, in_use: np.ndarray, removed: np.ndarray, frame: str, stamp: Time,
                  limit: int = 2000) -> MarkerArray:
    """The markers of source ``name``: ``in_use (n,3)`` and ``removed (m,3)`` points (m, world)."""
    out = MarkerArray()
    for marker_id, (points, rgb) in enumerate(((in_use, IN_USE), (removed, ORANGE))):
        mk = Marker(ns=f"source/{name}", id=marker_id, type=Marker.POINTS, action=Marker.ADD)
        mk.header.frame_id, mk.header.stamp = frame, stamp
        mk.pose.orientation.w = 1.0
        mk.scale.x = mk.scale.y = POINT_SIZE
        mk.color = ColorRGBA(r=rgb[0], g=rgb[1], b=rgb[2], a=1.0)
        mk.points = _points(points, limit)
        out.markers.append(mk)
    return out


_SENTINEL = np.array([[1.2345678901e7, -2.3456789012e7, 3.4567890123e7],
                      [-4.5678901234e7, 5.6789012345e7, -6.7890123456e7]])   # m: never a point
_STAMP = Time(sec=1_515_151_515, nanosec=515_151_515)


class _Shape:
    """The serialized array for one pair (marker 0 has points, marker 1 has points): the bytes
    around each non-empty marker's sentinel point, and where the stamps are."""

    def __init__(self, name: str, frame: str, filled: tuple):
        fake = [_SENTINEL[m:m + 1] if filled[m] else np.zeros((0, 3)) for m in range(2)]
        raw = serialize_message(cloud_markers(name, fake[0], fake[1], frame, _STAMP))
        if raw[:2] != b"\x00\x01":
            raise RuntimeError("cloud markers: rclpy's serializer is not little-endian CDR")
        self.pieces, self.lengths = [], []   # bytes between the splices; where each count goes
        start = 0
        for m in range(2):
            if not filled[m]:
                continue
            at = raw.find(_SENTINEL[m].astype("<f8").tobytes(), start)
            # the count (1) right before the point, or before 4 bytes of padding; in the first
            # case the byte 8 before is frame_locked (False), so the order of the tests decides
            count = at - 8 if raw[at - 8:at - 4] == b"\x01\x00\x00\x00" else at - 4
            if at < 0 or raw[count:count + 4] != b"\x01\x00\x00\x00":
                raise RuntimeError("cloud markers: the sentinel point was not found once")
            self.pieces.append(bytearray(raw[start:at]))
            self.lengths.append(count - start)   # the count's offset in its piece
            start = at + 24
        self.pieces.append(bytearray(raw[start:]))
        stamp = np.array([_STAMP.sec, _STAMP.nanosec], "<u4").tobytes()
        self.stamps = [(i, j) for i, piece in enumerate(self.pieces)
                       for j in _all(piece, stamp)]
        if len(self.stamps) != 2:
            raise RuntimeError(f"cloud markers: {len(self.stamps)} stamps found, not 2")

    def write(self, samples, stamp) -> bytes:
        """The array's bytes with these points (one (n,3) array per non-empty marker)."""
        for i, j in self.stamps:
            self.pieces[i][j:j + 8] = np.array([stamp.sec, stamp.nanosec], "<u4").tobytes()
        out = []
        for piece, count, points in zip(self.pieces, self.lengths, samples):
            piece[count:count + 4] = len(points).to_bytes(4, "little")
            out += [piece, np.ascontiguousarray(points, "<f8").tobytes()]
        out.append(self.pieces[-1])
        return b"".join(out)


def _all(data: bytearray, pattern: bytes) -> list:
    found, at = [], data.find(pattern)
    while at >= 0:
        found.append(at)
        at = data.find(pattern, at + 1)
    return found


class CloudMarkerWriter:
    """:func:`cloud_markers` of one source as serialized bytes, for ``publisher.publish(bytes)``
    (module docstring). Each of the four shapes (either marker empty or not) is made and checked
    against rclpy on first use; RuntimeError if the bytes would not read back."""

    def __init__(self, name: str, frame: str, limit: int = 2000):
        self.name, self.frame, self.limit = name, frame, int(limit)
        self._shapes: dict = {}

    def serialize(self, in_use: np.ndarray, removed: np.ndarray, stamp: Time) -> bytes:
        """The markers of ``in_use (n,3)`` and ``removed (m,3)`` points (m, world) at ``stamp``."""
        samples = [_sample(np.asarray(p, np.float64).reshape(-1, 3), self.limit)
                   for p in (in_use, removed)]
        filled = (len(samples[0]) > 0, len(samples[1]) > 0)
        if filled not in self._shapes:
            shape = _Shape(self.name, self.frame, filled)
            self._check(shape, filled)
            self._shapes[filled] = shape
        return self._shapes[filled].write([p for p in samples if len(p)], stamp)

    def _check(self, shape: _Shape, filled: tuple) -> None:
        rng = np.random.default_rng(len(self._shapes))
        points = [rng.uniform(-2.0, 2.0, (int(f) * (3 + 2 * m), 3)) for m, f in enumerate(filled)]
        stamp = Time(sec=12, nanosec=345_678_901)
        raw = shape.write([p for p in points if len(p)], stamp)
        built = cloud_markers(self.name, points[0], points[1], self.frame, stamp, self.limit)
        if deserialize_message(raw, MarkerArray) != deserialize_message(serialize_message(built),
                                                                  MarkerArray):
            raise RuntimeError("cloud markers: the spliced bytes do not read back as rclpy's")
