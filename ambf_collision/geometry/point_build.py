"""The compiled build of a :class:`~ambf_collision.geometry.point_set.PointSet`: selection,
voxel filter, Morton k-d tree (the steps, the arrays and the measurements are in that module's
docstring). Every function writes into the arrays of a ``BuildScratch`` and returns views of
them; nothing here allocates per point but the voxel filter's hash table.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

__all__ = ["LEAF_SIZE", "GRID_BITS", "build_arrays", "morton_order", "select_points",
           "split_nodes", "subset_arrays", "tree_boxes", "voxel_first"]

LEAF_SIZE = 8
"""Points per leaf at most (a leaf's points are tested one by one after their node's bound)."""

GRID_BITS = 21   # cells per axis of the voxel filter's keys: three fit in an int64
_AXIS_BITS = 8    # Morton grid: 2^8 cubes a side: 24-bit codes
_PASS_BITS = 12   # radix sort: two passes of 12 bits (4,096 counters: 32 kB, in L1)
_PASSES = 3 * _AXIS_BITS // _PASS_BITS


@njit(cache=True, error_model="numpy")
def select_points(points, R, t, origin, min_range, max_range, use_range, keep, world):
    """The points ``R x + t`` of ``points`` written to ``world`` (at their input rows), and the
    rows to keep (input order; a view of ``keep``, (>= N,) int64 scratch) with the counts of
    non-finite and out-of-range rows. ``origin`` (3,), ranges in m, in ``world``'s frame;
    ``use_range`` False keeps every finite row."""
    n = points.shape[0]
    m = 0
    nonfinite = 0
    outside = 0
    lo2, hi2 = min_range * min_range, max_range * max_range
    for i in range(n):
        p0, p1, p2 = points[i, 0], points[i, 1], points[i, 2]
        x0 = R[0, 0] * p0 + R[0, 1] * p1 + R[0, 2] * p2 + t[0]
        x1 = R[1, 0] * p0 + R[1, 1] * p1 + R[1, 2] * p2 + t[1]
        x2 = R[2, 0] * p0 + R[2, 1] * p1 + R[2, 2] * p2 + t[2]
        if not (math.isfinite(x0) and math.isfinite(x1) and math.isfinite(x2)):
            nonfinite += 1   # a NaN or infinite input, or a transform that overflows
            continue
        world[i, 0], world[i, 1], world[i, 2] = x0, x1, x2
        if use_range:
            r2 = (x0 - origin[0]) ** 2 + (x1 - origin[1]) ** 2 + (x2 - origin[2]) ** 2
            if r2 < lo2 or r2 > hi2:
                outside += 1
                continue
        keep[m] = i
        m += 1
    return keep[:m], nonfinite, outside


@njit(cache=True, error_model="numpy")
def voxel_first(points, rows, voxel):
    """The first row (input order) of ``rows`` in each cell ``floor(x / voxel)`` (a hash table
    of the cells, open addressing); returns ``(kept rows, 0)``, or ``(rows, axis + 1)`` when
    axis ``axis`` spans too many cells."""
    n = rows.shape[0]
    cells = np.empty((n, 3))
    low = np.full(3, np.inf)
    high = np.full(3, -np.inf)
    for j in range(n):
        for a in range(3):
            c = math.floor(points[rows[j], a] / voxel)
            cells[j, a] = c
            low[a] = min(low[a], c)
            high[a] = max(high[a], c)
    for a in range(3):
        if n and not high[a] - low[a] < 2.0 ** GRID_BITS:   # also catches an infinite quotient
            return rows, a + 1
    bits = 1
    while (1 << bits) < 2 * n:
        bits += 1
    size = 1 << bits
    table = np.empty(size, np.int64)
    used = np.zeros(size, np.bool_)
    out = np.empty(n, np.int64)
    m = 0
    for j in range(n):
        key = np.uint64(0)
        for a in range(3):
            key = (key << np.uint64(GRID_BITS)) | np.uint64(cells[j, a] - low[a])
        h = (key * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - bits)   # Fibonacci hashing
        slot = np.int64(h)
        k = np.int64(key)
        while used[slot] and table[slot] != k:
            slot = (slot + 1) & (size - 1)
        if not used[slot]:
            used[slot] = True
            table[slot] = k
            out[m] = rows[j]
            m += 1
    return out[:m], 0


def _spread(x: int) -> int:
    """The bits of ``x`` spread to every third bit (a Morton code's one axis)."""
    return sum(((x >> b) & 1) << (3 * b) for b in range(_AXIS_BITS))


_SPREAD = np.array([_spread(x) for x in range(1 << _AXIS_BITS)], dtype=np.int64)   # a table


@njit(cache=True, error_model="numpy")
def morton_order(world, rows, points, key, key2, idx, idx2):
    """The rows ``rows`` of ``world`` sorted by their Morton code on a grid of
    ``2^_AXIS_BITS`` cubes a side over their bounding box (LSD radix sort of the codes with
    their rows, ``_PASS_BITS`` bits a pass; stable), then the points gathered once in that
    order: ``(points (n,3), index (n,), codes (n,))``, views of the scratch arrays ``points``
    (>= n, 3), ``key, key2, idx, idx2`` (>= n,), whose first n rows it overwrites."""
    n = rows.shape[0]
    lo = np.full(3, np.inf)   # halves of the coordinates: their differences cannot overflow
    hi = np.full(3, -np.inf)
    for a in range(3):   # axis by axis: scalar bounds in registers
        low, high = np.inf, -np.inf
        for j in range(n):
            v = 0.5 * world[rows[j], a]
            low, high = min(low, v), max(high, v)
        lo[a], hi[a] = low, high
    ext = max(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2], 0.0)
    inv = (1 << _AXIS_BITS) / ext if ext > 0.0 else 0.0
    if not math.isfinite(inv):   # a subnormal extent: one cell (ranges split in their middle)
        inv = 0.0
    buckets = 1 << _PASS_BITS
    count = np.zeros((_PASSES, buckets + 1), np.int64)   # every pass's histogram, one read
    for j in range(n):
        r = rows[j]
        c = 0
        for a in range(3):
            c |= _SPREAD[min(np.int64((0.5 * world[r, a] - lo[a]) * inv), (1 << _AXIS_BITS) - 1)] << (2 - a)
        key[j] = c
        idx[j] = r
        for p in range(_PASSES):
            count[p, ((c >> (p * _PASS_BITS)) & (buckets - 1)) + 1] += 1
    for p in range(_PASSES):
        shift = p * _PASS_BITS
        for b in range(buckets):
            count[p, b + 1] += count[p, b]
        for j in range(n):
            b = (key[j] >> shift) & (buckets - 1)
            t = count[p, b]
            count[p, b] += 1
            key2[t] = key[j]
            idx2[t] = idx[j]
        key, key2 = key2, key
        idx, idx2 = idx2, idx
    for j in range(n):   # one gather: the rows are sorted, the points moved once
        r = idx[j]
        points[j, 0], points[j, 1], points[j, 2] = world[r, 0], world[r, 1], world[r, 2]
    return points[:n], idx[:n], key[:n]


