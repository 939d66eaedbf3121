"""Exact distances from points, segments, spheres and capsules to a triangle mesh, compiled.

The mesh is the arrays of :meth:`~ambf_collision.geometry.trimesh.TriangleMesh.arrays`, all in
the mesh's frame (m): ``V`` (N, 3) float64, ``F`` (M, 3) int32, ``NB`` (M, 3) int32, ``VN``
(N, 3) float64, ``boxes`` (n, 6) float64, ``nodes`` (n, 2) int32 (:mod:`~ambf_collision.geometry
.bvh`), and ``closed`` (1 when the mesh has an inside). Queries are 3-tuples in the same frame.

**Closest triangle** (:func:`closest_to_segment`; a point is a segment with equal ends): depth-
first branch and bound over the hierarchy with an explicit stack. A node is skipped when its
lower bound exceeds the best squared distance found so far (plus ``MESH_PRUNE_SLACK``, which
covers the rounding of bounds against triangle distances); of two children the nearer is
visited first. The lower bound for a segment is its exact distance to the node's box
(:func:`node_bound`); in a leaf, a triangle whose plane the segment stays beyond the best
distance is skipped before the exact kernel. ``hint`` (a triangle index, e.g. the previous
evaluation's closest one; -1 for none) is measured first, as the first upper bound. Ties
between triangles go to the lowest index, and pruning is conservative, so the result is the
same with any hint: the hint changes the speed, never the result.

Cost (bench/bench_mesh.py, 1,000,000 triangles): a sphere or capsule near the surface takes
~10 us; a capsule 5-7 cm away over a concave part of the surface, where ~1,000 triangles lie
within a leaf's size of the closest distance, ~100-300 us: the search must prove each of them
farther.

**Sign** (closed meshes): the side of a query point ``y`` with closest mesh point ``c`` is the
sign of ``(y - c) . pseudo-normal`` of the feature holding ``c`` (Baerentzen & Aanaes 2005,
:func:`~ambf_collision.geometry.triangles.feature_normal`), at every distance; within
``COINCIDENT`` of the surface the normal is minus the unit pseudo-normal (``y - c`` is too
short to give a direction).

**Sphere and capsule** (:func:`capsule_mesh`), coal's convention: ``d`` = signed distance of the
core minus the radius; witnesses ``p1`` on the capsule, ``p2`` on the mesh; unit normal ``n``
from the capsule to the mesh (``p2 - p1 = d n``), also when penetrating: there it points from
the mesh's surface into the mesh (the way the mesh moves to separate). The core's signed
distance is the minimum over the segment of the signed distance ``phi`` of its points:

- a segment that does not touch the surface is wholly outside (``phi`` = the distance) or
  wholly inside;
- otherwise (inside, touching or crossing), the minimum of ``phi`` (minus the deepest depth)
  is found by branch and bound on the segment parameter (:func:`_deepest`). Its lower bound on a
  piece ``[s0, s1]`` is the larger of (a) the Lipschitz bound ``(phi0 + phi1 - L (s1 - s0)) / 2``
  (``phi`` is 1-Lipschitz, ``L`` the segment length) and (b) ``-min_T max(dist(x0, T),
  dist(x1, T))`` over the closest triangles ``T`` of the two ends: the depth of any point is at
  most its distance to any triangle, a convex function along the piece, which peaks at an end.
  (b) proves a piece at a constant depth (parallel to a face) flat at once. Pieces whose bound
  is within ``CORE_DEPTH_TOLERANCE`` of the best value are dropped: the returned value is one
  that ``phi`` takes on the segment, and the true minimum is at most ``CORE_DEPTH_TOLERANCE``
  below it (after at most ``CORE_DEPTH_STEPS`` evaluations; the bound gap is then larger). A
  segment that crosses the surface has minimum <= 0 (the crossing point is a candidate).

Open meshes have no inside: distances are unsigned (``n`` from the core to the mesh; at a
touching core, minus the face normal).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry import tolerances as _tol
from ambf_collision.geometry.bvh import MAX_DEPTH
from ambf_collision.geometry.triangles import (FACE, beyond_plane, feature_normal,
                                               point_triangle, segment_triangle)

__all__ = ["closest_to_segment", "node_bound", "point_phi", "capsule_mesh", "capsule_bound",
           "capsules_mesh_batch"]

_COINCIDENT = _tol.COINCIDENT
_SLACK = _tol.MESH_PRUNE_SLACK
_DEPTH_TOL = _tol.CORE_DEPTH_TOLERANCE
_DEPTH_STEPS = _tol.CORE_DEPTH_STEPS


@njit(cache=True, error_model="numpy", inline="always")
def _tri(V, F, t):
    i, j, k = F[t, 0], F[t, 1], F[t, 2]
    return ((V[i, 0], V[i, 1], V[i, 2]), (V[j, 0], V[j, 1], V[j, 2]), (V[k, 0], V[k, 1], V[k, 2]))


@njit(cache=True, error_model="numpy", inline="always")
def _slope(boxes, i, p, d, t):
    """Half the derivative along the segment ``p + t d`` of its squared distance to box ``i``:
    ``sum_k d_k (x_k - clamp(x_k))``, piecewise linear and non-decreasing in ``t``."""
    h = 0.0
    for k in range(3):
        x = p[k] + t * d[k]
        h += d[k] * (x - min(max(x, boxes[i, k]), boxes[i, 3 + k]))
    return h


@njit(cache=True, error_model="numpy", inline="always")
def node_bound(boxes, i, p, d):
    """Squared distance (m^2) from segment ``p + t d`` (t in [0, 1]) to node ``i``'s box: the
    convex squared distance is minimised where its slope (:func:`_slope`, linear between the
    parameters at which a coordinate meets a box face) changes sign."""
    tl, tr = 0.0, 1.0
    hl, hr = _slope(boxes, i, p, d, 0.0), _slope(boxes, i, p, d, 1.0)
    t = 0.0
    if hl < 0.0 < hr:
        for k in range(3):
            if d[k] != 0.0:
                for j in range(2):
                    u = (boxes[i, 3 * j + k] - p[k]) / d[k]
                    if tl < u < tr:
                        h = _slope(boxes, i, p, d, u)
                        if h <= 0.0:
                            tl, hl = u, h
                        else:
                            tr, hr = u, h
        t = tl + (tr - tl) * (-hl / (hr - hl))
    elif hr <= 0.0:
        t = 1.0
    g2 = 0.0
    for k in range(3):
        x = p[k] + t * d[k]
        e = x - min(max(x, boxes[i, k]), boxes[i, 3 + k])
        g2 += e * e
    return g2


@njit(cache=True, error_model="numpy")
def closest_to_segment(V, F, boxes, nodes, p, q, hint):
    """``(d2, t, s, x, feature)``: squared distance (m^2) from segment ``p``-``q`` to the mesh,
    the closest triangle ``t`` (lowest index on ties), the parameter ``s`` of the closest point
    of the segment, the closest mesh point ``x`` and its feature code (module docstring)."""
    point = p[0] == q[0] and p[1] == q[1] and p[2] == q[2]
    d = (q[0] - p[0], q[1] - p[1], q[2] - p[2])
    scale = 0.0
    for k in range(3):
        scale = max(scale, abs(boxes[0, k]), abs(boxes[0, 3 + k]), abs(p[k]), abs(q[k]))
    slack = _SLACK * scale
    best, bt, bs, bx, bf = np.inf, -1, 0.0, (0.0, 0.0, 0.0), FACE
    if 0 <= hint < F.shape[0]:
        a, b, c = _tri(V, F, hint)
        best, bs, bx, bf = segment_triangle(p, q, a, b, c)
        bt = hint
    limit = (math.sqrt(best) + slack) ** 2
    stack = np.empty(2 * MAX_DEPTH + 2, dtype=np.int64)
    bound = np.empty(2 * MAX_DEPTH + 2)
    stack[0] = 0
    bound[0] = 0.0
    top = 1
    while top > 0:
        top -= 1
        i = stack[top]
        if bound[top] > limit:
            continue
        first, count = nodes[i, 0], nodes[i, 1]
        if count > 0:
            for t in range(first, first + count):
                a, b, c = _tri(V, F, t)
                if beyond_plane(p, q, a, b, c, limit):
                    continue
                if point:
                    d2, x, f = point_triangle(p, a, b, c)
                    s = 0.0
                else:
                    d2, s, x, f = segment_triangle(p, q, a, b, c)
                if d2 < best or (d2 == best and t < bt):
                    best, bt, bs, bx, bf = d2, t, s, x, f
                    limit = (math.sqrt(best) + slack) ** 2
            continue
        l0 = node_bound(boxes, first, p, d)
        l1 = node_bound(boxes, first + 1, p, d)
        near, far, ln, lf = first, first + 1, l0, l1
        if l1 < l0:
            near, far, ln, lf = first + 1, first, l1, l0
        if lf <= limit:
            stack[top] = far
            bound[top] = lf
            top += 1
        if ln <= limit:
            stack[top] = near
            bound[top] = ln
            top += 1
    return best, bt, bs, bx, bf


@njit(cache=True, error_model="numpy")
def point_phi(V, F, NB, VN, boxes, nodes, closed, y, hint):
    """``(phi, t, x, n)``: signed distance (m; negative inside a closed mesh, unsigned for an
    open one) of point ``y``, its closest triangle, closest mesh point and the unit normal from
    ``y`` towards the mesh as :func:`capsule_mesh` defines it (for radius 0)."""
    d2, t, _, x, f = closest_to_segment(V, F, boxes, nodes, y, y, hint)
    phi, n = _signed(V, F, NB, VN, closed, t, f, y, x, math.sqrt(d2))
    return phi, t, x, n


@njit(cache=True, error_model="numpy")
def _signed(V, F, NB, VN, closed, t, f, y, x, d):
    """``(phi, n)`` of a query point ``y`` at distance ``d`` from its closest mesh point ``x``
    (feature ``f`` of face ``t``): ``phi = -d`` when ``(y - x) . pseudo-normal < 0`` on a closed
    mesh, else ``d``; ``n`` the unit normal towards the mesh (``(x - y) / d`` outside, ``(y - x)
    / d`` inside; minus the unit pseudo-normal when ``d < COINCIDENT``, where ``x - y`` is too
    short to give a direction)."""
    w0, w1, w2 = x[0] - y[0], x[1] - y[1], x[2] - y[2]
    g0, g1, g2 = feature_normal(V, F, NB, VN, t, f)
    inside = closed and w0 * g0 + w1 * g1 + w2 * g2 > 0.0
    phi = -d if inside else d
    if d < _COINCIDENT:
        lg = math.sqrt(g0 * g0 + g1 * g1 + g2 * g2)
        return phi, (-g0 / lg, -g1 / lg, -g2 / lg)
    k = -1.0 / d if inside else 1.0 / d
    return phi, (k * w0, k * w1, k * w2)


@njit(cache=True, error_model="numpy", inline="always")
def _at(a, b, s):
    return (a[0] + s * (b[0] - a[0]), a[1] + s * (b[1] - a[1]), a[2] + s * (b[2] - a[2]))


@njit(cache=True, error_model="numpy", inline="always")
def _dist_to(V, F, t, y):
    a, b, c = _tri(V, F, t)
    return math.sqrt(point_triangle(y, a, b, c)[0])


@njit(cache=True, error_model="numpy")
def _deepest(V, F, NB, VN, boxes, nodes, a, b, hint, phi_c, s_c, x_c, n_c):
    """Minimum of ``phi`` over segment ``a``-``b`` (module docstring), starting from the
    candidate ``(phi_c, s_c, x_c, n_c)``: ``(phi, s, x, n, t)``."""
    L = math.sqrt((b[0] - a[0]) ** 2 + (b[1] - a[1]) ** 2 + (b[2] - a[2]) ** 2)
    f0, t0, x0, n0 = point_phi(V, F, NB, VN, boxes, nodes, 1, a, hint)
    f1, t1, x1, n1 = point_phi(V, F, NB, VN, boxes, nodes, 1, b, t0)
    best, bs, bx, bn, bt = phi_c, s_c, x_c, n_c, hint
    if f0 < best:
        best, bs, bx, bn, bt = f0, 0.0, x0, n0, t0
    if f1 < best:
        best, bs, bx, bn, bt = f1, 1.0, x1, n1, t1
    cap = 2 * MAX_DEPTH + 2
    S = np.empty((cap, 4))              # s0, phi0, s1, phi1
    T = np.empty((cap, 2), dtype=np.int64)
    S[0, 0], S[0, 1], S[0, 2], S[0, 3] = 0.0, f0, 1.0, f1
    T[0, 0], T[0, 1] = t0, t1
    top, steps = 1, 0
    while top > 0 and steps < _DEPTH_STEPS:
        top -= 1
        s0, g0, s1, g1, u0, u1 = S[top, 0], S[top, 1], S[top, 2], S[top, 3], T[top, 0], T[top, 1]
        y0, y1 = _at(a, b, s0), _at(a, b, s1)
        lb = 0.5 * (g0 + g1 - L * (s1 - s0))
        cover = min(max(_dist_to(V, F, u0, y0), _dist_to(V, F, u0, y1)),
                    max(_dist_to(V, F, u1, y0), _dist_to(V, F, u1, y1)))
        lb = max(lb, -cover)
        if lb >= best - _DEPTH_TOL or top + 2 > cap:
            continue
        sm = 0.5 * (s0 + s1)
        fm, tm, xm, nm = point_phi(V, F, NB, VN, boxes, nodes, 1, _at(a, b, sm), u0)
        steps += 1
        if fm < best:
            best, bs, bx, bn, bt = fm, sm, xm, nm, tm
        first_left = min(g0, fm) >= min(fm, g1)     # the piece with the lower end goes last
        for side in range(2):
            left = (side == 0) == first_left
            if left:
                S[top, 0], S[top, 1], S[top, 2], S[top, 3] = s0, g0, sm, fm
                T[top, 0], T[top, 1] = u0, tm
            else:
                S[top, 0], S[top, 1], S[top, 2], S[top, 3] = sm, fm, s1, g1
                T[top, 0], T[top, 1] = tm, u1
            top += 1
    return best, bs, bx, bn, bt


@njit(cache=True, error_model="numpy")
def capsule_mesh(V, F, NB, VN, boxes, nodes, closed, a, b, r, hint):
    """Signed distance (m) from the capsule of segment ``a``-``b`` (3-tuples; a sphere when
    equal) and radius ``r`` to the mesh (module docstring): ``(d, p1, p2, n, t)`` with ``t`` the
    closest triangle (a good ``hint`` for the next call)."""
    d2, t, s, x, f = closest_to_segment(V, F, boxes, nodes, a, b, hint)
    y = _at(a, b, s)
    phi, n = _signed(V, F, NB, VN, closed, t, f, y, x, math.sqrt(d2))
    point = a[0] == b[0] and a[1] == b[1] and a[2] == b[2]
    if closed and phi <= 0.0 and not point:
        phi, s, x, n, t = _deepest(V, F, NB, VN, boxes, nodes, a, b, t, phi, s, x, n)
        y = _at(a, b, s)
    return (phi - r, (y[0] + r * n[0], y[1] + r * n[1], y[2] + r * n[2]), x, n, t)


@njit(cache=True, error_model="numpy")
def capsule_bound(boxes, a, b, r):
    """A bound (m) for ``near_only``: the distance from segment ``a``-``b`` to the hierarchy's
    root box (which holds the mesh) minus ``r``. When the segment misses the box, the core is
    outside the mesh and :func:`capsule_mesh`'s distance is at least this; when it reaches the
    box the bound is ``-r`` and says nothing (a core inside the mesh is below ``-r``): compute
    the pair."""
    d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    return math.sqrt(node_bound(boxes, 0, a, d)) - r


@njit(cache=True, error_model="numpy")
def capsules_mesh_batch(V, F, NB, VN, boxes, nodes, closed, A, B, R, hints, out):
    """:func:`capsule_mesh` for capsules ``A[i]``-``B[i]`` (K, 3), radii ``R`` (K,), hints
    (K,) int64 (updated in place to each closest triangle); ``out`` (K, 10): ``d, p1, p2, n``."""
    for i in range(A.shape[0]):
        d, p1, p2, n, t = capsule_mesh(V, F, NB, VN, boxes, nodes, closed,
                                       (A[i, 0], A[i, 1], A[i, 2]), (B[i, 0], B[i, 1], B[i, 2]),
                                       R[i], hints[i])
        hints[i] = t
        out[i, 0] = d
        for k in range(3):
            out[i, 1 + k] = p1[k]
            out[i, 4 + k] = p2[k]
            out[i, 7 + k] = n[k]
