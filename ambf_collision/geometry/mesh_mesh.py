"""Signed distance between two triangle meshes, compiled.

:func:`mesh_mesh` takes two meshes as :mod:`~ambf_collision.geometry.mesh_distance` takes one
(``V, F, NB, VN, boxes, nodes, closed``, each in its own frame, m) and the pose of mesh 2 in mesh
1's frame: a point ``x`` of mesh 2 is ``R x + t`` in frame 1 (``R`` a 3-tuple of row 3-tuples,
``t`` a 3-tuple). Results are in frame 1: ``(d, p1, p2, n, t1, t2)``, ``d`` the signed distance
(m), ``p1`` on mesh 1, ``p2`` on mesh 2, ``n`` the unit normal from mesh 1 to mesh 2 with ``p2 -
p1 = d n``, ``t1``, ``t2`` the triangles of the result (the next call's ``hint1``, ``hint2``).

**Apart** (no two triangles touch): the exact distance, the minimum of
:func:`~ambf_collision.geometry.triangles.triangle_triangle` over triangle pairs, by depth-first
branch and bound over both hierarchies at once (explicit stack; the larger node of a pair is
split, an inner node always before a leaf; the child pair of the smaller bound first). A node
pair's lower bound is the largest of three: node 1's box against node 2's box turned into frame 1
as its enclosing box (centre ``R c + t``, half extents ``|R| h``), the same the other way round,
and the gap along the direction ``e`` (frame 1) of the best pair so far (``x2 - x1`` normalised,
renewed when the best improves; the hint pair's, or the root boxes' centres' before any): the
least ``e.y`` over node 2's box (``e.(R c + t) - |R^T e|.h``; over its vertices when a leaf)
less the largest ``e.x`` over node 1's (the same), which no two points of the nodes can beat
(computed in that order, the first above the best found ends it). Far apart (relative to the sizes) the distance
is nearly flat over the facing surfaces (``D + x^2 / 2D`` at ``x`` from the closest point) and
box gaps prune little; the gap along ``e`` grows with the surfaces' own curvature away from it.
A triangle pair's bound: its two boxes' gap, each triangle's gap to the other's plane, and its
gap along ``e``. The hint pair is measured first; ties go to the lowest ``(t1, t2)``; pruning
keeps ``MESH_PRUNE_SLACK``: the result does not depend on the hints, nor on ``e``. ``n`` is ``(p2 - p1) / d``, or triangle ``t1``'s unit normal when ``d < COINCIDENT``.

**Touching, crossing or nested**: touching or crossing when some triangle pair is at distance
0; nested when none is and one mesh is inside the other, closed: its witness point lies behind
the pseudo-normal at its closest point on the other (within ``MESH_SIDE_BY_WITNESS`` of it, a
vertex's point query decides). Then ``d`` is minus a
*lower bound of the penetration depth* (the shortest translation of mesh 2 after which the two
insides do not overlap; an open mesh's surface stands for its inside), the largest of the depths
``-phi_k(y)`` of points ``y`` of one mesh below the surface of the other, closed, mesh ``k``
(every such point must be carried out of the other's inside):

- every vertex of each mesh in the other's root box (a vertex whose depth cannot exceed the best
  found, by its distance to the last closest triangle, is skipped);
- the deepest point of every edge of an intersecting triangle pair (``capsule_mesh`` with radius
  0: its branch and bound along the edge), skipped the same way: this makes crossing surfaces
  strictly negative even when no vertex is inside (two bars crossing like a plus sign);
- the centre of each mesh's root box when it is inside both meshes (its depth in either counts:
  it is a point of both insides); this catches coincident surfaces (identical meshes at one pose),
  whose vertices and edges all lie on the other surface.

and 0 (touching: the lowest intersecting pair, its intersection point, ``n`` triangle ``t1``'s
unit normal). So ``d`` is never positive and never deeper than the true depth. Two open meshes
that intersect give 0.

Cost: apart, like a capsule query per leaf pair reached; overlapping, one point query per vertex
in the other's root box (most skipped once a deep one is found) and one segment query per
crossing edge that can beat the best: milliseconds for meshes of 10,000 triangles. Measured
2026-12-07 (thread CPU, 2 cores shared, load 3-4; each line one run, so against coal in it), a
72-triangle torus (R 0.01, r 0.003 m) at random poses 0.01-0.9 m from a 20,000-triangle bumpy
torus (R 0.04, r 0.012 m), no hints, p50 per call at gaps 0.01 / 0.05 / 0.2 / 0.9 m:

- box gaps alone: 0.89 / 1.98 / 4.0 / 3.6 ms (coal's BVHModel 0.24 / 0.29 / 0.33 / 0.31 ms);
- with the bound along ``e``: 0.48 / 0.54 / 0.51 / 0.45 ms (coal 0.30 / 0.31 / 0.33 / 0.32 ms),
  leaf pairs reached at 0.9 m: 28 (1,100 with leaves' boxes along ``e``, not their vertices),
  the same distances bit for bit (2,165 results on the test meshes, near, far and crossing).

bench/bench_mesh_pairs.py's mesh-mesh case (10,000 against 9,984 triangles, near): 1.7x / 3.1x
coal's time (p50 / p99) before, 1.3-1.7x / 1.4-1.6x after. AMBF's PSM against a ground and the
20,000-triangle phantom, every pair exact (bench_mesh_model.py, 400 states): p50 / p99 63 / 83
ms before (coal's loop 11 / 16 ms: 0.2x), 8.7 / 10.8 ms after (coal 12.0 / 16.1 ms: 1.4x / 1.5x faster).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry import tolerances as _tol
from ambf_collision.geometry.bvh import MAX_DEPTH
from ambf_collision.geometry.mesh_distance import capsule_mesh, point_phi
from ambf_collision.geometry.mesh_solid import inside_when_apart
from ambf_collision.geometry.triangles import point_triangle, triangle_triangle, unit_face_normal

__all__ = ["mesh_mesh"]

_SLACK = _tol.MESH_PRUNE_SLACK
_COINCIDENT = _tol.COINCIDENT
_CAP = 2 * MAX_DEPTH + 4


@njit(cache=True, error_model="numpy", inline="always")
def _to1(R, t, x0, x1, x2):
    """``R x + t``: a point of frame 2 in frame 1."""
    return (R[0][0] * x0 + R[0][1] * x1 + R[0][2] * x2 + t[0],
            R[1][0] * x0 + R[1][1] * x1 + R[1][2] * x2 + t[1],
            R[2][0] * x0 + R[2][1] * x1 + R[2][2] * x2 + t[2])


@njit(cache=True, error_model="numpy", inline="always")
def _to2(R, t, y):
    """``R^T (y - t)``: a point of frame 1 in frame 2."""
    x0, x1, x2 = y[0] - t[0], y[1] - t[1], y[2] - t[2]
    return (R[0][0] * x0 + R[1][0] * x1 + R[2][0] * x2,
            R[0][1] * x0 + R[1][1] * x1 + R[2][1] * x2,
            R[0][2] * x0 + R[1][2] * x1 + R[2][2] * x2)


@njit(cache=True, error_model="numpy", inline="always")
def _turn(R, v):
    """``R v`` (a vector of frame 2 in frame 1)."""
    return (R[0][0] * v[0] + R[0][1] * v[1] + R[0][2] * v[2],
            R[1][0] * v[0] + R[1][1] * v[1] + R[1][2] * v[2],
            R[2][0] * v[0] + R[2][1] * v[1] + R[2][2] * v[2])


@njit(cache=True, error_model="numpy", inline="always")
def _vertex(V, i):
    return (V[i, 0], V[i, 1], V[i, 2])


@njit(cache=True, error_model="numpy", inline="always")
def _tri(V, F, j):
    return _vertex(V, F[j, 0]), _vertex(V, F[j, 1]), _vertex(V, F[j, 2])


@njit(cache=True, error_model="numpy", inline="always")
def _tri_in1(V2, F2, j, R, t):
    """Triangle ``j`` of mesh 2 in frame 1."""
    a = _to1(R, t, V2[F2[j, 0], 0], V2[F2[j, 0], 1], V2[F2[j, 0], 2])
    b = _to1(R, t, V2[F2[j, 1], 0], V2[F2[j, 1], 1], V2[F2[j, 1], 2])
    c = _to1(R, t, V2[F2[j, 2], 0], V2[F2[j, 2], 1], V2[F2[j, 2], 2])
    return a, b, c


@njit(cache=True, error_model="numpy", inline="always")
def _gap(lo0, lo1, lo2, hi0, hi1, hi2, c0, c1, c2, h0, h1, h2):
    """Distance (m) between the box lo-hi and the box of centre c and half extents h."""
    g2 = 0.0
    for lo, hi, c, h in ((lo0, hi0, c0, h0), (lo1, hi1, c1, h1), (lo2, hi2, c2, h2)):
        e = max(lo - (c + h), (c - h) - hi, 0.0)
        g2 += e * e
    return math.sqrt(g2)


@njit(cache=True, error_model="numpy", inline="always")
def _turned_box(M, B, j, s, u):
    """Centre and half extents of the box enclosing box ``j`` of ``B`` mapped by ``x -> M x +
    s u`` (M 3x3 rows if ``s`` is 1, its transpose's if ``s`` is -1 with u applied first)."""
    c0, c1, c2 = 0.5 * (B[j, 0] + B[j, 3]), 0.5 * (B[j, 1] + B[j, 4]), 0.5 * (B[j, 2] + B[j, 5])
    h0, h1, h2 = 0.5 * (B[j, 3] - B[j, 0]), 0.5 * (B[j, 4] - B[j, 1]), 0.5 * (B[j, 5] - B[j, 2])
    if s > 0.0:
        c = _to1(M, u, c0, c1, c2)
        h = (abs(M[0][0]) * h0 + abs(M[0][1]) * h1 + abs(M[0][2]) * h2,
             abs(M[1][0]) * h0 + abs(M[1][1]) * h1 + abs(M[1][2]) * h2,
             abs(M[2][0]) * h0 + abs(M[2][1]) * h1 + abs(M[2][2]) * h2)
    else:
        c = _to2(M, u, (c0, c1, c2))
        h = (abs(M[0][0]) * h0 + abs(M[1][0]) * h1 + abs(M[2][0]) * h2,
             abs(M[0][1]) * h0 + abs(M[1][1]) * h1 + abs(M[2][1]) * h2,
             abs(M[0][2]) * h0 + abs(M[1][2]) * h1 + abs(M[2][2]) * h2)
    return c, h


@njit(cache=True, error_model="numpy", inline="always")
def _leaf_support(V, F, nodes, i, w, sign):
    """The largest ``sign w.x`` (m) over the vertices ``x`` of leaf ``i`` (its frame)."""
    s = -np.inf
    for f in range(nodes[i, 0], nodes[i, 0] + nodes[i, 1]):
        for k in range(3):
            s = max(s, sign * (w[0] * V[F[f, k], 0] + w[1] * V[F[f, k], 1] + w[2] * V[F[f, k], 2]))
    return s


@njit(cache=True, error_model="numpy")
def _pair_gap(V1, F1, boxes1, nodes1, i, V2, F2, boxes2, nodes2, j, R, t, u, w, limit):
    """Lower bound (m) of the distance between node ``i`` of mesh 1 and node ``j`` of mesh 2: the
    largest of the gap along the unit direction ``u`` (frame 1; ``w = R^T u``, the same
    direction in frame 2: the least ``u.y`` over node 2's box (a leaf's vertices) less the
    largest ``u.x`` over node 1's box (a leaf's vertices)) and the two box gaps, or the first of
    them above ``limit``."""
    c, h = _turned_box(R, boxes2, j, 1.0, t)
    if nodes2[j, 1] > 0:
        low2 = -_leaf_support(V2, F2, nodes2, j, w, -1.0) + (u[0] * t[0] + u[1] * t[1] + u[2] * t[2])
    else:
        low2 = u[0] * c[0] + u[1] * c[1] + u[2] * c[2]
        for k in range(3):
            low2 -= 0.5 * abs(w[k]) * (boxes2[j, 3 + k] - boxes2[j, k])
    if nodes1[i, 1] > 0:
        high1 = _leaf_support(V1, F1, nodes1, i, u, 1.0)
    else:
        high1 = 0.0
        for k in range(3):
            high1 += 0.5 * (u[k] * (boxes1[i, k] + boxes1[i, 3 + k]) + abs(u[k]) * (boxes1[i, 3 + k] - boxes1[i, k]))
    ga = low2 - high1
    if ga > limit:
        return ga
    g = _gap(boxes1[i, 0], boxes1[i, 1], boxes1[i, 2], boxes1[i, 3], boxes1[i, 4], boxes1[i, 5],
             c[0], c[1], c[2], h[0], h[1], h[2])
    if g > limit:
        return g
    c, h = _turned_box(R, boxes1, i, -1.0, t)
    return max(g, ga, _gap(boxes2[j, 0], boxes2[j, 1], boxes2[j, 2], boxes2[j, 3], boxes2[j, 4],
                                     boxes2[j, 5], c[0], c[1], c[2], h[0], h[1], h[2]))


@njit(cache=True, error_model="numpy", inline="always")
def _axis_gap(u, a, b, c, p, q, r):
    """How far triangle ``pqr`` lies beyond triangle ``abc`` along the unit direction ``u`` (m;
    one frame): a lower bound of their distance."""
    high = max(u[0] * a[0] + u[1] * a[1] + u[2] * a[2], u[0] * b[0] + u[1] * b[1] + u[2] * b[2],
               u[0] * c[0] + u[1] * c[1] + u[2] * c[2])
    return min(u[0] * p[0] + u[1] * p[1] + u[2] * p[2], u[0] * q[0] + u[1] * q[1] + u[2] * q[2],
               u[0] * r[0] + u[1] * r[1] + u[2] * r[2]) - high


@njit(cache=True, error_model="numpy", inline="always")
def _direction(R, x1, x2, u):
    """The unit direction from ``x1`` to ``x2`` (frame 1) and the same in frame 2, or ``u``
    (and its turn) when they coincide."""
    v = (x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2])
    n = math.sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2])
    if n > 0.0:
        u = (v[0] / n, v[1] / n, v[2] / n)
    return u, _to2(R, (0.0, 0.0, 0.0), u)