@njit(cache=True, error_model="numpy")
def split_nodes(codes, leaf, nodes):
    """The nodes (module docstring) over points sorted by Morton ``codes``: a range is split
    where its highest differing code bit changes (the midpoint of its grid cell along that
    bit's axis), a range of one code in its middle; ranges of at most ``leaf`` points are
    leaves. Writes ``nodes`` ((>= 2n + 1, 2) int64 scratch) and returns ``nodes[:used]``."""
    n = codes.shape[0]
    nodes[0, 0], nodes[0, 1] = 0, n   # (start, count) while building
    used = 1
    i = 0
    while i < used:
        start, count = nodes[i, 0], nodes[i, 1]
        i += 1
        if count <= leaf:
            continue
        last = start + count - 1
        diff = codes[start] ^ codes[last]
        if diff == 0:
            mid = start + count // 2
        else:
            bit = 0
            while (diff >> (bit + 1)) != 0:
                bit += 1
            threshold = (codes[last] >> bit) << bit   # the first code with that bit set
            lo, hi = start, last   # codes[lo] < threshold <= codes[hi]
            while hi - lo > 1:
                m = (lo + hi) // 2
                if codes[m] < threshold:
                    lo = m
                else:
                    hi = m
            mid = hi
        nodes[used, 0], nodes[used, 1] = start, mid - start
        nodes[used + 1, 0], nodes[used + 1, 1] = mid, start + count - mid
        nodes[i - 1, 0], nodes[i - 1, 1] = used, 0
        used += 2
    return nodes[:used]


