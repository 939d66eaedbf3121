"""Body poses from joint positions: AMBF's joint relation over a spanning tree, compiled once.

Frames: every pose is ``(R, t)`` with ``x_world = R @ x_body + t`` (metres, radians).

Joint relation (AMBF / Blender add-on; a, b = normalised parent/child axes, s_p, s_c = body
scales, q = joint position, ``offset`` = the joint's ``offset``)::

    revolute:  T_child = T_parent . Trans(s_p pivot_p) . Rot(a, q + offset) . R(b->a) . Trans(-s_c pivot_c)
    prismatic: T_child = T_parent . Trans(s_p pivot_p + q a) . Rot(a, offset) . R(b->a) . Trans(-s_c pivot_c)
    fixed:     the revolute relation at q = 0

``p2p``, ``linear spring``, ``torsion spring``, ``cone twist``, ``six dof`` and ``six dof
spring`` joints do not follow a joint position here: in the tree they hold the relative pose of
the two bodies' ADF ``location``s (the pose AMBF starts them in).

Bodies are posed along the spanning tree of :mod:`spanning_tree` (roots at ``T_file .
T_location``, ``T_file`` the per-file root pose). Each joint left out of the tree (a *closure
joint*, closing a loop) is checked instead: its residual is the mismatch of the constraint AMBF
builds for it (Bullet's), at the posed bodies, with ``p`` and ``c`` the world pivots on the
parent and child body:

- revolute, torsion spring (hinge): ``|p - c|`` (m), and the angle (rad) between the parent's
  axis ``a`` and the child's, ``relation_R^T a`` in its frame;
- prismatic, linear spring (slider): the part of ``c - p`` off the axis line, and the angle of
  the rotation between the child's orientation and the one the relation gives it;
- fixed: ``|p - c|`` and that rotation angle;
- p2p, cone twist: ``|p - c|`` and 0; six dof (spring): 0 and 0 (no rigid constraint).

A closure joint's own position is never used. Couplings (``couplings.py``) are applied first
in every evaluation. The per-cycle work is one njit call (``kinematics_kernels.py``).
"""

from __future__ import annotations

import numpy as np

from ambf_collision.geometry.transforms import axis_angle_to_matrix, rotation_between
from ambf_collision.model import kinematics_kernels as kk
from ambf_collision.model.adf import (
    CONE_TWIST,
    FIXED,
    LINEAR_SPRING,
    P2P,
    PRISMATIC,
    REVOLUTE,
    SIX_DOF,
    SIX_DOF_SPRING,
    TORSION_SPRING,
    AdfWorld,
)
from ambf_collision.model.couplings import compile_couplings, couplings_from
from ambf_collision.model.spanning_tree import spanning_tree

__all__ = ["Kinematics", "KinematicsState"]

_RELATION_TYPES = (REVOLUTE, PRISMATIC, FIXED)  # joints whose relation poses the child
_MOTION = {REVOLUTE: kk.MOTION_REVOLUTE, PRISMATIC: kk.MOTION_PRISMATIC}
_CONSTRAINT = {
    REVOLUTE: kk.CONSTRAINT_HINGE, TORSION_SPRING: kk.CONSTRAINT_HINGE,
    PRISMATIC: kk.CONSTRAINT_SLIDER, LINEAR_SPRING: kk.CONSTRAINT_SLIDER,
    FIXED: kk.CONSTRAINT_WELD, P2P: kk.CONSTRAINT_POINT, CONE_TWIST: kk.CONSTRAINT_POINT,
    SIX_DOF: kk.CONSTRAINT_NONE, SIX_DOF_SPRING: kk.CONSTRAINT_NONE,
}


