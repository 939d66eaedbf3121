"""Haptic virtual fixture on the monitor's contacts (issue 37 §2), without ROS.

From the contacts of one evaluation (distance d, unit normal n from body_1 to body_2, distance
rate d_dot, the two bodies' names) it computes the wrench that the master (the MTM) renders to
the hand holding it: a spring-damper along the normals of the closest contacts that pushes the
tool (the PSM's bodies) away from what it approaches.

Frames. The contacts are in the monitor's world frame W (its ``world_frame``: the PSM's base
frame for a teleoperated PSM). ``registration`` R (3x3 rotation) maps a vector of W into the
master's frame M: ``v_M = R v_W``. The teleoperation moves the PSM by ``dx_W = scale R^T dx_M``
(the dVRK's registration rotation, the same matrix both ways).

Law, per obstacle body (every body that is not a tool body), from its closest contact with a
tool body (several contacts with one obstacle, e.g. a shaft and a tip, push once)::

    x = d_a - d                                  (m; only d < d_a acts)
    f = x (k + lam max(0, -d_dot)) max(w, s)     (N, then at most f_max)
    w = clip(-d_dot / v_0, 0, 1)                 (approaching: 1 faster than v_0, 0 moving away)
    s = clip((d_s - d) / d_s, 0, 1)              (inside d_s: 0 at d_s, 1 at contact)

k: stiffness (N/m), lam: damping (N s/m^2; a Hunt-Crossley damper, proportional to x, so the
force is continuous where d crosses d_a, where a plain damper b d_dot would step by b |d_dot|),
d_a: activation distance, d_s: safety distance (m), v_0: approach-rate band (m/s).
Approaching faster than v_0, f is the spring k x plus the damper. Moving away (d_dot > 0)
outside d_s, f = 0: the fixture brakes an approach, it does not repel a retreating tool. The
band v_0 makes the change between the two continuous in d_dot: a spring that drops to zero the
instant d_dot turns positive makes a hand that keeps pushing chatter at the wall (the tool
rebounds, the force vanishes, the hand pushes it in again: a 0 / k x square wave on the
master, found in the closed-loop test). Holding still against the fixture the force is then
continuous and the tool creeps (at about v_0 F_hand / (k x)) towards d_s, where s takes over:
inside d_s the spring pushes whatever the rate, growing to k d_a at contact, so a hand pushing
less than min(k d_a, f_max) stays out of contact.

Sign: n points from body_1 to body_2. When the tool is body_1 the obstacle lies along +n from
it, so the push away from the obstacle is along -n; when the tool is body_2 it is along +n.
``side`` = -1 (tool is body_1), +1 (tool is body_2), 0 (both or neither are tool bodies:
ignored). F_W = sum over obstacles of side f n, its norm capped at f_max (N); the master's
wrench is ``(R F_W, 0)``: a force only (N), no torque.

State (:class:`VirtualFixture`): the wrench of the latest good contacts, held, times a gain g in
[0, 1] that falls linearly to 0 within ``ramp_time`` (s, at most 10 ms) when the contacts are
older than ``max_contact_age``, the monitor's status is not OK, or a contact holds a non-finite
value, and rises back linearly when good contacts come again: the output never steps to or
from zero for those reasons. Nothing returned is NaN.

Optional velocity scale for the PSM: :func:`velocity_scale`, the velocity damper of
``monitor/damper.py`` on the tool contacts' measured distance rates.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from ambf_collision.model.contact_rows import contact_columns
from ambf_collision.monitor.damper import damper_scale

__all__ = ["MAX_RAMP_TIME", "REGISTRATION_SLACK", "FixtureContacts", "FixtureParams",
           "VirtualFixture", "check_registration", "contact_sides", "contacts_from_rows",
           "fixture_force", "master_wrench", "push_magnitude", "velocity_scale"]

MAX_RAMP_TIME = 0.01
"""s. Longest allowed ramp to zero: the issue's bound (the wrench is gone within 10 ms of the
contacts going stale or the status leaving OK)."""

REGISTRATION_SLACK = 1e-4
"""1. Largest entry of ``R R^T - I`` (and of ``det R - 1``) for a registration to count as a
rotation: accepts a matrix written to 4 decimals (dVRK console files write cosines so); the
nearest exact rotation (SVD) is used. Kept here, not in geometry/tolerances.py: no kernel uses
it, and every kernel's cache stamp covers that file."""


class FixtureContacts(NamedTuple):
    """The fixture's view of one evaluation's contacts (world frame W; ``n`` contacts).

    ``distance (n,)`` m, ``normal (n, 3)`` unit, body_1 -> body_2, ``rate (n,)`` m/s (d_dot),
    ``side (n,)`` -1 / +1 / 0 (module docstring), ``obstacle (n,)`` an integer per obstacle
    body (contacts with one obstacle share it)."""

    distance: np.ndarray
    normal: np.ndarray
    rate: np.ndarray
    side: np.ndarray
    obstacle: np.ndarray


