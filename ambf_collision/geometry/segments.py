"""Closed-form distances between spheres and capsules (closest points of two segments), compiled.

A capsule is segment ``p + s d`` (``s`` in [0, 1], metres) swept by a radius; a sphere is a
zero-length capsule. For each pair the closest points ``c1``, ``c2`` of the two segments are
found by clamped minimisation of ``|c2 - c1|^2`` over the unit square (Ericson's scheme):

1. ``s`` = line-line optimum, written as the projection of ``r = p1 - p2`` and ``d1`` onto the
   plane orthogonal to ``d2`` (``u = d1 - (d1.d2/|d2|^2) d2``, ``s = -(r_perp.u)/(u.u)``), which
   keeps nearly parallel segments accurate; parallel segments (``u = 0``) take ``s = 0``;
2. ``t`` = projection of ``c1`` onto segment 2, clamped to [0, 1];
3. ``s`` = projection of ``c2`` onto segment 1, clamped to [0, 1].

Then ``distance = |c2 - c1| - r1 - r2`` (signed: negative = penetration depth), normal
``n = (c2 - c1)/|c2 - c1|`` (from shape 1 to shape 2), witness points ``c1 + r1 n`` and
``c2 - r2 n``, position their midpoint.

Fallback normal when ``|c2 - c1| < COINCIDENT`` (crossing axes, coincident centres), in order:
the unit vector along ``d1 x d2`` when the segments are not parallel; else a unit vector
perpendicular to ``d1`` (``unit(d1 x e_k)``, ``e_k`` the axis of the smallest ``|d1_k|``, first
on ties) when segment 1 has a length; else minus the same construction for ``d2``; else ``+z``.
The first two cases flip sign when the shapes are swapped; the result is deterministic and
never NaN.

Near-coincident closest points (``|c2 - c1| < REFINE``) make ``c2 - c1`` a poor direction (its
rounding error is ~1e-16 m against a length of ~1e-12 m), so there the normal is re-derived from
the segment directions, which are exact: ``sign(w . c) c/|c|`` with ``c = d1 x d2`` when both
closest points are interior to non-parallel segments, else ``w`` with its components along
the direction(s) of the segment(s) whose closest point is interior removed.

``COINCIDENT``, ``REFINE`` and the parallel tests are in :mod:`~ambf_collision.geometry.tolerances`.
Scalar numba kernels on 3-tuples (no arrays: nothing to reference-count): :func:`capsule_distance`
(one pair), :func:`point_segment` (a point).
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry import tolerances as _tol

__all__ = ["capsule_distance", "closest_parameters", "fallback_normal", "refined_normal",
           "perpendicular", "point_segment"]

_COINCIDENT = _tol.COINCIDENT
_TINY = _tol.TINY_LENGTH_SQ
_REFINE = _tol.REFINE
_PARALLEL = _tol.PARALLEL_SINE
_REFINE_PARALLEL_SQ = _tol.REFINE_PARALLEL_SINE_SQ


@njit(cache=True, error_model="numpy")
def perpendicular(d0, d1, d2):
    """Unit vector perpendicular to ``d``: ``unit(d x e_k)`` with ``e_k`` the coordinate axis of
    the smallest ``|d_k|`` (the first on ties); +x for ``d = 0``."""
    if abs(d0) <= abs(d1) and abs(d0) <= abs(d2):
        x, y, z = 0.0, d2, -d1          # d x e_x
    elif abs(d1) <= abs(d2):
        x, y, z = -d2, 0.0, d0          # d x e_y
    else:
        x, y, z = d1, -d0, 0.0          # d x e_z
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return 1.0, 0.0, 0.0
    return x / n, y / n, z / n


@njit(cache=True, error_model="numpy", inline="always")
def point_segment(p, a, b):
    """Point ``p`` against segment ``a``-``b`` (3-tuples, metres): ``(L, c, n)``, the distance
    ``L``, the closest point ``c`` and the unit normal ``n`` from ``c`` towards ``p``. A point on
    its segment (``L < COINCIDENT``) gets :func:`perpendicular` of the segment direction, +z
    for a zero-length segment."""
    d = (b[0] - a[0], b[1] - a[1], b[2] - a[2])
    l2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2]
    t = 0.0
    if l2 > _TINY:
        t = ((p[0] - a[0]) * d[0] + (p[1] - a[1]) * d[1] + (p[2] - a[2]) * d[2]) / l2
        t = min(max(t, 0.0), 1.0)
    c = (a[0] + t * d[0], a[1] + t * d[1], a[2] + t * d[2])
    w0, w1, w2 = p[0] - c[0], p[1] - c[1], p[2] - c[2]
    L = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if L >= _COINCIDENT:
        return L, c, (w0 / L, w1 / L, w2 / L)
    if l2 > _TINY:
        return L, c, perpendicular(d[0], d[1], d[2])
    return L, c, (0.0, 0.0, 1.0)


@njit(cache=True, error_model="numpy", inline="always")
def closest_parameters(a1, b1, a2, b2):
    """Parameters ``s``, ``t`` in [0, 1] of the closest points ``a1 + s (b1 - a1)`` and
    ``a2 + t (b2 - a2)`` of two segments (3-tuples, metres), by the scheme of the module
    docstring."""
    d10, d11, d12 = b1[0] - a1[0], b1[1] - a1[1], b1[2] - a1[2]
    d20, d21, d22 = b2[0] - a2[0], b2[1] - a2[1], b2[2] - a2[2]
    r0, r1, r2 = a1[0] - a2[0], a1[1] - a2[1], a1[2] - a2[2]
    a = d10 * d10 + d11 * d11 + d12 * d12
    e = d20 * d20 + d21 * d21 + d22 * d22
    b = d20 * d10 + d21 * d11 + d22 * d12
    f = d20 * r0 + d21 * r1 + d22 * r2
    c = d10 * r0 + d11 * r1 + d12 * r2
    # 1 / max(|d|^2, TINY): for a zero-length segment d . x is exactly 0, so the large inverse
    # multiplies only zeros (segments under 1e-100 m act as points)
    ia = 1.0 / max(a, _TINY)
    ie = 1.0 / max(e, _TINY)
    # s: the line-line optimum, with u = d1 - (b/e) d2 and r_perp = r - (f/e) d2 (both
    # orthogonal to d2), which keeps nearly parallel segments accurate
    k, m = b * ie, f * ie
    u0, u1, u2 = d10 - k * d20, d11 - k * d21, d12 - k * d22
    p0, p1, p2 = r0 - m * d20, r1 - m * d21, r2 - m * d22
    s = -(p0 * u0 + p1 * u1 + p2 * u2) / max(u0 * u0 + u1 * u1 + u2 * u2, _TINY)
    s = min(max(s, 0.0), 1.0)
    t = min(max((b * s + f) * ie, 0.0), 1.0)
    s = min(max((b * t - c) * ia, 0.0), 1.0)
    return s, t


@njit(cache=True, error_model="numpy")
def fallback_normal(d1, d2):
    """The fallback normal for coincident closest points (module docstring), for directions
    ``d1``, ``d2`` (3-tuples): ``unit(d1 x d2)`` for non-parallel segments, else perpendicular
    to ``d1``, else minus perpendicular to ``d2``, else +z."""
    c0, c1, c2 = d1[1] * d2[2] - d1[2] * d2[1], d1[2] * d2[0] - d1[0] * d2[2], d1[0] * d2[1] - d1[1] * d2[0]
    l1 = math.sqrt(d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2])
    l2 = math.sqrt(d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2])
    lc = math.sqrt(c0 * c0 + c1 * c1 + c2 * c2)
    has1, has2 = l1 * l1 > _TINY, l2 * l2 > _TINY
    if has1 and has2 and lc > _PARALLEL * l1 * l2:
        return c0 / lc, c1 / lc, c2 / lc
    if has1:
        return perpendicular(d1[0], d1[1], d1[2])
    if has2:
        n0, n1, n2 = perpendicular(d2[0], d2[1], d2[2])
        return -n0, -n1, -n2
    return 0.0, 0.0, 1.0


@njit(cache=True, error_model="numpy")
def refined_normal(w, L, d1, d2, s, t):
    """Normal for near-coincident closest points (``L = |w| < REFINE``, ``w = c2 - c1``), from
    the segment directions ``d1``, ``d2`` and parameters ``s``, ``t`` (module docstring)."""
    n0, n1, n2 = w
    in1, in2 = 0.0 < s < 1.0, 0.0 < t < 1.0
    dd1 = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2]
    dd2 = d2[0] * d2[0] + d2[1] * d2[1] + d2[2] * d2[2]
    if in1 and dd1 > _TINY:   # remove the components along the interior directions
        k = (n0 * d1[0] + n1 * d1[1] + n2 * d1[2]) / dd1
        n0, n1, n2 = n0 - k * d1[0], n1 - k * d1[1], n2 - k * d1[2]
    if in2 and dd2 > _TINY:
        k = (n0 * d2[0] + n1 * d2[1] + n2 * d2[2]) / dd2
        n0, n1, n2 = n0 - k * d2[0], n1 - k * d2[1], n2 - k * d2[2]
    c0, c1, c2 = d1[1] * d2[2] - d1[2] * d2[1], d1[2] * d2[0] - d1[0] * d2[2], d1[0] * d2[1] - d1[1] * d2[0]
    wc = w[0] * c0 + w[1] * c1 + w[2] * c2
    if in1 and in2 and c0 * c0 + c1 * c1 + c2 * c2 > _REFINE_PARALLEL_SQ * dd1 * dd2 and wc != 0.0:
        sg = 1.0 if wc > 0.0 else -1.0
        n0, n1, n2 = sg * c0, sg * c1, sg * c2
    ln = math.sqrt(n0 * n0 + n1 * n1 + n2 * n2)
    if ln > 0.0 and L >= _COINCIDENT:
        return n0 / ln, n1 / ln, n2 / ln
    return fallback_normal(d1, d2)


@njit(cache=True, error_model="numpy", inline="always")
def capsule_distance(a1, b1, r1, a2, b2, r2):
    """Signed distance (m) between capsules ``(a1, b1, r1)`` and ``(a2, b2, r2)`` (segment ends as
    3-tuples, radii; a sphere is a zero-length capsule): ``(d, p1, p2, n)``, the witness points
    on both surfaces and the unit normal from capsule 1 to capsule 2 (3-tuples)."""
    s, t = closest_parameters(a1, b1, a2, b2)
    d1 = (b1[0] - a1[0], b1[1] - a1[1], b1[2] - a1[2])
    d2 = (b2[0] - a2[0], b2[1] - a2[1], b2[2] - a2[2])
    c1 = (a1[0] + s * d1[0], a1[1] + s * d1[1], a1[2] + s * d1[2])
    c2 = (a2[0] + t * d2[0], a2[1] + t * d2[1], a2[2] + t * d2[2])
    w = (c2[0] - c1[0], c2[1] - c1[1], c2[2] - c1[2])
    L = math.sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2])
    if L >= _REFINE:
        n = (w[0] / L, w[1] / L, w[2] / L)
    else:
        n = refined_normal(w, L, d1, d2, s, t)
    return (L - r1 - r2, (c1[0] + r1 * n[0], c1[1] + r1 * n[1], c1[2] + r1 * n[2]),
            (c2[0] - r2 * n[0], c2[1] - r2 * n[1], c2[2] - r2 * n[2]), n)
