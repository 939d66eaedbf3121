"""Closest points between a point or a segment and one triangle, compiled, with the feature of
the triangle that holds the closest point (for the sign, by pseudo-normals).

Points are 3-tuples (m, any one frame). A triangle is its corners ``a``, ``b``, ``c`` (corners 0,
1, 2). Feature codes: ``FACE`` (0) the interior; ``1 + k`` the edge from corner ``k`` to corner
``(k + 1) % 3`` (edge 0 = ab, 1 = bc, 2 = ca); ``4 + k`` the corner ``k``.

- :func:`point_triangle`: Ericson, *Real-Time Collision Detection*, 5.1.5 (Voronoi regions of
  the vertices, then edges, then the face, by the signs of dot products). The triangle must have
  a non-zero area (the mesh drops the others); the closest point is exact up to rounding.
- :func:`segment_triangle`: a segment that crosses the triangle's plane at a point whose
  projection falls in the face region is at distance 0 (the crossing point). A segment on one
  side of the plane whose end nearer the plane projects into the face has that end's distance
  (no point of the segment is nearer the plane; ties to ``p``). Otherwise the closest pair has an
  end of the segment or a point of an edge of the triangle, so the minimum over the two ends
  against the triangle and the segment against the three edges is exact (Ericson 5.1.9;
  segment-segment by :func:`~ambf_collision.geometry.segments.closest_parameters`).
- :func:`triangle_triangle` (mesh against mesh): the minimum of :func:`segment_triangle` over
  the three edges of each triangle against the other. Exact: two disjoint triangles have a
  closest pair with a point on an edge of one of them (interior points of both can slide to an
  edge at the same distance), and two intersecting triangles have an edge of one crossing the
  other (the intersection segment ends on edges), or overlap in a plane where an edge meets an
  edge or a corner lies in the other; each gives 0. This covers PQP's 6 vertex-triangle and 9
  edge-edge pairs and the intersection test.
- :func:`feature_normal`: the angle-weighted pseudo-normal of a feature (not unit length) from
  the mesh arrays (:class:`~ambf_collision.geometry.trimesh.TriangleMesh`).

Ties go to the first candidate in the order listed (end ``p``, end ``q``, edges 0, 1, 2), so the
result is a function of the inputs alone.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.segments import closest_parameters

__all__ = ["FACE", "point_triangle", "segment_triangle", "triangle_triangle", "beyond_plane", "feature_normal", "corner",
           "unit_face_normal"]

FACE = 0


@njit(cache=True, error_model="numpy")
def point_triangle(p, a, b, c):
    """``(d2, x, feature)``: squared distance (m^2) from ``p`` to triangle ``abc``, its closest
    point ``x`` (3-tuple) and the feature code holding ``x`` (module docstring)."""
    ab0, ab1, ab2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    ac0, ac1, ac2 = c[0] - a[0], c[1] - a[1], c[2] - a[2]
    d1, d2 = _dots(p, a, ab0, ab1, ab2, ac0, ac1, ac2)
    if d1 <= 0.0 and d2 <= 0.0:
        return _result(p, a[0], a[1], a[2], 4)
    d3, d4 = _dots(p, b, ab0, ab1, ab2, ac0, ac1, ac2)
    if d3 >= 0.0 and d4 <= d3:
        return _result(p, b[0], b[1], b[2], 5)
    vc = d1 * d4 - d3 * d2
    if vc <= 0.0 and d1 >= 0.0 and d3 <= 0.0:
        v = d1 / (d1 - d3)
        return _result(p, a[0] + v * ab0, a[1] + v * ab1, a[2] + v * ab2, 1)
    d5, d6 = _dots(p, c, ab0, ab1, ab2, ac0, ac1, ac2)
    if d6 >= 0.0 and d5 <= d6:
        return _result(p, c[0], c[1], c[2], 6)
    vb = d5 * d2 - d1 * d6
    if vb <= 0.0 and d2 >= 0.0 and d6 <= 0.0:
        w = d2 / (d2 - d6)
        return _result(p, a[0] + w * ac0, a[1] + w * ac1, a[2] + w * ac2, 3)
    va = d3 * d6 - d5 * d4
    if va <= 0.0 and d4 - d3 >= 0.0 and d5 - d6 >= 0.0:
        w = (d4 - d3) / ((d4 - d3) + (d5 - d6))
        return _result(p, b[0] + w * (c[0] - b[0]), b[1] + w * (c[1] - b[1]), b[2] + w * (c[2] - b[2]), 2)
    den = va + vb + vc
    v = vb / den
    w = vc / den
    return _result(p, a[0] + ab0 * v + ac0 * w, a[1] + ab1 * v + ac1 * w, a[2] + ab2 * v + ac2 * w, FACE)


@njit(cache=True, error_model="numpy", inline="always")
def _dots(p, v, ab0, ab1, ab2, ac0, ac1, ac2):
    """``(ab . (p - v), ac . (p - v))``."""
    w0, w1, w2 = p[0] - v[0], p[1] - v[1], p[2] - v[2]
    return ab0 * w0 + ab1 * w1 + ab2 * w2, ac0 * w0 + ac1 * w1 + ac2 * w2


@njit(cache=True, error_model="numpy", inline="always")
def _result(p, x0, x1, x2, feature):
    e0, e1, e2 = p[0] - x0, p[1] - x1, p[2] - x2
    return e0 * e0 + e1 * e1 + e2 * e2, (x0, x1, x2), feature


@njit(cache=True, error_model="numpy", inline="always")
def corner(a, b, c, k):
    """Corner ``k`` (0, 1, 2) of triangle ``abc``."""
    if k == 0:
        return a
    if k == 1:
        return b
    return c


@njit(cache=True, error_model="numpy")
def segment_triangle(p, q, a, b, c):
    """``(d2, s, x, feature)``: squared distance (m^2) from segment ``p``-``q`` to triangle
    ``abc``, the parameter ``s`` in [0, 1] of the closest point ``p + s (q - p)`` of the segment,
    the closest point ``x`` of the triangle and its feature code (module docstring)."""
    n0 = (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1])
    n1 = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
    n2 = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    hp = (p[0] - a[0]) * n0 + (p[1] - a[1]) * n1 + (p[2] - a[2]) * n2
    hq = (q[0] - a[0]) * n0 + (q[1] - a[1]) * n1 + (q[2] - a[2]) * n2
    if hp != hq and (hp <= 0.0 <= hq or hq <= 0.0 <= hp):
        t = hp / (hp - hq)
        y = (p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), p[2] + t * (q[2] - p[2]))
        _, xy, fy = point_triangle(y, a, b, c)
        if fy == FACE:
            return 0.0, t, xy, FACE
    elif hp == hq or (hp > 0.0) == (hq > 0.0):
        # one side: no point of the segment is nearer the plane than its nearer end, so that
        # end is the closest point when its projection falls in the face
        near = abs(hp) <= abs(hq)
        d2, x, feature = point_triangle(p if near else q, a, b, c)
        if feature == FACE:
            return d2, 0.0 if near else 1.0, x, FACE
    best, x, feature = point_triangle(p, a, b, c)
    s = 0.0
    d2q, xq, fq = point_triangle(q, a, b, c)
    if d2q < best:
        best, x, feature, s = d2q, xq, fq, 1.0
    for k in range(3):
        e = corner(a, b, c, k)
        f = corner(a, b, c, (k + 1) % 3)
        u, v = closest_parameters(p, q, e, f)
        y0, y1, y2 = p[0] + u * (q[0] - p[0]), p[1] + u * (q[1] - p[1]), p[2] + u * (q[2] - p[2])
        x0, x1, x2 = e[0] + v * (f[0] - e[0]), e[1] + v * (f[1] - e[1]), e[2] + v * (f[2] - e[2])
        d2 = (y0 - x0) ** 2 + (y1 - x1) ** 2 + (y2 - x2) ** 2
        if d2 < best:
            best, x, s = d2, (x0, x1, x2), u
            feature = 4 + k if v == 0.0 else (4 + (k + 1) % 3 if v == 1.0 else 1 + k)
    return best, s, x, feature


@njit(cache=True, error_model="numpy")
def triangle_triangle(a1, b1, c1, a2, b2, c2):
    """``(d2, x1, x2)``: squared distance (m^2) between triangles ``a1 b1 c1`` and ``a2 b2 c2``
    and a closest point on each (module docstring); 0 when they intersect."""
    best, x1, x2 = np.inf, a1, a2
    for side in range(2):
        for k in range(3):
            if side == 0:
                p, q = corner(a1, b1, c1, k), corner(a1, b1, c1, (k + 1) % 3)
                d2, s, x, _ = segment_triangle(p, q, a2, b2, c2)
            else:
                p, q = corner(a2, b2, c2, k), corner(a2, b2, c2, (k + 1) % 3)
                d2, s, x, _ = segment_triangle(p, q, a1, b1, c1)
            if d2 < best:
                y = (p[0] + s * (q[0] - p[0]), p[1] + s * (q[1] - p[1]), p[2] + s * (q[2] - p[2]))
                best = d2
                x1, x2 = (y, x) if side == 0 else (x, y)
    return best, x1, x2


@njit(cache=True, error_model="numpy", inline="always")
def beyond_plane(p, q, a, b, c, limit):
    """True when segment ``p``-``q`` lies on one side of the plane of triangle ``abc`` farther
    than ``sqrt(limit)`` (m^2): its distance to the triangle then exceeds it (a cheap test that
    skips the exact kernel for most triangles a search reaches)."""
    n0 = (b[1] - a[1]) * (c[2] - a[2]) - (b[2] - a[2]) * (c[1] - a[1])
    n1 = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2])
    n2 = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
    hp = (p[0] - a[0]) * n0 + (p[1] - a[1]) * n1 + (p[2] - a[2]) * n2
    hq = (q[0] - a[0]) * n0 + (q[1] - a[1]) * n1 + (q[2] - a[2]) * n2
    if (hp > 0.0) != (hq > 0.0) or hp == 0.0 or hq == 0.0:
        return False
    h = min(abs(hp), abs(hq))
    return h * h > limit * (n0 * n0 + n1 * n1 + n2 * n2)


@njit(cache=True, error_model="numpy")
def unit_face_normal(V, F, t):
    """Unit normal of face ``t`` of mesh ``V`` (N, 3), ``F`` (M, 3) (right-hand rule)."""
    i, j, k = F[t, 0], F[t, 1], F[t, 2]
    u0, u1, u2 = V[j, 0] - V[i, 0], V[j, 1] - V[i, 1], V[j, 2] - V[i, 2]
    w0, w1, w2 = V[k, 0] - V[i, 0], V[k, 1] - V[i, 1], V[k, 2] - V[i, 2]
    n0, n1, n2 = u1 * w2 - u2 * w1, u2 * w0 - u0 * w2, u0 * w1 - u1 * w0
    ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    return n0 / ln, n1 / ln, n2 / ln


@njit(cache=True, error_model="numpy")
def feature_normal(V, F, NB, VN, t, feature):
    """Angle-weighted pseudo-normal (not unit length) of ``feature`` of face ``t``: the face's
    unit normal; an edge's: the sum of its two faces' unit normals (the face's alone when the
    edge is open, ``NB < 0``); a vertex's: ``VN`` of that vertex."""
    if feature >= 4:
        v = F[t, feature - 4]
        return VN[v, 0], VN[v, 1], VN[v, 2]
    n0, n1, n2 = unit_face_normal(V, F, t)
    if feature >= 1 and NB[t, feature - 1] >= 0:
        m0, m1, m2 = unit_face_normal(V, F, NB[t, feature - 1])
        return n0 + m0, n1 + m1, n2 + m2
    return n0, n1, n2
