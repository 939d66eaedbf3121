"""The nearest ball of a :class:`~ambf_collision.geometry.point_set.PointSet` to a shape, exact.

For shape ``k`` of a :class:`~ambf_collision.geometry.world_shapes.World` (every kind: sphere,
capsule, box, cylinder, cone, convex hull, plane, triangle mesh) and a point set in the same
frame (m), :func:`nearest_ball` (njit) returns the point whose ball is nearest:

* ``distance`` (m): the point's signed distance to the shape (negative inside) minus the
  point radius: the signed distance between the shape and the ball, coal's convention;
* ``point_shape``: the nearest point of the shape's surface to the point; ``point_obstacle``:
  the ball's witness ``x - radius * normal``; ``normal``: the shape's outward unit normal there,
  from the shape to the point (``point_obstacle - point_shape = distance * normal``);
* ``index``: the point's row in the cloud given to the PointSet.

The exact distance of one point is the package's own kernel, never a copy: ``point_row`` and
``hull_local`` (:mod:`~ambf_collision.geometry.points`), and for meshes ``point_phi``
(:mod:`~ambf_collision.geometry.mesh_distance`; the normal there points towards the mesh, so
its opposite is the outward one). Ties go to the lowest input row; ``cutoff`` (m, on
``distance``) reports nothing (``distance`` +inf, ``index`` -1, witnesses and normal 0) when
no ball is within it, as for an empty set.

**Pruning** (depth first over the k-d tree, nearer child first) with proven lower bounds of the
signed distance of every point in a node's box: a plane, its value at the box's lowest corner;
every other kind, the distance of the box to the shape's bounding sphere (``|x - c| - R`` bounds
the signed distance of every ``x``, inside too: :func:`~ambf_collision.geometry.pairs.bound_data`
for solids, hulls and meshes; a sphere, itself; a capsule, the ball about its segment's
midpoint), then for a capsule the segment-box distance minus the radius (``node_bound`` of the
mesh code; exact), for a solid, a hull or a mesh the exact value at the box's centre minus the
box's half diagonal (signed distances are 1-Lipschitz, unsigned ones of open meshes too). That
last bound prunes a dense cluster inside the bounding sphere: the clustered test went from
6,253 to tens of evaluations per shape; 24,000 points in 8 clusters around a bumpy torus mesh
(2,304 triangles) from 4,726 evaluations and 8.3 ms to 170 and 0.49 ms. A point gets its
bounding-sphere bound before its exact value. Nodes and points are skipped only beyond the best
distance found plus ``POINT_PRUNE_SLACK``, so the result is the brute-force minimum over every
point. ``evaluations`` counts the exact evaluations (points and box centres).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.mesh_distance import node_bound, point_phi
from ambf_collision.geometry.mesh_set import mesh_arrays, no_meshes
from ambf_collision.geometry.pairs import bound_data
from ambf_collision.geometry.points import hull_nearest, hull_planes, point_row
from ambf_collision.geometry.shapes import CAPSULE, CONVEX, MESH, PLANE
from ambf_collision.geometry.tolerances import POINT_PRUNE_SLACK
from ambf_collision.geometry.world_shapes import (hull_arrays, local_point, shape_row, world_of,
                                                  world_point, world_vector)

__all__ = ["PointTree", "NearestBalls", "nearest_ball", "shape_bounds", "nearest_balls", "node_lower",
           "mesh_point", "shape_sphere", "TREE_STACK"]

TREE_STACK = 128   # > the tree's depth + 1: 24 code-bit splits, then halvings (log2 N < 63)


class PointTree(NamedTuple):
    """A PointSet's arrays as compiled code takes them (:meth:`PointSet.arrays`)."""

    points: np.ndarray
    index: np.ndarray
    nodes: np.ndarray
    boxes: np.ndarray


@njit(cache=True, error_model="numpy")
def mesh_point(M, m, s, x, hint):
    """``(d, y, n, t)``: signed distance (m) of world point ``x`` to mesh ``m`` of ``M`` (shape
    row ``s``), its nearest surface point and outward unit normal (world 3-tuples) and closest
    triangle (the next call's ``hint``). Not inlined: cutting the mesh's arrays inline made every
    point of every kind cost ~130 ns more (the views' reference counts), where a mesh query
    costs microseconds anyway."""
    V, F, NB, VN, boxes, nodes, closed = mesh_arrays(M, m)
    phi, t, y, n = point_phi(V, F, NB, VN, boxes, nodes, closed, local_point(s, x), hint)
    return phi, world_point(s, y), world_vector(s, (-n[0], -n[1], -n[2])), t


