"""All pair distances of a fixed pair list in one compiled call, optionally skipping far pairs.

:class:`PairDistance` is compiled once from a list of shape index pairs ``(P, 2)``: it holds
constants only, as two record tables: ``pair_table`` (:data:`PAIR_DTYPE`: the two shapes, whether
a bound may skip the pair, each shape's padding) and ``bound_table`` (:data:`BOUND_DTYPE`: per
shape the data of its bounds). :func:`evaluate_pairs` (njit) computes every pair with the
kernels of :mod:`~ambf_collision.geometry.pair_kernels` into a caller-owned
:data:`PAIR_RESULT_DTYPE` table; :func:`contact_order` (njit) lists the pairs below a report
distance, closest first. In a compiled caller (the model's evaluate kernel):
``evaluate_pairs(W, H, pair_constants(pair_table, bound_table), near, pair_results(results), moved)``.
``PairDistance.compute(world, near=None)`` wraps both for tests and the CLI.

**Padding** (m, >= 0 per side): shape 1 grown by ``padding_1`` and shape 2 by ``padding_2``
(Minkowski sums with balls). For convex shapes that is exact: the signed distance drops by
``padding_1 + padding_2`` (apart and penetrating alike: both support functions grow by the
padding), the witnesses move along the normal, ``p1 + padding_1 n`` and ``p2 - padding_2 n``, and
the normal stays. Bounds drop by the same amount.

``near`` (m): only pairs that may be closer than ``near`` or than the smallest pair distance
need exact values. The pairs of closed-form kernels (two spheres/capsules, a sphere/capsule
with a box, cylinder or cone, anything with a plane) are always computed: they cost about as
much as a bound. The pairs that need GJK/EPA (a hull with a sphere, capsule or solid; two
solids) first get a conservative lower bound:
the gap between one shape and the other's bounding box in that shape's frame (slab gaps along
its axes), and, when no pair was computed exactly yet, the distance between the centres' bounding
spheres. A pair with a mesh that this bound cannot put beyond the cutoff gets a second one
before its exact computation: the distance of the mesh's hull to the other shape (or hull), by
GJK stopped as soon as a separating plane proves it beyond the cutoff (one hull GJK, where a
mesh pair costs a traversal of both hierarchies). A pair whose lower bound exceeds the cutoff
``max(near, smallest distance known) + BOUND_MARGIN`` (each exact distance of the last pass
lowers it for the pairs after) is not computed: ``exact`` is False for it, ``distance`` holds the lower bound, its witnesses are
a reference point of each shape (a sphere/capsule's first end ``a``, a solid's bound centre) and
its normal the unit vector between them (+z when they coincide). Every pair closer than ``near``
and the smallest distance are then exactly those of computing every pair. A pair whose shapes did not
move since the caller's results were written keeps its exact row (:func:`evaluate_pairs`); such a
pair is never bounded but computed once and then kept (two bodies fixed in the world cost nothing
after that, where a bound would cost its computation at every evaluation: with ``near`` finite the
demo arm's base and table pair was the evaluation's only bounded pair and made it slower than
computing every pair).

Bound data per shape (its local frame, metres): ``centre`` (box, cylinder, cone: the origin;
hull: the HullSet's centre), ``outer`` (every point of the shape within it of the centre: the
radius of its :func:`bounding_spheres`, which the probes' broadphase uses too),
``inner`` (the ball of that radius about the centre inside the shape; its depth there), ``slab``
(half extents of a box about the centre that holds the shape).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.gjk import (ABOVE_CUTOFF, SCRATCH_ROWS, convex_distance_below,
                                        convex_distance_in)
from ambf_collision.geometry.mesh_pairs import mesh_pair
from ambf_collision.geometry.mesh_set import no_meshes
from ambf_collision.geometry.pair_kernels import closed_form, convex_pair
from ambf_collision.geometry.segments import point_segment
from ambf_collision.geometry.shapes import (BOX, CAPSULE, CONE, CONVEX, CYLINDER, MESH, PLANE, SPHERE,
                                            ShapeError)
from ambf_collision.geometry.tolerances import BOUND_MARGIN
from ambf_collision.geometry.world_shapes import hull_arrays, make_hulls, shape_row, world_of, world_point

__all__ = ["PAIR_DTYPE", "BOUND_DTYPE", "PAIR_RESULT_DTYPE", "PairConstants", "PairResults",
           "PairDistance", "PairResult", "BoundRow", "evaluate_pairs", "contact_order",
           "pair_constants", "pair_results", "exact_pair", "bound_data", "bound_row", "bounds", "bounding_spheres"]

PAIR_DTYPE = np.dtype([
    ("shape_1", np.int64),      # shape index of the pair's first shape
    ("shape_2", np.int64),      # shape index of its second shape
    ("boundable", np.bool_),    # a lower bound may skip it (a GJK/EPA pair: module docstring)
    ("padding_1", np.float64),  # m: shape 1 grown by this ball (module docstring)
    ("padding_2", np.float64),  # m: shape 2 grown by this ball
], align=True)
"""One checked shape pair per row (constant)."""

BOUND_DTYPE = np.dtype([
    ("centre", np.float64, (3,)),  # m, shape frame: the bounds' centre
    ("outer", np.float64),         # m: every point of the shape within this of the centre
    ("inner", np.float64),         # m: the ball of this radius about the centre is inside
    ("slab", np.float64, (3,)),    # m: half extents of a box about the centre holding the shape
], align=True)
"""Per shape, in its own frame, the data of its lower bounds (module docstring)."""

PAIR_RESULT_DTYPE = np.dtype([
    ("distance", np.float64),       # m, signed (< 0 penetration); a lower bound where not exact
    ("point_1", np.float64, (3,)),  # m, world: witness on shape 1
    ("point_2", np.float64, (3,)),  # m, world: witness on shape 2
    ("normal", np.float64, (3,)),   # unit, world, from shape 1 to shape 2
    ("position", np.float64, (3,)),  # m, world: midpoint of the witnesses
    ("exact", np.bool_),            # False: a lower bound (near_only), reference points
    ("triangle", np.int64, (2,)),   # closest triangle of each shape, -1 for a shape not a mesh
], align=True)
"""One pair's result per row (per cycle)."""


