"""Exact signed distances from points and segments to solids (box, cylinder, cone, plane, convex hull).

Everything is in metres and vectorised over K items of ONE solid kind (NumPy, no Python loop over
items; only BOX segment calls of a few rows run row by row in Python floats, with the same results).
A solid is given by its world pose: ``center`` (K,3) and ``rot`` (K,3,3) world-from-local, so
``x_world = rot @ x_local + center``.

Local geometry (``half`` (K,3)):

* BOX: half extents ``(hx, hy, hz)``, centred at the local origin.
* CYLINDER: ``(radius, radius, height/2)``, axis local z, centred.
* CONE: ``(radius, radius, height/2)``, axis local z, centred; base disc at ``z = -h/2``, apex at
  ``z = +h/2`` (as in Bullet and coal).
* PLANE: ``normal`` (K,3) unit and ``offset`` (K,) in world coordinates; solid where
  ``normal . x < offset``. ``center``/``rot``/``half`` are ignored.
* CONVEX: ``hull`` is a list of K local vertex arrays (M,3) or a :class:`CompiledHulls`
  (see :func:`compile_hulls`, build it once and reuse it).

Sign and normal conventions (both functions): ``d`` is the signed distance (negative inside, metres),
``nearest`` the nearest point on the solid's surface, ``n`` the outward unit normal of the solid at
``nearest``, so that ``point = nearest + d * n`` for both signs.

Deterministic fallbacks where the normal or the nearest point is not unique:

* box, point inside: the face with the smallest depth; ties go to the lowest axis (x, then y, then z)
  and to the + face when the coordinate is exactly 0.
* cylinder and cone: on the axis the radial direction is undefined and taken as local +x; inside a
  cylinder a tie between the lateral surface and a cap goes to the cap (z >= 0: top cap); inside a
  cone a tie between the slanted surface and the base goes to the base.
* convex hull: inside, the face plane of the smallest depth (lowest face index on ties); for a flat
  (coplanar) hull, a point in its plane gets the hull's plane normal.
* segments: among several minimisers (segment parallel to a face) the one closest to ``a``.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.shapes import BOX, CONE, CONVEX, CYLINDER, PLANE  # int kind codes (shapes imports no geometry)

__all__ = [
    "point_solid_distance",
    "segment_solid_distance",
    "segment_solid_distance_bisect",
    "capsule_box_penetration",
    "compile_hulls",
    "CompiledHulls",
    "convex_hull_triangles",
    "support_point",
]

#: Fixed number of bisection steps on [0, 1] for segments: 2**-56 is below float64 resolution of t.
SEGMENT_ITERATIONS = 56
# A directional derivative >= -_FLAT_TOL * |b - a| counts as "not decreasing": flat minima resolve to
# the point closest to a. Its effect on the distance is below 1e-13 * |b - a|.
_FLAT_TOL = 1e-13


# ----------------------------------------------------------------------------------------------------
# local-frame signed distance functions: q (N,3) local points, h (N,3) -> d (N,), nearest (N,3), n (N,3)


def _box_local(q, h):
    """Box of half extents h centred at the origin, axis aligned."""
    nearest = np.maximum(q, -h)  # as np.clip(q, -h, h), fewer NumPy calls
    np.minimum(nearest, h, out=nearest)  # outside: the nearest point; inside (or on the surface): q
    diff = q - nearest  # exactly 0 inside
    d_out = np.sqrt(np.einsum("ij,ij->i", diff, diff))
    inside = d_out <= 0.0
    if not inside.any():  # every point outside (segments near a box, usually): no face choice
        diff /= d_out[:, None]
        return d_out, nearest, diff
    # inside (or on the surface): nearest face, lowest axis on ties, + face at 0
    depth = np.abs(q)
    np.subtract(h, depth, out=depth)
    face = depth.argmin(1)[:, None] == _AXES
    face &= inside[:, None]
    sign = np.where(q >= 0.0, 1.0, -1.0)
    d = depth.min(1)
    np.negative(d, out=d)
    np.copyto(d, d_out, where=~inside)
    np.copyto(nearest, sign * h, where=face)
    np.copyto(d_out, 1.0, where=inside)
    diff /= d_out[:, None]
    np.copyto(diff, sign, where=face)
    return d, nearest, diff


def _radial(q):
    """Distance from the local z axis and the radial unit vector (local +x on the axis)."""
    r = np.hypot(q[:, 0], q[:, 1])
    ex, ey = _unit2(q[:, 0], q[:, 1])
    return r, ex, ey


def _unit2(x, y):
    """Unit vector along (x, y), (1, 0) for (0, 0). Scaled by max(|x|, |y|) first, so that tiny
    (subnormal) inputs keep full relative precision and nothing overflows."""
    m = np.maximum(np.abs(x), np.abs(y))
    zero = m == 0.0
    ms = np.where(zero, 1.0, m)
    xs = x / ms
    ys = y / ms
    ln = np.where(zero, 1.0, np.hypot(xs, ys))
    return np.where(zero, 1.0, xs / ln), np.where(zero, 0.0, ys / ln)


def _lift(r, z, ex, ey):
    """(radial, axial) coordinates in the meridian half-plane -> local 3-D points (N,3)."""
    p = np.empty((r.shape[0], 3))
    np.multiply(r, ex, out=p[:, 0])
    np.multiply(r, ey, out=p[:, 1])
    p[:, 2] = z
    return p


def _radial_xy(q):
    """Distance r (N,) from the local z axis and the radial unit vector e (N,2) (local +x on the
    axis), as :func:`_radial` (same values) with fewer array operations."""
    xy = q[:, :2]
    r = np.hypot(q[:, 0], q[:, 1])
    m = np.abs(xy).max(1)
    zero = m == 0.0
    np.copyto(m, 1.0, where=zero)
    e = xy / m[:, None]
    ln = np.hypot(e[:, 0], e[:, 1])
    np.copyto(ln, 1.0, where=zero)
    e /= ln[:, None]
    np.copyto(e, _EX2, where=zero[:, None])
    return r, e


def _cylinder_local(q, h):
    """Cylinder of radius h[:,0] and half height h[:,2] about local z."""
    R = h[:, 0]
    H = h[:, 2]
    z = q[:, 2]
    r, e = _radial_xy(q)
    sz = np.where(z >= 0.0, 1.0, -1.0)
    dr = r - R
    dz = np.abs(z)
    dz -= H
    er = np.maximum(dr, 0.0)
    ez = np.maximum(dz, 0.0)
    d_out = np.hypot(er, ez)
    inside = d_out <= 0.0
    lateral = dr > dz  # inside: nearer to the lateral surface than to a cap (tie -> cap)
    capward = ~lateral
    d = np.maximum(dr, dz)
    np.copyto(d, d_out, where=~inside)
    # (radial, axial) parts of the nearest point [0] and of the normal [1]
    rz = np.empty((2, 2, q.shape[0]))
    # nearest point: radius R beyond the lateral surface or inside nearer to it (else r); height
    # sz H beyond a cap or inside nearer to it (else z)
    np.copyto(rz[0, 0], r)
    np.copyto(rz[0, 0], R, where=lateral | (dr > 0.0))
    np.copyto(rz[1, 0], z)
    np.copyto(rz[1, 0], sz * H, where=capward | (dz > 0.0))
    np.copyto(d_out, 1.0, where=inside)
    np.divide(er, d_out, out=rz[0, 1])  # exactly 0 inside
    np.divide(ez, d_out, out=rz[1, 1])
    lateral &= inside
    capward &= inside
    np.copyto(rz[0, 1], 1.0, where=lateral)
    np.copyto(rz[1, 1], 1.0, where=capward)
    rz[1, 1] *= sz
    p = np.empty((2, q.shape[0], 3))
    np.multiply(rz[0, :, :, None], e, out=p[:, :, :2])
    p[:, :, 2] = rz[1]
    return d, p[0], p[1]


def _cone_local(q, h):
    """Cone of base radius h[:,0], half height h[:,2]: base disc at z=-H, apex at z=+H."""
    R = h[:, 0]
    H = h[:, 2]
    z = q[:, 2]
    r, ex, ey = _radial(q)
    L2 = R * R + 4.0 * H * H
    L = np.sqrt(L2)
    good = L > 0.0
    Ls = np.where(good, L, 1.0)
    # outward unit normal of the slanted side in the (r, z) half-plane
    sr = np.where(good, 2.0 * H / Ls, 1.0)
    sn = np.where(good, R / Ls, 0.0)
    slant = (r - R) * sr + (z + H) * sn  # signed distance to the slanted line
    base = -(z + H)  # signed distance to the base plane
    # outside: nearest point on the base segment (0,-H)-(R,-H) or the slant segment (R,-H)-(0,H)
    br = np.clip(r, 0.0, R)
    db2 = (r - br) ** 2 + base**2
    t = np.clip(((R - r) * R + (z + H) * 2.0 * H) / np.where(good, L2, 1.0), 0.0, 1.0)
    tr = R * (1.0 - t)
    tz = H * (2.0 * t - 1.0)
    ds2 = (r - tr) ** 2 + (z - tz) ** 2
    on_slant = ds2 < db2
    out_r = np.where(on_slant, tr, br)
    out_z = np.where(on_slant, tz, -H)
    d_out = np.sqrt(np.where(on_slant, ds2, db2))
    # a flat cone (R = 0 or H = 0) has no interior: slant <= 0 and base <= 0 would admit the whole
    # axis above the base (R = 0) or the whole base plane (H = 0)
    outside = ((slant > 0.0) | (base > 0.0) | (R == 0.0) | (H == 0.0)) & (d_out > 0.0)
    safe = np.where(outside, d_out, 1.0)
    use_base = base >= slant  # inside: tie -> base
    d_in = np.maximum(slant, base)
    d = np.where(outside, d_out, d_in)
    near_r = np.where(outside, out_r, np.where(use_base, r, r - slant * sr))
    near_z = np.where(outside, out_z, np.where(use_base, -H, z - slant * sn))
    near_r = np.maximum(near_r, 0.0)
    n_r = np.where(outside, (r - out_r) / safe, np.where(use_base, 0.0, sr))
    n_z = np.where(outside, (z - out_z) / safe, np.where(use_base, -1.0, sn))
    return d, _lift(near_r, near_z, ex, ey), _lift(n_r, n_z, ex, ey)


_AXES = np.arange(3)
_EX2 = np.array([1.0, 0.0])
_LOCAL_SDF = {BOX: _box_local, CYLINDER: _cylinder_local, CONE: _cone_local}


def _box_slope(q, h, u):
    """Directional derivative of the box SDF along u at q (same subgradient choice as _box_local),
    without building nearest points and normals: used inside the bisection loop."""
    diff = q - np.clip(q, -h, h)
    dd = np.einsum("ij,ij->i", diff, diff)
    outside = dd > 0.0
    g_out = np.einsum("ij,ij->i", diff, u) / np.sqrt(np.where(outside, dd, 1.0))
    axis = np.argmin(h - np.abs(q), axis=1)[:, None]
    qa = np.take_along_axis(q, axis, 1)[:, 0]
    ua = np.take_along_axis(u, axis, 1)[:, 0]
    g_in = np.where(qa >= 0.0, ua, -ua)
    return np.where(outside, g_out, g_in), outside


# ----------------------------------------------------------------------------------------------------
# convex hulls


def convex_hull_triangles(vertices, tol=1e-12):
    """Outward-oriented triangles of the convex hull of ``vertices`` (M,3): an int array (T,3).

    Incremental hull (run once per shape, not in the hot path). ``tol`` is relative to the size of the
    point set. Returns ``(triangles, flat)``: for a flat (coplanar) point set the triangles are a fan of
    its 2-D hull and ``flat`` is True; collinear or single points give degenerate triangles (flat).
    """
    P = np.asarray(vertices, dtype=float)
    if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 1 or not np.all(np.isfinite(P)):
        raise ValueError(f"convex hull vertices must be a finite (M,3) array with M >= 1, got shape {P.shape}")
    scale = max(float(np.max(np.abs(P - P.mean(axis=0)))), 1e-300)
    eps = tol * scale
    i0 = int(np.argmin(P[:, 0]))
    i1 = int(np.argmax(np.linalg.norm(P - P[i0], axis=1)))
    if np.linalg.norm(P[i1] - P[i0]) <= eps:
        return np.array([[i0, i0, i0]]), True
    u = (P[i1] - P[i0]) / np.linalg.norm(P[i1] - P[i0])
    w = P - P[i0]
    perp = w - np.outer(w @ u, u)
    i2 = int(np.argmax(np.linalg.norm(perp, axis=1)))
    if np.linalg.norm(perp[i2]) <= eps:
        return np.array([[i0, i1, i0]]), True
    nrm = np.cross(P[i1] - P[i0], P[i2] - P[i0])
    nrm /= np.linalg.norm(nrm)
    h = w @ nrm
    i3 = int(np.argmax(np.abs(h)))
    if abs(h[i3]) <= eps:
        return _flat_fan(P, i0, u, nrm), True
    faces = [(i0, i1, i2), (i0, i2, i3), (i0, i3, i1), (i1, i3, i2)] if h[i3] < 0 else [
        (i0, i2, i1), (i0, i3, i2), (i0, i1, i3), (i1, i2, i3)]

    def plane(f):
        a, b, c = P[f[0]], P[f[1]], P[f[2]]
        nn = np.cross(b - a, c - a)
        nn /= np.linalg.norm(nn)
        return nn, float(nn @ a)

    planes = [plane(f) for f in faces]
    for k in range(P.shape[0]):
        if k in (i0, i1, i2, i3):
            continue
        p = P[k]
        visible = [j for j, (nn, off) in enumerate(planes) if nn @ p - off > eps]
        if not visible:
            continue
        vis = set(visible)
        edges = {}
        for j in visible:
            a, b, c = faces[j]
            for e in ((a, b), (b, c), (c, a)):
                edges[e] = True
        horizon = [e for e in edges if (e[1], e[0]) not in edges]
        faces = [f for j, f in enumerate(faces) if j not in vis]
        planes = [pl for j, pl in enumerate(planes) if j not in vis]
        for a, b in horizon:
            f = (a, b, k)
            faces.append(f)
            planes.append(plane(f))
    return np.array(faces, dtype=np.int64), False


def _flat_fan(P, i0, u, nrm):
    """Fan triangles of the 2-D hull of coplanar points (monotone chain), oriented along nrm."""
    v = np.cross(nrm, u)
    xy = np.stack([(P - P[i0]) @ u, (P - P[i0]) @ v], axis=1)
    order = sorted(range(P.shape[0]), key=lambda i: (xy[i, 0], xy[i, 1]))

    def cross(o, a, b):
        return (xy[a, 0] - xy[o, 0]) * (xy[b, 1] - xy[o, 1]) - (xy[a, 1] - xy[o, 1]) * (xy[b, 0] - xy[o, 0])

    lower, upper = [], []
    for i in order:
        while len(lower) >= 2 and cross(lower[-2], lower[-1], i) <= 0:
            lower.pop()
        lower.append(i)
    for i in reversed(order):
        while len(upper) >= 2 and cross(upper[-2], upper[-1], i) <= 0:
            upper.pop()
        upper.append(i)
    ring = lower[:-1] + upper[:-1]  # counter-clockwise about nrm
    return np.array([(ring[0], ring[j], ring[j + 1]) for j in range(1, len(ring) - 1)], dtype=np.int64)


class CompiledHulls:
    """K convex hulls compiled once into flat triangle arrays (local coordinates, metres).

    ``tri`` (T,3,3) all triangles, ``owner`` (T,) item index, ``start`` (K,) first triangle of each
    item, ``plane_n`` (T,3) outward unit normals, ``plane_d`` (T,) offsets, ``flat`` (K,) bool.
    """

    def __init__(self, hulls):
        tris, owners, flats, normals = [], [], [], []
        memo = {}  # the same vertex array object used by several items is triangulated once
        self.vertices = []
        for k, V0 in enumerate(hulls):
            if id(V0) not in memo:
                V = np.array(V0, dtype=float)
                idx, flat = convex_hull_triangles(V)
                T = V[idx]
                nn = np.cross(T[:, 1] - T[:, 0], T[:, 2] - T[:, 0])
                ln = np.linalg.norm(nn, axis=1)
                nn = np.where(ln[:, None] > 0, nn / np.where(ln > 0, ln, 1.0)[:, None], np.array([0.0, 0.0, 1.0]))
                memo[id(V0)] = (V, T, flat, nn, V0)
            V, T, flat, nn, _ = memo[id(V0)]
            self.vertices.append(V)
            tris.append(T)
            owners.append(np.full(len(T), k))
            flats.append(flat)
            normals.append(nn)
        self.K = len(self.vertices)
        self.tri = np.concatenate(tris) if tris else np.zeros((0, 3, 3))
        self.owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)
        counts = np.array([len(t) for t in tris], dtype=np.int64)
        self.start = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self.flat = np.array(flats, dtype=bool)
        self.plane_n = np.concatenate(normals) if normals else np.zeros((0, 3))
        self.plane_d = np.einsum("ij,ij->i", self.plane_n, self.tri[:, 0])


def compile_hulls(hulls):
    """Compile a list of K local vertex arrays (M,3) into a reusable :class:`CompiledHulls`."""
    return hulls if isinstance(hulls, CompiledHulls) else CompiledHulls(hulls)


def _point_triangle(p, A, B, C):
    """Nearest points on triangles A,B,C (N,3) to points p (N,3); robust for degenerate triangles."""
    # candidates: the three edges, and the interior projection when it lies inside a proper triangle
    best = None
    best_d2 = None
    for P0, P1 in ((A, B), (B, C), (C, A)):
        e = P1 - P0
        ee = np.einsum("ij,ij->i", e, e)
        t = np.clip(np.einsum("ij,ij->i", p - P0, e) / np.where(ee > 0, ee, 1.0), 0.0, 1.0)
        x = P0 + t[:, None] * e
        dd = np.einsum("ij,ij->i", p - x, p - x)
        if best is None:
            best, best_d2 = x, dd
        else:
            m = dd < best_d2
            best = np.where(m[:, None], x, best)
            best_d2 = np.where(m, dd, best_d2)
    nn = np.cross(B - A, C - A)
    ln2 = np.einsum("ij,ij->i", nn, nn)
    proper = ln2 > 0
    s = np.where(proper, ln2, 1.0)
    x = p - (np.einsum("ij,ij->i", p - A, nn) / s)[:, None] * nn
    # barycentric signs via sub-triangle normals
    w0 = np.einsum("ij,ij->i", np.cross(B - x, C - x), nn)
    w1 = np.einsum("ij,ij->i", np.cross(C - x, A - x), nn)
    w2 = np.einsum("ij,ij->i", np.cross(A - x, B - x), nn)
    inside = proper & (w0 >= 0) & (w1 >= 0) & (w2 >= 0)
    dd = np.einsum("ij,ij->i", p - x, p - x)
    m = inside & (dd < best_d2)
    best = np.where(m[:, None], x, best)
    return best


def _convex_local(q, hulls: CompiledHulls, item):
    """Points q (N,3) local to hull ``item[j]`` (N,) -> d, nearest, n (local)."""
    N = q.shape[0]
    # all (point, triangle-of-its-hull) combinations
    counts = np.diff(np.append(hulls.start, len(hulls.tri)))[item]
    rep = np.repeat(np.arange(N), counts)
    tri_index = np.repeat(hulls.start[item] - np.concatenate([[0], np.cumsum(counts)[:-1]]), counts) + np.arange(
        counts.sum()
    )
    T = hulls.tri[tri_index]
    pq = q[rep]
    x = _point_triangle(pq, T[:, 0], T[:, 1], T[:, 2])
    diff = pq - x
    dd = np.einsum("ij,ij->i", diff, diff)
    first = np.concatenate([[0], np.cumsum(counts)[:-1]])
    # nearest surface point: minimal squared distance per point (lowest triangle on ties)
    order = np.lexsort((np.arange(len(dd)), dd, rep))
    pick = order[first]
    nearest = x[pick]
    d_abs = np.sqrt(dd[pick])
    # signed plane distances: max over faces is the signed distance for interior points
    sd = np.einsum("ij,ij->i", hulls.plane_n[tri_index], pq) - hulls.plane_d[tri_index]
    order2 = np.lexsort((np.arange(len(sd)), -sd, rep))
    face = order2[first]
    smax = sd[face]
    flat = hulls.flat[item]
    inside = (~flat) & (smax <= 0.0)
    pos = d_abs > 0.0
    safe = np.where(pos, d_abs, 1.0)
    n_face = hulls.plane_n[tri_index[face]]
    d = np.where(inside, smax, d_abs)
    nearest = np.where(inside[:, None], pq[first] - smax[:, None] * n_face, nearest)
    n = np.where((inside | ~pos)[:, None], n_face, (q - np.where(inside[:, None], q, nearest)) / safe[:, None])
    return d, nearest, n


# ----------------------------------------------------------------------------------------------------
# world-frame API


def _to_local(p, center, rot):
    return np.einsum("kji,kj->ki", rot, p - center)


def _to_world_point(x, center, rot):
    return np.einsum("kij,kj->ki", rot, x) + center


def _to_world_vec(v, rot):
    return np.einsum("kij,kj->ki", rot, v)


def _local_sdf(kind, q, half, hull, item):
    if kind == CONVEX:
        return _convex_local(q, hull, item)
    return _LOCAL_SDF[kind](q, half)


def _check_kind(kind):
    if kind not in (BOX, CYLINDER, CONE, PLANE, CONVEX):
        raise ValueError(f"solid_distance: kind {kind!r} is not a solid kind (BOX=2, CYLINDER=3, CONE=4, PLANE=5, CONVEX=6)")


def point_solid_distance(kind, points, center, rot, half, normal, offset, hull=None):
    """K points (K,3) against K solids of one ``kind``; see the module docstring for the arguments.

    Returns ``d`` (K,) signed distance point -> surface in metres (negative inside), ``nearest`` (K,3)
    the nearest surface point (world), ``n`` (K,3) the outward unit normal there (world), with
    ``point = nearest + d * n``.
    """
    _check_kind(kind)
    points = np.asarray(points, dtype=float)
    if kind == PLANE:
        normal = np.asarray(normal, dtype=float)
        d = np.einsum("ij,ij->i", normal, points) - np.asarray(offset, dtype=float)
        return d, points - d[:, None] * normal, normal.copy()
    if kind == CONVEX:
        hull = compile_hulls(hull)
    q = _to_local(points, center, rot)
    d, x, n = _local_sdf(kind, q, half, hull, np.arange(len(points)))
    return d, _to_world_point(x, center, rot), _to_world_vec(n, rot)


def segment_solid_distance_bisect(kind, a, b, center, rot, half, normal, offset, hull=None):
    """Reference (slow) version of :func:`segment_solid_distance`: 56 vectorised bisection steps.

    K segments a-b (K,3) against K solids of one ``kind``.

    Returns ``d`` (K,): the minimum over the segment of the solid's signed distance (metres; negative:
    the deepest penetration of the segment), ``on_segment`` (K,3) where it is attained (the point
    closest to ``a`` among ties), ``nearest`` (K,3) the nearest point on the solid's surface to it and
    ``n`` (K,3) the solid's outward unit normal there (pointing from the solid towards the segment).

    PLANE is closed form. For the other kinds the signed distance is convex along the segment; its
    minimiser is found by a fixed number of vectorised bisection steps on the sign of the directional
    derivative ``n . (b - a)`` (the normal is a subgradient of the signed distance), which resolves
    the parameter to float64 resolution also at kinks (edges, penetrating segments).
    """
    _check_kind(kind)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if kind == PLANE:
        normal = np.asarray(normal, dtype=float)
        offset = np.asarray(offset, dtype=float)
        da = np.einsum("ij,ij->i", normal, a) - offset
        db = np.einsum("ij,ij->i", normal, b) - offset
        use_b = db < da
        d = np.where(use_b, db, da)
        on = np.where(use_b[:, None], b, a)
        return d, on, on - d[:, None] * normal, normal.copy()
    if kind == CONVEX:
        hull = compile_hulls(hull)
    K = a.shape[0]
    item = np.arange(K)
    qa = _to_local(a, center, rot)
    u = _to_local(b, center, rot) - qa
    tol = -_FLAT_TOL * np.sqrt(np.einsum("ij,ij->i", u, u))
    lo = np.zeros(K)
    hi = np.ones(K)
    tm = np.empty(K)
    p = np.empty_like(qa)
    for _ in range(SEGMENT_ITERATIONS):
        np.add(lo, hi, out=tm)
        tm *= 0.5
        np.multiply(tm[:, None], u, out=p)
        p += qa
        if kind == BOX:
            left = _box_slope(p, half, u)[0] >= tol
        else:
            _, _, n = _local_sdf(kind, p, half, hull, item)
            left = np.einsum("ij,ij->i", n, u) >= tol
        np.copyto(hi, tm, where=left)
        np.copyto(lo, tm, where=~left)
    # final choice between the two ends of the bracket (exact endpoints 0 and 1 are reachable)
    t2 = np.concatenate([lo, hi])
    p2 = qa[np.r_[item, item]] + t2[:, None] * u[np.r_[item, item]]
    h2 = half[np.r_[item, item]] if half is not None else None
    d2, x2, n2 = _local_sdf(kind, p2, h2, hull, np.r_[item, item])
    take_hi = d2[K:] < d2[:K]
    sel = np.where(take_hi, item + K, item)
    d = d2[sel]
    t = t2[sel]
    return (
        d,
        a + t[:, None] * (b - a),  # in world coordinates: exactly a (b) at t = 0 (1)
        _to_world_point(x2[sel], center, rot),
        _to_world_vec(n2[sel], rot),
    )


SUPPORT_TIE = 16 * np.finfo(float).eps  # relative size of a direction component taken as zero


def support_point(kind, direction, center, rot, half, hull=None):
    """World point of each solid (K items) that is farthest along ``direction`` (K,3) (support map).

    Deterministic on ties: the centre of a face/cap/side line when the direction is perpendicular
    to it, the first vertex for hulls, the base rim (or base centre) before the apex for cones. A
    local direction component below ``SUPPORT_TIE`` times the direction's length counts as zero,
    so that a face that is parallel up to rounding (e.g. a box resting on a plane, both moved by
    the same frame) gives its centre and not a corner picked by rounding noise; the support value
    changes by at most that fraction of the half extent (~1e-15 m).
    """
    v = _to_local(np.asarray(direction, dtype=float), np.zeros_like(center), rot)
    tie = SUPPORT_TIE * np.sqrt(np.einsum("ij,ij->i", v, v))[:, None]
    sign = np.where(np.abs(v) > tie, np.sign(v), 0.0)
    if kind == BOX:
        x = sign * half
    elif kind in (CYLINDER, CONE):
        R = half[:, 0]
        H = half[:, 2]
        ex, ey = _unit2(v[:, 0], v[:, 1])
        axial = np.hypot(v[:, 0], v[:, 1]) <= tie[:, 0]  # along the axis: the cap/base centre
        s = np.where(axial, 0.0, R)
        rim = np.stack([ex * s, ey * s, -H if kind == CONE else sign[:, 2] * H], axis=1)
        if kind == CYLINDER:
            x = rim
        else:
            apex = np.stack([np.zeros_like(H), np.zeros_like(H), H], axis=1)
            use_apex = np.einsum("ij,ij->i", apex, v) > np.einsum("ij,ij->i", rim, v)
            x = np.where(use_apex[:, None], apex, rim)
    elif kind == CONVEX:
        hulls = compile_hulls(hull)
        x = np.empty_like(v)
        for k, V in enumerate(hulls.vertices):  # one vertex array per item (not in the per-pair hot path)
            x[k] = V[int(np.argmax(V @ v[k]))]
    else:
        raise ValueError(f"support_point: kind {kind!r} has no bounded support map")
    return _to_world_point(x, center, rot)


# ----------------------------------------------------------------------------------------------------
# fast segment distances: closed-form candidates for boxes, cylinders and cones

# pairs (j, k) of the 6 box face lines s * q_i(t) - h_i (j = 2 i + (s < 0)) whose crossings are the
# kinks of the inside distance max_j(...); _BOX_PAIRS: all j then all k, for one take
_PAIR_J, _PAIR_K = np.triu_indices(6, 1)
_BOX_PAIRS = np.concatenate([_PAIR_J, _PAIR_K])
_BOX_BUFFERS = {}


def _box_buffers(K):
    """Work arrays of :func:`_box_segment_t` for K items, allocated once per K (T keeps its end
    columns 0 and 1). Per-axis arrays are (3, K, M): the inner loops run over M candidates."""
    buf = _BOX_BUFFERS.get(K)
    if buf is None:
        T = np.empty((K, 30))
        T[:, 0] = 0.0
        T[:, 7] = 1.0
        buf = _BOX_BUFFERS[K] = (T, np.empty((K, 2, 6)), np.empty((K, 7)), np.empty((3, K, 7)),
                                 np.empty((3, K, 7)), np.empty((2, 3, K, 7)), np.empty((3, K, 30)),
                                 np.empty((3, K, 30)))
    return buf


def _box_dist(q, h):
    """Box signed distance only (same values as :func:`_box_local`), q (..., 3), h broadcastable."""
    diff = q - np.clip(q, -h, h)
    d_out = np.sqrt(np.einsum("...i,...i->...", diff, diff))
    d_in = np.max(np.abs(q) - h, axis=-1)
    return np.where(d_out > 0.0, d_out, d_in)


def _cylinder_dist(q, h):
    """Cylinder signed distance only (same values as :func:`_cylinder_local`)."""
    dr = np.hypot(q[..., 0], q[..., 1]) - h[..., 0]
    dz = np.abs(q[..., 2]) - h[..., 2]
    d_out = np.hypot(np.maximum(dr, 0.0), np.maximum(dz, 0.0))
    return np.where(d_out > 0.0, d_out, np.maximum(dr, dz))


def _cone_dist(q, h):
    """Cone signed distance only (same values as :func:`_cone_local`)."""
    R = h[..., 0]
    H = h[..., 2]
    z = q[..., 2]
    r = np.hypot(q[..., 0], q[..., 1])
    L2 = R * R + 4.0 * H * H
    good = L2 > 0.0
    Ls = np.sqrt(np.where(good, L2, 1.0))
    sr = np.where(good, 2.0 * H / Ls, 1.0)
    sn = np.where(good, R / Ls, 0.0)
    slant = (r - R) * sr + (z + H) * sn
    base = -(z + H)
    db2 = (r - np.clip(r, 0.0, R)) ** 2 + base**2
    t = np.clip(((R - r) * R + (z + H) * 2.0 * H) / np.where(good, L2, 1.0), 0.0, 1.0)
    ds2 = (r - R * (1.0 - t)) ** 2 + (z - H * (2.0 * t - 1.0)) ** 2
    d_out = np.sqrt(np.minimum(ds2, db2))
    outside = ((slant > 0.0) | (base > 0.0) | (R == 0.0) | (H == 0.0)) & (d_out > 0.0)  # see _cone_local
    return np.where(outside, d_out, np.maximum(slant, base))


_LOCAL_DIST = {BOX: _box_dist, CYLINDER: _cylinder_dist, CONE: _cone_dist}


def _box_segment_t(qa, u, h):
    """Parameter t in [0, 1] of the (lowest) minimiser of the box SDF along q(t) = qa + t u, exact.

    The minimiser is one of a finite set of candidates, all evaluated at once (K, 30):
    the ends; the 6 knots where a coordinate crosses +-h_i; on each of the 7 intervals between
    sorted knots the outside distance^2 is one quadratic in t (fixed set of outside axes), whose
    clipped vertex is a candidate; inside, the SDF is max_j of 6 lines whose 15 crossings are the
    remaining candidates. Among equal minima the lowest t wins (flat minima resolve towards a).
    A knot or crossing without a root (u_i = 0, parallel lines) becomes 0 or 1, an end that is a
    candidate anyway. Work arrays are reused per K (not thread-safe).
    """
    K = qa.shape[0]
    T, L, V, QM, C, Z, Q, C2 = _box_buffers(K)
    qt = qa.T[:, :, None]  # (3,K,1)
    ut = u.T[:, :, None]
    ht = h.T[:, :, None]
    nht = -ht
    with np.errstate(divide="ignore", invalid="ignore"):
        # face lines s q_i(t) - h_i = -(e_j - t m_j): e = (h - qa, h + qa), m = (u, -u)
        np.subtract(h, qa, out=L[:, 0, :3])
        np.add(h, qa, out=L[:, 0, 3:])
        L[:, 1, :3] = u
        np.negative(u, out=L[:, 1, 3:])
        np.divide(L[:, 0], L[:, 1], out=T[:, 1:7])  # knots: qa_i + t u_i = +-h_i
        P = L.take(_BOX_PAIRS, axis=2)  # (K,2,30)
        D = P[:, :, :15] - P[:, :, 15:]
        np.divide(D[:, 0], D[:, 1], out=T[:, 15:])  # crossings of the inside lines
        np.fmax(T, 0.0, out=T)  # nan -> 0, +-inf -> 1, 0 (vertex columns are overwritten below)
        np.fmin(T, 1.0, out=T)
        T[:, :8].sort(axis=1)
        left = T[:, 0:7]
        right = T[:, 1:8]
        # vertex of the outside distance^2 on each interval (fixed set of outside axes at its middle)
        np.add(left, right, out=V)
        V *= 0.5
        np.multiply(V, ut, out=QM)
        QM += qt
        np.maximum(QM, nht, out=C)  # clamped to the box: np.clip(QM, nht, ht) in fewer NumPy calls
        np.minimum(C, ht, out=C)
        act = QM != C  # outside on that axis, face value c = +-h
        np.subtract(qt, C, out=Z[0])
        np.copyto(Z[1], ut)
        Z *= act
        Z[0] *= Z[1]
        Z[1] *= Z[1]
        S = Z[:, 0] + Z[:, 2]  # sums over the axes in einsum's order: (x + z) + y
        S += Z[:, 1]
        np.divide(S[0], S[1], out=V)
        np.negative(V, out=V)
        np.fmax(V, left, out=V)  # nan (no outside axis) -> left
        np.fmin(V, right, out=T[:, 8:15])
    np.multiply(T, ut, out=Q)
    Q += qt
    # box signed distance at all candidates (as _box_dist)
    np.maximum(Q, nht, out=C2)
    np.minimum(C2, ht, out=C2)
    np.subtract(Q, C2, out=C2)
    C2 *= C2
    d_out = C2[0] + C2[2]
    d_out += C2[1]
    np.sqrt(d_out, out=d_out)
    if d_out.min() > 0.0:  # no candidate in the box (the segment stays outside): d = d_out
        d = d_out
    else:
        np.abs(Q, out=Q)
        Q -= ht
        d = np.maximum(Q[0], Q[1])
        np.maximum(d, Q[2], out=d)
        np.copyto(d, d_out, where=d_out > 0.0)
    # lowest t among the minima (values equal up to rounding: a few ulps of the coordinates)
    scale = np.abs(qa).max(1)
    scale += np.abs(u).max(1)
    scale += h.max(1)
    scale *= _TIE
    scale += d.min(1)
    return np.where(d <= scale[:, None], T, 2.0).min(1)


# ----------------------------------------------------------------------------------------------------
# BOX segments, a few rows: the same candidates and operations in Python floats

#: Up to this many rows a BOX segment call takes :func:`_box_segment_rows`: about 5 (few
#: candidates) to 13 us per row, against 55-75 us for the NumPy kernel's ~80 array calls at any
#: small K (bench/bench_solids.py).
BOX_SCALAR_ROWS = 4
_BOX_PAIR_LIST = tuple(zip(_PAIR_J.tolist(), _PAIR_K.tolist()))
_F64 = np.dtype(np.float64)


def _box_row_t(qx, qy, qz, ux, uy, uz, hx, hy, hz):
    """One row of :func:`_box_segment_t` in Python floats (local frame, metres): the minimiser t
    of the box SDF along q(t) = qa + t u, lowest among ties.

    Every candidate value and every distance is computed by the same IEEE operations in the same
    order as the NumPy kernel (bitwise equal). A knot or crossing outside (0, 1) is clamped there
    to 0 or 1 (nan and +-inf included), which are candidates anyway, so only interior ones are
    kept; equal candidates are evaluated once; a zero-width interval's vertex is its end."""
    e = (hx - qx, hy - qy, hz - qz, hx + qx, hy + qy, hz + qz)
    m = (ux, uy, uz, -ux, -uy, -uz)
    knots = [0.0, 1.0]
    for j in range(6):
        if m[j] != 0.0:
            x = e[j] / m[j]
            if 0.0 < x < 1.0:
                knots.append(x)
    knots.sort()
    cands = set(knots)
    for j, k in _BOX_PAIR_LIST:  # crossings of the inside lines
        x = m[j] - m[k]
        if x != 0.0:
            x = (e[j] - e[k]) / x
            if 0.0 < x < 1.0:
                cands.add(x)
    left = knots[0]
    for right in knots[1:]:
        if right != left:
            cands.add(_box_row_vertex(left, right, qx, qy, qz, ux, uy, uz, hx, hy, hz))
        left = right
    return _box_row_pick(cands, qx, qy, qz, ux, uy, uz, hx, hy, hz)


