"""Distance Jacobians of the reported contacts (issue 13), inside the model's evaluate kernel.

For a contact between shape 1 on body ``b1`` and shape 2 on body ``b2`` with witness points
``p1``, ``p2`` and unit normal ``n`` (shape 1 -> shape 2, world), the signed distance changes
with the joint rates ``q_dot`` as ``d_dot = n . (v(p2) - v(p1))``, where ``v(x)`` is the
velocity of the point ``x`` fixed on its body (the witnesses' own motion along the surfaces is
orthogonal to ``n`` and drops out where the witness pair is unique). Over the spanning tree
(``spanning_tree.py``), each tree joint ``k`` on the path from a body to its root moves the body
as a rigid whole: a revolute joint with world unit axis ``a`` through the pivot ``o`` gives
``v = a x (x - o)`` per rad/s, a prismatic joint ``v = a`` per m/s; where the body is the
joint's ADF parent (``tree_reversed``) the relation is inverted and the sign flips. So the row
of one contact is

    J[k] = n . (v_k(p2) - v_k(p1))   (m/rad or m/m), in ``Model.joint_names`` order,

and ``d_dot = J q_dot``. A joint on neither body's path gives 0; a joint on both paths (a
common ancestor) gives ``n . (a x (p2 - p1))``, 0 when the shapes are apart (``p2 - p1`` is
along ``n``). Coupled joints (``q[c] = m q[s] + offset``) are folded into their source,
``J[s] += m J[c]``, last coupling first (chains), and their own column is 0: the row is the
derivative with respect to the independent positions. Loop-closing joints are not in the tree
and take no part: the couplings keep the loops closed (``kinematics.py``).

Degenerate cases: where the witness pair is not unique (parallel faces or edges touching along
a segment or patch, concentric shapes) the distance may have no derivative; the row is that of
the witnesses the kernels returned (finite, a one-sided derivative or a subgradient). Padding
moves the witnesses along ``n``, which does not change the row.
"""

from __future__ import annotations

from numba import njit

from ambf_collision.model.contact_rows import GEOMETRY_VALUES
from ambf_collision.model.kinematics_kernels import MOTION_PRISMATIC, MOTION_REVOLUTE

__all__ = ["write_contact_row", "write_contact_rows"]


@njit(cache=True, inline="always")
def _add_point_row(K, D, b, x0, x1, x2, n0, n1, n2, scale, row):
    """``row[k] += scale * n . v_k(x)`` for every tree joint ``k`` above body ``b`` (the point
    ``x`` fixed on ``b``; module docstring)."""
    tree_joint, tree_parent, reversed_, motion = K.tree_joint, K.tree_parent, K.tree_reversed, K.joint_motion
    axis, origin = D.joint_axis, D.joint_origin
    while b >= 0:
        k = tree_joint[b]
        if k < 0:
            break
        s = -scale if reversed_[b] else scale
        a0, a1, a2 = axis[k, 0], axis[k, 1], axis[k, 2]
        if motion[k] == MOTION_REVOLUTE:
            r0, r1, r2 = x0 - origin[k, 0], x1 - origin[k, 1], x2 - origin[k, 2]
            row[k] += s * (n0 * (a1 * r2 - a2 * r1) + n1 * (a2 * r0 - a0 * r2) + n2 * (a0 * r1 - a1 * r0))
        elif motion[k] == MOTION_PRISMATIC:
            row[k] += s * (n0 * a0 + n1 * a1 + n2 * a2)
        b = tree_parent[b]


@njit(cache=True, inline="always")
def _body_local(D, b, x0, x1, x2, row, c):
    """``row[c:c + 3] = R_b^T (x - t_b)``: world point ``x`` in body ``b``'s frame (m); nothing
    for ``b < 0`` (no body)."""
    if b < 0:
        return
    R, t = D.body_R, D.body_t
    y0, y1, y2 = x0 - t[b, 0], x1 - t[b, 1], x2 - t[b, 2]
    for i in range(3):
        row[c + i] = R[b, 0, i] * y0 + R[b, 1, i] * y1 + R[b, 2, i] * y2


@njit(cache=True, inline="always")
def write_contact_row(K, D, velocity, b1, b2, distance, point_1, point_2, normal, p, out):
    """``out (20 + J,)``: the row (layout of ``contact_rows.py``) of a contact between bodies
    ``b1`` and ``b2`` at the kinematics ``D``, with signed distance ``distance`` (m) and the
    witnesses and normal of row ``p`` of the world tables ``point_1``, ``point_2``, ``normal``
    ``(P,3)``: the world vectors (position: the witnesses' midpoint), its distance Jacobian
    (module docstring), distance rate ``J velocity`` (m/s) and the witnesses in their bodies'
    frames (m). ``b2 < 0``: shape 2 is fixed in world, on no body (a sensed obstacle,
    ``obstacles.py``): no joint moves it and its local columns are left to the caller."""
    J = K.joint_motion.shape[0]
    joint, source, multiplier = K.coupling_joint, K.coupling_source, K.coupling_multiplier
    rate_at = GEOMETRY_VALUES + J
    out[0] = distance
    for i in range(3):
        out[1 + i], out[4 + i] = point_1[p, i], point_2[p, i]
        out[7 + i], out[10 + i] = 0.5 * (point_1[p, i] + point_2[p, i]), normal[p, i]
    row = out[GEOMETRY_VALUES:rate_at]
    row[:] = 0.0
    n0, n1, n2 = normal[p, 0], normal[p, 1], normal[p, 2]
    x0, x1, x2 = point_1[p, 0], point_1[p, 1], point_1[p, 2]
    _add_point_row(K, D, b1, x0, x1, x2, n0, n1, n2, -1.0, row)
    _body_local(D, b1, x0, x1, x2, out, rate_at + 1)
    x0, x1, x2 = point_2[p, 0], point_2[p, 1], point_2[p, 2]
    _add_point_row(K, D, b2, x0, x1, x2, n0, n1, n2, 1.0, row)
    _body_local(D, b2, x0, x1, x2, out, rate_at + 4)
    for c in range(joint.shape[0] - 1, -1, -1):   # last first: chains fold into their root
        row[source[c]] += multiplier[c] * row[joint[c]]
        row[joint[c]] = 0.0
    rate = 0.0
    for k in range(J):
        rate += row[k] * velocity[k]
    out[rate_at] = rate


@njit(cache=True, inline="always")
def write_contact_rows(K, D, velocity, pair_body, R, contact_index, n_contacts, rows):
    """For the first ``n_contacts`` pairs of ``contact_index``, row ``r`` of ``rows (P, 20 +
    J)``: :func:`write_contact_row` of the pair's result. ``pair_body (2P,)``: the two bodies of
    pair ``p`` at ``2p``, ``2p + 1``; ``R``: the pair results (world)."""
    point_1, point_2, normal, distance = R.point_1, R.point_2, R.normal, R.distance
    for r in range(n_contacts):
        p = contact_index[r]
        write_contact_row(K, D, velocity, pair_body[2 * p], pair_body[2 * p + 1], distance[p],
                          point_1, point_2, normal, p, rows[r])
