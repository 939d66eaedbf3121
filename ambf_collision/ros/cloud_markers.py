"""RViz markers of the obstacle sources' clouds, on the node's ``~/markers``.

Per source ``NAME`` one ``visualization_msgs/MarkerArray`` with two POINTS markers in the world
frame, namespace ``source/NAME``: id 0 the points in use (light blue), id 1 the points the self
filter removed as the robot's own image (orange). At most ``limit`` points each (2,000: about
2 ms to build in Python), an even stride over the cloud (a view, not the data). Published after each cloud, at most ``marker_rate`` per
second per source and only while someone subscribes (``ros/obstacle_intake.py``).
"""

from __future__ import annotations

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ambf_collision.ros.marker_geometry import ORANGE

__all__ = ["IN_USE", "cloud_markers"]

IN_USE = (0.45, 0.75, 1.0)   # light blue: the points an evaluation uses
POINT_SIZE = 0.004           # m: drawn size of a point (its ball may be smaller)


def _points(points: np.ndarray, limit: int) -> list:
    stride = max(1, -(-len(points) // limit))
    return [Point(x=x, y=y, z=z) for x, y, z in points[::stride].tolist()]


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