@njit(cache=True, error_model="numpy", inline="always")
def node_lower(s, boxes, i, c, R, limit):
    """A lower bound (m) of the signed distance to shape row ``s`` of every point in box ``i``
    (module docstring); the exact segment bound of a capsule only while the bounding sphere's
    is below ``limit``. Values and two arrays only: it runs for every node visited."""
    kind = s.kind
    if kind == PLANE:
        low = -s.offset
        for a in range(3):
            low += s.normal[a] * (boxes[i, a] if s.normal[a] > 0.0 else boxes[i, 3 + a])
        return low
    low = math.sqrt(node_bound(boxes, i, c, (0.0, 0.0, 0.0))) - R   # the bounding sphere
    if kind == CAPSULE and low <= limit:   # exact: the segment's distance to the box
        d = (s.b[0] - s.a[0], s.b[1] - s.a[1], s.b[2] - s.a[2])
        return max(low, math.sqrt(node_bound(boxes, i, s.a, d)) - s.radius)
    return low


@njit(cache=True, error_model="numpy", inline="always")
def shape_sphere(s, centre, outer, k, boxes):
    """``(c, R, slack)``: the bounding sphere (world centre 3-tuple, radius m; +inf for a plane)
    of shape row ``s`` (shape ``k``; ``centre``, ``outer`` from :func:`shape_bounds`), a sphere
    or capsule's about its segment's midpoint, and the pruning slack (m,
    ``POINT_PRUNE_SLACK`` times the largest coordinate magnitude of the shape and of the tree's
    root box ``boxes[0]``)."""
    c = world_point(s, (centre[k, 0], centre[k, 1], centre[k, 2]))
    R = outer[k]
    if s.kind <= CAPSULE:   # the sphere about the segment's midpoint
        c = (0.5 * (s.a[0] + s.b[0]), 0.5 * (s.a[1] + s.b[1]), 0.5 * (s.a[2] + s.b[2]))
        R = 0.5 * math.sqrt((s.b[0] - s.a[0]) ** 2 + (s.b[1] - s.a[1]) ** 2
                            + (s.b[2] - s.a[2]) ** 2) + s.radius
    scale = abs(s.offset) + (R if math.isfinite(R) else 0.0)
    for a in range(3):
        scale = max(scale, abs(boxes[0, a]), abs(boxes[0, 3 + a]), abs(s.a[a]), abs(s.b[a]))
    return c, R, POINT_PRUNE_SLACK * scale


@njit(cache=True, error_model="numpy")
def nearest_ball(W, H, M, T, centre, outer, k, radius, cutoff):
    """Nearest ball (radius ``radius``, m) of the point tree ``T`` to shape ``k`` of ``W``
    (module docstring); ``centre (N,3)``, ``outer (N,)``: the shapes' bounding spheres in their
    local frames (:func:`shape_bounds`). Returns ``(distance, index, point_shape, point_obstacle,
    normal, evaluations)``."""
    zero = (0.0, 0.0, 0.0)
    P, nodes, boxes = T.points, T.nodes, T.boxes
    if P.shape[0] == 0:
        return math.inf, -1, zero, zero, zero, 0
    s = shape_row(W, k)
    c, R, slack = shape_sphere(s, centre, outer, k, boxes)
    point_bound = s.kind > CAPSULE and s.kind != PLANE
    best = cutoff + radius   # on the point's signed distance
    bd, brow, by, bn, bx = math.inf, -1, zero, zero, zero
    hint = -1
    mesh = W.mesh_id[k]
    evals = 0
    stack = np.empty(TREE_STACK, np.int64)
    lows = np.empty(TREE_STACK)
    stack[0], lows[0], top = 0, node_lower(s, boxes, 0, c, R, best + slack), 1
    lipschitz = point_bound   # solids, hulls and meshes (module docstring)
    child_low = np.empty(2)
    while top > 0:
        top -= 1
        i = stack[top]
        if lows[top] > best + slack:
            continue
        first, count = nodes[i, 0], nodes[i, 1]
        leaf = count > 0
        # one loop over a leaf's points or an inner node's two children, with one exact
        # evaluation site: an inlined call taking W, H, M would cost the reference counts of
        # their 29 arrays at every point (~130 ns)
        for u in range(count if leaf else 2):
            h = 0.0
            if leaf:
                x = (P[first + u, 0], P[first + u, 1], P[first + u, 2])
                if point_bound and math.sqrt((x[0] - c[0]) ** 2 + (x[1] - c[1]) ** 2
                                             + (x[2] - c[2]) ** 2) - R > best + slack:
                    continue
            else:
                b = first + u
                child_low[u] = node_lower(s, boxes, b, c, R, best + slack)
                if not lipschitz or child_low[u] > best + slack:
                    continue
                x = (0.5 * (boxes[b, 0] + boxes[b, 3]), 0.5 * (boxes[b, 1] + boxes[b, 4]),
                     0.5 * (boxes[b, 2] + boxes[b, 5]))   # the box's centre
                h = 0.5 * math.sqrt((boxes[b, 3] - boxes[b, 0]) ** 2 + (boxes[b, 4] - boxes[b, 1]) ** 2
                                    + (boxes[b, 5] - boxes[b, 2]) ** 2)
            if s.kind == CONVEX:
                q = local_point(s, x)
                d, f = hull_planes(H, s.hull_id, q[0], q[1], q[2], best + slack + h)
                y = n = x
                if d <= best + slack + h:   # else the face planes' bound already prunes it
                    d, y0, y1, y2, n0, n1, n2 = hull_nearest(H, s.hull_id, q[0], q[1], q[2], d, f)
                    y, n = world_point(s, (y0, y1, y2)), world_vector(s, (n0, n1, n2))
            elif s.kind == MESH:
                d, y, n, hint = mesh_point(M, mesh, s, x, hint)
            else:
                d, y, n = point_row(s, x)
            evals += 1
            if not leaf:   # signed distances are 1-Lipschitz: none in the box is below d - h
                child_low[u] = max(child_low[u], d - h)
                continue
            row = T.index[first + u]
            if d <= cutoff + radius and (d < bd or (d == bd and row < brow)):
                bd, brow, by, bn, bx = d, row, y, n, x
                best = min(best, d)
        if leaf:
            continue
        near, far, ln, lf = first, first + 1, child_low[0], child_low[1]
        if lf < ln:
            near, far, ln, lf = first + 1, first, lf, ln
        if lf <= best + slack:
            stack[top], lows[top] = far, lf
            top += 1
        if ln <= best + slack:
            stack[top], lows[top] = near, ln
            top += 1
    if brow < 0:
        return math.inf, -1, zero, zero, zero, evals
    pb = (bx[0] - radius * bn[0], bx[1] - radius * bn[1], bx[2] - radius * bn[2])
    return bd - radius, brow, by, pb, bn, evals


