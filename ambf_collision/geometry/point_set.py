"""A point obstacle set: a cloud of balls, built once per cloud as a compiled k-d tree.

:class:`PointSet` takes ``points (N,3)`` float64 (m, in the frame the shapes it is queried
against are given in, usually the world) and a ``point_radius`` (m, >= 0: each point is a ball
of that radius). The build (all compiled, ``@njit(cache=True)``):

1. **Selection** (``point_build.select_points``): points with a NaN or infinite coordinate are dropped and
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
3. **k-d tree** (``point_build``: ``morton_order``, ``split_nodes``, ``tree_boxes``): the points
   sorted by their Morton code on a grid of 2^8 cubes a side over their bounding box (a radix
   sort of the codes with their rows in two passes of 12 bits, then one gather of the points);
   a node's range is split where its
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
2 ms target; the Morton build 1.0 ms then (median, p99 1.3 ms, in a kept scratch; NumPy's
stable argsort of the same keys alone takes 1.5 ms), with queries no dearer (exact evaluations
per demo-arm shape: 58 against 80 on a depth-camera-like cloud, 32 against 35 on a uniform
one). Now (2026-12-07, 24,000 points, a kept scratch, bench/bench_point_set.py): 0.50 ms
placed from the sensor's frame, the radix sort 0.27 ms of it. **Allocation**: the build's work
arrays and the set's own arrays (about 2.4 MB for 24,000 points) live in a
:class:`BuildScratch` (its ownership rule: a set never changes under its holder), which a caller
building a set per cloud keeps: with glibc's default, which maps blocks over 128 kB afresh,
their page faults took a build from 0.6 to 1.5 ms, and to 3.3 ms in one process.
"""

from __future__ import annotations

import math
import weakref

import numpy as np

from ambf_collision.geometry.point_build import (GRID_BITS, LEAF_SIZE, build_arrays,
                                                  subset_arrays)

__all__ = ["LEAF_SIZE", "BuildScratch", "PointSet", "checked_array", "checked_length"]


class BuildScratch:
    """The arrays a :class:`PointSet` is built in, for clouds of up to ``capacity`` points
    (grown when a larger one comes): the work arrays of :func:`build_arrays` and the set's own
    arrays, which the set keeps as views (:data:`FIELDS`: name, rows per point, columns,
    dtype). With glibc's default, which maps blocks over 128 kB afresh and unmaps them when
    freed, the page faults of 2.4 MB of new arrays took a 24,000-point build from 0.7 to 1.5 ms
    (2026-12-07): a caller building a set per cloud keeps a scratch, or two, and passes one to
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
        self.reserve(n)   # when it grows, the set built before keeps the old arrays: no copy
        previous = self._owner() if self._owner is not None else None
        if previous is not None and previous is not point_set:
            previous._own_arrays()
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
        o = checked_array("PointSet", "origin", np.zeros(3) if origin is None else origin, (3,))
        R, t = (np.eye(3), np.zeros(3)) if pose is None else pose
        R = checked_array("PointSet", "pose rotation", R, (3, 3), unit="")
        t = checked_array("PointSet", "pose translation", t, (3,))
        if scratch is None:
            scratch = BuildScratch()
        scratch.claim(len(P), self)
        (self.points, self.index, self.codes, self.nodes, self.boxes, nonfinite, outside,
         selected, bad) = build_arrays(P, R, t, o, lo, hi, use_range, voxel, np.int64(LEAF_SIZE),
                                       *scratch.arrays())
        if bad:
            raise ValueError(f"PointSet: voxel_size {voxel} m gives more than 2^{GRID_BITS} cells "
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
        True, same radius, its tree made again on this set's grid (``point_build.subset_arrays``: no
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


def checked_array(owner: str, name: str, value, shape: tuple, unit: str = "m") -> np.ndarray:
    """``value`` as a C-contiguous float64 array of ``shape`` (the layout the kernels are
    compiled for), every entry finite, else ValueError naming ``owner`` and the key ``name``
    (``unit``: the entries' unit for the message, '' for none)."""
    a = np.ascontiguousarray(value, dtype=np.float64)
    if a.shape != shape or not np.all(np.isfinite(a)):
        dims = "x".join(map(str, shape))
        raise ValueError(f"{owner}: {name} must be {dims} finite numbers"
                         f"{f' ({unit})' if unit else ''}, got {value!r}")
    return a