class PairConstants(NamedTuple):
    """The constant tables' fields as compiled code reads them: per pair ``shape_1``,
    ``shape_2``, ``boundable``, ``padding_1``, ``padding_2`` (P,); per shape ``centre (N,3)``,
    ``outer (N,)``, ``inner (N,)``, ``slab (N,3)`` (module docstring)."""

    shape_1: np.ndarray
    shape_2: np.ndarray
    boundable: np.ndarray
    padding_1: np.ndarray
    padding_2: np.ndarray
    centre: np.ndarray
    outer: np.ndarray
    inner: np.ndarray
    slab: np.ndarray


class PairResults(NamedTuple):
    """The fields of a :data:`PAIR_RESULT_DTYPE` table, as compiled code writes them."""

    distance: np.ndarray
    point_1: np.ndarray
    point_2: np.ndarray
    normal: np.ndarray
    position: np.ndarray
    exact: np.ndarray
    triangle: np.ndarray


@njit(cache=True, inline="always")
def pair_constants(pairs, bound):
    """:class:`PairConstants` of a :data:`PAIR_DTYPE` and a :data:`BOUND_DTYPE` table."""
    return PairConstants(pairs.shape_1, pairs.shape_2, pairs.boundable, pairs.padding_1,
                         pairs.padding_2, bound.centre, bound.outer, bound.inner, bound.slab)


@njit(cache=True, inline="always")
def pair_results(table):
    """:class:`PairResults` of a :data:`PAIR_RESULT_DTYPE` table."""
    return PairResults(table.distance, table.point_1, table.point_2, table.normal, table.position,
                       table.exact, table.triangle)


# ------------------------------------------------------------------------------------- bounds

