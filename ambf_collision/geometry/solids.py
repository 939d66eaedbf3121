"""Segments against boxes, cylinders and cones, exactly (compiled scalar kernels).

Everything here works in the solid's local frame (metres): the segment is ``q(t) = qa + t u``,
``t`` in [0, 1]; the solid is centred at the origin with ``h``: box half extents, cylinder and cone
``(radius, radius, height/2)`` (cone: base at ``z = -h[2]``, apex at ``+h[2]``).

:func:`segment_solid` finds where the segment comes closest to the solid. Outside the solid the
squared distance ``g(t)`` along a line is convex and continuously differentiable, with
``g'/2 = (q - nearest) . u``. Its pieces are separated by *knots* where the nearest feature
changes (box: ``q_i = +-h_i``; cylinder: ``rho = R``, ``z = +-H``; cone: ``rho = R``, ``z = -H``, the
slant line and the borders of the slant's normal region at the rim and at the apex, all roots of
linear or quadratic equations in ``t``). The sign of ``g'`` at the knots brackets the minimum
inside one piece (no sorting, no candidate list), where it has a closed form (the active faces'
quadratic; the nearest approach to the axis; the slant line's stationary point; the apex's
projection) except on a rim circle, a quartic, solved by safeguarded Halley steps
(:func:`rim_minimiser`). Among equal minima (a segment parallel to a face) the point closest to
``qa`` wins: a slope of at least ``-FLAT_SLOPE |u|`` counts as flat.

Whether the segment enters the solid's interior is decided by the middle of the contact chord
(the first and the last closest point) when the closest point is within ``SURFACE_SLACK`` of
the surface. A capsule whose core segment enters a box gets the minimum translation of the
separating-axis theorem (:func:`capsule_box_penetration`); one entering a cylinder or cone goes
to GJK/EPA (``pair_kernels``).
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry import tolerances as tol
from ambf_collision.geometry.points import solid_local
from ambf_collision.geometry.shapes import BOX, CYLINDER

__all__ = ["segment_solid", "rim_minimiser", "capsule_box_penetration"]

_FLAT = tol.FLAT_SLOPE
_SLACK = tol.SURFACE_SLACK
_RIM_STEPS = tol.RIM_STEPS
_RIM_STEP = tol.RIM_CONVERGED_STEP
_RIM_BRACKET = tol.RIM_BRACKET
_AXIS = tol.PENETRATION_AXIS
_PARALLEL = tol.PENETRATION_PARALLEL


# ----------------------------------------------------------------------------------------- knots

@njit(cache=True, error_model="numpy")
def _radial_roots(px, py, ux, uy, A, B, X, s, c0, c1):
    """Both roots ``t`` of ``s^2 rho(t)^2 = (c0 + c1 t)^2`` (``rho``: distance from the z axis of
    ``p + t u``; ``A, B, X`` from :func:`_radial_terms`), as the stable pair ``q/a``, ``c/q``
    (nan or inf where there is none; a negative discriminant gives the vertex twice)."""
    vx = c0 * ux - c1 * px
    vy = c0 * uy - c1 * py
    s2 = s * s
    q = abs(s) * math.sqrt(max(vx * vx + vy * vy - s2 * X * X, 0.0))
    b = s2 * B - c0 * c1
    q = -(b + math.copysign(q, b))
    a = s2 * A - c1 * c1
    c = s2 * (px * px + py * py) - c0 * c0
    return q / a if a != 0.0 else math.nan, c / q if q != 0.0 else math.nan


@njit(cache=True, error_model="numpy")
def _radial_terms(px, py, ux, uy):
    """``rho(t)^2 = A t^2 + 2 B t + (px^2 + py^2)`` for ``p + t u``; ``X = (p x u)_z``."""
    return ux * ux + uy * uy, px * ux + py * uy, px * uy - py * ux


@njit(cache=True, error_model="numpy")
def _slant(R, H):
    """Outward unit normal ``(sr, sn)`` of the cone's slanted side in the (rho, z) half-plane."""
    L2 = R * R + 4.0 * H * H
    if L2 > 0.0:
        L = math.sqrt(L2)
        return 2.0 * H / L, R / L
    return 1.0, 0.0