def _box_row_vertex(left, right, qx, qy, qz, ux, uy, uz, hx, hy, hz):
    """Minimiser on [left, right] of the outside distance^2 (outside axes fixed at the middle),
    as the kernel's vertex column: its sums run over the axes in the order x, z, y."""
    v = (left + right) * 0.5
    s0 = s1 = 0.0
    w = v * ux + qx
    if w > hx or w < -hx:
        s0 = (qx - (hx if w > hx else -hx)) * ux
        s1 = ux * ux
    w = v * uz + qz
    if w > hz or w < -hz:
        s0 += (qz - (hz if w > hz else -hz)) * uz
        s1 += uz * uz
    w = v * uy + qy
    if w > hy or w < -hy:
        s0 += (qy - (hy if w > hy else -hy)) * uy
        s1 += uy * uy
    if s1 != 0.0:
        v = -(s0 / s1)
        return v if left < v < right else (right if v >= right else left)
    return right if s0 < 0.0 else left  # -(s0 / 0): +inf -> right; -inf, nan -> left


def _box_row_pick(cands, qx, qy, qz, ux, uy, uz, hx, hy, hz):
    """Lowest t among the candidates whose box signed distance (as :func:`_box_dist`, squares
    summed x, z, y) is the minimum up to the kernel's tie tolerance."""
    best = []
    dmin = math.inf
    for t in cands:
        x = t * ux + qx
        y = t * uy + qy
        z = t * uz + qz
        s = 0.0
        if x > hx or x < -hx:
            s = x - (hx if x > hx else -hx)
            s *= s
        if z > hz or z < -hz:
            w = z - (hz if z > hz else -hz)
            s += w * w
        if y > hy or y < -hy:
            w = y - (hy if y > hy else -hy)
            s += w * w
        if s > 0.0:
            d = math.sqrt(s)
        else:  # inside: max(|q| - h) over the axes
            d = abs(x) - hx
            w = abs(y) - hy
            if w > d:
                d = w
            w = abs(z) - hz
            if w > d:
                d = w
        best.append((t, d))
        if d < dmin:
            dmin = d
    thr = (max(abs(qx), abs(qy), abs(qz)) + max(abs(ux), abs(uy), abs(uz)) + max(hx, hy, hz)) * _TIE + dmin
    return min([t for t, d in best if d <= thr])


