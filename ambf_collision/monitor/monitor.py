"""ROS-free logic of the ``collision_monitor`` node.

The ROS adapter converts messages and clocks and calls into this module; everything that decides
*what* is published lives here and is tested without ROS:

- :class:`JointStateMerger`: merges partial joint states from several publishers by joint name
  (as ``robot_state_publisher`` does) and rejects bad messages as a whole, keeping the last good
  state.
- :class:`RateLimiter`: each new joint state asks for an evaluation; at most ``max_rate``
  evaluations per second; requests inside the cap are deferred and coalesced, never dropped.
- :class:`WarningThrottle`: one log message per reason per ``period`` seconds.
- :class:`CollisionMonitor`: the above plus status computation, ``model.evaluate`` (and the probes)
  and sanitising, returning a :class:`MonitorOutput` with everything the node publishes.

All times are plain floats in seconds on one clock (the node's clock: ROS time, or sim time).

Status rules (first match wins):

1. ``STATUS_DISABLED`` while disabled (nothing is evaluated);
2. ``STATUS_BAD_JOINT_STATE`` when the latest joint-state message was rejected and no good one came
   since (the last good state is still evaluated, if there is one);
3. ``STATUS_NO_JOINT_STATE`` while some required joint (default: every joint of the model) has never
   been received (nothing is evaluated). A model without joints needs no joint state: its poses are
   fully given by the ADF ``location`` s (and root transforms), so it is ``STATUS_OK`` from the start;
4. ``STATUS_TF_UNAVAILABLE`` when the caller reports missing root transforms (nothing is evaluated);
5. ``STATUS_STALE_JOINT_STATE`` when the oldest per-joint stamp is more than ``joint_state_timeout``
   seconds before ``now`` (0 turns the check off); the last state is still evaluated. Per-joint
   stamps make a stopped partial publisher visible even while others keep publishing;
6. ``STATUS_OK``.

When nothing is evaluated the output has no contacts, ``min_distance = +inf`` and
``pairs_checked = 0``. Outputs never contain NaN: non-finite contacts are dropped and counted, a
non-finite probe value is zeroed (the probe reported out of contact), each with a warning.
"""

from __future__ import annotations

import math
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "STATUS_OK",
    "STATUS_NO_JOINT_STATE",
    "STATUS_STALE_JOINT_STATE",
    "STATUS_BAD_JOINT_STATE",
    "STATUS_TF_UNAVAILABLE",
    "STATUS_DISABLED",
    "STATUS_NAMES",
    "MonitorConfig",
    "MonitorOutput",
    "JointStateMerger",
    "RateLimiter",
    "WarningThrottle",
    "CollisionMonitor",
    "model_probe_evaluator",
]

STATUS_OK = 0
STATUS_NO_JOINT_STATE = 1
STATUS_STALE_JOINT_STATE = 2
STATUS_BAD_JOINT_STATE = 3
STATUS_TF_UNAVAILABLE = 4
STATUS_DISABLED = 5

STATUS_NAMES = {
    STATUS_OK: "OK",
    STATUS_NO_JOINT_STATE: "NO_JOINT_STATE",
    STATUS_STALE_JOINT_STATE: "STALE_JOINT_STATE",
    STATUS_BAD_JOINT_STATE: "BAD_JOINT_STATE",
    STATUS_TF_UNAVAILABLE: "TF_UNAVAILABLE",
    STATUS_DISABLED: "DISABLED",
}


