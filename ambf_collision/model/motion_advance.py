"""The motion kernel's advancement of the pairs its two end evaluations leave open
(``motion_kernel.py``; the motion buffer's layout, :data:`MOTION_TABLES`, is here).

A pair is open when the bounds from the distances at ``s = 0`` and ``s = 1`` leave a contact
possible, or when its minimum distance needs samples. :func:`advance_pairs` (one call for all
of them) samples each along the step, at the forward kinematics of ``q(s)`` into the motion
buffer's own kinematics and shapes (the Data stays at ``q1``): conservative advancement to the
first contact (``s`` advances by ``d / rate`` only), then, for a pair found apart, Piyavskii's
minimisation of its distance (between two samples the distance lies above both bound lines; the
next sample goes to the envelope's lowest point). The module docstring of ``motion_kernel.py``
states the motion and the bound.
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry.pairs import exact_pair
from ambf_collision.geometry.tolerances import (MOTION_MAX_SAMPLES, MOTION_MIN_SAMPLES,
                                                MOTION_TOUCH_DISTANCE)
from ambf_collision.geometry.transforms import axis_rotation
from ambf_collision.geometry.world_shapes import SHAPE_DTYPE, to_world, world_of
from ambf_collision.model.contact_rows import CONTROLLER_VALUES, GEOMETRY_VALUES
from ambf_collision.model.evaluate_kernel import data_tables, model_tables
from ambf_collision.model.jacobians import write_contact_row
from ambf_collision.model.kinematics_kernels import (JOINT_STATE_DTYPE, POSE_DTYPE,
                                                     forward_kinematics, kinematics_buffers)
from ambf_collision.model.table_buffer import float_matrix, float_vector, int_vector, records, words_of

__all__ = ["MOTION_TABLES", "MOTION_RESULT_COLUMNS", "MOTION_RESULT_WIDTH", "advance_pairs",
           "envelope", "result_columns", "write_swept_rows"]

MOTION_RESULT_COLUMNS = {
    "contact": 0,          # 1.0: the pair touches during the step (s in [0, 1]), else 0.0
    "time": 1,             # s of its first contact; +inf without contact
    "distance": 2,         # m, signed, at `time` (<= 0, or within the time tolerance)
    "point_1": (3, 6),     # m, world, at `time`: witness on shape 1
    "point_2": (6, 9),     # m, world, at `time`: witness on shape 2
    "normal": (9, 12),     # unit, world, at `time`: from shape 1 to shape 2
    "min_distance": 12,    # m: smallest exact distance sampled (>= the step's minimum)
    "min_time": 13,        # s of that sample (-1 when no exact sample: min_bound only)
    "min_bound": 14,       # m: proven lower bound of the distance over the step
    "rate": 15,            # m per step: the bound on how fast the distance can fall
    "certified": 16,       # 0.0: rate infinite (a plane moving), only the ends checked
    "samples": 17,         # exact distance evaluations this pair cost
}
"""One pair's motion result per row of a float table ``(P, MOTION_RESULT_WIDTH)``: the column
(or ``(start, stop)`` columns) of each value. Plain floats, not a record table: compiled code
slices columns for a few ns where a record field's view costs ~60 ns."""
MOTION_RESULT_WIDTH = 18


@njit(cache=True, inline="always")
def result_columns(results):
    """The columns of the results table (:data:`MOTION_RESULT_COLUMNS` order) as views."""
    return (results[:, 0], results[:, 1], results[:, 2], results[:, 3:6], results[:, 6:9],
            results[:, 9:12], results[:, 12], results[:, 13], results[:, 14], results[:, 15],
            results[:, 16], results[:, 17])


MOTION_TABLES = ("q0", "q1", "files_0", "files_1", "joints", "files", "bodies",
                 "closure_residuals", "world", "moved", "results", "order", "samples",
                 "file_motion", "dq", "qmax", "exact_0", "scratch", "rotation", "quaternion",
                 "pending", "kept_q", "kept_files", "kept_bodies", "kept", "swept_rows")
"""The Data's motion buffer, in order: ``q0``, ``q1 (J,)`` the step's ends (model order; the
kernel applies the couplings in place), ``files_0``, ``files_1 (F,)`` root poses at the ends
(``POSE_DTYPE``); the samples' kinematics (``joints``, ``files``, ``bodies``,
``closure_residuals (K,2)``), shapes (``world``, ``SHAPE_DTYPE``) and ``moved (N,)``;
``results (P, MOTION_RESULT_WIDTH)`` (:data:`MOTION_RESULT_COLUMNS`); ``order (P,)`` the pairs
in contact during the step, earliest first; ``samples (MOTION_MIN_SAMPLES, 3)`` one pair's samples (s, distance,
exact); ``file_motion (F,4)`` per file the rotation vector ``w theta`` (file frame) and
``|t1 - t0|``; work arrays: ``dq``, ``qmax (J,)`` each joint's ``|q1 - q0|`` and largest
``|q|``, ``exact_0 (P,)`` 1.0 where the distance at ``s = 0`` is exact, ``scratch
(SCRATCH_ROWS, 9)`` (GJK/EPA), ``rotation (3,3)``, ``quaternion (4,)``, ``pending (P,)`` the
pairs :func:`advance_pairs` works on; the state of the motion kernel's last evaluation (at
``q1``): ``kept_q (J,)``, ``kept_files (F,12)``, ``kept_bodies (B,12)`` (each pose's rotation
row by row, then its translation), ``kept (1,)`` 1 once there is one; ``swept_rows (P, 20 +
J)``: row ``r`` the contact row (``contact_rows.py``) at its time of the ``r``-th contact in
``order`` when that pair is apart at ``q1`` (:func:`write_swept_rows`; other rows unused)."""