class BoundRow(NamedTuple):
    """A shape's bound data as values: ``centre`` (local 3-tuple), ``outer``, ``inner``,
    ``slab`` (3-tuple)."""

    centre: tuple
    outer: float
    inner: float
    slab: tuple


@njit(cache=True, error_model="numpy", inline="always")
def bound_row(C, k):
    """Shape ``k``'s bound data of ``C`` as a :class:`BoundRow`."""
    return BoundRow((C.centre[k, 0], C.centre[k, 1], C.centre[k, 2]), C.outer[k], C.inner[k],
                    (C.slab[k, 0], C.slab[k, 1], C.slab[k, 2]))


@njit(cache=True, error_model="numpy")
def _slab_gap(s, centre, slab, x, y):
    """Largest gap (m, negative inside) along the axes of shape row ``s`` between its slab
    (half extents ``slab``) about the world point ``centre`` and the segment ``x``-``y``."""
    R = s.rot
    gap = -math.inf
    for i in range(3):
        lx = (R[0][i] * (x[0] - centre[0]) + R[1][i] * (x[1] - centre[1])
              + R[2][i] * (x[2] - centre[2]))
        ly = (R[0][i] * (y[0] - centre[0]) + R[1][i] * (y[1] - centre[1])
              + R[2][i] * (y[2] - centre[2]))
        gap = max(gap, min(lx, ly) - slab[i], -max(lx, ly) - slab[i])
    return gap


@njit(cache=True, error_model="numpy")
def bounds(s1, b1, s2, b2, with_upper):
    """``(lower, upper, p1, p2)``: bounds (m) of the distance between shape rows ``s1``,
    ``s2`` (bound rows ``b1``, ``b2``; not both spheres/capsules, no plane) and a reference
    point (world 3-tuple) of each; ``upper`` is +inf unless ``with_upper`` (which also adds the
    bounding spheres to ``lower``)."""
    round1 = s1.kind <= CAPSULE
    if round1 or s2.kind <= CAPSULE:
        r, s, b = (s1, s2, b2) if round1 else (s2, s1, b1)
        cs = world_point(s, b.centre)
        lower = _slab_gap(s, cs, b.slab, r.a, r.b) - r.radius
        upper = math.inf
        if with_upper:
            dc = point_segment(cs, r.a, r.b)[0] - r.radius
            lower = max(lower, dc - b.outer)
            upper = dc - b.inner
        return (lower, upper, r.a, cs) if round1 else (lower, upper, cs, r.a)
    c1, c2 = world_point(s1, b1.centre), world_point(s2, b2.centre)
    lower = max(_slab_gap(s2, c2, b2.slab, c1, c1) - b1.outer,
                _slab_gap(s1, c1, b1.slab, c2, c2) - b2.outer)
    upper = math.inf
    if with_upper:
        dc = math.sqrt((c1[0] - c2[0]) ** 2 + (c1[1] - c2[1]) ** 2 + (c1[2] - c2[2]) ** 2)
        lower = max(lower, dc - b1.outer - b2.outer)
        upper = dc - b1.inner - b2.inner
    return lower, upper, c1, c2


# ---------------------------------------------------------------------------------- evaluation

