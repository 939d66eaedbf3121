"""One compiled call per motion step: conservative advancement of every checked pair.

:func:`evaluate_motion_model` takes the Model's buffer, the Data's buffer, the Model's motion
bound buffer (``motion_bounds.py``: :data:`~.motion_bounds.MOTION_BOUND_TABLES`) and the Data's
motion buffer (:data:`MOTION_TABLES`, written by ``motion.py``). Over the step ``s`` in [0, 1]
the joints move ``q(s) = q0 + s (q1 - q0)`` (couplings applied to both ends: they are affine, so
every coupled joint moves linearly too) and each file's root pose ``(R, t)`` by
``R(s) = R0 Rot(w, s theta)`` (SLERP; ``Rot(w, theta) = R0^T R1``, ``theta`` in [0, pi]) and
``t(s) = t0 + s (t1 - t0)``.

Per pair, ``rate`` (m per unit ``s``) bounds how fast its distance can fall over the whole step
(``motion_bounds.py``): from a (lower bound of the) distance ``d`` at ``s``, no contact happens
before ``s + d / rate``, and none after ``1 - d1 / rate`` (``d1`` at ``s = 1``). Advancement
samples the exact distance (``geometry/pairs.exact_pair`` at the forward kinematics of ``q(s)``)
at the first ``s`` no bound excludes, until the two excluded ranges meet (no contact), the
distance is <= 0 (contact at that ``s``: every earlier ``s`` was excluded) or the bound allows a
contact within ``MOTION_TIME_TOLERANCE`` (contact reported there). The minimum distance of a pair
without contact is then refined by Lipschitz minimisation (Piyavskii): between two samples the
distance is above both bound lines, so the lowest point of that envelope is a proven lower
bound; the next sample goes there, until the smallest exact sample is within the tolerance of
it. Samples use the motion buffer's own kinematics and shapes: the Data's stay at ``q1``.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.gjk import SCRATCH_ROWS
from ambf_collision.geometry.pairs import exact_pair
from ambf_collision.geometry.tolerances import MOTION_MIN_SAMPLES
from ambf_collision.geometry.transforms import axis_rotation, rotation_quaternion
from ambf_collision.geometry.world_shapes import SHAPE_DTYPE, to_world, world_of
from ambf_collision.model.evaluate_kernel import data_tables, evaluate_model, model_tables
from ambf_collision.model.kinematics_kernels import (JOINT_STATE_DTYPE, MOTION_PRISMATIC,
                                                     MOTION_REVOLUTE, POSE_DTYPE, apply_couplings,
                                                     forward_kinematics, kinematics_buffers)
from ambf_collision.model.table_buffer import float_matrix, float_vector, int_vector, records, words_of

__all__ = ["MOTION_TABLES", "MOTION_RESULT_DTYPE", "evaluate_motion_model"]

_F3 = (np.float64, (3,))

MOTION_RESULT_DTYPE = np.dtype([
    ("contact", np.bool_),        # the pair touches during the step (s in [0, 1])
    ("time", np.float64),         # s of its first contact; +inf without contact
    ("distance", np.float64),     # m, signed, at `time` (<= 0, or within the time tolerance)
    ("point_1", *_F3),            # m, world, at `time`: witness on shape 1
    ("point_2", *_F3),            # m, world, at `time`: witness on shape 2
    ("normal", *_F3),             # unit, world, at `time`: from shape 1 to shape 2
    ("min_distance", np.float64),  # m: smallest exact distance sampled (>= the step's minimum)
    ("min_time", np.float64),     # s of that sample (-1 when no exact sample: min_bound only)
    ("min_bound", np.float64),    # m: proven lower bound of the distance over the step
    ("rate", np.float64),         # m per step: the bound on how fast the distance can fall
    ("certified", np.bool_),      # False: rate infinite (a plane moving), only the ends checked
    ("samples", np.int64),        # exact distance evaluations this pair cost
], align=True)
"""One pair's motion result per row (per call)."""

MOTION_TABLES = ("q0", "q1", "files_0", "files_1", "joints", "files", "bodies",
                 "closure_residuals", "world", "moved", "results", "order", "samples",
                 "file_motion")
