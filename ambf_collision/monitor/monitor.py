"""The collision monitor: what the ``collision_monitor`` node publishes, decided without ROS.

The ROS adapter converts messages and clocks and calls into :class:`CollisionMonitor`; it merges
joint states (:mod:`.joint_states`), schedules evaluations (:mod:`.scheduling`), evaluates the
model and the probes, and keeps NaN out (:mod:`.sanitize`). All times are plain floats in seconds
on one clock (the node's clock: ROS time, or sim time).

Joint policy: the model is evaluated once a first good joint state has arrived, or at once when
the model has no joint that a joint state must give (movable and not coupled). Joints that were
neither received nor coupled keep their last value (initially 0: the ADF pose); they are named in
``MonitorOutput.unreceived`` and in the status reason. ``required_joints`` lets a user demand
joints: nothing is evaluated until all of them came.

The status rules are in :mod:`.status`.
"""

from __future__ import annotations

import math
import time
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ambf_collision.monitor.config import (STATUS_NAMES, STATUS_NO_JOINT_STATE, STATUS_OK,
                                           STATUS_STALE_JOINT_STATE, STATUS_STALE_SOURCE,
                                           STATUS_TF_UNAVAILABLE, MonitorConfig)
from ambf_collision.model.contact_rows import contact_row_width, model_contacts
from ambf_collision.monitor.continuous import (StepTracker, contact_times, step_contacts,
                                               touch_fractions)
from ambf_collision.monitor.obstacle_sources import ObstacleSources, with_obstacles
from ambf_collision.monitor.joint_states import (JointStateMerger, add_joint_aliases,
                                                 joint_name_table, joint_roles)
from ambf_collision.monitor.sanitize import (finite_contacts, finite_min_distance,
                                             sanitize_probes)
from ambf_collision.monitor.scheduling import RateLimiter, WarningThrottle
from ambf_collision.monitor.status import Status, decide_status

# STATUS_NAMES is imported from here by the demo and its tests

__all__ = ["CollisionMonitor", "MonitorOutput", "Status", "joint_roles"]  # Status: .status


@dataclass
class MonitorOutput:
    """Everything one cycle publishes. Times in seconds, distances in metres, world frame."""

    stamp: float  # stamp of the joint state used (`now` when there is none)
    status: int
    reason: str  # human-readable explanation of the status ("" when OK with nothing to say)
    min_distance: float  # +inf when nothing was checked
    pairs_checked: int
    # the reported contacts, closest first, all finite: who (body_1, body_2, shape_1, shape_2)
    # and their (n, 20 + J) rows of values in message order (model/contact_rows.py: distance,
    # world vectors, distance Jacobian, distance rate (0 unless velocities_given), body-frame
    # witnesses); ``contacts`` gives them as records
    contact_info: list = field(default_factory=list)
    contact_rows: np.ndarray = field(default_factory=lambda: np.zeros((0, contact_row_width(0))))
    # per contact: when its pair first touched, as the fraction s of the step from `step_start`
    # to `stamp` (+inf: it did not, a near contact) and as a time (s; 0: none), and whether it
    # is swept (apart at the state, touched during the step: continuous mode, monitor/continuous.py)
    contact_fractions: np.ndarray = field(default_factory=lambda: np.zeros(0))
    contact_times: np.ndarray = field(default_factory=lambda: np.zeros(0))
    contact_swept: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    step_start: float = 0.0  # stamp (s) of the state the step started from (`stamp`: none)
    step_note: str = ""  # why this evaluation was not a motion ("" when it was, or not continuous)
    probes: object = None  # probe result (or None when there are no probes / no evaluation)
    compute_time: float = 0.0  # s: evaluate, contact checks, and the probes once evaluated
    evaluated: bool = False
    time: float = 0.0  # `now` of this output
    joint_state_age: float = math.inf  # s since the oldest received joint's stamp (+inf: none)
    evaluation_rate: float = 0.0  # evaluations per second over the recent window
    dropped_contacts: int = 0  # non-finite contacts removed from this output
    result: object = None  # the model's EvaluationResult (for markers / pictures), or None
    joint_names: list = field(default_factory=list)  # the model's (qualified) joint names
    velocities_given: bool = False  # every needed joint had a finite velocity (then rates = J q_dot)
    unreceived: list = field(default_factory=list)  # joints neither received nor coupled
    stale_joints: list = field(default_factory=list)  # STALE: [(name, age s)], oldest first
    warnings: list = field(default_factory=list)  # throttled warnings to log now

    @cached_property
    def contacts(self) -> list:
        """The contacts as ``model.ModelContact`` records (made on first use)."""
        return model_contacts(self.contact_info, self.contact_rows)