@njit(cache=True, error_model="numpy", inline="always")
def exact_pair(W, H, M, k1, k2, pad1, pad2, hint1, hint2, scratch):
    """The exact signed distance (m) of shapes ``k1``, ``k2`` of ``W`` grown by ``pad1``,
    ``pad2`` (m): ``(d, x1, x2, n, t1, t2)``, witnesses (world, 3-tuples), the unit normal from
    ``k1`` to ``k2``, and each mesh's closest triangle (-1 for a shape not a mesh; ``hint1``,
    ``hint2``: the previous ones, the same result sooner). ``scratch (SCRATCH_ROWS, 9)``: the
    GJK/EPA work rows. The kernel of every exact pair of :func:`evaluate_pairs` (and of the
    motion kernel's samples, ``model/motion_kernel.py``)."""
    t1, t2 = hint1, hint2
    meshes = W.kind[k1] == MESH or W.kind[k2] == MESH
    if meshes and W.kind[k1] != PLANE and W.kind[k2] != PLANE:
        d, x1, x2, n, t1, t2 = mesh_pair(W, H, M, k1, k2, hint1, hint2)
        done = True
    else:
        d, x1, x2, n, done = closed_form(W, k1, k2)
    if not done and W.kind[k1] != PLANE and W.kind[k2] != PLANE:   # GJK/EPA
        d = convex_distance_in(W, H, k1, k2, scratch)[0]
        x1 = (scratch[5, 0], scratch[5, 1], scratch[5, 2])
        x2 = (scratch[6, 0], scratch[6, 1], scratch[6, 2])
        n = (scratch[7, 0], scratch[7, 1], scratch[7, 2])
    elif not done:
        d, x1, x2, n = convex_pair(W, H, k1, k2)
    d -= pad1 + pad2
    x1 = (x1[0] + pad1 * n[0], x1[1] + pad1 * n[1], x1[2] + pad1 * n[2])
    x2 = (x2[0] - pad2 * n[0], x2[1] - pad2 * n[1], x2[2] - pad2 * n[2])
    return d, x1, x2, n, t1, t2


@njit(cache=True, error_model="numpy")
def evaluate_pairs(W, H, M, C, near, R, moved):
    """Every pair of ``C`` (:class:`PairConstants`) for the shapes ``W`` (hulls ``H``, meshes
    ``M``: :class:`~ambf_collision.geometry.mesh_set.Meshes`), into the
    caller's :class:`PairResults` ``R``. ``near`` (m): +inf computes every pair exactly; a
    finite value skips the pairs a lower bound proves farther (module docstring). Distances,
    bounds and witnesses include the pairs' padding. Returns the smallest distance (+inf for no
    pair).

    ``moved (N,)``: the shapes that moved since ``R`` was last written (``to_world``). A pair
    whose row of ``R`` is exact and whose two shapes did not move keeps that row: it is the
    result of the same kernel on the same values, bit for bit (two bodies fixed in the world, a
    robot holding still).

    Three passes over the pairs: the pairs always computed; the bounds of the others; those
    under the cutoff (a mesh pair after its hulls' GJK, stopped early), each exact distance
    lowering the cutoff for the pairs after it. The loop passes no array to any function but the GJK/EPA pairs' kernels
    (``gjk.convex_distance_in`` in one scratch array allocated per call, ``convex_pair`` for a
    plane with a solid or hull): numba would reference-count it per pair (two atomic operations
    per array per call), which costs more than a closed-form kernel."""
    P = C.shape_1.shape[0]
    distance = R.distance
    all_exact = near == math.inf
    known = math.inf          # smallest distance known (exact, or an upper bound)
    smallest = math.inf       # smallest distance computed
    with_upper = not known < math.inf   # as set after phase 0 (a bool, not the constant False:
    # numba would compile `bounds` once more for a literal argument)
    cutoff = math.inf
    scratch = np.empty((SCRATCH_ROWS, 9))   # the GJK/EPA pairs' work rows, one allocation
    deferred = 0              # pairs phase 0 left to the bounds: none, no further phase
    for phase in range(3):    # 0: pairs always computed; 1: bounds; 2: pairs under the cutoff
        for p in range(P):
            k1, k2 = C.shape_1[p], C.shape_2[p]
            # a pair of two unmoved shapes is computed, not bounded: its exact row is then kept
            # by the next evaluations for free, where a bound would be computed again each time
            bounded = C.boundable[p] and not all_exact and (moved[k1] or moved[k2])
            if bounded == (phase == 0):
                deferred += bounded   # phase 0: the pairs left to the bounds
                continue
            if R.exact[p] and not (moved[k1] or moved[k2]):   # kept (counted once)
                if phase < 2:
                    known = min(known, distance[p])
                    smallest = min(smallest, distance[p])
                continue
            pad1, pad2 = C.padding_1[p], C.padding_2[p]
            exact_p = True
            meshes = W.kind[k1] == MESH or W.kind[k2] == MESH
            plane = W.kind[k1] == PLANE or W.kind[k2] == PLANE
            if phase == 2 and meshes and not plane and distance[p] <= cutoff:
                # a mesh's hull holds it: the hulls' distance bounds the pair from below, far
                # tighter than the bound of phase 1, for the cost of one GJK (stopped early)
                hulls, status = convex_distance_below(W, H, k1, k2, scratch, cutoff + pad1 + pad2)
                if status == ABOVE_CUTOFF:
                    distance[p] = hulls - pad1 - pad2
            if phase == 1 or (phase == 2 and distance[p] > cutoff):
                d, upper, x1, x2 = bounds(shape_row(W, k1), bound_row(C, k1), shape_row(W, k2),
                                          bound_row(C, k2), with_upper)
                if phase == 1:
                    distance[p] = d - pad1 - pad2
                    known = min(known, upper - pad1 - pad2)
                    continue
                # left bounded: the reference points and the unit vector between them
                v0, v1, v2 = x2[0] - x1[0], x2[1] - x1[1], x2[2] - x1[2]
                ln = math.sqrt(v0 * v0 + v1 * v1 + v2 * v2)
                n = (v0 / ln, v1 / ln, v2 / ln) if ln > 0.0 else (0.0, 0.0, 1.0)
                d = distance[p]   # the bound, padding included
                exact_p = False
            else:
                d, x1, x2, n, t1, t2 = exact_pair(W, H, M, k1, k2, pad1, pad2, R.triangle[p, 0],
                                                  R.triangle[p, 1], scratch)
                R.triangle[p, 0], R.triangle[p, 1] = t1, t2
                known = min(known, d)
                smallest = min(smallest, d)
                if phase == 2:   # an exact distance caps the smallest: the cutoff only drops
                    cutoff = min(cutoff, max(near, known) + BOUND_MARGIN)
            distance[p] = d
            R.exact[p] = exact_p
            for i in range(3):
                R.point_1[p, i] = x1[i]
                R.point_2[p, i] = x2[i]
                R.normal[p, i] = n[i]
                R.position[p, i] = 0.5 * (x1[i] + x2[i])
        if all_exact or deferred == 0:
            break
        if phase == 0:   # no exact distance yet: the upper bounds must cap the cutoff
            with_upper = not known < math.inf
        cutoff = max(near, known) + BOUND_MARGIN
    return smallest


