"""Support functions of the bounded shape kinds (njit): the shape's point farthest along a direction.

``support(W, H, k, d0, d1, d2, out3)`` (the entry point for Python and other kernels) writes into ``out3`` (3,) the world point of shape ``k`` of
the world ``W`` (a ``World`` tuple, ``geometry/world_shapes.py``) that maximises ``d . x`` over the
shape, for a world direction ``d = (d0, d1, d2)`` of any non-zero length (metres for points; the
direction's unit does not matter). ``H`` is the ``Hulls`` tuple of the shapes' ``HullSet``.
Inside njit code a shape is read once into a :class:`Core` (scalars); ``core_support`` returns
the point as a tuple with the hull vertex it chose (hulls are searched by hill climbing over
their edges, from a hint).

Spheres and capsules give their *core* (the centre; the end of the segment farther along d): the
caller adds ``radius * d / |d|``. This is what GJK works on (a swept sphere is the core inflated).

Ties (a face, edge or cap perpendicular to d) are broken by a fixed rule: along each local axis of
a box, cylinder or cone whose direction component is zero up to ``SUPPORT_TIE_RELATIVE`` times
|d|, the middle of the tied feature (a box face's centre, a cylinder cap's centre), so that a face
parallel up to rounding (a box resting on a plane, both moved by one frame) gives its centre and
not a corner picked by rounding noise; otherwise the first of the tied points (capsule end ``a``,
the lowest vertex index of a hull, the base rim before the apex of a cone). The value ``d . x``
then differs from the exact maximum by at most that fraction of |d| times the half extent.

A TRIANGLE core (kind ``TRIANGLE``, an internal code of this module, not a shape kind) is a
triangle's three corners (:func:`triangle_core`): the mesh kernels run GJK/EPA between a solid and
one triangle of a mesh. A MESH shape row reads as its convex hull (``hull_id``), i.e. as CONVEX.

PLANE has no bounded support map: the callers dispatch planes before (a plane gives its point
``offset * normal``; no exception is raised in the kernels).

Also here, for GJK/EPA: ``support_bound`` (the signed-distance bound of two cores along a given
normal) and ``settle_witnesses``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.shapes import BOX, CAPSULE, CONE, CONVEX, CYLINDER, MESH, SPHERE
from ambf_collision.geometry.tolerances import SUPPORT_TIE_RELATIVE

__all__ = ["NONE", "TRIANGLE", "Core", "core_of", "core_support", "core_in_frame", "pair_support", "settle_witnesses",
           "support", "support_bound", "triangle_core"]

#: -1 as an int64 ("no hint", "no face"): numba types a literal -1 passed to a compiled function
#: as its own type and compiles that function once more for it (seconds each, measured).
NONE = np.int64(-1)

#: Core kind of one triangle (:func:`triangle_core`): not a shape kind (those are 0-7, shapes.py).
TRIANGLE = 100
_TRIANGLE = np.int64(TRIANGLE)  # typed as the other cores' kind (see NONE)


class Core(NamedTuple):
    """One shape as GJK and EPA read it: scalars only, read once per pair by :func:`core_of`
    (a tuple of scalars passes to a call for free; one holding arrays costs their reference
    counting and ~7 words each on every call). World frame, metres."""

    kind: int
    c0: float  # the local frame's origin: sphere and solid centre, capsule end a
    c1: float
    c2: float
    e0: float  # capsule: its segment b - a; triangle: b - a, local (0 otherwise)
    e1: float
    e2: float
    r00: float  # world-from-local rotation (identity for spheres and capsules)
    r01: float
    r02: float
    r10: float
    r11: float
    r12: float
    r20: float
    r21: float
    r22: float
    h0: float  # box half extents; cylinder, cone (r, r, h/2); triangle: c - a, local
    h1: float
    h2: float
    first: int  # hull: its first vertex row in the HullSet; -1 for other kinds
    radius: float  # the radius inflating a sphere's or capsule's core; 0 for solids
    m0: float  # a point inside the core: capsule midpoint, hull centre, solid centre
    m1: float
    m2: float
    reach: float  # radius about m holding the whole shape, radius included


@njit(cache=True, inline="always")
def core_of(W, H, k):
    """The :class:`Core` of shape k of the world W (its HullSet's arrays H). A MESH reads as
    the CONVEX hull its row points to."""
    kind = W.kind[k]
    if kind == MESH:   # a mesh's support points are its hull's (its hull_id)
        kind = CONVEX
    c0, c1, c2 = W.a[k, 0], W.a[k, 1], W.a[k, 2]
    e0, e1, e2 = W.b[k, 0] - c0, W.b[k, 1] - c1, W.b[k, 2] - c2
    R = W.rot[k]
    h0, h1, h2 = W.half[k, 0], W.half[k, 1], W.half[k, 2]
    hull = W.hull_id[k]
    first = H.vertex_start[max(hull, 0)]
    radius = W.radius[k]
    m0, m1, m2 = c0, c1, c2
    reach = math.sqrt(h0 * h0 + h1 * h1 + h2 * h2)
    if kind == CONVEX:
        x0, x1, x2 = H.centre[hull, 0], H.centre[hull, 1], H.centre[hull, 2]
        m0 = c0 + R[0, 0] * x0 + R[0, 1] * x1 + R[0, 2] * x2
        m1 = c1 + R[1, 0] * x0 + R[1, 1] * x1 + R[1, 2] * x2
        m2 = c2 + R[2, 0] * x0 + R[2, 1] * x1 + R[2, 2] * x2
        reach = H.bound_radius[hull]
    else:
        first = -1
    if kind == CAPSULE:
        m0, m1, m2 = c0 + 0.5 * e0, c1 + 0.5 * e1, c2 + 0.5 * e2
        reach = 0.5 * math.sqrt(e0 * e0 + e1 * e1 + e2 * e2) + radius
    elif kind == SPHERE:
        reach = radius
    elif kind != CONVEX:
        radius = 0.0  # a cylinder's or cone's radius is its shape's, not an inflation
    return Core(kind, c0, c1, c2, e0, e1, e2, R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2],
                R[2, 0], R[2, 1], R[2, 2], h0, h1, h2, first, radius, m0, m1, m2, reach)


@njit(cache=True)
def triangle_core(a, b, c):
    """The :class:`Core` of triangle ``abc`` (3-tuples, m, any frame): origin ``a``, corners
    ``b - a`` and ``c - a`` in the e and h fields, rotation identity, centre the centroid, reach
    the largest corner distance from it, radius 0, no hull. Its support is the best corner
    (ties: the first of a, b, c)."""
    m0, m1, m2 = (a[0] + b[0] + c[0]) / 3.0, (a[1] + b[1] + c[1]) / 3.0, (a[2] + b[2] + c[2]) / 3.0
    reach = 0.0
    for x in (a, b, c):
        reach = max(reach, math.sqrt((x[0] - m0) ** 2 + (x[1] - m1) ** 2 + (x[2] - m2) ** 2))
    return Core(_TRIANGLE, a[0], a[1], a[2], b[0] - a[0], b[1] - a[1], b[2] - a[2],
                1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0,
                c[0] - a[0], c[1] - a[1], c[2] - a[2], NONE, 0.0, m0, m1, m2, reach)


@njit(cache=True)
def core_in_frame(C, R, t):
    """The core C (a :class:`Core`) expressed in the frame of rotation ``R`` (3x3: an array or
    a tuple of row tuples; frame to world) and origin ``t`` (3-tuple): every point x of C maps
    to ``R^T (x - t)``. Spheres and capsules keep the identity rotation (their segment ``e``
    turns); the other kinds turn their rotation (``R^T R_C``); the local fields (half extents,
    a triangle's corners, the hull) stay."""
    c0, c1, c2 = _back(R, C.c0 - t[0], C.c1 - t[1], C.c2 - t[2])
    m0, m1, m2 = _back(R, C.m0 - t[0], C.m1 - t[1], C.m2 - t[2])
    e0, e1, e2 = C.e0, C.e1, C.e2
    r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    if C.kind == CAPSULE or C.kind == SPHERE:
        e0, e1, e2 = _back(R, C.e0, C.e1, C.e2)
    else:
        r00, r10, r20 = _back(R, C.r00, C.r10, C.r20)  # the columns of R^T R_C
        r01, r11, r21 = _back(R, C.r01, C.r11, C.r21)
        r02, r12, r22 = _back(R, C.r02, C.r12, C.r22)
    return Core(C.kind, c0, c1, c2, e0, e1, e2, r00, r01, r02, r10, r11, r12, r20, r21, r22,
                C.h0, C.h1, C.h2, C.first, C.radius, m0, m1, m2, C.reach)


@njit(cache=True, inline="always")
def _back(R, x0, x1, x2):
    """``R^T x`` (R 3x3, an array or a tuple of row tuples)."""
    return (R[0][0] * x0 + R[1][0] * x1 + R[2][0] * x2,
            R[0][1] * x0 + R[1][1] * x1 + R[2][1] * x2,
            R[0][2] * x0 + R[1][2] * x1 + R[2][2] * x2)


@njit(cache=True)
def support(W, H, k, d0, d1, d2, out3):
    """Support point of shape k in world direction d written to out3 (3,); see the module docstring."""
    C = core_of(W, H, k)
    out3[0], out3[1], out3[2], _ = core_support(C, H.vertices, H.neighbor_start, H.neighbors, d0, d1, d2, NONE)


@njit(cache=True, inline="always")
def core_support(C, V, neighbor_start, neighbors, d0, d1, d2, hint):
    """Support point of the core C (a :class:`Core`) along (d0, d1, d2) and, for a hull, the index
    of its vertex (-1 otherwise): ``(x, y, z, vertex)``. ``V``, ``neighbor_start``, ``neighbors``
    are the HullSet's; ``hint`` (a vertex of the same hull, -1 for none) is where the hill climb
    over the hull's vertex graph starts: GJK and EPA pass the previous support vertex, usually next
    to the new one.

    Inlined into its callers, with ``core_point`` and ``solid_support``: a call that passes a
    ``Core`` (25 values) costs more than the support point itself (measured: a GJK iteration on a
    box and a cylinder took 450 ns through calls, 140 ns inlined). The hull's climb is inlined too
    (a call passing the three arrays took 20-50 ns more per climb, 2026-12-07)."""
    v0 = C.r00 * d0 + C.r10 * d1 + C.r20 * d2  # the direction in the shape's local frame: R^T d
    v1 = C.r01 * d0 + C.r11 * d1 + C.r21 * d2
    v2 = C.r02 * d0 + C.r12 * d1 + C.r22 * d2
    vertex, x0, x1, x2 = -1, 0.0, 0.0, 0.0
    if C.first >= 0:
        vertex, x0, x1, x2 = hull_climb(V, neighbor_start, neighbors, C.first, hint, v0, v1, v2)
    p0, p1, p2 = core_point(C, x0, x1, x2, d0, d1, d2, v0, v1, v2)
    return p0, p1, p2, vertex


@njit(cache=True, inline="always")
def core_point(C, x0, x1, x2, d0, d1, d2, v0, v1, v2):
    """World support point of C along d (v: d in C's frame) given its hull's support vertex x
    (local; unused for other kinds)."""
    if C.kind == CAPSULE:  # the segment's end b when it is farther along d, as an offset from a
        x0, x1, x2 = (C.e0, C.e1, C.e2) if C.e0 * d0 + C.e1 * d1 + C.e2 * d2 > 0.0 else (0.0, 0.0, 0.0)
    elif C.kind == TRIANGLE:  # the best corner, as an offset from a (ties: a, then b)
        x0, x1, x2 = 0.0, 0.0, 0.0
        best = 0.0
        value = C.e0 * v0 + C.e1 * v1 + C.e2 * v2
        if value > best:
            x0, x1, x2, best = C.e0, C.e1, C.e2, value
        if C.h0 * v0 + C.h1 * v1 + C.h2 * v2 > best:
            x0, x1, x2 = C.h0, C.h1, C.h2
    elif C.kind != CONVEX:
        x0, x1, x2 = solid_support(C.kind, C.h0, C.h1, C.h2, v0, v1, v2)
    return (C.c0 + C.r00 * x0 + C.r01 * x1 + C.r02 * x2,
            C.c1 + C.r10 * x0 + C.r11 * x1 + C.r12 * x2,
            C.c2 + C.r20 * x0 + C.r21 * x1 + C.r22 * x2)


@njit(cache=True, inline="always")
def solid_support(kind, h0, h1, h2, v0, v1, v2):
    """Local support point (x, y, z) of a BOX (half extents h), CYLINDER or CONE ((r, r, h/2)) in
    local direction v; (0, 0, 0) for any other kind."""
    tie = SUPPORT_TIE_RELATIVE * math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
    x0, x1, x2 = 0.0, 0.0, 0.0
    if kind == BOX:
        x0, x1, x2 = _signed(h0, v0, tie), _signed(h1, v1, tie), _signed(h2, v2, tie)
    elif kind == CYLINDER or kind == CONE:
        rho = math.hypot(v0, v1)
        if rho > tie:
            x0, x1 = h0 * (v0 / rho), h0 * (v1 / rho)
        if kind == CYLINDER:
            x2 = _signed(h2, v2, tie)
        elif v2 * h2 > v0 * x0 + v1 * x1 - v2 * h2:  # the apex (0, 0, h/2) beats the rim (x0, x1, -h/2)
            x0, x1, x2 = 0.0, 0.0, h2
        else:
            x2 = -h2
    return x0, x1, x2


@njit(cache=True, inline="always")
def hull_climb(V, neighbor_start, neighbors, first, hint, v0, v1, v2):
    """The hull vertex maximising V[i] . v, found by hill climbing over the hull's edges from
    ``hint`` (or ``first``, the hull's first vertex, when hint < 0): move to a strictly better
    neighbour until there is none. On a convex polytope a vertex no neighbour beats is a maximum
    (ties: a vertex of the maximal face). Returns (index, x, y, z); (-1, 0, 0, 0) when first < 0
    (not a hull)."""
    if first < 0:
        return -1, 0.0, 0.0, 0.0
    best = hint if hint >= 0 else first
    best_value = V[best, 0] * v0 + V[best, 1] * v1 + V[best, 2] * v2
    moved = True
    while moved:
        moved = False
        for j in range(neighbor_start[best], neighbor_start[best + 1]):
            i = neighbors[j]
            value = V[i, 0] * v0 + V[i, 1] * v1 + V[i, 2] * v2
            if value > best_value:
                best, best_value, moved = i, value, True
    return best, V[best, 0], V[best, 1], V[best, 2]


@njit(cache=True, inline="always")
def _signed(half, v, tie):
    """half if v > tie, -half if v < -tie, else 0 (the middle)."""
    if v > tie:
        return half
    if v < -tie:
        return -half
    return 0.0


@njit(cache=True)
def pair_support(C1, C2, V, neighbor_start, neighbors, d0, d1, d2, hint1, hint2):
    """The support points of core 1 along d and of core 2 along -d, with their hull vertices:
    ``(a0, a1, a2, b0, b1, b2, vertex1, vertex2)``; a - b is the support point of the Minkowski
    difference along d. The one call of an EPA iteration: ``core_support`` is inlined here
    (GJK's loop, which dominates a separated pair's cost, inlines the two ``core_support`` calls
    itself: 5 % of a demo-arm evaluation, ~4 s more compiling)."""
    a0, a1, a2, vertex1 = core_support(C1, V, neighbor_start, neighbors, d0, d1, d2, hint1)
    b0, b1, b2, vertex2 = core_support(C2, V, neighbor_start, neighbors, -d0, -d1, -d2, hint2)
    return a0, a1, a2, b0, b1, b2, vertex1, vertex2


@njit(cache=True)
def support_bound(C1, C2, V, neighbor_start, neighbors, n0, n1, n2, out_p1, out_p2):
    """Signed distance of the cores C1 and C2 if the unit world direction n (from 1 to 2) were
    the optimal normal: ``-(h_1(n) + h_2(-n))`` on the cores. Never more than the true signed
    distance: a lower bound of the distance (the gap between two separating planes), an upper bound
    of the depth (translating core 2 by it along n separates them). Returns the value (m) and
    writes witness points on the two supporting planes: the support points a of core 1 along n and
    b of core 2 along -n, each moved towards the other by half of their offset r = b - a - value n
    across n, so that p2 = p1 + value n (r is 0 where n is optimal and the contact a point)."""
    a0, a1, a2, b0, b1, b2, _, _ = pair_support(C1, C2, V, neighbor_start, neighbors, n0, n1, n2, NONE, NONE)
    value = n0 * (b0 - a0) + n1 * (b1 - a1) + n2 * (b2 - a2)
    out_p1[0], out_p1[1], out_p1[2] = a0, a1, a2
    out_p2[0], out_p2[1], out_p2[2] = b0, b1, b2
    settle_witnesses(out_p1, out_p2, n0, n1, n2, value)
    return value


@njit(cache=True)
def settle_witnesses(p1, p2, n0, n1, n2, distance):
    """Move witness points p1, p2 (3,) towards each other by half of r = p2 - p1 - distance * n
    each, so that p2 = p1 + distance * n holds (to rounding). r is rounding or a solver's last
    gap where the solvers end (and the support points' offset across n in EPA's fallback)."""
    for c, nc in ((0, n0), (1, n1), (2, n2)):
        half = 0.5 * (p2[c] - p1[c] - distance * nc)
        p1[c] += half
        p2[c] -= half
