"""MessageTemplate: the bytes it fills are rclpy's serialization of the same message.

The oracle is rclpy: the message built directly with the numbers of the cycle, against the filled
bytes read back by ``deserialize_message`` (equal field by field, exactly) and the length of
``serialize_message`` (padding bytes are not compared: the serializer leaves them unset). For
random numbers, numbers that fill several slots, and the header stamps. Layouts it cannot patch
are refused.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("visualization_msgs.msg", reason="ROS 2 messages not importable: run via `make test`")
from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import Point  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from std_msgs.msg import ColorRGBA  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from ambf_collision.ros.message_template import MessageTemplate  # noqa: E402


def _array(v64, v32, stamp, points=3):
    """Two markers: the first's pose (7 float64) and colour (3 float32), the second's
    ``points`` points (float64) and the same colour again (one number, two slots)."""
    v64, v32 = np.asarray(v64).tolist(), np.asarray(v32).tolist()
    t = Time(sec=int(stamp[0]), nanosec=int(stamp[1]))
    a = Marker(ns="shapes/a body", id=3, type=Marker.CUBE)
    a.header.stamp, a.header.frame_id = t, "world"
    p = a.pose
    p.position.x, p.position.y, p.position.z = v64[0:3]
    p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w = v64[3:7]
    a.scale.x = 0.25  # a static number: never patched
    a.color = ColorRGBA(r=v32[0], g=v32[1], b=v32[2], a=0.6)
    b = Marker(ns="x=y", id=1, type=Marker.SPHERE_LIST)
    b.header.stamp, b.header.frame_id = t, "world"
    b.points = [Point(x=v64[7 + 3 * i], y=v64[8 + 3 * i], z=v64[9 + 3 * i]) for i in range(points)]
    b.color = ColorRGBA(r=v32[0], g=v32[1], b=v32[2], a=1.0)
    return MarkerArray(markers=[a, b])


def _same(raw: bytes, msg) -> bool:
    """``raw`` reads back as ``msg`` does once rclpy serialized it (float32 fields rounded)."""
    ref = serialize_message(msg)
    return len(raw) == len(ref) and \
        deserialize_message(raw, MarkerArray) == deserialize_message(ref, MarkerArray)


def test_filled_bytes_are_rclpys_serialization_of_the_same_message():
    rng = np.random.default_rng(7)
    template = MessageTemplate(_array, 16, 3)
    assert template.stamps == 2  # both headers
    for _ in range(20):
        v64 = rng.normal(scale=3.0, size=16)
        v32 = rng.random(3).astype(np.float32)
        sec, nanosec = int(rng.integers(0, 2**31 - 1)), int(rng.integers(0, 10**9))
        assert _same(template.fill(v64, v32, sec, nanosec), _array(v64, v32, (sec, nanosec)))


def test_extreme_and_zero_numbers_fill_exactly():
    template = MessageTemplate(_array, 16, 3)
    v64 = np.array([0.0, -0.0, 5e-324, 1.7e308, -1.7e308, 2.0**40, 2.0**40 + 1] + [1e-300] * 9)
    v32 = np.array([0.0, 1.0, 2.0**23], np.float32)  # the float32 sentinel base itself
    raw = template.fill(v64, v32, 0, 0)
    assert _same(raw, _array(v64, v32, (0, 0)))
    back = deserialize_message(raw, MarkerArray).markers[0].pose.position
    assert np.signbit(back.y) and back.z == 5e-324  # the sign of -0.0 and a subnormal kept


def test_a_layout_that_changes_with_the_numbers_is_refused():
    def unstable(v64, v32, stamp):  # the point count follows a number
        return _array(v64, v32, stamp, points=3 if v64[0] == 0 else 2)

    with pytest.raises(ValueError, match="layout changed"):
        MessageTemplate(unstable, 16, 3)


def test_a_number_the_message_does_not_carry_is_refused():
    with pytest.raises(ValueError, match="16 of 17 float64"):
        MessageTemplate(lambda v64, v32, s: _array(v64, v32, s, points=3), 17, 3)


def test_a_number_derived_from_another_is_refused_by_the_read_back():
    """The scale written as ``v64[0] + 1`` holds the sentinel of number 1 in the marked build,
    so it is found as a slot of number 1, and a fill would write ``v64[1]`` there: the read-back
    against the message built directly must catch it, whatever offset is drawn."""
    def derived(v64, v32, stamp):
        msg = _array(v64, v32, stamp)
        msg.markers[0].scale.x = float(v64[0]) + 1.0
        return msg

    with pytest.raises(ValueError, match="did not read back"):
        MessageTemplate(derived, 16, 3)


def test_every_accepted_template_reads_back_with_its_own_numbers():
    """Many templates of one message (a new offset each): each fills to rclpy's serialization
    of the message with a fixed set of numbers, including the ``2**40 + k`` values that the
    sentinels of some draw would use."""
    v64 = 2.0 ** 40 + np.arange(16.0)
    v32 = np.array([0.25, 0.5, 1.0], np.float32)
    for _ in range(25):
        raw = MessageTemplate(_array, 16, 3).fill(v64, v32, 12, 34)
        assert _same(raw, _array(v64, v32, (12, 34)))