@njit(cache=True, error_model="numpy")
def contact_order(distance, report_distance, environment_report_distance, environment, out_index):
    """Indices of the pairs closer than their report distance written to ``out_index``, closest
    first (stable: equal distances keep the pair order); returns their count. Pair ``p`` is
    reported when ``distance[p] < environment_report_distance`` if ``environment[p]`` (non-zero),
    else when ``distance[p] < report_distance`` (m)."""
    n = 0
    for p in range(distance.shape[0]):
        if distance[p] < (environment_report_distance if environment[p] else report_distance):
            out_index[n] = p
            n += 1
    if n > 32:   # many contacts (rare): a stable merge sort
        ordered = out_index[:n][np.argsort(distance[out_index[:n]], kind="mergesort")]
        for i in range(n):
            out_index[i] = ordered[i]
        return n
    for i in range(1, n):   # insertion sort: stable, no allocation
        j, k = i, out_index[i]
        while j > 0 and distance[out_index[j - 1]] > distance[k]:
            out_index[j] = out_index[j - 1]
            j -= 1
        out_index[j] = k
    return n


@njit(cache=True, error_model="numpy")
def _compute_entry(world, vertices, vertex_start, face_normal, face_offset, face_start, centre,
                   bound_radius, neighbor_start, neighbors, M, pairs, bound, near, results):
    H = make_hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
                   bound_radius, neighbor_start, neighbors)
    return evaluate_pairs(world_of(world), H, M, pair_constants(pairs, bound), near,
                          pair_results(results), np.ones(world.shape[0], np.int64))


# -------------------------------------------------------------------------------- Python side