@njit(cache=True, error_model="numpy", inline="always")
def _plane_gap(a, b, c, p, q, r):
    """How far triangle ``pqr`` lies beyond the plane of ``abc`` on one side (m; <= 0 when it
    meets the plane)."""
    n0 = (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1])
    n1 = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
    n2 = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    o = n0 * a[0] + n1 * a[1] + n2 * a[2]
    low, high = np.inf, -np.inf
    for x in (p, q, r):
        v = n0 * x[0] + n1 * x[1] + n2 * x[2]
        low, high = min(low, v), max(high, v)
    return max(low - o, o - high) / ln


@njit(cache=True, error_model="numpy")
def _triangles_gap(a, b, c, p, q, r):
    """Lower bound (m) of the distance between triangles ``abc`` and ``pqr`` (one frame)."""
    g2 = 0.0
    for k in range(3):
        e = max(min(p[k], q[k], r[k]) - max(a[k], b[k], c[k]), min(a[k], b[k], c[k]) - max(p[k], q[k], r[k]), 0.0)
        g2 += e * e
    return max(math.sqrt(g2), _plane_gap(a, b, c, p, q, r), _plane_gap(p, q, r, a, b, c))


@njit(cache=True, error_model="numpy", inline="always")
def _split_first(boxes1, nodes1, i, boxes2, nodes2, j):
    """Whether to split node ``i`` of mesh 1 (else node ``j`` of mesh 2): a leaf is never
    split while the other is inner; otherwise the larger box (squared diagonal)."""
    if nodes1[i, 1] > 0:
        return False
    if nodes2[j, 1] > 0:
        return True
    s1, s2 = 0.0, 0.0
    for k in range(3):
        s1 += (boxes1[i, 3 + k] - boxes1[i, k]) ** 2
        s2 += (boxes2[j, 3 + k] - boxes2[j, k]) ** 2
    return s1 >= s2