@njit(cache=True, inline="always")
def envelope(samples, n, rate):
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
def _slerp(R0, t0, t1, file_motion, g, s, out_R, out_t):
    """File ``g``'s root pose at ``s``: ``R0 Rot(w s)`` (``w``: its rotation vector, file
    frame, ``file_motion`` row ``g``) and ``t0 + s (t1 - t0)``, into row ``g`` of ``out_R``,
    ``out_t``."""
    wx, wy, wz = file_motion[g, 0], file_motion[g, 1], file_motion[g, 2]
    angle = math.sqrt(wx * wx + wy * wy + wz * wz)
    ax, ay, az = (wx / angle, wy / angle, wz / angle) if angle > 0.0 else (0.0, 0.0, 1.0)
    G = axis_rotation(ax, ay, az, math.cos(s * angle), math.sin(s * angle))
    for i in range(3):
        for j in range(3):
            out_R[g, i, j] = R0[g, i, 0] * G[0][j] + R0[g, i, 1] * G[1][j] + R0[g, i, 2] * G[2][j]
        out_t[g, i] = t0[g, i] + s * (t1[g, i] - t0[g, i])


@njit(cache=True, inline="always")
def _kinematics_at(K, S, q0, q1, R0, t0, t1, file_motion, s):
    """The forward kinematics of the step at ``s`` into the sample buffers ``S``: the joints at
    ``q0 + s (q1 - q0)``, each file's root pose by :func:`_slerp`."""
    q = S.q
    for j in range(q0.shape[0]):
        q[j] = q0[j] + s * (q1[j] - q0[j])
    for g in range(R0.shape[0]):
        _slerp(R0, t0, t1, file_motion, g, s, S.file_R, S.file_t)
    forward_kinematics(K, S)