"""The Data's motion buffer, in order: ``q0``, ``q1 (J,)`` the step's ends (model order; the
kernel applies the couplings in place), ``files_0``, ``files_1 (F,)`` root poses at the ends
(``POSE_DTYPE``); the samples' kinematics (``joints``, ``files``, ``bodies``,
``closure_residuals (K,2)``), shapes (``world``, ``SHAPE_DTYPE``) and ``moved (N,)``;
``results (P,)`` (:data:`MOTION_RESULT_DTYPE`); ``order (P,)`` the pairs in contact during the
step, earliest first; ``samples (MOTION_MIN_SAMPLES, 3)`` one pair's samples (s, distance,
exact); ``file_motion (F,4)`` per file the rotation vector ``w theta`` (file frame) and
``|t1 - t0|``."""


@njit(cache=True, inline="always")
def _file_motion(F0, F1, out):
    """Per file: the rotation vector of ``R0^T R1`` (angle in [0, pi]) and ``|t1 - t0|``."""
    rel, quat = np.empty((3, 3)), np.empty(4)
    for f in range(F0.R.shape[0]):
        for i in range(3):
            for j in range(3):
                rel[i, j] = F0.R[f, 0, i] * F1.R[f, 0, j] + F0.R[f, 1, i] * F1.R[f, 1, j] + F0.R[f, 2, i] * F1.R[f, 2, j]
        rotation_quaternion(rel, quat)
        v = math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2])
        angle = 2.0 * math.atan2(v, quat[3])
        for i in range(3):
            out[f, i] = angle * quat[i] / v if v > 0.0 else 0.0
        dx, dy, dz = F1.t[f, 0] - F0.t[f, 0], F1.t[f, 1] - F0.t[f, 1], F1.t[f, 2] - F0.t[f, 2]
        out[f, 3] = math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, inline="always")
def _side_rate(K, link, extent, shape, body, common, dq, qmax, file_motion, with_root):
    """m per step: how fast the points of ``shape`` (on ``body``) can move relative to body
    ``common`` (-1: the world), from the joints between them (and the root pose's motion when
    ``with_root``): ``motion_bounds.py``."""
    lever, rate, c = extent[shape], 0.0, body
    while c != common and K.tree_joint[c] >= 0:
        j = K.tree_joint[c]
        if dq[j] > 0.0:
            if K.joint_motion[j] == MOTION_REVOLUTE:
                rate += dq[j] * lever
            elif K.joint_motion[j] == MOTION_PRISMATIC:
                rate += dq[j]
        lever += link[c] + (qmax[j] if K.joint_motion[j] == MOTION_PRISMATIC else 0.0)
        c = K.tree_parent[c]
    if with_root:
        f = K.body_file[c]
        w = file_motion[f]
        angle = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
        if angle > 0.0:
            rate += angle * (lever + link[c])
        rate += w[3]
    return rate


@njit(cache=True, inline="always")
def _envelope(samples, n, rate):
    """``(lowest, at)``: the lowest point of the Lipschitz envelope over the ``n`` samples (rows
    ``s, lower bound, exact`` sorted by ``s``) and the ``s`` where it lies."""
    lowest, at = math.inf, 0.0
    for i in range(n - 1):
        sa, da, sb, db = samples[i, 0], samples[i, 1], samples[i + 1, 0], samples[i + 1, 1]
        x = min(max(0.5 * (da - db) / rate + 0.5 * (sa + sb), sa), sb)
        v = max(da - rate * (x - sa), db - rate * (sb - x))
        if v < lowest:
            lowest, at = v, x
    return lowest, at


@njit(cache=True, inline="always")
def _insert(samples, n, s, d, exact):
    """Inserts the sample ``(s, d, exact)`` into the first ``n`` rows, sorted by ``s``."""
    i = n
    while i > 0 and samples[i - 1, 0] > s:
        samples[i, 0], samples[i, 1], samples[i, 2] = samples[i - 1, 0], samples[i - 1, 1], samples[i - 1, 2]
        i -= 1
    samples[i, 0], samples[i, 1], samples[i, 2] = s, d, exact
    return n + 1


@njit(cache=True, inline="always")
def _set_pose(F, D):
    """The root poses ``F`` (``POSE_DTYPE`` per file) into the kinematics buffers ``D``."""
    for g in range(F.R.shape[0]):
        for i in range(3):
            D.file_t[g, i] = F.t[g, i]
            for k in range(3):
                D.file_R[g, i, k] = F.R[g, i, k]


