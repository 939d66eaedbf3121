"""GJK's sub-distance step (njit): the point of a simplex (1 to 4 points) closest to the origin.

``closest_on_simplex(S, n, lam) -> m`` reads the points from ``S[:n, 0:3]`` (rows may carry more
columns: GJK keeps each point's two support points beside it), writes the barycentric weights of
the closest point into ``lam`` (4,), keeps only the rows of the smallest sub-simplex holding it
(moved to the front, in their order, with their weights) and returns its size m. ``m == 4`` means
the origin is inside the tetrahedron.

Signed volumes (Montanari, Petrinic and Barbieri, ACM TOG 2017) in their 3-D form: the weights of
the origin are ratios of signed volumes (triple products), which need no projection of the origin
and stay exact in sign as long as the volumes are; where a weight is not strictly of the sign of
the total, the origin lies beyond the opposite face (edge), and only those faces (edges) are
searched, keeping the nearest. Degenerate simplices (coincident points, collinear triangles, flat
tetrahedra) fall to their faces, edges, vertices.

The helpers return their weights as tuples (no scratch arrays: in numba every array passed or
sliced in a branchy function costs reference counting on each call).
"""

from __future__ import annotations

import math

from numba import njit

__all__ = ["closest_on_simplex"]


@njit(cache=True)
def closest_on_simplex(S, n, lam):
    """See the module docstring."""
    if n == 1:
        w0, w1, w2, w3 = 1.0, 0.0, 0.0, 0.0
    elif n == 2:
        w0, w1, w2, w3, _ = _segment(S, 0, 1)
    elif n == 3:
        w0, w1, w2, w3, _ = _triangle(S, 0, 1, 2)
    else:
        w0, w1, w2, w3, _ = _tetrahedron(S)
    lam[0], lam[1], lam[2], lam[3] = w0, w1, w2, w3
    m = 0
    for i in range(n):
        if lam[i] > 0.0:
            if m != i:
                for c in range(S.shape[1]):
                    S[m, c] = S[i, c]
                lam[m] = lam[i]
            m += 1
    for i in range(m, 4):
        lam[i] = 0.0
    return m


@njit(cache=True)
def _norm2(S, w0, w1, w2, w3):
    """|sum_i w_i S[i, 0:3]|^2."""
    x = w0 * S[0, 0] + w1 * S[1, 0] + w2 * S[2, 0] + w3 * S[3, 0]
    y = w0 * S[0, 1] + w1 * S[1, 1] + w2 * S[2, 1] + w3 * S[3, 1]
    z = w0 * S[0, 2] + w1 * S[1, 2] + w2 * S[2, 2] + w3 * S[3, 2]
    return x * x + y * y + z * z


@njit(cache=True)
def _put(i, value, j, other, k, third):
    """Weights (w0, w1, w2, w3) with value at i, other at j, third at k (the rest 0; i first)."""
    w0 = value if i == 0 else (other if j == 0 else (third if k == 0 else 0.0))
    w1 = value if i == 1 else (other if j == 1 else (third if k == 1 else 0.0))
    w2 = value if i == 2 else (other if j == 2 else (third if k == 2 else 0.0))
    w3 = value if i == 3 else (other if j == 3 else (third if k == 3 else 0.0))
    return w0, w1, w2, w3


@njit("UniTuple(float64, 5)(float64[:, ::1], int64, int64)", cache=True)  # one version for all indices
def _segment(S, i, j):
    """Weights (w0..w3) of the point of segment S[i] S[j] closest to the origin, and its squared
    distance."""
    dx, dy, dz = S[j, 0] - S[i, 0], S[j, 1] - S[i, 1], S[j, 2] - S[i, 2]
    dd = dx * dx + dy * dy + dz * dz
    t = -(S[i, 0] * dx + S[i, 1] * dy + S[i, 2] * dz)
    if dd <= 0.0 or t <= 0.0:
        w0, w1, w2, w3 = _put(i, 1.0, j, 0.0, i, 1.0)
    elif t >= dd:
        w0, w1, w2, w3 = _put(j, 1.0, i, 0.0, j, 1.0)
    else:
        u = t / dd
        w0, w1, w2, w3 = _put(i, 1.0 - u, j, u, i, 1.0 - u)
    return w0, w1, w2, w3, _norm2(S, w0, w1, w2, w3)


