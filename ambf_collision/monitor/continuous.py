"""The monitor's continuous mode (issue 38): each evaluation covers the step from the previous
evaluated joint state to this one (``Model.evaluate_motion``), so a contact that happened
between two samples is reported (no ROS).

**The step.** From the previous evaluation's joint positions and stamp ``t0`` to this one's
(``t1``): the straight line in joint space, couplings along it, a root pose that changed by
SLERP and a linear translation (``model/motion.py``). A contact found at ``s`` in [0, 1] has
the time ``t0 + s (t1 - t0)`` (s, the monitor's clock). The output carries ``s`` and ``t0``
(``contact_fractions``, ``step_start``) beside the time in float seconds, so that the node
writes it from the two stamps' integer nanoseconds, exactly.

**Not a motion.** The evaluation is the ordinary one at the state, with the reason in
:attr:`StepTracker.note` (the node's diagnostics show it), when there is no previous evaluation
(the first one, or the first after :meth:`StepTracker.restart`: a clock jump back, a reload),
when the stamp went back, when the gap since the previous state is longer than
``joint_state_timeout`` (when > 0), or when a joint moved more than ``continuous_max_step``
(rad or m) in the step (a reset, a teleported simulator).

**The contacts.** One per pair. Those at the state (distance below the report distance), closest
first, each with the time its pair first touched in the step (``t0`` when it touched already at
``t0``; 0, no time, for a near contact that never touched); and the swept ones, pairs apart at
the state that touched during the step, with their row at their time of contact (the distance
there, about 0, its witnesses, normal and Jacobian: ``MotionResult.swept_rows``). A swept pair
also near at the state is reported once, swept. Together in order of distance (stable).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["StepTracker", "contact_times", "step_contacts", "touch_fractions"]


def touch_fractions(rows: np.ndarray) -> np.ndarray:
    """The step fractions of contacts evaluated at one state only (``rows (n, 20 + J)``,
    distance in column 0; the step starts and ends at the state): 0 for a pair touching
    (distance <= 0), +inf (no time) for a near one."""
    return np.where(rows[:, 0] <= 0.0, 0.0, math.inf)


def contact_times(fractions: np.ndarray, start: float, stamp: float) -> np.ndarray:
    """``(n,)`` s: ``start + s (stamp - start)`` for each fraction ``s`` in [0, 1], 0 (no time)
    for +inf."""
    times = np.zeros(fractions.shape)
    touched = fractions <= 1.0
    times[touched] = start + fractions[touched] * (stamp - start)
    return times


class StepTracker:
    """The previous evaluation of one monitor (its positions ``(J,)``, stamp) and whether the
    next one is a motion from it. Counts, for the diagnostics: ``motions`` (evaluations that
    covered their step), ``state_only`` (continuous evaluations that were not a motion) and
    ``last_note`` (the latest reason)."""

    def __init__(self, joint_names: list):
        self.joint_names = joint_names
        self.q0 = np.zeros(len(joint_names))
        self.t0 = math.nan   # no previous evaluation
        self.motions = self.state_only = 0
        self.last_note = ""
        self._restart_reason = "first evaluation"

    def restart(self, reason: str) -> None:
        """Forget the previous evaluation (``reason``: what the next evaluation's note says)."""
        self.t0 = math.nan
        self._restart_reason = reason

    def not_a_motion(self, q1: np.ndarray, t1: float, config) -> str:
        """Why the step from the previous evaluation to ``(q1, t1)`` is not a motion ("" when it
        is), following the module's rules with ``config`` (``joint_state_timeout``,
        ``continuous_max_step``); counted."""
        note = self._why_not(q1, t1, config)
        if note:
            self.state_only += 1
            self.last_note = note
        else:
            self.motions += 1
        return note

    def summary(self) -> str:
        """The counts as the diagnostics show them."""
        last = f" (last: {self.last_note})" if self.last_note else ""
        return f"{self.motions} steps, {self.state_only} at the state only{last}"

    def _why_not(self, q1: np.ndarray, t1: float, config) -> str:
        t0 = self.t0
        if math.isnan(t0):
            return self._restart_reason
        if t1 < t0:
            return f"the joint-state stamp went back by {t0 - t1:.6f} s"
        timeout = config.joint_state_timeout
        if 0.0 < timeout < t1 - t0:
            return f"{t1 - t0:.3f} s since the previous state (joint_state_timeout {timeout:g} s)"
        jump = np.abs(q1 - self.q0)
        j = int(np.argmax(jump)) if jump.size else 0
        if jump.size and not jump[j] <= config.continuous_max_step:
            return (f"{self.joint_names[j]} moved {jump[j]:.4g} in one step "
                    f"(continuous_max_step {config.continuous_max_step:g})")
        return ""

    def evaluated(self, q: np.ndarray, stamp: float) -> None:
        """The monitor evaluated the state ``(q, stamp)``: the next step starts there."""
        self.q0[...] = q
        self.t0 = float(stamp)


def step_contacts(model, motion, info: list, rows: np.ndarray) -> tuple:
    """``(info, rows, fractions, swept)`` of a motion step (module docstring): ``motion`` the
    ``MotionResult``, ``info``/``rows`` the contacts at the state (``motion.discrete``'s).
    ``fractions (n,)``: each pair's ``s`` of first contact in the step (+inf: it did not
    touch), ``swept (n,)`` bool."""
    pairs = motion.discrete.contact_index
    time = motion.time
    fractions = time[pairs]
    swept_pairs = motion.contact_index[motion.swept]
    if not swept_pairs.size:
        return info, rows, fractions, np.zeros(len(info), dtype=bool)
    keep = ~np.isin(pairs, swept_pairs)   # a swept pair near at the state: reported swept
    who = model.pair_contact_info
    info = [c for c, k in zip(info, keep.tolist()) if k] + [who[p] for p in swept_pairs.tolist()]
    rows = np.concatenate((rows[keep], motion.swept_rows))
    fractions = np.concatenate((fractions[keep], time[swept_pairs]))
    swept = np.concatenate((np.zeros(int(keep.sum()), dtype=bool), np.ones(swept_pairs.size, dtype=bool)))
    order = np.argsort(rows[:, 0], kind="stable")
    return [info[i] for i in order.tolist()], rows[order], fractions[order], swept[order]
