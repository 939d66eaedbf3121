"""Probe results -> ``ProbeArray`` (:class:`ProbeArrayWriter`, a reused message) and its
serialized CDR bytes (:class:`ProbeArraySerializer`), with one ``PatchState`` per probe patch.
Re-exported by :mod:`ambf_collision.ros.convert` (its module docstring: the conventions)."""

from __future__ import annotations

import math
import struct

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3

from ambf_collision.msg import PatchState, ProbeArray, ProbeState
from ambf_collision.ros.cdr import HEAD, U32, align, cdr_string, finite_rows

__all__ = ["ProbeArrayWriter", "ProbeArraySerializer", "patch_arrays", "patch_values"]

_SLOTS = all(f"_{k}" in ProbeState.__slots__ for k in
             ("in_contact", "depth", "area", "distance", "touching_body")) and all(
    f"_{k}" in Vector3.__slots__ and f"_{k}" in Point.__slots__ for k in "xyz")
"""True when the generated message classes store fields in '_<name>' slots (all rosidl
versions so far); then :class:`ProbeArrayWriter` writes the slots directly."""

_PATCH_VALUES = struct.Struct("<10d")  # area, force, force_body, torque_body


class ProbeArrayWriter:
    """One reused ``ProbeArray`` for a fixed list of probes.

    ``names``, ``bodies``: per probe; ``body_names``: the model's bodies, to name the touching
    body from its index (-1: none -> ''); ``patches``: ``(name, qualified body)`` per probe
    patch, in the probe result's patch order.
    """

    def __init__(self, world_frame: str, names, bodies, body_names, patches=()):
        self.msg = ProbeArray()
        self.msg.header.frame_id = world_frame
        self.body_names = list(body_names) + [""]  # index -1 -> ''
        self.states = [ProbeState(name=str(n), body=str(b)) for n, b in zip(names, bodies)]
        # direct references to the nested vector objects, refreshed in place every cycle
        self._vec = [(s.force, s.contact_normal, s.position, s.normal) for s in self.states]
        self.patches = [PatchState(name=str(n), body=str(b)) for n, b in patches]

    def empty(self, status: int, stamp: Time) -> ProbeArray:
        """A status-only array (nothing evaluated this cycle)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(status)
        m.probes = []
        m.patches = []
        return m

    def fill(self, status: int, stamp: Time, pr) -> ProbeArray:
        """``pr``: a ``probes.ProbeResult`` for the same probes, in the same order."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(status)
        in_contact = pr.in_contact.tolist()
        depth = finite_rows(pr.depth)
        area = finite_rows(pr.area)
        dist = np.asarray(pr.distance, dtype=float)
        if not np.all(np.isfinite(dist) | (dist == np.inf)):
            dist = np.where(np.isnan(dist) | (dist == -np.inf), np.inf, dist)
        dist = dist.tolist()
        touching = pr.touching_body.tolist()
        force = finite_rows(pr.force)
        cnormal = finite_rows(pr.contact_normal)
        pos = finite_rows(pr.position)
        nrm = finite_rows(pr.normal)
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
        for st, (count, values) in zip(self.patches, patch_values(pr, len(self.patches))):
            st.in_contact = count
            (st.area, st.force.x, st.force.y, st.force.z, st.force_body.x, st.force_body.y,
             st.force_body.z, st.torque_body.x, st.torque_body.y, st.torque_body.z) = values
        m.patches = self.patches
        return m


def patch_arrays(pr, q: int, out: np.ndarray) -> np.ndarray:
    """Writes into ``out (q, 10)`` the area, force (3), force_body (3) and torque_body (3) of the
    first ``q`` patches of a probe result (non-finite -> 0) and returns their ``in_contact``
    counts ``(q,)`` (int64, clamped to uint32); zeros where ``pr`` has no patch arrays of
    that shape."""
    counts = None
    try:
        parts = (np.reshape(pr.patch_area, (-1, 1)), pr.patch_force, pr.patch_force_body,
                 pr.patch_torque_body)
        if all(len(a) == q for a in parts):  # a probe result's own arrays
            np.concatenate(parts, axis=1, out=out)
        else:
            values = np.hstack(parts)[:q]
            if values.shape == out.shape:
                out[...] = values
            else:
                parts = None
        counts = np.asarray(pr.patch_in_contact, np.int64)[:q]
    except (AttributeError, ValueError, TypeError):
        parts = None
    if parts is None or counts is None or len(counts) != q:
        out[...] = 0.0
        return np.zeros(q, np.int64)
    if not np.isfinite(out).all():
        out[~np.isfinite(out)] = 0.0
    return np.minimum(np.maximum(counts, 0), 2**32 - 1)