@njit("float64(float64, float64, float64, float64[:, ::1], int64, int64)", cache=True)  # as _segment
def _cross_dot(m0, m1, m2, S, j, k):
    """m . (S[j] x S[k])."""
    return (m0 * (S[j, 1] * S[k, 2] - S[j, 2] * S[k, 1]) + m1 * (S[j, 2] * S[k, 0] - S[j, 0] * S[k, 2])
            + m2 * (S[j, 0] * S[k, 1] - S[j, 1] * S[k, 0]))


@njit("UniTuple(float64, 5)(float64[:, ::1], int64, int64, int64)", cache=True)  # as _segment
def _triangle(S, i, j, k):
    """Weights (w0..w3) of the point of triangle S[i] S[j] S[k] closest to the origin, and its
    squared distance. With m = (S[j] - S[i]) x (S[k] - S[i]), the weights of the origin's
    projection onto the plane are m . (S[j] x S[k]) / m.m and cyclic."""
    e0, e1, e2 = S[j, 0] - S[i, 0], S[j, 1] - S[i, 1], S[j, 2] - S[i, 2]
    f0, f1, f2 = S[k, 0] - S[i, 0], S[k, 1] - S[i, 1], S[k, 2] - S[i, 2]
    m0, m1, m2 = e1 * f2 - e2 * f1, e2 * f0 - e0 * f2, e0 * f1 - e1 * f0
    ci = _cross_dot(m0, m1, m2, S, j, k)
    cj = _cross_dot(m0, m1, m2, S, k, i)
    ck = _cross_dot(m0, m1, m2, S, i, j)
    if ci > 0.0 and cj > 0.0 and ck > 0.0:
        total = ci + cj + ck  # m.m up to rounding
        w0, w1, w2, w3 = _put(i, ci / total, j, cj / total, k, ck / total)
        return w0, w1, w2, w3, _norm2(S, w0, w1, w2, w3)
    # beyond an edge, or degenerate: the nearest of the edges opposite a non-positive weight (one
    # call site in a loop: LLVM then inlines _segment once, not three times; compile time)
    corners, weights = (i, j, k), (ci, cj, ck)
    best = (0.0, 0.0, 0.0, 0.0, math.inf)
    for r in range(3):
        if not weights[r] > 0.0:
            trial = _segment(S, corners[(r + 1) % 3], corners[(r + 2) % 3])
            if trial[4] < best[4]:
                best = trial
    return best


@njit(cache=True)
def _tetrahedron(S):
    """Weights (w0..w3) of the point of tetrahedron S[0..3] closest to the origin, and its squared
    distance (0 inside). The origin's weights are signed volumes: C_0 = S1.(S2 x S3),
    C_1 = -S0.(S2 x S3), C_2 = S0.(S1 x S3), C_3 = -S0.(S1 x S2) over their sum."""
    c0 = _cross_dot(S[1, 0], S[1, 1], S[1, 2], S, 2, 3)
    c1 = -_cross_dot(S[0, 0], S[0, 1], S[0, 2], S, 2, 3)
    c2 = _cross_dot(S[0, 0], S[0, 1], S[0, 2], S, 1, 3)
    c3 = -_cross_dot(S[0, 0], S[0, 1], S[0, 2], S, 1, 2)
    total = c0 + c1 + c2 + c3
    if c0 * total > 0.0 and c1 * total > 0.0 and c2 * total > 0.0 and c3 * total > 0.0:
        return c0 / total, c1 / total, c2 / total, c3 / total, 0.0
    # the nearest of the faces whose opposite vertex's weight is not of the total's sign (one
    # call site in a loop, as in _triangle)
    weights = (c0, c1, c2, c3)
    best = (0.0, 0.0, 0.0, 0.0, math.inf)
    for skip in range(4):
        if not weights[skip] * total > 0.0:
            trial = _triangle(S, 1 if skip == 0 else 0, 2 if skip <= 1 else 1, 2 if skip == 3 else 3)
            if trial[4] < best[4]:
                best = trial
    return best
