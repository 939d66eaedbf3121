"""Core results -> ROS messages, with as little per-field Python work as possible.

- :func:`stamp_msg`: seconds (float) -> ``builtin_interfaces/Time``; :class:`Stamp`: (sec, nanosec)
  for the serializers.
- :class:`ContactArrayWriter`: fills one reused ``ContactArray`` from a ``MonitorOutput``
  (contacts built through constructor keyword arguments from ``tolist()`` values).
- :class:`ProbeArrayWriter`: one ``ProbeArray`` whose ``ProbeState`` objects are created once per
  probe set (names and bodies fixed) and whose numbers are refreshed per cycle from the probe
  result arrays (``tolist()`` once per array, never per element through NumPy scalars).
- :func:`decode_joint_state`: the fields the node reads from a serialized ``JointState`` (a raw
  subscription), without building the Python message (rclpy's conversion costs ~25 us).
- :class:`ContactArraySerializer`: the ``ContactArray`` of :class:`ContactArrayWriter` directly as
  serialized CDR bytes (rclpy's conversion of the message object costs more than writing them).
- :class:`ProbeArraySerializer`: the same ``ProbeArray`` directly as serialized CDR bytes for
  ``publisher.publish(bytes)``, refreshed in place with NumPy (256 probes: ~20 us instead of
  ~130 us filling plus ~750 us of rclpy's per-field conversion when publishing the message).

Everything is in the world frame (``frame_id``), metres, newtons, square metres. Messages never
carry NaN: the monitor sanitises its output, and the writers map any remaining non-finite value to
0 (``distance`` may be +inf: "beyond range" / "nothing checked").
"""

from __future__ import annotations

import math
import struct
from typing import NamedTuple

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3

from ambf_collision.msg import Contact, ContactArray, ProbeArray, ProbeState

__all__ = ["stamp_msg", "decode_joint_state", "ContactArrayWriter", "ContactArraySerializer",
           "JointStateTooLarge", "MAX_JOINT_NAMES", "ProbeArrayWriter", "ProbeArraySerializer"]

_SLOTS = all(f"_{k}" in ProbeState.__slots__ for k in
             ("in_contact", "depth", "area", "distance", "touching_body")) and all(
    f"_{k}" in Vector3.__slots__ and f"_{k}" in Point.__slots__ for k in "xyz")
"""True when the generated message classes store fields in '_<name>' slots (all rosidl
versions so far); then :class:`ProbeArrayWriter` writes the slots directly."""

_CONTACT_SLOTS = _SLOTS and all(f"_{k}" in Contact.__slots__ for k in (
    "body_1", "body_2", "shape_1", "shape_2", "distance")) and "_contacts" in ContactArray.__slots__
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


def _finite_rows(a) -> list:
    """``a`` as nested Python lists with every non-finite value replaced by 0."""
    a = np.asarray(a, dtype=float)
    if not np.isfinite(a).all():
        a = np.where(np.isfinite(a), a, 0.0)
    return a.tolist()


def _distance(d: float) -> float:
    """A distance for a message: finite or +inf (NaN and -inf become +inf: "nothing known")."""
    return d if (d == d and d != -math.inf) else math.inf


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
        self._pool = []  # (Contact, point_1, point_2, position, normal) per reused message

    def fill(self, out, stamp: Time) -> ContactArray:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked, contacts)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(out.status)
        m.min_distance = _distance(float(out.min_distance))
        m.pairs_checked = int(out.pairs_checked)
        contacts = out.contacts
        if not _CONTACT_SLOTS:
            m.contacts = [contact_msg(c) for c in contacts]
            return m
        n = len(contacts)
        pool = self._pool
        while len(pool) < n:
            c = Contact()
            pool.append((c, c.point_1, c.point_2, c.position, c.normal))
        if n:
            vectors = getattr(out, "contact_vectors", None)  # the monitor's (n, 4, 3) array
            if not (isinstance(vectors, np.ndarray) and vectors.shape == (n, 4, 3)):
                vectors = [(c.point_1, c.point_2, c.position, c.normal) for c in contacts]
            vectors = _finite_rows(vectors)  # (n, 4, 3) Python floats
            for (cm, p1, p2, pos, nrm), c, (v1, v2, vp, vn) in zip(pool, contacts, vectors):
                d = float(c.distance)
                cm._body_1, cm._body_2 = str(c.body_1), str(c.body_2)
                cm._shape_1, cm._shape_2 = int(c.shape_1), int(c.shape_2)
                cm._distance = d if math.isfinite(d) else 0.0
                p1._x, p1._y, p1._z = v1
                p2._x, p2._y, p2._z = v2
                pos._x, pos._y, pos._z = vp
                nrm._x, nrm._y, nrm._z = vn
        m._contacts = [p[0] for p in pool[:n]]
        return m


