"""What the node reports on ``/diagnostics`` and when (pure Python; the node wraps the report in
``diagnostic_msgs/DiagnosticStatus``).

One message per ``diagnostics_period`` from :class:`PeriodicThread`, a thread of its own: the
executor's timers can be held up behind a flood of joint states (rclpy's EventsExecutor queues
one event per arriving message), this thread cannot. Values are strings without NaN:
an unknown number is ``''``, a number that is infinite by definition (the distance when nothing
is checked, the age of a joint state never received) is ``inf``.

Levels (``DiagnosticStatus`` bytes): OK when monitoring as asked; WARN when disabled (or idle
without a model), or when joints were never received and are held at their last value; STALE
when the input is missing or too old (no joint state yet, stale joint state, root transforms
unavailable); ERROR when the latest joint state was rejected.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.monitor.config import (STATUS_BAD_JOINT_STATE, STATUS_DISABLED,
                                           STATUS_NAMES, STATUS_NO_JOINT_STATE, STATUS_OK,
                                           STATUS_STALE_JOINT_STATE, STATUS_STALE_SOURCE,
                                           STATUS_TF_UNAVAILABLE)

__all__ = ["ERROR", "LEVELS", "OK", "STALE", "WARN", "CycleStats", "PeriodicThread",
           "closure_summary", "diagnostic_report", "milliseconds", "number"]

OK, WARN, ERROR, STALE = 0, 1, 2, 3  # diagnostic_msgs/DiagnosticStatus levels

LEVELS = {STATUS_OK: OK, STATUS_DISABLED: WARN, STATUS_NO_JOINT_STATE: STALE,
          STATUS_STALE_JOINT_STATE: STALE, STATUS_TF_UNAVAILABLE: STALE,
          STATUS_BAD_JOINT_STATE: ERROR, STATUS_STALE_SOURCE: STALE}


def closure_summary(model, result) -> dict:
    """Loop-closure residuals of an evaluation as diagnostic values: the largest position (m)
    and angle (rad) mismatch over the loop-closing joints and the joint with the largest
    position mismatch (then angle). Empty without closures."""
    res = getattr(result, "closure_residuals", None)
    if res is None:
        return {}
    res = np.asarray(res, dtype=float).reshape(-1, 2)
    if not len(res):
        return {}
    kin = getattr(model, "kinematics", None)
    closures = list(getattr(kin, "closure_joints", range(len(res))))
    worst = int(np.lexsort((res[:, 1], res[:, 0]))[-1])
    joint = closures[worst] if worst < len(closures) else worst
    name = model.joint_names[joint] if isinstance(joint, (int, np.integer)) else str(joint)
    return {"closure_position_residual_m": number(res[:, 0].max(), ".6g"),
            "closure_angle_residual_rad": number(res[:, 1].max(), ".6g"),
            "closure_worst_joint": name}


def diagnostic_report(status: int, reason: str, values: dict, unreceived=(),
                      closure=None, stale=(), forgotten=()) -> tuple:
    """``(level, message, values)`` of one status: ``values`` (str -> str) extended by the
    joints never received (``unreceived_joints``), the joints older than the timeout
    (``stale_joints``: ``stale`` as ``[(name, age s)]``), those forgotten after
    ``joint_forget_timeout`` (``forgotten_joints``, the same form) and the closure residuals
    (``closure``, see :func:`closure_summary`)."""
    level = LEVELS.get(status, WARN)
    if status == STATUS_OK and unreceived:
        level = WARN
    values = dict(values)
    values["status"] = STATUS_NAMES.get(status, str(status))
    if unreceived:
        values["unreceived_joints"] = ", ".join(unreceived)
    if status == STATUS_OK and forgotten:
        level = WARN
    for key, named_ages in (("stale_joints", stale), ("forgotten_joints", forgotten)):
        if named_ages:
            values[key] = ", ".join(f"{name} ({number(age, '.3f')} s)" for name, age in named_ages)
    values.update(closure or {})
    message = STATUS_NAMES.get(status, str(status)) + (f": {reason}" if reason else "")
    return level, message, values


def number(x, fmt: str = ".6g") -> str:
    """A diagnostic value: ``x`` formatted, ``''`` for NaN (unknown), ``inf``/``-inf`` as such."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return ""
    if math.isnan(x):
        return ""
    return format(x, fmt) if math.isfinite(x) else ("inf" if x > 0 else "-inf")


def milliseconds(seconds: float) -> str:
    """A time in ms for a diagnostic value ('' when unknown)."""
    return number(1e3 * seconds, ".4f") if math.isfinite(seconds) else ""


class PeriodicThread:
    """Calls ``callback()`` every ``period`` seconds of wall time from a daemon thread.

    Exactly one call per period: the schedule is kept from the start (no drift), a call that
    comes late (a loaded machine) is not followed by catch-up calls, the schedule restarts from
    it. Independent of the node's executor, so that a flood of joint states, which can queue up
    in front of the executor's timers, cannot delay or bunch what this thread publishes.
    ``period`` may be changed (from the next call on); ``on_error(err)`` gets an exception of
    ``callback`` (the thread goes on); :meth:`stop` ends the thread and waits for it.
    """

    def __init__(self, period: float, callback, name: str = "periodic", on_error=None):
        import threading

        self.period = float(period)
        self.callback = callback
        self.on_error = on_error
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> "PeriodicThread":
        self._thread.start()
        return self

    def _run(self) -> None:
        import time

        due = time.monotonic() + self.period
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            try:
                self.callback()
            except Exception as err:  # noqa: BLE001 - reported, the schedule goes on
                if self.on_error is not None:
                    self.on_error(err)
            now = time.monotonic()
            due += self.period
            if due <= now:  # late by a period or more: restart from now, no bunching
                due = now + self.period

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout)


class CycleStats:
    """Compute and cycle times (s) of the evaluations since the last diagnostics message."""

    def __init__(self):
        self.reset()

    def reset(self):
        self.cycles = 0
        self.compute = self.cycle = self.compute_max = self.cycle_max = 0.0

    def add(self, compute: float, cycle: float):
        self.cycles += 1
        self.compute += compute
        self.cycle += cycle
        self.compute_max = max(self.compute_max, compute)
        self.cycle_max = max(self.cycle_max, cycle)

    def values(self) -> dict:
        """Mean and largest compute and cycle time (ms; '' when nothing was evaluated)."""
        n = self.cycles
        return {"compute_time_ms": milliseconds(self.compute / n if n else math.nan),
                "compute_time_max_ms": milliseconds(self.compute_max if n else math.nan),
                "cycle_time_ms": milliseconds(self.cycle / n if n else math.nan),
                "cycle_time_max_ms": milliseconds(self.cycle_max if n else math.nan)}
