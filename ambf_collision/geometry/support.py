"""Support functions of the bounded shape kinds (njit): the shape's point farthest along a direction.

``support(W, H, k, d0, d1, d2, out3)`` (the entry point for Python and other kernels) writes into ``out3`` (3,) the world point of shape ``k`` of
the world ``W`` (a ``World`` tuple, ``geometry/world_shapes.py``) that maximises ``d . x`` over the
shape, for a world direction ``d = (d0, d1, d2)`` of any non-zero length (metres for points; the
direction's unit does not matter). ``H`` is the ``Hulls`` tuple of the shapes' ``HullSet``.
Inside njit code ``support_vertex`` returns the point as a tuple with the hull vertex it chose
(hulls are searched by hill climbing over their edges, from a hint).

Spheres and capsules give their *core* (the centre; the end of the segment farther along d): the
caller adds ``radius * d / |d|``. This is what GJK works on (a swept sphere is the core inflated).

Ties (a face, edge or cap perpendicular to d) are broken by a fixed rule: along each local axis of
a box, cylinder or cone whose direction component is zero up to ``SUPPORT_TIE_RELATIVE`` times
|d|, the middle of the tied feature (a box face's centre, a cylinder cap's centre), so that a face
parallel up to rounding (a box resting on a plane, both moved by one frame) gives its centre and
not a corner picked by rounding noise; otherwise the first of the tied points (capsule end ``a``,
the lowest vertex index of a hull, the base rim before the apex of a cone). The value ``d . x``
then differs from the exact maximum by at most that fraction of |d| times the half extent.

PLANE has no bounded support map: the callers dispatch planes before (a plane gives its point
``offset * normal``; no exception is raised in the kernels).

Also here, for GJK/EPA and their checks: ``core_radius`` (the inflation of a sphere or capsule
core), ``shape_centre`` (a point inside the core), ``shape_reach`` (a radius about it holding the
shape) and ``support_bound`` (the signed-distance bound of two cores along a given normal).
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry.shapes import BOX, CAPSULE, CONE, CONVEX, CYLINDER, SPHERE
from ambf_collision.geometry.tolerances import SUPPORT_TIE_RELATIVE

__all__ = ["core_radius", "settle_witnesses", "shape_centre", "shape_reach", "support", "support_bound",
           "support_vertex"]


@njit(cache=True)
def support(W, H, k, d0, d1, d2, out3):
    """Support point of shape k in world direction d written to out3 (3,); see the module docstring."""
    out3[0], out3[1], out3[2], _ = support_vertex(W, H, k, d0, d1, d2, -1)


@njit(cache=True, inline="always")
def support_vertex(W, H, k, d0, d1, d2, hint):
    """Support point of shape k along (d0, d1, d2) and, for a hull, the index of its vertex (-1
    otherwise): ``(x, y, z, vertex)``. ``hint`` (a vertex of the same hull, -1 for none) is where
    the hill climb over the hull's vertex graph starts; GJK and EPA pass the previous support
    vertex, which is usually next to the new one.

    Inlined where it is called (numba ``inline="always"``): a call with the ``World`` and ``Hulls``
    tuples passes some 130 scalar arguments (~100 ns). Arrays are indexed through the tuples, never
    bound to a local name that lives across branches (numba would then keep their reference
    counting, atomic operations, on every call)."""
    kind = W.kind[k]
    c0, c1, c2 = W.a[k, 0], W.a[k, 1], W.a[k, 2]
    e0, e1, e2 = W.b[k, 0] - c0, W.b[k, 1] - c1, W.b[k, 2] - c2  # a capsule's segment (0 otherwise)
    h0, h1, h2 = W.half[k, 0], W.half[k, 1], W.half[k, 2]
    r00, r01, r02 = W.rot[k, 0, 0], W.rot[k, 0, 1], W.rot[k, 0, 2]  # identity for spheres, capsules
    r10, r11, r12 = W.rot[k, 1, 0], W.rot[k, 1, 1], W.rot[k, 1, 2]
    r20, r21, r22 = W.rot[k, 2, 0], W.rot[k, 2, 1], W.rot[k, 2, 2]
    hull = W.hull_id[k]
    first = H.vertex_start[max(hull, 0)]
    if hull < 0:
        first = -1
    # the direction in the shape's local frame: R^T d
    v0 = r00 * d0 + r10 * d1 + r20 * d2
    v1 = r01 * d0 + r11 * d1 + r21 * d2
    v2 = r02 * d0 + r12 * d1 + r22 * d2
    vertex, x0, x1, x2 = hull_climb(H.vertices, H.neighbor_start, H.neighbors, first, hint, v0, v1, v2)
    if kind == CAPSULE:  # the segment's end b when it is farther along d, as an offset from a
        x0, x1, x2 = (e0, e1, e2) if e0 * d0 + e1 * d1 + e2 * d2 > 0.0 else (0.0, 0.0, 0.0)
    elif kind != CONVEX:
        x0, x1, x2 = solid_support(kind, h0, h1, h2, v0, v1, v2)
    return (c0 + r00 * x0 + r01 * x1 + r02 * x2,
            c1 + r10 * x0 + r11 * x1 + r12 * x2,
            c2 + r20 * x0 + r21 * x1 + r22 * x2, vertex)


@njit(cache=True)
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


@njit(cache=True)
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


@njit(cache=True)
def _signed(half, v, tie):
    """half if v > tie, -half if v < -tie, else 0 (the middle)."""
    if v > tie:
        return half
    if v < -tie:
        return -half
    return 0.0


@njit(cache=True, inline="always")
def core_radius(W, k):
    """Radius (m) that inflates the core of shape k into the shape: sphere and capsule radius,
    0 for solids."""
    kind = W.kind[k]
    return W.radius[k] if kind == SPHERE or kind == CAPSULE else 0.0


@njit(cache=True, inline="always")
def shape_centre(W, H, k):
    """A point (x, y, z) inside the core of shape k (world): the capsule's midpoint, the hull's
    centre, the solid's or sphere's centre."""
    if W.kind[k] == CAPSULE:
        return 0.5 * (W.a[k, 0] + W.b[k, 0]), 0.5 * (W.a[k, 1] + W.b[k, 1]), 0.5 * (W.a[k, 2] + W.b[k, 2])
    if W.kind[k] == CONVEX:
        h = W.hull_id[k]
        c0, c1, c2 = H.centre[h, 0], H.centre[h, 1], H.centre[h, 2]
        return (W.a[k, 0] + W.rot[k, 0, 0] * c0 + W.rot[k, 0, 1] * c1 + W.rot[k, 0, 2] * c2,
                W.a[k, 1] + W.rot[k, 1, 0] * c0 + W.rot[k, 1, 1] * c1 + W.rot[k, 1, 2] * c2,
                W.a[k, 2] + W.rot[k, 2, 0] * c0 + W.rot[k, 2, 1] * c1 + W.rot[k, 2, 2] * c2)
    return W.a[k, 0], W.a[k, 1], W.a[k, 2]


@njit(cache=True, inline="always")
def shape_reach(W, H, k):
    """Radius (m) about shape_centre(k) that holds the whole shape, radius included."""
    kind = W.kind[k]
    if kind == CONVEX:
        return H.bound_radius[W.hull_id[k]]
    if kind == CAPSULE:
        d0, d1, d2 = W.b[k, 0] - W.a[k, 0], W.b[k, 1] - W.a[k, 1], W.b[k, 2] - W.a[k, 2]
        return 0.5 * math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) + W.radius[k]
    if kind == SPHERE:
        return W.radius[k]
    return math.sqrt(W.half[k, 0] ** 2 + W.half[k, 1] ** 2 + W.half[k, 2] ** 2)


@njit(cache=True, inline="always")
def support_bound(W, H, k1, k2, n0, n1, n2, out_p1, out_p2):
    """Signed distance of the cores of k1 and k2 if the unit world direction n (from k1 to k2)
    were the optimal normal: ``-(h_1(n) + h_2(-n))`` on the cores. Never more than the true signed
    distance: a lower bound of the distance (the gap between two separating planes), an upper bound
    of the depth (translating core 2 by it along n separates them). Returns the value (m) and
    writes witness points on the two supporting planes: the support points a of core 1 along n and
    b of core 2 along -n, each moved towards the other by half of their offset r = b - a - value n
    across n, so that p2 = p1 + value n (r is 0 where n is optimal and the contact a point)."""
    a0, a1, a2, _ = support_vertex(W, H, k1, n0, n1, n2, -1)
    b0, b1, b2, _ = support_vertex(W, H, k2, -n0, -n1, -n2, -1)
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