@njit(cache=True, error_model="numpy", inline="always")
def _map(R, t, side, x):
    """A point of mesh ``a`` in mesh ``b``'s frame: side 0 (a = 2, b = 1) ``R x + t``; side 1
    (a = 1, b = 2) ``R^T (x - t)``."""
    return _to1(R, t, x[0], x[1], x[2]) if side == 0 else _to2(R, t, x)


@njit(cache=True, error_model="numpy")
def _offer(res, value, u, v, p1, p2, n):
    """Keep ``(value, t1, t2, p1, p2, n)`` in ``res`` (12,) if ``(value, u, v)`` is below its
    ``(value, t1, t2)`` (lexicographic)."""
    if value < res[0] or (value == res[0] and (u < res[1] or (u == res[1] and v < res[2]))):
        res[0], res[1], res[2] = value, u, v
        for k in range(3):
            res[3 + k], res[6 + k], res[9 + k] = p1[k], p2[k], n[k]


@njit(cache=True, error_model="numpy")
def _probe(Vb, Fb, NBb, VNb, boxesb, nodesb, R, t, side, a, b, own, hint, res):
    """Offer the deepest point of segment ``a``-``b`` (a point when equal) of mesh ``a``
    (its own frame; side as :func:`_map`) below the surface of the closed mesh ``b``, unless its
    cover (its larger end distance to triangle ``hint`` of mesh b, an upper bound of its depth)
    shows it cannot beat ``res``; ``own`` is the triangle of mesh a it belongs to. Returns the
    closest triangle of mesh b (or ``hint`` when skipped)."""
    ya, yb = _map(R, t, side, a), _map(R, t, side, b)
    if hint >= 0:
        p, q, r = _tri(Vb, Fb, hint)
        cover = max(point_triangle(ya, p, q, r)[0], point_triangle(yb, p, q, r)[0])
        if -math.sqrt(cover) > res[0]:
            return hint
    d, q1, q2, nc, tc = capsule_mesh(Vb, Fb, NBb, VNb, boxesb, nodesb, 1, ya, yb, 0.0, hint)
    if side == 0:         # q1 on mesh 2, q2 on mesh 1, nc from mesh 2 to mesh 1: frame 1 already
        _offer(res, d, tc, own, q2, q1, (-nc[0], -nc[1], -nc[2]))
    else:                 # q1 on mesh 1, q2 on mesh 2, nc from mesh 1 to mesh 2, in frame 2
        _offer(res, d, own, tc, _to1(R, t, q1[0], q1[1], q1[2]), _to1(R, t, q2[0], q2[1], q2[2]), _turn(R, nc))
    return tc