@dataclass
class MonitorConfig:
    """Tunable parameters of the monitor (seconds, Hz, metres).

    ``joint_state_timeout``: age (s) beyond which the state is stale; 0 turns the check off.
    ``max_rate``: cap on evaluations per second (Hz); 0 means no cap.
    ``heartbeat_rate``: outputs per second (Hz) when no joint state arrives; 0 turns it off.
    ``future_tolerance``: a stamp more than this many seconds ahead of ``now`` is rejected.
    ``max_stamp_age``: a stamp more than this many seconds behind ``now`` is rejected.
    ``accept_unstamped``: a stamp of exactly 0 means "not stamped" and is replaced by the arrival
    time (simple publishers leave the stamp empty); when false such messages are rejected.
    ``ignore_unknown_joints``: accept messages with joints that the model does not know and ignore
    those joints (default false: the message is rejected, as the issue asks).
    ``report_distance``: pairs closer than this (m) are reported as contacts.
    ``warning_period``: the same warning is logged at most once per this many seconds.
    """

    joint_state_timeout: float = 0.5
    max_rate: float = 0.0
    heartbeat_rate: float = 1.0
    future_tolerance: float = 0.5
    max_stamp_age: float = 60.0
    accept_unstamped: bool = True
    ignore_unknown_joints: bool = False
    report_distance: float = 0.05
    warning_period: float = 5.0

    def validate(self) -> None:
        """Raise ``ValueError`` naming the parameter when a value is out of range."""
        checks = {
            "joint_state_timeout": self.joint_state_timeout >= 0.0,
            "max_rate": self.max_rate >= 0.0,
            "heartbeat_rate": self.heartbeat_rate >= 0.0,
            "future_tolerance": self.future_tolerance >= 0.0,
            "max_stamp_age": self.max_stamp_age > 0.0,
            "report_distance": self.report_distance >= 0.0,
            "warning_period": self.warning_period >= 0.0,
        }
        for name, ok in checks.items():
            value = getattr(self, name)
            if not (isinstance(value, (int, float)) and math.isfinite(value) and ok):
                raise ValueError(f"parameter {name}: invalid value {value!r}")


@dataclass
class MonitorOutput:
    """Everything one cycle publishes. Times in seconds, distances in metres, world frame."""

    stamp: float  # stamp of the joint state used (0.0 when there is none)
    status: int
    reason: str  # human-readable explanation of the status ("" when OK)
    min_distance: float  # +inf when nothing was checked
    pairs_checked: int
    contacts: list  # the model's contact records, closest first, all finite
    probes: object = None  # probe result (or None when there are no probes / no evaluation)
    compute_time: float = 0.0  # s: evaluate, contact checks and probes (not on_contacts)
    evaluated: bool = False
    time: float = 0.0  # `now` of this output
    joint_state_age: float = math.inf  # s since the oldest per-joint stamp (+inf: none)
    evaluation_rate: float = 0.0  # evaluations per second over the recent window
    dropped_contacts: int = 0  # non-finite contacts removed from this output
    result: object = None  # the model's EvaluationResult (for markers / pictures), or None
    contact_vectors: object = None  # (len(contacts), 4, 3) point_1, point_2, position, normal
    warnings: list = field(default_factory=list)  # throttled warnings to log now


# ----------------------------------------------------------------------------- joint states