def bounding_spheres(shapes, hulls):
    """``(centre (N,3), radius (N,))``: a sphere holding each shape of a WorldShapes (or a
    LinkShapes' ``local``), in the frame the shapes are given in (m). Sphere: itself; capsule:
    about its segment's midpoint; box, cylinder, cone: about the shape's origin, to the
    farthest corner or rim point; hull and mesh: about the HullSet's centre, to the farthest
    vertex (a mesh's hull holds it); plane: radius +inf."""
    kind, half = shapes.kind, shapes.half
    N = len(kind)
    centre = np.array(shapes.a, dtype=float).reshape(N, 3)
    radius = np.full(N, np.inf)
    for k in range(N):
        h = half[k]
        if kind[k] == SPHERE:
            radius[k] = shapes.radius[k]
        elif kind[k] == CAPSULE:
            centre[k] = 0.5 * (shapes.a[k] + shapes.b[k])
            radius[k] = 0.5 * float(np.linalg.norm(shapes.b[k] - shapes.a[k])) + shapes.radius[k]
        elif kind[k] == BOX:
            radius[k] = np.linalg.norm(h)
        elif kind[k] in (CYLINDER, CONE):  # half = (r, r, height/2)
            radius[k] = math.hypot(h[0], h[2])
        elif kind[k] == CONVEX or kind[k] == MESH:
            j = int(shapes.hull_id[k])
            centre[k] = shapes.rot[k] @ hulls.centre[j] + shapes.a[k]
            radius[k] = hulls.bound_radius[j]
    return centre, radius


def bound_data(shapes, hulls):
    """``(centre (N,3), outer (N,), inner (N,), slab (N,3))`` of the shapes of a WorldShapes
    (local frames; module docstring). Spheres, capsules and planes: 0, +inf, -inf, +inf. A mesh
    has its hull's centre, outer radius and slab (the mesh lies in its hull), and no inner ball
    (-inf: a concave mesh need not hold its hull's)."""
    kind, half = shapes.kind, shapes.half
    N = len(kind)
    centre = np.zeros((N, 3))
    outer = np.full(N, np.inf)
    inner = np.full(N, -np.inf)
    slab = np.full((N, 3), np.inf)
    radius = bounding_spheres(shapes, hulls)[1]
    for k in range(N):
        h = half[k]
        if kind[k] == BOX:
            outer[k], inner[k], slab[k] = radius[k], h.min(), h
        elif kind[k] in (CYLINDER, CONE):
            R, H = h[0], h[2]
            outer[k], slab[k] = radius[k], h
            L = math.hypot(R, 2.0 * H)
            inner[k] = min(R, H) if kind[k] == CYLINDER else (min(H, R * H / L) if L > 0 else 0.0)
        elif kind[k] == CONVEX or kind[k] == MESH:
            j = int(shapes.hull_id[k])
            c = hulls.centre[j]
            n, off = hulls.hull_faces(j)
            centre[k], slab[k] = c, np.abs(hulls.hull_vertices(j) - c).max(axis=0)
            outer[k] = radius[k]
            if kind[k] == CONVEX:
                inner[k] = max(0.0, float((off - n @ c).min()))   # depth of the centre
    return centre, outer, inner, slab


class PairResult:
    """Per-pair results as a :data:`PAIR_RESULT_DTYPE` table (``table``), each field also an
    attribute (a view): ``distance (P,)`` signed (m); ``point_1``, ``point_2``, ``normal``
    (unit, shape 1 -> shape 2), ``position`` (midpoint), all (P,3) world; ``exact (P,)`` bool
    (False: a bound, see the module docstring)."""

    __slots__ = ("table", "distance", "point_1", "point_2", "normal", "position", "exact",
                 "triangle")

    def __init__(self, n: int, table=None):
        self.table = np.zeros(n, PAIR_RESULT_DTYPE) if table is None else table
        for name in PairResults._fields:
            setattr(self, name, self.table[name])


