"""Core results -> ROS messages, with as little per-field Python work as possible.

- :func:`stamp_msg`: seconds (float) -> ``builtin_interfaces/Time``; :class:`Stamp`: (sec, nanosec)
  for the serializers.
- :class:`ContactArrayWriter`: fills one reused ``ContactArray`` from a ``MonitorOutput``
  (contacts built through constructor keyword arguments from ``tolist()`` values).
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
carry NaN: the monitor sanitises its output, and the writers map any remaining non-finite value to
0 (``distance`` may be +inf: "beyond range" / "nothing checked").
"""

from __future__ import annotations

import math
import struct
from array import array
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3

from ambf_collision.monitor.controller_rows import CONTROLLER_VALUES
from ambf_collision.msg import Contact, ContactArray, ProbeState
from ambf_collision.ros.cdr import U32, align, cdr_string, finite_rows, message_distance
from ambf_collision.ros.convert_probes import (ProbeArraySerializer, ProbeArrayWriter,  # noqa: F401
                                              patch_values)

__all__ = ["stamp_msg", "ContactArrayWriter", "ContactArraySerializer", "ProbeArrayWriter",
           "ProbeArraySerializer"]

_SLOTS = all(f"_{k}" in ProbeState.__slots__ for k in
             ("in_contact", "depth", "area", "distance", "touching_body")) and all(
    f"_{k}" in Vector3.__slots__ and f"_{k}" in Point.__slots__ for k in "xyz")
"""True when the generated message classes store fields in '_<name>' slots (all rosidl
versions so far); then :class:`ProbeArrayWriter` writes the slots directly."""

_CONTACT_SLOTS = _SLOTS and all(f"_{k}" in Contact.__slots__ for k in (
    "body_1", "body_2", "shape_1", "shape_2", "distance", "jacobian", "distance_rate")) and \
    "_contacts" in ContactArray.__slots__
"""The same for ``Contact`` / ``ContactArray`` (:class:`ContactArrayWriter`)."""


class Stamp(NamedTuple):
    """A header stamp as the serializers read it (``sec``, ``nanosec``): the node hands them the
    joint state's own stamp without building a ``builtin_interfaces/Time`` message for it (its
    constructor's checks cost ~2 us warm, ~8 us with cold caches, every cycle). The serializers
    take a ``Time`` as well."""

    sec: int
    nanosec: int


def stamp_msg(seconds: float) -> Time:
    """``builtin_interfaces/Time`` of ``seconds`` (>= 0; negative or non-finite -> 0)."""
    if not (math.isfinite(seconds) and seconds > 0.0):
        return Time()
    ns = int(round(seconds * 1e9))
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)








def controller_rows(out, contacts):
    """Per contact one float64 row in message order: the Jacobian (J values), then
    ``distance_rate`` (m/s), ``point_1_local``, ``point_2_local`` (m, body frames); non-finite
    values are 0. The monitor's ``contact_controller (n, J + 7)`` array when ``out`` has it
    (returned as one array), else a list of rows from each contact's ``jacobian``,
    ``distance_rate``, ``point_1_local``, ``point_2_local`` (absent: empty Jacobian, zeros)."""
    n = len(contacts)
    rows = getattr(out, "contact_controller", None)
    if (isinstance(rows, np.ndarray) and rows.ndim == 2 and rows.shape[0] == n
            and rows.shape[1] >= CONTROLLER_VALUES):
        if not np.isfinite(rows).all():
            rows = np.where(np.isfinite(rows), rows, 0.0)
        return np.ascontiguousarray(rows, dtype=float)
    out_rows = []
    for c in contacts:
        j = getattr(c, "jacobian", None)
        p1, p2 = getattr(c, "point_1_local", None), getattr(c, "point_2_local", None)
        row = np.concatenate((np.zeros(0) if j is None else np.asarray(j, float).ravel(),
                              [float(getattr(c, "distance_rate", 0.0) or 0.0)],
                              np.zeros(3) if p1 is None else np.asarray(p1, float).ravel(),
                              np.zeros(3) if p2 is None else np.asarray(p2, float).ravel()))
        row[~np.isfinite(row)] = 0.0
        out_rows.append(row)
    return out_rows


def _joint_names(out) -> list:
    return [str(n) for n in getattr(out, "joint_names", None) or ()]


