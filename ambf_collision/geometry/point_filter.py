"""Self filter: the points of a :class:`~ambf_collision.geometry.point_set.PointSet` within a
padding of given shapes, exact.

:func:`points_near_shapes` marks every kept point ``x`` of the set whose signed distance to
any of the given shapes of a :class:`~ambf_collision.geometry.world_shapes.WorldShapes` (same
frame as the points, m) is at most ``padding`` (m, >= 0; a point inside a shape counts): the
points a robot sees of itself, removed before its own shapes are checked against the cloud
(MoveIt's occupancy map monitor does the same). The point radius of the set plays no part:
``padding`` is on the point's own distance. The mask is in tree order (``point_set.points``),
or over the input rows with ``input_rows=True`` (``point_set.index`` maps the one to the other;
rows the set dropped, non-finite, out of range or merged by its voxel filter, are False).

The exact distance of a point is the package's own kernel (the one
:func:`~ambf_collision.geometry.point_query.nearest_ball` uses): ``point_row``, ``hull_local``,
and for meshes :func:`~ambf_collision.geometry.point_query.mesh_point`. A range query over the
k-d tree per shape, all shapes in one compiled call: a node is skipped when
:func:`~ambf_collision.geometry.point_query.node_lower` (the bounding sphere, a plane's lowest
corner, a capsule's segment) exceeds the padding; otherwise its box's centre is evaluated
exactly (signed distances are 1-Lipschitz): the node is skipped when that value minus the box's
half diagonal exceeds the padding, and all its points are marked without evaluation when that
value plus the half diagonal is below it (a box inside a shape or wholly within the padding).
For a sphere, a capsule and a plane, whose ``node_lower`` is already the minimum over the box,
the centre is evaluated only when that minimum plus the half diagonal is below the padding;
a leaf's remaining points are evaluated one by one (after their bounding-sphere bound for
solids, hulls and meshes), a point already marked by an earlier shape not again. Both
decisions keep a margin of ``slack`` (``POINT_PRUNE_SLACK`` times the coordinates' magnitude,
:func:`~ambf_collision.geometry.point_query.shape_sphere`) so the mask equals the brute-force
test ``d(x) <= padding`` of every point with the same kernel, points at exactly the padding
included.

Measured (test/geometry/test_point_filter.py, 2 shared cores, 2026-12-07): 24,000 points of a
camera's view of the demo arm (3,000 on the arm), its 6 robot shapes, padding 2 cm: 660 exact
evaluations in all; the compiled call 65-100 us (median), the Python call 85-150 us with
``bounds`` given (``shape_bounds`` adds ~40 us: compute it once per set of shapes).
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numba import njit

from ambf_collision.geometry.mesh_set import no_meshes
from ambf_collision.geometry.point_query import (TREE_STACK, PointTree, mesh_point, node_lower,
                                                 shape_bounds, shape_sphere)
from ambf_collision.geometry.points import hull_nearest, hull_planes, point_row
from ambf_collision.geometry.shapes import CAPSULE, CONVEX, MESH, PLANE
from ambf_collision.geometry.world_shapes import hull_arrays, local_point, shape_row, world_of

__all__ = ["points_near_shapes"]

_no_meshes = functools.cache(no_meshes)   # empty arrays, built once: 30 us a call otherwise
_no_hulls = functools.cache(lambda: hull_arrays(None))


@njit(cache=True, error_model="numpy")
def _subtree_span(nodes, i):
    """``(first, end)``: the points of node ``i``'s subtree (contiguous: Morton order)."""
    lo = i
    while nodes[lo, 1] == 0 and nodes[lo, 0] > 0:
        lo = nodes[lo, 0]
    hi = i
    while nodes[hi, 1] == 0 and nodes[hi, 0] > 0:
        hi = nodes[hi, 0] + 1
    return nodes[lo, 0], nodes[hi, 0] + nodes[hi, 1]