class CollisionMonitor:
    """The node's logic around a compiled model.

    ``model``: a :class:`ambf_collision.model.Model` (``joint_names``, ``joint_plain_names``,
    ``create_data``, ``set_joint_positions``, ``evaluate``). ``probes``: optional callable
    ``probes(model, data, result) -> probe result``. ``required_joints``: joint names that must
    have been received before anything is evaluated. ``joint_sources``: per joint-state source
    the index of the ADF file whose joints it names (None: any joint), see
    :mod:`.joint_states`; default one source for every joint. ``joint_aliases``: ``'ALIAS=JOINT'``
    entries, other names the sources accept for joints (:func:`.joint_states.add_joint_aliases`:
    dVRK's CRTK names). ``idle_reason``: when given, the
    monitor never evaluates and reports ``STATUS_DISABLED`` with that reason (a node without a
    model). ``obstacle_sources``: :class:`~.obstacle_sources.SourceSpec` per sensed obstacle
    source; its clouds come through :meth:`on_cloud`.
    """

    RATE_WINDOW = 1.0  # s over which evaluation_rate is measured

    def __init__(self, model, config: MonitorConfig | None = None, probes=None,
                 required_joints=None, joint_sources=None, joint_aliases=(),
                 idle_reason: str = "", obstacle_sources=()):
        self.config = config or MonitorConfig()
        self.config.validate()
        self.model = model
        self.data = model.create_data()
        names = list(model.joint_names)
        self.joint_names = names  # one list object per model (the writers cache its encoding)
        self._velocities_set = False  # the model's Data holds velocities from a joint state
        self._latest_evaluation = None  # the MonitorOutput whose pose the Data holds
        plain = list(getattr(model, "joint_plain_names", names))
        self.needs_value, joint_file = joint_roles(model)  # joints a joint state must give
        self._needs_any = bool(self.needs_value.any())
        sources = [(f"ADF file {f}" if f is not None else "",
                    joint_name_table(names, plain, joint_file, f))
                   for f in (joint_sources if joint_sources is not None else [None])]
        add_joint_aliases([table for _, table in sources], joint_aliases)
        self.merger = JointStateMerger(names, self.config, sources=sources,
                                       carries_state=self.needs_value)
        self.required = np.zeros(len(names), dtype=bool)
        if required_joints:
            table = joint_name_table(names, plain)
            unknown = [n for n in required_joints if n not in table]
            if unknown:
                raise ValueError(f"required_joints: unknown joint(s) {', '.join(unknown)}")
            self.required[[table[n] for n in required_joints]] = True
            stateless = [n for n in required_joints if not self.needs_value[table[n]]]
            if stateless:
                raise ValueError(f"required_joints: {', '.join(stateless)} carry no state "
                                 "(fixed, coupled or loop-closing joints are never received)")
        self._required_any = bool(self.required.any())
        self.idle_reason = idle_reason
        self.limiter = RateLimiter(self.config.max_rate)
        self.throttle = WarningThrottle(self.config.warning_period)
        self.probes = probes
        self._no_rows = np.zeros((0, contact_row_width(len(names))))  # no contact (read-only)
        self._no_rows.flags.writeable = False
        self.self_report_distance = self.environment_report_distance = -1.0
        self.enabled = True
        self.last_output_time = -math.inf
        self.evaluations = 0
        self._eval_times: deque = deque()
        self._warnings: list = []
        self.steps = StepTracker(names)
        self.obstacles = ObstacleSources(model, obstacle_sources)

    # -- configuration -------------------------------------------------------------------------
    def set_enabled(self, enabled: bool, now: float) -> None:
        """Enable or disable evaluation; either way an output is due at once."""
        self.enabled = bool(enabled)
        self.limiter.request(now)

    def update_config(self, **changes) -> MonitorConfig:
        """Change parameters at run time; refuses (ValueError naming it) an invalid value and
        leaves the configuration unchanged then."""
        new = self.config.replaced(**changes)
        self.config = new
        self.merger.config = new
        self.limiter.max_rate = new.max_rate
        self.throttle.period = new.warning_period
        return new

    def set_report_distances(self, self_pairs: float, environment_pairs: float) -> None:
        """Report distances (m) of self pairs and of robot-environment pairs (the model's
        ``pair_environment``: bodies in different kinematic trees); -1 (or any negative) =
        ``config.report_distance``."""
        self.self_report_distance = float(self_pairs)
        self.environment_report_distance = float(environment_pairs)

    def report_distances(self) -> tuple:
        """``(self pairs, environment pairs)`` report distances in effect (m)."""
        rd, self_rd, env_rd = (self.config.report_distance, self.self_report_distance,
                               self.environment_report_distance)
        return (rd if self_rd < 0.0 else self_rd), (rd if env_rd < 0.0 else env_rd)

    def take_over(self, previous: CollisionMonitor) -> None:
        """Continue from a monitor of a previous model (a reload): joint values by name, the
        enabled flag, the schedule and the counts (evaluations, rejected joint states,
        coalesced requests)."""
        self.merger.take_over(previous.merger)
        self.merger.bad_count = previous.merger.bad_count
        self.set_report_distances(previous.self_report_distance,
                                  previous.environment_report_distance)
        self.enabled = previous.enabled
        self.evaluations = previous.evaluations
        self.last_output_time = previous.last_output_time
        self._eval_times = previous._eval_times
        old, new = previous.limiter, self.limiter
        new.requests, new.coalesced, new.deferred = old.requests, old.coalesced, old.deferred

    # -- inputs ----------------------------------------------------------------------------------
    def on_joint_state(self, names, positions, stamp: float, now: float, source: int = 0,
                       velocities=None):
        """Take one ``JointState`` message from ``source``; returns ``(accepted, reason)``.
        ``velocities``: its ``velocity`` list (optional; see :mod:`.joint_states`).

        Good or bad, the message asks for an output (a bad one to publish the status at once).
        A rejection queues a throttled warning for the next output.
        """
        accepted, reason = self.merger.update(names, positions, stamp, now, source, velocities)
        if not accepted:
            self._warn("bad:" + self.merger.last_code, f"rejected joint state: {reason}", now)
        self.limiter.request(now)
        return accepted, reason

    def on_bad_joint_state(self, code: str, reason: str, now: float) -> None:
        """A joint-state message refused before it could be read (the node's decoder): counted
        and reported as :meth:`on_joint_state` reports a rejected one."""
        self.merger.reject(code, reason)
        self._warn("bad:" + code, f"rejected joint state: {reason}", now)
        self.limiter.request(now)

    def on_cloud(self, source: str, points, sensor_pose, stamp: float, now: float):
        """Take one cloud of obstacle source ``source``: ``points (N,3)`` (m) in the sensor's
        frame, the sensor's pose ``(R, t)`` in world at ``stamp`` (s). Returns the
        :class:`~.obstacle_sources.CloudNote`; the next evaluation uses it. ValueError (the
        source keeps its previous cloud) for an unknown source or bad points."""
        note = self.obstacles.on_cloud(source, points, sensor_pose, stamp)
        self.limiter.request(now)
        return note

    def on_clock_jump_back(self, now: float) -> None:
        """The clock jumped back to ``now`` (bag loop, simulator reset): forget the times that
        now lie in the future (rate limiter, heartbeat, warning throttle, evaluation rate) and
        count joint-state ages from the jump; an output is due at once."""
        self.limiter.reset()
        self.throttle.reset()
        self.last_output_time = -math.inf
        self._eval_times.clear()
        self.merger.rebase(now)
        self.steps.restart("first evaluation after the clock jumped back")
        self.obstacles.rebase(now)
        self.limiter.request(now)

    def _warn(self, key: str, message: str, now: float) -> None:
        msg = self.throttle(key, message, now)
        if msg is not None:
            self._warnings.append(msg)

    # -- scheduling --------------------------------------------------------------------------------
    def heartbeat_due(self, now: float, checked_every: float = 0.0) -> bool:
        """True when an output is due as a heartbeat at ``now`` (``heartbeat_rate`` > 0): no
        output went out for ``1 / heartbeat_rate`` s, less half of ``checked_every``, or the
        last one lies after ``now`` (the clock went back).

        ``checked_every``: how often (s) the caller asks. A caller that asks continually
        (:meth:`poll`) gives 0; a timer at the heartbeat rate gives its period, so it publishes
        when half a period passed without an output: then outputs are never more than 1.5
        periods apart, although the timer is not in phase with the evaluations."""
        rate = self.config.heartbeat_rate
        if rate <= 0.0:
            return False
        since = now - self.last_output_time
        return since >= 1.0 / rate - 0.5 * checked_every or since < 0.0

    def next_wakeup(self) -> float | None:
        """Time (s) at which :meth:`poll` should be called next for a deferred evaluation (None
        when no evaluation is pending)."""
        return self.limiter.next_time()

    def evaluation_due(self, now: float) -> bool:
        """True when an evaluation was asked for (a joint state, ``set_enabled``, a clock jump)
        and the rate cap allows it at ``now``."""
        return self.limiter.due(now)

    def account(self, seconds: float) -> None:
        """The caller's cycle around the last :meth:`step` took ``seconds`` of wall time
        (evaluation and publishing): held to the rate cap's share of the time
        (:class:`~.scheduling.RateLimiter`)."""
        self.limiter.account(seconds)

    def poll(self, now: float, root_poses=None, tf_ok: bool = True):
        """Run a cycle if one is due (a pending, allowed evaluation or a heartbeat); returns the
        :class:`MonitorOutput` or None."""
        if self.limiter.due(now) or self.heartbeat_due(now):
            return self.step(now, root_poses=root_poses, tf_ok=tf_ok)
        return None

    def evaluation_rate(self, now: float) -> float:
        """Evaluations per second over the last :attr:`RATE_WINDOW` seconds. Only reads (a
        copy of) the evaluation times, which are in increasing order: the node's diagnostics
        thread calls it too."""
        times = tuple(self._eval_times)
        return (len(times) - bisect_left(times, now - self.RATE_WINDOW)) / self.RATE_WINDOW

    def _recent_rate(self, now: float) -> float:
        """:meth:`evaluation_rate` for the executor's own step: drops the evaluation times
        older than the window (the deque then holds at most one window's worth) and counts the
        rest, without copying them (at 1 kHz the window holds 1,000 times)."""
        times = self._eval_times
        while times and now - times[0] > self.RATE_WINDOW:
            times.popleft()
        return len(times) / self.RATE_WINDOW

    # -- status ------------------------------------------------------------------------------------
    def output_stamp(self, now: float) -> float:
        """The stamp (s) an output at ``now`` carries: the newest accepted joint state's, or
        ``now`` before the first."""
        m = self.merger
        return m.stamp if m.good_count else float(now)

    def joint_state_age(self, now: float) -> float:
        """Seconds since the oldest received joint's stamp at ``now`` (+inf: none received)."""
        return self.merger.age(now)

    def counts(self) -> dict:
        """The running counts: ``evaluations``, ``joint_states_good`` and ``joint_states_bad``
        (accepted and rejected joint-state messages), ``coalesced`` (requests merged into a
        pending evaluation, :class:`~.scheduling.RateLimiter`)."""
        m = self.merger
        return {"evaluations": self.evaluations, "joint_states_good": m.good_count,
                "joint_states_bad": m.bad_count, "coalesced": self.limiter.coalesced}

    def forgotten_joints(self, now: float) -> list:
        """Joints that stopped arriving and were forgotten after ``joint_forget_timeout``
        (``[(name, age s)]``; none while ``joint_state_timeout`` is 0: no staleness check)."""
        cfg = self.config
        if not 0.0 < cfg.joint_state_timeout:
            return []
        return self.merger.forgotten_joints(now, cfg.joint_forget_timeout)

    def unreceived(self) -> list:
        """Joints neither received nor coupled (they keep their last value, initially 0)."""
        return self.merger.never_received(self.needs_value)

    def status(self, now: float, tf_ok: bool = True, unreceived: list | None = None) -> Status:
        """The :class:`~.status.Status` at ``now`` following the rules of :mod:`.status`
        (``unreceived``: :meth:`unreceived`, when the caller has it)."""
        m = self.merger
        return decide_status(
            self.config, now, enabled=self.enabled, idle_reason=self.idle_reason,
            last_error=m.last_error, needs_first=m.good_count == 0 and self._needs_any,
            missing=m.never_received(self.required) if self._required_any else [],
            tf_ok=tf_ok, age=m.age(now),
            stale=lambda: m.stale_joints(now, self.config.joint_state_timeout,
                                         self.config.joint_forget_timeout),
            unreceived=self.unreceived() if unreceived is None else unreceived,
            forgotten=lambda: self.forgotten_joints(now),
            stale_sources=lambda: self.obstacles.stale(now))

    # -- one cycle ---------------------------------------------------------------------------------
    def step(self, now: float, root_poses=None, tf_ok: bool = True,
             probes: bool = True) -> MonitorOutput:
        """Evaluate (when the status allows) and return what the node publishes now.

        ``probes=False``: the probes are not evaluated in this step (``out.probes`` stays None)
        but by :meth:`add_probes`, while ``out`` is the latest evaluation. So a node publishes the
        contact part of ``out`` (status, stamp, contacts, ``min_distance``, ``pairs_checked``)
        first, for the lowest latency to controllers, and then adds the probes for their topic,
        or only when its markers show them."""
        m = self.merger
        unreceived = self.unreceived()
        status, reason, do_eval, stale = self.status(now, tf_ok, unreceived)
        out = MonitorOutput(stamp=self.output_stamp(now), status=status, reason=reason,
                            min_distance=math.inf, pairs_checked=0, contact_rows=self._no_rows,
                            time=float(now), joint_state_age=m.age(now), unreceived=unreceived,
                            joint_names=self.joint_names, stale_joints=list(stale))
        if do_eval:
            self._evaluate(out, root_poses, now)
        if status == STATUS_STALE_JOINT_STATE:  # once per set of stale joints and period
            self._warn("status:" + ",".join(n for n, _ in stale), reason, now)
        elif status in (STATUS_NO_JOINT_STATE, STATUS_TF_UNAVAILABLE, STATUS_STALE_SOURCE):
            self._warn("status:" + STATUS_NAMES[status], reason, now)
        elif status == STATUS_OK and out.unreceived:
            self._warn("unreceived", f"joints {reason}", now)
        self.limiter.mark(now)
        self.last_output_time = float(now)
        out.evaluation_rate = self._recent_rate(now)
        out.warnings, self._warnings = self._warnings, []
        if probes:
            self.add_probes(out)
        return out

    def _evaluate(self, out: MonitorOutput, root_poses, now: float) -> None:
        model, data = self.model, self.data
        t0 = time.perf_counter()
        merger = self.merger
        if merger.joint_names:
            model.set_joint_positions(data, merger.joint_names, merger.positions)
        given = merger.velocities_given(self.needs_value) and hasattr(model, "set_joint_velocities")
        if given or self._velocities_set:  # rates follow the velocities; without them J 0 = 0
            model.set_joint_velocities(data, merger.joint_names,
                                       merger.velocities if given else np.zeros(len(merger.joint_names)))
            self._velocities_set = given
        out.velocities_given = given
        self_rd, env_rd = self.report_distances()
        report = {"report_distance": self_rd, "near_only": True}
        if self_rd != env_rd:  # each pair class its own, inside the model's kernel
            report["environment_report_distance"] = env_rd  # (stand-in models take none)
        motion, start, stamp = None, self.steps.t0, out.stamp   # the step's stamps (s)
        if self.config.continuous:
            out.step_note = self.steps.not_a_motion(data.q, stamp, self.config)
            if not out.step_note:
                motion = model.evaluate_motion(data, self.steps.q0, data.q, root_poses1=root_poses,
                                               **report)
        result = (model.evaluate(data, root_poses=root_poses, **report) if motion is None
                  else motion.discrete)
        self.steps.evaluated(data.q, stamp)
        obstacles = ()
        if self.obstacles:
            self.obstacles.evaluated(stamp, data.q, data.file_R, data.file_t)
            clouds = self.obstacles.fresh(now)
            obstacles = model.evaluate_obstacles(data, clouds, env_rd) if clouds else ()
        out.evaluated = True
        out.result = result
        self._latest_evaluation = out
        self.evaluations += 1
        self._eval_times.append(float(now))   # trimmed to the window by _recent_rate
        info, rows = (result.contact_info, result.contact_rows) if len(result.contact_index) else ([], self._no_rows)
        fractions = swept = None
        out.step_start = stamp
        if motion is not None:
            out.step_start = start
            if info or len(motion.contact_index):
                info, rows, fractions, swept = step_contacts(model, motion, info, rows)
        if any(len(o.info) for o in obstacles):
            info, rows, fractions, swept = with_obstacles(info, rows, fractions, swept, obstacles)
        if info:  # (the usual cycle has none)
            if fractions is None:
                fractions, swept = touch_fractions(rows), np.zeros(len(info), dtype=bool)
            (out.contact_info, out.contact_rows, out.dropped_contacts, out.contact_fractions,
             out.contact_swept) = finite_contacts(info, rows, fractions, swept)
            out.contact_times = contact_times(out.contact_fractions, out.step_start, stamp)
        if out.dropped_contacts:
            self._warn("nan:contacts",
                       f"dropped {out.dropped_contacts} contact(s) with non-finite values", now)
        out.pairs_checked = int(result.pairs_checked)
        out.min_distance, recomputed = finite_min_distance(result.min_distance, result.distances)
        if recomputed:
            self._warn("nan:min_distance", "min_distance was not finite; recomputed", now)
        out.compute_time = time.perf_counter() - t0

    def add_probes(self, out: MonitorOutput) -> list:
        """Evaluate the probes of ``out``, a step made with ``probes=False``, when the monitor
        has probes and ``out`` is its latest evaluation (the Data still holds that pose) without
        probes yet; otherwise nothing changes. Their time is added to ``out.compute_time``.
        Returns the warnings to log now (non-finite probe values zeroed, throttled), which are
        also appended to ``out.warnings``."""
        if self.probes is None or out.probes is not None or out is not self._latest_evaluation:
            return []
        t0 = time.perf_counter()
        probe_result = self.probes(self.model, self.data, out.result)
        warnings = []
        if probe_result is not None:
            n = sanitize_probes(probe_result)
            msg = self.throttle("nan:probes", f"zeroed {n} probe(s)/patch(es) with non-finite "
                                "values", out.time) if n else None
            if msg is not None:
                warnings.append(msg)
                out.warnings.append(msg)
        out.probes = probe_result
        out.compute_time += time.perf_counter() - t0
        return warnings
