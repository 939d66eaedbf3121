"""Signed distance from a convex solid (box, cylinder, cone, hull) to a triangle mesh, compiled.

:func:`solid_mesh` takes the solid as a :class:`~ambf_collision.geometry.support.Core` ``C``
already expressed in the mesh's frame (:func:`~ambf_collision.geometry.support.core_in_frame`),
with the HullSet's ``HV`` (vertices), ``NS`` (neighbour starts), ``NB`` (neighbours) for hulls, and
the mesh as :mod:`~ambf_collision.geometry.mesh_distance` takes it (``V``, ``F``, ``NBr`` the
faces' neighbours, ``VN``, ``boxes``, ``nodes``, ``closed``; m, the mesh frame). It follows
mesh_distance's conventions: ``(d, p1, p2, n, t)`` with ``d`` the signed distance (m), ``p1`` on
the solid, ``p2`` on the mesh, ``n`` the unit normal from the solid to the mesh with ``p2 - p1 =
d n`` (also when penetrating: then ``n`` is the way the mesh moves to separate), ``t`` the
triangle of the result (the next call's ``hint``).

**Apart** (no triangle touches the solid): ``d`` is the exact distance, the minimum over the
triangles of GJK between the solid and the triangle's core (``support.triangle_core``,
``gjk.core_distance_in``), found by depth-first branch and bound over the hierarchy with an
explicit stack. A node's lower bound is the larger of the gap between its box and the solid's
exact box in the mesh frame (supports along the mesh axes) and the gaps along the solid's own
three axes (the node box projected on them against the solid's extent), and for a cylinder or
cone its axis segment's distance to the box minus its radius; a triangle's, the largest of its
box's gap, the solid's gap to the triangle's plane (supports along its normal) and to the plane
through the triangle's point nearest the solid's core (:func:`_triangle_gap`). GJK on a triangle
stops as soon as a separating plane proves it beyond the best (``gjk.core_distance_below``).
Pruning keeps ``MESH_PRUNE_SLACK`` as mesh_distance does; the ``hint`` triangle is measured first
as the upper bound; ties go to the lowest triangle index, so the result does not depend on the
hint.

**Touching or crossing** (some triangle's GJK distance <= 0) and **wholly inside** (a closed
mesh, no triangle touching, and the solid's witness point behind the pseudo-normal at its
closest mesh point, or within ``MESH_SIDE_BY_WITNESS`` of the surface its centre's ``phi < 0``): ``d`` is minus a *lower bound of the
penetration depth* (the shortest translation of the mesh that leaves the solid's interior and
the mesh's inside disjoint), the largest of:

- the depth ``-phi`` below the surface of each of the solid's 15 sample points: its centre and
  its support points along its own six axis directions and eight diagonals (a box's face centres
  and corners; a cylinder's cap centres and rim points; a cone's apex, base centre and rim; a
  hull's extreme vertices); closed meshes only. A translation that clears the solid carries each
  of its points out of the inside, so it is at least as long as each point's depth;
- the penetration depth (EPA) of the solid against each triangle it meets: a translation that
  clears the inside also clears every triangle of the surface. A triangle whose depth cannot
  exceed the best so far (the solid's extent beyond its plane on either side, a translation
  along its normal that clears it) is skipped.

So ``d`` is never deeper than the true depth (up to EPA's tolerance), never positive, and
strictly negative when the solid's interior crosses the surface (some triangle meets the
interior) or lies inside; ``d = 0`` when it only touches. It is exact where the deepest point is
a sample point and the solid moves along its depth direction (a box sunk flat under a face).

**Open meshes** have no inside: apart, the unsigned distance; touching or crossing, minus the
largest EPA depth against the triangles it meets (the translation clearing the deepest-crossed
triangle; 0 when it only touches), the sample points unused. This is coal's reading of a
BVHModel: a surface without volume, whose penetration has a meaning only locally, for the
triangles in contact (coal-library/coal issues #162 and #357); coal itself reports ~0 there.

Cost: apart, as mesh_distance's capsules plus one GJK per triangle reached (~0.3-1 us); overlapping,
15 point queries and one EPA per triangle not skipped.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry import tolerances as _tol
from ambf_collision.geometry.bvh import MAX_DEPTH
from ambf_collision.geometry.gjk import ABOVE_CUTOFF, SCRATCH_ROWS, core_distance_below
from ambf_collision.geometry.mesh_distance import node_bound, point_phi
from ambf_collision.geometry.shapes import CONE, CYLINDER
from ambf_collision.geometry.support import NONE, core_support, triangle_core
from ambf_collision.geometry.triangles import feature_normal, point_triangle, segment_triangle

__all__ = ["solid_mesh", "solid_bounds", "inside_when_apart"]

_SLACK = _tol.MESH_PRUNE_SLACK
_SIDE = _tol.MESH_SIDE_BY_WITNESS
_CAP = 2 * MAX_DEPTH + 2


@njit(cache=True, error_model="numpy", inline="always")
def _tri(V, F, t):
    i, j, k = F[t, 0], F[t, 1], F[t, 2]
    return ((V[i, 0], V[i, 1], V[i, 2]), (V[j, 0], V[j, 1], V[j, 2]), (V[k, 0], V[k, 1], V[k, 2]))


@njit(cache=True, error_model="numpy", inline="always")
def _extent(C, HV, NS, NB, u0, u1, u2):
    """``(min, max)`` of ``u . x`` over the solid (its radius included; u of any length)."""
    a0, a1, a2, _ = core_support(C, HV, NS, NB, u0, u1, u2, NONE)
    b0, b1, b2, _ = core_support(C, HV, NS, NB, -u0, -u1, -u2, NONE)
    r = C.radius * math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    return u0 * b0 + u1 * b1 + u2 * b2 - r, u0 * a0 + u1 * a1 + u2 * a2 + r


@njit(cache=True, error_model="numpy")
def solid_bounds(C, HV, NS, NB):
    """The solid's exact box in its core's frame, ``(lo, hi)`` 3-tuples, and its extents along
    its own axes (the rotation's columns), ``((min, max), ...)`` for the three axes (m)."""
    x = _extent(C, HV, NS, NB, 1.0, 0.0, 0.0)
    y = _extent(C, HV, NS, NB, 0.0, 1.0, 0.0)
    z = _extent(C, HV, NS, NB, 0.0, 0.0, 1.0)
    e0 = _extent(C, HV, NS, NB, C.r00, C.r10, C.r20)
    e1 = _extent(C, HV, NS, NB, C.r01, C.r11, C.r21)
    e2 = _extent(C, HV, NS, NB, C.r02, C.r12, C.r22)
    return (x[0], y[0], z[0]), (x[1], y[1], z[1]), (e0, e1, e2)


@njit(cache=True, error_model="numpy", inline="always")
def _axis_gap(C, E, k, c0, c1, c2, h0, h1, h2):
    """Gap along the solid's axis ``k`` between its extent ``E[k]`` and the box of centre c and
    half extents h (negative when the projections overlap)."""
    if k == 0:
        u0, u1, u2 = C.r00, C.r10, C.r20
    elif k == 1:
        u0, u1, u2 = C.r01, C.r11, C.r21
    else:
        u0, u1, u2 = C.r02, C.r12, C.r22
    mid = u0 * c0 + u1 * c1 + u2 * c2
    rad = abs(u0) * h0 + abs(u1) * h1 + abs(u2) * h2
    return max(mid - rad - E[k][1], E[k][0] - mid - rad)


@njit(cache=True, error_model="numpy", inline="always")
def _box_gap(C, lo, hi, E, b0, b1, b2, b3, b4, b5):
    """Lower bound (m) of the distance from the solid to the box ``(b0..b2)-(b3..b5)``: the
    larger of the gap between the solid's box ``lo``-``hi`` and it, and the gaps along the
    solid's own axes (0 when they overlap)."""
    g2 = 0.0
    for blo, bhi, slo, shi in ((b0, b3, lo[0], hi[0]), (b1, b4, lo[1], hi[1]), (b2, b5, lo[2], hi[2])):
        e = max(blo - shi, slo - bhi, 0.0)
        g2 += e * e
    g = math.sqrt(g2)
    c0, c1, c2 = 0.5 * (b0 + b3), 0.5 * (b1 + b4), 0.5 * (b2 + b5)
    h0, h1, h2 = 0.5 * (b3 - b0), 0.5 * (b4 - b1), 0.5 * (b5 - b2)
    for k in range(3):
        g = max(g, _axis_gap(C, E, k, c0, c1, c2, h0, h1, h2))
    return g


@njit(cache=True, error_model="numpy", inline="always")
def _axis(C):
    """A cylinder's or cone's axis segment ``(p, q - p)`` (its core's frame)."""
    p = (C.c0 - C.h2 * C.r02, C.c1 - C.h2 * C.r12, C.c2 - C.h2 * C.r22)
    return p, (2.0 * C.h2 * C.r02, 2.0 * C.h2 * C.r12, 2.0 * C.h2 * C.r22)


@njit(cache=True, error_model="numpy", inline="always")
def _node_gap(C, lo, hi, E, boxes, i):
    """Lower bound (m) of the distance from the solid to node ``i``'s box: :func:`_box_gap`,
    and for a cylinder or cone its axis segment's distance to the box minus its radius."""
    g = _box_gap(C, lo, hi, E, boxes[i, 0], boxes[i, 1], boxes[i, 2], boxes[i, 3], boxes[i, 4], boxes[i, 5])
    if C.kind == CYLINDER or C.kind == CONE:
        p, d = _axis(C)
        g = max(g, math.sqrt(node_bound(boxes, i, p, d)) - C.h0 - C.radius)
    return g


@njit(cache=True, error_model="numpy")
def _plane_reach(C, HV, NS, NB, a, b, c):
    """``(gap, depth)`` of the solid against the plane of triangle ``abc`` (m): ``gap`` how far
    the solid lies beyond the plane on one side (<= 0 when it meets it), ``depth`` the shorter
    translation along the normal that carries it to one side (an upper bound of its penetration
    depth against the triangle; <= 0 when apart)."""
    n0 = (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1])
    n1 = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
    n2 = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    n0, n1, n2 = n0 / ln, n1 / ln, n2 / ln
    low, high = _extent(C, HV, NS, NB, n0, n1, n2)
    o = n0 * a[0] + n1 * a[1] + n2 * a[2]
    return max(low - o, o - high), min(high - o, o - low)


