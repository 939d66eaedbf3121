"""Rotations and rigid transforms (REP-103: metres, radians, right-handed).

Quaternions are ``[x, y, z, w]`` (the ROS ``geometry_msgs/Quaternion`` order).
A rigid transform is a pair ``(R, t)``: ``x_parent = R @ x_child + t``.
Every function accepts a leading batch shape (``(..., 3)``, ``(..., 4)``,
``(..., 3, 3)``) and works without Python loops; :func:`rotation_quaternion` is the compiled
scalar form that :func:`matrix_to_quat` runs on each matrix and kernels call;
:func:`transform_rows` (points or directions moved by their frames' poses) and
:func:`compose_row` (one pose times another) are the compiled rigid transforms kernels call.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = [
    "quat_to_matrix",
    "matrix_to_quat",
    "rotation_quaternion",
    "transform_rows",
    "compose_row",
    "axis_rotation",
    "rpy_to_matrix",
    "matrix_to_rpy",
    "axis_angle_to_matrix",
    "rotation_between",
    "compose",
    "invert",
]


def quat_to_matrix(q) -> np.ndarray:
    """Rotation matrices ``(..., 3, 3)`` from quaternions ``(..., 4)`` [x, y, z, w].

    The quaternion is normalised first; a zero quaternion gives the identity.
    """
    q = np.asarray(q, dtype=float)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    ident = np.zeros_like(q)
    ident[..., 3] = 1.0
    q = np.where(n > 0.0, q / np.where(n > 0.0, n, 1.0), ident)
    x, y, z, w = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    out = np.empty(q.shape[:-1] + (3, 3))
    out[..., 0, 0] = 1.0 - 2.0 * (y * y + z * z)
    out[..., 0, 1] = 2.0 * (x * y - z * w)
    out[..., 0, 2] = 2.0 * (x * z + y * w)
    out[..., 1, 0] = 2.0 * (x * y + z * w)
    out[..., 1, 1] = 1.0 - 2.0 * (x * x + z * z)
    out[..., 1, 2] = 2.0 * (y * z - x * w)
    out[..., 2, 0] = 2.0 * (x * z - y * w)
    out[..., 2, 1] = 2.0 * (y * z + x * w)
    out[..., 2, 2] = 1.0 - 2.0 * (x * x + y * y)
    return out


def matrix_to_quat(R) -> np.ndarray:
    """Quaternions ``(..., 4)`` [x, y, z, w] with ``w >= 0`` from rotation matrices ``(..., 3, 3)``
    (:func:`rotation_quaternion` on each)."""
    R = np.ascontiguousarray(R, dtype=np.float64)
    flat = R.reshape(-1, 3, 3)
    out = np.empty((flat.shape[0], 4))
    _rotation_quaternions(flat, out)
    return out.reshape(R.shape[:-2] + (4,))


@njit(cache=True, error_model="numpy", inline="always")
def rotation_quaternion(R, q):
    """Writes into ``q (4,)`` [x, y, z, w] the unit quaternion of the rotation matrix ``R (3,3)``,
    with ``w >= 0``. Of the four classic solutions it takes the one whose denominator is largest
    (the first of equal ones), so no rotation loses precision."""
    t = (1.0 + R[0, 0] + R[1, 1] + R[2, 2], 1.0 + R[0, 0] - R[1, 1] - R[2, 2],
         1.0 - R[0, 0] + R[1, 1] - R[2, 2], 1.0 - R[0, 0] - R[1, 1] + R[2, 2])
    k = 0
    for i in range(1, 4):
        if t[i] > t[k]:
            k = i
    s = 2.0 * math.sqrt(max(t[k], 1e-300))
    if k == 0:  # w largest
        x, y, z, w = (R[2, 1] - R[1, 2]) / s, (R[0, 2] - R[2, 0]) / s, (R[1, 0] - R[0, 1]) / s, 0.25 * s
    elif k == 1:  # x largest
        x, y, z, w = 0.25 * s, (R[0, 1] + R[1, 0]) / s, (R[0, 2] + R[2, 0]) / s, (R[2, 1] - R[1, 2]) / s
    elif k == 2:  # y largest
        x, y, z, w = (R[0, 1] + R[1, 0]) / s, 0.25 * s, (R[1, 2] + R[2, 1]) / s, (R[0, 2] - R[2, 0]) / s
    else:  # z largest
        x, y, z, w = (R[0, 2] + R[2, 0]) / s, (R[1, 2] + R[2, 1]) / s, 0.25 * s, (R[1, 0] - R[0, 1]) / s
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if w < 0.0:
        n = -n
    q[0], q[1], q[2], q[3] = x / n, y / n, z / n, w / n


@njit(cache=True, error_model="numpy", inline="always")
def transform_rows(frame_R, frame_t, frame, local, out, translate):
    """``out[i] = R_f local[i] + t_f`` for each row ``i`` of ``local (n,3)``, with ``f =
    frame[i]`` and the poses ``frame_R (F,3,3)``, ``frame_t (F,3)`` (world from frame, m); a
    direction when ``translate`` is False: ``out[i] = R_f local[i]``."""
    for i in range(frame.size):
        f = frame[i]
        for r in range(3):
            v = (frame_R[f, r, 0] * local[i, 0] + frame_R[f, r, 1] * local[i, 1]
                 + frame_R[f, r, 2] * local[i, 2])
            out[i, r] = v + frame_t[f, r] if translate else v


@njit(cache=True, error_model="numpy", inline="always")
def compose_row(A_R, A_t, a, B_R, B_t, b, out_R, out_t, o):
    """``(out_R[o], out_t[o]) = (A_R[a], A_t[a]) * (B_R[b], B_t[b])``, i.e. ``x -> R_A (R_B x +
    t_B) + t_A`` with the poses ``a`` of the tables ``A_R (., 3,3)``, ``A_t (., 3)`` and ``b``
    of ``B_R``, ``B_t`` (m); the output may be another row of A's tables."""
    for i in range(3):
        for j in range(3):
            out_R[o, i, j] = A_R[a, i, 0] * B_R[b, 0, j] + A_R[a, i, 1] * B_R[b, 1, j] + A_R[a, i, 2] * B_R[b, 2, j]
        out_t[o, i] = A_R[a, i, 0] * B_t[b, 0] + A_R[a, i, 1] * B_t[b, 1] + A_R[a, i, 2] * B_t[b, 2] + A_t[a, i]


