"""The numbers of the RViz markers, compiled: each cycle's shape poses and scales
(:func:`shape_markers`), shape colours (:func:`shape_colours`), contact arrows
(:func:`contact_markers`) and probe spheres (:func:`probe_markers`), one call each, and the colour
scales they use. Also the triangles that draw a cone (``TRIANGLE_LIST`` points in its frame; a
convex hull is drawn with its ``HullSet`` triangles).

Units: metres, world frame; quaternions [x, y, z, w]; colours RGB in [0, 1]. No number these
functions write is NaN or infinite.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ambf_collision.geometry.shapes import BOX, CAPSULE, CYLINDER, PLANE, SPHERE
from ambf_collision.geometry.transforms import rotation_quaternion
from ambf_collision.geometry.world_shapes import world_of

__all__ = ["GREEN", "RED", "ORANGE", "YELLOW", "GREY", "PROBE_FREE", "SWEPT", "axis_quaternion",
           "distance_rgb", "force_rgb", "shape_markers", "shape_colours", "contact_markers",
           "probe_markers",
           "cone_triangles"]

GREEN = (0.15, 0.8, 0.25)
RED = (1.0, 0.0, 0.0)
ORANGE = (1.0, 0.5, 0.0)
YELLOW = (1.0, 1.0, 0.0)
GREY = (0.6, 0.6, 0.6)
PROBE_FREE = (0.3, 0.6, 1.0)
SWEPT = (0.7, 0.2, 1.0)   # violet: a swept contact (touched between two joint states)
MIN_SCALE = 1e-4
"""m: the smallest marker scale written (RViz does not draw a marker with a zero scale, so a
degenerate shape stays visible but tiny)."""
AXIS_EPS = 1e-15
"""m: an axis shorter than this has no direction (its marker keeps the identity orientation)."""


@njit(cache=True, error_model="numpy", inline="always")
def _finite(x):
    """``x``, or 0.0 when it is NaN or infinite."""
    return x if math.isfinite(x) else 0.0


@njit(cache=True, error_model="numpy", inline="always")
def _put_rgb(rgb, out):
    out[0], out[1], out[2] = rgb[0], rgb[1], rgb[2]


@njit(cache=True, error_model="numpy", inline="always")
def _blend(c0, c1, t, out):
    """``out (3,)`` = ``c0 + t (c1 - c0)``."""
    for j in range(3):
        out[j] = c0[j] + t * (c1[j] - c0[j])


@njit(cache=True, error_model="numpy", inline="always")
def axis_quaternion(u0, u1, u2, q):
    """Writes into ``q (4,)`` the quaternion [x,y,z,w] that turns local +z onto the direction
    ``(u0, u1, u2)`` (any length) along the shortest arc: the identity for a zero vector, a half
    turn about x for -z."""
    n = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
    if not n > AXIS_EPS:
        q[0], q[1], q[2], q[3] = 0.0, 0.0, 0.0, 1.0
        return
    v0, v1, v2 = u0 / n, u1 / n, u2 / n
    x, y, w = -v1, v0, 1.0 + v2
    m = math.sqrt(x * x + y * y + w * w)
    if m < 1e-9:  # v == -z
        q[0], q[1], q[2], q[3] = 1.0, 0.0, 0.0, 0.0
    else:
        q[0], q[1], q[2], q[3] = x / m, y / m, 0.0, w / m


@njit(cache=True, error_model="numpy", inline="always")
def distance_rgb(d, near, out):
    """Writes into ``out (3,)`` the colour of signed distance ``d`` (m): red at ``d <= 0`` (and
    NaN), orange to yellow for ``0 < d < near``, green at ``d >= near``, grey for +inf (nothing
    checked)."""
    if d == math.inf:
        _put_rgb(GREY, out)
    elif not d > 0.0:
        _put_rgb(RED, out)
    elif d >= near:
        _put_rgb(GREEN, out)
    else:
        _blend(ORANGE, YELLOW, d / near, out)  # 0 < d < near


@njit(cache=True, error_model="numpy", inline="always")
def force_rgb(f0, f1, f2, in_contact, full_scale, out):
    """Writes into ``out (3,)`` the colour of a probe with force ``(f0, f1, f2)`` (N; NaN counts
    as 0): blue when free, yellow (tiny force) to red (``full_scale`` N or more) in contact."""
    if not in_contact:
        _put_rgb(PROBE_FREE, out)
        return
    f0, f1, f2 = (0.0 if f0 != f0 else f0), (0.0 if f1 != f1 else f1), (0.0 if f2 != f2 else f2)
    f = math.sqrt(f0 * f0 + f1 * f1 + f2 * f2)
    _blend(YELLOW, RED, min(f / full_scale, 1.0) if full_scale > 0.0 else 1.0, out)


@njit(cache=True, error_model="numpy")
def shape_markers(table, owner, n_caps, scale_row, plane_size, plane_thickness, pos, quat, scale):
    """Pose and scale of every shape marker, from the shapes in world (``table``, a
    ``SHAPE_DTYPE`` table of N shapes). Marker ``i`` draws shape ``owner[i]``: markers
    ``0..N-1`` the shapes themselves, then ``n_caps`` capsule end spheres at ``a``, then as many at
    ``b``. Writes ``pos (M,3)``, ``quat (M,4)``, and the scale of marker ``i`` into row
    ``scale_row[i]`` of ``scale`` (-1: a mesh marker, drawn at scale 1). Sphere: diameter;
    capsule: a cylinder (diameter, diameter, length) along ``b - a``; box and cylinder: full
    extents; plane: a ``plane_size`` square of ``plane_thickness`` whose top face is the plane;
    cone and convex hull: the pose of their frame."""
    W = world_of(table)
    n = W.kind.shape[0]
    for i in range(owner.shape[0]):
        k = owner[i]
        kind = W.kind[k]
        dia = 2.0 * W.radius[k]
        sx, sy, sz = dia, dia, dia
        q = quat[i]
        if i >= n:  # a capsule's end sphere
            end = W.a if i < n + n_caps else W.b
            for j in range(3):
                pos[i, j] = end[k, j]
            q[0], q[1], q[2], q[3] = 0.0, 0.0, 0.0, 1.0
        elif kind == CAPSULE:
            u0, u1, u2 = W.b[k, 0] - W.a[k, 0], W.b[k, 1] - W.a[k, 1], W.b[k, 2] - W.a[k, 2]
            for j in range(3):
                pos[i, j] = 0.5 * (W.a[k, j] + W.b[k, j])
            axis_quaternion(u0, u1, u2, q)
            sz = math.sqrt(u0 * u0 + u1 * u1 + u2 * u2)
        elif kind == PLANE:
            nx, ny, nz = W.normal[k, 0], W.normal[k, 1], W.normal[k, 2]
            lift = W.offset[k] - 0.5 * plane_thickness
            pos[i, 0], pos[i, 1], pos[i, 2] = lift * nx, lift * ny, lift * nz
            axis_quaternion(nx, ny, nz, q)
            sx, sy, sz = plane_size, plane_size, plane_thickness
        else:
            for j in range(3):
                pos[i, j] = W.a[k, j]
            if kind == SPHERE:
                q[0], q[1], q[2], q[3] = 0.0, 0.0, 0.0, 1.0
            else:
                rotation_quaternion(W.rot[k], q)
            if kind == BOX or kind == CYLINDER:
                sx, sy, sz = 2.0 * W.half[k, 0], 2.0 * W.half[k, 1], 2.0 * W.half[k, 2]
        for j in range(3):
            pos[i, j] = _finite(pos[i, j])
        for j in range(4):
            q[j] = _finite(q[j])
        r = scale_row[i]
        if r >= 0:
            scale[r, 0] = max(_finite(sx), MIN_SCALE)
            scale[r, 1] = max(_finite(sy), MIN_SCALE)
            scale[r, 2] = max(_finite(sz), MIN_SCALE)


@njit(cache=True, error_model="numpy")
def shape_colours(pairs, pair_distance, checked, owner, near, shape_d, rgb):
    """``rgb (M,3)``: the colour (:func:`distance_rgb`, ``near`` m) of each marker's shape
    ``owner[i]`` by its smallest signed distance over the checked ``pairs (P,2)`` (shape
    indices) with distances ``pair_distance (P,)`` (m; NaN counts as contact, never as far);
    grey for a shape in no checked pair (``checked (N,)`` False). ``shape_d (N,)``: workspace."""
    shape_d[:] = math.inf
    for p in range(pairs.shape[0]):
        d = pair_distance[p]
        if d != d:
            d = -math.inf
        for side in range(2):
            k = pairs[p, side]
            if d < shape_d[k]:
                shape_d[k] = d
    for i in range(owner.shape[0]):
        k = owner[i]
        distance_rgb(shape_d[k] if checked[k] else math.inf, near, rgb[i])


@njit(cache=True, error_model="numpy")
def contact_markers(distance, vectors, arrow_length, near, points, rgb):
    """Each contact's arrow and witness points, from its signed ``distance (C,)`` (m) and
    ``vectors (C,3,3)``: witness point 1, witness point 2, unit normal (body 1 -> body 2; world).
    Writes ``points (C,3,3)``: witness point 1 (where the arrow starts), the arrow's end (along the
    normal by ``arrow_length`` m or by ``|distance|`` when longer), witness point 2 (non-finite
    coordinates -> 0); and ``rgb (C,3)``: :func:`distance_rgb` (``near`` m), a non-finite
    distance coloured as contact."""
    for c in range(distance.shape[0]):
        d = distance[c]
        finite = math.isfinite(d)
        length = max(arrow_length, abs(d)) if finite else arrow_length
        for j in range(3):
            p1, p2, n = _finite(vectors[c, 0, j]), _finite(vectors[c, 1, j]), _finite(vectors[c, 2, j])
            points[c, 0, j] = p1
            points[c, 1, j] = _finite(p1 + length * n)
            points[c, 2, j] = p2
        distance_rgb(d if finite else -1.0, near, rgb[c])


@njit(cache=True, error_model="numpy")
def probe_markers(position, force, in_contact, full_scale, points, rgb):
    """The probes' sphere list: ``points (P,3)`` their centres ``position (P,3)`` (m, world;
    non-finite -> 0) and ``rgb (P,3)`` their colours by ``force (P,3)`` (N) and ``in_contact
    (P,)`` (:func:`force_rgb`)."""
    for i in range(position.shape[0]):
        for j in range(3):
            points[i, j] = _finite(position[i, j])
        force_rgb(force[i, 0], force[i, 1], force[i, 2], in_contact[i], full_scale, rgb[i])


def cone_triangles(radius: float, height: float, sides: int = 24) -> np.ndarray:
    """Triangles (3*T, 3) of a cone in its local frame: base disc at z=-h/2, apex at +h/2."""
    a = np.linspace(0.0, 2.0 * math.pi, sides + 1)
    rim = np.stack([radius * np.cos(a), radius * np.sin(a), np.full_like(a, -0.5 * height)], 1)
    apex = np.array([0.0, 0.0, 0.5 * height])
    base = np.array([0.0, 0.0, -0.5 * height])
    tris = []
    for i in range(sides):
        tris += [rim[i], rim[i + 1], apex, rim[i + 1], rim[i], base]
    return np.array(tris)
