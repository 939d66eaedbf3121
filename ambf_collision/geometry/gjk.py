"""Signed distance of two bounded convex shapes: GJK for the distance, EPA for the penetration.

``convex_distance(W, H, k1, k2, out_p1, out_p2, out_n) -> (distance, status)`` (njit) works on any
two bounded shapes of the world ``W`` (a ``World`` tuple) through their support functions
(``geometry/support.py``; ``H`` the ``Hulls`` tuple). Spheres and capsules enter as their core (a
point, a segment) inflated by their radius.

Semantics (coal's): ``distance`` (m) is the distance between the shapes when apart and minus the
penetration depth when they overlap; ``out_n`` (3,) is the unit normal from shape 1 to shape 2,
also when penetrating; ``out_p1``, ``out_p2`` (3,) are witness points on each shape's surface (world
frame) with ``p2 = p1 + distance * n``.

**Penetration depth** is the minimum translation distance: the shortest translation of shape 2
(along ``n``) after which the shapes only touch. With ``h_i(u) = max_{x in shape i} u . x`` it is
``min_{|u| = 1} h_1(u) + h_2(-u)``, and ``n`` is the minimising ``u``. For smooth shapes that is the
deepest-point distance one expects; for deep overlaps of non-smooth solids (boxes, hulls, cylinder
rims) it is what the formula says, not a distance between "deepest points": a box sunk into
another comes out along the face normal that needs the least translation, whichever side its
centre is on. In one formula for both cases, ``distance = -min_{|u|=1} (h_1(u) + h_2(-u))``.

Accuracy: exact up to rounding for polytopes (boxes, hulls, points, segments, zero-size shapes),
where GJK and EPA end on the exact closest features. Curved shapes (cylinders, cones, capsules as
cores do not count: their cores are polytopes) converge to ``GJK_TOLERANCE`` (distance) and
``EPA_TOLERANCE`` (depth), each certified by a lower and an upper bound of the true value.

``status`` is ``CONVERGED`` (0) or a documented fallback whose result is still a valid bound:

* ``GJK_ITERATION_LIMIT``: the distance is GJK's upper bound (the distance between the returned
  witness points); the lower bound was not within ``GJK_TOLERANCE`` of it.
* ``EPA_NOT_CONVERGED``: EPA could not close its gap (a continuum of minimal directions, as for
  two coaxial cylinders; curved rims meeting). The depth is then the support-function bound
  ``h_1(n) + h_2(-n)`` along the best direction EPA found, refined by a local pattern search (a
  translation that separates the shapes: never smaller than the true depth; within ~1e-12 m of it
  in the tests). Witnesses: the support points along ``n`` and ``-n``, each moved across ``n``
  by half their offset, so that ``p2 = p1 + distance * n`` (on the supporting planes; on the
  surfaces where the contact is a point).
* ``CENTRE_FALLBACK``: nothing finite and bounded by the shapes' size came out (never seen in the
  tests); the depth along the direction between the shapes' centres, the same kind of bound.

Nothing returned is ever NaN, infinite or larger than the shapes' size.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.epa import EPA_NOT_CONVERGED, epa_penetration
from ambf_collision.geometry.simplex import closest_on_simplex
from ambf_collision.geometry.support import (
    NONE,
    core_of,
    core_support,
    settle_witnesses,
    support_bound,
)
from ambf_collision.geometry.tolerances import (
    GJK_CONTACT_DISTANCE,
    GJK_MAX_ITERATIONS,
    GJK_TOLERANCE,
)

__all__ = ["CENTRE_FALLBACK", "CONVERGED", "EPA_NOT_CONVERGED", "GJK_ITERATION_LIMIT", "SCRATCH_ROWS",
           "ABOVE_CUTOFF", "convex_distance", "convex_distance_in", "convex_distance_below",
           "core_distance_in", "core_distance_below"]

CONVERGED = 0
GJK_ITERATION_LIMIT = 1
CENTRE_FALLBACK = 3

_SEPARATED = 0  # GJK outcomes
_CONTACT = 1
_ABOVE = 2

#: core_distance_below: the distance was proven larger than the cutoff (the value a lower bound).
ABOVE_CUTOFF = 4


#: Rows of the scratch array of :func:`convex_distance_in` (float64, 9 columns).
SCRATCH_ROWS = 8


@njit(cache=True)
def convex_distance(W, H, k1, k2, out_p1, out_p2, out_n):
    """Signed distance of shapes k1 and k2 (module docstring): returns (distance, status) and
    writes witness points out_p1, out_p2 (3,) and the unit normal out_n (3,) from k1 to k2."""
    scratch = np.empty((SCRATCH_ROWS, 9))  # one allocation per call
    distance, status = convex_distance_in(W, H, k1, k2, scratch)
    for c in range(3):
        out_p1[c], out_p2[c], out_n[c] = scratch[5, c], scratch[6, c], scratch[7, c]
    return distance, status


@njit(cache=True)
def convex_distance_in(W, H, k1, k2, scratch):
    """:func:`convex_distance` in a caller's ``scratch`` (SCRATCH_ROWS, 9) float64 array, reused
    from pair to pair (an allocation per pair cost ~60 ns, a quarter of a hull pair's overhead;
    measured 2026-12-07): returns (distance, status); the witness points are ``scratch[5, :3]``
    and ``scratch[6, :3]``, the normal ``scratch[7, :3]``. Rows 0-4 are zeroed first, so every
    call computes what a fresh zeroed array gives, bit for bit."""
    return core_distance_in(core_of(W, H, k1), core_of(W, H, k2), H.vertices, H.neighbor_start, H.neighbors,
                            scratch)


@njit(cache=True)
def convex_distance_below(W, H, k1, k2, scratch, cutoff):
    """:func:`convex_distance_in` that stops once GJK proves the distance above ``cutoff`` (m):
    then ``(lower bound > cutoff, ABOVE_CUTOFF)`` (:func:`core_distance_below`). A mesh reads as
    its hull (``support.core_of``), which holds it: the bound holds for the mesh too."""
    return core_distance_below(core_of(W, H, k1), core_of(W, H, k2), H.vertices, H.neighbor_start,
                               H.neighbors, scratch, cutoff)


@njit(cache=True, inline="always")
def core_distance_in(C1, C2, HV, NS, NB, scratch):
    """:func:`convex_distance_in` on two cores (``support.Core``, one frame, e.g. a solid and
    a triangle of a mesh: ``support.triangle_core``); ``HV``, ``NS``, ``NB`` the HullSet's
    vertices, neighbour starts and neighbours (what the support functions read of it). Same
    results and scratch rows. Inlined into its callers (a call passing two cores costs ~50
    values)."""
    return core_distance_below(C1, C2, HV, NS, NB, scratch, math.inf)


@njit(cache=True, inline="always")
def core_distance_below(C1, C2, HV, NS, NB, scratch, cutoff):
    """:func:`core_distance_in` for a search that only needs distances up to ``cutoff`` (m):
    as soon as GJK proves the distance larger (a separating plane farther than it), it returns
    ``(bound, ABOVE_CUTOFF)`` with ``bound`` > cutoff a lower bound of the distance (the scratch
    rows then hold no result). With ``cutoff`` = inf it is :func:`core_distance_in`, bit for
    bit (the test never fires)."""
    for i in range(5):
        for c in range(9):
            scratch[i, c] = 0.0
    out_p1, out_p2, out_n = scratch[5], scratch[6], scratch[7]
    S = scratch[:4]  # simplex rows: w = a - b (0:3), a (3:6), b (6:9); unused rows stay finite
    lam = scratch[4, :4]  # barycentric weights of the simplex rows
    outcome, n, status = _gjk(C1, C2, HV, NS, NB, S, lam, cutoff + C1.radius + C2.radius)
    if outcome == _ABOVE:
        return lam[3] - C1.radius - C2.radius, ABOVE_CUTOFF
    if outcome == _SEPARATED:
        core = _separated_result(S, n, lam, out_p1, out_p2, out_n)
    else:
        core, status = epa_penetration(C1, C2, HV, NS, NB, S, n, out_p1, out_p2, out_n)
    if not _bounded(C1, C2, core, out_p1, out_p2, out_n):
        core = _centre_fallback(C1, C2, HV, NS, NB, out_p1, out_p2, out_n)
        status = CENTRE_FALLBACK
    for c in range(3):
        out_p1[c] += C1.radius * out_n[c]
        out_p2[c] -= C2.radius * out_n[c]
    return core - C1.radius - C2.radius, status


@njit(cache=True)
def _gjk(C1, C2, HV, NS, NB, S, lam, cutoff):
    """GJK on the cores C1, C2 (support.Core; HV, NS, NB the HullSet's vertices and vertex graph):
    the point of their Minkowski difference M = A - B closest to the origin. Returns (outcome,
    simplex size, status); ``lam`` (4,) holds the barycentric weights of the simplex rows.
    ``_CONTACT`` when the origin is in the simplex or within GJK_CONTACT_DISTANCE of it;
    ``_ABOVE`` when a separating plane is farther than ``cutoff`` (m; inf: never), its distance
    then in ``lam[3]``."""
    v0, v1, v2 = C1.m0 - C2.m0, C1.m1 - C2.m1, C1.m2 - C2.m2  # a point of M: the first direction
    vv = v0 * v0 + v1 * v1 + v2 * v2
    if not vv > 0.0:  # coincident centres, or so close that |v|^2 underflows (5e-324 apart)
        v0, v1, v2, vv = 1.0, 0.0, 0.0, 1.0
    n = 0
    hint1, hint2 = NONE, NONE  # hull vertices of the last support points: where the next climbs start
    for iteration in range(GJK_MAX_ITERATIONS):
        # support.pair_support, inlined (see there): A's support along -v, B's along v
        a0, a1, a2, hint1 = core_support(C1, HV, NS, NB, -v0, -v1, -v2, hint1)
        b0, b1, b2, hint2 = core_support(C2, HV, NS, NB, v0, v1, v2, hint2)
        w0, w1, w2 = a0 - b0, a1 - b1, a2 - b2
        vw = v0 * w0 + v1 * w1 + v2 * w2  # the plane through w normal to v separates: distance vw / |v|
        if vw > 0.0 and vw * vw > cutoff * cutoff * vv:
            lam[3] = vw / math.sqrt(vv)
            return _ABOVE, n, CONVERGED
        if n > 0:
            # Frank-Wolfe gap: |v| - v.w / |v| bounds |v| - distance from above
            if vv - (v0 * w0 + v1 * w1 + v2 * w2) <= GJK_TOLERANCE * math.sqrt(vv):
                return _SEPARATED, n, CONVERGED
            for i in range(n):
                if S[i, 0] == w0 and S[i, 1] == w1 and S[i, 2] == w2:
                    return _SEPARATED, n, CONVERGED  # no new support point: v is the closest
        S[n, 0], S[n, 1], S[n, 2] = w0, w1, w2
        S[n, 3], S[n, 4], S[n, 5] = a0, a1, a2
        S[n, 6], S[n, 7], S[n, 8] = b0, b1, b2
        n = closest_on_simplex(S, n + 1, lam)
        if n == 4:
            return _CONTACT, n, CONVERGED
        u0 = lam[0] * S[0, 0] + lam[1] * S[1, 0] + lam[2] * S[2, 0]
        u1 = lam[0] * S[0, 1] + lam[1] * S[1, 1] + lam[2] * S[2, 1]
        u2 = lam[0] * S[0, 2] + lam[1] * S[1, 2] + lam[2] * S[2, 2]
        uu = u0 * u0 + u1 * u1 + u2 * u2
        if uu <= GJK_CONTACT_DISTANCE * GJK_CONTACT_DISTANCE:
            return _CONTACT, n, CONVERGED
        if uu >= vv and iteration > 0:
            return _SEPARATED, n, CONVERGED  # no progress left above rounding
        v0, v1, v2, vv = u0, u1, u2, uu
    return _SEPARATED, n, GJK_ITERATION_LIMIT


@njit(cache=True)
def _separated_result(S, n, lam, out_p1, out_p2, out_n):
    """Witness points of the cores (the simplex weights applied to each shape's support points),
    unit normal from 1 to 2; returns the core distance |p2 - p1|. With the closest point inside a
    simplex triangle, the triangle's normal is used: a cross product of its edges, accurate also
    when the distance is tiny and p2 - p1 mostly rounding."""
    for c in range(3):
        out_p1[c] = lam[0] * S[0, 3 + c] + lam[1] * S[1, 3 + c] + lam[2] * S[2, 3 + c]
        out_p2[c] = lam[0] * S[0, 6 + c] + lam[1] * S[1, 6 + c] + lam[2] * S[2, 6 + c]
        out_n[c] = out_p2[c] - out_p1[c]
    core = math.sqrt(out_n[0] * out_n[0] + out_n[1] * out_n[1] + out_n[2] * out_n[2])
    for c in range(3):
        out_n[c] /= core
    if n == 3:
        e0, e1, e2 = S[1, 0] - S[0, 0], S[1, 1] - S[0, 1], S[1, 2] - S[0, 2]
        f0, f1, f2 = S[2, 0] - S[0, 0], S[2, 1] - S[0, 1], S[2, 2] - S[0, 2]
        m0, m1, m2 = e1 * f2 - e2 * f1, e2 * f0 - e0 * f2, e0 * f1 - e1 * f0
        length = math.sqrt(m0 * m0 + m1 * m1 + m2 * m2)
        if length > 0.0:
            if m0 * out_n[0] + m1 * out_n[1] + m2 * out_n[2] < 0.0:
                length = -length
            out_n[0], out_n[1], out_n[2] = m0 / length, m1 / length, m2 / length
            settle_witnesses(out_p1, out_p2, out_n[0], out_n[1], out_n[2], core)
    return core


@njit(cache=True)
def _bounded(C1, C2, core, p1, p2, n):
    """Whether a core result is finite and within the shapes' size: |distance| and both witness
    points' distances from their shape's centre at most the centre distance plus both reaches
    (+1 %), the normal unit."""
    gap = math.sqrt((C1.m0 - C2.m0) ** 2 + (C1.m1 - C2.m1) ** 2 + (C1.m2 - C2.m2) ** 2)
    limit = 1.01 * (gap + C1.reach + C2.reach) + 1e-12
    nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2]
    q1 = (p1[0] - C1.m0) ** 2 + (p1[1] - C1.m1) ** 2 + (p1[2] - C1.m2) ** 2
    q2 = (p2[0] - C2.m0) ** 2 + (p2[1] - C2.m1) ** 2 + (p2[2] - C2.m2) ** 2
    # written so that NaN fails every comparison
    return abs(core) <= limit and abs(nn - 1.0) <= 1e-9 and q1 <= limit * limit and q2 <= limit * limit


@njit(cache=True)
def _centre_fallback(C1, C2, HV, NS, NB, out_p1, out_p2, out_n):
    """The support bound of the cores along the unit direction between their centres (+z when
    they coincide); see support_bound."""
    n0, n1, n2 = C2.m0 - C1.m0, C2.m1 - C1.m1, C2.m2 - C1.m2
    length = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if not (length > 0.0 and length < math.inf):
        n0, n1, n2, length = 0.0, 0.0, 1.0, 1.0
    out_n[0], out_n[1], out_n[2] = n0 / length, n1 / length, n2 / length
    return support_bound(C1, C2, HV, NS, NB, out_n[0], out_n[1], out_n[2], out_p1, out_p2)
