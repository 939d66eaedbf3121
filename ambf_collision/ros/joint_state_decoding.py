"""The fields the node reads from a serialized ``sensor_msgs/JointState`` (its raw subscription),
read from the CDR bytes without building the Python message (rclpy's conversion costs ~25 us).

- :func:`decode_joint_state`: names, positions and stamp of one message;
- :class:`JointStateDecoder`: the same for one stream of messages, reusing the names of the last
  message when its name block is the same bytes, and reading ``velocity`` on request.

A message naming more than :data:`MAX_JOINT_NAMES` joints raises :class:`JointStateTooLarge`
unread (its cost stays bounded); truncated or malformed data raises ``ValueError``; another
encapsulation than little-endian CDR gives None (the caller then uses rclpy's deserializer).
"""

from __future__ import annotations

import struct

import numpy as np

from ambf_collision.ros.cdr import HEAD, U32

__all__ = ["MAX_JOINT_NAMES", "JointStateTooLarge", "decode_joint_state", "JointStateDecoder"]

MAX_JOINT_NAMES = 10_000  # names read from one JointState: beyond, refused unread (bounded time)


class JointStateTooLarge(ValueError):
    """A ``JointState`` naming more than :data:`MAX_JOINT_NAMES` joints (not read)."""


def decode_joint_state(data: bytes):
    """``(names list, positions float64 array, sec, nanosec)`` of a serialized
    ``sensor_msgs/JointState`` in little-endian CDR (encapsulation ``00 01``), read as far as
    ``position``; None for any other encapsulation (the caller then uses rclpy's deserializer).
    Raises ``ValueError`` (``UnicodeDecodeError`` for bad UTF-8) for truncated or malformed data.

    Layout after the 4-byte encapsulation (offsets from the body start): int32 sec, uint32
    nanosec, frame_id (uint32 length with the NUL, bytes, NUL), uint32 name count (4-aligned),
    each name a 4-aligned string, uint32 position count (4-aligned), float64s (8-aligned)."""
    if data[:2] != b"\x00\x01":
        return None
    try:
        return _decode_joint_state_le(memoryview(data)[4:])
    except struct.error as err:  # read past the end
        raise ValueError(f"truncated JointState: {err}") from None


class JointStateDecoder:
    """:func:`decode_joint_state` for one stream of joint states: a publisher repeats the same
    names every message, so the serialized name block of the last message is kept and, when the
    next one carries the same bytes at the same (4-aligned) place, its names are reused instead
    of decoded again (5 names: ~4 us). Same results and errors as :func:`decode_joint_state`."""

    def __init__(self):
        self._names = [b"", ()]  # [serialized name block, its names]

    def decode(self, data: bytes, velocity: bool = False):
        """``velocity``: also return the ``velocity`` array (after the stamp: ``(names,
        positions, sec, nanosec, velocities)``; empty when the message has none)."""
        if data[:2] != b"\x00\x01":
            return None
        try:
            return _decode_joint_state_le(memoryview(data)[4:], self._names, velocity)
        except struct.error as err:  # read past the end
            raise ValueError(f"truncated JointState: {err}") from None


def _decode_joint_state_le(body, names_cache=None, velocity=False):
    """``names_cache``: ``[block bytes, names tuple]`` of an earlier message, reused when this
    message's name block (count and strings) is the same bytes; updated otherwise.
    ``velocity``: read the ``velocity`` sequence too (5th value)."""
    sec, nanosec = HEAD.unpack_from(body, 0)
    (n,) = U32.unpack_from(body, 8)
    off = 12 + n  # past frame_id
    if n == 0 or off > len(body) or body[off - 1] != 0:
        raise ValueError("malformed JointState.header.frame_id")
    off += -off % 4
    if names_cache is not None:
        block = names_cache[0]
        if block and body[off:off + len(block)] == block:
            names = list(names_cache[1])
            off += len(block)
        else:
            start = off
            names, off = _decode_names(body, off)
            names_cache[:] = [bytes(body[start:off]), tuple(names)]
    else:
        names, off = _decode_names(body, off)
    off += -off % 4
    positions, off = _float64s(body, off, "position")
    if not velocity:
        return names, positions, sec, nanosec
    off += -off % 4
    return names, positions, sec, nanosec, _float64s(body, off, "velocity")[0]


def _float64s(body, off, field):
    """The float64 sequence whose count is at body offset ``off`` (4-aligned) and the offset
    past it. The values are 8-aligned; an empty sequence has no alignment padding (as Fast
    CDR writes it)."""
    (count,) = U32.unpack_from(body, off)
    off += 4
    if count:
        off += -off % 8
    if off + 8 * count > len(body):
        raise ValueError(f"JointState.{field} runs past the end of the data")
    return np.frombuffer(body, "<f8", count, off), off + 8 * count


def _decode_names(body, off):
    """The ``name`` sequence at body offset ``off`` (4-aligned) and the offset past it."""
    names = []
    (count,) = U32.unpack_from(body, off)
    if count > MAX_JOINT_NAMES:
        raise JointStateTooLarge(f"{count} joint names (more than {MAX_JOINT_NAMES}): not read")
    off += 4
    for _ in range(count):
        off += -off % 4
        (n,) = U32.unpack_from(body, off)
        if n == 0 or off + 4 + n > len(body) or body[off + 3 + n] != 0:
            raise ValueError("malformed string in JointState.name")
        names.append(str(body[off + 4:off + 3 + n], "utf-8"))
        off += 4 + n
    return names, off
