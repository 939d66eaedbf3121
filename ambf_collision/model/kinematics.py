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

Compiled into index arrays ordered parents before children; a cycle costs one matmul for all
joint transforms (4x4 homogeneous), one matmul per tree depth level (of views when the level has
one joint) and no dictionary or YAML work.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.model.adf import PRISMATIC, REVOLUTE, AdfWorld
from ambf_collision.geometry.transforms import axis_angle_to_matrix, rotation_between

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
        # Per cycle the joint transform [R | t] (3x4) is one matmul of the coefficients
        # [1, sin(q), 1 - cos(q), q_prismatic] with constant (4, 12) blocks (Rodrigues expanded):
        # [R | t] = Trans(cl_t) . (I + sin K + (1 - cos) K^2) . [cr_R | cr_t] + [0 | q a].
        A0 = np.concatenate([self.cr_R, self.cr_t[:, :, None]], axis=2)  # (J,3,4)
        blocks = np.zeros((J, 4, 3, 4))
        blocks[:, 0] = A0
        blocks[:, 0, :, 3] += self.cl_t
        blocks[:, 1] = K @ A0
        blocks[:, 2] = self._KK @ A0
        blocks[:, 3, :, 3] = self.axis
        self._blocks = blocks.reshape(J, 4, 12)
        self._coef = np.zeros((J, 1, 4))
        self._coef[:, 0, 0] = 1.0
        # Views of the coefficient columns and a ones vector, made once (no slicing or scalar
        # conversion per cycle).
        self._sin, self._cos, self._pri = self._coef[:, 0, 1], self._coef[:, 0, 2], self._coef[:, 0, 3]
        self._ones = np.ones(J)
        self._T = np.zeros((J, 4, 4))  # homogeneous joint transforms, last row constant
        self._T[:, 3, 3] = 1.0
        self._T34 = self._T.reshape(J, 16)[:, :12].reshape(J, 1, 12)  # view of the top 3 rows

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
        # Per-cycle plan: a level with one joint is one matmul of views (int indices); wider
        # levels gather, multiply and scatter at once.
        self._plan = []
        for ks, ps, cs, _, _ in self.levels:
            if len(ks) == 1:
                self._plan.append((int(ks[0]), int(ps[0]), int(cs[0]), None))
            else:
                self._plan.append((ks, ps, cs, np.empty((len(ks), 4, 4))))
        root_loc = np.zeros((len(roots), 4, 4))
        root_loc[:, :3, :3] = self.loc_R[roots]
        root_loc[:, :3, 3] = self.loc_t[roots]
        root_loc[:, 3, 3] = 1.0
        self._root_loc = root_loc
        self._root_buf = np.empty((len(roots), 4, 4))
        self._root_key = None  # bytes of the file poses the root rows of _body_T were made from
        self._single_file = self.n_files == 1
        self._file_T = np.zeros((self.n_files, 4, 4))
        self._file_T[:, 3, 3] = 1.0
        self._body_T = np.zeros((B, 4, 4))  # homogeneous body poses in world
        self._body_T[:, 3, 3] = 1.0
        # Single-joint levels as precomputed (parent pose, joint transform, child pose) views
        # of the persistent buffers: the cycle does no indexing for them.
        W, T = self._body_T, self._T
        self._plan = [((W[p], T[k], W[c]), None) if buf is None else ((k, p, c), buf)
                      for k, p, c, buf in self._plan]
        self._W_R, self._W_t = W[:, :3, :3], W[:, :3, 3]  # the outputs' views of W

        # Joint-type shortcuts: every joint revolute -> the angle is q itself; no prismatic
        # joint -> the prismatic coefficient stays 0 (both exact: q * 1 == q, 0 * q == 0).
        self._all_rev = bool(self.is_rev.all())
        self._any_pri = bool(self.is_pri.any())

        # Per-cycle buffers (reused).
        self._jR = np.empty((J, 3, 3))
        self._jt = np.empty((J, 3))
        self._ang = np.empty(J)

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

    def _joint_T(self, q: np.ndarray) -> np.ndarray:
        """Homogeneous parent-to-child transforms (J,4,4) at ``q``; reused buffer."""
        ang = q if self._all_rev else np.multiply(q, self.is_rev, out=self._ang)
        np.sin(ang, out=self._sin)
        np.cos(ang, out=self._cos)
        np.subtract(self._ones, self._cos, out=self._cos)
        if self._any_pri:
            np.multiply(q, self.is_pri, out=self._pri)
        np.matmul(self._coef, self._blocks, out=self._T34)
        return self._T

    def joint_transforms(self, q: np.ndarray):
        """Per-joint parent-to-child transforms (R (J,3,3), t (J,3)) at joint positions ``q``
        (rad for revolute, m for prismatic); reused buffers."""
        if self.n_joints == 0:
            return self._jR, self._jt
        T = self._joint_T(np.asarray(q, float))
        np.copyto(self._jR, T[:, :3, :3])
        np.copyto(self._jt, T[:, :3, 3])
        return self._jR, self._jt

    def forward(self, q, file_R, file_t, out_R, out_t):
        """Body poses in world into ``out_R`` (B,3,3), ``out_t`` (B,3).

        ``q`` (J,) joint positions; ``file_R`` (F,3,3), ``file_t`` (F,3) per-file root poses.
        """
        W = self._body_T
        # The root rows of W depend on the file poses only: recomputed when those change
        # (compared as bytes; nothing else writes these rows).
        key = (np.asarray(file_R, float).tobytes(), np.asarray(file_t, float).tobytes())
        if key != self._root_key:
            fT = self._file_T
            fT[:, :3, :3] = file_R
            fT[:, :3, 3] = file_t
            if self._single_file:
                np.matmul(fT[0], self._root_loc, out=self._root_buf)
            else:
                np.matmul(fT[self.root_file], self._root_loc, out=self._root_buf)
            W[self.roots] = self._root_buf
            self._root_key = key
        if self.n_joints:
            T = self._joint_T(np.asarray(q, float))
            mm = np.matmul
            for (x, y, z), buf in self._plan:
                if buf is None:  # views: child pose = parent pose . joint transform
                    mm(x, y, out=z)
                else:  # indices (joints, parents, children) of a wider level
                    mm(W[y], T[x], out=buf)
                    W[z] = buf
        np.copyto(out_R, self._W_R)
        np.copyto(out_t, self._W_t)
        return out_R, out_t