class ContactArrayWriter:
    """One reused ``ContactArray``; :meth:`fill` writes a cycle's output into it.

    The ``Contact`` messages (with their nested points) are created once and reused: a cycle
    writes their slots from one array of all contacts' vectors (sanitised and converted to
    Python floats at once), the same values :func:`contact_msg` gives, without the per-field
    checks of the generated constructors and setters. Contacts of a previous ``fill`` are
    overwritten (as the array itself is)."""

    def __init__(self, world_frame: str):
        self.msg = ContactArray()
        self.msg.header.frame_id = world_frame
        self._pool = []  # (Contact, point_1, point_2, position, normal, point_1_local,
        # point_2_local) per reused message
        self._names_from = None  # the joint_names list last converted

    def fill(self, out, stamp: Time) -> ContactArray:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked, contacts)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(out.status)
        m.min_distance = message_distance(float(out.min_distance))
        m.pairs_checked = int(out.pairs_checked)
        names = getattr(out, "joint_names", None) or []
        if names is not self._names_from:  # the model's list: converted once per model
            self._names_from, m.joint_names = names, _joint_names(out)
        m.velocities_given = bool(getattr(out, "velocities_given", False))
        contacts = out.contacts
        if not _CONTACT_SLOTS:
            m.contacts = [contact_msg(c, row) for c, row in zip(contacts, controller_rows(out, contacts))]
            return m
        n = len(contacts)
        pool = self._pool
        while len(pool) < n:
            c = Contact()
            pool.append((c, c.point_1, c.point_2, c.position, c.normal, c.point_1_local,
                         c.point_2_local))
        if n:
            vectors = getattr(out, "contact_vectors", None)  # the monitor's (n, 4, 3) array
            if not (isinstance(vectors, np.ndarray) and vectors.shape == (n, 4, 3)):
                vectors = [(c.point_1, c.point_2, c.position, c.normal) for c in contacts]
            vectors = finite_rows(vectors)  # (n, 4, 3) Python floats
            for (cm, p1, p2, pos, nrm, l1, l2), c, (v1, v2, vp, vn), row in zip(
                    pool, contacts, vectors, controller_rows(out, contacts)):
                d = float(c.distance)
                cm._body_1, cm._body_2 = str(c.body_1), str(c.body_2)
                cm._shape_1, cm._shape_2 = int(c.shape_1), int(c.shape_2)
                cm._distance = d if math.isfinite(d) else 0.0
                p1._x, p1._y, p1._z = v1
                p2._x, p2._y, p2._z = v2
                pos._x, pos._y, pos._z = vp
                nrm._x, nrm._y, nrm._z = vn
                J = len(row) - CONTROLLER_VALUES
                cm._jacobian = array("d", row[:J].tobytes())
                rate, l1._x, l1._y, l1._z, l2._x, l2._y, l2._z = row[J:].tolist()
                cm._distance_rate = rate
        m._contacts = [p[0] for p in pool[:n]]
        return m


def contact_msg(c, row=None) -> Contact:
    """A ``Contact`` message from a model contact record (world frame, m); ``row``: its
    :func:`controller_rows` entry (default: from the record)."""
    p1, p2, pos, n = finite_rows(np.stack((c.point_1, c.point_2, c.position, c.normal)))
    if row is None:
        (row,) = controller_rows(None, [c])
    J = len(row) - CONTROLLER_VALUES
    rate, *local = row[J:].tolist()
    d = float(c.distance)
    return Contact(
        body_1=str(c.body_1), body_2=str(c.body_2), shape_1=int(c.shape_1), shape_2=int(c.shape_2),
        distance=d if math.isfinite(d) else 0.0,
        point_1=Point(x=p1[0], y=p1[1], z=p1[2]), point_2=Point(x=p2[0], y=p2[1], z=p2[2]),
        position=Point(x=pos[0], y=pos[1], z=pos[2]), normal=Vector3(x=n[0], y=n[1], z=n[2]),
        jacobian=row[:J].tolist(), distance_rate=rate,
        point_1_local=Point(x=local[0], y=local[1], z=local[2]),
        point_2_local=Point(x=local[3], y=local[4], z=local[5]))


# ----------------------------------------------------------------------------- raw CDR joint states


# ----------------------------------------------------------------------------- raw CDR contacts


_SHAPES = struct.Struct("<ii")
_VALUES = struct.Struct("<13d")  # distance, point_1, point_2, position, normal