@njit(cache=True, error_model="numpy")
def _nearest_entry(table, H, M, T, centre, outer, shapes, radius, cutoff, out, out_index):
    W = world_of(table)
    for q in range(shapes.shape[0]):
        d, row, y, pb, n, evals = nearest_ball(W, H, M, T, centre, outer, shapes[q], radius, cutoff)
        out[q, 0] = d
        for a in range(3):
            out[q, 1 + a] = y[a]
            out[q, 4 + a] = pb[a]
            out[q, 7 + a] = n[a]
        out_index[q, 0] = row
        out_index[q, 1] = evals


def shape_bounds(world) -> tuple:
    """``(centre (N,3), outer (N,))``: each shape's bounding sphere in its local frame (m),
    constant while the shapes only move (:func:`~ambf_collision.geometry.pairs.bound_data`);
    compute once per set of shapes and pass to :func:`nearest_balls`."""
    centre, outer = bound_data(world, world.hulls)[:2]
    return np.ascontiguousarray(centre), np.ascontiguousarray(outer)


class NearestBalls(NamedTuple):
    """Per queried shape (K of them): ``distance (K,)`` m (+inf: none within the cutoff),
    ``index (K,)`` input row of the point (-1: none), ``point_shape``, ``point_obstacle``,
    ``normal`` (K,3) world, ``evaluations (K,)`` exact point evaluations (module docstring)."""

    distance: np.ndarray
    index: np.ndarray
    point_shape: np.ndarray
    point_obstacle: np.ndarray
    normal: np.ndarray
    evaluations: np.ndarray


def nearest_balls(point_set, world, shapes=None, cutoff: float = math.inf,
                  bounds=None) -> NearestBalls:
    """The nearest ball of ``point_set`` to each shape ``shapes`` (indices; default all) of
    ``world`` (a WorldShapes in the points' frame), in one compiled call. ``cutoff`` (m):
    nothing farther is reported. ``bounds``: :func:`shape_bounds` of ``world``'s shapes
    (computed when None)."""
    n = len(world)
    idx = np.arange(n, dtype=np.int64) if shapes is None else np.ascontiguousarray(shapes, np.int64).reshape(-1)
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"nearest_balls: shape index out of range 0..{n - 1}: {idx.tolist()}")
    cutoff = float(cutoff)
    if math.isnan(cutoff):
        raise ValueError("nearest_balls: cutoff must be a number (m), got nan")
    centre, outer = shape_bounds(world) if bounds is None else bounds
    meshes = no_meshes() if world.meshes is None else world.meshes.arrays()
    out = np.empty((len(idx), 10))
    out_index = np.empty((len(idx), 2), np.int64)
    _nearest_entry(world.table, hull_arrays(world.hulls), meshes, PointTree(*point_set.arrays()),
                   centre, outer, idx, point_set.point_radius, cutoff, out, out_index)
    return NearestBalls(out[:, 0], out_index[:, 0], out[:, 1:4], out[:, 4:7], out[:, 7:10],
                        out_index[:, 1])