class Kinematics:
    """Compiled kinematics of an :class:`AdfWorld` (constant after construction).

    ``couplings``: a couplings YAML path or a sequence of rules (see :mod:`couplings`).

    Names: ``joint_names`` (qualified), ``joint_plain_names``, ``joint_types``,
    ``closure_joint_names``, ``ambiguous`` (plain names several joints share). Per joint ``(J,)``: ``movable`` (revolute or prismatic),
    ``coupled`` (a coupling computes it), ``closure`` (not in the tree), ``needs_position``
    (movable, in the tree and not coupled: the positions a joint state must give),
    ``joint_file``. Per body ``(B,)``: ``tree_parent_joint`` (-1 for roots),
    ``tree_parent_body``, ``tree_reversed``, ``body_file``; ``body_order``, ``roots``,
    ``closure_joints (K,)``. The compiled tables the kernels read (read-only):
    ``joint_table``, ``body_table``, ``coupling_table`` (``kinematics_kernels`` dtypes).
    """

    def __init__(self, world: AdfWorld, couplings=None):
        bodies, joints = world.bodies, world.joints
        B, J = len(bodies), len(joints)
        self.n_bodies, self.n_joints, self.n_files = B, J, len(world.files)
        self.joint_names = [j.qualified_name for j in joints]
        self.joint_plain_names = [j.name for j in joints]
        self.joint_types = [j.type for j in joints]
        self.joint_file = np.array([j.file_index for j in joints], dtype=np.int64)
        self.body_file = np.array([b.file_index for b in bodies], dtype=np.int64)
        self.movable = np.array([j.type in _MOTION for j in joints], dtype=bool).reshape(J)
        self._names = world.joints_by_name
        self.ambiguous = self._names.ambiguous_plain_names

        parent = np.array([j.parent for j in joints], dtype=np.int64).reshape(J)
        child = np.array([j.child for j in joints], dtype=np.int64).reshape(J)
        tree = spanning_tree(B, parent, child, [j.type in _RELATION_TYPES for j in joints])
        self.body_order, self.roots = tree.order, tree.roots
        self.tree_parent_joint, self.tree_parent_body = tree.parent_joint, tree.parent_body
        self.tree_reversed = tree.reversed
        self.closure = tree.closure
        self.closure_joints = np.flatnonzero(tree.closure).astype(np.int64)
        self.closure_joint_names = [self.joint_names[k] for k in self.closure_joints]

        compiled = compile_couplings(couplings_from(couplings), self.joint_index, self.joint_names,
                                     self.movable)
        self.couplings = compiled.couplings
        self.coupled = compiled.coupled
        self.needs_position = self.movable & ~self.closure & ~self.coupled

        axis, parent_pivot, child_pivot = np.zeros((J, 3)), np.zeros((J, 3)), np.zeros((J, 3))
        relation_R, rest_R, rest_t = np.zeros((J, 3, 3)), np.zeros((J, 3, 3)), np.zeros((J, 3))
        for k, j in enumerate(joints):
            p, c = bodies[j.parent], bodies[j.child]
            axis[k] = j.parent_axis / np.linalg.norm(j.parent_axis)
            parent_pivot[k] = p.scale * j.parent_pivot
            child_pivot[k] = c.scale * j.child_pivot
            relation_R[k] = axis_angle_to_matrix(axis[k], j.offset) @ rotation_between(j.child_axis, j.parent_axis)
            if j.type in _RELATION_TYPES:
                rest_R[k] = relation_R[k]
                rest_t[k] = parent_pivot[k] - relation_R[k] @ child_pivot[k]
            else:  # hold the relative pose of the two ADF locations
                rest_R[k] = p.R.T @ c.R
                rest_t[k] = p.R.T @ (c.t - p.t)
        self.joint_table = np.zeros(J, kk.JOINT_DTYPE)
        jt = self.joint_table
        jt["motion"] = [_MOTION.get(j.type, kk.MOTION_FIXED) for j in joints]
        jt["constraint"] = [_CONSTRAINT[j.type] for j in joints]
        jt["parent"], jt["child"] = parent, child
        jt["axis"], jt["parent_pivot"], jt["child_pivot"] = axis, parent_pivot, child_pivot
        jt["relation_R"], jt["rest_R"], jt["rest_t"] = relation_R, rest_R, rest_t
        self.body_table = np.zeros(B, kk.BODY_DTYPE)
        bt = self.body_table
        bt["pose_order"], bt["tree_joint"] = self.body_order, self.tree_parent_joint
        bt["tree_parent"], bt["tree_reversed"] = self.tree_parent_body, self.tree_reversed
        bt["file"] = self.body_file
        bt["location_R"] = np.array([b.R for b in bodies], dtype=np.float64).reshape(B, 3, 3)
        bt["location_t"] = np.array([b.t for b in bodies], dtype=np.float64).reshape(B, 3)
        self.coupling_table = np.zeros(len(compiled.joint), kk.COUPLING_DTYPE)
        ct = self.coupling_table
        ct["joint"], ct["source"] = compiled.joint, compiled.source
        ct["multiplier"], ct["offset"] = compiled.multiplier, compiled.offset
        for table in (jt, bt, ct, self.closure_joints):
            table.flags.writeable = False

    # -- names ----------------------------------------------------------------------------------

    def joint_index(self, name: str) -> int:
        """Index of the joint ``name`` designates, in any spelling the naming rule accepts
        (:mod:`names`); ``KeyError`` (``NameLookupError``, with the reason) otherwise."""
        return self._names.index(name)

    def joint_indices(self, names):
        """``(indices (K,), positions in names (K,), unknown names)`` for ``names``: a name that
        designates no joint, or several (``ambiguous``), is unknown."""
        return self._names.indices(names, ambiguous_unknown=True)

    # -- per cycle ------------------------------------------------------------------------------

    def tables(self) -> tuple:
        """The constant tables in the order the compiled kernels take them: joints, bodies,
        couplings, closure joints."""
        return self.joint_table, self.body_table, self.coupling_table, self.closure_joints

    def new_buffers(self, file_R, file_t) -> "KinematicsState":
        """Fresh per-cycle tables (one set per ``Data``): ``q`` zero, the given per-file root
        poses ``file_R (F,3,3)``, ``file_t (F,3)`` (copied), outputs zeroed."""
        state = KinematicsState(np.zeros(self.n_joints, kk.JOINT_STATE_DTYPE),
                                np.zeros(self.n_files, kk.POSE_DTYPE),
                                np.zeros(self.n_bodies, kk.POSE_DTYPE),
                                np.zeros((len(self.closure_joints), 2)))
        state.file_R[...] = np.asarray(file_R, dtype=np.float64).reshape(self.n_files, 3, 3)
        state.file_t[...] = np.asarray(file_t, dtype=np.float64).reshape(self.n_files, 3)
        return state

    def forward(self, state: "KinematicsState") -> None:
        """One cycle into ``state``: couplings applied to ``state.q``, body poses, joint
        transforms, world joint frames, closure residuals."""
        kk.evaluate_kinematics(*self.tables(), *state.tables())


