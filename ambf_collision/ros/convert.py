"""Core results -> ROS messages, with as little per-field Python work as possible.

- :func:`stamp_msg`: seconds (float) -> ``builtin_interfaces/Time``; :class:`Stamp`: (sec, nanosec)
  for the serializers.
- :class:`ContactArrayWriter`: fills one reused ``ContactArray`` from a ``MonitorOutput``
  (contacts built through the generated constructors from each contact row's values).
- :class:`ProbeArrayWriter`: one ``ProbeArray`` whose ``ProbeState`` objects are created once per
  probe set (names and bodies fixed) and whose numbers are refreshed per cycle from the probe
  result arrays (``tolist()`` once per array, never per element through NumPy scalars).
- :class:`ContactArraySerializer`: the ``ContactArray`` of :class:`ContactArrayWriter` directly as
  serialized CDR bytes (rclpy's conversion of the message object costs more than writing them).
- :class:`ProbeArraySerializer`: the same ``ProbeArray`` directly as serialized CDR bytes for
  ``publisher.publish(bytes)``, refreshed in place with NumPy (256 probes: ~20 us instead of
  ~130 us filling plus ~750 us of rclpy's per-field conversion when publishing the message).

Controller outputs (issue 13): each ``Contact`` carries its distance Jacobian (one value per
joint, ``ContactArray.joint_names`` order), ``distance_rate`` and the witnesses in their bodies'
frames; ``ProbeArray.patches`` one ``PatchState`` per probe patch. The writers and the
serializers write the same values.

Everything is in the world frame (``frame_id``), metres, newtons, square metres. Messages never
carry NaN: the monitor keeps only contacts whose row is finite (``monitor/sanitize.py``); the
probe writers map any remaining non-finite value to 0, and ``min_distance`` is +inf when it is
not a number ("beyond range" / "nothing checked").
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3

from ambf_collision.model.contact_rows import (CONTROLLER_VALUES, GEOMETRY_VALUES, contact_columns,
                                               contact_row)
from ambf_collision.msg import Contact, ContactArray
from ambf_collision.ros.cdr import U32, align, cdr_string, message_distance
from ambf_collision.ros.convert_probes import (ProbeArraySerializer, ProbeArrayWriter,  # noqa: F401
                                              patch_values)

__all__ = ["stamp_msg", "stamp_parts", "contact_steps", "ContactArrayWriter",
           "ContactArraySerializer", "ProbeArrayWriter",
           "ProbeArraySerializer"]

class Stamp(NamedTuple):
    """A header stamp as the serializers read it (``sec``, ``nanosec``): the node hands them the
    joint state's own stamp without building a ``builtin_interfaces/Time`` message for it (its
    constructor's checks cost ~2 us warm, ~8 us with cold caches, every cycle). The serializers
    take a ``Time`` as well."""

    sec: int
    nanosec: int


def stamp_parts(seconds: float) -> tuple:
    """``(sec, nanosec)`` of ``seconds``, to the nearest nanosecond (negative or non-finite ->
    ``(0, 0)``)."""
    if not (math.isfinite(seconds) and seconds > 0.0):
        return 0, 0
    return divmod(int(round(seconds * 1e9)), 1_000_000_000)


def stamp_msg(seconds: float) -> Time:
    """``builtin_interfaces/Time`` of ``seconds`` (>= 0; negative or non-finite -> 0)."""
    sec, nanosec = stamp_parts(seconds)
    return Time(sec=sec, nanosec=nanosec)


def contact_steps(out, stamps=None) -> tuple:
    """``(swept, stamps)`` per contact of ``out`` as lists: ``contact_swept`` (bool) and the
    times of contact as ``(sec, nanosec)``: ``stamps`` when given (the node's, exact from the
    stamps' integer nanoseconds), else ``contact_times`` (s; 0: none) converted; all false
    and ``(0, 0)`` for an output without them."""
    n = len(out.contact_info)
    swept, times = getattr(out, "contact_swept", None), getattr(out, "contact_times", None)
    if swept is None or len(swept) != n:
        return [False] * n, [(0, 0)] * n
    return swept.tolist(), (stamps if stamps is not None else
                            [stamp_parts(t) for t in times.tolist()])


def _joint_names(out) -> list:
    return [str(n) for n in getattr(out, "joint_names", None) or ()]


class ContactArrayWriter:
    """One reused ``ContactArray``; :meth:`fill` writes a cycle's output into it (the
    messages the node publishes when :class:`ContactArraySerializer` does not match this rmw's
    serialization, and the reference the serializer is checked against)."""

    def __init__(self, world_frame: str):
        self.msg = ContactArray()
        self.msg.header.frame_id = world_frame
        self._names_from = None  # the joint_names list last converted

    def fill(self, out, stamp: Time, contact_stamps=None) -> ContactArray:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked,
        contact_info, contact_rows, contact_swept, contact_times, joint_names,
        velocities_given); ``contact_stamps``: the times of contact as ``(sec, nanosec)``
        (:func:`contact_steps`)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(out.status)
        m.min_distance = message_distance(float(out.min_distance))
        m.pairs_checked = int(out.pairs_checked)
        names = getattr(out, "joint_names", None) or []
        if names is not self._names_from:  # the model's list: converted once per model
            self._names_from, m.joint_names = names, _joint_names(out)
        m.velocities_given = bool(getattr(out, "velocities_given", False))
        m.status_message = str(getattr(out, "reason", ""))
        m.contacts = [contact_msg(who, row, swept, t) for who, row, swept, t in
                      zip(out.contact_info, out.contact_rows, *contact_steps(out, contact_stamps))]
        return m


def contact_msg(who, row, swept: bool = False, time_of_contact=(0, 0)) -> Contact:
    """A ``Contact`` message of one contact: ``who`` its ``(body_1, body_2, shape_1,
    shape_2)``, ``row`` its values (``model/contact_rows.py``), ``swept`` and
    ``time_of_contact`` (``(sec, nanosec)``; ``(0, 0)``: none) its continuous-collision
    fields."""
    c = contact_columns(np.asarray(row, dtype=float))
    p1, p2, pos, n, l1, l2 = (v.tolist() for v in (c.point_1, c.point_2, c.position, c.normal,
                                                   c.point_1_local, c.point_2_local))
    return Contact(
        body_1=str(who[0]), body_2=str(who[1]), shape_1=int(who[2]), shape_2=int(who[3]),
        distance=float(c.distance), point_1=Point(x=p1[0], y=p1[1], z=p1[2]),
        point_2=Point(x=p2[0], y=p2[1], z=p2[2]), position=Point(x=pos[0], y=pos[1], z=pos[2]),
        normal=Vector3(x=n[0], y=n[1], z=n[2]), jacobian=c.jacobian.tolist(),
        distance_rate=float(c.distance_rate), point_1_local=Point(x=l1[0], y=l1[1], z=l1[2]),
        point_2_local=Point(x=l2[0], y=l2[1], z=l2[2]), swept=bool(swept),
        time_of_contact=Time(sec=time_of_contact[0], nanosec=time_of_contact[1]))


# ----------------------------------------------------------------------------- raw CDR contacts


_SHAPES = struct.Struct("<ii")
_STEP = struct.Struct("<?3xiI")  # swept, padding, time_of_contact (sec, nanosec)


class ContactArraySerializer:
    """A ``ContactArray`` as the serialized bytes rclpy publishes raw (``publisher.publish(bytes)``),
    with the values :class:`ContactArrayWriter` puts in the message.

    Layout: CDR little endian (encapsulation ``00 01 00 00``, then the body; alignment counted
    from the body start): header (stamp, frame_id), status, min_distance, pairs_checked, the
    contact count, then per contact body_1, body_2 (4-aligned strings), shape_1, shape_2,
    distance and the four 3-vectors (8-aligned), the Jacobian (uint32 count, float64s
    8-aligned), distance_rate, point_1_local, point_2_local, swept (one byte), time_of_contact
    (4-aligned sec, nanosec); then joint_names (uint32 count,
    4-aligned strings), velocities_given (one byte) and status_message (a 4-aligned string).
    Padding bytes are zero.

    A contact is its pair's bytes up to the distance (names, shapes, padding: encoded once per
    pair and start offset modulo 8, and cached), then its row's bytes (``model/contact_rows.py``
    is the message's order) with the Jacobian's count after the 13 geometry values."""

    ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR_LE

    def __init__(self, world_frame: str):
        frame = cdr_string(world_frame)
        self._frame = frame
        self._status_off = 8 + len(frame)
        self._md_off = align(self._status_off + 1, 8)
        # the fixed part in one pack: stamp, frame_id, status, padding, min_distance,
        # pairs_checked, contact count ('<': no implicit alignment)
        self._head = struct.Struct(
            f"<iI{len(frame)}sB{self._md_off - self._status_off - 1}xdII")
        self._prefixes: dict = {}
        self._names_from, self._names_bytes = None, b""  # joint_names list and its CDR
        self._reason, self._reason_cdr = "", cdr_string("")  # status_message and its CDR

    def _prefix(self, who, offset: int) -> bytes:
        """A contact's bytes before its distance: ``who`` = ``(body_1, body_2, shape_1,
        shape_2)``, the contact starting at body ``offset`` (4-aligned); ends 8-aligned."""
        key = (who, offset & 7)
        b = self._prefixes.get(key)
        if b is None:
            if len(self._prefixes) >= 4096:
                self._prefixes.clear()
            block = bytearray(offset & 7)  # stand-in for the bytes before, for the alignment
            block += cdr_string(str(who[0]))
            block += bytes(-len(block) % 4)
            block += cdr_string(str(who[1]))
            block += bytes(-len(block) % 4)
            block += _SHAPES.pack(int(who[2]), int(who[3]))
            block += bytes(-len(block) % 8)
            b = self._prefixes[key] = bytes(block[offset & 7:])
        return b

    def _names_block(self, out) -> bytes:
        """``joint_names`` as CDR (count, then 4-aligned strings; starting 4-aligned), encoded
        once per list (the model's list object)."""
        names = getattr(out, "joint_names", None) or []
        if names is not self._names_from:
            block = bytearray(U32.pack(len(names)))
            for name in _joint_names(out):
                block += bytes(-len(block) % 4)
                block += cdr_string(name)
            self._names_from, self._names_bytes = names, bytes(block)
        return self._names_bytes

    def serialize(self, out, stamp: Time, contact_stamps=None) -> bytes:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked,
        contact_info and contact_rows (finite), contact_swept, contact_times, joint_names,
        velocities_given); ``contact_stamps`` as :meth:`ContactArrayWriter.fill`."""
        info = out.contact_info
        body = bytearray(self._head.pack(stamp.sec, stamp.nanosec, self._frame, int(out.status),
                                         message_distance(float(out.min_distance)),
                                         int(out.pairs_checked), len(info)))
        if info:
            rows = out.contact_rows
            width = 8 * rows.shape[1]
            geometry = 8 * GEOMETRY_VALUES
            # the Jacobian's count (8-aligned after the geometry), 4 bytes to the next float64
            count = U32.pack(rows.shape[1] - GEOMETRY_VALUES - CONTROLLER_VALUES) + bytes(4)
            blob = np.ascontiguousarray(rows, dtype=np.float64).tobytes()
            start = 0
            for who, swept, t in zip(info, *contact_steps(out, contact_stamps)):
                body += self._prefix(who, len(body))
                body += blob[start:start + geometry]
                body += count
                body += blob[start + geometry:start + width]
                body += _STEP.pack(swept, *t)
                start += width
        body += bytes(-len(body) % 4)
        body += self._names_block(out)
        body.append(1 if getattr(out, "velocities_given", False) else 0)
        body += bytes(-len(body) % 4)
        body += self._reason_bytes(str(getattr(out, "reason", "")))
        return self.ENCAPSULATION + body

    def _reason_bytes(self, reason: str) -> bytes:
        """``status_message`` as a CDR string, encoded once per distinct text in a row (the
        reason is "" in almost every cycle)."""
        if reason != self._reason:
            self._reason, self._reason_cdr = reason, cdr_string(reason)
        return self._reason_cdr

    def matches(self, writer: "ContactArrayWriter") -> bool:
        """True when bytes from this serializer deserialize (with the middleware's own
        ``rclpy.serialization``) to exactly what ``writer`` builds, for outputs with no, one
        and three contacts of names of every length modulo 4, Jacobians of 0, 3 and 6 columns,
        swept and not, with and without a time of contact, joint names and a non-finite
        ``min_distance``; the node publishes messages otherwise."""
        try:
            from types import SimpleNamespace

            from rclpy.serialization import deserialize_message, serialize_message

            for k, n in enumerate((0, 1, 3)):
                J = 3 * k  # 0, 3 or 6 columns
                rows = np.array([contact_row(-0.125 * i, [i, 0.5, -1.0], [2.0, i, 0.25],
                                             [1.0, 0.5, 0.125], [0.0, 0.6, 0.8],
                                             np.arange(J) - 1.25 * i, 0.5 - i,
                                             [i, 1.0, 2.0], [3.0, -i, 0.5])
                                 for i in range(n)]).reshape(n, J + 20)
                out = SimpleNamespace(
                    status=k + 1, min_distance=[math.inf, 0.25, math.nan][k], pairs_checked=7 * k,
                    contact_info=[("/b" * (i + 1), "x" * (i + 2), i - 1, 2**31 - 1 - i)
                                  for i in range(n)],
                    contact_rows=rows, joint_names=["/j" * i for i in range(J)],
                    contact_swept=np.arange(n) % 2 == 1,
                    contact_times=np.array([0.0, 1765432109.123456789, 3.5e-9][:n]),
                    velocities_given=k == 1, reason=["", "stale: a (1.5 s)", "xyz"][k])
                stamp = Time(sec=1234567 + k, nanosec=890 + k)
                raw = self.serialize(out, stamp)
                msg = writer.fill(out, stamp)
                if len(raw) != len(serialize_message(msg)) or repr(
                        deserialize_message(raw, type(msg))) != repr(msg):
                    return False
            return True
        except Exception:  # noqa: BLE001 - any failure means: publish messages instead
            return False
