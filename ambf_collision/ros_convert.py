"""Core results -> ROS messages, with as little per-field Python work as possible.

- :func:`stamp_msg`: seconds (float) -> ``builtin_interfaces/Time``.
- :class:`ContactArrayWriter`: fills one reused ``ContactArray`` from a ``MonitorOutput``
  (contacts built through constructor keyword arguments from ``tolist()`` values).
- :class:`ProbeArrayWriter`: one ``ProbeArray`` whose ``ProbeState`` objects are created once per
  probe set (names and bodies fixed) and whose numbers are refreshed per cycle from the probe
  result arrays (``tolist()`` once per array, never per element through NumPy scalars).

Everything is in the world frame (``frame_id``), metres, newtons, square metres. Messages never
carry NaN: the monitor sanitises its output, and the writers map any remaining non-finite value to
0 (``distance`` may be +inf: "beyond range" / "nothing checked").
"""

from __future__ import annotations

import math

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Vector3

from ambf_collision.msg import Contact, ContactArray, ProbeArray, ProbeState

__all__ = ["stamp_msg", "ContactArrayWriter", "ProbeArrayWriter"]

_SLOTS = all(f"_{k}" in ProbeState.__slots__ for k in
             ("in_contact", "depth", "area", "distance", "touching_body")) and all(
    f"_{k}" in Vector3.__slots__ and f"_{k}" in Point.__slots__ for k in "xyz")
"""True when the generated message classes store fields in '_<name>' slots (all rosidl
versions so far); then :class:`ProbeArrayWriter` writes the slots directly."""


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
    """One reused ``ContactArray``; :meth:`fill` writes a cycle's output into it."""

    def __init__(self, world_frame: str):
        self.msg = ContactArray()
        self.msg.header.frame_id = world_frame

    def fill(self, out, stamp: Time) -> ContactArray:
        """``out``: a ``monitor.MonitorOutput`` (status, min_distance, pairs_checked, contacts)."""
        m = self.msg
        m.header.stamp = stamp
        m.status = int(out.status)
        m.min_distance = _distance(float(out.min_distance))
        m.pairs_checked = int(out.pairs_checked)
        m.contacts = [contact_msg(c) for c in out.contacts]
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