@njit(cache=True, error_model="numpy")
def _vertex_probes(Va, Fa, boxesa, nodesa, Vb, Fb, NBb, VNb, boxesb, nodesb, R, t, side, stack, slack, res):
    """Probe every vertex of mesh ``a`` whose point lies in mesh ``b``'s root box (frame b),
    visiting mesh a's hierarchy with the nodes' boxes turned into frame b (module docstring)."""
    last = -1
    stack[0, 0] = 0.0
    top = 1
    while top > 0:
        top -= 1
        i = np.int64(stack[top, 0])
        first, count = nodesa[i, 0], nodesa[i, 1]
        if count == 0:
            for j in range(first, first + 2):
                c, h = _turned_box(R, boxesa, j, 1.0 if side == 0 else -1.0, t)
                if _gap(boxesb[0, 0], boxesb[0, 1], boxesb[0, 2], boxesb[0, 3], boxesb[0, 4], boxesb[0, 5],
                        c[0], c[1], c[2], h[0], h[1], h[2]) <= slack:
                    stack[top, 0] = j
                    top += 1
            continue
        for f in range(first, first + count):
            for k in range(3):
                x = _vertex(Va, Fa[f, k])
                y = _map(R, t, side, x)
                inside = True
                for m in range(3):
                    inside = inside and boxesb[0, m] - slack <= y[m] <= boxesb[0, 3 + m] + slack
                if inside:
                    last = _probe(Vb, Fb, NBb, VNb, boxesb, nodesb, R, t, side, x, x, f, last, res)