def contact_msg(c) -> Contact:
    """A ``Contact`` message from a model contact record (world frame, m)."""
    p1, p2, pos, n = _finite_rows(np.stack((c.point_1, c.point_2, c.position, c.normal)))
    d = float(c.distance)
    return Contact(
        body_1=str(c.body_1), body_2=str(c.body_2), shape_1=int(c.shape_1), shape_2=int(c.shape_2),
        distance=d if math.isfinite(d) else 0.0,
        point_1=Point(x=p1[0], y=p1[1], z=p1[2]), point_2=Point(x=p2[0], y=p2[1], z=p2[2]),
        position=Point(x=pos[0], y=pos[1], z=pos[2]), normal=Vector3(x=n[0], y=n[1], z=n[2]))


class ProbeArrayWriter:
    """One reused ``ProbeArray`` for a fixed list of probes.

    ``names``, ``bodies``: per probe; ``body_names``: the model's bodies, to name the touching
    body from its index (-1: none -> '').
    """

    def __init__(self, world_frame: str, names, bodies, body_names):
        self.msg = ProbeArray()
        self.msg.header.frame_id = world_frame
        self.body_names = list(body_names) + [""]  # index -1 -> ''
        self.states = [ProbeState(name=str(n), body=str(b)) for n, b in zip(names, bodies)]
        # direct references to the nested vector objects, refreshed in place every cycle
        self._vec = [(s.force, s.contact_normal, s.position, s.normal) for s in self.states]

    def empty(self, status: int, stamp: Time) -> ProbeArray:
        """A status-only array (nothing evaluated this cycle)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(status)
        m.probes = []
        return m

    def fill(self, status: int, stamp: Time, pr) -> ProbeArray:
        """``pr``: a ``probes.ProbeResult`` for the same probes, in the same order."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(status)
        in_contact = pr.in_contact.tolist()
        depth = _finite_rows(pr.depth)
        area = _finite_rows(pr.area)
        dist = np.asarray(pr.distance, dtype=float)
        if not np.all(np.isfinite(dist) | (dist == np.inf)):
            dist = np.where(np.isnan(dist) | (dist == -np.inf), np.inf, dist)
        dist = dist.tolist()
        touching = pr.touching_body.tolist()
        force = _finite_rows(pr.force)
        cnormal = _finite_rows(pr.contact_normal)
        pos = _finite_rows(pr.position)
        nrm = _finite_rows(pr.normal)
        names = self.body_names
        if _SLOTS:
            # rosidl's generated classes keep each field in a slot named '_<field>'; writing the
            # slot skips the property (5x faster). Values are already Python floats/bools.
            for s, vec, ic, dp, ar, di, tb, f, cn, p, n in zip(
                    self.states, self._vec, in_contact, depth, area, dist, touching, force,
                    cnormal, pos, nrm):
                s._in_contact, s._depth, s._area, s._distance = ic, dp, ar, di
                s._touching_body = names[tb]
                vf, vc, vp, vn = vec
                vf._x, vf._y, vf._z = f
                vc._x, vc._y, vc._z = cn
                vp._x, vp._y, vp._z = p
                vn._x, vn._y, vn._z = n
        else:
            for i, s in enumerate(self.states):
                s.in_contact = in_contact[i]
                s.depth = depth[i]
                s.area = area[i]
                s.distance = dist[i]
                s.touching_body = names[touching[i]]
                f, cn, p, n = self._vec[i]
                f.x, f.y, f.z = force[i]
                cn.x, cn.y, cn.z = cnormal[i]
                p.x, p.y, p.z = pos[i]
                n.x, n.y, n.z = nrm[i]
        m.probes = self.states
        return m


# ----------------------------------------------------------------------------- raw CDR joint states


_HEAD = struct.Struct("<iI")  # stamp sec, nanosec
_U32 = struct.Struct("<I")
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

    def decode(self, data: bytes):
        if data[:2] != b"\x00\x01":
            return None
        try:
            return _decode_joint_state_le(memoryview(data)[4:], self._names)
        except struct.error as err:  # read past the end
            raise ValueError(f"truncated JointState: {err}") from None