@njit(cache=True, error_model="numpy")
def _triangle_gap(C, HV, NS, NB, lo, hi, E, a, b, c, limit):
    """Lower bound (m) of the distance from the solid to triangle ``abc``, the cheaper bounds
    first, returned as soon as one exceeds ``limit``: the box gap; the gap to its plane; the gap
    to the plane through the triangle's point ``x`` closest to the solid's core (a cylinder's or
    cone's axis segment, another solid's centre ``y``) normal to ``u = y - x``, which holds the
    triangle on its far side (one support of the solid along ``-u``: the distance itself when
    the solid's nearest feature faces the triangle)."""
    g = _box_gap(C, lo, hi, E, min(a[0], b[0], c[0]), min(a[1], b[1], c[1]), min(a[2], b[2], c[2]),
                 max(a[0], b[0], c[0]), max(a[1], b[1], c[1]), max(a[2], b[2], c[2]))
    if g > limit:
        return g
    g = max(g, _plane_reach(C, HV, NS, NB, a, b, c)[0])
    if g > limit:
        return g
    if C.kind == CYLINDER or C.kind == CONE:
        p, e = _axis(C)
        q = (p[0] + e[0], p[1] + e[1], p[2] + e[2])
        d2, s, x, _ = segment_triangle(p, q, a, b, c)
        y = (p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1]), p[2] + s * (q[2] - p[2]))
    else:
        y = (C.m0, C.m1, C.m2)
        d2, x, _ = point_triangle(y, a, b, c)
    if d2 > 0.0:
        k = 1.0 / math.sqrt(d2)
        u0, u1, u2 = k * (y[0] - x[0]), k * (y[1] - x[1]), k * (y[2] - x[2])
        z0, z1, z2, _ = core_support(C, HV, NS, NB, -u0, -u1, -u2, NONE)
        g = max(g, u0 * (z0 - x[0]) + u1 * (z1 - x[1]) + u2 * (z2 - x[2]) - C.radius)
    return g


