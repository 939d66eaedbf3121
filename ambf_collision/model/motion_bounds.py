"""The constants of the motion bound (``Model.evaluate_motion``), compiled once per Model.

Over a step the joints move ``q(s) = q0 + s dq`` and a file's root pose by SLERP and a linear
translation (``motion.py``). The kernel (``motion_kernel.py``) bounds, per checked pair, how fast
the two shapes can approach each other: their distance depends only on their poses relative to
the deepest body both hang from (their **common body**; the world when their trees differ), so
only the joints on the tree path between the two bodies move one relative to the other.

A joint ``k`` that poses body ``c`` from its tree parent moves ``c`` and everything below it
relative to that parent: a revolute joint by a rotation about an axis fixed in both bodies, so
a point ``x`` below moves at most ``|dq_k| dist(x, axis) <= |dq_k| |x - e_c|`` per unit of
``s``, with ``e_c`` any point of the axis (the body's **entry point**); a prismatic joint
translates by ``|dq_k|``; a fixed or pose-holding joint does not move. ``|x - e_c|`` is bounded
over the whole step by the triangle inequality down the chain: the distance from each body's
entry point to its child's (constant for revolute and fixed joints; for a prismatic child it
grows by at most ``max(|q0|, |q1|)`` of that joint, the kernel adds it per call), then the
shape's bounding sphere about its body's entry point (its padding included).

Entry points (body frame, m): a body posed by a joint's relation from the joint's parent
(``tree_reversed`` False) enters at ``rest^-1 p`` (``p`` the scaled parent pivot, on the axis),
which its tree parent sees at ``p`` (+ ``q a`` for a prismatic joint); a reversed body (it is the
joint's parent) enters at ``p``, which its tree parent sees at ``rest^-1 p`` (- ``q rest_R^T a``).
A root enters at its origin, which its file's frame sees at its ``location``.

Tables (``MotionBounds.tables()``, packed into ``Model.motion_buffer``): ``link (B,)`` m, the
distance from a body's entry point, as its tree parent sees it at q = 0, to the parent's entry
point (a root: to its file's origin); ``extent (N,)`` m, the farthest point of shape ``k`` (and
its padding) from its body's entry point (+inf for a plane); ``pair_common (P,)`` the common
body of each pair, -1 when the trees differ; ``body_root (B,)`` each body's tree root.
"""

from __future__ import annotations

import numpy as np

from ambf_collision.geometry.pairs import bounding_spheres
from ambf_collision.model.kinematics_kernels import MOTION_PRISMATIC

__all__ = ["MotionBounds", "MOTION_BOUND_TABLES"]

MOTION_BOUND_TABLES = ("link", "extent", "pair_common", "body_root")
"""The tables of ``Model.motion_buffer``, in order (module docstring)."""


def _entry_points(kinematics):
    """``(self (B,3), in_parent (B,3))``: each body's entry point in its own frame and, at q = 0,
    in its tree parent's frame (a root: its origin, and its location in its file's frame)."""
    jt, bt = kinematics.joint_table, kinematics.body_table
    B = len(bt)
    own, seen = np.zeros((B, 3)), np.array(bt["location_t"], dtype=float).reshape(B, 3)
    for b in range(B):
        k = int(bt["tree_joint"][b])
        if k < 0:
            continue
        p, R, t = jt["parent_pivot"][k], jt["rest_R"][k], jt["rest_t"][k]
        behind = R.T @ (p - t)   # rest^-1 p: the pivot in the joint child's frame at q = 0
        own[b], seen[b] = (p, behind) if bt["tree_reversed"][b] else (behind, p)
    return own, seen


def _common_body(parent, a: int, b: int) -> int:
    """The deepest body both ``a`` and ``b`` hang from (themselves included), -1 if none."""
    above = set()
    while a >= 0:
        above.add(a)
        a = int(parent[a])
    while b >= 0 and b not in above:
        b = int(parent[b])
    return b


class MotionBounds:
    """The motion bound's constants of a Model (module docstring): ``link (B,)``, ``extent
    (N,)``, ``pair_common (P,)``, ``body_root (B,)``; ``prismatic (J,)`` bool (for tests)."""

    def __init__(self, model):
        kin = model.kinematics
        bt = kin.body_table
        parent = np.asarray(bt["tree_parent"], dtype=np.int64)
        own, seen = _entry_points(kin)
        B = len(parent)
        self.link = np.zeros(B)
        for b in range(B):
            above = own[parent[b]] if parent[b] >= 0 else np.zeros(3)
            self.link[b] = float(np.linalg.norm(seen[b] - above))
        centre, radius = bounding_spheres(model.link_shapes.local, model.hulls)
        body = np.asarray(model.shape_body, dtype=np.int64)
        pad = model.body_padding[body] if len(body) else np.zeros(0)
        with np.errstate(invalid="ignore"):
            self.extent = np.linalg.norm(centre - own[body], axis=1) + radius + pad
        self.extent[~np.isfinite(self.extent)] = np.inf
        self.pair_common = np.array([_common_body(parent, int(i), int(j))
                                     for i, j in model.pair_bodies.tolist()], dtype=np.int64)
        self.body_root = np.asarray(model.body_tree, dtype=np.int64).reshape(B)
        self.prismatic = np.asarray(kin.joint_table["motion"]) == MOTION_PRISMATIC

    def tables(self) -> tuple:
        """The tables in :data:`MOTION_BOUND_TABLES` order."""
        return (self.link, self.extent, self.pair_common, self.body_root)