def _decode_joint_state_le(body, names_cache=None):
    """``names_cache``: ``[block bytes, names tuple]`` of an earlier message, reused when this
    message's name block (count and strings) is the same bytes; updated otherwise."""
    sec, nanosec = _HEAD.unpack_from(body, 0)
    (n,) = _U32.unpack_from(body, 8)
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
    (count,) = _U32.unpack_from(body, off)
    off += 4
    off += -off % 8
    if off + 8 * count > len(body):
        raise ValueError("JointState.position runs past the end of the data")
    positions = np.frombuffer(body, "<f8", count, off)
    return names, positions, sec, nanosec


def _decode_names(body, off):
    """The ``name`` sequence at body offset ``off`` (4-aligned) and the offset past it."""
    names = []
    (count,) = _U32.unpack_from(body, off)
    if count > MAX_JOINT_NAMES:
        raise JointStateTooLarge(f"{count} joint names (more than {MAX_JOINT_NAMES}): not read")
    off += 4
    for _ in range(count):
        off += -off % 4
        (n,) = _U32.unpack_from(body, off)
        if n == 0 or off + 4 + n > len(body) or body[off + 3 + n] != 0:
            raise ValueError("malformed string in JointState.name")
        names.append(str(body[off + 4:off + 3 + n], "utf-8"))
        off += 4 + n
    return names, off


# ----------------------------------------------------------------------------- raw CDR contacts


_SHAPES = struct.Struct("<ii")
_VALUES = struct.Struct("<13d")  # distance, point_1, point_2, position, normal


