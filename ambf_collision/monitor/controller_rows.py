"""The controller outputs of an evaluation as rows in message order (no ROS).

Per contact one float64 row: the distance Jacobian (one value per joint, the model's joint
order: m per rad or m per m), then ``distance_rate`` (m/s), ``point_1_local`` and
``point_2_local`` (m, each in its body's frame). The ROS adapter writes a row into the
``Contact`` message's ``jacobian``, ``distance_rate``, ``point_1_local`` and ``point_2_local``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CONTROLLER_VALUES", "controller_rows"]

CONTROLLER_VALUES = 7
"""Values of a controller row after the Jacobian: distance_rate, point_1_local, point_2_local."""


def controller_rows(result, n: int, n_joints: int, rates_valid: bool) -> np.ndarray:
    """``(n, J + 7)``: per contact of ``result`` (its first ``n``) the Jacobian, the distance
    rate (0 unless ``rates_valid``), point_1_local, point_2_local, as the message orders them
    (a new array); zeros where the result has none (a stand-in model)."""
    J = n_joints
    rows = np.zeros((n, J + CONTROLLER_VALUES))
    if not n:
        return rows
    jac = getattr(result, "jacobians", None)
    if jac is not None:
        rows[:, :J] = jac[:n]
    rates = getattr(result, "distance_rates", None)
    if rates is not None and rates_valid:
        rows[:, J] = rates[:n]
    p1, p2 = getattr(result, "point_1_local", None), getattr(result, "point_2_local", None)
    if p1 is not None and p2 is not None:
        rows[:, J + 1:J + 4], rows[:, J + 4:] = p1[:n], p2[:n]
    return rows
