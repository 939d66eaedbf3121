"""What the node reports on ``/diagnostics``: level, message and key/values of one status
(pure Python; the node wraps them in ``diagnostic_msgs/DiagnosticStatus``).

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
                                           STATUS_STALE_JOINT_STATE, STATUS_TF_UNAVAILABLE)

__all__ = ["ERROR", "LEVELS", "OK", "STALE", "WARN", "closure_summary", "diagnostic_report"]

OK, WARN, ERROR, STALE = 0, 1, 2, 3  # diagnostic_msgs/DiagnosticStatus levels

LEVELS = {STATUS_OK: OK, STATUS_DISABLED: WARN, STATUS_NO_JOINT_STATE: STALE,
          STATUS_STALE_JOINT_STATE: STALE, STATUS_TF_UNAVAILABLE: STALE,
          STATUS_BAD_JOINT_STATE: ERROR}


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
    return {"closure_position_residual_m": f"{res[:, 0].max():.6g}",
            "closure_angle_residual_rad": f"{res[:, 1].max():.6g}",
            "closure_worst_joint": name}


def diagnostic_report(status: int, reason: str, values: dict, unreceived=(),
                      closure=None) -> tuple:
    """``(level, message, values)`` of one status: ``values`` (str -> str) extended by the
    joints never received (``unreceived_joints``) and the closure residuals (``closure``, see
    :func:`closure_summary`)."""
    level = LEVELS.get(status, WARN)
    if status == STATUS_OK and unreceived:
        level = WARN
    values = dict(values)
    values["status"] = STATUS_NAMES.get(status, str(status))
    if unreceived:
        values["unreceived_joints"] = ", ".join(unreceived)
    values.update(closure or {})
    message = STATUS_NAMES.get(status, str(status)) + (f": {reason}" if reason else "")
    return level, message, values


def milliseconds(seconds: float) -> str:
    """A time in ms for a diagnostic value ('' when unknown)."""
    return f"{1e3 * seconds:.4f}" if math.isfinite(seconds) else ""