class PairDistance:
    """The constants of a pair list ``pairs (P,2)`` of shape indices of ``shapes`` (a
    LinkShapes or a WorldShapes: kinds, sizes and hulls; poses come with each ``compute``).
    ``padding``: per shape (N,) the padding (m, >= 0) of its pairs (module docstring); 0 by
    default. Tables: ``pair_table`` (:data:`PAIR_DTYPE`), ``bound_table``
    (:data:`BOUND_DTYPE`), both read-only."""

    def __init__(self, shapes, pairs, padding=None):
        src = getattr(shapes, "local", shapes)
        self.hulls, self.meshes = src.hulls, src.meshes
        n = len(src.kind)
        if (np.any(src.kind == MESH) and self.meshes is None) or (
                np.any((src.kind == MESH) | (src.kind == CONVEX)) and self.hulls is None):
            raise ShapeError("shapes: MESH and CONVEX shapes need the MeshSet and HullSet they "
                             "index (WorldShapes.meshes, .hulls)")
        pairs = np.asarray(pairs, dtype=np.int64).reshape(-1, 2) if len(pairs) else np.zeros((0, 2), np.int64)
        bad = np.flatnonzero((pairs < 0).any(1) | (pairs >= n).any(1))
        if bad.size:
            raise ShapeError(f"pairs[{bad[0]}]: shape index out of range 0..{n - 1}: "
                             f"{pairs[bad[0]].tolist()}")
        k1, k2 = src.kind[pairs[:, 0]], src.kind[pairs[:, 1]]
        planes = np.flatnonzero((k1 == PLANE) & (k2 == PLANE))
        if planes.size:
            raise ShapeError(f"pairs[{planes[0]}]: two planes (half-spaces) have no finite "
                             f"distance: {pairs[planes[0]].tolist()}")
        pad = np.zeros(n) if padding is None else np.asarray(padding, dtype=np.float64).reshape(n)
        if not np.all(np.isfinite(pad) & (pad >= 0.0)):
            raise ShapeError(f"padding: must be finite and >= 0 (m), got {pad.tolist()!r}")
        self.pairs = np.ascontiguousarray(pairs)
        self.pairs.flags.writeable = False
        table = np.zeros(len(pairs), PAIR_DTYPE)
        table["shape_1"], table["shape_2"] = pairs[:, 0], pairs[:, 1]
        needs_gjk = (((k1 > CAPSULE) & (k2 > CAPSULE)) | (k1 == CONVEX) | (k2 == CONVEX)
                     | (k1 == MESH) | (k2 == MESH))
        table["boundable"] = needs_gjk & (k1 != PLANE) & (k2 != PLANE)
        table["padding_1"], table["padding_2"] = pad[pairs[:, 0]], pad[pairs[:, 1]]
        bound = np.zeros(n, BOUND_DTYPE)
        bound["centre"], bound["outer"], bound["inner"], bound["slab"] = bound_data(src, self.hulls)
        table.flags.writeable = bound.flags.writeable = False
        self.pair_table, self.bound_table = table, bound
        self._hull_arrays = hull_arrays(self.hulls)
        self._mesh_arrays = no_meshes() if self.meshes is None else self.meshes.arrays()
        self.n_shapes = n

    def __len__(self) -> int:
        return len(self.pairs)

    def compute(self, world, near=None, out: PairResult | None = None) -> PairResult:
        """Distances, witness points and normals of all pairs for the shapes in ``world`` (a
        WorldShapes of the same shapes), into ``out`` (a new PairResult when None). ``near``
        (m): skip the pairs a bound proves farther (module docstring)."""
        if len(world) != self.n_shapes:
            raise ValueError(f"PairDistance.compute: world has {len(world)} shapes, compiled "
                             f"for {self.n_shapes}")
        near = math.inf if near is None else float(near)
        if math.isnan(near):
            raise ValueError("PairDistance.compute: near must be a number (m), got nan")
        res = PairResult(len(self.pairs)) if out is None else out
        _compute_entry(world.table, *self._hull_arrays, self._mesh_arrays, self.pair_table,
                       self.bound_table, near, res.table)
        return res
