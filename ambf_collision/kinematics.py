"""Body poses from joint positions: AMBF's joint relation, compiled once, vectorised per cycle.

Frames: every pose is ``(R, t)`` with ``x_world = R @ x_body + t`` (metres, radians).

Joint relation (AMBF / Blender add-on; a, b = normalised parent/child axes, s_p, s_c = body
scales, q = joint position, ``offset`` = the joint's ``offset``)::

    revolute:  T_child = T_parent . Trans(s_p pivot_p) . Rot(a, q + offset) . R(b->a) . Trans(-s_c pivot_c)
    prismatic: T_child = T_parent . Trans(s_p pivot_p + q a) . Rot(a, offset) . R(b->a) . Trans(-s_c pivot_c)
    fixed:     the revolute relation at q = 0

``p2p``, ``linear spring``, ``torsion spring``, ``cone twist``, ``six dof`` and ``six dof
spring`` joints do not follow a joint position here: the child holds the relative pose of the
two bodies' ADF ``location``s (computed once at load time), i.e. the pose AMBF starts them in.

Root bodies (no parent joint) sit at ``T_file . T_location`` where ``T_file`` is the per-file
root pose (identity unless given, e.g. from TF).

Compiled into index arrays ordered parents before children; a cycle costs one small
vectorised step per tree depth level and no dictionary or YAML work.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.adf_loader import PRISMATIC, REVOLUTE, AdfWorld
from ambf_collision.transforms import axis_angle_to_matrix, rotation_between

__all__ = ["KinematicTree"]


def _skew(a: np.ndarray) -> np.ndarray:
    K = np.zeros(a.shape[:-1] + (3, 3))
    K[..., 0, 1], K[..., 0, 2] = -a[..., 2], a[..., 1]
    K[..., 1, 0], K[..., 1, 2] = a[..., 2], -a[..., 0]
    K[..., 2, 0], K[..., 2, 1] = -a[..., 1], a[..., 0]
    return K


class KinematicTree:
    """Compiled kinematic tree of an :class:`AdfWorld`.

    Attributes: ``n_bodies``, ``n_joints``, ``joint_names`` (qualified), ``joint_plain_names``,
    ``joint_types``, ``movable`` (bool (J,): revolute or prismatic), ``parent_joint`` (per body
    the index of the joint whose child it is, or -1), ``body_file`` (file index per body).
    """

    def __init__(self, world: AdfWorld):
        bodies, joints = world.bodies, world.joints
        B, J = len(bodies), len(joints)
        self.n_bodies, self.n_joints = B, J
        self.n_files = len(world.files)
        self.joint_names = [j.qualified_name for j in joints]
        self.joint_plain_names = [j.name for j in joints]
        self.joint_types = [j.type for j in joints]
        self.loc_R = np.array([b.R for b in bodies], float).reshape(B, 3, 3)
        self.loc_t = np.array([b.t for b in bodies], float).reshape(B, 3)
        self.body_file = np.array([b.file_index for b in bodies], dtype=np.intp)
        self.parent_joint = np.full(B, -1, dtype=np.intp)
        jp = np.array([j.parent for j in joints], dtype=np.intp)
        jc = np.array([j.child for j in joints], dtype=np.intp)
        self.parent_joint[jc] = np.arange(J)

        self.is_rev = np.array([j.type == REVOLUTE for j in joints], bool)
        self.is_pri = np.array([j.type == PRISMATIC for j in joints], bool)
        self.movable = self.is_rev | self.is_pri
        # Constant parts: T_joint(q) = Trans(cl_t) . M(q) . (cr_R, cr_t)
        self.axis = np.zeros((J, 3))
        self.cl_t = np.zeros((J, 3))
        self.cr_R = np.zeros((J, 3, 3))
        self.cr_t = np.zeros((J, 3))
        for k, j in enumerate(joints):
            p, c = bodies[j.parent], bodies[j.child]
            if self.movable[k] or j.type == "fixed":
                a = j.parent_axis / np.linalg.norm(j.parent_axis)
                R = axis_angle_to_matrix(a, j.offset) @ rotation_between(j.child_axis, j.parent_axis)
                self.axis[k] = a if self.movable[k] else 0.0
                self.cl_t[k] = p.scale * j.parent_pivot
                self.cr_R[k] = R
                self.cr_t[k] = -(R @ (c.scale * j.child_pivot))
            else:  # hold the ADF relative pose
                self.cr_R[k] = p.R.T @ c.R
                self.cr_t[k] = p.R.T @ (c.t - p.t)
        K = _skew(self.axis)
        self._K, self._KK = K, K @ K

        # Depth levels (parents before children).
        depth = np.full(B, -1, dtype=np.intp)
        roots = np.flatnonzero(self.parent_joint < 0)
        depth[roots] = 0
        order = []
        frontier = list(roots)
        children = [[] for _ in range(B)]
        for k in range(J):
            children[jp[k]].append(k)
        while frontier:
            nxt = []
            for b in frontier:
                for k in children[b]:
                    depth[jc[k]] = depth[b] + 1
                    order.append(k)
                    nxt.append(jc[k])
            frontier = nxt
        if np.any(depth < 0):  # cannot happen after the loader's cycle check
            raise ValueError("kinematic tree has a cycle")
        self.roots = roots
        self.root_file = self.body_file[roots]
        order = np.array(order, dtype=np.intp)
        jdepth = depth[jc[order]] if J else np.zeros(0, np.intp)
        self.levels = []
        for d in range(1, int(depth.max()) + 1 if B else 1):
            ks = order[jdepth == d]
            self.levels.append((ks, jp[ks], jc[ks], np.empty((len(ks), 3, 3)), np.empty((len(ks), 3))))

        # Per-cycle buffers (reused).
        self._eye = np.broadcast_to(np.eye(3), (J, 3, 3))
        self._MR = np.empty((J, 3, 3))
        self._tmp33 = np.empty((J, 3, 3))
        self._jR = np.empty((J, 3, 3))
        self._jt = np.empty((J, 3))
        self._ang = np.empty(J)
        self._lin = np.empty(J)
        self._s = np.empty(J)
        self._c = np.empty(J)

        # Name lookup (compiled once): qualified always, plain name when unique.
        self.name_to_index = {n: k for k, n in enumerate(self.joint_names)}
        counts: dict = {}
        for n in self.joint_plain_names:
            counts[n] = counts.get(n, 0) + 1
        for k, n in enumerate(self.joint_plain_names):
            if counts[n] == 1:
                self.name_to_index.setdefault(n, k)
        self.ambiguous = sorted(n for n, c in counts.items() if c > 1)

    def joint_indices(self, names):
        """(indices (K,), positions-of-known (K,), unknown names list) for ``names``."""
        idx, keep, unknown = [], [], []
        for i, n in enumerate(names):
            k = self.name_to_index.get(n)
            if k is None:
                unknown.append(n)
            else:
                idx.append(k)
                keep.append(i)
        return np.array(idx, np.intp), np.array(keep, np.intp), unknown

    def joint_transforms(self, q: np.ndarray):
        """Per-joint parent-to-child transforms (R (J,3,3), t (J,3)) at joint positions ``q``
        (rad for revolute, m for prismatic); reused buffers."""
        J = self.n_joints
        if J == 0:
            return self._jR, self._jt
        np.multiply(q, self.is_rev, out=self._ang)
        np.multiply(q, self.is_pri, out=self._lin)
        np.sin(self._ang, out=self._s)
        np.cos(self._ang, out=self._c)
        np.subtract(1.0, self._c, out=self._c)
        # Rodrigues: M = I + sin K + (1 - cos) K^2
        np.multiply(self._s[:, None, None], self._K, out=self._MR)
        np.multiply(self._c[:, None, None], self._KK, out=self._tmp33)
        self._MR += self._tmp33
        self._MR += self._eye
        np.matmul(self._MR, self.cr_R, out=self._jR)
        np.matmul(self._MR, self.cr_t[:, :, None], out=self._jt[:, :, None])
        self._jt += self.cl_t
        self._jt += self._lin[:, None] * self.axis
        return self._jR, self._jt

    def forward(self, q, file_R, file_t, out_R, out_t):
        """Body poses in world into ``out_R`` (B,3,3), ``out_t`` (B,3).

        ``q`` (J,) joint positions; ``file_R`` (F,3,3), ``file_t`` (F,3) per-file root poses.
        """
        jR, jt = self.joint_transforms(np.asarray(q, float))
        r = self.roots
        fR = file_R[self.root_file]
        out_R[r] = np.matmul(fR, self.loc_R[r])
        out_t[r] = np.matmul(fR, self.loc_t[r][:, :, None])[:, :, 0] + file_t[self.root_file]
        for ks, ps, cs, bufR, buft in self.levels:
            pR = out_R[ps]
            np.matmul(pR, jR[ks], out=bufR)
            np.matmul(pR, jt[ks][:, :, None], out=buft[:, :, None])
            buft += out_t[ps]
            out_R[cs] = bufR
            out_t[cs] = buft
        return out_R, out_t