@njit(cache=True, error_model="numpy")
def _solid_triangle(C, HV, NS, NB, V, F, t, scratch, cutoff):
    """GJK/EPA signed distance (m) of the solid and triangle ``t``; witnesses and normal in
    ``scratch`` rows 5, 6, 7 (gjk.core_distance_below); inf when proven above ``cutoff``."""
    a, b, c = _tri(V, F, t)
    d, status = core_distance_below(C, triangle_core(a, b, c), HV, NS, NB, scratch, cutoff)
    return np.inf if status == ABOVE_CUTOFF else d


@njit(cache=True, error_model="numpy", inline="always")
def _row(scratch, i):
    return (scratch[i, 0], scratch[i, 1], scratch[i, 2])


@njit(cache=True, error_model="numpy")
def _sample(C, HV, NS, NB, j):
    """Sample point ``j`` (0-14) of the solid (module docstring): 0 the centre, 1-6 the
    supports along its axes +-x, +-y, +-z, 7-14 along the diagonals (+-1, +-1, +-1)."""
    if j == 0:
        return C.m0, C.m1, C.m2
    if j <= 6:
        s = 1.0 if j % 2 == 1 else -1.0
        k = (j - 1) // 2
        u0, u1, u2 = s if k == 0 else 0.0, s if k == 1 else 0.0, s if k == 2 else 0.0
    else:
        u0 = 1.0 if (j - 7) & 1 else -1.0
        u1 = 1.0 if (j - 7) & 2 else -1.0
        u2 = 1.0 if (j - 7) & 4 else -1.0
    d0 = C.r00 * u0 + C.r01 * u1 + C.r02 * u2
    d1 = C.r10 * u0 + C.r11 * u1 + C.r12 * u2
    d2 = C.r20 * u0 + C.r21 * u1 + C.r22 * u2
    x0, x1, x2, _ = core_support(C, HV, NS, NB, d0, d1, d2, NONE)
    k = C.radius / math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    return x0 + k * d0, x1 + k * d1, x2 + k * d2