def _box_segment_rows(a, b, center, rot, half):
    """BOX :func:`segment_solid_distance` row by row in Python floats (K <= BOX_SCALAR_ROWS):
    the NumPy path's results bit for bit (einsum's summation orders included), except the sign of a
    zero ``on_segment`` component where ``a`` has -0.0 and t = 0 (that path takes it from its work
    buffers). Returns None, for the NumPy path, unless 1 <= K <= BOX_SCALAR_ROWS, all five inputs
    are float64 ndarrays of shapes (K,3) / (K,3,3) with ``rot`` C-contiguous (einsum's order depends
    on the layout), the inputs are finite, the local coordinates of a and b below 1e100 in
    magnitude (no overflow) and the half extents positive."""
    for x in (a, b, center, rot, half):
        if type(x) is not np.ndarray or x.dtype != _F64:
            return None
    K = a.shape[0]
    if not (0 < K <= BOX_SCALAR_ROWS and a.shape == b.shape == center.shape == half.shape == (K, 3)
            and rot.shape == (K, 3, 3) and rot.flags.c_contiguous):
        return None
    A, B, C, H = a.tolist(), b.tolist(), center.tolist(), half.tolist()
    Rf = rot.ravel().tolist()
    out = [0.0] * (10 * K)  # d (K,), then on_segment, nearest, n (K,3) each: one array
    for k in range(K):
        ax, ay, az = A[k]
        bx, by, bz = B[k]
        cx, cy, cz = C[k]
        hx, hy, hz = H[k]
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = Rf[9 * k:9 * k + 9]
        # local frame as _to_local: einsum sums over j = 0, 1, 2 from 0.0
        px, py, pz = ax - cx, ay - cy, az - cz
        qx = 0.0 + (r00 * px + r10 * py + r20 * pz)
        qy = 0.0 + (r01 * px + r11 * py + r21 * pz)
        qz = 0.0 + (r02 * px + r12 * py + r22 * pz)
        px, py, pz = bx - cx, by - cy, bz - cz
        ux = (0.0 + (r00 * px + r10 * py + r20 * pz)) - qx
        uy = (0.0 + (r01 * px + r11 * py + r21 * pz)) - qy
        uz = (0.0 + (r02 * px + r12 * py + r22 * pz)) - qz
        # a non-finite input makes q or u non-finite (0 * inf is nan)
        if not (abs(qx) + abs(qy) + abs(qz) + abs(ux) + abs(uy) + abs(uz) < 1e100 and 0.0 < hx < 1e100
                and 0.0 < hy < 1e100 and 0.0 < hz < 1e100):
            return None
        t = _box_row_t(qx, qy, qz, ux, uy, uz, hx, hy, hz)
        d, (x0, x1, x2), (n0, n1, n2) = _box_point_row(qx + t * ux, qy + t * uy, qz + t * uz, hx, hy, hz)
        out[k] = d
        i = K + 3 * k
        out[i:i + 3] = ax + t * (bx - ax), ay + t * (by - ay), az + t * (bz - az)
        # world frame as _to_world_point / _to_world_vec: einsum sums over j in the order 0, 2, 1
        i += 3 * K
        out[i:i + 3] = ((0.0 + (r00 * x0 + r02 * x2 + r01 * x1)) + cx, (0.0 + (r10 * x0 + r12 * x2 + r11 * x1)) + cy,
                        (0.0 + (r20 * x0 + r22 * x2 + r21 * x1)) + cz)
        i += 3 * K
        out[i:i + 3] = (0.0 + (r00 * n0 + r02 * n2 + r01 * n1), 0.0 + (r10 * n0 + r12 * n2 + r11 * n1),
                        0.0 + (r20 * n0 + r22 * n2 + r21 * n1))
    out = np.array(out)
    on, near, n = out[K:].reshape(3, K, 3)
    return out[:K], on, near, n


