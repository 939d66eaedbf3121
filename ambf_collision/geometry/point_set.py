"""A point obstacle set: a cloud of balls, built once per cloud as a compiled k-d tree.

:class:`PointSet` takes ``points (N,3)`` float64 (m, in the frame the shapes it is queried
against are given in, usually the world) and a ``point_radius`` (m, >= 0: each point is a ball
of that radius). The build (all compiled, ``@njit(cache=True)``):

1. **Selection** (:func:`_select`): points with a NaN or infinite coordinate are dropped and
   counted (``n_nonfinite``): depth cameras and lidars write NaN for pixels without a return
   (organised clouds), so refusing them would refuse most clouds; the count lets a caller report
   them. With ``origin``, points nearer than ``min_range`` or farther than ``max_range`` (m, the
   Euclidean distance from ``origin``) are dropped and counted (``n_out_of_range``).
2. **Voxel filter** (``voxel_size`` m; 0 keeps every point): the cells of the world-anchored grid
   ``floor(x / voxel_size)`` keep the first of their points in input order (a measured point, not
   a centroid, which can lie where nothing was seen, e.g. inside a concave corner), by a hash
   table of the cells. Guarantee: every selected point lies in the cell of a kept point, so
   within ``sqrt(3) voxel_size`` of it, and no two kept points share a cell; the distance of any
   shape to the filtered set is at most ``sqrt(3) voxel_size`` above its distance to the
   unfiltered one, never below. A grid of more than 2^21 cells along an axis is refused
   (ValueError: raise ``voxel_size`` or bound the range).
3. **k-d tree** (:func:`_morton_order`, :func:`_split_nodes`, :func:`tree_boxes`): the points
   sorted by their Morton code on a grid of 2^8 cubes a side over their bounding box (a radix
   sort: three passes, the points travel with their keys); a node's range is split where its
   highest differing code bit changes, i.e. at the midpoint of its grid cell along that bit's
   axis (a k-d tree with midpoint splits, cycling x, y, z), a range of one code in its middle;
   ranges of at most :data:`LEAF_SIZE` points are leaves; then tight boxes, leaves first,
   parents as unions. O(N): no comparison sort, no median search.

Arrays (constant after the build; tree order): ``points (n,3)``, ``index (n,) int64`` (row of
each point in the input array), ``codes (n,) int64`` (their Morton codes: :meth:`PointSet.subset`
drops points and splits again without a sort), ``nodes (m,2) int64`` (``(first, count)``: a leaf holds points
``first .. first + count - 1``; an inner node has ``count == 0`` and children ``first``,
``first + 1``: the layout of :mod:`~ambf_collision.geometry.bvh`), ``boxes (m,6)`` (``lo, hi``).
Queries: :mod:`~ambf_collision.geometry.point_query`.

**Why a k-d tree, not a voxel hash.** The query is a nearest-point search from any shape, at
any distance: a shape far from every point must still get its nearest point, and the answer is
exact. A tree answers that by branch and bound with no search radius (a bounded node prunes all
its points at once, whatever the cloud's density); a voxel hash needs a radius, or shells grown
until a point is found, whose cost grows with the empty space around a shape (a link 1 m from a
wall on a 1 cm grid: ~10^6 empty cells). The voxel hash was therefore not built as the query
structure; the voxel *filter* uses one. **Why Morton splits, not medians** (both built and
measured, bench/bench_point_set.py, 24,000 points, 2 shared cores, 2026-12-07): the
median-split k-d tree (quickselect per node, the textbook build) took 4.8-5.5 ms, over the
2 ms target; the Morton build 1.0 ms (median, p99 1.3 ms, in a kept scratch; radix sort
0.44-0.64 ms, node splits 0.13-0.16 ms, boxes 0.08 ms; NumPy's stable argsort of the same keys
alone takes 1.5 ms), with queries no dearer (exact evaluations per demo-arm shape: 58 against
80 on a depth-camera-like cloud, 32 against 35 on a uniform one). **Allocation**: a build's
work arrays (about 3 MB for 24,000 points) live in a :class:`BuildScratch`, which a caller
building a set per cloud keeps: with glibc's default, which maps blocks over 128 kB afresh,
their page faults took a build to 3.3 ms in one process (bench docstring). The set's own
arrays (about 1.3 MB) are new per set.
"""

from __future__ import annotations

import math
import weakref

import numpy as np
from numba import njit

__all__ = ["LEAF_SIZE", "BuildScratch", "PointSet", "build_arrays", "checked_length", "subset_arrays",
           "tree_boxes"]

LEAF_SIZE = 8
"""Points per leaf at most (a leaf's points are tested one by one after their node's bound)."""

_GRID_BITS = 21   # cells per axis of the voxel filter's keys: three fit in an int64
_AXIS_BITS = 8    # Morton grid: 2^8 cubes a side: 24-bit codes
_PASS_BITS = 12   # radix sort: two passes of 12 bits (4,096 counters: 32 kB, in L1)
_PASSES = 3 * _AXIS_BITS // _PASS_BITS


