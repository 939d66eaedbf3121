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