@dataclass(frozen=True)
class FixtureParams:
    """Parameters of the law and the ramp (units in the module docstring): ``stiffness`` k
    (N/m), ``damping`` lam (N s/m^2), ``activation_distance`` d_a (m), ``safety_distance`` d_s
    (m, < d_a), ``max_force`` f_max (N), ``registration`` R (3x3, W -> M), ``rate_band`` v_0
    (m/s, > 0), ``ramp_time`` (s, (0, 0.01]), ``max_contact_age`` (s). :meth:`checked`
    validates them."""

    stiffness: float = 400.0
    damping: float = 5000.0
    activation_distance: float = 0.02
    safety_distance: float = 0.003
    max_force: float = 5.0
    registration: np.ndarray = field(default_factory=lambda: np.eye(3))
    rate_band: float = 0.005
    ramp_time: float = 0.01
    max_contact_age: float = 0.05

    def checked(self) -> "FixtureParams":
        """A copy with the registration made an exact rotation; ValueError naming the
        parameter for a bad value."""
        numbers = ("stiffness", "damping", "activation_distance", "safety_distance",
                   "max_force", "rate_band", "ramp_time", "max_contact_age")
        for name in numbers:
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0.0):
                raise ValueError(f"{name}: must be a finite number >= 0, got {v!r}")
        if not self.safety_distance < self.activation_distance:
            raise ValueError(f"safety_distance ({self.safety_distance} m) must be below "
                             f"activation_distance ({self.activation_distance} m)")
        if not (self.rate_band > 0.0 and self.safety_distance > 0.0):
            raise ValueError("rate_band and safety_distance: must be > 0")
        if not 0.0 < self.ramp_time <= MAX_RAMP_TIME:
            raise ValueError(f"ramp_time: must be in (0, {MAX_RAMP_TIME}] s, got {self.ramp_time}")
        return replace(self, registration=check_registration(self.registration),
                       **{name: float(getattr(self, name)) for name in numbers})


def check_registration(matrix) -> np.ndarray:
    """The registration as an exact rotation ``(3, 3)``: ``matrix`` (9 numbers, row major, or
    3x3) within :data:`REGISTRATION_SLACK` of a rotation; ValueError otherwise (a reflection,
    a scale, a wrong count, a non-finite entry)."""
    m = np.asarray(matrix, float)
    if m.size != 9 or not np.all(np.isfinite(m)):
        raise ValueError(f"registration: must be 9 finite numbers (a 3x3 rotation, row major), "
                         f"got {np.asarray(matrix).ravel().tolist()}")
    m = m.reshape(3, 3)
    if (np.abs(m @ m.T - np.eye(3)).max() > REGISTRATION_SLACK
            or abs(np.linalg.det(m) - 1.0) > REGISTRATION_SLACK):
        raise ValueError(f"registration: {m.tolist()} is not a rotation (R R^T = I, det R = 1, "
                         f"to {REGISTRATION_SLACK})")
    u, _, vt = np.linalg.svd(m)
    return u @ vt


def _matches(name: str, patterns) -> bool:
    plain = name.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(plain, p) for p in patterns)


def contact_sides(pairs, tool_patterns, cache=None) -> tuple:
    """``(side (n,), obstacle (n,))`` of contacts between ``pairs`` ``[(body_1, body_2), ...]``
    (qualified body names): ``side`` as in the module docstring, ``obstacle`` the index of the
    obstacle body in the order first met (-1 where side is 0). A body is a tool body when its
    qualified or plain name matches one of ``tool_patterns`` (fnmatch). ``cache``: an optional
    dict kept by the caller between calls (keyed by the pairs; one per set of patterns); the
    arrays returned are shared with it, not to be written."""
    cache = {} if cache is None else cache
    key = tuple(pairs)
    if key in cache:  # the same pairs as a previous call: the same answer
        return cache[key]
    side = np.zeros(len(pairs), np.int64)
    obstacle = np.full(len(pairs), -1, np.int64)
    ids: dict = {}
    for k, (a, b) in enumerate(pairs):
        tool_a, tool_b = _matches(a, tool_patterns), _matches(b, tool_patterns)
        if tool_a != tool_b:
            side[k] = -1 if tool_a else 1
            obstacle[k] = ids.setdefault(b if tool_a else a, len(ids))
    if len(cache) > 4096:  # bounded: a scene with ever new pairs does not grow it forever
        cache.clear()
    cache[key] = (side, obstacle)
    return side, obstacle


def contacts_from_rows(info, rows, tool_patterns, cache=None) -> FixtureContacts:
    """:class:`FixtureContacts` of a model evaluation's contacts: ``info`` their ``(body_1,
    body_2, shape_1, shape_2)``, ``rows (n, 20 + J)`` (``model/contact_rows.py``; the
    ``EvaluationResult``'s ``contact_info`` and ``contact_rows``)."""
    side, obstacle = contact_sides([who[:2] for who in info], tool_patterns, cache)
    c = contact_columns(np.asarray(rows, float).reshape(len(info), -1))
    return FixtureContacts(c.distance, c.normal, c.distance_rate, side, obstacle)


