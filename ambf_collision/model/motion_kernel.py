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

from numba import njit

from ambf_collision.geometry.transforms import rotation_quaternion
from ambf_collision.model.evaluate_kernel import data_tables, evaluate_tables, model_tables
from ambf_collision.model.kinematics_kernels import (MOTION_PRISMATIC, MOTION_REVOLUTE, POSE_DTYPE,
                                                     apply_couplings)
from ambf_collision.model.motion_advance import (MOTION_RESULT_WIDTH, advance_pairs,
                                                  envelope, result_columns, write_swept_rows)
from ambf_collision.model.table_buffer import float_matrix, float_vector, int_vector, records, words_of

__all__ = ["evaluate_motion_model"]

@njit(cache=True, inline="always")
def _file_motion(R0, t0, R1, t1, out, rel, quat):
    """Per file: the rotation vector of ``R0^T R1`` (angle in [0, pi]) and ``|t1 - t0|``
    (``R (F,3,3)``, ``t (F,3)``: the root poses at the ends), into ``out (F,4)`` (``rel (3,3)``,
    ``quat (4,)``: work arrays)."""
    for f in range(R0.shape[0]):
        for i in range(3):
            for j in range(3):
                rel[i, j] = R0[f, 0, i] * R1[f, 0, j] + R0[f, 1, i] * R1[f, 1, j] + R0[f, 2, i] * R1[f, 2, j]
        rotation_quaternion(rel, quat)
        v = math.sqrt(quat[0] * quat[0] + quat[1] * quat[1] + quat[2] * quat[2])
        angle = 2.0 * math.atan2(v, quat[3])
        for i in range(3):
            out[f, i] = angle * quat[i] / v if v > 0.0 else 0.0
        dx, dy, dz = t1[f, 0] - t0[f, 0], t1[f, 1] - t0[f, 1], t1[f, 2] - t0[f, 2]
        out[f, 3] = math.sqrt(dx * dx + dy * dy + dz * dz)


@njit(cache=True, inline="always")
def _side_rate(tree_joint, joint_motion, tree_parent, body_file, link, extent, file_motion, dq,
               qmax, shape, body, common, with_root):
    """m per step: how fast the points of ``shape`` (on ``body``) can move relative to body
    ``common`` (-1: the world), from the joints between them (and the root pose's motion when
    ``with_root``): ``motion_bounds.py``. Plain arrays (the kinematics' and the bounds' tables),
    read with scalars."""
    lever, rate, c = extent[shape], 0.0, body
    while c != common and tree_joint[c] >= 0:
        j = tree_joint[c]
        if dq[j] > 0.0:
            if joint_motion[j] == MOTION_REVOLUTE:
                rate += dq[j] * lever
            elif joint_motion[j] == MOTION_PRISMATIC:
                rate += dq[j]
        lever += link[c] + (qmax[j] if joint_motion[j] == MOTION_PRISMATIC else 0.0)
        c = tree_parent[c]
    if with_root:
        f = body_file[c]
        wx, wy, wz = file_motion[f, 0], file_motion[f, 1], file_motion[f, 2]
        angle = math.sqrt(wx * wx + wy * wy + wz * wz)
        if angle > 0.0:
            rate += angle * (lever + link[c])
        rate += file_motion[f, 3]
    return rate


@njit(cache=True, inline="always")
def _copy_poses(R, t, out_R, out_t):
    """``out_R[...] = R`` (F,3,3), ``out_t[...] = t`` (F,3), by scalars."""
    for g in range(R.shape[0]):
        for i in range(3):
            out_t[g, i] = t[g, i]
            for k in range(3):
                out_R[g, i, k] = R[g, i, k]


@njit(cache=True, inline="always")
def _same_poses(R, t, kept):
    """True when every pose ``(R (n,3,3), t (n,3))`` equals its row of ``kept (n,12)``."""
    for g in range(R.shape[0]):
        for i in range(3):
            if t[g, i] != kept[g, 9 + i]:
                return False
            for k in range(3):
                if R[g, i, k] != kept[g, 3 * i + k]:
                    return False
    return True


@njit(cache=True, inline="always")
def _keep_poses(R, t, kept):
    """Row ``g`` of ``kept (n,12)``: ``R[g]`` row by row, then ``t[g]``."""
    for g in range(R.shape[0]):
        for i in range(3):
            kept[g, 9 + i] = t[g, i]
            for k in range(3):
                kept[g, 3 * i + k] = R[g, i, k]