def _box_point_row(x, y, z, hx, hy, hz):
    """One point of :func:`_box_local` in Python floats (local, metres): d, nearest, n as tuples,
    bitwise as the NumPy version (its einsum sums the squares in the order x, z, y)."""
    cx = hx if x > hx else (-hx if x < -hx else x)
    cy = hy if y > hy else (-hy if y < -hy else y)
    cz = hz if z > hz else (-hz if z < -hz else z)
    dx, dy, dz = x - cx, y - cy, z - cz
    d = math.sqrt(dx * dx + dz * dz + dy * dy)
    if d > 0.0:
        return d, (cx, cy, cz), (dx / d, dy / d, dz / d)
    # inside (or on the surface): the face of least depth, lowest axis on ties, + face at 0
    depth = (hx - abs(x), hy - abs(y), hz - abs(z))
    i = 0 if depth[0] <= depth[1] and depth[0] <= depth[2] else (1 if depth[1] <= depth[2] else 2)
    q = [x, y, z]
    s = 1.0 if q[i] >= 0.0 else -1.0
    n = [0.0, 0.0, 0.0]
    n[i] = s
    q[i] = s * (hx, hy, hz)[i]
    return -depth[i], tuple(q), tuple(n)


#: Halley steps on the squared rim distance always taken (fixed: an item's result never depends on
#: its batch); items not converged by then continue alone, up to RIM_STEPS in all.
RIM_FIXED_STEPS = 2
RIM_STEPS = 40
# the three quadratics rho = c0 + c1 t of the cylinder candidates: rho = R, and the inside switch
# rho - R = |z| - H for z >= 0 and for z < 0 (_CYL_ZSIGN: multiplier of z); the linear knots
# z = +H, -H, 0 (_CYL_HSIGN: multiplier of H)
_CYL_ZSIGN = np.array([0.0, 1.0, -1.0])
_CYL_HSIGN = np.array([1.0, -1.0, 0.0])
# per candidate column of _cylinder_segment_t: sign zs of z for the switch roots (0: not a switch root)
_CYL_SWITCH = np.array([0.0, 0.0, 0.0, 0.0, 1.0, -1.0, 0.0, 1.0, -1.0, 0.0, 0.0, 0.0])
_ENDS = np.array([0.0, 1.0])
_TIE = 4.0 * np.finfo(float).eps
_RIM_TOL = 16.0 * np.finfo(float).eps
_RANGES = {}