@njit(cache=True)
def advance_pairs(model, data, motion, n_pending, report_distance, environment_report_distance,
                  time_tolerance, distance_tolerance):
    """Advances the first ``n_pending`` pairs of the motion buffer's ``pending`` (module
    docstring), whose ``rate``, distances at ``s = 0`` (``distance``, ``exact_0``), ``min_*``
    the motion kernel wrote, with the Data at ``q1``; writes their contact, time, witnesses,
    minimum and samples into the motion results."""
    K, link_shapes, C, H, M, pair_bodies, pair_environment = model_tables(model)
    R = data_tables(data)[3]
    h, f = words_of(motion)
    q0, q1 = float_vector(f, h, 0), float_vector(f, h, 1)
    F0, F1 = records(motion, h, 2, POSE_DTYPE), records(motion, h, 3, POSE_DTYPE)
    S = kinematics_buffers(records(motion, h, 4, JOINT_STATE_DTYPE), records(motion, h, 5, POSE_DTYPE),
                           records(motion, h, 6, POSE_DTYPE), float_matrix(f, h, 7, 2))
    SW, smoved = world_of(records(motion, h, 8, SHAPE_DTYPE)), int_vector(h, 9)
    samples, file_motion = float_matrix(f, h, 12, 3), float_matrix(f, h, 13, 4)
    exact0, scratch, pending = float_vector(f, h, 16), float_matrix(f, h, 17, 9), int_vector(h, 20)
    (contact, time, distance, point_1, point_2, normal, min_distance, min_time, min_bound, rate_out,
     _, sampled) = result_columns(float_matrix(f, h, 10, MOTION_RESULT_WIDTH))
    shape_1, shape_2, padding_1, padding_2 = C.shape_1, C.shape_2, C.padding_1, C.padding_2
    R_distance, R_exact, R_point_1, R_point_2, R_normal = R.distance, R.exact, R.point_1, R.point_2, R.normal
    R_triangle = R.triangle
    R0, t0, t1 = F0.R, F0.t, F1.t
    S_body_R, S_body_t = S.body_R, S.body_t
    for m in range(n_pending):
        p = pending[m]
        k1, k2, rate = shape_1[p], shape_2[p], rate_out[p]
        d1, exact1 = R_distance[p], R_exact[p]
        end_contact = exact1 and d1 <= 0.0
        report = environment_report_distance if pair_environment[p] else report_distance
        samples[0, 0], samples[0, 1], samples[0, 2] = 0.0, distance[p], exact0[p]
        n = 1
        s, d, exact = 0.0, distance[p], exact0[p] > 0.5
        advancing, probe, probed = True, False, -1.0
        while True:
            nxt = s
            if advancing:
                if exact and (d <= MOTION_TOUCH_DISTANCE or sampled[p] >= MOTION_MAX_SAMPLES):
                    contact[p], time[p], distance[p] = True, s, d   # touching (or the cap)
                    break
                # within the time tolerance of a possible contact: is there one in [s, s + tol]?
                probe = exact and d <= rate * time_tolerance and s > probed
                nxt = min(s + time_tolerance, 1.0) if probe else s if not exact else s + d / rate
                if nxt >= 1.0 and end_contact:   # the contact is within reach of the end
                    nxt = 1.0
                    if not probe:
                        contact[p], time[p], distance[p] = True, 1.0, d1
                        for i in range(3):
                            point_1[p, i], point_2[p, i], normal[p, i] = R_point_1[p, i], R_point_2[p, i], R_normal[p, i]
                        break
                elif not probe and (nxt >= 1.0 or (d1 > 0.0 and nxt > 1.0 - d1 / rate)):
                    advancing = False   # the two excluded ranges meet: apart all along
                    n = _insert(samples, n, 1.0, d1, exact1)
            if not advancing:
                lowest_bound, nxt = envelope(samples, n, rate)
                min_bound[p] = lowest_bound
                if (lowest_bound >= report or n >= MOTION_MIN_SAMPLES or
                        (min_time[p] >= 0.0 and min_distance[p] - lowest_bound <= distance_tolerance)):
                    break
            # the one sample site: the pair's exact distance at q(nxt)
            _kinematics_at(K, S, q0, q1, R0, t0, t1, file_motion, nxt)
            to_world(link_shapes, S_body_R, S_body_t, SW, smoved)
            ds, x1, x2, nv, _, _ = exact_pair(SW, H, M, k1, k2, padding_1[p], padding_2[p],
                                                R_triangle[p, 0], R_triangle[p, 1], scratch)
            sampled[p] += 1
            if ds < min_distance[p] or min_time[p] < 0.0:
                min_distance[p], min_time[p] = ds, nxt
            if not advancing:
                n = _insert(samples, n, nxt, ds, 1.0)
                continue
            if probe:   # d(s) > 0 and no contact before s; d(nxt) <= 0: the first is in [s, nxt]
                probed = s
                if ds <= 0.0:
                    contact[p], time[p], distance[p] = True, s, d
                    break
                continue   # none at nxt (there may be one before it): advance from s
            s, d, exact = nxt, ds, True
            for i in range(3):
                point_1[p, i], point_2[p, i], normal[p, i] = x1[i], x2[i], nv[i]
            if samples[n - 1, 0] == s:
                samples[n - 1, 1], samples[n - 1, 2] = d, 1.0
            elif n < MOTION_MIN_SAMPLES - 1:
                n = _insert(samples, n, s, d, 1.0)
        if contact[p]:
            min_distance[p], min_time[p], min_bound[p] = min(distance[p], min_distance[p]), time[p], -math.inf


@njit(cache=True)
def write_swept_rows(model, data, motion, n_contacts):
    """For each of the first ``n_contacts`` pairs of the motion buffer's ``order`` that is
    apart at ``q1`` (the Data's distance > 0: a contact only the motion saw), its contact row
    at its time of contact into row ``r`` of ``swept_rows``: the forward kinematics of the
    step at that ``s`` (into the sample buffers), then the evaluation's own row writer
    (``jacobians.py``) with the motion result's witnesses and normal and the Data's joint
    velocities."""
    K, _, _, _, _, pair_bodies, _ = model_tables(model)
    D, velocity, _, R = data_tables(data)[:4]
    h, f = words_of(motion)
    q0, q1 = float_vector(f, h, 0), float_vector(f, h, 1)
    F0, F1 = records(motion, h, 2, POSE_DTYPE), records(motion, h, 3, POSE_DTYPE)
    S = kinematics_buffers(records(motion, h, 4, JOINT_STATE_DTYPE), records(motion, h, 5, POSE_DTYPE),
                           records(motion, h, 6, POSE_DTYPE), float_matrix(f, h, 7, 2))
    order, file_motion = int_vector(h, 11), float_matrix(f, h, 13, 4)
    rows = float_matrix(f, h, 25, GEOMETRY_VALUES + q0.shape[0] + CONTROLLER_VALUES)
    (_, time, distance, point_1, point_2, normal, _, _, _, _, _, _) = result_columns(
        float_matrix(f, h, 10, MOTION_RESULT_WIDTH))
    R_distance = R.distance
    for r in range(n_contacts):
        p = order[r]
        if R_distance[p] > 0.0:
            _kinematics_at(K, S, q0, q1, F0.R, F0.t, F1.t, file_motion, time[p])
            write_contact_row(K, S, velocity, pair_bodies[2 * p], pair_bodies[2 * p + 1],
                              distance[p], point_1, point_2, normal, p, rows[r])