@njit(cache=True)
def evaluate_motion_model(model, data, bounds, motion, root_moves, near, report_distance,
                          environment_report_distance, time_tolerance, distance_tolerance):
    """The step from ``q0`` to ``q1`` (module docstring; ``root_moves`` False: the Data's root
    poses at both ends, ``files_0``/``files_1`` are not read). Leaves the Data at ``q1`` as
    ``evaluate_model`` does (``near``, the report distances as there) and writes every pair's
    motion result. Returns ``(contacts at q1, closest pair at q1, its distance, pairs in contact
    during the step)``; the last is ``-1 - j`` (``-1 - J - j``) when ``q0[j]`` (``q1[j]``) is
    not finite, and nothing was computed."""
    model_views, data_views = model_tables(model), data_tables(data)
    K, link_shapes, C, H, M, pair_bodies, pair_environment = model_views
    D, R = data_views[0], data_views[3]
    bh, bf = words_of(bounds)
    link, extent = float_vector(bf, bh, 0), float_vector(bf, bh, 1)
    pair_common, body_root = int_vector(bh, 2), int_vector(bh, 3)
    h, f = words_of(motion)
    q0, q1 = float_vector(f, h, 0), float_vector(f, h, 1)
    F0, F1 = records(motion, h, 2, POSE_DTYPE), records(motion, h, 3, POSE_DTYPE)
    results = float_matrix(f, h, 10, MOTION_RESULT_WIDTH)
    order, samples, file_motion = int_vector(h, 11), float_matrix(f, h, 12, 3), float_matrix(f, h, 13, 4)
    dq, qmax, exact0 = float_vector(f, h, 14), float_vector(f, h, 15), float_vector(f, h, 16)
    pending, kept_q, kept_files = int_vector(h, 20), float_vector(f, h, 21), float_matrix(f, h, 22, 12)
    kept_bodies, kept = float_matrix(f, h, 23, 12), int_vector(h, 24)
    # every array out of its record table or tuple once: a field read in a loop costs a view
    (contact, time, distance, point_1, point_2, normal, min_distance, min_time, min_bound, rate_out,
     certified, sampled) = result_columns(results)
    tree_joint, joint_motion, tree_parent, body_file = K.tree_joint, K.joint_motion, K.tree_parent, K.body_file
    shape_1, shape_2 = C.shape_1, C.shape_2
    R_distance, R_exact, R_point_1, R_point_2, R_normal = R.distance, R.exact, R.point_1, R.point_2, R.normal
    R0, t0, R1, t1 = F0.R, F0.t, F1.R, F1.t
    D_q, D_file_R, D_file_t, D_body_R, D_body_t = D.q, D.file_R, D.file_t, D.body_R, D.body_t
    J, P, F = q0.shape[0], results.shape[0], R0.shape[0]
    for j in range(J):   # refused before anything is written: a position that is not finite
        if not math.isfinite(q0[j]):
            return 0, -1, math.inf, -1 - j
        if not math.isfinite(q1[j]):
            return 0, -1, math.inf, -1 - J - j
    if root_moves:
        _file_motion(R0, t0, R1, t1, file_motion, float_matrix(f, h, 18, 3), float_vector(f, h, 19))
    else:   # the Data's root poses, at both ends
        _copy_poses(D_file_R, D_file_t, R0, t0)
        _copy_poses(D_file_R, D_file_t, R1, t1)
        for g in range(F):
            for i in range(4):
                file_motion[g, i] = 0.0
    apply_couplings(K, q0)
    apply_couplings(K, q1)
    for j in range(J):
        dq[j] = abs(q1[j] - q0[j])
        qmax[j] = max(abs(q0[j]), abs(q1[j]))
    # s = 0: the Data's last evaluation is kept when it is this kernel's last one (its bodies
    # are still those written then) and that was at q0 and the root poses at s = 0
    same = kept[0] == 1
    for j in range(J):
        same = same and kept_q[j] == q0[j]
    same = same and _same_poses(R0, t0, kept_files) and _same_poses(D_body_R, D_body_t, kept_bodies)
    n_contacts, closest, lowest = 0, -1, math.inf
    for end in range(2):   # the ordinary evaluation at s = 0 (unless kept), then at s = 1
        if end or not same:
            for j in range(J):
                D_q[j] = q1[j] if end else q0[j]
            if end:
                _copy_poses(R1, t1, D_file_R, D_file_t)
            else:
                _copy_poses(R0, t0, D_file_R, D_file_t)
            n_contacts, closest, lowest = evaluate_tables(model_views, data_views, near,
                                                          report_distance, environment_report_distance)
        if end:
            for j in range(J):   # what the next step's start is compared with
                kept_q[j] = D_q[j]
            _keep_poses(R1, t1, kept_files)
            _keep_poses(D_body_R, D_body_t, kept_bodies)
            kept[0] = 1
            break
        for p in range(P):   # the distances at s = 0 (lower bounds where not exact)
            d0 = R_distance[p]
            exact0[p] = R_exact[p]
            distance[p], min_bound[p], min_distance[p] = d0, d0, d0
            min_time[p] = 0.0 if R_exact[p] else -1.0
            contact[p] = R_exact[p] and d0 <= 0.0
            time[p] = 0.0 if contact[p] else math.inf
            for i in range(3):
                point_1[p, i], point_2[p, i], normal[p, i] = R_point_1[p, i], R_point_2[p, i], R_normal[p, i]
    n_pending = 0
    for p in range(P):
        k1, k2 = shape_1[p], shape_2[p]
        b1, b2 = pair_bodies[2 * p], pair_bodies[2 * p + 1]
        common = pair_common[p]
        roots = common < 0 and body_file[body_root[b1]] != body_file[body_root[b2]]
        rate = (_side_rate(tree_joint, joint_motion, tree_parent, body_file, link, extent,
                           file_motion, dq, qmax, k1, b1, common, roots)
                + _side_rate(tree_joint, joint_motion, tree_parent, body_file, link, extent,
                             file_motion, dq, qmax, k2, b2, common, roots))
        rate_out[p], certified[p], sampled[p] = rate, rate < math.inf, 0
        d1, exact1 = R_distance[p], R_exact[p]
        if exact1 and (d1 < min_distance[p] or min_time[p] < 0.0):
            min_distance[p], min_time[p] = d1, 1.0
        min_bound[p] = min(min_bound[p], d1)
        end_contact = exact1 and d1 <= 0.0
        report = environment_report_distance if pair_environment[p] else report_distance
        if rate == math.inf:   # a plane moving relative to its partner: only the ends known
            min_bound[p] = -math.inf
        if not contact[p] and 0.0 < rate < math.inf:
            d0 = distance[p]
            if d0 <= rate * time_tolerance or not (d0 >= rate or (d1 > 0.0 and d0 > rate - d1)):
                pending[n_pending] = p   # the bounds leave a contact possible: advance
                n_pending += 1
                continue
            if end_contact:   # (rounding) the contact is at the end
                continue
            samples[0, 0], samples[0, 1], samples[0, 2] = 0.0, d0, exact0[p]
            samples[1, 0], samples[1, 1], samples[1, 2] = 1.0, d1, exact1
            lowest_bound = envelope(samples, 2, rate)[0]
            min_bound[p] = lowest_bound
            report = environment_report_distance if pair_environment[p] else report_distance
            if not (lowest_bound >= report or (min_time[p] >= 0.0 and
                                               min_distance[p] - lowest_bound <= distance_tolerance)):
                pending[n_pending] = p   # a near pair whose minimum needs samples
                n_pending += 1
    if n_pending:
        advance_pairs(model, data, motion, n_pending, report_distance, environment_report_distance,
                      time_tolerance, distance_tolerance)
    n_swept, apart = 0, False
    for p in range(P):
        d1, end_contact = R_distance[p], R_exact[p] and R_distance[p] <= 0.0
        if not contact[p] and end_contact:   # not certified, or nothing moved
            contact[p], time[p], distance[p] = True, 1.0, d1
            for i in range(3):
                point_1[p, i], point_2[p, i], normal[p, i] = R_point_1[p, i], R_point_2[p, i], R_normal[p, i]
        if contact[p]:   # earliest first (insertion: few contacts)
            i = n_swept
            while i > 0 and time[order[i - 1]] > time[p]:
                order[i] = order[i - 1]
                i -= 1
            order[i] = p
            n_swept += 1
            apart = apart or d1 > 0.0
    if apart:   # a contact only the motion saw: its row at its time
        write_swept_rows(model, data, motion, n_swept)
    return n_contacts, closest, lowest, n_swept