def push_magnitude(d: float, rate: float, p: FixtureParams) -> float:
    """f (N) of one contact at distance ``d`` (m) closing at ``rate`` (m/s): the module
    docstring's law, at most f_max."""
    x = p.activation_distance - d
    if not x > 0.0:
        return 0.0
    gate = max(min(-rate / p.rate_band, 1.0), min((p.safety_distance - d) / p.safety_distance,
                                                  1.0), 0.0)
    return min(x * (p.stiffness + p.damping * max(0.0, -rate)) * gate, p.max_force)


def fixture_force(contacts: FixtureContacts, p: FixtureParams) -> tuple:
    """``(F_W (3,) N, valid)``: the law of the module docstring in the world frame. ``valid``
    is False (and the force zero) when a tool contact has a non-finite distance, normal or
    rate, or a normal of length 0: the message cannot be trusted."""
    best: dict = {}  # obstacle -> (distance, rate, side, normal) of its closest tool contact
    for side, o, d, rate, n in zip(contacts.side.tolist(), contacts.obstacle.tolist(),
                                   contacts.distance.tolist(), contacts.rate.tolist(),
                                   np.asarray(contacts.normal, float).reshape(-1, 3).tolist()):
        if side == 0:
            continue
        length = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
        if not (math.isfinite(d) and math.isfinite(rate) and math.isfinite(length)
                and length > 0.0):
            return np.zeros(3), False
        if o not in best or d < best[o][0]:
            best[o] = (d, rate, side / length, n)
    force = [0.0, 0.0, 0.0]
    for d, rate, scale, n in best.values():
        f = push_magnitude(d, rate, p) * scale
        force = [force[0] + f * n[0], force[1] + f * n[1], force[2] + f * n[2]]
    norm = math.sqrt(force[0] ** 2 + force[1] ** 2 + force[2] ** 2)
    out = np.array(force)
    if norm > p.max_force:
        out *= p.max_force / norm
    return out, True


def master_wrench(force_world, registration) -> np.ndarray:
    """``(6,)`` the master's wrench ``(R F_W, 0, 0, 0)``: force N in M, torque N m (none)."""
    out = np.zeros(6)
    out[:3] = np.asarray(registration, float) @ np.asarray(force_world, float)
    return out


def velocity_scale(contacts: FixtureContacts, d_i: float, d_s: float, xi: float) -> float:
    """The velocity damper's scale in [0, 1] (``monitor/damper.damper_scale``) over the tool
    contacts, with their measured distance rates (m/s) as the approach speeds: the factor by
    which the teleoperation scales the PSM's commanded velocity. 0 when a tool contact has a
    non-finite distance or rate. ``d_i``, ``d_s`` m, ``xi`` m/s."""
    tool = contacts.side != 0
    d, rate = np.asarray(contacts.distance)[tool], np.asarray(contacts.rate)[tool]
    if not (np.all(np.isfinite(d)) and np.all(np.isfinite(rate))):
        return 0.0
    return damper_scale(d, rate[:, None], (1.0,), d_i, d_s, xi)


class VirtualFixture:
    """The law with its state: the held wrench of the latest good contacts, their arrival
    time, and the gain g of the ramp (module docstring). Times are seconds on one clock."""

    def __init__(self, params: FixtureParams):
        self.params = params.checked()
        self.held = np.zeros(6)  # master wrench of the latest good contacts
        self.gain = 0.0  # g in [0, 1]
        self.good = False  # the latest contacts were OK and finite
        self.received = -math.inf  # s, arrival of the latest contacts
        self.last_update = None  # s, time of the latest output

    def on_contacts(self, now: float, status_ok: bool, contacts: FixtureContacts) -> None:
        """Take one evaluation's contacts, arrived at ``now`` (s)."""
        self.received = now
        force, valid = fixture_force(contacts, self.params) if status_ok else (None, False)
        self.good = bool(status_ok and valid)
        if self.good:
            self.held = master_wrench(force, self.params.registration)

    def fresh(self, now: float) -> bool:
        """The latest contacts are good and arrived at most ``max_contact_age`` from ``now``
        (either way: after the clock jumped back, contacts that arrived at a later time are not
        fresh either)."""
        return self.good and abs(now - self.received) <= self.params.max_contact_age

    def output(self, now: float) -> np.ndarray:
        """The master wrench ``(6,)`` at ``now`` (s): the held wrench times the gain, the gain
        moved towards 1 (fresh) or 0 (not) by the elapsed time over ``ramp_time``."""
        dt = 0.0 if self.last_update is None else min(max(now - self.last_update, 0.0),
                                                      self.params.ramp_time)
        self.last_update = now
        step = dt / self.params.ramp_time
        self.gain = min(1.0, self.gain + step) if self.fresh(now) else max(0.0, self.gain - step)
        return self.gain * self.held