def _ranges(K, M):
    """(np.arange(K), np.arange(M)), built once per (K, M)."""
    r = _RANGES.get((K, M))
    if r is None:
        r = _RANGES[(K, M)] = (np.arange(K), np.arange(M))
    return r


def _rho_linear_roots(px, py, ux, uy, A, B, X, c0, c1, out_q, out_c, s=None):
    """Both roots t of ``s^2 rho(t)^2 = (c0 + c1 t)^2`` on the line ``p + t u`` (``rho``: distance
    from the local z axis; ``A``, ``B``, ``X`` from :func:`_radial_terms`; ``c0``, ``c1``, ``s``
    (K, M); ``s`` None means 1), as the stable pair ``q / a`` into ``out_q`` and ``c / q`` into
    ``out_c`` (no cancellation; nan where both vanish). A negative discriminant is clamped to 0
    (the vertex). Overwrites ``c0`` and ``c1``."""
    vx = c0 * ux[:, None]
    vx -= c1 * px[:, None]
    vy = c0 * uy[:, None]
    vy -= c1 * py[:, None]
    vx *= vx
    vy *= vy
    vx += vy
    rr = (px * px + py * py)[:, None]
    b = c0 * c1
    if s is None:
        vx -= (X * X)[:, None]
        np.maximum(vx, 0.0, out=vx)
        q = np.sqrt(vx, out=vx)
        np.subtract(B[:, None], b, out=b)
        a, c = A[:, None], rr
    else:
        s2 = s * s
        vx -= s2 * (X * X)[:, None]
        np.maximum(vx, 0.0, out=vx)
        q = np.sqrt(vx, out=vx)
        q *= np.abs(s)
        np.subtract(s2 * B[:, None], b, out=b)
        a, c = s2 * A[:, None], s2 * rr
    np.copysign(q, b, out=q)
    q += b
    np.negative(q, out=q)  # roots of a t^2 + 2 b t + c: q / a and c / q
    c1 *= c1
    np.subtract(a, c1, out=c1)
    np.divide(q, c1, out=out_q)
    c0 *= c0
    np.subtract(c, c0, out=c0)
    np.divide(c0, q, out=out_c)


