"""Serialized JointState -> names, positions, stamp, velocities (ambf_collision.ros.joint_state_decoding),
against rclpy's own deserializer."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")

from ambf_collision.ros.joint_state_decoding import JointStateDecoder, decode_joint_state  # noqa: E402


def _joint_states(rng):
    """JointState messages with odd contents: every name and frame length modulo 4 and 8,
    non-ASCII names, empty lists, more names than positions and the reverse, velocity and
    effort present or not, non-finite / signed-zero / subnormal / huge positions, extreme
    stamps."""
    from sensor_msgs.msg import JointState

    odd = [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7e308, 0.1]
    for k in range(60):
        js = JointState()
        js.header.frame_id = "f" * (k % 11)
        js.header.stamp.sec = [0, 1, -2**31, 2**31 - 1][k % 4]
        js.header.stamp.nanosec = [0, 999_999_999, 2**32 - 1, 123][k // 4 % 4]
        n = k % 7
        js.name = [("ä" if (i + k) % 5 == 0 else "j") * ((i + k) % 10) + str(i) for i in range(n)]
        m = max(0, n + (k % 3) - 1)  # one fewer, as many, one more than names
        js.position = [odd[(i + k) % len(odd)] if k % 2 else float(rng.normal()) for i in range(m)]
        if k % 4 == 1:
            js.velocity = [1.0] * (k % 5)
            js.effort = [2.0] * (k % 3)
        yield js


def test_decode_joint_state_equals_rclpy_deserialization():
    """decode_joint_state reads from the serialized bytes exactly the names, positions (bit for
    bit) and stamp that rclpy's own deserializer gives."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    for js in _joint_states(np.random.default_rng(3)):
        raw = serialize_message(js)
        ref = deserialize_message(raw, JointState)
        names, positions, sec, nanosec = decode_joint_state(raw)
        assert names == list(ref.name)
        assert positions.dtype == np.float64
        assert positions.tobytes() == np.asarray(ref.position, np.float64).tobytes()
        assert (sec, nanosec) == (ref.header.stamp.sec, ref.header.stamp.nanosec)


def test_joint_state_decoder_equals_rclpy_with_repeated_and_changed_names():
    """The decoder of a stream (names reused when the name block repeats) reads what rclpy's
    deserializer gives for every message of a stream mixing repeats, changed names (same count,
    other lengths), other frame lengths (the block moved) and odd messages; truncated and
    malformed data raise as decode_joint_state does and leave the next message right."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    rng = np.random.default_rng(5)
    odd = list(_joint_states(np.random.default_rng(3)))
    stream = []
    for k in range(200):
        names = [["a", "bb", "c"], ["a", "bb", "d"], ["a", "b", "cc"], ["x"]][int(rng.integers(4))]
        js = JointState(name=names, position=rng.normal(size=len(names)).tolist())
        js.header.frame_id = "f" * int(rng.integers(0, 3))
        js.header.stamp.sec, js.header.stamp.nanosec = k, 7 * k
        stream += [js] * int(rng.integers(1, 3)) + ([odd[k]] if k < len(odd) and k % 3 == 0 else [])
    dec = JointStateDecoder()
    for js in stream:
        raw = serialize_message(js)
        ref = deserialize_message(raw, JointState)
        names, positions, sec, nanosec = dec.decode(raw)
        assert names == list(ref.name)
        assert positions.tobytes() == np.asarray(ref.position, np.float64).tobytes()
        assert (sec, nanosec) == (ref.header.stamp.sec, ref.header.stamp.nanosec)
    raw = serialize_message(JointState(name=["a", "bb"], position=[0.5, 0.25]))
    assert dec.decode(raw)[0] == ["a", "bb"]
    assert dec.decode(b"\x00\x00" + raw[2:]) is None
    broken = bytearray(raw)
    broken[raw.index(b"bb") + 2] = 0x41  # the second name's NUL overwritten
    for bad in (bytes(broken), raw[:56], raw[:20]):  # NUL gone, position cut, name cut
        with pytest.raises(ValueError):
            dec.decode(bad)
        assert dec.decode(raw)[0] == ["a", "bb"] and dec.decode(raw)[1].tolist() == [0.5, 0.25]


def test_decode_joint_state_refuses_other_encodings_and_malformed_data():
    """Other encapsulations -> None (the node then asks rclpy); truncated or malformed data ->
    ValueError, never a crash or a silently wrong result."""
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    js = JointState(name=["a", "bb"], position=[0.5, 0.25])
    raw = serialize_message(js)
    assert decode_joint_state(b"\x00\x00" + raw[2:]) is None  # big endian
    assert decode_joint_state(b"\x00\x07" + raw[2:]) is None  # XCDR2 / anything else
    for cut in range(len(raw) - 1):
        data = raw[:cut]
        try:
            got = decode_joint_state(data)
        except ValueError:
            continue
        # a prefix that still holds names and positions must give exactly them
        assert got is None or (got[0] == ["a", "bb"] and got[1].tolist() == [0.5, 0.25])
    broken = bytearray(raw)
    broken[raw.index(b"bb") + 2] = 0x41  # the second name's NUL overwritten
    with pytest.raises(ValueError):
        decode_joint_state(bytes(broken))


def test_decode_joint_state_velocities_equal_rclpy():
    """JointStateDecoder(velocity=True) reads the velocity list bit for bit as rclpy does
    (empty, shorter or longer than the names, non-finite)."""
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    dec = JointStateDecoder()
    for js in _joint_states(np.random.default_rng(5)):
        if len(js.name) % 2:
            js.velocity = [math.nan, 0.5, -1e300, 2.0][: len(js.name) + 1]
        raw = serialize_message(js)
        ref = deserialize_message(raw, JointState)
        names, positions, sec, nanosec, velocities = dec.decode(raw, velocity=True)
        assert names == list(ref.name)
        assert velocities.tobytes() == np.asarray(ref.velocity, np.float64).tobytes()
        assert positions.tobytes() == np.asarray(ref.position, np.float64).tobytes()