def patch_values(pr, q: int) -> list:
    """``[(in_contact count, [area, force (3), force_body (3), torque_body (3)])]`` of the
    first ``q`` patches of a probe result, as :func:`patch_arrays` gives them."""
    if q == 0:
        return []
    values = np.empty((q, 10))
    counts = patch_arrays(pr, q, values)
    return list(zip(counts.tolist(), values.tolist()))


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
    -inf -> +inf). ``names``, ``bodies``: per probe; ``body_names``: the model's bodies;
    ``patches``: ``(name, body)`` per patch (as :class:`ProbeArrayWriter`), appended after the
    probes (a few per robot: laid out with the probes, their values written in place).
    """

    ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR_LE

    def __init__(self, world_frame: str, names, bodies, body_names, patches=()):
        self._patch_names = [(cdr_string(str(n)), cdr_string(str(b))) for n, b in patches]
        self.n = n = len(names)
        frame = cdr_string(world_frame)
        self._status_off = 8 + len(frame)  # body offsets: sec, nanosec, frame_id, status
        count_off = align(self._status_off + 1, 4)
        head = bytearray(count_off + 4)
        head[8:8 + len(frame)] = frame
        head[count_off:count_off + 4] = n.to_bytes(4, "little")
        self._head = np.frombuffer(bytes(head), np.uint8)
        first = len(head)  # body offset of probe 0 (then every record ends 8-aligned)
        prefixes, ic_off, b_off = [], np.empty(n, np.int64), np.empty(n, np.int64)
        for i, (nm, bd) in enumerate(zip(names, bodies)):
            s = first if i == 0 else 0  # start offset modulo 8 is all that matters
            p = bytearray(cdr_string(str(nm)))
            p += b"\0" * (align(s + len(p), 4) - s - len(p))
            p += cdr_string(str(bd))
            ic_off[i] = len(p)
            p += b"\0"
            p += b"\0" * (align(s + len(p), 8) - s - len(p))
            b_off[i] = len(p)
            prefixes.append(bytes(p))
        self._pref_len = np.array([len(p) for p in prefixes], np.int64)
        self._pref = np.frombuffer(b"".join(prefixes), np.uint8)
        self._pref_local = _ragged_arange(self._pref_len)
        self._ic_off, self._b_off = ic_off, b_off
        # touching_body blocks per body index (last = -1 = ''), each padded to 8 bytes
        blocks = [cdr_string(str(b)) for b in body_names] + [cdr_string("")]
        blocks = [b + b"\0" * (align(len(b), 8) - len(b)) for b in blocks]
        self._tb_len = np.array([len(b) for b in blocks], np.int64)
        self._tb_start = np.cumsum(self._tb_len) - self._tb_len
        self._tb = np.frombuffer(b"".join(blocks), np.uint8)
        self._first = first
        self._touching = None  # touching-body indices of the current layout
        self._touching_key = None  # their bytes
        self._vals = np.empty((15, n))  # per field row (contiguous writes), record order
        self._patch_vals = np.empty((len(self._patch_names), 10))  # per patch: area, 3 Vector3
        self._ar9, self._ar6 = np.arange(9), np.arange(6)

    def _layout(self, touching: np.ndarray) -> None:
        n = self.n
        tb_len = self._tb_len[touching]
        rec = self._b_off + 72 + tb_len + 48
        starts = self._first + np.concatenate(([0], np.cumsum(rec)[:-1])).astype(np.int64)
        end = int(starts[-1] + rec[-1]) if n else self._first  # of the probes
        patches, count_off, value_off = self._patch_layout(end)
        total = end + len(patches)
        # raw[8 + x] is body byte x, so body offsets that are multiples of 8 are 8-aligned
        self._raw = raw = np.zeros(8 + align(total, 8), np.uint8)
        raw[4:8] = np.frombuffer(self.ENCAPSULATION, np.uint8)
        raw[8:8 + len(self._head)] = self._head
        raw[8 + end:8 + total] = np.frombuffer(patches, np.uint8)
        self._bytes = raw[4:8 + total]
        self._f64 = raw[8:].view(np.float64)
        self._u32 = raw.view(np.uint32)
        self._patch_idx = (count_off + 8) // 4, value_off[:, None] // 8 + np.arange(10)
        if n:
            raw[8 + np.repeat(starts, self._pref_len) + self._pref_local] = self._pref
            local = _ragged_arange(tb_len)
            c_off = starts + self._b_off + 72
            raw[8 + np.repeat(c_off, tb_len) + local] = self._tb[
                np.repeat(self._tb_start[touching], tb_len) + local]
            b_idx = (starts + self._b_off) // 8
            d_idx = (c_off + tb_len) // 8
            # (15, n) targets of the rows of _vals: the record's values in order, but distance
            # (the 9th, before touching_body; legitimately +inf) last
            self._idx = np.ascontiguousarray(np.concatenate(
                (b_idx[:, None] + self._ar9[:8], d_idx[:, None] + self._ar6,
                 b_idx[:, None] + 8), axis=1).T)
            self._ic = 8 + starts + self._ic_off
        self._touching = touching.copy()

    def _patch_layout(self, start: int):
        """The ``patches`` sequence starting at body offset ``start``, its values zero:
        ``(bytes, body offsets of the in_contact counts (q,), of the first float64 of each
        patch (q,))``. Layout: uint32 count, then per patch name, body (4-aligned strings),
        in_contact (uint32), area and the three Vector3 (8-aligned float64)."""
        b = bytearray(bytes(-start % 4))
        b += U32.pack(len(self._patch_names))
        counts, values = [], []
        for name, body in self._patch_names:
            for part in (name, body):
                b += bytes(-(start + len(b)) % 4)
                b += part
            b += bytes(-(start + len(b)) % 4)
            counts.append(start + len(b))
            b += bytes(4)
            b += bytes(-(start + len(b)) % 8)
            values.append(start + len(b))
            b += bytes(_PATCH_VALUES.size)
        return bytes(b), np.array(counts, np.int64), np.array(values, np.int64)

    def serialize(self, status: int, stamp: Time, pr) -> bytes:
        """The serialized ``ProbeArray`` of ``pr`` (a ``probes.ProbeResult`` for the same
        probes in the same order)."""
        touching = np.asarray(pr.touching_body, np.int64)
        key = touching.tobytes()  # the layout depends on the touching bodies only
        if key != self._touching_key:
            self._layout(touching)
            self._touching_key = key
        raw = self._raw
        HEAD.pack_into(raw, 8, stamp.sec, stamp.nanosec)
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
        if len(self._patch_vals):
            counts_at, values_at = self._patch_idx
            self._u32[counts_at] = patch_arrays(pr, len(self._patch_vals), self._patch_vals)
            self._f64[values_at] = self._patch_vals
        return self._bytes.tobytes()

    def matches(self, writer: "ProbeArrayWriter") -> bool:
        """True when bytes from this serializer deserialize (with the middleware's own
        ``rclpy.serialization``) to exactly what ``writer`` builds for a probe result with
        distinct values, every touching body and the patches; the node falls back to messages
        otherwise."""
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
            q = len(self._patch_names)
            j = np.arange(q, dtype=float)
            pr.patch_in_contact, pr.patch_area = np.arange(q) + 1, j + 0.75
            pr.patch_force = pr.patch_force_body = np.stack((j, -j, j + 0.5), axis=1)
            pr.patch_torque_body = np.stack((j + 0.125, -j, j), axis=1)
            stamp = Time(sec=1234567, nanosec=890)
            raw = self.serialize(3, stamp, pr)
            msg = writer.fill(3, stamp, pr)
            ok = len(raw) == len(serialize_message(msg)) and deserialize_message(
                raw, type(msg)) == msg
            self._touching = self._touching_key = None  # next call lays out afresh
            return bool(ok)
        except Exception:  # noqa: BLE001 - any failure means: publish messages instead
            return False
