"""EPA's polytope (njit): a closed triangulated polytope inside the Minkowski difference
M = A - B of two cores, grown one support point at a time (``epa.py`` drives it).

``new_polytope()`` allocates it; ``grow_to_tetrahedron`` turns GJK's simplex into a tetrahedron
of M with volume; ``start_faces`` makes its four outward faces; ``expand`` adds a vertex: the faces
it sees are replaced by a cone of new faces over their horizon. Faces are counter-clockwise seen
from outside, each with its neighbour across edge e = (vertex e, vertex e+1), its outward unit
normal and its plane's distance from the origin.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.segments import perpendicular
from ambf_collision.geometry.support import NONE, pair_support
from ambf_collision.geometry.tolerances import (
    EPA_MAX_VERTICES,
    EPA_TOLERANCE,
    EPA_VISIBLE_RELATIVE,
)

__all__ = ["Polytope", "expand", "grow_to_tetrahedron", "new_polytope", "start_faces"]

_MAX_FACES = 2 * EPA_MAX_VERTICES  # a closed triangulated polytope of V vertices has 2 V - 4 faces
_TETRAHEDRON = ((0, 1, 2), (0, 3, 1), (0, 2, 3), (1, 3, 2))  # outward once det(w1-w0, w2-w0, w3-w0) < 0


class Polytope(NamedTuple):
    """EPA's polytope: vertices (rows like GJK's simplex: w, a, b), faces counter-clockwise seen
    from outside, each with its neighbour across edge e = (vertex e, vertex e+1), outward unit
    normal and distance from the origin; ``count`` = [vertices, face slots used, free slots]
    (the free stack's unused tail is _expand's walk stack)."""

    vertex: np.ndarray  # (EPA_MAX_VERTICES, 9)
    face_vertex: np.ndarray  # (_MAX_FACES, 3) int64
    face_adjacent: np.ndarray  # (_MAX_FACES, 3) int64
    face_normal: np.ndarray  # (_MAX_FACES, 3)
    face_distance: np.ndarray  # (_MAX_FACES,)
    alive: np.ndarray  # (_MAX_FACES,) int64: 1 live, 0 removed
    free: np.ndarray  # (_MAX_FACES,) int64: stack of dead face slots
    mark: np.ndarray  # (_MAX_FACES,) int64: visibility stamp per face
    horizon: np.ndarray  # (_MAX_FACES, 3) int64: (from, to, outer face) per horizon edge
    starts: np.ndarray  # (EPA_MAX_VERTICES, 2) int64: new face starting / ending at a vertex
    count: np.ndarray  # (3,) int64


@njit(cache=True)
def new_polytope():
    """A fresh polytope (its own C-contiguous arrays: views of one buffer would be typed as
    non-contiguous and compile half as fast)."""
    MV, MF = EPA_MAX_VERTICES, _MAX_FACES
    return Polytope(np.empty((MV, 9)), np.empty((MF, 3), np.int64), np.empty((MF, 3), np.int64),
                    np.empty((MF, 3)), np.empty(MF), np.zeros(MF, np.int64), np.empty(MF, np.int64),
                    np.zeros(MF, np.int64), np.empty((MF, 3), np.int64), np.full((MV, 2), -1, np.int64),
                    np.zeros(3, np.int64))


@njit(cache=True)
def _add_support(C1, C2, HV, NS, NB, P, d0, d1, d2):
    """Append the support point of M along d as a polytope vertex (not counted yet); returns it."""
    v = P.count[0]
    a0, a1, a2, b0, b1, b2, _, _ = pair_support(C1, C2, HV, NS, NB, d0, d1, d2, NONE, NONE)
    P.vertex[v, 0], P.vertex[v, 1], P.vertex[v, 2] = a0 - b0, a1 - b1, a2 - b2
    P.vertex[v, 3], P.vertex[v, 4], P.vertex[v, 5] = a0, a1, a2
    P.vertex[v, 6], P.vertex[v, 7], P.vertex[v, 8] = b0, b1, b2
    return P.vertex[v, 0], P.vertex[v, 1], P.vertex[v, 2]


@njit(cache=True)
def grow_to_tetrahedron(C1, C2, HV, NS, NB, P):
    """Grow GJK's simplex (P.count[0] = 1..4 vertices) into a tetrahedron of M with volume by
    support points: along the six axis directions until one is off the point; around a segment,
    60 degrees apart, until one is off its line; along both normals of a triangle, keeping the
    farther from its plane. False when M is flat in every tried direction. (One support call in
    one loop: it is compiled once.)"""
    V = P.vertex
    attempt, up = 0, 0.0
    keep = np.empty(V.shape[1])  # a vertex row: w, a, b
    while P.count[0] < 4:
        n = P.count[0]
        if attempt == (6 if n < 3 else 2):
            return False
        d0, d1, d2 = _grow_direction(V, n, attempt)
        x0, x1, x2 = _add_support(C1, C2, HV, NS, NB, P, d0, d1, d2)
        attempt += 1
        r0, r1, r2 = x0 - V[0, 0], x1 - V[0, 1], x2 - V[0, 2]
        if n == 1:
            off = math.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
        elif n == 2:  # distance from the segment's line
            u0, u1, u2 = V[1, 0] - V[0, 0], V[1, 1] - V[0, 1], V[1, 2] - V[0, 2]
            c0, c1, c2 = r1 * u2 - r2 * u1, r2 * u0 - r0 * u2, r0 * u1 - r1 * u0
            off = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2) / math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        else:  # height above (below) the triangle's plane, along the direction taken
            off = d0 * r0 + d1 * r1 + d2 * r2
        if n < 3:
            if off > EPA_TOLERANCE:
                P.count[0] = n + 1
                attempt = 0
        elif attempt == 1:
            up = off
            for c in range(V.shape[1]):
                keep[c] = V[3, c]
        else:
            if up >= off:
                for c in range(V.shape[1]):
                    V[3, c] = keep[c]
            if not max(up, off) > EPA_TOLERANCE:
                return False
            P.count[0] = 4
    return True


@njit("UniTuple(float64, 3)(float64[:, ::1], int64, int64)", cache=True)  # one version (support.NONE)
def _grow_direction(V, n, attempt):
    """The search direction of grow_to_tetrahedron's attempt at a simplex of n points: axis
    +x, -x, +y, ... (n = 1); perpendicular to the segment, turned 60 degrees per attempt (n = 2);
    the triangle's unit normal, then its opposite (n = 3; 0 for a triangle without area)."""
    if n == 1:
        d = np.zeros(3)
        d[attempt // 2] = 1.0 if attempt % 2 == 0 else -1.0
        return d[0], d[1], d[2]
    u0, u1, u2 = V[1, 0] - V[0, 0], V[1, 1] - V[0, 1], V[1, 2] - V[0, 2]
    if n == 2:
        e = perpendicular(u0, u1, u2)
        ul = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        f0, f1, f2 = (u1 * e[2] - u2 * e[1]) / ul, (u2 * e[0] - u0 * e[2]) / ul, (u0 * e[1] - u1 * e[0]) / ul
        c, s = math.cos(attempt * math.pi / 3.0), math.sin(attempt * math.pi / 3.0)
        return c * e[0] + s * f0, c * e[1] + s * f1, c * e[2] + s * f2
    f0, f1, f2 = V[2, 0] - V[0, 0], V[2, 1] - V[0, 1], V[2, 2] - V[0, 2]
    m0, m1, m2 = u1 * f2 - u2 * f1, u2 * f0 - u0 * f2, u0 * f1 - u1 * f0
    ml = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    if ml == 0.0:
        return 0.0, 0.0, 0.0
    s = 1.0 if attempt == 0 else -1.0
    return s * m0 / ml, s * m1 / ml, s * m2 / ml


@njit(cache=True)
def start_faces(P):
    """The four faces of the tetrahedron P.vertex[0:4], outward, with their adjacency."""
    V = P.vertex
    e0, e1, e2 = V[1, 0] - V[0, 0], V[1, 1] - V[0, 1], V[1, 2] - V[0, 2]
    f0, f1, f2 = V[2, 0] - V[0, 0], V[2, 1] - V[0, 1], V[2, 2] - V[0, 2]
    g0, g1, g2 = V[3, 0] - V[0, 0], V[3, 1] - V[0, 1], V[3, 2] - V[0, 2]
    if g0 * (e1 * f2 - e2 * f1) + g1 * (e2 * f0 - e0 * f2) + g2 * (e0 * f1 - e1 * f0) > 0.0:
        for c in range(V.shape[1]):  # vertices 1 and 2 swapped: the faces turn outward
            V[1, c], V[2, c] = V[2, c], V[1, c]
    for f in range(4):
        a, b, c = _TETRAHEDRON[f]
        _set_face(V, P.face_vertex, P.face_normal, P.face_distance, P.alive, f, a, b, c)
    P.count[1] = 4
    for f in range(4):
        for e in range(3):
            a, b = P.face_vertex[f, e], P.face_vertex[f, (e + 1) % 3]
            for g in range(4):
                for j in range(3):
                    if P.face_vertex[g, j] == b and P.face_vertex[g, (j + 1) % 3] == a:
                        P.face_adjacent[f, e] = g


# ------------------------------------------------------------------------------------------------
# growing the polytope
#
# Numba keeps the reference counting of every array a function receives unless the function is
# straight-line code; so the loops below index arrays taken out once, and call no helper with
# arrays from inside them but the branch-free _set_face.


@njit(cache=True, error_model="numpy")
def _set_face(V, face_vertex, face_normal, face_distance, alive, f, a, b, c):
    """Face slot f := the live face a, b, c (counter-clockwise from outside): its unit normal and
    its plane's distance from the origin (from the three vertices: less rounding than one).
    Returns |(b - a) x (c - a)|; 0 (a face without area: no normal) leaves NaN in the normal."""
    e0, e1, e2 = V[b, 0] - V[a, 0], V[b, 1] - V[a, 1], V[b, 2] - V[a, 2]
    f0, f1, f2 = V[c, 0] - V[a, 0], V[c, 1] - V[a, 1], V[c, 2] - V[a, 2]
    m0, m1, m2 = e1 * f2 - e2 * f1, e2 * f0 - e0 * f2, e0 * f1 - e1 * f0
    length = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
    m0, m1, m2 = m0 / length, m1 / length, m2 / length
    face_vertex[f, 0], face_vertex[f, 1], face_vertex[f, 2] = a, b, c
    face_normal[f, 0], face_normal[f, 1], face_normal[f, 2] = m0, m1, m2
    face_distance[f] = (m0 * (V[a, 0] + V[b, 0] + V[c, 0]) + m1 * (V[a, 1] + V[b, 1] + V[c, 1])
                        + m2 * (V[a, 2] + V[b, 2] + V[c, 2])) / 3.0
    alive[f] = 1
    return length


@njit(cache=True)
def expand(P, f, v):
    """Replace the faces that vertex v sees (found by walking the adjacency from face f, which
    sees it) by a cone of new faces from v over their horizon. A face sees v when v lies in
    front of its plane or in it up to rounding (EPA_VISIBLE_RELATIVE): kept, a face coplanar with
    v would border a sliver face whose normal is mostly rounding. False when the horizon is not
    one simple loop or a new face has no area (the caller stops growing)."""
    V, FV, FA, FN, FD = P.vertex, P.face_vertex, P.face_adjacent, P.face_normal, P.face_distance
    alive, free, mark, horizon, starts, count = P.alive, P.free, P.mark, P.horizon, P.starts, P.count
    x0, x1, x2 = V[v, 0], V[v, 1], V[v, 2]
    size = abs(x0) + abs(x1) + abs(x2)
    stamp = count[0]  # a new vertex each call: a fresh stamp
    base = count[2]  # the free stack's unused tail is the walk's stack
    n_stack, n_horizon = 1, 0
    free[base] = f
    mark[f] = stamp
    while n_stack > 0:
        n_stack -= 1
        g = free[base + n_stack]
        alive[g] = 0
        for e in range(3):
            h = FA[g, e]
            if mark[h] == stamp:
                continue
            ahead = FN[h, 0] * x0 + FN[h, 1] * x1 + FN[h, 2] * x2 - FD[h]
            if ahead > -EPA_VISIBLE_RELATIVE * (size + abs(FD[h])):
                mark[h] = stamp
                if base + n_stack + 1 >= _MAX_FACES:
                    return False
                free[base + n_stack] = h
                n_stack += 1
            else:
                horizon[n_horizon, 0], horizon[n_horizon, 1], horizon[n_horizon, 2] = FV[g, e], FV[g, (e + 1) % 3], h
                n_horizon += 1
    # the removed faces' slots are free now (their marks keep them out of this call's walk)
    for g in range(count[1]):
        if mark[g] == stamp and not alive[g]:
            free[count[2]] = g
            count[2] += 1
            mark[g] = -1
    # one simple loop: every horizon vertex starts exactly one edge and ends exactly one
    for i in range(n_horizon):
        starts[horizon[i, 0], 0] = -1
        starts[horizon[i, 1], 1] = -1
    ok = n_horizon >= 3
    for i in range(n_horizon):
        a, b, h = horizon[i, 0], horizon[i, 1], horizon[i, 2]
        if starts[a, 0] != -1 or starts[b, 1] != -1:
            ok = False
        if count[2] > 0:  # a slot: a freed one, else the next unused
            count[2] -= 1
            face = free[count[2]]
        elif count[1] < _MAX_FACES:
            face = count[1]
            count[1] += 1
        else:
            return False
        if not _set_face(V, FV, FN, FD, alive, face, a, b, v) > 0.0:
            FD[face] = math.inf
            ok = False
        starts[a, 0] = face
        starts[b, 1] = face
        FA[face, 0] = h
        for j in range(3):
            if FV[h, j] == b and FV[h, (j + 1) % 3] == a:
                FA[h, j] = face
    if not ok:
        return False
    for i in range(n_horizon):
        a, b = horizon[i, 0], horizon[i, 1]
        face = starts[a, 0]
        after, before = starts[b, 0], starts[a, 1]
        if after < 0 or before < 0:
            return False
        FA[face, 1] = after  # edge b -> v, shared with the face starting at b
        FA[face, 2] = before  # edge v -> a, shared with the face ending at a
    # one loop, not several (a face left standing inside the removed region)
    first = starts[horizon[0, 0], 0]
    face, steps = first, 0
    while True:
        face = FA[face, 1]
        steps += 1
        if face == first or steps > n_horizon:
            break
    return steps == n_horizon