@njit(cache=True, error_model="numpy", inline="always")
def axis_rotation(ax, ay, az, c, s):
    """``Rot(a, angle) = c I + s [a]x + (1 - c) a a^T`` for the unit axis ``(ax, ay, az)``, with
    ``c, s`` the angle's cosine and sine: its three rows as 3-tuples (the one compiled formula
    of an axis-angle rotation: joints, root-pose SLERP)."""
    v = 1.0 - c
    return ((c + v * ax * ax, v * ax * ay - s * az, v * ax * az + s * ay),
            (v * ay * ax + s * az, c + v * ay * ay, v * ay * az - s * ax),
            (v * az * ax - s * ay, v * az * ay + s * ax, c + v * az * az))


@njit(cache=True, error_model="numpy")
def _rotation_quaternions(R, out):
    """``out (n,4)``: :func:`rotation_quaternion` of each ``R (n,3,3)``."""
    for i in range(R.shape[0]):
        rotation_quaternion(R[i], out[i])


def rpy_to_matrix(roll, pitch, yaw) -> np.ndarray:
    """``R = Rz(yaw) @ Ry(pitch) @ Rx(roll)`` (fixed-axis XYZ, as URDF and AMBF), radians."""
    r, p, y = np.broadcast_arrays(
        np.asarray(roll, float), np.asarray(pitch, float), np.asarray(yaw, float)
    )
    cr, sr = np.cos(r), np.sin(r)
    cp, sp = np.cos(p), np.sin(p)
    cy, sy = np.cos(y), np.sin(y)
    out = np.empty(r.shape + (3, 3))
    out[..., 0, 0] = cy * cp
    out[..., 0, 1] = cy * sp * sr - sy * cr
    out[..., 0, 2] = cy * sp * cr + sy * sr
    out[..., 1, 0] = sy * cp
    out[..., 1, 1] = sy * sp * sr + cy * cr
    out[..., 1, 2] = sy * sp * cr - cy * sr
    out[..., 2, 0] = -sp
    out[..., 2, 1] = cp * sr
    out[..., 2, 2] = cp * cr
    return out