@njit(cache=True, error_model="numpy")
def tree_boxes(pts, nodes, boxes):
    """Tight boxes ``boxes[:m]`` (``lo, hi``; ``boxes`` (>= m, 6) is overwritten and its first m
    rows returned) of the nodes ``nodes (m,2)`` over ``pts (n,3)`` (children after their
    parents): leaves from their points, parents as unions."""
    m = nodes.shape[0]
    for i in range(m - 1, -1, -1):
        first, count = nodes[i, 0], nodes[i, 1]
        for a in range(3):
            boxes[i, a], boxes[i, 3 + a] = np.inf, -np.inf
        if count > 0 or pts.shape[0] == 0:
            for j in range(first, first + count):
                for a in range(3):
                    boxes[i, a] = min(boxes[i, a], pts[j, a])
                    boxes[i, 3 + a] = max(boxes[i, 3 + a], pts[j, a])
        else:
            for a in range(3):
                boxes[i, a] = min(boxes[first, a], boxes[first + 1, a])
                boxes[i, 3 + a] = max(boxes[first, 3 + a], boxes[first + 1, 3 + a])
    return boxes[:m]


@njit(cache=True, error_model="numpy")
def build_arrays(points, R, t, origin, min_range, max_range, use_range, voxel, leaf, keep, world,
                 sorted_points, key, key2, idx, idx2, nodes, boxes):
    """The whole build in one compiled call (module docstring), in the arrays of a
    :class:`BuildScratch` (``keep`` .. ``boxes``, in :data:`BuildScratch.FIELDS` order), the
    points placed by ``R (3,3)``, ``t (3,)``: ``(points, index, codes, nodes, boxes,
    n_nonfinite, n_out_of_range, n_selected, bad_axis)``, the first five views of the scratch
    (``codes``: the points' Morton codes, for :func:`subset_arrays`); ``bad_axis`` > 0 names
    the axis (1-based) the voxel grid spans too many cells of."""
    rows, nonfinite, outside = select_points(points, R, t, origin, min_range, max_range,
                                             use_range, keep, world)
    selected = rows.shape[0]
    bad = 0
    if voxel > 0.0:
        rows, bad = voxel_first(world, rows, voxel)
    pts, ix, codes = morton_order(world, rows, sorted_points, key, key2, idx, idx2)
    used = split_nodes(codes, leaf, nodes)
    return pts, ix, codes, used, tree_boxes(pts, used, boxes), nonfinite, outside, selected, bad


@njit(cache=True, error_model="numpy")
def subset_arrays(points, index, codes, keep, leaf, out_points, out_index, out_codes, nodes,
                  boxes):
    """The tree of the points where ``keep`` (tree order) is True: ``(points, index, codes,
    nodes, boxes)``, views of the ``out_*``, ``nodes``, ``boxes`` scratch arrays (another
    scratch's than the input's). The kept points stay in Morton order (a subsequence of a
    sorted sequence), so only the splits and the boxes are made again, on the same grid: no
    sort."""
    k = 0
    for j in range(keep.shape[0]):
        if keep[j]:
            out_points[k, 0], out_points[k, 1], out_points[k, 2] = points[j, 0], points[j, 1], points[j, 2]
            out_index[k], out_codes[k] = index[j], codes[j]
            k += 1
    pts, cs = out_points[:k], out_codes[:k]
    used = split_nodes(cs, leaf, nodes)
    return pts, out_index[:k], cs, used, tree_boxes(pts, used, boxes)
