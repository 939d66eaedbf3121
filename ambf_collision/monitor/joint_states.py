"""Joint states from several publishers merged into one set of joint positions (no ROS).

:class:`JointStateMerger` merges partial ``JointState`` messages by joint name (as
``robot_state_publisher`` does) and rejects a bad message as a whole, keeping the last good
values. Each message comes from a *source* (the node: one per joint-state topic); a source
resolves names with its own table, so that two robots loaded from the same ADF file (under
different namespaces) can both be driven by topics that use the plain joint names, as dVRK's
``/PSM1/measured_js`` and ``/PSM2/measured_js`` do: each topic is mapped to its ADF file
(:func:`joint_name_table` with ``file``). :func:`joint_roles` tells which joints a joint state
must give.

Positions in radians or metres (model joint order), stamps and times in seconds on the node's
clock.

Joints that carry no state: a fixed joint, a coupled joint (its value is computed from its source)
and a joint that closes a kinematic loop (not a coordinate of the tree) may be named in a
message; their numbers are checked like any other (a NaN rejects the message), but they are
not merged, are never "received" and so never count towards the joint-state age (a publisher
that names such a joint once cannot leave the state STALE). ``carries_state`` tells which.

Velocities (rad/s or m/s, ``JointState.velocity``) ride along with an accepted message and
never reject it: a joint's velocity is known when its latest accepted message gave one (a
``velocity`` list as long as ``name``) and it was finite; a message without velocities (or with
a list of another length) makes the velocities of the joints it names unknown again.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.model.names import ambf_name
from ambf_collision.monitor.config import MonitorConfig

__all__ = ["JointStateMerger", "add_joint_aliases", "joint_name_table", "joint_roles"]


def joint_name_table(joint_names, plain_names, joint_file=None, file=None) -> dict:
    """``{accepted name: joint index}`` for a joint-state source.

    Every joint answers to its qualified name (``/ns/name``) and, where unambiguous, to its
    plain name. ``file``: only the joints of that ADF file (index into the model's files, with
    ``joint_file (J,)`` giving each joint's file) are named by the source, and plain names need
    to be unique within that file only. ``file=None``: every joint, plain names unique overall.
    """
    joint_names = list(joint_names)
    plain_names = list(plain_names)
    chosen = [j for j in range(len(joint_names))
              if file is None or int(joint_file[j]) == int(file)]
    table = {joint_names[j]: j for j in chosen}
    plain_count: dict = {}
    for j in chosen:
        plain_count[plain_names[j]] = plain_count.get(plain_names[j], 0) + 1
    for j in chosen:
        if plain_count[plain_names[j]] == 1:
            table.setdefault(plain_names[j], j)
    return table


def add_joint_aliases(tables, aliases) -> None:
    """Let joint states name joints by other names: each ``'ALIAS=JOINT'`` entry of
    ``aliases`` adds ``ALIAS`` to every table of ``tables`` (``joint_name_table`` dicts, one per
    source, changed in place) that accepts ``JOINT`` (its plain or qualified name, with or
    without the spaces AMBF removes from names), for the same joint. dVRK's CRTK topics name a PSM's joints ``outer_yaw``, ``outer_pitch``, ... where
    AMBF's file names them ``base link-yaw link``, ...: ``'outer_yaw=base link-yaw link'``.

    Raises ``ValueError`` naming the entry: not ``ALIAS=JOINT``, an alias that is already the
    name of another joint (or aliased twice), a ``JOINT`` that no table accepts."""
    for entry in aliases:
        alias, sep, joint = (part.strip() for part in str(entry).partition("="))
        if not sep or not alias or not joint:
            raise ValueError(f"joint_aliases: entry {entry!r} is not 'ALIAS=JOINT'")
        found = False
        for table in tables:
            key = joint if joint in table else ambf_name(joint)
            if key not in table:
                continue
            found = True
            if table.get(alias, table[key]) != table[key]:
                raise ValueError(f"joint_aliases: entry {entry!r}: {alias!r} already names "
                                 "another joint")
            table[alias] = table[key]
        if not found:
            raise ValueError(f"joint_aliases: entry {entry!r}: no joint named {joint!r} "
                             "(plain or qualified, among the joints its topics may name)")


def joint_roles(model) -> tuple:
    """``(needs_value (J,) bool, joint_file (J,) int)`` of a model's joints.

    A joint needs a value from a joint state when it moves (revolute, prismatic), is not
    coupled to another joint and does not close a kinematic loop (the model's
    ``kinematics.movable``, ``coupled``, ``closure``, CONTRACT.md); ``joint_file``: the ADF file
    of each joint. A model without ``kinematics`` (a test stand-in): every joint needs a value,
    all in file 0."""
    n = len(model.joint_names)
    kin = getattr(model, "kinematics", None)

    def flags(name, default):
        value = getattr(kin, name, None)
        return np.asarray(value, dtype=bool) if value is not None else np.full(n, default)

    needs = flags("movable", True) & ~flags("coupled", False) & ~flags("closure", False)
    files = getattr(kin, "joint_file", None)
    joint_file = (np.asarray(files, dtype=np.int64) if files is not None
                  else np.zeros(n, dtype=np.int64))
    return needs, joint_file


class JointStateMerger:
    """Merged joint positions (model order) from partial ``JointState`` messages.

    ``joint_names``: the model's joints. ``sources``: one ``(label, name table)`` per source
    (see :func:`joint_name_table`; ``label`` names the source in rejection reasons); default one
    source that accepts every joint by its qualified name, plus ``aliases`` (name -> index).
    Each accepted message updates only the joints it names; a rejected one changes nothing.

    A message's names are checked once per distinct name list (the verdict is remembered); its
    numbers on every message (:meth:`_check_numbers`), and merged by index.

    State: ``positions (J,)``, ``received (J,)`` bool, ``joint_stamps (J,)`` (s; -inf while
    never received), ``velocities (J,)`` (0 where unknown) and ``velocity_known (J,)`` bool
    (see the module docstring), ``stamp`` (s) of the latest good message, ``good_count``,
    ``bad_count``, ``last_error`` and ``last_code`` of the latest rejection ("" after a good
    message). ``carries_state (J,)`` bool (default every joint): the joints whose values are
    merged; a known joint without state is accepted in a message and ignored (module docstring).
    """

    NAMES_CACHE_SIZE = 64  # distinct (source, name list) verdicts remembered (cleared when full)
    NAMES_CACHE_LENGTH = 256  # name lists longer than this are checked, not remembered
    _NO_VELOCITIES = np.zeros(0)

    def __init__(self, joint_names, config: MonitorConfig | None = None, aliases=None,
                 sources=None, carries_state=None):
        self.config = config or MonitorConfig()
        self.joint_names = list(joint_names)
        self.carries_state = (np.ones(len(self.joint_names), dtype=bool) if carries_state is None
                              else np.array(carries_state, dtype=bool).reshape(len(self.joint_names)))
        if sources is None:
            table = {n: i for i, n in enumerate(self.joint_names)}
            for n, i in (aliases or {}).items():
                table.setdefault(n, int(i))
            sources = [("", table)]
        self.sources = [(str(label), dict(table)) for label, table in sources]
        n = len(self.joint_names)
        self.positions = np.zeros(n)
        self.joint_stamps = np.full(n, -math.inf)
        self.received = np.zeros(n, dtype=bool)
        self.velocities = np.zeros(n)
        self.velocity_known = np.zeros(n, dtype=bool)
        self._stamp = 0.0  # of the latest good message (s)
        # summary of the per-joint state: how many joints were received, the oldest stamp among
        # them (s; +inf while none; None: age() finds it again), False when no joint's velocity
        # is known (True: some may be)
        self._received_count = 0
        self._oldest: float | None = math.inf
        self._any_velocity = False
        self.arrival = -math.inf
        self.good_count = 0
        self.bad_count = 0
        self.last_error = ""
        self.last_code = ""
        self._names_cache: dict = {}
        # what never_received computed, for the received count it was computed at (a joint is
        # first received only a few times in a run; the monitor asks several times per cycle)
        self._never_received: dict = {}
        self._never_received_at = 0

    # -- queries -----------------------------------------------------------------------------
    @property
    def stamp(self) -> float:
        """Stamp (s) of the latest good message (0 before the first)."""
        return self._stamp

    @property
    def bad(self) -> bool:
        """True when the latest message was rejected."""
        return bool(self.last_error)

    def names_where(self, mask) -> list:
        """Names of the joints where ``mask (J,)`` is true."""
        return [n for n, m in zip(self.joint_names, mask) if m]

    def never_received(self, among=None) -> list:
        """Names of the joints never received (only those where ``among (J,)`` is true)."""
        count = self._received_count
        if count == len(self.joint_names):
            return []
        if count != self._never_received_at:
            self._never_received.clear()
            self._never_received_at = count
        key = None if among is None else np.asarray(among, bool).tobytes()
        names = self._never_received.get(key)
        if names is None:
            mask = ~self.received if among is None else np.asarray(among, bool) & ~self.received
            names = self._never_received[key] = self.names_where(mask)
        return list(names)

    def age(self, now: float) -> float:
        """Seconds since the oldest stamp of the received joints (+inf when none was received;
        never negative). Per-joint stamps make a stopped partial publisher visible even while
        others keep publishing."""
        oldest = self._oldest
        if oldest is None:
            rec = self.received
            oldest = self._oldest = float(self.joint_stamps[rec].min()) if rec.any() else math.inf
        return math.inf if oldest == math.inf else max(0.0, now - oldest)

    def stale_joints(self, now: float, timeout: float, forget: float = 0.0) -> list:
        """``[(name, age s), ...]``, oldest first: the received joints whose latest stamp is more
        than ``timeout`` seconds before ``now``, except those older than ``forget`` seconds when
        ``forget > 0`` (see :meth:`forgotten_joints`). Empty when ``timeout <= 0``."""
        if timeout <= 0.0 or self.age(now) <= timeout:
            return []
        ages = now - self.joint_stamps
        mask = self.received & (ages > timeout)
        if forget > 0.0:
            mask &= ages <= forget
        return self._named_ages(mask, ages)

    def forgotten_joints(self, now: float, forget: float) -> list:
        """``[(name, age s), ...]``, oldest first: the received joints that stopped arriving more
        than ``forget`` seconds ago (none when ``forget <= 0``). They no longer make the state
        STALE and keep their last value until they come again."""
        if forget <= 0.0 or self.age(now) <= forget:
            return []
        ages = now - self.joint_stamps
        return self._named_ages(self.received & (ages > forget), ages)

    def _named_ages(self, mask, ages) -> list:
        index = np.flatnonzero(mask)
        index = index[np.argsort(-ages[index], kind="stable")]
        return [(self.joint_names[j], float(ages[j])) for j in index]

    # -- validation --------------------------------------------------------------------------
    def _name_checks(self, names: tuple, source: int):
        """Verdict on the names alone: ``(error, unknown_error, targets)``; ``error`` /
        ``unknown_error`` are ``(code, reason)`` or None (the unknown-name check comes after the
        stamp checks); ``targets``: ``(entries (m,) intp, joints (m,) intp)``, the message
        entries that are merged and the joint each goes to (ignored names left out; ``entries``
        None when every entry is merged, in order)."""
        for i, n in enumerate(names):
            if not isinstance(n, str) or not n.strip():
                return ("empty_name", f"joint name #{i} is empty"), None, None
        if len(set(names)) != len(names):
            dup = next(n for i, n in enumerate(names) if n in names[:i])
            return ("duplicate", f"joint {dup!r} appears twice"), None, None
        label, table = self.sources[source]
        targets = [table.get(n) for n in names]
        known = [t for t in targets if t is not None]
        if len(set(known)) != len(known):
            dup = next(n for i, n in enumerate(names)
                       if targets[i] is not None and targets[i] in targets[:i])
            return ("duplicate", f"joint {dup!r} appears twice (by another name)"), None, None
        unknown = [n for n, t in zip(names, targets) if t is None]
        unknown_error = None
        if unknown and not self.config.ignore_unknown_joints:
            shown = ", ".join(repr(n) for n in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
            where = f" (source {label})" if label else ""
            unknown_error = ("unknown", f"unknown joint name(s) {shown}{where}")
        carries = self.carries_state
        merged = [(k, t) for k, t in enumerate(targets) if t is not None and carries[t]]
        entries = None if len(merged) == len(names) else np.array([k for k, _ in merged], np.intp)
        return None, unknown_error, (entries, np.array([t for _, t in merged], np.intp))

    def _cached_name_checks(self, names: tuple, source: int):
        if len(names) > self.NAMES_CACHE_LENGTH:  # a verdict not worth keeping the names for
            return self._name_checks(names, source)
        key = (source, self.config.ignore_unknown_joints, names)
        try:
            verdict = self._names_cache.get(key)
        except TypeError:  # an unhashable name (rejected as empty): not cached
            return self._name_checks(names, source)
        if verdict is None:
            verdict = self._name_checks(names, source)
            if len(self._names_cache) >= self.NAMES_CACHE_SIZE:
                self._names_cache.clear()
            self._names_cache[key] = verdict
        return verdict

    # -- state changes -------------------------------------------------------------------------
    def update(self, names, positions, stamp: float, now: float, source: int = 0,
               velocities=None):
        """Apply one message from ``source``; returns ``(accepted, reason)`` ("" when
        accepted). The code of the latest rejection is kept in ``last_code``.

        ``velocities``: the message's ``velocity`` list (None or empty: none given). The first
        failing check rejects the message, in this order: ``length``, ``empty_name``,
        ``duplicate``, ``non_finite``, ``bad_stamp``, ``unstamped``, ``future``, ``past``,
        ``unknown``. A stamp of 0 (unstamped) is refused, or becomes ``now`` with
        ``accept_unstamped``.
        """
        try:
            names = tuple(names)
            values = np.asarray(positions, dtype=np.float64).reshape(-1)  # (only read)
        except (TypeError, ValueError):
            return self._refuse("non_finite", "positions are not numbers")
        if len(names) != values.size:
            return self._refuse("length", f"{len(names)} names but {values.size} positions")
        name_error, unknown_error, targets = self._cached_name_checks(names, source)
        if name_error is not None:
            return self._refuse(*name_error)
        try:
            stamp = float(stamp)
        except (TypeError, ValueError):
            return self._refuse("bad_stamp", f"stamp {stamp!r} is not a number")
        now = float(now)
        error, stamp = self._check_numbers(names, values, stamp, now)
        if error is not None or unknown_error is not None:  # (the unknown names come last)
            return self._refuse(*(error or unknown_error))
        self._merge(targets, values, self._velocity_values(velocities, len(names)), stamp)
        self.arrival = now
        self.good_count += 1
        self.last_error = self.last_code = ""
        return True, ""

    def _velocity_values(self, velocities, n: int):
        """The message's velocities as a float64 array, empty when it gives none (None, another
        length than its names, or not numbers)."""
        if velocities is None or len(velocities) != n or not n:
            return self._NO_VELOCITIES
        try:
            return np.asarray(velocities, dtype=np.float64).reshape(-1)  # (only read)
        except (TypeError, ValueError):
            return self._NO_VELOCITIES

    def _check_numbers(self, names, values, stamp: float, now: float):
        """The checks of a message's numbers, in order: every position finite, the stamp finite,
        a stamp of 0 refused (or taken as ``now`` with ``accept_unstamped``), not more than
        ``future_tolerance`` ahead of ``now`` nor more than ``max_stamp_age`` behind. Returns
        ``(None, effective stamp s)``, or ``((code, reason), stamp)`` of the first that fails."""
        cfg = self.config
        if not _all_finite(values):
            i = int(np.argmin(np.isfinite(values)))
            return ("non_finite", f"joint {names[i]!r} has a non-finite position ({values[i]})"), stamp
        if not math.isfinite(stamp):
            return ("bad_stamp", f"stamp {stamp} is not finite"), stamp
        if stamp == 0.0:
            if not cfg.accept_unstamped:
                return ("unstamped", "stamp is 0 (the message is not stamped): stamp it, or set "
                        "accept_unstamped to stamp it on arrival"), stamp
            stamp = now
        if stamp > now + cfg.future_tolerance:
            return ("future", f"stamp is {stamp - now:.3f} s in the future (tolerance "
                    f"{cfg.future_tolerance:g} s)"), stamp
        if stamp < now - cfg.max_stamp_age:
            return ("past", f"stamp is {now - stamp:.3f} s in the past (limit "
                    f"{cfg.max_stamp_age:g} s)"), stamp
        return None, stamp

    def _merge(self, targets, values, velocities, stamp: float) -> None:
        """Write an accepted message's ``values (n,)`` and ``velocities`` (``(n,)``, or empty:
        none given) into the joints ``targets`` names (:meth:`_name_checks`), at ``stamp``."""
        entries, joints = targets
        self.positions[joints] = values if entries is None else values[entries]
        self.joint_stamps[joints] = stamp
        if self._received_count < len(self.joint_names) and not self.received[joints].all():
            self.received[joints] = True  # a joint received for the first time
            self._received_count = int(np.count_nonzero(self.received))
        # every received joint named: this stamp is the oldest (else age() looks again)
        self._oldest = stamp if 0 < joints.size == self._received_count else None
        if velocities.size:  # a non-finite velocity is unknown (and 0)
            v = velocities if entries is None else velocities[entries]
            known = True if _all_finite(v) else np.isfinite(v)
            self.velocities[joints] = v if known is True else np.where(known, v, 0.0)
            self.velocity_known[joints] = known
            self._any_velocity = True
        elif self._any_velocity:
            self.velocities[joints] = 0.0
            self.velocity_known[joints] = False
        self._stamp = stamp

    def _refuse(self, code: str, reason: str):
        self.reject(code, reason)
        return False, reason

    def velocities_given(self, among=None) -> bool:
        """True when a good message came and every joint where ``among (J,)`` is true (default:
        every joint) has a known velocity."""
        if not self.good_count:
            return False
        if not self._any_velocity:  # none known: given only when none is asked for
            return not (self.joint_names if among is None else any(among))
        known = self.velocity_known if among is None else self.velocity_known | ~np.asarray(among, bool)
        return bool(known.all())

    def reject(self, code: str, reason: str) -> None:
        """Count a rejected message (``code``, ``reason`` as :meth:`update` gives them)."""
        self.bad_count += 1
        self.last_error, self.last_code = reason, code

    def rebase(self, now: float) -> None:
        """The clock jumped back to ``now``: the stamps of the values held (joints, latest
        message) become ``now``, so ages count from the jump, not from a time now in the
        future."""
        self.joint_stamps[self.received] = now
        if self.good_count:
            self._stamp = float(now)
            self.arrival = float(now)
        self._summarize()

    def take_over(self, old: JointStateMerger) -> None:
        """Carry the values of ``old`` (a merger of a previous model) over by joint name."""
        index = {n: i for i, n in enumerate(old.joint_names)}
        for i, name in enumerate(self.joint_names):
            j = index.get(name)
            if j is not None and old.received[j] and self.carries_state[i]:
                self.velocities[i] = old.velocities[j]
                self.velocity_known[i] = old.velocity_known[j]
                self.positions[i] = old.positions[j]
                self.joint_stamps[i] = old.joint_stamps[j]
                self.received[i] = True
        self._stamp = old.stamp
        self.arrival, self.good_count = old.arrival, old.good_count
        self._summarize()

    def _summarize(self) -> None:
        """The summary after the per-joint state changed otherwise than by a message."""
        self._received_count = int(np.count_nonzero(self.received))
        self._oldest = None
        self._any_velocity = bool(self.velocity_known.any())


def _all_finite(values) -> bool:
    """True when every number of the 1-D float array ``values`` is finite (no NaN, no inf):
    one pass in Python, which for a joint state's few numbers costs less than NumPy's
    reduction."""
    return all(map(math.isfinite, values.tolist()))