class JointStateMerger:
    """Merged joint positions (model order) from partial ``JointState`` messages.

    ``joint_names``: the model's joints; ``aliases``: further accepted names (e.g. the plain
    ADF name of a qualified joint) -> index. Each accepted message updates only the joints it
    names; a rejected message changes nothing. Positions in radians or metres, stamps in seconds.
    """

    def __init__(self, joint_names, config: MonitorConfig | None = None, aliases=None):
        self.config = config or MonitorConfig()
        self.joint_names = list(joint_names)
        self.index = {n: i for i, n in enumerate(self.joint_names)}
        for n, i in (aliases or {}).items():
            self.index.setdefault(n, int(i))
        n = len(self.joint_names)
        self.positions = np.zeros(n)
        self.joint_stamps = np.full(n, -math.inf)  # per-joint stamp of the latest good value
        self.received = np.zeros(n, dtype=bool)
        self.required = np.ones(n, dtype=bool)  # joints that must arrive before evaluating
        self.stamp = 0.0  # stamp of the latest good message
        self.arrival = -math.inf  # arrival time of the latest good message
        self.good_count = 0
        self.bad_count = 0
        self.last_error = ""  # reason of the latest rejection, "" after a good message
        self.last_code = ""  # code of the latest rejection (see check)
        # Name checks of a name list, cached per (tuple of names, ignore_unknown_joints): a
        # JointState stream repeats the same names, so a message costs one dict look-up.
        self._names_cache: dict = {}

    @property
    def has_state(self) -> bool:
        """True when every required joint has been received (always true without joints)."""
        return bool(np.logical_and.reduce(self.received, where=self.required))

    @property
    def bad(self) -> bool:
        """True when the latest message was rejected."""
        return bool(self.last_error)

    def missing(self) -> list:
        """Names of required joints never received."""
        return [n for n, r, q in zip(self.joint_names, self.received, self.required) if q and not r]

    def oldest_stamp(self) -> float:
        """The oldest stamp of the required joints: -inf while one of them was never received
        (its stamp is still the initial -inf; received stamps are finite), +inf when no joint
        is required. One reduction tells both :attr:`has_state` and :meth:`age`."""
        return float(np.minimum.reduce(self.joint_stamps, where=self.required, initial=math.inf))

    def age(self, now: float, has_state: bool | None = None, oldest: float | None = None) -> float:
        """Seconds since the oldest stamp of the required joints (+inf while one is missing;
        0 when no joint is required). ``has_state``: the value of :attr:`has_state` when the
        caller knows it already; ``oldest``: that of :meth:`oldest_stamp`."""
        if not (self.has_state if has_state is None else has_state):
            return math.inf
        if oldest is None:
            oldest = self.oldest_stamp()
        return 0.0 if oldest == math.inf else max(0.0, now - oldest)

    NAMES_CACHE_SIZE = 64  # distinct name lists remembered (cleared when full)

    def _name_checks(self, names: list, ignore_unknown: bool):
        """Checks that depend on the names only: ``(code, reason)`` of the first failing one of
        empty_name / duplicate (the 'unknown' one separately, as it comes after the stamp
        checks), plus the target indices and the kept positions (None: all)."""
        for i, n in enumerate(names):
            if not isinstance(n, str) or not n.strip():
                return ("empty_name", f"joint name #{i} is empty"), None, None, None
        if len(set(names)) != len(names):
            dup = next(n for i, n in enumerate(names) if n in names[:i])
            return ("duplicate", f"joint {dup!r} appears twice"), None, None, None
        targets = [self.index.get(n) for n in names]
        known = [t for t in targets if t is not None]
        if len(set(known)) != len(known):
            dup = next(n for i, n in enumerate(names)
                       if targets[i] is not None and targets[i] in targets[:i])
            return ("duplicate", f"joint {dup!r} appears twice (by another name)"), None, None, None
        unknown = [n for n in names if n not in self.index]
        if unknown and not ignore_unknown:
            shown = ", ".join(repr(n) for n in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
            return None, ("unknown", f"unknown joint name(s) {shown}"), None, None
        keep = [k for k, t in enumerate(targets) if t is not None]
        idx = np.array([targets[k] for k in keep], dtype=np.intp)
        return None, None, idx, (None if len(keep) == len(names) else np.array(keep, np.intp))

    def _cached_name_checks(self, names: tuple, ignore_unknown: bool):
        """:meth:`_name_checks` of ``names``, remembered per (names, ignore_unknown), plus
        whether they name every joint (then the per-joint stamps and flags are set whole)."""
        key = (names, ignore_unknown)
        try:
            entry = self._names_cache.get(key)
        except TypeError:  # an unhashable name: not cached (and rejected as an empty name)
            return self._name_checks(list(names), ignore_unknown) + (False,)
        if entry is None:
            entry = self._name_checks(list(names), ignore_unknown)
            idx = entry[2]
            entry += (idx is not None and len(idx) == len(self.joint_names),)
            if len(self._names_cache) >= self.NAMES_CACHE_SIZE:
                self._names_cache.clear()
            self._names_cache[key] = entry
        return entry

    def check(self, names, positions, stamp: float, now: float):
        """Validate one message.

        Returns ``(code, reason, effective stamp, indices, values)``; ``code`` is "" when the
        message is good, else one of ``length``, ``empty_name``, ``duplicate``, ``non_finite``,
        ``bad_stamp``, ``unstamped``, ``future``, ``past``, ``unknown`` (the first failing check
        in this order).
        """
        return self._check(names, positions, stamp, now)[:5]

    def _check(self, names, positions, stamp: float, now: float):
        """:meth:`check`, plus whether a good message names every joint."""
        cfg = self.config

        def reject(code, reason):
            return code, reason, stamp, None, None, False

        try:
            names = tuple(names)
            values = np.asarray(positions, dtype=float)
            if values.ndim != 1:
                values = values.reshape(-1)
        except (TypeError, ValueError):
            return reject("non_finite", "positions are not numbers")
        if len(names) != values.size:
            return reject("length", f"{len(names)} names but {values.size} positions")
        name_error, unknown_error, idx, keep, every = self._cached_name_checks(
            names, bool(cfg.ignore_unknown_joints))
        if name_error is not None:
            return reject(*name_error)
        if not all(map(math.isfinite, values.tolist())):  # a few joints: faster than NumPy
            i = int(np.argmin(np.isfinite(values)))
            return reject("non_finite", f"joint {names[i]!r} has a non-finite position ({values[i]})")
        try:
            stamp = float(stamp)
        except (TypeError, ValueError):
            return reject("bad_stamp", f"stamp {stamp!r} is not a number")
        if not math.isfinite(stamp):
            return reject("bad_stamp", f"stamp {stamp} is not finite")
        if stamp == 0.0:
            if not cfg.accept_unstamped:
                return reject("unstamped", "message is not stamped (stamp 0)")
            stamp = float(now)
        if stamp > now + cfg.future_tolerance:
            return reject("future", f"stamp is {stamp - now:.3f} s in the future "
                                    f"(tolerance {cfg.future_tolerance:g} s)")
        if stamp < now - cfg.max_stamp_age:
            return reject("past", f"stamp is {now - stamp:.3f} s in the past "
                                  f"(limit {cfg.max_stamp_age:g} s)")
        if unknown_error is not None:
            return reject(*unknown_error)
        return "", "", stamp, idx, (values if keep is None else values[keep]), every

    def update(self, names, positions, stamp: float, now: float):
        """Apply one message; returns ``(accepted, reason)`` (reason "" when accepted).

        The code of the latest rejection is kept in ``last_code``."""
        code, error, stamp, idx, values, every = self._check(names, positions, stamp, now)
        if code:
            self.bad_count += 1
            self.last_error = error
            self.last_code = code
            return False, error
        self.positions[idx] = values
        if every:  # the same values as by index, without the scatter
            self.joint_stamps.fill(stamp)
            self.received.fill(True)
        else:
            self.joint_stamps[idx] = stamp
            self.received[idx] = True
        self.stamp = stamp
        self.arrival = float(now)
        self.good_count += 1
        self.last_error = ""
        self.last_code = ""
        return True, ""


# ----------------------------------------------------------------------------- rate and warnings


class RateLimiter:
    """At most ``max_rate`` evaluations per second on average.

    Evaluations are given slots ``1 / max_rate`` s apart; a slot used late (by less than one
    period) does not push the next slot back, so clock jitter of the input does not lower the rate.
    ``request()`` marks an evaluation as wanted; ``due(now)`` tells whether it may run now;
    ``next_time()`` when a deferred one may run. Requests made while one is pending coalesce into
    it (counted in ``coalesced``); none is dropped.
    """

    TOLERANCE = 1e-6  # s: clock rounding allowed when comparing with a slot

    def __init__(self, max_rate: float = 0.0):
        self.max_rate = float(max_rate)
        self.pending = False
        self.last = -math.inf
        self.requests = 0
        self.coalesced = 0
        self.deferred = 0

    @property
    def max_rate(self) -> float:
        """Cap on evaluations per second (Hz); 0 means no cap."""
        return self._max_rate

    @max_rate.setter
    def max_rate(self, value: float) -> None:
        # the period is kept with the rate: request/due/mark run every cycle and read it
        self._max_rate = float(value)
        self._period = 1.0 / self._max_rate if self._max_rate > 0.0 else 0.0

    @property
    def period(self) -> float:
        """Minimum spacing between evaluations (s); 0 without a cap."""
        return self._period

    def request(self, now: float) -> None:
        """Ask for an evaluation at ``now`` (coalesces with one already pending)."""
        self.requests += 1
        if self.pending:
            self.coalesced += 1
        elif now < self.last + self._period - self.TOLERANCE:
            self.deferred += 1
        self.pending = True

    def next_allowed(self) -> float:
        """Earliest time of the next evaluation (s)."""
        return self.last + self._period

    def due(self, now: float) -> bool:
        """True when an evaluation is pending and allowed at ``now``."""
        return self.pending and now >= self.last + self._period - self.TOLERANCE

    def next_time(self) -> float | None:
        """When the pending evaluation may run (s), or None when nothing is pending."""
        return self.next_allowed() if self.pending else None

    def mark(self, now: float) -> None:
        """Record an evaluation at ``now``; clears the pending request."""
        self.pending = False
        period = self._period
        slot = self.last + period
        self.last = slot if period > 0.0 and slot - self.TOLERANCE <= now < slot + period else float(now)


class WarningThrottle:
    """Lets one message per reason through every ``period`` seconds and counts the rest."""

    def __init__(self, period: float = 5.0):
        self.period = float(period)
        self._last: dict = {}
        self._suppressed: dict = {}

    def __call__(self, key: str, message: str, now: float) -> str | None:
        """The message to log now (with the count of suppressed repeats), or None."""
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return None
        self._last[key] = float(now)
        n = self._suppressed.pop(key, 0)
        return message if n == 0 else f"{message} ({n} similar suppressed)"


# ----------------------------------------------------------------------------- the monitor


_and_reduce = np.logical_and.reduce


def _all_finite(a: np.ndarray) -> bool:
    """True when every value of ``a`` is finite (the reduction itself: no ``.all()`` wrapper)."""
    return bool(_and_reduce(np.isfinite(a), axis=None))


def _finite_vec(v) -> bool:
    return bool(np.all(np.isfinite(np.asarray(v, dtype=float))))


_CONTACT_VECTORS = ("point_1", "point_2", "position", "normal")


class CollisionMonitor:
    """The node's logic around a compiled model.

    ``model``: a :class:`ambf_collision.model.Model` (``joint_names``, ``create_data``,
    ``set_joint_positions``, ``evaluate``). Joint states may name joints by their qualified or
    (when unique) plain name. ``probes``: optional callable ``probes(model, data, result) ->
    probe result`` (see :func:`model_probe_evaluator`). ``required_joints``: joints that must
    have been received before evaluating (default: the movable joints, ``model.tree.movable``,
    or all joints when the model does not say).
    """

    RATE_WINDOW = 1.0  # s over which evaluation_rate is measured

    def __init__(self, model, config: MonitorConfig | None = None, probes=None,
                 required_joints=None):
        self.config = config or MonitorConfig()
        self.config.validate()
        self.model = model
        self.data = model.create_data()
        names = list(model.joint_names)
        plain = list(getattr(model, "joint_plain_names", names))
        aliases = {p: i for i, p in enumerate(plain) if plain.count(p) == 1}
        self.merger = JointStateMerger(names, self.config, aliases=aliases)
        if required_joints is not None:
            idx = [self.merger.index.get(n) for n in required_joints]
            unknown = [n for n, i in zip(required_joints, idx) if i is None]
            if unknown:
                raise ValueError(f"required_joints: unknown joint(s) {unknown}")
            self.merger.required[:] = False
            self.merger.required[idx] = True
        else:
            movable = getattr(getattr(model, "tree", None), "movable", None)
            if movable is not None and len(movable) == len(names):
                self.merger.required[:] = np.asarray(movable, dtype=bool)
        self.limiter = RateLimiter(self.config.max_rate)
        self.throttle = WarningThrottle(self.config.warning_period)
        self.probes = probes
        self.enabled = True
        self.last_output_time = -math.inf
        self.evaluations = 0
        self._eval_times: deque = deque()
        self._warnings: list = []
        self._finite_scratch: dict = {}  # reused buffers of the probe finiteness test

    # -- configuration -------------------------------------------------------------------
    def set_enabled(self, enabled: bool, now: float) -> None:
        """Enable or disable evaluation; either way an output is due at once."""
        self.enabled = bool(enabled)
        self.limiter.request(now)

    def update_config(self, **changes) -> MonitorConfig:
        """Change parameters at run time; refuses (ValueError naming it) an invalid value and
        leaves the configuration unchanged then."""
        new = MonitorConfig(**{**self.config.__dict__, **changes})
        new.validate()
        self.config = new
        self.merger.config = new
        self.limiter.max_rate = new.max_rate
        self.throttle.period = new.warning_period
        return new

    # -- inputs --------------------------------------------------------------------------
    def on_joint_state(self, names, positions, stamp: float, now: float):
        """Take one ``JointState`` message; returns ``(accepted, reason)``.

        Good or bad, the message asks for an output (a bad one to publish the status at once).
        A rejection queues a throttled warning for the next output.
        """
        accepted, reason = self.merger.update(names, positions, stamp, now)
        if not accepted:
            self._warn("bad:" + self.merger.last_code, f"rejected joint state: {reason}", now)
        self.limiter.request(now)
        return accepted, reason

    def _warn(self, key: str, message: str, now: float) -> None:
        msg = self.throttle(key, message, now)
        if msg is not None:
            self._warnings.append(msg)

    # -- scheduling ----------------------------------------------------------------------
    def heartbeat_due(self, now: float) -> bool:
        """True when no output went out for ``1 / heartbeat_rate`` seconds."""
        rate = self.config.heartbeat_rate
        return rate > 0.0 and now - self.last_output_time >= 1.0 / rate

    def next_wakeup(self) -> float | None:
        """Time (s) at which :meth:`poll` should be called next for a deferred evaluation."""
        return self.limiter.next_time()

    def poll(self, now: float, root_poses=None, tf_ok: bool = True):
        """Run a cycle if one is due (a pending, allowed evaluation or a heartbeat).

        Returns the :class:`MonitorOutput` or None when nothing is due.
        """
        if self.limiter.due(now) or self.heartbeat_due(now):
            return self.step(now, root_poses=root_poses, tf_ok=tf_ok)
        return None

    # -- status --------------------------------------------------------------------------
    def status(self, now: float, tf_ok: bool = True):
        """``(status, reason, evaluate?)`` at ``now`` following the module's rules."""
        has_state = self.merger.has_state
        return self._status(now, tf_ok, has_state, self.merger.age(now, has_state))

    def _status(self, now: float, tf_ok: bool, has_state: bool, age: float):
        m = self.merger
        cfg = self.config
        if not self.enabled:
            return STATUS_DISABLED, "disabled", False
        if m.last_error:
            return STATUS_BAD_JOINT_STATE, m.last_error, has_state and tf_ok
        if not has_state:
            missing = m.missing()
            shown = ", ".join(missing[:4]) + (" ..." if len(missing) > 4 else "")
            return STATUS_NO_JOINT_STATE, f"no joint state yet for {shown}", False
        if not tf_ok:
            return STATUS_TF_UNAVAILABLE, "root transforms unavailable", False
        if cfg.joint_state_timeout > 0.0 and age > cfg.joint_state_timeout:
            return (STATUS_STALE_JOINT_STATE,
                    f"joint state is {age:.3f} s old (timeout {cfg.joint_state_timeout:g} s)", True)
        return STATUS_OK, "", True

    # -- one cycle -----------------------------------------------------------------------
    def step(self, now: float, root_poses=None, tf_ok: bool = True,
             on_contacts=None) -> MonitorOutput:
        """Evaluate (when the status allows) and return what the node publishes now.

        ``on_contacts(out)``, when given, is called once per step as soon as the contact part of
        ``out`` (status, stamp, contacts, ``min_distance``, ``pairs_checked``) is final: before
        the probes are evaluated, so that a node can publish contacts first (lowest latency for
        controllers). Its time is not part of ``out.compute_time``."""
        m = self.merger
        oldest = m.oldest_stamp()
        has_state = oldest != -math.inf  # the same as m.has_state, without a second reduction
        age = m.age(now, has_state, oldest)
        status, reason, do_eval = self._status(now, tf_ok, has_state, age)
        out = MonitorOutput(stamp=m.stamp if m.good_count else 0.0, status=status, reason=reason,
                            min_distance=math.inf, pairs_checked=0, contacts=[], time=float(now),
                            joint_state_age=age)
        if do_eval:
            self._evaluate(out, root_poses, now, on_contacts)
        elif on_contacts is not None:
            on_contacts(out)
        if status in (STATUS_NO_JOINT_STATE, STATUS_TF_UNAVAILABLE, STATUS_STALE_JOINT_STATE):
            self._warn("status:" + STATUS_NAMES[status], reason, now)
        self.limiter.mark(now)
        self.last_output_time = float(now)
        times = self._eval_times
        while times and now - times[0] > self.RATE_WINDOW:
            times.popleft()
        out.evaluation_rate = len(times) / self.RATE_WINDOW
        out.warnings, self._warnings = self._warnings, []
        return out

    def _evaluate(self, out: MonitorOutput, root_poses, now: float, on_contacts=None) -> None:
        model, data = self.model, self.data
        t0 = time.perf_counter()
        if self.merger.joint_names:
            model.set_joint_positions(data, self.merger.joint_names, self.merger.positions)
        result = model.evaluate(data, root_poses=root_poses,
                                report_distance=self.config.report_distance, near_only=True)
        out.evaluated = True
        out.result = result
        self.evaluations += 1
        self._eval_times.append(float(now))

        # no contact records to build (nor their vectors to gather) when the model says there
        # is no contact, the usual cycle: the contact_index of a Model's result is empty then
        index = getattr(result, "contact_index", None)
        contacts = [] if index is not None and len(index) == 0 else list(result.contacts)
        if contacts:
            # every contact's vectors in one array: one finiteness test for all of them, and
            # the message conversion reads the values from it (out.contact_vectors)
            try:
                vectors = getattr(result, "contact_vectors", None)  # Model: already one array
                if vectors is None:
                    vectors = np.array([[c.point_1, c.point_2, c.position, c.normal]
                                        for c in contacts], dtype=float).reshape(len(contacts), 4, 3)
            except (TypeError, ValueError):  # not 3-vectors: checked one by one, no array
                vectors = None
                keep = [math.isfinite(float(c.distance)) and all(
                    _finite_vec(getattr(c, k)) for k in _CONTACT_VECTORS) for c in contacts]
            else:
                keep = None
                if not (_all_finite(vectors)
                        and all(math.isfinite(float(c.distance)) for c in contacts)):
                    keep = (np.isfinite(vectors).all(axis=(1, 2)) & np.array(
                        [math.isfinite(float(c.distance)) for c in contacts], dtype=bool)).tolist()
                    vectors = vectors[keep]
            if keep is not None and not all(keep):
                out.dropped_contacts = len(keep) - sum(keep)
                contacts = [c for c, k in zip(contacts, keep) if k]
            out.contact_vectors = vectors
        if out.dropped_contacts:
            self._warn("nan:contacts",
                       f"dropped {out.dropped_contacts} contact(s) with non-finite values", now)
        out.contacts = contacts
        out.pairs_checked = int(result.pairs_checked)
        md = float(result.min_distance)
        if math.isnan(md) or md == -math.inf:
            finite = [float(d) for d in np.asarray(result.distances, dtype=float).ravel()
                      if math.isfinite(d)]
            md = min(finite) if finite else math.inf
            self._warn("nan:min_distance", "min_distance was not finite; recomputed", now)
        out.min_distance = md
        elapsed = time.perf_counter() - t0
        if on_contacts is not None:
            on_contacts(out)
        t0 = time.perf_counter()
        probe_result = self.probes(model, data, result) if self.probes is not None else None
        if probe_result is not None:
            n = _sanitize_probes(probe_result, self._finite_scratch)
            if n:
                self._warn("nan:probes", f"zeroed {n} probe(s)/patch(es) with non-finite values", now)
        out.probes = probe_result
        out.compute_time = elapsed + (time.perf_counter() - t0)


_PROBE_FIELDS = ("depth", "area", "force", "force_body", "contact_normal", "position", "normal")
_FINITE_FIELDS = _PROBE_FIELDS + ("patch_force", "patch_area")


def _probes_finite(pr, scratch: dict | None = None) -> bool:
    """Cheap test that nothing in ``pr`` needs sanitising: the float fields are copied into
    one buffer and tested with one ``isfinite`` into a reused mask, plus one minimum of
    ``distance``. ``scratch`` (reused between calls) keeps, per set of field arrays, their flat
    views (C-contiguous arrays only; the views hold the arrays alive, so their ids cannot be
    reused by other arrays), the buffer and the mask. A result that names the buffers its
    float fields are views of (``finite_buffers``, as ``probes.ProbeResult`` does) has those
    tested in place instead, one ``isfinite`` each, without the copy. False sends the caller
    to the exact per-probe path."""
    buffers = getattr(pr, "finite_buffers", ())
    if buffers:
        arrs = None
        for b in buffers:
            if not _all_finite(b):
                return False
    else:
        arrs = [a for a in (getattr(pr, n, None) for n in _FINITE_FIELDS)
                if isinstance(a, np.ndarray)]
    if arrs:
        key = tuple(map(id, arrs))
        entry = scratch.get(key) if scratch is not None else None
        if entry is None:
            size = sum(a.size for a in arrs)
            flat = ([a.reshape(-1) for a in arrs]
                    if all(a.flags.c_contiguous for a in arrs) else None)
            entry = (flat, np.empty(size), np.empty(size, dtype=bool))
            if scratch is not None:
                if len(scratch) >= 8:
                    scratch.clear()
                scratch[key] = entry
        flat, buf, mask = entry
        try:
            if flat is None:
                np.concatenate(arrs, axis=None, out=buf)
            else:
                np.concatenate(flat, out=buf)
        except TypeError:  # a field that does not cast to float: check one by one
            if not all(np.isfinite(a).all() for a in arrs):
                return False
        else:
            if not np.logical_and.reduce(np.isfinite(buf, out=mask)):
                return False
    dist = getattr(pr, "distance", None)
    if isinstance(dist, np.ndarray) and dist.size:
        lo = float(np.minimum.reduce(dist, axis=None))  # NaN propagates through the minimum
        if lo != lo or lo == -math.inf:
            return False
    return True


def _sanitize_probes(pr, scratch: dict | None = None) -> int:
    """Zero non-finite per-probe values in place (probe marked out of contact); returns the
    number of probes plus patches touched (a non-finite patch value is zeroed even when no
    probe is bad). ``distance`` may be +inf (beyond range) but not NaN/-inf.
    ``scratch``: reused buffers of the finiteness test (see :func:`_probes_finite`)."""
    if _probes_finite(pr, scratch):
        return 0
    n = None
    bad = None
    for name in _PROBE_FIELDS + ("distance",):
        arr = getattr(pr, name, None)
        if not isinstance(arr, np.ndarray) or arr.ndim == 0:
            continue
        if n is None:
            n = arr.shape[0]
            bad = np.zeros(n, dtype=bool)
        if arr.shape[0] != n:
            continue
        if name == "distance":
            b = np.isnan(arr) | (arr == -np.inf)
        else:
            b = ~np.isfinite(arr)
        bad |= b.reshape(n, -1).any(axis=1)
    patch_bad = set()  # non-finite patch values are zeroed whether or not a probe is bad
    for name in ("patch_force", "patch_area"):
        arr = getattr(pr, name, None)
        if isinstance(arr, np.ndarray) and arr.ndim >= 1 and arr.shape[0]:
            pb = ~np.isfinite(arr)
            patch_bad.update(np.flatnonzero(pb.reshape(arr.shape[0], -1).any(axis=1)).tolist())
            arr[pb] = 0.0
    patches = len(patch_bad)
    if bad is None or not bad.any():
        return patches
    for name in _PROBE_FIELDS:
        arr = getattr(pr, name, None)
        if isinstance(arr, np.ndarray) and arr.ndim >= 1 and arr.shape[0] == n:
            arr[bad] = 0.0
    dist = getattr(pr, "distance", None)
    if isinstance(dist, np.ndarray) and dist.shape[:1] == (n,):
        dist[bad] = np.inf
    ic = getattr(pr, "in_contact", None)
    if isinstance(ic, np.ndarray) and ic.shape[:1] == (n,):
        ic[bad] = False
    return int(bad.sum()) + patches


def model_probe_evaluator(model, specs):
    """A ``probes`` callable for :class:`CollisionMonitor` from probe specs (as returned by
    ``probes.load_probe_file``) on a :class:`ambf_collision.model.Model`.

    Returns ``(evaluate, probe_set)``; ``evaluate(model, data, result)`` runs the probe set on the
    body poses and the world shapes of the cycle just evaluated (the model's reused world-shape
    buffer ``link_shapes.world``, so nothing is transformed twice).
    """
    from ambf_collision.probes.probe_set import ProbeSet, rigid_roots

    probe_set = ProbeSet.from_shapes(specs, model.body_names, model.shapes, model.shape_body,
                                     groups_of=model.groups_of, rigid_root=rigid_roots(model))

    def evaluate(model_, data, result):
        return probe_set.evaluate(result.body_R, result.body_t, model_.link_shapes.world)

    return evaluate, probe_set