class ContactArraySerializer:
    """A ``ContactArray`` as the serialized bytes rclpy publishes raw (``publisher.publish(bytes)``),
    with the values :class:`ContactArrayWriter` puts in the message (same sanitising).

    Layout: CDR little endian (encapsulation ``00 01 00 00``, then the body; alignment counted
    from the body start): header (stamp, frame_id), status, min_distance, pairs_checked, the
    contact count, then per contact body_1, body_2 (4-aligned strings), shape_1, shape_2,
    distance and the four 3-vectors (8-aligned). Padding bytes are zero. Body-name strings are
    encoded once and cached."""

    ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR_LE

    def __init__(self, world_frame: str):
        frame = _cdr_string(world_frame)
        self._frame = frame
        self._status_off = 8 + len(frame)
        self._md_off = _align(self._status_off + 1, 8)
        # the fixed part in one pack: stamp, frame_id, status, padding, min_distance,
        # pairs_checked, contact count ('<': no implicit alignment)
        self._head = struct.Struct(
            f"<iI{len(frame)}sB{self._md_off - self._status_off - 1}xdII")
        self._strings: dict = {}

    def _string(self, name) -> bytes:
        b = self._strings.get(name)
        if b is None:
            if len(self._strings) >= 4096:
                self._strings.clear()
            b = self._strings[name] = _cdr_string(str(name))
        return b

    def serialize(self, out, stamp: Time) -> bytes:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked, contacts
        and, when present, ``contact_vectors``)."""
        contacts = out.contacts
        n = len(contacts)
        head = self._head.pack(stamp.sec, stamp.nanosec, self._frame, int(out.status),
                               _distance(float(out.min_distance)), int(out.pairs_checked), n)
        if not n:
            return self.ENCAPSULATION + head
        body = bytearray(head)
        vectors = getattr(out, "contact_vectors", None)
        if not (isinstance(vectors, np.ndarray) and vectors.shape == (n, 4, 3)):
            vectors = [(c.point_1, c.point_2, c.position, c.normal) for c in contacts]
        vectors = _finite_rows(np.reshape(vectors, (n, 12)))
        for c, v in zip(contacts, vectors):
            body += bytes(-len(body) % 4)
            body += self._string(c.body_1)
            body += bytes(-len(body) % 4)
            body += self._string(c.body_2)
            body += bytes(-len(body) % 4)
            body += _SHAPES.pack(int(c.shape_1), int(c.shape_2))
            body += bytes(-len(body) % 8)
            d = float(c.distance)
            body += _VALUES.pack(d if math.isfinite(d) else 0.0, *v)
        return self.ENCAPSULATION + body

    def matches(self, writer: "ContactArrayWriter") -> bool:
        """True when bytes from this serializer deserialize (with the middleware's own
        ``rclpy.serialization``) to exactly what ``writer`` builds, for outputs with no, one
        and three contacts of names of every length modulo 4 and non-finite values; the node
        publishes messages otherwise."""
        try:
            from types import SimpleNamespace

            from rclpy.serialization import deserialize_message, serialize_message

            def contact(k):
                v = np.arange(12, dtype=float).reshape(4, 3) * (k + 1) - 0.5
                if k == 2:
                    v[1, 2] = np.nan
                return SimpleNamespace(body_1="/b" * (k + 1), body_2="x" * (k + 2), shape_1=k - 1,
                                       shape_2=2**31 - 1 - k, distance=math.inf if k == 2 else
                                       -0.125 * k, point_1=v[0], point_2=v[1], position=v[2],
                                       normal=v[3])

            for k, n in enumerate((0, 1, 3)):
                out = SimpleNamespace(status=k + 1, min_distance=[math.inf, 0.25, math.nan][k],
                                      pairs_checked=7 * k, contacts=[contact(i) for i in range(n)])
                stamp = Time(sec=1234567 + k, nanosec=890 + k)
                raw = self.serialize(out, stamp)
                msg = writer.fill(out, stamp)
                if len(raw) != len(serialize_message(msg)) or repr(
                        deserialize_message(raw, type(msg))) != repr(msg):
                    return False
            return True
        except Exception:  # noqa: BLE001 - any failure means: publish messages instead
            return False


# ----------------------------------------------------------------------------- raw CDR probes


def _align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def _cdr_string(s: str) -> bytes:
    b = s.encode("utf-8")
    return len(b + b"\0").to_bytes(4, "little") + b + b"\0"


def _ragged_arange(lengths: np.ndarray) -> np.ndarray:
    """[0..l0-1, 0..l1-1, ...] for non-negative ``lengths``."""
    total = int(lengths.sum())
    starts = np.repeat(np.cumsum(lengths) - lengths, lengths)
    return np.arange(total) - starts


class ProbeArraySerializer:
    """A ``ProbeArray`` as the serialized bytes rclpy publishes raw (``publisher.publish(bytes)``),
    written with NumPy instead of 256 Python message objects and rclpy's per-field conversion.

    Layout: CDR little endian (the encapsulation ``00 01 00 00`` then the body; 8-byte alignment
    of float64, 4 of uint32, counted from the start of the body), as ``rclpy.serialization``
    writes it. Every probe record ends on an 8-byte boundary (its last field is a Vector3), so
    probe ``i > 0`` starts 8-aligned and only the variable ``touching_body`` string moves the
    records: when the touching bodies change, the layout is rebuilt (vectorised); otherwise a
    cycle writes the stamp, status, ``in_contact`` bytes and 15 float64 per probe in place.
    Values are sanitised as :class:`ProbeArrayWriter` does (non-finite -> 0, distance NaN or
    -inf -> +inf). ``names``, ``bodies``: per probe; ``body_names``: the model's bodies.
    """

    ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR_LE

    def __init__(self, world_frame: str, names, bodies, body_names):
        self.n = n = len(names)
        frame = _cdr_string(world_frame)
        self._status_off = 8 + len(frame)  # body offsets: sec, nanosec, frame_id, status
        count_off = _align(self._status_off + 1, 4)
        head = bytearray(count_off + 4)
        head[8:8 + len(frame)] = frame
        head[count_off:count_off + 4] = n.to_bytes(4, "little")
        self._head = np.frombuffer(bytes(head), np.uint8)
        first = len(head)  # body offset of probe 0 (then every record ends 8-aligned)
        prefixes, ic_off, b_off = [], np.empty(n, np.int64), np.empty(n, np.int64)
        for i, (nm, bd) in enumerate(zip(names, bodies)):
            s = first if i == 0 else 0  # start offset modulo 8 is all that matters
            p = bytearray(_cdr_string(str(nm)))
            p += b"\0" * (_align(s + len(p), 4) - s - len(p))
            p += _cdr_string(str(bd))
            ic_off[i] = len(p)
            p += b"\0"
            p += b"\0" * (_align(s + len(p), 8) - s - len(p))
            b_off[i] = len(p)
            prefixes.append(bytes(p))
        self._pref_len = np.array([len(p) for p in prefixes], np.int64)
        self._pref = np.frombuffer(b"".join(prefixes), np.uint8)
        self._pref_local = _ragged_arange(self._pref_len)
        self._ic_off, self._b_off = ic_off, b_off
        # touching_body blocks per body index (last = -1 = ''), each padded to 8 bytes
        blocks = [_cdr_string(str(b)) for b in body_names] + [_cdr_string("")]
        blocks = [b + b"\0" * (_align(len(b), 8) - len(b)) for b in blocks]
        self._tb_len = np.array([len(b) for b in blocks], np.int64)
        self._tb_start = np.cumsum(self._tb_len) - self._tb_len
        self._tb = np.frombuffer(b"".join(blocks), np.uint8)
        self._first = first
        self._touching = None  # touching-body indices of the current layout
        self._touching_key = None  # their bytes
        self._vals = np.empty((15, n))  # per field row (contiguous writes), record order
        self._ar9, self._ar6 = np.arange(9), np.arange(6)

    def _layout(self, touching: np.ndarray) -> None:
        n = self.n
        tb_len = self._tb_len[touching]
        rec = self._b_off + 72 + tb_len + 48
        starts = self._first + np.concatenate(([0], np.cumsum(rec)[:-1])).astype(np.int64)
        total = int(starts[-1] + rec[-1]) if n else self._first
        # raw[8 + x] is body byte x, so body offsets that are multiples of 8 are 8-aligned
        self._raw = raw = np.zeros(8 + _align(total, 8), np.uint8)
        raw[4:8] = np.frombuffer(self.ENCAPSULATION, np.uint8)
        raw[8:8 + len(self._head)] = self._head
        self._bytes = raw[4:8 + total]
        if n:
            raw[8 + np.repeat(starts, self._pref_len) + self._pref_local] = self._pref
            local = _ragged_arange(tb_len)
            c_off = starts + self._b_off + 72
            raw[8 + np.repeat(c_off, tb_len) + local] = self._tb[
                np.repeat(self._tb_start[touching], tb_len) + local]
            f64 = raw[8:].view(np.float64)
            self._f64 = f64
            b_idx = (starts + self._b_off) // 8
            d_idx = (c_off + tb_len) // 8
            # (15, n) targets of the rows of _vals: the record's values in order, but distance
            # (the 9th, before touching_body; legitimately +inf) last
            self._idx = np.ascontiguousarray(np.concatenate(
                (b_idx[:, None] + self._ar9[:8], d_idx[:, None] + self._ar6,
                 b_idx[:, None] + 8), axis=1).T)
            self._ic = 8 + starts + self._ic_off
        self._touching = touching.copy()

    def serialize(self, status: int, stamp: Time, pr) -> bytes:
        """The serialized ``ProbeArray`` of ``pr`` (a ``probes.ProbeResult`` for the same
        probes in the same order)."""
        touching = np.asarray(pr.touching_body, np.int64)
        key = touching.tobytes()  # the layout depends on the touching bodies only
        if key != self._touching_key:
            self._layout(touching)
            self._touching_key = key
        raw = self._raw
        _HEAD.pack_into(raw, 8, stamp.sec, stamp.nanosec)
        raw[8 + self._status_off] = int(status)
        if self.n:
            v = self._vals  # (15, n): one row per value of the record, distance last
            v[0] = pr.depth
            v[1] = pr.area
            v[2:5] = pr.force.T
            v[5:8] = pr.contact_normal.T
            v[8:11] = pr.position.T
            v[11:14] = pr.normal.T
            v[14] = pr.distance
            finite = v[:14]
            if not np.isfinite(finite).all():
                finite[~np.isfinite(finite)] = 0.0
            d = v[14]  # +inf (beyond range) is kept; NaN and -inf become +inf
            lo = float(np.minimum.reduce(d))  # NaN propagates through the minimum
            if lo != lo or lo == -math.inf:
                d[np.isnan(d) | (d == -np.inf)] = np.inf
            self._f64[self._idx] = v
            raw[self._ic] = np.asarray(pr.in_contact, bool)
        return self._bytes.tobytes()

    def matches(self, writer: "ProbeArrayWriter") -> bool:
        """True when bytes from this serializer deserialize (with the middleware's own
        ``rclpy.serialization``) to exactly what ``writer`` builds for a probe result with
        distinct values and every touching body; the node falls back to messages otherwise."""
        try:
            from types import SimpleNamespace

            from rclpy.serialization import deserialize_message, serialize_message

            n, nb = self.n, len(self._tb_len)
            k = np.arange(n, dtype=float)
            pr = SimpleNamespace(
                in_contact=np.arange(n) % 2 == 0, depth=k + 0.5, area=k + 0.25,
                force=np.stack((k, -k, k + 1), axis=1), contact_normal=np.stack((k, k, -k), axis=1),
                distance=np.where(np.arange(n) % 3 == 0, np.inf, k + 0.125),
                touching_body=np.arange(n) % nb - 1, position=np.stack((k, k + 2, k + 3), axis=1),
                normal=np.stack((-k, k, k), axis=1))
            stamp = Time(sec=1234567, nanosec=890)
            raw = self.serialize(3, stamp, pr)
            msg = writer.fill(3, stamp, pr)
            ok = len(raw) == len(serialize_message(msg)) and deserialize_message(
                raw, type(msg)) == msg
            self._touching = self._touching_key = None  # next call lays out afresh
            return bool(ok)
        except Exception:  # noqa: BLE001 - any failure means: publish messages instead
            return False