def _radial_terms(px, py, ux, uy):
    """Radial quadratic of the segment ``p + t u`` about the local z axis:
    ``rho(t)^2 = A t^2 + 2 B t + (px^2 + py^2)``; ``X = (p x u)_z`` (``|u_xy|`` times the
    distance of the line from the axis)."""
    A = ux * ux
    A += uy * uy
    B = px * ux
    B += py * uy
    X = px * uy
    X -= py * ux
    return A, B, X


def _cylinder_segment_t(qa, u, h):
    """Parameter t in [0, 1] of the (lowest) minimiser of the cylinder SDF along q(t) = qa + t u.

    The SDF f(t) is convex; its minimum is at an end, a kink or a smooth stationary point. With
    rho(t) = |q_xy(t)| the 12 candidates (K, 12), evaluated in one pass, are: t = 0, 1; the closest
    approach to the axis t = -(p_xy . u_xy) / |u_xy|^2 (stationary point of the lateral distance,
    the axis crossing); rho = R; z = +-H and z = 0; the inside switch rho - R = |z| - H per sign of z.
    The three quadratics rho^2 = (c0 + c1 t)^2 use the discriminant |c0 u_xy - c1 p_xy|^2 - (p x u)_z^2
    (exactly 0 for a segment along the axis); a winning switch root gets one unsquared Newton polish.
    Only the rim distance sqrt((rho-R)^2 + (|z|-H)^2) has no closed-form stationary point (a
    quartic): when the best candidate borders a rim interval (its neighbouring candidates being the
    bracket), safeguarded Halley steps on its square (convex and smooth there) run for those items
    only (:func:`_rim_minimiser`). Among equal minima the lowest t wins (flat minima resolve
    towards a).
    """
    K = qa.shape[0]
    R = h[:, 0]
    H = h[:, 2]
    px, py, pz = qa[:, 0], qa[:, 1], qa[:, 2]
    ux, uy, uz = u[:, 0], u[:, 1], u[:, 2]
    A, B, X = _radial_terms(px, py, ux, uy)
    T = np.empty((K, 12))
    T[:, 0:2] = _ENDS
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        np.divide(B, A, out=T[:, 2])
        np.negative(T[:, 2], out=T[:, 2])
        c1 = uz[:, None] * _CYL_ZSIGN  # (K,3)
        c0 = pz[:, None] * _CYL_ZSIGN
        c0 += (R - H)[:, None]
        c0[:, 0] = R
        # rho = R (a negative discriminant gives the vertex: a harmless extra candidate)
        _rho_linear_roots(px, py, ux, uy, A, B, X, c0, c1, T[:, 3:6], T[:, 6:9])
        np.divide(H[:, None] * _CYL_HSIGN - pz[:, None], uz[:, None], out=T[:, 9:12])
    np.fmax(T, 0.0, out=T)  # nan (0/0) -> 0
    np.fmin(T, 1.0, out=T)

    def polish(t, col):
        zs = _CYL_SWITCH[col]
        use = zs != 0.0
        if use.any():
            _polish_root(t, use, qa, u, R, 1.0, -zs, H)  # (rho - R) - (zs z - H)
            return True
        return False

    def rim_test(q, tol):  # rho > R and |z| > H (up to rounding)
        return (np.hypot(q[..., 0], q[..., 1]) > R[:, None] - tol) & (np.abs(q[..., 2]) > H[:, None] - tol)

    def rim_z(q, v, hs, tb):  # the rim circle at the best candidate's side
        return np.copysign(hs[:, 2], q[:, 2] + tb * v[:, 2])

    return _candidates_minimum(CYLINDER, T, qa, u, h, A, B, X, polish, rim_test, rim_z)


def _candidates_minimum(kind, T, qa, u, h, A, B, X, polish, rim_test, rim_z):
    """Lowest minimiser t (K,) of the convex cylinder/cone SDF f along qa + t u, given candidate
    parameters T (K, M) in [0, 1] that contain every kink and every closed-form stationary point.

    f is evaluated at all candidates in one pass (sorted); among values equal up to rounding the
    lowest t wins; ``polish(t, column)`` refines a winning kink root in place. By convexity the
    minimum lies between the best candidate's neighbours; where those intervals belong to a rim
    (distance to a circle at z = ``rim_z``, no closed-form stationary point) the bracket is the
    run of rim intervals around the best candidate (``rim_test`` on interval midpoints, with a
    rounding tolerance; zero-width intervals join runs, so near-duplicate candidates such as a
    tangency's two roots do not cut a rim interval), and :func:`_rim_minimiser` runs for those
    items only; its result replaces the candidate when f is lower there.
    """
    K, M = T.shape
    r0, idx = _ranges(K, M - 1)
    rows = r0[:, None]
    order = T.argsort(axis=1)
    T = T[rows, order]
    ut = u.T[:, :, None]
    qt = qa.T[:, :, None]
    Q = T * ut
    Q += qt  # (3,K,M), as qa + t u; the per-axis layout keeps the inner loops over the M candidates
    dist = _LOCAL_DIST[kind]
    f = dist(Q.transpose(1, 2, 0), h[:, None, :])
    j = f.argmin(axis=1)
    fmin = f.min(1)
    tb = T[r0, j]
    s = np.abs(qa)
    s += np.abs(u)
    s += h
    scale = s.max(axis=1)
    tol = scale * _TIE
    tol += fmin
    jt = (f <= tol[:, None]).argmax(axis=1)  # lowest t among the minima (equal up to rounding)
    t = T[r0, jt]
    tp = t.copy()
    if polish(tp, order[r0, jt]):  # kept where it lowers f (a kink root next to the axis: rho' jumps)
        np.copyto(t, tp, where=dist(qa + tp[:, None] * u, h) < f[r0, jt])
    Qm = T[:, 1:] + T[:, :-1]
    Qm *= 0.5
    Qm = Qm * ut
    Qm += qt  # interval midpoints (3,K,M-1)
    scale *= _RIM_TOL
    ok = rim_test(Qm.transpose(1, 2, 0), scale[:, None])
    ok |= T[:, 1:] == T[:, :-1]
    jj = j[:, None]
    lb = np.where(~ok & (idx < jj), idx, -1).max(axis=1)  # last non-rim interval left of tb
    rb = np.where(~ok & (idx >= jj), idx, M - 1).min(axis=1)  # first one right of tb
    lo = T[r0, lb + 1]
    hi = T[r0, rb]
    if ((lo == tb) & (hi == tb)).all():  # no rim interval next to any best candidate (common)
        return t
    # g'/2 at tb (see _rim_minimiser): a bracket end with g' pointing out of it is the minimum
    sH = rim_z(qa, u, h, tb)
    uz = u[:, 2]
    x = tb * u[:, 0]
    x += qa[:, 0]
    y = tb * u[:, 1]
    y += qa[:, 1]
    w = A * tb
    w += B
    with np.errstate(divide="ignore", invalid="ignore"):
        w *= h[:, 0] / np.hypot(x, y)  # R rho' (nan on the axis: kept below)
    g1 = uz * uz
    g1 += A
    g1 *= tb
    g1 += B
    g1 += (qa[:, 2] - sH) * uz
    g1 -= w
    need = ~(((lo == tb) | (g1 <= 0.0)) & ((hi == tb) | (g1 >= 0.0)))  # nan: needed
    if need.any():
        sel = slice(None) if need.all() else np.flatnonzero(need)
        qs, us, hs, tbs = qa[sel], u[sel], h[sel], tb[sel]
        tn = _rim_minimiser(qs, us, hs[:, 0], sH[sel], A[sel], B[sel], X[sel], tbs.copy(), lo[sel], hi[sel])
        better = dist(qs + tn[:, None] * us, hs) < fmin[sel]
        t[sel] = np.where(better, tn, t[sel])
    return t