def matrix_to_rpy(R) -> np.ndarray:
    """Inverse of :func:`rpy_to_matrix`: ``(..., 3)`` [roll, pitch, yaw] in radians."""
    R = np.asarray(R, dtype=float)
    pitch = np.arcsin(np.clip(-R[..., 2, 0], -1.0, 1.0))
    roll = np.arctan2(R[..., 2, 1], R[..., 2, 2])
    yaw = np.arctan2(R[..., 1, 0], R[..., 0, 0])
    return np.stack([roll, pitch, yaw], axis=-1)


def axis_angle_to_matrix(axis, angle) -> np.ndarray:
    """Rotation by ``angle`` (rad) about ``axis`` (normalised here; zero axis: identity)."""
    axis = np.asarray(axis, dtype=float)
    angle = np.asarray(angle, dtype=float)
    n = np.linalg.norm(axis, axis=-1, keepdims=True)
    u = np.where(n > 0.0, axis / np.where(n > 0.0, n, 1.0), 0.0)
    shape = np.broadcast_shapes(u.shape[:-1], angle.shape)
    u = np.broadcast_to(u, shape + (3,))
    c = np.broadcast_to(np.cos(angle), shape)
    s = np.broadcast_to(np.sin(angle), shape)
    C = 1.0 - c
    x, y, z = u[..., 0], u[..., 1], u[..., 2]
    out = np.empty(shape + (3, 3))
    out[..., 0, 0] = c + x * x * C
    out[..., 0, 1] = x * y * C - z * s
    out[..., 0, 2] = x * z * C + y * s
    out[..., 1, 0] = y * x * C + z * s
    out[..., 1, 1] = c + y * y * C
    out[..., 1, 2] = y * z * C - x * s
    out[..., 2, 0] = z * x * C - y * s
    out[..., 2, 1] = z * y * C + x * s
    out[..., 2, 2] = c + z * z * C
    return out


def rotation_between(v1, v2) -> np.ndarray:
    """AMBF's ``R(v1 -> v2)`` (single vectors): the rotation taking ``v1`` onto ``v2``.

    As AMBF's ``afUtils::getRotBetweenVectors``: the angle between the normalised
    vectors about ``v1 x v2``; identity when the angle is under 0.001 rad; for
    antiparallel vectors (angle over 3.14 rad) a rotation by pi about ``v1 x x``
    (about ``v2 x y`` when ``v1`` is parallel to x).
    """
    a = np.asarray(v1, dtype=float)
    b = np.asarray(v2, dtype=float)
    a = a / np.linalg.norm(a)
    b = b / np.linalg.norm(b)
    angle = float(np.arccos(np.clip(a @ b, -1.0, 1.0)))
    if angle < 0.001:
        return np.eye(3)
    if angle > 3.14:
        axis = np.cross(a, [1.0, 0.0, 0.0])
        if np.linalg.norm(axis) < 1e-9:
            axis = np.cross(b, [0.0, 1.0, 0.0])
        return axis_angle_to_matrix(axis, np.pi)
    return axis_angle_to_matrix(np.cross(a, b), angle)


def compose(R1, t1, R2, t2):
    """``(R1, t1) * (R2, t2)``: apply ``(R2, t2)`` first, then ``(R1, t1)``."""
    R1 = np.asarray(R1, float)
    R2 = np.asarray(R2, float)
    return R1 @ R2, (R1 @ np.asarray(t2, float)[..., None])[..., 0] + np.asarray(t1, float)


def invert(R, t):
    """Inverse transform of ``(R, t)``."""
    Rt = np.swapaxes(np.asarray(R, float), -1, -2)
    return Rt, -(Rt @ np.asarray(t, float)[..., None])[..., 0]
