"""EPA (njit): the penetration depth of two overlapping convex cores, from GJK's final simplex.

``epa_penetration(C1, C2, HV, NS, NB, S, n, out_p1, out_p2, out_n) -> (core distance, status)``
(cores C1, C2 as support.Core; HV, NS, NB the HullSet's vertices and vertex graph) grows a polytope inside
the Minkowski difference M = A - B of the cores (the origin is in M) until its face nearest to the origin lies on M's boundary. That face's distance
``d_f`` is a lower bound of the depth (the polytope is inside M), ``h_A(n) + h_B(-n)`` along its
normal an upper bound (gjk.py's docstring: the depth is the minimum of this over directions); the
face is accepted when the two agree within ``EPA_TOLERANCE``. Every candidate's upper bound is an
independent support-function evaluation, so the returned depth is verified, not trusted.

Returns the core distance ``-d_f`` (<= 0, or a rounding-size positive value for cores that only
touch), writes witness points on the cores (``p2 = p1 + distance * n``) and the unit normal ``n``
from core 1 to core 2. Status ``CONVERGED`` (0), or ``EPA_NOT_CONVERGED`` (2) when the polytope
could not be grown further (vertex budget ``EPA_MAX_VERTICES``, a repeated support point, a face
too thin to orient): the direction of the smallest upper bound seen is then improved by a local
pattern search on ``h_A(u) + h_B(-u)`` and its bound returned (``support_bound``: a valid
separating translation, never less than the true depth).

``S[:n]`` is GJK's simplex (rows w = a - b, a, b; gjk.py). A simplex of fewer than 4 points (the
origin on a face, edge or vertex of M: touching, or flat shapes) is first grown into a
tetrahedron by support points off its plane or line; a Minkowski difference that is itself flat
(two flat shapes in one plane) has no interior, and its depth is 0.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.epa_polytope import (
    expand,
    grow_to_tetrahedron,
    new_polytope,
    start_faces,
)
from ambf_collision.geometry.segments import perpendicular
from ambf_collision.geometry.simplex import closest_on_simplex
from ambf_collision.geometry.support import (
    NONE,
    pair_support,
    settle_witnesses,
    support_bound,
)
from ambf_collision.geometry.tolerances import (
    EPA_MAX_VERTICES,
    EPA_REFINE_STEP,
    EPA_TOLERANCE,
)

__all__ = ["EPA_NOT_CONVERGED", "epa_penetration"]

CONVERGED = 0
EPA_NOT_CONVERGED = 2


@njit(cache=True)
def epa_penetration(C1, C2, HV, NS, NB, S, n, out_p1, out_p2, out_n):
    """See the module docstring."""
    P = new_polytope()
    for i in range(n):
        for c in range(S.shape[1]):
            P.vertex[i, c] = S[i, c]
    P.count[0] = n
    if not grow_to_tetrahedron(C1, C2, HV, NS, NB, P):
        return _flat_result(P, out_p1, out_p2, out_n), CONVERGED
    start_faces(P)
    best_upper = math.inf
    best = np.zeros(3)
    hint1, hint2 = NONE, NONE  # hull vertices of the last support points: where the next climbs start
    V, alive, FN, FD, count = P.vertex, P.alive, P.face_normal, P.face_distance, P.count
    for _ in range(EPA_MAX_VERTICES):
        f, nearest = NONE, math.inf  # the live face nearest to the origin
        for g in range(count[1]):
            if alive[g] and FD[g] < nearest:
                f, nearest = g, FD[g]
        if f < 0:
            break
        m0, m1, m2 = FN[f, 0], FN[f, 1], FN[f, 2]
        a0, a1, a2, b0, b1, b2, hint1, hint2 = pair_support(C1, C2, HV, NS, NB, m0, m1, m2, hint1, hint2)
        w0, w1, w2 = a0 - b0, a1 - b1, a2 - b2
        upper = m0 * w0 + m1 * w1 + m2 * w2
        if upper < best_upper:
            best_upper = upper
            best[0], best[1], best[2] = m0, m1, m2
        if upper - nearest <= EPA_TOLERANCE:
            return _face_result(P, f, out_p1, out_p2, out_n), CONVERGED
        v = count[0]
        repeated = False  # a support point already in the polytope: no way to grow
        for i in range(v):
            if V[i, 0] == w0 and V[i, 1] == w1 and V[i, 2] == w2:
                repeated = True
        if v == EPA_MAX_VERTICES or repeated:
            break
        V[v, 0], V[v, 1], V[v, 2] = w0, w1, w2
        V[v, 3], V[v, 4], V[v, 5] = a0, a1, a2
        V[v, 6], V[v, 7], V[v, 8] = b0, b1, b2
        count[0] = v + 1
        if not expand(P, f, v):
            break
    _refine(C1, C2, HV, NS, NB, best, best_upper)
    out_n[0], out_n[1], out_n[2] = best[0], best[1], best[2]
    return support_bound(C1, C2, HV, NS, NB, best[0], best[1], best[2], out_p1, out_p2), EPA_NOT_CONVERGED


@njit(cache=True)
def _refine(C1, C2, HV, NS, NB, u, value):
    """Pattern search for a smaller h_A(u) + h_B(-u) about the unit direction u (updated in place).
    Each round tries eight directions around u at an angle ``step`` (the pattern turned by the
    golden angle every round), and u turned by +-``step`` about each local axis of both cores
    (their rotations' columns). It moves to the best if that is smaller, else halves the step,
    down to 1e-12 rad. For when EPA cannot close its gap: a continuum of minimal directions (two
    coaxial cylinders), curved rims meeting (cone on cone), or a minimum on a rim's ridge.

    The turns about the axes are there for the ridges. The support function of a box, cylinder
    or cone has a kink where u crosses a plane ``u . axis = const`` of its own frame (a cap's rim,
    a face's edge). A minimum on such a ridge can only be approached along it. A turn about that
    axis stays on it exactly, where the eight directions would need to point along it to 1e-5
    (a sphere centred 1 mm off a cylinder's axis stalled 3 mrad, 4e-9 m, short). Every value is a
    support-function bound, so the result stays a valid (upper) bound of the depth."""
    step = EPA_REFINE_STEP
    turn = 0.0
    axes = _rotation_columns(C1, C2)
    while step > 1e-12:
        e = perpendicular(u[0], u[1], u[2])
        f0, f1, f2 = u[1] * e[2] - u[2] * e[1], u[2] * e[0] - u[0] * e[2], u[0] * e[1] - u[1] * e[0]
        best, b0, b1, b2 = value, u[0], u[1], u[2]
        cos_step, sin_step = math.cos(step), math.sin(step)
        for j in range(8 + 2 * axes.shape[0]):
            if j < 8:
                angle = turn + j * math.pi / 4.0
                c, s = step * math.cos(angle), step * math.sin(angle)
                x0, x1, x2 = u[0] + c * e[0] + s * f0, u[1] + c * e[1] + s * f1, u[2] + c * e[2] + s * f2
            else:  # u turned by +-step about an axis k (Rodrigues)
                k0, k1, k2 = axes[(j - 8) // 2, 0], axes[(j - 8) // 2, 1], axes[(j - 8) // 2, 2]
                sin_j = sin_step if j % 2 == 0 else -sin_step
                along = (k0 * u[0] + k1 * u[1] + k2 * u[2]) * (1.0 - cos_step)
                x0 = u[0] * cos_step + (k1 * u[2] - k2 * u[1]) * sin_j + k0 * along
                x1 = u[1] * cos_step + (k2 * u[0] - k0 * u[2]) * sin_j + k1 * along
                x2 = u[2] * cos_step + (k0 * u[1] - k1 * u[0]) * sin_j + k2 * along
            length = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
            x0, x1, x2 = x0 / length, x1 / length, x2 / length
            a0, a1, a2, c0, c1, c2, _, _ = pair_support(C1, C2, HV, NS, NB, x0, x1, x2, NONE, NONE)
            trial = x0 * (a0 - c0) + x1 * (a1 - c1) + x2 * (a2 - c2)
            if trial < best:
                best, b0, b1, b2 = trial, x0, x1, x2
        if best < value:
            value, u[0], u[1], u[2] = best, b0, b1, b2
        else:
            step *= 0.5
        turn += 2.399963229728653  # the golden angle (rad)
    return value


@njit(cache=True)
def _rotation_columns(C1, C2):
    """The columns of both cores' rotations (their local axes in world), ``(6, 3)``: C1's in
    rows 0-2, C2's in rows 3-5."""
    axes = np.empty((6, 3))
    for row, C in ((0, C1), (3, C2)):
        axes[row, 0], axes[row, 1], axes[row, 2] = C.r00, C.r10, C.r20
        axes[row + 1, 0], axes[row + 1, 1], axes[row + 1, 2] = C.r01, C.r11, C.r21
        axes[row + 2, 0], axes[row + 2, 1], axes[row + 2, 2] = C.r02, C.r12, C.r22
    return axes


# ------------------------------------------------------------------------------------------------
# the starting tetrahedron


# ------------------------------------------------------------------------------------------------
# results


@njit(cache=True)
def _face_result(P, f, out_p1, out_p2, out_n):
    """Witness points for the accepted face f (distance d_f, normal n): where the ray from the
    origin along n leaves the polytope (on f, or on a neighbour when the origin's projection onto
    f's plane falls outside f, as it can on a polytope that approximates a curved surface), as
    barycentric weights applied to the vertices' support points; moved to p2 = p1 - d_f n.
    Returns the core distance -d_f."""
    m0, m1, m2 = P.face_normal[f, 0], P.face_normal[f, 1], P.face_normal[f, 2]
    t = P.face_distance[f]
    for h in range(P.count[1]):  # the first face plane the ray meets
        along = P.face_normal[h, 0] * m0 + P.face_normal[h, 1] * m1 + P.face_normal[h, 2] * m2
        if P.alive[h] and along > 0.0 and P.face_distance[h] < t * along:
            t = P.face_distance[h] / along
    q0, q1, q2 = t * m0, t * m1, t * m2
    g, inside = f, -math.inf
    for h in range(P.count[1]):  # of the faces that plane holds (coplanar ones tie), the one holding q
        along = P.face_normal[h, 0] * m0 + P.face_normal[h, 1] * m1 + P.face_normal[h, 2] * m2
        if P.alive[h] and along > 0.0 and P.face_distance[h] <= (t + EPA_TOLERANCE) * along:
            i, j, k = P.face_vertex[h, 0], P.face_vertex[h, 1], P.face_vertex[h, 2]
            least = min(_area(P, h, j, k, q0, q1, q2), _area(P, h, k, i, q0, q1, q2), _area(P, h, i, j, q0, q1, q2))
            if least > inside:
                g, inside = h, least
    wi, wj, wk = _weights(P, g, q0, q1, q2)
    V = P.vertex
    i, j, k = P.face_vertex[g, 0], P.face_vertex[g, 1], P.face_vertex[g, 2]
    for c in range(3):
        out_p1[c] = wi * V[i, 3 + c] + wj * V[j, 3 + c] + wk * V[k, 3 + c]
        out_p2[c] = wi * V[i, 6 + c] + wj * V[j, 6 + c] + wk * V[k, 6 + c]
    out_n[0], out_n[1], out_n[2] = m0, m1, m2
    settle_witnesses(out_p1, out_p2, m0, m1, m2, -P.face_distance[f])
    return -P.face_distance[f]


@njit(cache=True)
def _weights(P, f, q0, q1, q2):
    """Barycentric weights of point q in face f, clamped to the face (the signed areas
    m . ((V_j - q) x (V_k - q)) and cyclic over their sum); equal weights for a face without area."""
    i, j, k = P.face_vertex[f, 0], P.face_vertex[f, 1], P.face_vertex[f, 2]
    wi = max(0.0, _area(P, f, j, k, q0, q1, q2))
    wj = max(0.0, _area(P, f, k, i, q0, q1, q2))
    wk = max(0.0, _area(P, f, i, j, q0, q1, q2))
    total = wi + wj + wk
    if not total > 0.0:
        return 1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0
    return wi / total, wj / total, wk / total


@njit(cache=True)
def _area(P, f, a, b, q0, q1, q2):
    """m_f . ((V_a - q) x (V_b - q)): twice the signed area of q, V_a, V_b seen along f's normal."""
    V = P.vertex
    x0, x1, x2 = V[a, 0] - q0, V[a, 1] - q1, V[a, 2] - q2
    y0, y1, y2 = V[b, 0] - q0, V[b, 1] - q1, V[b, 2] - q2
    return (P.face_normal[f, 0] * (x1 * y2 - x2 * y1) + P.face_normal[f, 1] * (x2 * y0 - x0 * y2)
            + P.face_normal[f, 2] * (x0 * y1 - x1 * y0))


@njit(cache=True)
def _flat_result(P, out_p1, out_p2, out_n):
    """M has no interior (flat shapes in one plane, or points): depth 0. Witness points of the
    point of P's vertices closest to the origin, the normal perpendicular to their span."""
    n = min(P.count[0], 4)
    lam = np.zeros(4)
    S = np.zeros((4, P.vertex.shape[1]))  # rows past the n vertices: 0 (the polytope's are
    S[:n] = P.vertex[:n]                  # not initialised, and 0 * NaN would be NaN below)
    m = closest_on_simplex(S, n, lam)
    for c in range(3):
        out_p1[c] = lam[0] * S[0, 3 + c] + lam[1] * S[1, 3 + c] + lam[2] * S[2, 3 + c] + lam[3] * S[3, 3 + c]
        out_p2[c] = lam[0] * S[0, 6 + c] + lam[1] * S[1, 6 + c] + lam[2] * S[2, 6 + c] + lam[3] * S[3, 6 + c]
    if n >= 3:
        e0, e1, e2 = S[1, 0] - S[0, 0], S[1, 1] - S[0, 1], S[1, 2] - S[0, 2]
        f0, f1, f2 = S[2, 0] - S[0, 0], S[2, 1] - S[0, 1], S[2, 2] - S[0, 2]
        x0, x1, x2 = e1 * f2 - e2 * f1, e2 * f0 - e0 * f2, e0 * f1 - e1 * f0
        length = math.sqrt(x0 * x0 + x1 * x1 + x2 * x2)
        if length > 0.0:
            out_n[0], out_n[1], out_n[2] = x0 / length, x1 / length, x2 / length
            return 0.0
    if n >= 2 and m >= 1:
        e = perpendicular(P.vertex[1, 0] - P.vertex[0, 0], P.vertex[1, 1] - P.vertex[0, 1],
                           P.vertex[1, 2] - P.vertex[0, 2])
        out_n[0], out_n[1], out_n[2] = e[0], e[1], e[2]
        return 0.0
    out_n[0], out_n[1], out_n[2] = 0.0, 0.0, 1.0
    return 0.0