@njit(cache=True, error_model="numpy")
def _knots(kind, px, py, pz, ux, uy, uz, h0, h1, h2):
    """The knots of ``g`` (module docstring) as a 10-tuple; entries outside (0, 1), nan and inf
    are ignored by the caller."""
    if kind == BOX:
        k = (math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
        if ux != 0.0:
            k = ((h0 - px) / ux, (-h0 - px) / ux, k[2], k[3], k[4], k[5])
        if uy != 0.0:
            k = (k[0], k[1], (h1 - py) / uy, (-h1 - py) / uy, k[4], k[5])
        if uz != 0.0:
            k = (k[0], k[1], k[2], k[3], (h2 - pz) / uz, (-h2 - pz) / uz)
        return (k[0], k[1], k[2], k[3], k[4], k[5], math.nan, math.nan, math.nan, math.nan)
    R, H = h0, h2
    A, B, X = _radial_terms(px, py, ux, uy)
    z_hi = (H - pz) / uz if uz != 0.0 else math.nan
    z_lo = (-H - pz) / uz if uz != 0.0 else math.nan
    r1, r2 = _radial_roots(px, py, ux, uy, A, B, X, 1.0, R, 0.0)            # rho = R
    if kind == CYLINDER:
        return (z_hi, z_lo, r1, r2, math.nan, math.nan, math.nan, math.nan, math.nan, math.nan)
    sr, sn = _slant(R, H)
    w = pz + H
    s1, s2 = _radial_roots(px, py, ux, uy, A, B, X, sr, R * sr - w * sn, -uz * sn)  # slant = 0
    b1, b2 = _radial_roots(px, py, ux, uy, A, B, X, sn, R * sn + w * sr, uz * sr)   # rim / slant
    a1, a2 = _radial_roots(px, py, ux, uy, A, B, X, sn, (pz - H) * sr, uz * sr)     # slant / apex
    return (z_lo, r1, r2, s1, s2, b1, b2, a1, a2, math.nan)


# ----------------------------------------------------------------------------------- the minimum

@njit(cache=True, error_model="numpy")
def _decreasing(kind, px, py, pz, ux, uy, uz, h0, h1, h2, t, flat, surface):
    """Whether the distance to the solid decreases along ``u`` at ``q(t)``: slope below
    ``-flat``, at a distance above ``surface`` (nearer, the normal is rounding noise: a point
    on the surface is a minimum)."""
    d, x0, x1, x2, n0, n1, n2 = solid_local(kind, px + t * ux, py + t * uy, pz + t * uz, h0, h1, h2)
    return d > surface and n0 * ux + n1 * uy + n2 * uz < -flat


@njit(cache=True, error_model="numpy")
def rim_minimiser(px, py, pz, ux, uy, uz, R, zr, lo, hi):
    """Minimiser in [lo, hi] of ``g(t) = (rho - R)^2 + (z - zr)^2``, the squared distance of
    ``q(t)`` to the circle of radius ``R`` at height ``zr`` (convex and smooth where rho >= R),
    given ``g'(lo) < 0 <= g'(hi)``: safeguarded Halley steps from the middle. With ``w = A t + B
    = rho rho'``: ``g'/2 = |u|^2 t + b - R w / rho``, ``g''/2 = |u|^2 - R X^2 / rho^3``,
    ``g'''/2 = 3 R X^2 w / rho^5``. A step leaving the bracket is replaced by bisection; stops
    after a Halley step below ``RIM_CONVERGED_STEP`` or a bracket below ``RIM_BRACKET``. An end
    of the bracket wins when ``g`` is no larger there (a minimum on the border of the rim's
    region, which bisection only approaches)."""
    A, B, X = _radial_terms(px, py, ux, uy)
    a2 = A + uz * uz
    b2 = B + (pz - zr) * uz
    RX2 = R * X * X
    lo0, hi0 = lo, hi
    t = 0.5 * (lo + hi)
    for _ in range(_RIM_STEPS):
        ir = min(1.0 / math.sqrt((px + t * ux) ** 2 + (py + t * uy) ** 2), 1e300)   # rho = 0 only if R = 0
        w = A * t + B
        c = RX2 * ir * ir * ir
        g1 = a2 * t + b2 - R * w * ir
        g2 = a2 - c
        if g1 > 0.0:
            hi = t
        else:
            lo = t
        step = g1 / (g2 - 1.5 * c * w * ir * ir * g1 / g2)
        tn = t - step
        halley = lo <= tn <= hi   # False for nan
        t = tn if halley else 0.5 * (lo + hi)
        if (halley and abs(step) <= _RIM_STEP) or hi - lo <= _RIM_BRACKET:
            break
    g = _rim_sq(px, py, pz, ux, uy, uz, R, zr, t)
    for end in (hi0, lo0):
        g_end = _rim_sq(px, py, pz, ux, uy, uz, R, zr, end)
        if g_end <= g:
            t, g = end, g_end
    return t


@njit(cache=True, error_model="numpy")
def _rim_sq(px, py, pz, ux, uy, uz, R, zr, t):
    """Squared distance of ``q(t)`` to the rim circle of radius ``R`` at height ``zr``."""
    return (math.sqrt((px + t * ux) ** 2 + (py + t * uy) ** 2) - R) ** 2 + (pz + t * uz - zr) ** 2


@njit(cache=True, error_model="numpy")
def _piece_minimiser(kind, px, py, pz, ux, uy, uz, h0, h1, h2, lo, hi):
    """Minimiser of ``g`` on the piece [lo, hi] between two knots (``g'(lo) < 0 <= g'(hi)``):
    the closed form of the piece's nearest feature, read at its middle. A piece inside the
    solid or on its surface (``g = 0``) starts at the minimum."""
    m = 0.5 * (lo + hi)
    x, y, z = px + m * ux, py + m * uy, pz + m * uz
    if solid_local(kind, x, y, z, h0, h1, h2)[0] <= 0.0:
        return lo
    v = math.nan
    if kind == BOX:   # the active faces' quadratic: sum over outside axes of (q_i - c_i)^2
        s0 = s1 = 0.0
        for q, p, u, h in ((x, px, ux, h0), (y, py, uy, h1), (z, pz, uz, h2)):
            if q > h or q < -h:
                s0 += (p - (h if q > h else -h)) * u
                s1 += u * u
        if s1 > 0.0:
            v = -(s0 / s1)
        return min(max(v, lo), hi) if v == v else hi
    R, H = h0, h2
    A, B, X = _radial_terms(px, py, ux, uy)
    rho = math.sqrt(x * x + y * y)
    if kind == CYLINDER:
        out_r, out_z = rho > R, abs(z) > H
        if out_r and out_z:
            return rim_minimiser(px, py, pz, ux, uy, uz, R, math.copysign(H, z), lo, hi)
        if out_r and A > 0.0:      # lateral: nearest approach to the axis
            v = -B / A
        elif out_z and uz != 0.0:  # over a cap: the cap plane
            v = (math.copysign(H, z) - pz) / uz
        return min(max(v, lo), hi) if v == v else hi
    # cone: the nearest feature as cone_local finds it (base disc, rim, slant, apex)
    sr, sn = _slant(R, H)
    L2 = R * R + 4.0 * H * H
    tt = min(max(((R - rho) * R + (z + H) * 2.0 * H) / (L2 if L2 > 0.0 else 1.0), 0.0), 1.0)
    br = min(rho, R)
    on_slant = (rho - R * (1.0 - tt)) ** 2 + (z - H * (2.0 * tt - 1.0)) ** 2 < (rho - br) ** 2 + (z + H) ** 2
    if (on_slant and tt <= 0.0) or (not on_slant and rho >= R):
        return rim_minimiser(px, py, pz, ux, uy, uz, R, -H, lo, hi)
    if not on_slant:                            # below the base disc
        if uz != 0.0:
            v = (-H - pz) / uz
    elif tt >= 1.0:                             # the apex: its projection on the line
        v = -(B + (pz - H) * uz) / (A + uz * uz)
    else:                                       # the slant: rho' = k = -sn uz / sr
        k = -sn * uz / sr if sr > 0.0 else math.inf
        if A > k * k:
            v = -B / A + k * abs(X) / (A * math.sqrt(A - k * k))
    return min(max(v, lo), hi) if v == v else hi


@njit(cache=True, error_model="numpy")
def _surface(px, py, pz, ux, uy, uz, h0, h1, h2):
    """Distance (m) from the surface within which a point counts as on it: ``SURFACE_SLACK``
    times the size of the local coordinates."""
    return _SLACK * (max(abs(px), abs(py), abs(pz)) + max(abs(ux), abs(uy), abs(uz))
                     + max(h0, h1, h2))


@njit(cache=True, error_model="numpy")
def _lowest_minimiser(kind, px, py, pz, ux, uy, uz, h0, h1, h2):
    """Lowest ``t`` in [0, 1] where the distance from ``q(t)`` to the solid is smallest (outside;
    the first point of contact when the segment touches or enters it)."""
    flat = _FLAT * math.sqrt(ux * ux + uy * uy + uz * uz)
    surface = _surface(px, py, pz, ux, uy, uz, h0, h1, h2)
    if not _decreasing(kind, px, py, pz, ux, uy, uz, h0, h1, h2, 0.0, flat, surface):
        return 0.0
    if _decreasing(kind, px, py, pz, ux, uy, uz, h0, h1, h2, 1.0, flat, surface):
        return 1.0
    lo, hi = 0.0, 1.0
    for tk in _knots(kind, px, py, pz, ux, uy, uz, h0, h1, h2):
        if 0.0 < tk < 1.0:
            if _decreasing(kind, px, py, pz, ux, uy, uz, h0, h1, h2, tk, flat, surface):
                lo = max(lo, tk)
            else:
                hi = min(hi, tk)
    if lo >= hi:
        return hi
    return _piece_minimiser(kind, px, py, pz, ux, uy, uz, h0, h1, h2, lo, hi)


@njit(cache=True, error_model="numpy")
def segment_solid(kind, px, py, pz, ux, uy, uz, h0, h1, h2):
    """``(t, enters)``: the lowest ``t`` where segment ``p + t u`` (local, ``u != 0``) comes
    closest to the solid, and whether the segment enters the solid's interior (then ``t`` is
    the first point of contact and the distance there ~0)."""
    t = _lowest_minimiser(kind, px, py, pz, ux, uy, uz, h0, h1, h2)
    d = solid_local(kind, px + t * ux, py + t * uy, pz + t * uz, h0, h1, h2)[0]
    if d > _surface(px, py, pz, ux, uy, uz, h0, h1, h2):
        return t, False
    # the last point of contact, from the other end; the chord between them is inside or on
    # the surface
    t_last = 1.0 - _lowest_minimiser(kind, px + ux, py + uy, pz + uz, -ux, -uy, -uz, h0, h1, h2)
    m = 0.5 * (t + t_last)
    return t, solid_local(kind, px + m * ux, py + m * uy, pz + m * uz, h0, h1, h2)[0] < 0.0


# ------------------------------------------------------------------------- capsule in a box: SAT

@njit(cache=True, error_model="numpy")
def capsule_box_penetration(qa, qb, r, h):
    """Minimum translation (coal/EPA semantics) of a capsule ``qa``-``qb`` (local 3-tuples),
    radius ``r``, whose core segment enters the box of half extents ``h`` (3-tuple), metres,
    exactly by the separating-axis theorem. Candidate axes: the 3 face normals, then
    ``unit((qb - qa) x e_i)`` (the face normal where that is shorter than ``PENETRATION_AXIS
    |qb - qa|``), each in both directions; ties go to the face axes (x, y, z), then the cross
    axes, and to the + direction.

    Returns ``(d, cap, box, n)``: ``d = -(depth + r)`` (<= -r), the witness on the capsule and
    the one on the box, the unit normal from the capsule to the box (moving the box by
    ``depth + r`` along it separates them), local 3-tuples. Witness: for a face axis the
    segment's deepest end (the middle of its part over the face when it is parallel to the
    face); for a cross axis the closest points of the segment and the box edge."""
    u = (qb[0] - qa[0], qb[1] - qa[1], qb[2] - qa[2])
    ulen = math.sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2])
    best, ax = math.inf, 0
    n = (0.0, 0.0, 0.0)
    for group in range(4):          # face +, face -, cross +, cross -
        for i in range(3):
            e = (1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0)
            if group >= 2:          # u x e_i
                c = (u[1] * e[2] - u[2] * e[1], u[2] * e[0] - u[0] * e[2], u[0] * e[1] - u[1] * e[0])
                lc = math.sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2])
                if lc > _AXIS * ulen:
                    e = (c[0] / lc, c[1] / lc, c[2] / lc)
            rb = abs(e[0]) * h[0] + abs(e[1]) * h[1] + abs(e[2]) * h[2]
            sa = e[0] * qa[0] + e[1] * qa[1] + e[2] * qa[2]
            sb = e[0] * qb[0] + e[1] * qb[1] + e[2] * qb[2]
            plus = group % 2 == 0
            over = max(sa, sb) + rb if plus else rb - min(sa, sb)
            if over < best:
                sg = 1.0 if plus else -1.0
                best, ax, n = over, i + 3 * (group >= 2), (sg * e[0], sg * e[1], sg * e[2])
    if ax < 3:   # face axis: the deepest end, or the middle of the part over the face
        pa = qa[0] * n[0] + qa[1] * n[1] + qa[2] * n[2]
        pb = qb[0] * n[0] + qb[1] * n[1] + qb[2] * n[2]
        t = 1.0 if pb > pa else 0.0
        if abs(pb - pa) <= _PARALLEL * ulen:
            t0, t1 = 0.0, 1.0
            for i in range(3):   # clipped to the face's slab in the other two coordinates
                if i != ax and u[i] != 0.0:
                    lo_i, hi_i = (-h[i] - qa[i]) / u[i], (h[i] - qa[i]) / u[i]
                    t0, t1 = max(t0, min(lo_i, hi_i)), min(t1, max(lo_i, hi_i))
            t = min(max(0.5 * (t0 + t1), 0.0), 1.0)
    else:        # cross axis: closest points of the segment line and the box edge along e_i,
        i = ax - 3   # the edge through the box's corner facing -n
        w = (qa[0] + _side(n[0], h[0], i == 0), qa[1] + _side(n[1], h[1], i == 1),
             qa[2] + _side(n[2], h[2], i == 2))
        den = ulen * ulen - u[i] * u[i]
        t = 0.5
        if den > 0.0:
            t = (u[i] * w[i] - (u[0] * w[0] + u[1] * w[1] + u[2] * w[2])) / den
        t = min(max(t, 0.0), 1.0)
    box = (min(max(qa[0] + t * u[0] - best * n[0], -h[0]), h[0]),   # clamped: rounding only
           min(max(qa[1] + t * u[1] - best * n[1], -h[1]), h[1]),
           min(max(qa[2] + t * u[2] - best * n[2], -h[2]), h[2]))
    k = best + r
    cap = (box[0] + k * n[0], box[1] + k * n[1], box[2] + k * n[2])
    return -k, cap, box, n


@njit(cache=True, error_model="numpy")
def _side(n, h, along):
    """``+h`` / ``-h`` / 0: minus the coordinate of the box corner facing ``-n`` (0 along the
    edge's own axis)."""
    if along or n == 0.0:
        return 0.0
    return h if n > 0.0 else -h