@njit(cache=True, error_model="numpy")
def _select(points, R, t, origin, min_range, max_range, use_range, keep, world):
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
def _voxel_first(points, rows, voxel):
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
        if n and not high[a] - low[a] < 2.0 ** _GRID_BITS:   # also catches an infinite quotient
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
            key = (key << np.uint64(_GRID_BITS)) | np.uint64(cells[j, a] - low[a])
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
def _morton_order(world, rows, points, key, key2, idx, idx2):
    """The rows ``rows`` of ``world`` sorted by their Morton code on a grid of
    ``2^_AXIS_BITS`` cubes a side over their bounding box (LSD radix sort of the codes with
    their rows, ``_AXIS_BITS`` bits a pass; stable), then the points gathered once in that
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
def _split_nodes(codes, leaf, nodes):
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
    rows, nonfinite, outside = _select(points, R, t, origin, min_range, max_range, use_range,
                                       keep, world)
    selected = rows.shape[0]
    bad = 0
    if voxel > 0.0:
        rows, bad = _voxel_first(world, rows, voxel)
    pts, ix, codes = _morton_order(world, rows, sorted_points, key, key2, idx, idx2)
    used = _split_nodes(codes, leaf, nodes)
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
    used = _split_nodes(cs, leaf, nodes)
    return pts, out_index[:k], cs, used, tree_boxes(pts, used, boxes)


class BuildScratch:
    """The arrays a :class:`PointSet` is built in, for clouds of up to ``capacity`` points
    (grown when a larger one comes): the work arrays of :func:`build_arrays` and the set's own
    arrays, which the set keeps as views (:data:`FIELDS`: name, rows per point, columns,
    dtype). With glibc's default, which maps blocks over 128 kB afresh and unmaps them when
    freed, the page faults of 2.4 MB of new arrays took a 24,000-point build from 0.7 to 1.5 ms
    (2026-12-08): a caller building a set per cloud keeps a scratch, or two, and passes one to
    every build.

    **Ownership.** The set last built in a scratch holds views of it; the next build in the
    same scratch first gives that set copies of its arrays if it is still referenced anywhere
    (a weak reference tells), so a set never changes under its holder. A caller that drops its
    sets before reusing the scratch (the monitor keeps one cloud per source and builds in the
    scratch of the cloud before) pays no copy."""

    FIELDS = (("keep", 1, 0, np.int64), ("world", 1, 3, np.float64),
              ("sorted_points", 1, 3, np.float64), ("key", 1, 0, np.int64),
              ("key2", 1, 0, np.int64), ("idx", 1, 0, np.int64), ("idx2", 1, 0, np.int64),
              ("nodes", 2, 2, np.int64), ("boxes", 2, 6, np.float64))

    def __init__(self, capacity: int = 0):
        self.capacity = -1
        self._owner = None   # weak reference to the set holding views of these arrays
        self.reserve(capacity)

    def reserve(self, n: int) -> None:
        """Room for ``n`` points at least (new arrays: a set holding the old ones keeps them)."""
        if n <= self.capacity:
            return
        n = max(int(n), 1)
        self.capacity = n
        self._owner = None
        for name, per_point, columns, dtype in self.FIELDS:
            rows = per_point * n + 1 if per_point > 1 else n   # nodes: at most 2n - 1
            setattr(self, name, np.empty((rows, columns) if columns else rows, dtype))

    def arrays(self) -> tuple:
        """The arrays in :data:`FIELDS` order (the tail of :func:`build_arrays`' arguments)."""
        return tuple(getattr(self, name) for name, *_ in self.FIELDS)

    def holds(self, point_set) -> bool:
        """Whether ``point_set`` keeps views of these arrays (it was the last built here)."""
        return point_set is not None and self._owner is not None and self._owner() is point_set

    def claim(self, n: int, point_set: "PointSet") -> None:
        """Make room for ``n`` points and give the arrays to ``point_set``: the set built here
        before keeps copies of its arrays if it is still referenced (class docstring)."""
        previous = self._owner() if self._owner is not None else None
        if previous is not None and previous is not point_set:
            previous._own_arrays()
        self.reserve(n)
        self._owner = weakref.ref(point_set)


def checked_length(owner: str, name: str, value, allow_inf: bool = False) -> float:
    """``value`` as a length (m): finite and >= 0 (+inf too with ``allow_inf``), else
    ValueError naming ``owner`` and the key ``name``."""
    v = float(value)
    if not (v >= 0.0 and (allow_inf or math.isfinite(v))):
        raise ValueError(f"{owner}: {name} must be {'>= 0' if allow_inf else 'finite and >= 0'}"
                         f" (m), got {value!r}")
    return v


class PointSet:
    """The obstacle set of one cloud (module docstring): ``points (N,3)`` (m), each a ball of
    ``point_radius`` (m), placed by ``pose = (R (3,3), t (3,))`` (the set holds ``R x + t``: the
    points given in a sensor's frame, the set in world; None: as given); ``voxel_size`` (m, 0:
    every point); ``origin (3,)`` (m, the sensor, in the set's frame) with ``min_range`` /
    ``max_range`` (m; without ``origin`` no range filter); ``scratch``: a
    :class:`BuildScratch` to build in (a new one when None), whose arrays the set keeps.

    Attributes: ``points``, ``index``, ``codes``, ``nodes``, ``boxes`` (tree order, module
    docstring; read-only); ``point_radius``; ``n_input`` (rows given), ``n_nonfinite``,
    ``n_out_of_range``, ``n_voxel_merged`` (selected points dropped by the voxel filter);
    ``len()`` = points kept. Raises ValueError for a malformed array or parameter (never for a
    NaN or infinite point: those are dropped and counted)."""

    def __init__(self, points, point_radius: float = 0.0, voxel_size: float = 0.0, origin=None,
                 min_range: float = 0.0, max_range: float = math.inf, scratch=None, pose=None):
        try:
            P = np.ascontiguousarray(points, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise ValueError(f"PointSet: points must be an (N, 3) array of numbers: {err}") from None
        if P.ndim != 2 or P.shape[1] != 3:
            raise ValueError(f"PointSet: points must be an (N, 3) array, got shape {P.shape}")
        self.point_radius = checked_length("PointSet", "point_radius", point_radius)
        voxel = checked_length("PointSet", "voxel_size", voxel_size)
        lo = checked_length("PointSet", "min_range", min_range)
        hi = checked_length("PointSet", "max_range", max_range, allow_inf=True)
        if lo > hi:
            raise ValueError(f"PointSet: min_range {lo} > max_range {hi}")
        use_range = origin is not None
        o = _finite_array(np.zeros(3) if origin is None else origin, (3,), "origin")
        R, t = (np.eye(3), np.zeros(3)) if pose is None else pose
        R, t = _finite_array(R, (3, 3), "pose rotation"), _finite_array(t, (3,), "pose translation")
        if scratch is None:
            scratch = BuildScratch()
        scratch.claim(len(P), self)
        (self.points, self.index, self.codes, self.nodes, self.boxes, nonfinite, outside,
         selected, bad) = build_arrays(P, R, t, o, lo, hi, use_range, voxel, np.int64(LEAF_SIZE),
                                       *scratch.arrays())
        if bad:
            raise ValueError(f"PointSet: voxel_size {voxel} m gives more than 2^{_GRID_BITS} cells "
                             f"along {'xyz'[bad - 1]}: raise voxel_size or bound the range")
        self._freeze()
        self.n_input = len(P)
        self.n_nonfinite, self.n_out_of_range = int(nonfinite), int(outside)
        self.n_voxel_merged = int(selected) - len(self.points)

    def __len__(self) -> int:
        return len(self.points)

    def _freeze(self) -> None:
        """Read-only views (a view of its own: numba hands back a whole scratch array itself)."""
        self.points, self.index, self.codes, self.nodes, self.boxes = (
            a.view() for a in (self.points, self.index, self.codes, self.nodes, self.boxes))
        for a in (self.points, self.index, self.codes, self.nodes, self.boxes):
            a.flags.writeable = False

    def _own_arrays(self) -> None:
        """Copies of the arrays instead of views of a scratch (:meth:`BuildScratch.claim`)."""
        self.points, self.index, self.codes, self.nodes, self.boxes = (
            a.copy() for a in (self.points, self.index, self.codes, self.nodes, self.boxes))
        self._freeze()

    def subset(self, keep, scratch=None) -> "PointSet":
        """A new set of this set's points where ``keep`` (``(len(self),)`` bool, tree order) is
        True, same radius, its tree made again on this set's grid (:func:`subset_arrays`: no
        sort) in ``scratch`` (as the constructor's; give another than this set's, or this set
        first takes copies of its arrays); its ``index`` names the rows of this set's input, and
        its counts are this set's."""
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (len(self),):
            raise ValueError(f"PointSet.subset: keep must be ({len(self)},) bool, got {keep.shape}")
        out = object.__new__(PointSet)
        if scratch is None:
            scratch = BuildScratch()
        scratch.claim(len(self), out)
        out.point_radius = self.point_radius
        out.points, out.index, out.codes, out.nodes, out.boxes = subset_arrays(
            self.points, self.index, self.codes, keep, np.int64(LEAF_SIZE), scratch.sorted_points,
            scratch.idx, scratch.key, scratch.nodes, scratch.boxes)
        out._freeze()
        out.n_input, out.n_nonfinite = self.n_input, self.n_nonfinite
        out.n_out_of_range, out.n_voxel_merged = self.n_out_of_range, self.n_voxel_merged
        return out

    def arrays(self) -> tuple:
        """``(points, index, nodes, boxes)``, the tree the compiled queries read."""
        return self.points, self.index, self.nodes, self.boxes


def _finite_array(value, shape: tuple, name: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape``, all finite, else ValueError naming ``name``."""
    a = np.asarray(value, dtype=np.float64)
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ValueError(f"PointSet: {name} must be {'x'.join(map(str, shape))} finite numbers "
                         f"(m), got {value!r}")
    return a