class ContactArraySerializer:
    """A ``ContactArray`` as the serialized bytes rclpy publishes raw (``publisher.publish(bytes)``),
    with the values :class:`ContactArrayWriter` puts in the message (same sanitising).

    Layout: CDR little endian (encapsulation ``00 01 00 00``, then the body; alignment counted
    from the body start): header (stamp, frame_id), status, min_distance, pairs_checked, the
    contact count, then per contact body_1, body_2 (4-aligned strings), shape_1, shape_2,
    distance and the four 3-vectors (8-aligned), the Jacobian (uint32 count, float64s
    8-aligned), distance_rate, point_1_local, point_2_local; then joint_names (uint32 count,
    4-aligned strings) and velocities_given (one byte). Padding bytes are zero. Body-name
    strings are encoded once and cached."""

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
        self._strings: dict = {}
        self._names_from, self._names_bytes = None, b""  # joint_names list and its CDR

    def _string(self, name) -> bytes:
        b = self._strings.get(name)
        if b is None:
            if len(self._strings) >= 4096:
                self._strings.clear()
            b = self._strings[name] = cdr_string(str(name))
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

    def serialize(self, out, stamp: Time) -> bytes:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked, contacts
        and, when present, ``contact_vectors``, ``contact_controller``, ``joint_names``,
        ``velocities_given``)."""
        contacts = out.contacts
        n = len(contacts)
        body = bytearray(self._head.pack(stamp.sec, stamp.nanosec, self._frame, int(out.status),
                                         message_distance(float(out.min_distance)),
                                         int(out.pairs_checked), n))
        if n:
            vectors = getattr(out, "contact_vectors", None)
            if not (isinstance(vectors, np.ndarray) and vectors.shape == (n, 4, 3)):
                vectors = [(c.point_1, c.point_2, c.position, c.normal) for c in contacts]
            vectors = finite_rows(np.reshape(vectors, (n, 12)))
            rows = controller_rows(out, contacts)
            if isinstance(rows, np.ndarray):  # one block: the rows' bytes cut from one buffer
                w = 8 * rows.shape[1]
                blob = rows.tobytes()
                rows = [blob[k * w:(k + 1) * w] for k in range(n)]
                count = U32.pack(w // 8 - CONTROLLER_VALUES) + bytes(4)
            else:
                rows = [(U32.pack(len(r) - CONTROLLER_VALUES) + bytes(4), r.tobytes())
                        for r in rows]
            for c, v, row in zip(contacts, vectors, rows):
                body += bytes(-len(body) % 4)
                body += self._string(c.body_1)
                body += bytes(-len(body) % 4)
                body += self._string(c.body_2)
                body += bytes(-len(body) % 4)
                body += _SHAPES.pack(int(c.shape_1), int(c.shape_2))
                body += bytes(-len(body) % 8)
                d = float(c.distance)
                body += _VALUES.pack(d if math.isfinite(d) else 0.0, *v)
                # 8-aligned here: the Jacobian's count, 4 bytes to the next 8-aligned float64
                # (the Jacobian's or, when empty, distance_rate's), then the row as it is
                if isinstance(row, bytes):
                    body += count
                    body += row
                else:
                    body += row[0]
                    body += row[1]
        body += bytes(-len(body) % 4)
        body += self._names_block(out)
        body.append(1 if getattr(out, "velocities_given", False) else 0)
        return self.ENCAPSULATION + body

    def matches(self, writer: "ContactArrayWriter") -> bool:
        """True when bytes from this serializer deserialize (with the middleware's own
        ``rclpy.serialization``) to exactly what ``writer`` builds, for outputs with no, one
        and three contacts of names of every length modulo 4, Jacobians of 0, 3 and 6 columns,
        joint names and non-finite values; the node publishes messages otherwise."""
        try:
            from types import SimpleNamespace

            from rclpy.serialization import deserialize_message, serialize_message

            def contact(k):
                v = np.arange(12, dtype=float).reshape(4, 3) * (k + 1) - 0.5
                if k == 2:
                    v[1, 2] = np.nan
                jac = np.arange(3 * k, dtype=float) - 1.25  # 0, 3 or 6 columns
                if k == 2:
                    jac[1] = np.inf
                return SimpleNamespace(body_1="/b" * (k + 1), body_2="x" * (k + 2), shape_1=k - 1,
                                       shape_2=2**31 - 1 - k, distance=math.inf if k == 2 else
                                       -0.125 * k, point_1=v[0], point_2=v[1], position=v[2],
                                       normal=v[3], jacobian=jac, distance_rate=0.5 - k,
                                       point_1_local=v[0] + 0.25, point_2_local=-v[1])

            for k, n in enumerate((0, 1, 3)):
                out = SimpleNamespace(status=k + 1, min_distance=[math.inf, 0.25, math.nan][k],
                                      pairs_checked=7 * k, contacts=[contact(i) for i in range(n)],
                                      joint_names=["/j" * i for i in range(k + 2)],
                                      velocities_given=k == 1)
                stamp = Time(sec=1234567 + k, nanosec=890 + k)
                raw = self.serialize(out, stamp)
                msg = writer.fill(out, stamp)
                if len(raw) != len(serialize_message(msg)) or repr(
                        deserialize_message(raw, type(msg))) != repr(msg):
                    return False
            return True
        except Exception:  # noqa: BLE001 - any failure means: publish messages instead
            return False