@njit(cache=True, error_model="numpy")
def _near_shape(W, H, M, T, centre, outer, k, padding, mask):
    """Marks in ``mask`` (tree order) the points of ``T`` within ``padding`` of shape ``k``
    (module docstring); returns the exact evaluations made (points and box centres)."""
    P, nodes, boxes = T.points, T.nodes, T.boxes
    s = shape_row(W, k)
    c, R, slack = shape_sphere(s, centre, outer, k, boxes)
    limit, sure = padding + slack, padding - slack
    point_bound = s.kind > CAPSULE and s.kind != PLANE
    exact_low = not point_bound   # node_lower is the minimum over the box (capsule: below limit)
    hint = -1
    mesh = W.mesh_id[k]
    evals = 0
    stack = np.empty(TREE_STACK, np.int64)
    stack[0], top = 0, 1
    while top > 0:
        top -= 1
        i = stack[top]
        low = node_lower(s, boxes, i, c, R, limit)
        if low > limit:
            continue
        first, count = nodes[i, 0], nodes[i, 1]
        j = first
        h = 0.5 * math.sqrt((boxes[i, 3] - boxes[i, 0]) ** 2 + (boxes[i, 4] - boxes[i, 1]) ** 2
                            + (boxes[i, 5] - boxes[i, 2]) ** 2)
        # the box's centre (not for a lone point, its own centre, nor where node_lower is the
        # exact minimum over the box and the box is too large to lie within the padding), then
        # the leaf's points: one exact evaluation site (nearest_ball's reason: no inlined call
        # taking W, H, M)
        centre = count != 1 and not (exact_low and low + h >= sure)
        if not centre and count == 0:
            stack[top], stack[top + 1] = first, first + 1
            top += 2
            continue
        for u in range(-1 if centre else 0, count):
            if u < 0:
                x = (0.5 * (boxes[i, 0] + boxes[i, 3]), 0.5 * (boxes[i, 1] + boxes[i, 4]),
                     0.5 * (boxes[i, 2] + boxes[i, 5]))
            else:
                j = first + u
                if mask[j]:
                    continue
                x = (P[j, 0], P[j, 1], P[j, 2])
                if point_bound and math.sqrt((x[0] - c[0]) ** 2 + (x[1] - c[1]) ** 2
                                             + (x[2] - c[2]) ** 2) - R > limit:
                    continue
            if s.kind == CONVEX:   # the face planes' bound first: exact inside, O(faces)
                q = local_point(s, x)
                near = limit + (h if u < 0 else 0.0)
                d, f = hull_planes(H, s.hull_id, q[0], q[1], q[2], near)
                if d == -math.inf or 0.0 <= d <= near:   # no faces, or near
                    d = hull_nearest(H, s.hull_id, q[0], q[1], q[2], d, f)[0]
            elif s.kind == MESH:
                d, _, _, hint = mesh_point(M, mesh, s, x, hint)
            else:
                d = point_row(s, x)[0]
            evals += 1
            if u >= 0:
                if d <= padding:
                    mask[j] = True
                continue
            if d - h > limit:
                break
            if d + h < sure:   # every point of the box within the padding
                a, b = _subtree_span(nodes, i)
                mask[a:b] = True
                break
            if count == 0:   # an inner node: its children
                stack[top], stack[top + 1] = first, first + 1
                top += 2
                break
    return evals


@njit(cache=True, error_model="numpy")
def _near_entry(table, H, M, T, centre, outer, shapes, padding, mask, evaluations):
    W = world_of(table)
    for q in range(shapes.shape[0]):
        evaluations[q] = _near_shape(W, H, M, T, centre, outer, shapes[q], padding, mask)


def points_near_shapes(point_set, world, shapes=None, padding: float = 0.0, bounds=None,
                       input_rows: bool = False, evaluations: np.ndarray | None = None) -> np.ndarray:
    """``(n,) bool``: the points of ``point_set`` within ``padding`` (m, finite, >= 0) of any of
    the shapes ``shapes`` (indices; default all) of ``world`` (a WorldShapes in the points'
    frame), in one compiled call (module docstring). Tree order (``len(point_set)``), or with
    ``input_rows`` over the ``point_set.n_input`` input rows. ``bounds``: :func:`shape_bounds`
    of ``world``'s shapes (computed when None). ``evaluations`` ((K,) int64, optional): filled
    with the exact evaluations made per queried shape."""
    n = len(world)
    idx = np.arange(n, dtype=np.int64) if shapes is None else np.ascontiguousarray(shapes, np.int64).reshape(-1)
    if len(idx) and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"points_near_shapes: shape index out of range 0..{n - 1}: {idx.tolist()}")
    pad = float(padding)
    if not (math.isfinite(pad) and pad >= 0.0):
        raise ValueError(f"points_near_shapes: padding must be finite and >= 0 (m), got {padding!r}")
    evals = np.zeros(len(idx), np.int64) if evaluations is None else evaluations
    if evals.shape != (len(idx),) or evals.dtype != np.int64:
        raise ValueError(f"points_near_shapes: evaluations must be ({len(idx)},) int64")
    mask = np.zeros(len(point_set), np.bool_)
    if len(point_set) and len(idx):
        centre, outer = shape_bounds(world) if bounds is None else bounds
        meshes = _no_meshes() if world.meshes is None else world.meshes.arrays()
        hulls = _no_hulls() if world.hulls is None else hull_arrays(world.hulls)
        _near_entry(world.table, hulls, meshes, PointTree(*point_set.arrays()),
                    centre, outer, idx, pad, mask, evals)
    else:
        evals[:] = 0
    if not input_rows:
        return mask
    rows = np.zeros(point_set.n_input, np.bool_)
    rows[point_set.index[mask]] = True
    return rows