class KinematicsState:
    """The per-cycle kinematics tables (``joints``: :data:`JOINT_STATE_DTYPE`; ``files`` and
    ``bodies``: :data:`POSE_DTYPE`; ``closure_residuals (K,2)``), and views of their fields:
    in: ``q (J,)`` (rad / m), ``velocity (J,)`` (rad/s / m/s), ``file_R (F,3,3)``, ``file_t
    (F,3)``; out, world frame: ``body_R (B,3,3)``, ``body_t (B,3)``, ``joint_R (J,3,3)``,
    ``joint_t (J,3)`` (child in parent), ``joint_axis``, ``joint_origin (J,3)``,
    ``closure_residuals (K,2)`` position (m) and angle (rad) mismatch."""

    def __init__(self, joints, files, bodies, closure_residuals):
        self.joints, self.files, self.bodies = joints, files, bodies
        self.closure_residuals = closure_residuals
        self.q, self.velocity = joints["q"], joints["velocity"]
        self.joint_R, self.joint_t = joints["R"], joints["t"]
        self.joint_axis, self.joint_origin = joints["axis"], joints["origin"]
        self.file_R, self.file_t = files["R"], files["t"]
        self.body_R, self.body_t = bodies["R"], bodies["t"]

    def tables(self) -> tuple:
        return self.joints, self.files, self.bodies, self.closure_residuals
