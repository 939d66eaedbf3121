"""Forward kinematics, world joint frames and loop-closure residuals: numba kernels.

Plain scalar loops over the spanning tree (``spanning_tree.py``), compiled once and cached on
disk. The compiled kinematics and its per-cycle values are record tables (dtypes below, one
row per joint, body, coupling or file); :func:`kinematics_constants` and
:func:`kinematics_buffers` turn them into the two NamedTuples the kernels read.
:func:`forward_kinematics` is what another njit function (the model's evaluate kernel) calls;
:func:`evaluate_kinematics` is the entry point called from Python (the tables).

Frames and units: metres, radians; a pose ``(R, t)`` maps ``x_parent = R x_child + t``. Joint
``k`` joins body ``joint_parent[k]`` to body ``joint_child[k]``; its transform at position ``q``
(child frame in parent frame) is, with ``a`` the unit parent axis and ``p`` the scaled parent
pivot (AMBF's relation, see ``kinematics.py``)::

    revolute:   R = Rot(a, q) rest_R      t = p + Rot(a, q) (rest_t - p)
    prismatic:  R = rest_R                t = rest_t + q a
    fixed:      R = rest_R                t = rest_t          (also every pose-holding joint)

``(rest_R, rest_t)`` is the joint's transform at q = 0, made at compile time.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.transforms import axis_rotation, compose_row, transform_rows

__all__ = ["MOTION_FIXED", "MOTION_REVOLUTE", "MOTION_PRISMATIC", "CONSTRAINT_NONE",
           "CONSTRAINT_POINT", "CONSTRAINT_HINGE", "CONSTRAINT_SLIDER", "CONSTRAINT_WELD",
           "JOINT_DTYPE", "BODY_DTYPE", "COUPLING_DTYPE", "JOINT_STATE_DTYPE", "POSE_DTYPE",
           "KinematicsConstants", "KinematicsBuffers", "kinematics_constants",
           "kinematics_buffers", "forward_kinematics", "evaluate_kinematics"]

# How a tree joint moves its child (joint_motion).
MOTION_FIXED = 0  # the rest transform (fixed joints, and joints that hold their ADF pose)
MOTION_REVOLUTE = 1
MOTION_PRISMATIC = 2

# What a closure joint constrains, as the Bullet constraint AMBF builds for it (joint_constraint):
CONSTRAINT_NONE = 0  # six dof (spring): nothing measured, residual 0
CONSTRAINT_POINT = 1  # p2p, cone twist: the two pivots coincide
CONSTRAINT_HINGE = 2  # revolute, torsion spring: pivots coincide, axes aligned
CONSTRAINT_SLIDER = 3  # prismatic, linear spring: child pivot on the axis line, rotation locked
CONSTRAINT_WELD = 4  # fixed: pivots coincide, rotation locked


_F3 = (np.float64, (3,))
_F33 = (np.float64, (3, 3))

JOINT_DTYPE = np.dtype([
    ("motion", np.int64),         # MOTION_* code: how a tree joint moves its child
    ("constraint", np.int64),     # CONSTRAINT_* code: what a closure joint constrains
    ("parent", np.int64),         # parent body index
    ("child", np.int64),          # child body index
    ("axis", *_F3),               # unit joint axis, parent body frame
    ("parent_pivot", *_F3),       # m, scaled pivot in the parent body frame
    ("child_pivot", *_F3),        # m, scaled pivot in the child body frame
    ("relation_R", *_F33),        # Rot(a, offset) R(b->a): the relation's constant rotation
    ("rest_R", *_F33),            # joint transform (child in parent) at q = 0: rotation
    ("rest_t", *_F3),             # ... and translation (m)
], align=True)
"""The compiled kinematics, one row per joint (constant)."""

BODY_DTYPE = np.dtype([
    ("pose_order", np.int64),     # row n: the n-th body to pose (each after its tree parent)
    ("tree_joint", np.int64),     # the tree joint that poses the body; -1 for roots
    ("tree_parent", np.int64),    # the body it is posed from; -1 for roots
    ("tree_reversed", np.bool_),  # True: the body is its tree joint's parent (inverse relation)
    ("file", np.int64),           # index of the ADF file it comes from
    ("location_R", *_F33),        # ADF location in its file's frame (a root's pose): rotation
    ("location_t", *_F3),         # ... and position (m)
], align=True)
"""The compiled kinematics, one row per body (constant)."""

COUPLING_DTYPE = np.dtype([
    ("joint", np.int64),          # the coupled joint: q[joint] = multiplier * q[source] + offset
    ("source", np.int64),         # the joint it follows
    ("multiplier", np.float64),   # source units per joint unit
    ("offset", np.float64),       # rad or m (the coupled joint's unit)
], align=True)
"""One coupling per row, in application order (a chain's source first; constant)."""

JOINT_STATE_DTYPE = np.dtype([
    ("q", np.float64),            # rad / m: position (coupled joints: written by the coupling)
    ("velocity", np.float64),     # rad/s / m/s (coupled joints: unused, their rate follows the source)
    ("R", *_F33),                 # joint transform (child frame in parent frame): rotation
    ("t", *_F3),                  # ... and translation (m)
    ("axis", *_F3),               # unit axis, world (fixed on the parent body)
    ("origin", *_F3),             # m, pivot, world (fixed on the parent body)
], align=True)
"""Per joint, per cycle (Data)."""

POSE_DTYPE = np.dtype([("R", *_F33), ("t", *_F3)], align=True)
"""A pose ``x_world = R x_local + t`` (m): per body and per file root, per cycle (Data)."""


class KinematicsConstants(NamedTuple):
    """The compiled kinematics (constant; ``kinematics.Kinematics`` builds it).

    Tree, per body ``(B,)``: ``body_order`` (bodies, each after the body it is posed from),
    ``tree_joint`` (-1 for roots), ``tree_parent`` (-1 for roots), ``tree_reversed`` (bool),
    ``body_file``; ``location_R (B,3,3)``, ``location_t (B,3)``: ADF locations (roots' poses).
    Joints ``(J,)``: ``joint_motion``, ``joint_constraint`` (codes above), ``joint_parent``,
    ``joint_child``; ``axis (J,3)`` unit parent axis, ``parent_pivot``, ``child_pivot (J,3)``
    scaled pivots in each body's frame, ``relation_R (J,3,3)`` = Rot(a, offset) R(b->a),
    ``rest_R (J,3,3)``, ``rest_t (J,3)`` transform at q = 0. Couplings ``(C,)``, in application
    order: ``coupling_joint``, ``coupling_source``, ``coupling_multiplier``, ``coupling_offset``.
    ``closure_joints (K,)``: the joints left out of the tree.
    """

    body_order: np.ndarray
    tree_joint: np.ndarray
    tree_parent: np.ndarray
    tree_reversed: np.ndarray
    body_file: np.ndarray
    location_R: np.ndarray
    location_t: np.ndarray
    joint_motion: np.ndarray
    joint_constraint: np.ndarray
    joint_parent: np.ndarray
    joint_child: np.ndarray
    axis: np.ndarray
    parent_pivot: np.ndarray
    child_pivot: np.ndarray
    relation_R: np.ndarray
    rest_R: np.ndarray
    rest_t: np.ndarray
    coupling_joint: np.ndarray
    coupling_source: np.ndarray
    coupling_multiplier: np.ndarray
    coupling_offset: np.ndarray
    closure_joints: np.ndarray


class KinematicsBuffers(NamedTuple):
    """Per-cycle arrays (``model.Data`` owns them). In: ``q (J,)`` joint positions (rad / m;
    coupled entries are overwritten), ``file_R (F,3,3)``, ``file_t (F,3)`` per-file root poses.
    Out, world frame: ``body_R (B,3,3)``, ``body_t (B,3)``; ``joint_R (J,3,3)``, ``joint_t
    (J,3)`` each joint's transform (child in parent); ``joint_axis (J,3)`` unit axis and
    ``joint_origin (J,3)`` pivot of every joint, on its parent body; ``closure_residuals
    (K,2)``: per closure joint the position (m) and angle (rad) mismatch."""

    q: np.ndarray
    file_R: np.ndarray
    file_t: np.ndarray
    body_R: np.ndarray
    body_t: np.ndarray
    joint_R: np.ndarray
    joint_t: np.ndarray
    joint_axis: np.ndarray
    joint_origin: np.ndarray
    closure_residuals: np.ndarray


@njit(cache=True, inline="always")
def kinematics_constants(joints, bodies, couplings, closure_joints):
    """:class:`KinematicsConstants` of the constant tables (:data:`JOINT_DTYPE`,
    :data:`BODY_DTYPE`, :data:`COUPLING_DTYPE`) and ``closure_joints (K,) int64``."""
    return KinematicsConstants(
        bodies.pose_order, bodies.tree_joint, bodies.tree_parent, bodies.tree_reversed,
        bodies.file, bodies.location_R, bodies.location_t, joints.motion, joints.constraint,
        joints.parent, joints.child, joints.axis, joints.parent_pivot, joints.child_pivot,
        joints.relation_R, joints.rest_R, joints.rest_t, couplings.joint, couplings.source,
        couplings.multiplier, couplings.offset, closure_joints)


@njit(cache=True, inline="always")
def kinematics_buffers(joint_state, files, bodies, closure_residuals):
    """:class:`KinematicsBuffers` of the per-cycle tables (:data:`JOINT_STATE_DTYPE`,
    :data:`POSE_DTYPE` per file and per body) and ``closure_residuals (K,2)``."""
    return KinematicsBuffers(joint_state.q, files.R, files.t, bodies.R, bodies.t, joint_state.R,
                             joint_state.t, joint_state.axis, joint_state.origin,
                             closure_residuals)


# The kernels take the arrays out of the NamedTuples once, at the top, and index them with
# scalars, and the stages are inlined into their caller: array views, tuple fields read inside
# loops and calls that pass the tuples each cost reference counting (measured on the demo arm:
# 1.06 us per cycle with views and separate calls, 0.37 us like this).


@njit(cache=True, inline="always")
def apply_couplings(K, q):
    """``q[joint] = multiplier * q[source] + offset`` for every coupling, in order."""
    joint, source = K.coupling_joint, K.coupling_source
    multiplier, offset = K.coupling_multiplier, K.coupling_offset
    for c in range(joint.size):
        q[joint[c]] = multiplier[c] * q[source[c]] + offset[c]


@njit(cache=True, inline="always")
def joint_transforms(K, D):
    """Every joint's transform at ``D.q`` (module docstring) into ``D.joint_R``, ``D.joint_t``."""
    motion, axis, pivot, R0, t0 = K.joint_motion, K.axis, K.parent_pivot, K.rest_R, K.rest_t
    q, R, t = D.q, D.joint_R, D.joint_t
    for k in range(motion.size):
        if motion[k] == MOTION_REVOLUTE:
            ax, ay, az = axis[k, 0], axis[k, 1], axis[k, 2]
            (g00, g01, g02), (g10, g11, g12), (g20, g21, g22) = axis_rotation(
                ax, ay, az, math.cos(q[k]), math.sin(q[k]))   # G = Rot(a, q), row by row
            for j in range(3):
                R[k, 0, j] = g00 * R0[k, 0, j] + g01 * R0[k, 1, j] + g02 * R0[k, 2, j]
                R[k, 1, j] = g10 * R0[k, 0, j] + g11 * R0[k, 1, j] + g12 * R0[k, 2, j]
                R[k, 2, j] = g20 * R0[k, 0, j] + g21 * R0[k, 1, j] + g22 * R0[k, 2, j]
            px, py, pz = pivot[k, 0], pivot[k, 1], pivot[k, 2]
            x, y, z = t0[k, 0] - px, t0[k, 1] - py, t0[k, 2] - pz
            t[k, 0] = px + g00 * x + g01 * y + g02 * z
            t[k, 1] = py + g10 * x + g11 * y + g12 * z
            t[k, 2] = pz + g20 * x + g21 * y + g22 * z
        else:
            lin = q[k] if motion[k] == MOTION_PRISMATIC else 0.0
            for i in range(3):
                for j in range(3):
                    R[k, i, j] = R0[k, i, j]
                t[k, i] = t0[k, i] + lin * axis[k, i]


@njit(cache=True, inline="always")
def pose_bodies(K, D):
    """Body poses along the tree: a root at its file pose times its location, every other body
    at its tree parent's pose times the joint transform (or its inverse when reversed)."""
    order, joint, parent, reversed_ = K.body_order, K.tree_joint, K.tree_parent, K.tree_reversed
    body_file, LR, Lt = K.body_file, K.location_R, K.location_t
    FR, Ft, R, t, JR, Jt = D.file_R, D.file_t, D.body_R, D.body_t, D.joint_R, D.joint_t
    for n in range(order.size):
        b = order[n]
        k = joint[b]
        if k < 0:  # T_b = T_file T_location
            compose_row(FR, Ft, body_file[b], LR, Lt, b, R, t, b)
        elif not reversed_[b]:  # T_b = T_p T_joint
            compose_row(R, t, parent[b], JR, Jt, k, R, t, b)
        else:  # T_b = T_p T_joint^-1 = (R_p JR^T, t_p - R_p JR^T Jt)
            p = parent[b]
            for i in range(3):
                for j in range(3):
                    R[b, i, j] = R[p, i, 0] * JR[k, j, 0] + R[p, i, 1] * JR[k, j, 1] + R[p, i, 2] * JR[k, j, 2]
            for i in range(3):
                t[b, i] = t[p, i] - (R[b, i, 0] * Jt[k, 0] + R[b, i, 1] * Jt[k, 1] + R[b, i, 2] * Jt[k, 2])


@njit(cache=True, inline="always")
def world_joint_frames(K, D):
    """Every joint's unit axis and pivot in world, both fixed on its parent body."""
    transform_rows(D.body_R, D.body_t, K.joint_parent, K.axis, D.joint_axis, False)
    transform_rows(D.body_R, D.body_t, K.joint_parent, K.parent_pivot, D.joint_origin, True)


@njit(cache=True, inline="always")
def _relative_entry(M, R, p, c, i, j):
    """Entry (i, j) of ``M^T R[p]^T R[c]``."""
    s = 0.0
    for m in range(3):
        s += M[m, i] * (R[p, 0, m] * R[c, 0, j] + R[p, 1, m] * R[c, 1, j] + R[p, 2, m] * R[c, 2, j])
    return s


@njit(cache=True, inline="always")
def rotation_mismatch(M, R, p, c):
    """Angle (rad) of ``E = M^T R[p]^T R[c]`` (``M (3,3)``, ``R (B,3,3)``): how far child ``c``'s
    orientation is from the one relation rotation ``M`` gives it from parent ``p``. From sin =
    half the norm of E's antisymmetric part and cos = (trace E - 1) / 2."""
    x = _relative_entry(M, R, p, c, 2, 1) - _relative_entry(M, R, p, c, 1, 2)
    y = _relative_entry(M, R, p, c, 0, 2) - _relative_entry(M, R, p, c, 2, 0)
    z = _relative_entry(M, R, p, c, 1, 0) - _relative_entry(M, R, p, c, 0, 1)
    trace = _relative_entry(M, R, p, c, 0, 0) + _relative_entry(M, R, p, c, 1, 1) + _relative_entry(M, R, p, c, 2, 2)
    return math.atan2(0.5 * math.sqrt(x * x + y * y + z * z), 0.5 * (trace - 1.0))


@njit(cache=True, inline="always")
def closure_residuals(K, D):
    """Per closure joint: position mismatch (m) and angle mismatch (rad) of its constraint at
    the current body poses (``kinematics.py`` says what each type measures; needs
    :func:`world_joint_frames` first)."""
    closure, constraint, parent, child = K.closure_joints, K.joint_constraint, K.joint_parent, K.joint_child
    cp, axis, relation = K.child_pivot, K.axis, K.relation_R
    R, t, world_axis, origin, out = D.body_R, D.body_t, D.joint_axis, D.joint_origin, D.closure_residuals
    for n in range(closure.size):
        k = closure[n]
        kind, c = constraint[k], child[k]
        ax, ay, az = world_axis[k, 0], world_axis[k, 1], world_axis[k, 2]
        # d: the child's pivot minus the parent's, world
        dx = R[c, 0, 0] * cp[k, 0] + R[c, 0, 1] * cp[k, 1] + R[c, 0, 2] * cp[k, 2] + t[c, 0] - origin[k, 0]
        dy = R[c, 1, 0] * cp[k, 0] + R[c, 1, 1] * cp[k, 1] + R[c, 1, 2] * cp[k, 2] + t[c, 1] - origin[k, 1]
        dz = R[c, 2, 0] * cp[k, 0] + R[c, 2, 1] * cp[k, 1] + R[c, 2, 2] * cp[k, 2] + t[c, 2] - origin[k, 2]
        if kind == CONSTRAINT_SLIDER:  # only the part off the axis line counts
            along = dx * ax + dy * ay + dz * az
            dx, dy, dz = dx - along * ax, dy - along * ay, dz - along * az
        position, angle = 0.0, 0.0
        if kind != CONSTRAINT_NONE:
            position = math.sqrt(dx * dx + dy * dy + dz * dz)
        if kind == CONSTRAINT_HINGE:  # the child's hinge axis (relation^T a in its frame) vs a
            ux = relation[k, 0, 0] * axis[k, 0] + relation[k, 1, 0] * axis[k, 1] + relation[k, 2, 0] * axis[k, 2]
            uy = relation[k, 0, 1] * axis[k, 0] + relation[k, 1, 1] * axis[k, 1] + relation[k, 2, 1] * axis[k, 2]
            uz = relation[k, 0, 2] * axis[k, 0] + relation[k, 1, 2] * axis[k, 1] + relation[k, 2, 2] * axis[k, 2]
            wx = R[c, 0, 0] * ux + R[c, 0, 1] * uy + R[c, 0, 2] * uz
            wy = R[c, 1, 0] * ux + R[c, 1, 1] * uy + R[c, 1, 2] * uz
            wz = R[c, 2, 0] * ux + R[c, 2, 1] * uy + R[c, 2, 2] * uz
            cx, cy, cz = ay * wz - az * wy, az * wx - ax * wz, ax * wy - ay * wx
            angle = math.atan2(math.sqrt(cx * cx + cy * cy + cz * cz), ax * wx + ay * wy + az * wz)
        elif kind == CONSTRAINT_SLIDER or kind == CONSTRAINT_WELD:
            angle = rotation_mismatch(relation[k], R, parent[k], c)
        out[n, 0] = position
        out[n, 1] = angle


@njit(cache=True, inline="always")
def forward_kinematics(K, D):
    """One cycle: couplings into ``D.q``, joint transforms, body poses, world joint frames,
    closure residuals."""
    apply_couplings(K, D.q)
    joint_transforms(K, D)
    pose_bodies(K, D)
    world_joint_frames(K, D)
    closure_residuals(K, D)


@njit(cache=True)
def evaluate_kinematics(joints, bodies, couplings, closure_joints, joint_state, files, poses,
                        closure_residuals_out):
    """:func:`forward_kinematics` on the tables (see :func:`kinematics_constants` and
    :func:`kinematics_buffers`): the entry point called from Python."""
    forward_kinematics(kinematics_constants(joints, bodies, couplings, closure_joints),
                       kinematics_buffers(joint_state, files, poses, closure_residuals_out))