@njit(cache=True, inline="always")
def _slerp(F0, F1, g, w, s, out_R, out_t):
    """File ``g``'s root pose at ``s``: ``R0 Rot(w s)`` (``w``: its rotation vector, file
    frame; ``file_motion`` row) and ``t0 + s (t1 - t0)``, into row ``g`` of ``out_R``, ``out_t``."""
    angle = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    ax, ay, az = (w[0] / angle, w[1] / angle, w[2] / angle) if angle > 0.0 else (0.0, 0.0, 1.0)
    G = axis_rotation(ax, ay, az, math.cos(s * angle), math.sin(s * angle))
    for i in range(3):
        for j in range(3):
            out_R[g, i, j] = F0.R[g, i, 0] * G[0][j] + F0.R[g, i, 1] * G[1][j] + F0.R[g, i, 2] * G[2][j]
        out_t[g, i] = F0.t[g, i] + s * (F1.t[g, i] - F0.t[g, i])


@njit(cache=True)
def evaluate_motion_model(model, data, bounds, motion, near, report_distance,
                          environment_report_distance, time_tolerance, distance_tolerance):
    """The step from ``q0`` to ``q1`` (module docstring). Leaves the Data at ``q1`` as
    ``evaluate_model`` does (``near``, the report distances as there) and writes every pair's
    motion result. Returns ``(contacts at q1, closest pair at q1, its distance, pairs in contact
    during the step)``."""
    K, link_shapes, C, H, M, pair_bodies, pair_environment = model_tables(model)
    D, velocity, W, R, contact_index, rows, moved = data_tables(data)
    bh, bf = words_of(bounds)
    link, extent = float_vector(bf, bh, 0), float_vector(bf, bh, 1)
    pair_common, body_root = int_vector(bh, 2), int_vector(bh, 3)
    h, f = words_of(motion)
    q0, q1 = float_vector(f, h, 0), float_vector(f, h, 1)
    F0, F1 = records(motion, h, 2, POSE_DTYPE), records(motion, h, 3, POSE_DTYPE)
    S = kinematics_buffers(records(motion, h, 4, JOINT_STATE_DTYPE), records(motion, h, 5, POSE_DTYPE),
                           records(motion, h, 6, POSE_DTYPE), float_matrix(f, h, 7, 2))
    SW, smoved = world_of(records(motion, h, 8, SHAPE_DTYPE)), int_vector(h, 9)
    out = records(motion, h, 10, MOTION_RESULT_DTYPE)
    order, samples, file_motion = int_vector(h, 11), float_matrix(f, h, 12, 3), float_matrix(f, h, 13, 4)
    contact, time, distance, point_1, point_2, normal = (out.contact, out.time, out.distance,
                                                         out.point_1, out.point_2, out.normal)
    min_distance, min_time, min_bound = out.min_distance, out.min_time, out.min_bound
    J, B, P = q0.shape[0], D.body_R.shape[0], out.shape[0]
    apply_couplings(K, q0)
    apply_couplings(K, q1)
    _file_motion(F0, F1, file_motion)
    dq, qmax = np.empty(J), np.empty(J)
    for j in range(J):
        dq[j] = abs(q1[j] - q0[j])
        qmax[j] = max(abs(q0[j]), abs(q1[j]))
    # s = 0: the Data's last evaluation is kept when its bodies are where q0 puts them
    for j in range(J):
        S.q[j] = q0[j]
    _set_pose(F0, S)
    forward_kinematics(K, S)
    same = True
    for b in range(B):
        for i in range(3):
            same = same and S.body_t[b, i] == D.body_t[b, i]
            for k in range(3):
                same = same and S.body_R[b, i, k] == D.body_R[b, i, k]
    if not same:
        for j in range(J):
            D.q[j] = q0[j]
        _set_pose(F0, D)
        evaluate_model(model, data, near, report_distance, environment_report_distance)
    exact0 = np.empty(P, np.bool_)
    for p in range(P):   # the distances at s = 0 (lower bounds where not exact)
        d0 = R.distance[p]
        exact0[p] = R.exact[p]
        distance[p], min_bound[p], min_distance[p] = d0, d0, d0
        min_time[p] = 0.0 if exact0[p] else -1.0
        contact[p] = exact0[p] and d0 <= 0.0
        time[p] = 0.0 if contact[p] else math.inf
        for i in range(3):
            point_1[p, i], point_2[p, i], normal[p, i] = R.point_1[p, i], R.point_2[p, i], R.normal[p, i]
    # s = 1: the ordinary evaluation, into the Data
    for j in range(J):
        D.q[j] = q1[j]
    _set_pose(F1, D)
    n_contacts, closest, lowest = evaluate_model(model, data, near, report_distance,
                                                 environment_report_distance)
    scratch = np.empty((SCRATCH_ROWS, 9))
    n_swept = 0
    for p in range(P):
        k1, k2 = C.shape_1[p], C.shape_2[p]
        b1, b2 = pair_bodies[2 * p], pair_bodies[2 * p + 1]
        common = pair_common[p]
        roots = common < 0 and K.body_file[body_root[b1]] != K.body_file[body_root[b2]]
        rate = (_side_rate(K, link, extent, k1, b1, common, dq, qmax, file_motion, roots)
                + _side_rate(K, link, extent, k2, b2, common, dq, qmax, file_motion, roots))
        out.rate[p], out.certified[p], out.samples[p] = rate, rate < math.inf, 0
        d1, exact1 = R.distance[p], R.exact[p]
        if exact1 and (d1 < min_distance[p] or min_time[p] < 0.0):
            min_distance[p], min_time[p] = d1, 1.0
        min_bound[p] = min(min_bound[p], d1)
        end_contact = exact1 and d1 <= 0.0
        report = environment_report_distance if pair_environment[p] else report_distance
        if rate == math.inf:   # a plane moving relative to its partner: only the ends known
            min_bound[p] = -math.inf
        if not contact[p] and 0.0 < rate < math.inf:
            samples[0, 0], samples[0, 1], samples[0, 2] = 0.0, distance[p], exact0[p]
            n = 1
            s, d, exact = 0.0, distance[p], exact0[p]
            advancing = True
            while True:
                nxt = s
                if advancing:
                    if d <= rate * time_tolerance and exact:   # touching, or within the tolerance
                        contact[p], time[p], distance[p] = True, s, d
                        break
                    nxt = s if d <= rate * time_tolerance else s + d / rate
                    if nxt >= 1.0 and end_contact:   # rounding: the contact is at the end
                        contact[p], time[p], distance[p] = True, 1.0, d1
                        for i in range(3):
                            point_1[p, i], point_2[p, i], normal[p, i] = R.point_1[p, i], R.point_2[p, i], R.normal[p, i]
                        break
                    if nxt >= 1.0 or (d1 > 0.0 and nxt > 1.0 - d1 / rate):   # ranges meet: apart
                        advancing = False
                        n = _insert(samples, n, 1.0, d1, exact1)
                if not advancing:
                    lowest_bound, nxt = _envelope(samples, n, rate)
                    min_bound[p] = lowest_bound
                    if (lowest_bound >= report or n >= MOTION_MIN_SAMPLES or
                            (min_time[p] >= 0.0 and min_distance[p] - lowest_bound <= distance_tolerance)):
                        break
                # the one sample site: the pair's exact distance at q(nxt)
                for j in range(J):
                    S.q[j] = q0[j] + nxt * (q1[j] - q0[j])
                for g in range(F0.R.shape[0]):
                    _slerp(F0, F1, g, file_motion[g], nxt, S.file_R, S.file_t)
                forward_kinematics(K, S)
                to_world(link_shapes, S.body_R, S.body_t, SW, smoved)
                ds, x1, x2, nv, t1, t2 = exact_pair(SW, H, M, k1, k2, C.padding_1[p], C.padding_2[p],
                                                    R.triangle[p, 0], R.triangle[p, 1], scratch)
                out.samples[p] += 1
                if ds < min_distance[p] or min_time[p] < 0.0:
                    min_distance[p], min_time[p] = ds, nxt
                if not advancing:
                    n = _insert(samples, n, nxt, ds, 1.0)
                    continue
                s, d, exact = nxt, ds, True
                for i in range(3):
                    point_1[p, i], point_2[p, i], normal[p, i] = x1[i], x2[i], nv[i]
                if samples[n - 1, 0] == s:
                    samples[n - 1, 1], samples[n - 1, 2] = d, 1.0
                elif n < MOTION_MIN_SAMPLES - 1:
                    n = _insert(samples, n, s, d, 1.0)
            if contact[p]:
                min_distance[p], min_time[p], min_bound[p] = min(distance[p], min_distance[p]), time[p], -math.inf
        if not contact[p] and end_contact:   # not certified, or nothing moved
            contact[p], time[p], distance[p] = True, 1.0, d1
            for i in range(3):
                point_1[p, i], point_2[p, i], normal[p, i] = R.point_1[p, i], R.point_2[p, i], R.normal[p, i]
        if contact[p]:   # earliest first (insertion: few contacts)
            i = n_swept
            while i > 0 and time[order[i - 1]] > time[p]:
                order[i] = order[i - 1]
                i -= 1
            order[i] = p
            n_swept += 1
    return n_contacts, closest, lowest, n_swept