@njit(cache=True, error_model="numpy")
def _centre_probe(Va, Fa, NBa, VNa, boxesa, nodesa, Vb, Fb, NBb, VNb, boxesb, nodesb, R, t, side, res):
    """Probe the centre of mesh ``a``'s root box in mesh ``b`` when it is inside mesh ``a``."""
    c = (0.5 * (boxesa[0, 0] + boxesa[0, 3]), 0.5 * (boxesa[0, 1] + boxesa[0, 4]), 0.5 * (boxesa[0, 2] + boxesa[0, 5]))
    phi, own, _, _ = point_phi(Va, Fa, NBa, VNa, boxesa, nodesa, 1, c, -1)
    if phi < 0.0:
        _probe(Vb, Fb, NBb, VNb, boxesb, nodesb, R, t, side, c, c, own, np.int64(-1), res)


@njit(cache=True, error_model="numpy")
def _traverse(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2, closed2, R, t,
              hint1, hint2, stack, slack, deep, res):
    """Branch and bound over both hierarchies (module docstring): ``(d2, t1, t2, x1, x2)``, the
    smallest squared distance and its pair (frame 1), returned at the first pair at distance 0.
    With ``deep`` it visits every pair at distance 0 instead, offers each to ``res`` (value 0)
    and probes its edges (the closed meshes'), and returns nothing useful."""
    best, b1, b2 = np.inf, -1, -1
    x1, x2 = (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    centre2, _ = _turned_box(R, boxes2, 0, 1.0, t)         # e: the direction of the bounds
    e, e2 = _direction(R, (0.5 * (boxes1[0, 0] + boxes1[0, 3]), 0.5 * (boxes1[0, 1] + boxes1[0, 4]),
                           0.5 * (boxes1[0, 2] + boxes1[0, 5])), centre2, (1.0, 0.0, 0.0))
    if not deep and 0 <= hint1 < F1.shape[0] and 0 <= hint2 < F2.shape[0]:
        a, b, c = _tri(V1, F1, hint1)
        p, q, r = _tri_in1(V2, F2, hint2, R, t)
        best, x1, x2 = triangle_triangle(a, b, c, p, q, r)
        b1, b2 = hint1, hint2
        if best == 0.0:
            return best, b1, b2, x1, x2
        e, e2 = _direction(R, x1, x2, e)
    stack[0, 0], stack[0, 1], stack[0, 2] = 0.0, 0.0, 0.0
    top = 1
    while top > 0:
        top -= 1
        limit = slack if deep else math.sqrt(best) + slack
        if stack[top, 2] > limit:
            continue
        i, j = np.int64(stack[top, 0]), np.int64(stack[top, 1])
        if nodes1[i, 1] > 0 and nodes2[j, 1] > 0:
            for v in range(nodes2[j, 0], nodes2[j, 0] + nodes2[j, 1]):
                p, q, r = _tri_in1(V2, F2, v, R, t)
                for u in range(nodes1[i, 0], nodes1[i, 0] + nodes1[i, 1]):
                    if u == b1 and v == b2:
                        continue
                    limit = slack if deep else math.sqrt(best) + slack
                    a, b, c = _tri(V1, F1, u)
                    if _axis_gap(e, a, b, c, p, q, r) > limit or _triangles_gap(a, b, c, p, q, r) > limit:
                        continue
                    d2, y1, y2 = triangle_triangle(a, b, c, p, q, r)
                    if deep:
                        if d2 == 0.0:
                            _crossing(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2,
                                      closed2, R, t, u, v, y1, y2, res)
                    elif d2 < best or (d2 == best and (u < b1 or (u == b1 and v < b2))):
                        best, b1, b2, x1, x2 = d2, u, v, y1, y2
                        if best == 0.0:
                            return best, b1, b2, x1, x2
                        e, e2 = _direction(R, x1, x2, e)
            continue
        split1 = _split_first(boxes1, nodes1, i, boxes2, nodes2, j)
        first = nodes1[i, 0] if split1 else nodes2[j, 0]
        i0, j0 = (first, j) if split1 else (i, first)
        i1, j1 = (first + 1, j) if split1 else (i, first + 1)
        g0 = _pair_gap(V1, F1, boxes1, nodes1, i0, V2, F2, boxes2, nodes2, j0, R, t, e, e2, limit)
        g1 = _pair_gap(V1, F1, boxes1, nodes1, i1, V2, F2, boxes2, nodes2, j1, R, t, e, e2, limit)
        for k in range(2):                         # the nearer child is popped first
            far = (k == 0) == (g0 <= g1)
            ik, jk, gk = (i1, j1, g1) if far else (i0, j0, g0)
            if gk <= limit:
                stack[top, 0], stack[top, 1], stack[top, 2] = ik, jk, gk
                top += 1
    return best, b1, b2, x1, x2


@njit(cache=True, error_model="numpy")
def _crossing(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2, closed2, R, t,
              u, v, x1, x2, res):
    """An intersecting pair ``(u, v)`` (intersection points x1 = x2, frame 1): offered at value
    0 with triangle u's normal, then the edges of each probed in the other mesh (if closed)."""
    _offer(res, 0.0, u, v, x1, x2, unit_face_normal(V1, F1, u))
    for k in range(3):
        if closed1:
            _probe(V1, F1, NB1, VN1, boxes1, nodes1, R, t, 0, _vertex(V2, F2[v, k]),
                   _vertex(V2, F2[v, (k + 1) % 3]), v, np.int64(u), res)
        if closed2:
            _probe(V2, F2, NB2, VN2, boxes2, nodes2, R, t, 1, _vertex(V1, F1[u, k]),
                   _vertex(V1, F1[u, (k + 1) % 3]), u, np.int64(v), res)


@njit(cache=True, error_model="numpy")
def mesh_mesh(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2, closed2, R, t,
              hint1, hint2):
    """Signed distance (m) between mesh 1 and mesh 2 posed by ``(R, t)`` in frame 1 (module
    docstring): ``(d, p1, p2, n, t1, t2)``, frame 1."""
    work = np.empty((_CAP + 1, 12))          # the one allocation: the stack, the deep result
    stack, res = work[:_CAP], work[_CAP]
    scale = 0.0
    for k in range(3):
        c, h = _turned_box(R, boxes2, 0, 1.0, t)
        scale = max(scale, abs(boxes1[0, k]), abs(boxes1[0, 3 + k]), abs(c[k]) + h[k])
    slack = _SLACK * scale
    best, b1, b2, x1, x2 = _traverse(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2,
                                     closed2, R, t, hint1, hint2, stack, slack, False, res)
    contact = best == 0.0
    nested = False
    if not contact:
        d = math.sqrt(best)
        if closed1:   # mesh 2 inside mesh 1: its witness x2 behind mesh 1 (or a vertex of it)
            y = _to1(R, t, V2[F2[0, 0], 0], V2[F2[0, 0], 1], V2[F2[0, 0], 2])
            nested = inside_when_apart(V1, F1, NB1, VN1, boxes1, nodes1, closed1, b1, d, x2, y)
        if closed2 and not nested:   # mesh 1 inside mesh 2, in frame 2
            nested = inside_when_apart(V2, F2, NB2, VN2, boxes2, nodes2, closed2, b2, d, _to2(R, t, x1),
                             _to2(R, t, _vertex(V1, F1[0, 0])))
    if not (contact or nested):
        d = math.sqrt(best)
        if d < _COINCIDENT:
            n = unit_face_normal(V1, F1, b1)
        else:
            n = ((x2[0] - x1[0]) / d, (x2[1] - x1[1]) / d, (x2[2] - x1[2]) / d)
        return d, x1, x2, n, b1, b2
    res[0], res[1], res[2] = np.inf, np.inf, np.inf
    if contact:
        _traverse(V1, F1, NB1, VN1, boxes1, nodes1, closed1, V2, F2, NB2, VN2, boxes2, nodes2, closed2, R, t,
                  hint1, hint2, stack, slack, True, res)
    if closed1:
        _vertex_probes(V2, F2, boxes2, nodes2, V1, F1, NB1, VN1, boxes1, nodes1, R, t, 0, stack, slack, res)
    if closed2:
        _vertex_probes(V1, F1, boxes1, nodes1, V2, F2, NB2, VN2, boxes2, nodes2, R, t, 1, stack, slack, res)
    if closed1 and closed2:
        _centre_probe(V2, F2, NB2, VN2, boxes2, nodes2, V1, F1, NB1, VN1, boxes1, nodes1, R, t, 0, res)
        _centre_probe(V1, F1, NB1, VN1, boxes1, nodes1, V2, F2, NB2, VN2, boxes2, nodes2, R, t, 1, res)
    if not res[0] <= 0.0:  # not reached: a nested or crossing pair always offers a value <= 0
        return 0.0, x1, x2, unit_face_normal(V1, F1, max(b1, 0)), b1, b2
    return (res[0], (res[3], res[4], res[5]), (res[6], res[7], res[8]), (res[9], res[10], res[11]),
            np.int64(res[1]), np.int64(res[2]))
