"""/diagnostics content (ros/diagnostics.py, pure Python): levels per status, joints never
received, loop-closure residuals."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from ambf_collision.monitor import config as c
from ambf_collision.ros.diagnostics import (ERROR, OK, STALE, WARN, closure_summary,
                                            diagnostic_report)


@pytest.mark.parametrize("status,level", [
    (c.STATUS_OK, OK), (c.STATUS_DISABLED, WARN), (c.STATUS_NO_JOINT_STATE, STALE),
    (c.STATUS_STALE_JOINT_STATE, STALE), (c.STATUS_TF_UNAVAILABLE, STALE),
    (c.STATUS_BAD_JOINT_STATE, ERROR)])
def test_level_of_each_status(status, level):
    got, message, values = diagnostic_report(status, "why", {"x": "1"})
    assert got == level and message == f"{c.STATUS_NAMES[status]}: why"
    assert values == {"x": "1", "status": c.STATUS_NAMES[status]}


def test_unreceived_joints_warn_and_are_listed():
    level, message, values = diagnostic_report(c.STATUS_OK, "", {}, ["/a/yaw", "/a/wrist"])
    assert level == WARN and message == "OK"
    assert values["unreceived_joints"] == "/a/yaw, /a/wrist"


def test_stale_and_forgotten_joints_are_listed_with_their_ages():
    stale = [("/a/wrist", 1.25), ("/a/elbow", 0.5004)]
    level, message, values = diagnostic_report(c.STATUS_STALE_JOINT_STATE, "why", {}, (), None,
                                               stale)
    assert level == STALE and values["stale_joints"] == "/a/wrist (1.250 s), /a/elbow (0.500 s)"
    level, message, values = diagnostic_report(c.STATUS_OK, "", {}, forgotten=[("/a/yaw", 9.0)])
    assert level == WARN and values["forgotten_joints"] == "/a/yaw (9.000 s)"
    assert "stale_joints" not in values


def test_closure_summary_names_the_worst_joint():
    """Residuals (position m, angle rad) of three loop-closing joints 4, 7, 9: the largest
    position mismatch is joint 7's; the largest angle another joint's."""
    names = [f"/r/j{k}" for k in range(10)]
    model = SimpleNamespace(joint_names=names,
                            kinematics=SimpleNamespace(closure_joints=np.array([4, 7, 9])))
    result = SimpleNamespace(closure_residuals=np.array([[1e-4, 0.2], [3e-3, 0.01], [0.0, 0.0]]))
    s = closure_summary(model, result)
    assert s == {"closure_position_residual_m": "0.003", "closure_angle_residual_rad": "0.2",
                 "closure_worst_joint": "/r/j7"}
    assert closure_summary(model, SimpleNamespace()) == {}
    assert closure_summary(model, SimpleNamespace(closure_residuals=np.zeros((0, 2)))) == {}
    _, _, values = diagnostic_report(c.STATUS_OK, "", {}, closure=s)
    assert values["closure_worst_joint"] == "/r/j7"


def test_numbers_never_read_nan():
    from ambf_collision.ros.diagnostics import CycleStats, milliseconds, number

    assert number(float("nan")) == "" and number(None) == "" and number("x") == ""
    assert number(float("inf")) == "inf" and number(-float("inf")) == "-inf"
    assert number(0.5, ".3f") == "0.500" and milliseconds(float("nan")) == ""
    assert CycleStats().values() == {"compute_time_ms": "", "compute_time_max_ms": "",
                                     "cycle_time_ms": "", "cycle_time_max_ms": ""}
    s = CycleStats()
    s.add(0.001, 0.003)
    s.add(0.002, 0.001)
    assert s.values() == {"compute_time_ms": "1.5000", "compute_time_max_ms": "2.0000",
                          "cycle_time_ms": "2.0000", "cycle_time_max_ms": "3.0000"}


def test_periodic_thread_calls_once_per_period_and_never_bunches():
    """50 ms period for 0.6 s, the 4th call blocking 170 ms: calls at 0.05 ... 0.20 s, then the
    next a whole period after the blocking one returned (0.42 s; not the three it overran at
    once), 0.47, 0.52, 0.57: 8 calls (+1 for timing slack), 50 ms apart."""
    import time

    from ambf_collision.ros.diagnostics import PeriodicThread

    calls = []

    def tick():
        calls.append(time.monotonic())
        if len(calls) == 4:
            time.sleep(0.17)

    t = PeriodicThread(0.05, tick).start()
    time.sleep(0.6)
    t.stop()
    steps = [b - a for a, b in zip(calls, calls[1:])]
    assert 8 <= len(calls) <= 10, len(calls)
    assert steps[3] >= 0.17 + 0.04, steps  # after the blocking call: a whole period, no burst
    assert all(0.03 <= d <= 0.1 for i, d in enumerate(steps) if i != 3), steps
    errors = []
    t = PeriodicThread(0.01, lambda: 1 / 0, on_error=errors.append).start()
    time.sleep(0.05)
    t.stop()
    assert errors and isinstance(errors[0], ZeroDivisionError) and not t._thread.is_alive()
