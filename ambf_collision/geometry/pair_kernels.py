"""The distance between two shapes of a World, one compiled kernel per kind combination.

``pair_distance(W, H, k1, k2, out_p1, out_p2, out_n) -> d`` dispatches on the kinds. Semantics
(coal's ``Contact``): ``d`` is signed (> 0 gap, 0 touching, < 0 penetration depth: the minimum
translation that separates the shapes), metres; ``out_p1`` on shape 1 and ``out_p2`` on shape 2
(world); ``out_n`` the unit normal from shape 1 to shape 2, also when penetrating, with
``p2 = p1 + d n`` (up to rounding and the fallback normals). The contact position is the
midpoint of the witnesses (written by the caller).

The kernels, in one canonical order (the lower kind code first; the other order swaps the
witnesses and negates the normal, so both orders agree exactly):

* sphere/capsule - sphere/capsule: closest points of two segments (:mod:`segments`), in the
  order given (its fallback normals follow the order).
* sphere/capsule - box, cylinder, cone: the segment's lowest point of closest approach
  (:func:`~ambf_collision.geometry.solids.segment_solid`) and the solid's signed distance
  there; a sphere (zero-length segment) is the point signed distance, exact inside too. A
  capsule whose core enters a box: the separating-axis theorem; a cylinder or cone: GJK/EPA.
* anything - plane: the shape's support point along the plane's inward normal (the deepest end
  of a segment, ``a`` on ties), normal the plane's.
* sphere/capsule - hull, and any two of box, cylinder, cone, hull: GJK/EPA
  (``gjk.convex_distance``; sphere and capsule as their core plus the radius).
* plane - plane has no finite distance: refused where pair lists are made; here it gives
  ``+inf`` and the normal +z.

Numba details that shape the code (measured): passing arrays (or tuples of arrays, such as
``W``) into a function costs two atomic reference-count operations per array per call, and
passing large tuples of values costs copies. So the kernels take and return small values
(:class:`~ambf_collision.geometry.world_shapes.ShapeRow`, 3-tuples); :func:`closed_form`, the
dispatcher, is inlined into its callers and reads ``W`` itself; only :func:`convex_pair`
(GJK/EPA, support points of hulls) takes ``W`` and ``H``, called straight from the loops.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.gjk import convex_distance
from ambf_collision.geometry.points import solid_local
from ambf_collision.geometry.segments import capsule_distance
from ambf_collision.geometry.shapes import BOX, CAPSULE, CONVEX, PLANE
from ambf_collision.geometry.solids import capsule_box_penetration, segment_solid
from ambf_collision.geometry.support import support
from ambf_collision.geometry.world_shapes import local_point, shape_row, world_point, world_vector

__all__ = ["pair_distance", "closed_form", "convex_pair", "round_plane", "round_solid"]

_NO_POINT = (math.nan, math.nan, math.nan)


@njit(cache=True, error_model="numpy", inline="always")
def round_plane(r, p):
    """Sphere/capsule row ``r`` - plane row ``p``: ``(d, point on r, point on p, normal r ->
    p)``; the deepest end of the segment (``a`` on ties), normal ``-p.normal``."""
    n = p.normal
    e = r.a
    de = n[0] * e[0] + n[1] * e[1] + n[2] * e[2] - p.offset
    db = n[0] * r.b[0] + n[1] * r.b[1] + n[2] * r.b[2] - p.offset
    if db < de:
        e, de = r.b, db
    return (de - r.radius, (e[0] - r.radius * n[0], e[1] - r.radius * n[1], e[2] - r.radius * n[2]),
            (e[0] - de * n[0], e[1] - de * n[1], e[2] - de * n[2]), (-n[0], -n[1], -n[2]))


@njit(cache=True, error_model="numpy")
def round_solid(r, s):
    """Sphere/capsule row ``r`` - box, cylinder or cone row ``s``: ``(d, point on r, point on
    s, normal r -> s, done)``; ``done`` is False (and the rest nan) for a capsule whose core
    enters a cylinder or cone (GJK/EPA)."""
    h = s.half
    qa, qb = local_point(s, r.a), local_point(s, r.b)
    t = 0.0
    if r.a != r.b:
        t, enters = segment_solid(s.kind, qa[0], qa[1], qa[2], qb[0] - qa[0], qb[1] - qa[1],
                                  qb[2] - qa[2], h[0], h[1], h[2])
        if enters:   # the core segment is inside: the minimum translation
            if s.kind != BOX:
                return math.nan, _NO_POINT, _NO_POINT, _NO_POINT, False
            d, cap, box, n = capsule_box_penetration(qa, qb, r.radius, h)
            return d, world_point(s, cap), world_point(s, box), world_vector(s, n), True
    d, x0, x1, x2, n0, n1, n2 = solid_local(s.kind, qa[0] + t * (qb[0] - qa[0]),
                                            qa[1] + t * (qb[1] - qa[1]),
                                            qa[2] + t * (qb[2] - qa[2]), h[0], h[1], h[2])
    n = world_vector(s, (-n0, -n1, -n2))   # into the solid
    on = (r.a[0] + t * (r.b[0] - r.a[0]), r.a[1] + t * (r.b[1] - r.a[1]),
          r.a[2] + t * (r.b[2] - r.a[2]))
    rr = r.radius
    return (d - rr, (on[0] + rr * n[0], on[1] + rr * n[1], on[2] + rr * n[2]),
            world_point(s, (x0, x1, x2)), n, True)


@njit(cache=True, error_model="numpy", inline="always")
def _point(A, k):
    """Row ``k`` of an (N,3) array as a 3-tuple."""
    return A[k, 0], A[k, 1], A[k, 2]


@njit(cache=True, error_model="numpy", inline="always")
def closed_form(W, k1, k2):
    """The closed-form kernels (module docstring) for shapes ``k1``, ``k2`` of ``W`` in either
    order: ``(d, p1, p2, n, True)`` (witness on ``k1``, on ``k2``, normal ``k1 -> k2``), or
    ``done`` False for the pairs that need the hulls or GJK/EPA (:func:`convex_pair`).
    Inlined into its callers: it reads ``W`` and passes only values on (a call with the
    ``ShapeRow`` values of two shapes costs about as much as the capsule kernel itself)."""
    t1, t2 = W.kind[k1], W.kind[k2]
    if t1 <= CAPSULE and t2 <= CAPSULE:
        d, p1, p2, n = capsule_distance(_point(W.a, k1), _point(W.b, k1), W.radius[k1],
                                        _point(W.a, k2), _point(W.b, k2), W.radius[k2])
        return d, p1, p2, n, True
    swap = t2 <= CAPSULE
    kr, ko = (k2, k1) if swap else (k1, k2)
    if W.kind[kr] > CAPSULE or W.kind[ko] == CONVEX:
        return math.nan, _NO_POINT, _NO_POINT, _NO_POINT, False
    if W.kind[ko] == PLANE:
        d, pr, po, n = round_plane(shape_row(W, kr), shape_row(W, ko))
        done = True
    else:
        d, pr, po, n, done = round_solid(shape_row(W, kr), shape_row(W, ko))
    if swap:
        return d, po, pr, (-n[0], -n[1], -n[2]), done
    return d, pr, po, n, done


@njit(cache=True, error_model="numpy")
def convex_pair(W, H, k1, k2):
    """The pairs :func:`closed_form` leaves: ``(d, p1, p2, n)`` (3-tuples) for a plane with a
    box, cylinder, cone or hull (its support point along ``-normal``, ``support.py``: a face
    parallel up to rounding gives its centre; normal the plane's), and any two bounded shapes of
    which one is a hull or both are solids, or a capsule whose core enters a cylinder or cone:
    GJK/EPA (``gjk.convex_distance``; every status comes with a valid, bounded result,
    documented there). Two planes: refused where pair lists are made; here ``+inf`` and +z."""
    t1, t2 = W.kind[k1], W.kind[k2]
    x1, x2, n = np.empty(3), np.empty(3), np.empty(3)
    if t1 != PLANE and t2 != PLANE:
        d, status = convex_distance(W, H, k1, k2, x1, x2, n)
        return d, (x1[0], x1[1], x1[2]), (x2[0], x2[1], x2[2]), (n[0], n[1], n[2])
    if t1 == PLANE and t2 == PLANE:
        return (math.inf, (W.a[k1, 0], W.a[k1, 1], W.a[k1, 2]), (W.a[k2, 0], W.a[k2, 1], W.a[k2, 2]),
                (0.0, 0.0, 1.0))
    kp, ks = (k1, k2) if t1 == PLANE else (k2, k1)
    m = (W.normal[kp, 0], W.normal[kp, 1], W.normal[kp, 2])
    support(W, H, ks, -m[0], -m[1], -m[2], x1)
    d = m[0] * x1[0] + m[1] * x1[1] + m[2] * x1[2] - W.offset[kp]
    xs = (x1[0], x1[1], x1[2])
    xp = (xs[0] - d * m[0], xs[1] - d * m[1], xs[2] - d * m[2])
    if t1 == PLANE:   # the normal from shape 1 to shape 2
        return d, xp, xs, m
    return d, xs, xp, (-m[0], -m[1], -m[2])


@njit(cache=True, error_model="numpy")
def pair_distance(W, H, k1, k2, out_p1, out_p2, out_n):
    """Signed distance (m) between shapes ``k1`` and ``k2`` of ``W`` (hulls in ``H``); writes
    the witness points and the unit normal from shape 1 to shape 2 ((3,) each, world). See the
    module docstring."""
    d, p1, p2, n, done = closed_form(W, k1, k2)
    if not done:
        d, p1, p2, n = convex_pair(W, H, k1, k2)
    for i in range(3):
        out_p1[i], out_p2[i], out_n[i] = p1[i], p2[i], n[i]
    return d
