"""Exact signed distance from a point to every shape kind (compiled), and its batch form.

``point_signed_distance(W, H, k, x0, x1, x2, out_nearest, out_normal) -> d``: the signed
distance ``d`` (m, negative inside) from the world point ``x`` to the surface of shape ``k`` of
the :class:`~ambf_collision.geometry.world_shapes.World` ``W`` (hulls in ``H``), the nearest
surface point (world) and the outward unit normal there, so that ``x = nearest + d normal`` for
both signs (up to rounding, and up to ``COINCIDENT`` where a fallback normal is used).
:func:`point_signed_distance_batch` is the Python entry.

Solids are evaluated in their local frame (``x_world = rot x_local + a``):

* BOX: half extents ``h``, centred. Inside: the face of least depth; ties go to the lowest
  axis (x, then y, then z) and to the + face when the coordinate is exactly 0.
* CYLINDER: radius ``h[0]``, half height ``h[2]`` along local z, centred. On the axis the radial
  direction is local +x. Inside, a tie between the lateral surface and a cap goes to the cap
  (``z >= 0``: the top one).
* CONE: base radius ``h[0]``, half height ``h[2]``: base disc at ``z = -h[2]``, apex at
  ``z = +h[2]`` (as Bullet and coal). On the axis the radial direction is local +x. Inside, a
  tie between the slanted surface and the base goes to the base. A cone with no radius (a
  needle) or no height (a disc) has no interior.
* CONVEX: inside, the face plane of the smallest depth (lowest face index on ties); outside, the
  projection on the face plane of the least depth when it lies on the hull, else the nearest
  vertex or edge (:func:`hull_local`); on the surface the outward normal of that face plane. A
  point or a segment (no faces of its own) is measured to its vertices and edge.
* SPHERE, CAPSULE: the closest point of the centre / segment; a point on it gets the fallback
  normal of :func:`~ambf_collision.geometry.segments.point_segment` (+z, or perpendicular to the
  axis).
* PLANE: ``normal . x - offset``.

The local functions return plain tuples ``(d, x0, x1, x2, n0, n1, n2)`` (local coordinates), so
callers that need only some of them cost nothing for the rest.

In a compiled loop over many points, call ``point_row(shape_row(W, k), x)`` (every kind but
CONVEX; values in, values out) and :func:`hull_local` for hulls: numba reference-counts every
array passed to a function, two atomic operations per array per call, so
``point_signed_distance(W, H, ...)`` (18 arrays) costs about 4x as much per point (measured:
210 against 51 ns on a loaded 2-core machine).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.segments import point_segment
from ambf_collision.geometry.tolerances import HULL_FACE_SLACK as _FACE_SLACK
from ambf_collision.geometry.shapes import BOX, CAPSULE, CONVEX, CYLINDER, PLANE, SPHERE, ShapeError
from ambf_collision.geometry.world_shapes import (hull_arrays, local_point, make_hulls,
                                                  shape_row, world_of, world_point, world_vector)

__all__ = ["point_signed_distance", "point_signed_distance_batch", "point_row", "box_local",
           "cylinder_local", "cone_local", "solid_local", "hull_local", "hull_planes",
           "hull_nearest", "unit2"]


@njit(cache=True, error_model="numpy")
def unit2(x, y):
    """Unit vector along ``(x, y)``, ``(1, 0)`` for ``(0, 0)``; scaled first, so that tiny
    (subnormal) inputs keep full precision and nothing overflows."""
    m = max(abs(x), abs(y))
    if m == 0.0:
        return 1.0, 0.0
    xs = x / m
    ys = y / m
    ln = math.sqrt(xs * xs + ys * ys)
    return xs / ln, ys / ln


@njit(cache=True, error_model="numpy")
def box_local(q0, q1, q2, h0, h1, h2):
    """Box of half extents ``h``, centred, axis-aligned; point ``q`` (local, m)."""
    c0 = min(max(q0, -h0), h0)
    c1 = min(max(q1, -h1), h1)
    c2 = min(max(q2, -h2), h2)
    w0, w1, w2 = q0 - c0, q1 - c1, q2 - c2
    d = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if d > 0.0:
        return d, c0, c1, c2, w0 / d, w1 / d, w2 / d
    e0, e1, e2 = h0 - abs(q0), h1 - abs(q1), h2 - abs(q2)
    if e0 <= e1 and e0 <= e2:
        s = 1.0 if q0 >= 0.0 else -1.0
        return -e0, s * h0, q1, q2, s, 0.0, 0.0
    if e1 <= e2:
        s = 1.0 if q1 >= 0.0 else -1.0
        return -e1, q0, s * h1, q2, 0.0, s, 0.0
    s = 1.0 if q2 >= 0.0 else -1.0
    return -e2, q0, q1, s * h2, 0.0, 0.0, s


@njit(cache=True, error_model="numpy")
def cylinder_local(q0, q1, q2, R, H):
    """Cylinder of radius ``R`` and half height ``H`` about local z, centred; point ``q``."""
    r = math.sqrt(q0 * q0 + q1 * q1)
    e0, e1 = unit2(q0, q1)
    sz = 1.0 if q2 >= 0.0 else -1.0
    dr = r - R
    dz = abs(q2) - H
    er = max(dr, 0.0)
    ez = max(dz, 0.0)
    d_out = math.sqrt(er * er + ez * ez)
    if d_out > 0.0:
        nr = R if dr > 0.0 else r
        nz = sz * H if dz > 0.0 else q2
        return d_out, nr * e0, nr * e1, nz, er / d_out * e0, er / d_out * e1, ez / d_out * sz
    if dr > dz:   # nearer to the lateral surface than to a cap (a tie goes to the cap)
        return dr, R * e0, R * e1, q2, e0, e1, 0.0
    return dz, r * e0, r * e1, sz * H, 0.0, 0.0, sz


@njit(cache=True, error_model="numpy")
def cone_local(q0, q1, q2, R, H):
    """Cone of base radius ``R`` at ``z = -H`` and apex at ``z = +H``; point ``q`` (local)."""
    z = q2
    r = math.sqrt(q0 * q0 + q1 * q1)
    e0, e1 = unit2(q0, q1)
    L2 = R * R + 4.0 * H * H
    sr, sn = 1.0, 0.0   # outward unit normal of the slanted side in the (r, z) half-plane
    if L2 > 0.0:
        L = math.sqrt(L2)
        sr = 2.0 * H / L
        sn = R / L
    slant = (r - R) * sr + (z + H) * sn   # signed distance to the slanted line
    base = -(z + H)                       # signed distance to the base plane
    # outside: nearest point on the base segment (0,-H)-(R,-H) or the slant (R,-H)-(0,H)
    br = min(max(r, 0.0), R)
    db2 = (r - br) ** 2 + base * base
    t = ((R - r) * R + (z + H) * 2.0 * H) / (L2 if L2 > 0.0 else 1.0)
    t = min(max(t, 0.0), 1.0)
    tr = R * (1.0 - t)
    tz = H * (2.0 * t - 1.0)
    ds2 = (r - tr) ** 2 + (z - tz) ** 2
    if ds2 < db2:
        out_r, out_z, d_out = tr, tz, math.sqrt(ds2)
    else:
        out_r, out_z, d_out = br, -H, math.sqrt(db2)
    # a flat cone (R = 0 or H = 0) has no interior: slant <= 0 and base <= 0 would admit the
    # whole axis above the base (R = 0) or the whole base plane (H = 0)
    if (slant > 0.0 or base > 0.0 or R == 0.0 or H == 0.0) and d_out > 0.0:
        nr = max(out_r, 0.0)
        a = (r - out_r) / d_out
        c = (z - out_z) / d_out
        return d_out, nr * e0, nr * e1, out_z, a * e0, a * e1, c
    if base >= slant:   # nearer to the base (a tie goes to the base)
        return base, r * e0, r * e1, -H, 0.0, 0.0, -1.0
    nr = max(r - slant * sr, 0.0)
    return slant, nr * e0, nr * e1, z - slant * sn, sr * e0, sr * e1, sn


@njit(cache=True, error_model="numpy")
def solid_local(kind, q0, q1, q2, h0, h1, h2):
    """:func:`box_local`, :func:`cylinder_local` or :func:`cone_local` by ``kind``."""
    if kind == BOX:
        return box_local(q0, q1, q2, h0, h1, h2)
    if kind == CYLINDER:
        return cylinder_local(q0, q1, q2, h0, h2)
    return cone_local(q0, q1, q2, h0, h2)


@njit(cache=True, error_model="numpy")
def _segment_sq(p, a, b):
    """Squared distance and closest point of point ``p`` to segment ``a``-``b`` (3-tuples)."""
    d0, d1, d2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    dd = d0 * d0 + d1 * d1 + d2 * d2
    t = 0.0
    if dd > 0.0:
        t = min(max(((p[0] - a[0]) * d0 + (p[1] - a[1]) * d1 + (p[2] - a[2]) * d2) / dd, 0.0), 1.0)
    x = (a[0] + t * d0, a[1] + t * d1, a[2] + t * d2)
    return (p[0] - x[0]) ** 2 + (p[1] - x[1]) ** 2 + (p[2] - x[2]) ** 2, x


@njit(cache=True, error_model="numpy", inline="always")
def _vertex(V, i):
    return V[i, 0], V[i, 1], V[i, 2]


@njit(cache=True, error_model="numpy", inline="always")
def hull_planes(H, h, q0, q1, q2, stop):
    """``(s, f)``: the largest signed distance ``s`` (m) of the point ``q`` (hull ``h``'s local
    frame) to the hull's face planes, and that face. A lower bound of the point's signed
    distance to the hull (exact inside, ``s < 0``); 1-Lipschitz in ``q`` (a maximum of
    distances to planes). O(faces); :func:`hull_local` finishes from it. The scan stops at the
    first plane farther than ``stop`` (m; +inf: every plane): ``s > stop`` is then that plane's
    distance, still a lower bound, and enough for a caller that needs none above ``stop``."""
    smax = -np.inf
    f = H.face_start[h]
    for j in range(H.face_start[h], H.face_start[h + 1]):
        s = (H.face_normal[j, 0] * q0 + H.face_normal[j, 1] * q1 + H.face_normal[j, 2] * q2
             - H.face_offset[j])
        if s > smax:
            smax, f = s, j
            if s > stop:
                break
    return smax, f


@njit(cache=True, error_model="numpy", inline="always")
def hull_local(H, h, q0, q1, q2):
    """Hull ``h`` of the ``Hulls`` arrays ``H``; point ``q`` in the hull's local frame.

    Let ``f`` be the face plane the point is least deep behind (or farthest in front of),
    ``s`` its signed distance (:func:`hull_planes`). Inside (``s < 0``) that plane is the
    nearest surface. Outside, if the point's projection on ``f`` satisfies every face plane (up
    to ``HULL_FACE_SLACK``), it is the nearest point (the offset is along that face's normal);
    otherwise the nearest point lies on an edge or a vertex: the nearest of the hull's vertices
    and edges (``neighbors``; the diagonals of merged faces among them lie inside faces and
    cannot be nearer). Face planes and edges only, no triangles; O(faces + edges)."""
    smax, f = hull_planes(H, h, q0, q1, q2, np.inf)
    return hull_nearest(H, h, q0, q1, q2, smax, f)


@njit(cache=True, error_model="numpy", inline="always")
def hull_nearest(H, h, q0, q1, q2, smax, f):
    """:func:`hull_local` of the point ``q`` whose :func:`hull_planes` are ``(smax, f)``."""
    n = (H.face_normal[f, 0], H.face_normal[f, 1], H.face_normal[f, 2])
    has_face = H.face_start[h + 1] > H.face_start[h]
    x = (q0 - smax * n[0], q1 - smax * n[1], q2 - smax * n[2])
    if has_face and smax < 0.0:   # inside: the nearest face plane is the surface
        return smax, x[0], x[1], x[2], n[0], n[1], n[2]
    if has_face:   # the projection on that face, if it lies on the hull
        slack = _FACE_SLACK * (H.bound_radius[h] + abs(q0) + abs(q1) + abs(q2))
        on_hull = True
        for j in range(H.face_start[h], H.face_start[h + 1]):
            if (H.face_normal[j, 0] * x[0] + H.face_normal[j, 1] * x[1] + H.face_normal[j, 2] * x[2]
                    - H.face_offset[j]) > slack:
                on_hull = False
                break
        if on_hull:
            return smax, x[0], x[1], x[2], n[0], n[1], n[2]
    q = (q0, q1, q2)
    best = np.inf
    for i in range(H.vertex_start[h], H.vertex_start[h + 1]):   # vertices and edges
        d, y = _segment_sq(q, _vertex(H.vertices, i), _vertex(H.vertices, i))
        if d < best:
            best, x = d, y
        for e in range(H.neighbor_start[i], H.neighbor_start[i + 1]):
            j = H.neighbors[e]
            if j > i:
                d, y = _segment_sq(q, _vertex(H.vertices, i), _vertex(H.vertices, j))
                if d < best:
                    best, x = d, y
    d = math.sqrt(best)
    if d > 0.0:
        return d, x[0], x[1], x[2], (q0 - x[0]) / d, (q1 - x[1]) / d, (q2 - x[2]) / d
    if has_face:
        return 0.0, x[0], x[1], x[2], n[0], n[1], n[2]
    return 0.0, x[0], x[1], x[2], 0.0, 0.0, 1.0


@njit(cache=True, error_model="numpy")
def point_row(s, x):
    """Signed distance (m), nearest surface point and outward unit normal (world 3-tuples) of
    the world point ``x`` (3-tuple) to the shape row ``s`` (a ``ShapeRow``; not CONVEX)."""
    if s.kind == SPHERE or s.kind == CAPSULE:
        L, c, n = point_segment(x, s.a, s.b)
        r = s.radius
        return L - r, (c[0] + r * n[0], c[1] + r * n[1], c[2] + r * n[2]), n
    if s.kind == PLANE:
        n = s.normal
        d = n[0] * x[0] + n[1] * x[1] + n[2] * x[2] - s.offset
        return d, (x[0] - d * n[0], x[1] - d * n[1], x[2] - d * n[2]), n
    q = local_point(s, x)
    d, y0, y1, y2, n0, n1, n2 = solid_local(s.kind, q[0], q[1], q[2], s.half[0], s.half[1], s.half[2])
    return d, world_point(s, (y0, y1, y2)), world_vector(s, (n0, n1, n2))


@njit(cache=True, error_model="numpy")
def point_signed_distance(W, H, k, x0, x1, x2, out_nearest, out_normal):
    """Signed distance (m) from world point ``x`` to the surface of shape ``k`` of ``W``; writes
    the nearest surface point and the outward unit normal there (world, (3,) each). Passes no
    array on (the hull code is inlined), so calling it per point costs no reference counting."""
    s = shape_row(W, k)
    x = (x0, x1, x2)
    if s.kind == CONVEX:
        q = local_point(s, x)
        d, y0, y1, y2, n0, n1, n2 = hull_local(H, s.hull_id, q[0], q[1], q[2])
        y, n = world_point(s, (y0, y1, y2)), world_vector(s, (n0, n1, n2))
    else:
        d, y, n = point_row(s, x)
    for i in range(3):
        out_nearest[i] = y[i]
        out_normal[i] = n[i]
    return d


@njit(cache=True, error_model="numpy")
def _batch(world, vertices, vertex_start, face_normal, face_offset, face_start, centre,
           bound_radius, neighbor_start, neighbors, shape_index, points, out_d, out_nearest,
           out_normal):
    W = world_of(world)
    H = make_hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
                   bound_radius, neighbor_start, neighbors)
    for i in range(shape_index.shape[0]):
        out_d[i] = point_signed_distance(W, H, shape_index[i], points[i, 0], points[i, 1],
                                         points[i, 2], out_nearest[i], out_normal[i])


def point_signed_distance_batch(world, hulls, shape_index, points):
    """Signed distance (m, negative inside) from each world point ``points[i]`` (K,3) to the
    surface of shape ``shape_index[i]`` (K,) of ``world`` (a WorldShapes; ``hulls``: its
    HullSet, by default ``world.hulls``). Returns ``d (K,)``, ``nearest (K,3)`` on the surface
    and ``normal (K,3)``, the outward unit normal there (see the module docstring)."""
    idx = np.ascontiguousarray(shape_index, dtype=np.int64).reshape(-1)
    pts = np.ascontiguousarray(points, dtype=np.float64).reshape(-1, 3)
    if len(idx) != len(pts):
        raise ValueError(f"point_signed_distance_batch: {len(idx)} shape indices for "
                         f"{len(pts)} points")
    n = len(world)
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        bad = int(idx[(idx < 0) | (idx >= n)][0])
        raise ValueError(f"point_signed_distance_batch: shape index {bad} out of range 0..{n - 1}")
    kinds = world.kind[idx]
    if np.any((kinds < SPHERE) | (kinds > CONVEX)):
        k = int(idx[(kinds < SPHERE) | (kinds > CONVEX)][0])
        raise ShapeError(f"shapes[{k}]: unknown kind {int(world.kind[k])}")
    hs = world.hulls if hulls is None else hulls
    if np.any(kinds == CONVEX) and hs is None:
        raise ValueError("point_signed_distance_batch: CONVEX shapes need their HullSet")
    K = len(idx)
    d, nearest, normal = np.empty(K), np.empty((K, 3)), np.empty((K, 3))
    _batch(world.table, *hull_arrays(hs), idx, pts, d, nearest, normal)
    return d, nearest, normal