def _polish_root(t, use, qa, u, R, al, be, ga):
    """One Newton step, in place, on t (K,) where ``use``: a root of the kink equation
    phi = al (rho - R) + be z + ga = 0, evaluated unsquared as the SDF computes its pieces (the
    squared quadratic leaves a few ulps of t that the kink's slope turns into a few ulps of
    distance). Steps above 1e-9 are not taken; t stays in [0, 1]."""
    x = t * u[:, 0]
    x += qa[:, 0]
    y = t * u[:, 1]
    y += qa[:, 1]
    z = t * u[:, 2]
    z += qa[:, 2]
    rho = np.hypot(x, y)
    x *= u[:, 0]
    y *= u[:, 1]
    x += y
    with np.errstate(divide="ignore", invalid="ignore"):
        x /= rho
        x *= al
        y = be * u[:, 2]
        x += y  # phi'
        z *= be
        rho -= R
        rho *= al
        rho += z
        rho += ga  # phi
        rho /= x
    ok = np.abs(rho) <= 1e-9  # False for nan
    ok &= use
    np.subtract(t, rho, out=t, where=ok)
    np.clip(t, 0.0, 1.0, out=t)


# per candidate column of _cone_segment_t: the inside switch slant = base roots (polished when they win)
_CONE_SWITCH = np.zeros(16, dtype=bool)
_CONE_SWITCH[[10, 15]] = True


def _cone_segment_t(qa, u, h):
    """Parameter t in [0, 1] of the (lowest) minimiser of the cone SDF along q(t) = qa + t u.

    In the (rho, z) half-plane the cone is the triangle (0, -H), (R, -H), (0, H) with slant
    outward normal (sr, sn). The SDF f(t) is convex; the 16 candidates (K, 16), evaluated in one
    pass, are: t = 0, 1; the axis approach -(p_xy . u_xy) / |u_xy|^2; the slant's stationary point
    (rho' = -sn u_z / sr, closed form); the apex's projection on the line; z = -H; and the roots of
    five equations s rho = e0 + e1 t (quadratics, discriminant as for the cylinder): rho = R, the
    slant line, the region borders rim/slant and slant/apex (normal rays of the slant at rim and
    apex), and the inside switch slant = base. Where the minimum lies strictly inside a base-rim
    interval, safeguarded Halley steps on the squared rim distance (:func:`_rim_minimiser`).
    Among equal minima the lowest t wins.
    """
    K = qa.shape[0]
    R = h[:, 0]
    H = h[:, 2]
    L2 = R * R + 4.0 * H * H
    good = L2 > 0.0
    Ls = np.sqrt(np.where(good, L2, 1.0))
    sr = np.where(good, 2.0 * H / Ls, 1.0)
    sn = np.where(good, R / Ls, 0.0)
    px, py, pz = qa[:, 0], qa[:, 1], qa[:, 2]
    ux, uy, uz = u[:, 0], u[:, 1], u[:, 2]
    A, B, X = _radial_terms(px, py, ux, uy)
    w = pz + H  # height above the base at t = 0
    T = np.empty((K, 16))
    T[:, 0:2] = _ENDS
    S = np.empty((K, 5))
    E0 = np.empty((K, 5))
    E1 = np.empty((K, 5))
    sn1 = 1.0 + sn
    S[:, 0] = 1.0  # rho = R
    E0[:, 0] = R
    E1[:, 0] = 0.0
    S[:, 1] = sr  # slant = 0: sr rho = R sr - (z + H) sn
    E0[:, 1] = R * sr - w * sn
    E1[:, 1] = -uz * sn
    S[:, 2] = sn  # rim/slant border: sn rho = R sn + (z + H) sr
    E0[:, 2] = R * sn + w * sr
    E1[:, 2] = uz * sr
    S[:, 3] = sn  # slant/apex border: sn rho = (z - H) sr
    E0[:, 3] = (pz - H) * sr
    E1[:, 3] = E1[:, 2]
    S[:, 4] = sr  # inside switch slant = base: sr rho = R sr - (z + H)(1 + sn)
    E0[:, 4] = R * sr - w * sn1
    E1[:, 4] = -uz * sn1
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        np.divide(B, A, out=T[:, 2])
        np.negative(T[:, 2], out=T[:, 2])
        k = -sn * uz / sr  # slant stationary: rho' = k, rho' = A tau / sqrt(A tau^2 + X^2 / A)
        T[:, 3] = T[:, 2] + k * np.abs(X) / (A * np.sqrt(A - k * k))  # nan when |k| >= sqrt(A)
        T[:, 4] = -(B + (pz - H) * uz) / (A + uz * uz)  # the apex (0, 0, H) projected on the line
        T[:, 5] = -w / uz  # z = -H
        _rho_linear_roots(px, py, ux, uy, A, B, X, E0, E1, T[:, 6:11], T[:, 11:16], S)
    np.fmax(T, 0.0, out=T)  # nan -> 0
    np.fmin(T, 1.0, out=T)

    def polish(t, col):
        use = _CONE_SWITCH[col]
        if use.any():
            _polish_root(t, use, qa, u, R, sr, sn1, sn1 * H)  # slant - base
            return True
        return False

    def rim_test(q, tol):  # (rho - R, z + H) inside the base rim's normal cone (up to rounding)
        dr = np.hypot(q[..., 0], q[..., 1]) - R[:, None]
        ok = dr > -tol
        dr *= sn[:, None]
        dr -= (q[..., 2] + H[:, None]) * sr[:, None]
        ok &= dr > -tol
        return ok

    def rim_z(q, v, hs, tb):
        return -hs[:, 2]

    return _candidates_minimum(CONE, T, qa, u, h, A, B, X, polish, rim_test, rim_z)