@njit(cache=True, error_model="numpy")
def inside_when_apart(V, F, NBr, VN, boxes, nodes, closed, t, d, p, m):
    """Whether a shape apart from the closed mesh by ``d`` > 0 (its witness ``p``, closest
    triangle ``t``; a point ``m`` inside it) is wholly inside: the side of ``p`` by the
    pseudo-normal at its closest point on ``t``, or, nearer than ``MESH_SIDE_BY_WITNESS``, the
    sign of ``phi(m)``."""
    if d > _SIDE:
        a, b, c = _tri(V, F, t)
        _, x, f = point_triangle(p, a, b, c)
        g = feature_normal(V, F, NBr, VN, t, f)
        return (x[0] - p[0]) * g[0] + (x[1] - p[1]) * g[1] + (x[2] - p[2]) * g[2] > 0.0
    return point_phi(V, F, NBr, VN, boxes, nodes, closed, m, t)[0] < 0.0


@njit(cache=True, error_model="numpy")
def solid_mesh(C, HV, NS, NB, V, F, NBr, VN, boxes, nodes, closed, hint):
    """Signed distance (m) from the solid core ``C`` (mesh frame) to the mesh (module
    docstring): ``(d, p1, p2, n, t)``."""
    work = np.empty((SCRATCH_ROWS + _CAP, 9))     # the one allocation: GJK's scratch, the stack
    scratch, stack = work[:SCRATCH_ROWS], work[SCRATCH_ROWS:]
    lo, hi, E = solid_bounds(C, HV, NS, NB)
    scale = 0.0
    for k in range(3):
        scale = max(scale, abs(boxes[0, k]), abs(boxes[0, 3 + k]), abs(lo[k]), abs(hi[k]))
    slack = _SLACK * scale
    M = F.shape[0]
    # phase 1: the smallest GJK distance, or the first triangle touching the solid
    best, bt = np.inf, -1
    p1, p2, n = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 1.0)
    if 0 <= hint < M:
        best, bt = _solid_triangle(C, HV, NS, NB, V, F, hint, scratch, np.inf), hint
        p1, p2, n = _row(scratch, 5), _row(scratch, 6), _row(scratch, 7)
    contact = best <= 0.0
    stack[0, 0], stack[0, 1] = 0.0, 0.0
    top = 1 if not contact else 0
    while top > 0 and not contact:
        top -= 1
        if stack[top, 1] > best + slack:
            continue
        i = np.int64(stack[top, 0])
        first, count = nodes[i, 0], nodes[i, 1]
        if count > 0:
            for t in range(first, first + count):
                a, b, c = _tri(V, F, t)
                if t == bt or _triangle_gap(C, HV, NS, NB, lo, hi, E, a, b, c, best + slack) > best + slack:
                    continue
                d = _solid_triangle(C, HV, NS, NB, V, F, t, scratch, best + slack)
                if d < best or (d == best and t < bt):
                    best, bt = d, t
                    p1, p2, n = _row(scratch, 5), _row(scratch, 6), _row(scratch, 7)
                if d <= 0.0:
                    contact = True
                    break
            continue
        g0 = _node_gap(C, lo, hi, E, boxes, first)
        g1 = _node_gap(C, lo, hi, E, boxes, first + 1)
        near, far, gn, gf = first, first + 1, g0, g1
        if g1 < g0:
            near, far, gn, gf = first + 1, first, g1, g0
        for j, g in ((far, gf), (near, gn)):
            if g <= best + slack:
                stack[top, 0], stack[top, 1] = j, g
                top += 1
    inside = False
    if not contact and closed:
        inside = inside_when_apart(V, F, NBr, VN, boxes, nodes, closed, bt, best, p1, (C.m0, C.m1, C.m2))
    if not (contact or inside):
        return best, p1, p2, n, bt
    # the depth: the deepest sample point (closed meshes) ...
    value = best if contact else np.inf
    if closed:
        for j in range(15):
            y = _sample(C, HV, NS, NB, j)
            phi, ts, x, nn = point_phi(V, F, NBr, VN, boxes, nodes, closed, y, bt)
            if phi < value or (phi == value and ts < bt):
                value, bt, p1, p2, n = phi, ts, y, x, nn
    if contact:  # ... and the EPA depths against the triangles meeting the solid
        stack[0, 0], stack[0, 1] = 0.0, 0.0
        top = 1
        while top > 0:
            top -= 1
            i = np.int64(stack[top, 0])
            first, count = nodes[i, 0], nodes[i, 1]
            if count > 0:
                for t in range(first, first + count):
                    a, b, c = _tri(V, F, t)
                    gap, depth = _plane_reach(C, HV, NS, NB, a, b, c)
                    if gap > slack or -depth > value or _triangle_gap(C, HV, NS, NB, lo, hi, E, a, b, c, slack) > slack:
                        continue
                    d = _solid_triangle(C, HV, NS, NB, V, F, t, scratch, np.inf)
                    if d < value or (d == value and t < bt):
                        value, bt = d, t
                        p1, p2, n = _row(scratch, 5), _row(scratch, 6), _row(scratch, 7)
                continue
            for j in range(first, first + 2):
                if _node_gap(C, lo, hi, E, boxes, j) <= slack:
                    stack[top, 0], stack[top, 1] = j, 0.0
                    top += 1
        if value > 0.0:  # touching only, the EPA value a rounding above 0
            value = 0.0
            mid = (0.5 * (p1[0] + p2[0]), 0.5 * (p1[1] + p2[1]), 0.5 * (p1[2] + p2[2]))
            p1, p2 = mid, mid
    return value, p1, p2, n, bt
