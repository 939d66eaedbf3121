"""Continuous collision over a joint-state step: ``Model.evaluate_motion`` (issue 38).

**The motion.** A step from joint positions ``q0`` to ``q1`` (``(J,)``, rad / m, in
``model.joint_names`` order) is the straight line in joint space ``q(s) = q0 + s (q1 - q0)``,
``s`` in [0, 1]: what a position-controlled arm does between two samples. Couplings apply along
it (they are affine: a coupled joint moves on a line too; the entries of coupled joints in
``q0``/``q1`` are overwritten by their couplings, as in ``evaluate``). A file's root pose that
changes from ``(R0, t0)`` to ``(R1, t1)`` moves by SLERP and a linear translation: ``R(s) = R0
Rot(w, s theta)`` with ``Rot(w, theta) = R0^T R1`` (``theta`` in [0, pi]: the shorter way) and
``t(s) = t0 + s (t1 - t0)``. Closure joints stay constraints (reported at ``q1`` only).

**What is computed**, for every checked pair (the pairs of ``evaluate``; filtered pairs are
never checked, so never reported): the earliest ``s`` at which its signed distance reaches 0,
with the witness points and normal at that ``s`` (a pair apart at both ends that touches in
between is a contact: it tunnelled); a pair already touching at ``q0`` at ``s = 0``. Also its
minimum distance over the step: ``min_distance`` (the smallest exact distance sampled, with its
``min_time``) and ``min_bound`` (proven lower bound); the true minimum lies between them, and for
every pair whose bound is below its report distance they differ by at most
``distance_tolerance`` (m, default ``MOTION_DISTANCE_TOLERANCE``), unless the pair's sample budget
(``MOTION_MIN_SAMPLES``) ran out first.

**How** (``motion_kernel.py``, ``motion_bounds.py``): conservative advancement. The exact
distance at ``s`` (the evaluation's pair kernels at the forward kinematics of ``q(s)``), and a
bound ``rate`` (m per step) on how fast the pair's distance can fall anywhere in the step, from
the joint deltas and each joint's lever arm over the shapes it moves (revolute: ``|dq|`` times
the largest distance from its axis to the shapes below it, by the triangle inequality down the
chain and each shape's bounding sphere; prismatic: ``|dq|``; a moving root pose: its angle times
the lever from the file's origin plus its translation). No contact is missed: ``s`` advances by
``d / rate`` only. The reported ``s`` is at most ``MOTION_TIME_TOLERANCE`` (1e-6) before the true
first contact (once the bound allows a contact that near, the distance 1e-6 later is sampled:
<= 0 there brackets it); a pair within ``MOTION_TOUCH_DISTANCE`` (1e-9 m) counts as touching,
and a pair that needs more than ``MOTION_MAX_SAMPLES`` samples (a graze at nanometres) is
reported touching where its advancement stopped.
A plane has no bounding sphere: a pair whose plane moves relative to its partner has
``certified`` False and is checked at the two ends only (a floor fixed with its robot's base
is certified).

After the call the Data holds the state at ``q1`` with the ordinary evaluation's results
(``result.discrete``, an :class:`EvaluationResult`), so a caller gets both the contacts at
``q1`` and those during the step. When the Data's last evaluation was at ``q0`` (the previous
step's end: a node calling once per joint state), it is reused as the step's start; otherwise
``q0`` is evaluated first.

Usage::

    q0 = data.q.copy()                       # the last state evaluated
    model.set_joint_positions(data, names, positions)   # data.q is now q1
    result = model.evaluate_motion(data, q0, data.q, report_distance=0.05, near_only=True)
    for p, s, swept in zip(result.contact_index, result.contact_times, result.swept): ...
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.gjk import SCRATCH_ROWS
from ambf_collision.geometry.tolerances import (MOTION_DISTANCE_TOLERANCE, MOTION_MIN_SAMPLES,
                                                MOTION_TIME_TOLERANCE)
from ambf_collision.model.contact_rows import contact_row_width
from ambf_collision.model.data import EvaluationResult, report_distances
from ambf_collision.model.kinematics_kernels import JOINT_STATE_DTYPE, POSE_DTYPE
from ambf_collision.model.motion_advance import (MOTION_RESULT_COLUMNS, MOTION_RESULT_WIDTH,
                                                 MOTION_TABLES)
from ambf_collision.model.motion_kernel import evaluate_motion_model
from ambf_collision.model.table_buffer import pack

__all__ = ["MotionBuffers", "MotionResult", "evaluate_motion"]


class MotionBuffers:
    """The per-call buffers of ``evaluate_motion`` for one Data (``data.motion``, made at its
    first call): one writable buffer (``buffer``; ``tables``: name -> table in
    ``motion_kernel.MOTION_TABLES`` order) and views ``q0``, ``q1 (J,)``, ``files_0``,
    ``files_1 (F,)`` (``POSE_DTYPE``), ``results (P, 18)`` (``MOTION_RESULT_COLUMNS``), ``order
    (P,)``, ``swept_rows (P, 20 + J)``."""

    def __init__(self, model):
        J, F, B = len(model.joint_names), len(model.world.files), len(model.body_names)
        P, N, K = len(model.pairs), len(model.shapes), len(model.closure_joint_names)
        self.buffer, views = pack([
            np.zeros(J), np.zeros(J), np.zeros(F, POSE_DTYPE), np.zeros(F, POSE_DTYPE),
            np.zeros(J, JOINT_STATE_DTYPE), np.zeros(F, POSE_DTYPE), np.zeros(B, POSE_DTYPE),
            np.zeros((K, 2)), model.link_shapes.local.table, np.ones(N, np.int64),
            np.zeros((P, MOTION_RESULT_WIDTH)), np.zeros(P, np.int64),
            np.zeros((MOTION_MIN_SAMPLES, 3)), np.zeros((F, 4)), np.zeros(J), np.zeros(J),
            np.zeros(P), np.zeros((SCRATCH_ROWS, 9)), np.zeros((3, 3)), np.zeros(4),
            np.zeros(P, np.int64), np.zeros(J), np.zeros((F, 12)), np.zeros((B, 12)),
            np.zeros(1, np.int64), np.zeros((P, contact_row_width(J)))])
        self.tables = dict(zip(MOTION_TABLES, views))
        self.q0, self.q1, self.files_0, self.files_1 = views[:4]
        self.results, self.order, self.swept_rows = views[10], views[11], views[25]


class MotionResult:
    """Result of ``Model.evaluate_motion`` (views of the Data's buffers, valid until its next
    evaluation). ``discrete``: the :class:`EvaluationResult` at ``q1``. Per pair ``(P,)``
    (pair ``p`` is ``model.pairs[p]``): ``contact`` (bool: touches during the step), ``time``
    (``s`` of the first contact, +inf without), ``distance`` (m, at ``time``; else at
    ``s = 0``), ``point_1``, ``point_2``, ``normal`` ``(P,3)`` (world, at ``time``),
    ``min_distance`` (m) and ``min_time`` (its ``s``; -1 when no exact distance was computed,
    then ``min_distance`` is a lower bound), ``min_bound`` (m, proven lower bound over the step;
    -inf when not certified or in contact), ``rate`` (m per step: the motion bound),
    ``certified`` (bool), ``samples`` (exact distance evaluations of the pair).

    The contacts during the step, earliest first: ``contact_index (n,)`` pair indices,
    ``contact_times (n,)``, ``swept (n,)`` True when the pair is apart at ``q1`` (its distance
    there > 0: a contact only the motion saw), ``contact_info`` ``[(body_1, body_2, shape_1,
    shape_2)]``; ``swept_rows (m, 20 + J)``: the rows (``model/contact_rows.py``: distance,
    world vectors, distance Jacobian and rate, body-frame witnesses) of the swept contacts, in
    that order, at their time of contact (the Jacobian at ``q(s)``, the rate with the Data's
    joint velocities)."""

    def __init__(self, model, data, discrete: EvaluationResult, n: int):
        self._model = model
        self.discrete = discrete
        self._results = data.motion.results
        self.contact_index = data.motion.order[:n]
        self._rows = data.motion.swept_rows[:n]
        self._q1_distance = data.distance

    def __getattr__(self, name):   # the per-pair values: columns of the results table
        column = MOTION_RESULT_COLUMNS.get(name)
        if column is None:
            raise AttributeError(name)
        if name in ("contact", "certified"):
            return self._results[:, column] > 0.5
        if name == "samples":
            return self._results[:, column].astype(np.int64)
        return self._results[:, column[0]:column[1]] if isinstance(column, tuple) else self._results[:, column]

    @property
    def contact_times(self) -> np.ndarray:
        return self.time[self.contact_index]

    @property
    def swept(self) -> np.ndarray:
        return self._q1_distance[self.contact_index] > 0.0

    @property
    def swept_rows(self) -> np.ndarray:
        return self._rows[self.swept]

    @property
    def contact_info(self) -> list:
        who = self._model.pair_contact_info
        return [who[k] for k in self.contact_index.tolist()]


def _set_ends(model, motion, q0, q1, data) -> None:
    """``q0`` (None: ``data.q``) and ``q1`` into the motion buffer; ValueError for a length
    other than ``J`` (the kernel refuses what is not finite)."""
    J = len(model.joint_names)
    for what, q, out in (("q0", data.q if q0 is None else q0, motion.q0), ("q1", q1, motion.q1)):
        try:
            if len(q) != J:
                raise ValueError
            out[...] = q
        except (TypeError, ValueError):
            raise ValueError(f"{what}: {np.size(q)} positions, the model has {J} joints "
                             "(model.joint_names order)") from None


def evaluate_motion(model, data, q0, q1, root_poses0=None, root_poses1=None,
                    report_distance: float = 0.05, near_only: bool = False,
                    environment_report_distance=None,
                    distance_tolerance: float = MOTION_DISTANCE_TOLERANCE) -> MotionResult:
    """``Model.evaluate_motion`` (module docstring). ``q0``, ``q1``: ``(J,)`` in
    ``model.joint_names`` order (``q0`` None: ``data.q``); ``root_poses0``: the file root poses
    at ``q0`` as ``Model.set_root_poses`` takes them (None: the Data's), ``root_poses1`` at
    ``q1`` (None: those of ``q0``). ``report_distance``, ``near_only``,
    ``environment_report_distance``: as ``evaluate``, for the evaluation at ``q1`` and the pairs
    whose minimum is refined. Raises ValueError (naming the joint) for a non-finite position or
    a wrong length, and for a tolerance that is not a positive number."""
    motion = data.motion
    if motion is None:
        motion = data.motion = MotionBuffers(model)
    _set_ends(model, motion, q0, q1, data)
    distance_tolerance = float(distance_tolerance)
    if not distance_tolerance > 0.0:
        raise ValueError(f"distance_tolerance must be > 0 m, got {distance_tolerance}")
    report_distance, environment = report_distances(report_distance, environment_report_distance)
    root_moves = root_poses0 is not None or root_poses1 is not None
    if root_moves:
        if root_poses0 is not None:
            model.set_root_poses(data, root_poses0)
        motion.files_0[...] = data.kinematics.files
        if root_poses1 is not None:
            model.set_root_poses(data, root_poses1)
        motion.files_1[...] = data.kinematics.files
    near = max(report_distance, environment, 0.0) if near_only else math.inf
    n, closest, lowest, swept = evaluate_motion_model(
        model.buffer, data.buffer, model.motion_buffer, motion.buffer, root_moves, near,
        report_distance, environment, MOTION_TIME_TOLERANCE, distance_tolerance)
    if swept < 0:   # not finite: refused by the kernel, nothing computed
        j = -1 - swept
        what, q = ("q0", motion.q0) if j < len(model.joint_names) else ("q1", motion.q1)
        j %= len(model.joint_names)
        raise ValueError(f"{what}: joint {model.joint_names[j]!r} must be finite, got {q[j]}")
    return MotionResult(model, data, EvaluationResult(model, data, n, closest, lowest), swept)