def _rim_minimiser(qa, u, R, sH, A, B, X, t, lo, hi):
    """Minimiser in [lo, hi] of g(t) = (rho - R)^2 + (z - sH)^2, the squared distance of qa + t u
    to the rim circle at z = sH (convex and smooth where rho >= R), by safeguarded Halley steps
    from t (arrays t, lo, hi are overwritten). With w = A t + B = rho rho' and X = (p x u)_z:
    g'/2 = |u|^2 t + b - R w / rho, g''/2 = |u|^2 - R X^2 / rho^3, g'''/2 = 3 R X^2 w / rho^5.
    The bracket keeps the sign change of g' and a step leaving it is replaced by bisection.
    RIM_FIXED_STEPS steps for all items, then each item stops (keeping its value, whatever the
    batch) after a step below 1e-6 (cubic convergence: the next would be ~1e-18) or when its
    bracket is below 1e-15."""
    P2 = qa[:, :2].T
    U2 = u[:, :2].T
    uz = u[:, 2]
    a2 = uz * uz
    a2 += A
    b2 = qa[:, 2] - sH
    b2 *= uz
    b2 += B
    RX2 = X * X
    RX2 *= R
    XY = np.empty_like(P2)
    ir, w, c, g1, g2, h3, tn = (np.empty_like(t) for _ in range(7))
    up = np.empty(t.shape, dtype=bool)
    ok = np.empty(t.shape, dtype=bool)
    active = None
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in range(RIM_STEPS):
            np.multiply(U2, t, out=XY)
            XY += P2
            np.hypot(XY[0], XY[1], out=ir)
            np.divide(1.0, ir, out=ir)  # 1 / rho
            np.minimum(ir, 1e300, out=ir)  # rho = 0 (only if R = 0): the R terms below stay 0
            np.multiply(A, t, out=w)
            w += B  # rho rho'
            np.multiply(RX2, ir, out=c)
            c *= ir
            c *= ir  # R X^2 / rho^3
            np.multiply(a2, t, out=g1)
            g1 += b2
            np.multiply(R, w, out=tn)
            tn *= ir
            g1 -= tn  # g'/2
            np.subtract(a2, c, out=g2)  # g''/2
            np.greater(g1, 0.0, out=up)
            np.copyto(hi, t, where=up)
            np.logical_not(up, out=up)
            np.copyto(lo, t, where=up)
            # Halley: step = g1 / (g2 - g1 g3 / (2 g2)) with g3 / 2 = 1.5 c w / rho^2 (halved g's)
            np.multiply(c, w, out=h3)
            h3 *= ir
            h3 *= ir
            h3 *= 1.5
            h3 *= g1
            h3 /= g2
            np.subtract(g2, h3, out=h3)
            g1 /= h3  # the step
            np.subtract(t, g1, out=tn)
            np.greater_equal(tn, lo, out=ok)
            ok &= tn <= hi  # inside the bracket (False for nan)
            np.logical_not(ok, out=up)
            np.add(lo, hi, out=w)
            w *= 0.5
            np.copyto(tn, w, where=up)  # bisection
            if active is None:
                np.copyto(t, tn)
            else:
                np.copyto(t, tn, where=active)
            if k + 1 >= RIM_FIXED_STEPS:
                np.abs(g1, out=g1)
                go = g1 > 1e-6
                go |= up
                np.subtract(hi, lo, out=w)
                go &= w > 1e-15
                if active is None:
                    active = go
                else:
                    active &= go
                if not active.any():
                    break
    return t


def segment_solid_distance(kind, a, b, center, rot, half, normal, offset, hull=None):
    """K segments a-b (K,3) against K solids of one ``kind``.

    Returns ``d`` (K,): the minimum over the segment of the solid's signed distance (metres; negative:
    the deepest penetration of the segment), ``on_segment`` (K,3) where it is attained (the point
    closest to ``a`` among ties), ``nearest`` (K,3) the nearest point on the solid's surface to it and
    ``n`` (K,3) the solid's outward unit normal there (pointing from the solid towards the segment).

    PLANE is closed form; BOX, CYLINDER and CONE are exact from finite candidate sets
    (:func:`_box_segment_t`, :func:`_cylinder_segment_t`, :func:`_cone_segment_t`: closed-form
    kinks and stationary points, a few Halley steps where the minimum is on a rim circle); CONVEX
    uses the bisection of :func:`segment_solid_distance_bisect`. BOX calls of at most
    ``BOX_SCALAR_ROWS`` rows evaluate the same candidates row by row in Python floats
    (:func:`_box_segment_rows`, the same results bit for bit, cheaper than the kernel's array calls).
    """
    _check_kind(kind)
    if kind == BOX:
        out = _box_segment_rows(a, b, center, rot, half)
        if out is not None:
            return out
    if kind in (PLANE, CONVEX):
        return segment_solid_distance_bisect(kind, a, b, center, rot, half, normal, offset, hull)
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    half = np.asarray(half, dtype=float)
    qa = _to_local(a, center, rot)
    u = _to_local(b, center, rot) - qa
    if kind == BOX:
        t = _box_segment_t(qa, u, half)
    elif kind == CYLINDER:
        t = _cylinder_segment_t(qa, u, half)
    else:
        t = _cone_segment_t(qa, u, half)
    d, x, n = _LOCAL_SDF[kind](qa + t[:, None] * u, half)
    return (
        d,
        a + t[:, None] * (b - a),  # in world coordinates: exactly a (b) at t = 0 (1)
        _to_world_point(x, center, rot),
        _to_world_vec(n, rot),
    )


def capsule_box_penetration(a, b, r, center, rot, half):
    """Minimum translation distance (coal/EPA semantics) of K capsules a-b (K,3), radius r (K,)
    whose core segment intersects K boxes, exactly by the separating-axis theorem.

    Candidate axes (box local frame): the 3 face normals, then the 3 ``cross(b - a, e_i)``; for
    each, both directions. The depth of the capsule is the segment's minimum overlap plus ``r``.
    Returns ``d`` (K,) = -(depth) (metres, <= -r), ``p_cap`` (K,3) on the capsule surface,
    ``p_box`` (K,3) on the box surface, ``normal`` (K,3) unit from the capsule to the box (moving the
    box by ``-d * normal`` separates them), with ``p_box = p_cap + d * normal`` (world frame).
    Ties go to face axes (x, y, z, then the cross axes) and to the + direction. Witnesses are
    deterministic: for a face axis, the segment's deepest end (its part over the face, midpoint,
    when it is parallel to the face); for a cross axis, the closest points of segment and box edge.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    r = np.asarray(r, dtype=float)
    half = np.asarray(half, dtype=float)
    K = a.shape[0]
    rows = np.arange(K)
    qa = _to_local(a, center, rot)
    qb = _to_local(b, center, rot)
    u = qb - qa
    eye = np.broadcast_to(np.eye(3), (K, 3, 3))
    cr = np.cross(u[:, None, :], eye)  # (K,3,3): cross(u, e_i)
    ln = np.linalg.norm(cr, axis=2)
    ulen = np.linalg.norm(u, axis=1)
    ok = ln > 1e-9 * ulen[:, None]
    cr = np.where(ok[:, :, None], cr / np.where(ok, ln, 1.0)[:, :, None], eye)  # degenerate: the face axis
    axes = np.concatenate([eye, cr], axis=1)  # (K,6,3)
    rb = np.einsum("kmi,ki->km", np.abs(axes), half)
    sa = np.einsum("kmi,ki->km", axes, qa)
    sb = np.einsum("kmi,ki->km", axes, qb)
    plus, minus = np.maximum(sa, sb) + rb, rb - np.minimum(sa, sb)
    # (K,12) in tie-break order: face axes (+n, -n) before cross axes (+n, -n); argmin keeps the first
    over = np.concatenate([plus[:, :3], minus[:, :3], plus[:, 3:], minus[:, 3:]], axis=1)
    j = np.argmin(over, axis=1)
    depth = over[rows, j]
    ax = np.array([0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5])[j]
    sgn = np.where((j // 3) % 2 == 0, 1.0, -1.0)
    nrm = axes[rows, ax] * sgn[:, None]  # local, direction the box moves
    # witness on the segment
    pa = np.einsum("ki,ki->k", qa, nrm)
    pb = np.einsum("ki,ki->k", qb, nrm)
    t_face = np.where(pb > pa, 1.0, 0.0)
    par = np.abs(pb - pa) <= 1e-12 * np.maximum(ulen, 1e-300)  # segment parallel to the face
    with np.errstate(divide="ignore", invalid="ignore"):
        t0 = np.zeros(K)
        t1 = np.ones(K)
        for i in range(3):  # clip the segment to the face's slab in the other two coordinates
            other = ax != i
            ui = u[:, i]
            lo_i = np.where(ui != 0, (-half[:, i] - qa[:, i]) / ui, -np.inf)
            hi_i = np.where(ui != 0, (half[:, i] - qa[:, i]) / ui, np.inf)
            tl = np.minimum(lo_i, hi_i)
            th = np.maximum(lo_i, hi_i)
            use = other & (ui != 0)
            t0 = np.where(use, np.maximum(t0, tl), t0)
            t1 = np.where(use, np.minimum(t1, th), t1)
        t_par = np.clip(0.5 * (t0 + t1), 0.0, 1.0)
        t_face = np.where(par, t_par, t_face)
        # cross axis: closest points of the segment line and the box edge along e_i
        e = ax - 3
        ei = np.eye(3)[np.clip(e, 0, 2)]
        P0 = -np.sign(nrm) * half  # box support corner against nrm (the box's side facing -nrm)
        P0 = np.where(ei > 0, 0.0, P0)
        w = qa - P0
        uu = np.einsum("ki,ki->k", u, u)
        ue = np.einsum("ki,ki->k", u, ei)
        den = uu - ue * ue
        t_edge = np.clip(np.where(den > 0, (ue * np.einsum("ki,ki->k", w, ei) - np.einsum("ki,ki->k", u, w)) / den,
                                  0.5), 0.0, 1.0)
    t = np.where(ax < 3, t_face, t_edge)
    seg = qa + t[:, None] * u
    p_box = seg - depth[:, None] * nrm
    p_box = np.clip(p_box, -half, half)  # rounding only: the touching feature lies on the box
    p_cap = p_box + depth[:, None] * nrm + r[:, None] * nrm
    d = -(depth + r)
    return d, _to_world_point(p_cap, center, rot), _to_world_point(p_box, center, rot), _to_world_vec(nrm, rot)
