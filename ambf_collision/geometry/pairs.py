"""Shapes fixed in frames moved to world coordinates at once, and all pair distances at once.

* :class:`WorldShapes`: array container of N shapes in world coordinates (metres).
* :class:`LinkShapes`: N shapes given in the local coordinates of frames; ``to_world(R, t)``
  fills a reused :class:`WorldShapes` from the frames' world poses.
* :class:`PairDistance`: a pair list compiled once (grouped by kind combination, buffers
  preallocated); ``compute(world)`` returns signed distances, witness points and normals of
  all pairs with coal's ``Contact`` semantics (normal from shape 1 to shape 2).
* :func:`point_signed_distance`: signed distance of K points to K shapes (used by probes).

Sphere/capsule pairs use the closed form of :mod:`segment_distance`; sphere/capsule against a
solid uses :mod:`solid_distance`; a solid against a plane is the solid's support point along the
plane's inward normal, vectorised per solid kind; other solid pairs go through :mod:`coal_bridge`
(coal geometries built once per shape, per cycle only their poses are set; one coal call per
pair: the only per-pair Python loop). ``compute(world, near)`` skips the pairs that a
conservative lower bound proves farther than ``near`` and than the closest pair.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.segments import SegmentPairSolver, _count_nonzero, point_segment_normal
from ambf_collision.geometry.shapes import (BOX, CAPSULE, CONE, CONVEX, CYLINDER, PLANE,
                                   SPHERE, Box, Capsule, Cone, ConvexHull, Cylinder, Plane,
                                   ShapeError, Sphere)
from ambf_collision.geometry.transforms import matrix_to_quat

__all__ = ["WorldShapes", "LinkShapes", "PairDistance", "PairResult", "point_signed_distance",
           "shape_at"]

# np.vecdot is NumPy >= 2.0; on NumPy 1.x (Ubuntu 24.04's python3-numpy) the same contraction by
# einsum (equal up to the summation order)
_vecdot = getattr(np, "vecdot", None) or (
    lambda x, y, out=None: np.einsum("...i,...i->...", x, y, out=out))

SOLID_KINDS = (BOX, CYLINDER, CONE, CONVEX, PLANE)
BOUNDED_KINDS = (BOX, CYLINDER, CONE, CONVEX)  # solids with a finite outer radius about their centre
SOLID_PAIR = -1  # row group of solid - solid pairs through coal: bounded with the capsule rows
BOUND_MARGIN = 1e-9  # m: a pair is left bounded only if its lower bound exceeds the cutoff by this


class WorldShapes:
    """N shapes as arrays (world coordinates, metres).

    ``kind (N,) int8``; ``a (N,3)``: sphere centre / capsule end a / solid centre (plane: the
    point ``offset * normal``); ``b (N,3)``: capsule end b (``== a`` otherwise); ``radius (N,)``:
    sphere/capsule/cylinder/cone radius, else 0; ``rot (N,3,3)``: world-from-local (identity for
    sphere, capsule and plane); ``half (N,3)``: box half extents, cylinder/cone
    ``(r, r, height/2)``; ``normal (N,3)``, ``offset (N,)``: plane ``normal . x < offset`` (zero
    for other kinds); ``hull``: list of local vertex arrays (M,3) for CONVEX, else None.
    All float arrays are views of one flat array ``flat (23N,)``: ``a``, ``b`` (raveled),
    ``radius``, ``rot``, ``half``, ``normal``, ``offset``, in this order, from which the pair
    groups gather all their inputs in one call each; ``abr`` is its first part ``(7N,)``.
    """

    __slots__ = ("kind", "a", "b", "radius", "rot", "half", "normal", "offset", "hull", "abr",
                 "flat")

    def __init__(self, n: int):
        self.kind = np.zeros(n, dtype=np.int8)
        self.flat = f = np.zeros(23 * n)
        self.abr = f[:7 * n]
        self.a = f[:3 * n].reshape(n, 3)
        self.b = f[3 * n:6 * n].reshape(n, 3)
        self.radius = f[6 * n:7 * n]
        self.rot = f[7 * n:16 * n].reshape(n, 3, 3)
        self.rot[:] = np.eye(3)
        self.half = f[16 * n:19 * n].reshape(n, 3)
        self.normal = f[19 * n:22 * n].reshape(n, 3)
        self.offset = f[22 * n:]
        self.hull = [None] * n

    def __len__(self) -> int:
        return len(self.kind)

    @classmethod
    def from_shapes(cls, shapes) -> "WorldShapes":
        """Arrays of the given shape objects, taken as they are (their own coordinates)."""
        shapes = list(shapes)
        w = cls(len(shapes))
        for k, s in enumerate(shapes):
            s.validate()
            w.kind[k] = s.kind
            if s.kind == SPHERE:
                w.a[k] = w.b[k] = s.center
                w.radius[k] = s.radius
            elif s.kind == CAPSULE:
                w.a[k], w.b[k] = s.a, s.b
                w.radius[k] = s.radius
            elif s.kind == PLANE:
                w.normal[k] = s.normal
                w.offset[k] = s.offset
                w.a[k] = w.b[k] = s.offset * s.normal
            else:
                w.a[k] = w.b[k] = s.position
                w.rot[k] = s.rotation
                if s.kind == BOX:
                    w.half[k] = 0.5 * s.size
                elif s.kind in (CYLINDER, CONE):
                    w.half[k] = (s.radius, s.radius, 0.5 * s.height)
                    w.radius[k] = s.radius
                elif s.kind == CONVEX:
                    w.hull[k] = s.vertices
                else:
                    raise ShapeError(f"shapes[{k}]: unknown kind {s.kind!r}")
        return w


def shape_at(world: WorldShapes, k: int):
    """Shape object of item ``k`` of ``world`` (world coordinates)."""
    kind = int(world.kind[k])
    if kind == SPHERE:
        return Sphere(world.a[k].copy(), float(world.radius[k]))
    if kind == CAPSULE:
        return Capsule(world.a[k].copy(), world.b[k].copy(), float(world.radius[k]))
    if kind == PLANE:
        return Plane(world.normal[k].copy(), float(world.offset[k]))
    q = matrix_to_quat(world.rot[k])
    p = world.a[k].copy()
    if kind == BOX:
        return Box(2.0 * world.half[k], p, q)
    if kind == CYLINDER:
        return Cylinder(float(world.half[k, 0]), 2.0 * float(world.half[k, 2]), p, q)
    if kind == CONE:
        return Cone(float(world.half[k, 0]), 2.0 * float(world.half[k, 2]), p, q)
    if kind == CONVEX:
        return ConvexHull(world.hull[k], p, q)
    raise ShapeError(f"shapes[{k}]: unknown kind {kind!r}")


class LinkShapes:
    """N shapes, shape ``k`` given in the local coordinates of frame ``frame_index[k]``."""

    def __init__(self, shapes, frame_index):
        self.local = WorldShapes.from_shapes(shapes)
        n = len(self.local)
        fi = np.asarray(frame_index, dtype=np.intp).reshape(-1)
        if fi.shape != (n,):
            raise ShapeError(f"frame_index: must have one entry per shape ({n}), got {fi.size}")
        if n and fi.min() < 0:
            raise ShapeError(f"frame_index: must be >= 0, got {int(fi.min())}")
        self.frame_index = fi
        self.kind = self.local.kind
        self.world = WorldShapes(n)
        self.world.kind[:] = self.local.kind
        self.world.radius[:] = self.local.radius
        self.world.half[:] = self.local.half
        self.world.hull = list(self.local.hull)
        self._fi_max = int(fi.max()) if n else -1
        # fi == 0..n-1 (one shape per frame, in order): the frame poses need no gather
        self._fi_identity = bool(np.array_equal(fi, np.arange(n)))
        # Local columns stacked once: [a | b | rot | normal] (n,3,6); per cycle one matmul of
        # the gathered frame rotations moves them all.
        L = self.local
        self._S = np.concatenate([L.a[:, :, None], L.b[:, :, None], L.rot,
                                  L.normal[:, :, None]], axis=2)
        self._RS = np.empty((n, 3, 6))
        self._R = np.empty((n, 3, 3))
        self._t = np.empty((n, 3))
        self._tmp = np.empty(n)

    def __len__(self) -> int:
        return len(self.kind)

    def to_world(self, R, t) -> WorldShapes:
        """Move all shapes by their frames' poses ``R (F,3,3)``, ``t (F,3)`` (world from frame,
        metres). Returns the reused world buffer (valid until the next call)."""
        R = np.asarray(R, dtype=np.float64)
        t = np.asarray(t, dtype=np.float64)
        if R.ndim != 3 or R.shape[1:] != (3, 3) or t.shape != (R.shape[0], 3):
            raise ValueError(f"to_world: expected R (F,3,3) and t (F,3), got {R.shape} and {t.shape}")
        if self._fi_max >= R.shape[0]:
            raise ValueError(f"to_world: frame index {self._fi_max} out of range "
                             f"for {R.shape[0]} frames")
        W, tg, RS = self.world, self._t, self._RS
        if self._fi_identity and R.shape[0] == len(tg):
            Rg, tg = R, t
        else:
            Rg = self._R
            np.take(R, self.frame_index, axis=0, out=Rg)
            np.take(t, self.frame_index, axis=0, out=tg)
        np.matmul(Rg, self._S, out=RS)
        np.add(RS[:, :, 0], tg, out=W.a)
        np.add(RS[:, :, 1], tg, out=W.b)
        np.copyto(W.rot, RS[:, :, 2:5])
        np.copyto(W.normal, RS[:, :, 5])
        _vecdot(W.normal, tg, out=self._tmp)
        np.add(self.local.offset, self._tmp, out=W.offset)
        return W


class PairResult:
    """Per-pair arrays (reused buffers): ``distance (P,)`` signed (m), ``point_1``,
    ``point_2``, ``normal`` (unit, shape 1 -> shape 2), ``position`` (midpoint), all (P,3).
    ``point_1`` and ``point_2`` are the two halves of ``points (2P,3)`` (one scatter fills
    either witness of any pair). ``exact (P,)`` bool: False for a pair that
    ``PairDistance.compute(world, near)`` only bounded: its ``distance`` is a lower bound and its
    witnesses are reference points inside the two shapes (see :meth:`PairDistance.compute`).
    ``distance``, ``points``, ``normal`` and ``position`` are views of one flat array ``flat
    (13P,)`` in that order, filled from :class:`PairDistance`'s staging area with one ``take``."""

    __slots__ = ("flat", "distance", "points", "point_1", "point_2", "normal", "position",
                 "exact")

    def __init__(self, n: int):
        self.exact = np.ones(n, dtype=bool)
        self.flat = np.zeros(13 * n)
        self.distance, self.points, self.normal, self.position = _result_views(self.flat, n)
        self.point_1 = self.points[:n]
        self.point_2 = self.points[n:]


def _result_views(flat, n):
    """``distance (n,)``, ``points (2n,3)``, ``normal (n,3)``, ``position (n,3)``: views of the
    flat array ``flat (13n,)``, in this order."""
    return (flat[:n], flat[n:7 * n].reshape(2 * n, 3), flat[7 * n:10 * n].reshape(n, 3),
            flat[10 * n:13 * n].reshape(n, 3))


_min, _max = np.minimum.reduce, np.maximum.reduce


def _solid_module():
    from ambf_collision.geometry import solids as solid_distance  # part B; imported only when solids are used
    return solid_distance


class PairDistance:
    """All distances of a fixed pair list ``pairs (P,2)`` of shape indices, compiled once."""

    def __init__(self, link_shapes, pairs):
        kinds = np.asarray(link_shapes.kind, dtype=np.int8)
        n = len(kinds)
        pairs = np.asarray(pairs, dtype=np.intp).reshape(-1, 2) if len(pairs) else np.zeros((0, 2), np.intp)
        if pairs.size and (pairs.min() < 0 or pairs.max() >= n):
            bad = int(np.flatnonzero((pairs < 0).any(1) | (pairs >= n).any(1))[0])
            raise ShapeError(f"pairs[{bad}]: shape index out of range 0..{n - 1}: {pairs[bad].tolist()}")
        self.pairs = pairs
        P = len(pairs)
        self.result = PairResult(P)
        k1, k2 = kinds[pairs[:, 0]], kinds[pairs[:, 1]]
        round1, round2 = k1 <= CAPSULE, k2 <= CAPSULE

        # sphere/capsule - sphere/capsule: closed form, one group
        cc = np.flatnonzero(round1 & round2)
        self._cc = cc
        self._cc_i1 = pairs[cc, 0].copy()
        self._cc_i2 = pairs[cc, 1].copy()
        m = cc.size
        self._solver = SegmentPairSolver(m)
        self._solver.set_pairs(self._cc_i1, self._cc_i2, n)

        # sphere/capsule - solid, one group per solid kind; all groups write into one staging
        # area
        groups = []
        mixed = round1 ^ round2
        for kind in SOLID_KINDS:
            sel = np.flatnonzero(mixed & ((k1 == kind) | (k2 == kind)))
            if not sel.size:
                continue
            hull = None
            if kind == CONVEX:
                sd = _solid_module()
                sol = np.where(round1[sel], pairs[sel, 1], pairs[sel, 0])
                hull = [link_shapes_hull(link_shapes, j) for j in sol]
                if hasattr(sd, "compile_hulls"):
                    hull = sd.compile_hulls(hull)
            groups.append((kind, sel, hull))
        # solid - solid through coal, one call per pair; pairs with a plane are closed form
        self._ss = np.flatnonzero(~round1 & ~round2)
        with_plane = (k1[self._ss] == PLANE) | (k2[self._ss] == PLANE)
        self._ss_plane = self._ss[with_plane]
        self._ss_coal = self._ss[~with_plane]
        if self._ss_coal.size:  # bounded in the same pass as the capsule rows, before the planes
            at = sum(1 for kind, _, _ in groups if kind in BOUNDED_KINDS)
            groups.insert(at, (SOLID_PAIR, self._ss_coal, None))
        src = getattr(link_shapes, "local", link_shapes)
        outer, inner = centre_radii(kinds, src.half, src.hull)
        # staging area of all outputs: [sphere/capsule pairs | capsule - solid rows |
        # solid - plane rows | one zero], scattered into the result with one take per cycle
        Pp = self._ss_plane.size
        S = _CapsuleSolidGroups.stage_size(groups)
        self._stage = np.zeros(13 * m + S + 13 * Pp + 1)
        cc_flat = self._stage[:13 * m]
        self._cc_out = (cc_flat[:m],) + tuple(cc_flat[k * m:(k + 3) * m].reshape(3, m)
                                             for k in (1, 4, 7, 10))
        if m == P:  # sphere/capsule pairs only: the solver writes the result itself
            r = self.result
            self._cc_out = (r.distance, r.point_1.T, r.point_2.T, r.normal.T, r.position.T)
        self._cs = _CapsuleSolidGroups(groups, pairs, round1, n, kinds, src.half, outer, inner,
                                       self._stage[13 * m:13 * m + S])
        self._sp_out = _result_views(self._stage[13 * m + S:13 * (m + Pp) + S], Pp)
        # per solid kind: (staging rows, pair rows, plane index, solid index, +1/-1 plane
        # first/second, hulls)
        self._plane_groups = []
        off = 0
        for kind in BOUNDED_KINDS:
            rows = self._ss_plane[(k1[self._ss_plane] == kind) | (k2[self._ss_plane] == kind)]
            if not rows.size:
                continue
            plane_first = kinds[pairs[rows, 0]] == PLANE
            plane = np.where(plane_first, pairs[rows, 0], pairs[rows, 1])
            solid = np.where(plane_first, pairs[rows, 1], pairs[rows, 0])
            hull = [link_shapes_hull(link_shapes, j) for j in solid] if kind == CONVEX else None
            stage_rows = slice(off, off + rows.size)
            off += rows.size
            self._plane_groups.append((kind, stage_rows, rows, plane, solid, plane_first[:, None],
                                       hull))
        self._sp_rows = np.concatenate([g[2] for g in self._plane_groups]) if Pp else self._ss_plane
        self._stage_idx = self._stage_index() if m < P else None
        self._coal_shapes = np.unique(pairs[self._ss_coal]) if self._ss_coal.size else np.zeros(0, np.intp)
        self._coal = None  # built on first use: coal is only imported when solid pairs exist
        self._link_shapes = link_shapes
        self._flat_size = 23 * n
        self._n_abr = 7 * n

    def _stage_index(self):
        """Index ``(13P,)`` into the staging area of each element of ``PairResult.flat``
        (the last, zero, element for pairs that no group writes: plane - plane)."""
        stage = self._stage
        label = PairResult(len(self.pairs))
        label.flat.fill(stage.size - 1)
        stage[:] = np.arange(stage.size)       # labels, exact in float64
        d, p1, p2, nrm, pos = self._cc_out
        cc = self._cc
        label.distance[cc], label.point_1[cc], label.point_2[cc] = d, p1.T, p2.T
        label.normal[cc], label.position[cc] = nrm.T, pos.T
        cs = self._cs
        label.distance[cs.sel], label.points[cs.pt_dst] = cs.dist, cs.pts
        label.normal[cs.sel], label.position[cs.sel] = cs.nrm, cs.pos
        sp, Pp = self._sp_rows, len(self._sp_rows)
        d, pts, nrm, pos = self._sp_out
        label.distance[sp], label.point_1[sp], label.point_2[sp] = d, pts[:Pp], pts[Pp:]
        label.normal[sp], label.position[sp] = nrm, pos
        stage.fill(0.0)
        return label.flat.astype(np.intp)

    def _build_coal(self):
        """coal geometry (local frame) and a reused Transform3s per shape of a coal pair, once."""
        from ambf_collision.geometry import coal_bridge as cb
        coal = cb._get_coal()
        src = getattr(self._link_shapes, "local", self._link_shapes)
        geom, tf = {}, {}
        for j in self._coal_shapes.tolist():
            geom[j] = cb.coal_geometry(int(src.kind[j]), src.half[j], src.hull[j])
            tf[j] = coal.Transform3s()
        pairs = [(int(k), geom[int(i)], tf[int(i)], geom[int(j)], tf[int(j)])
                 for k, (i, j) in zip(self._ss_coal, self.pairs[self._ss_coal])]
        self._coal = (cb, list(tf.items()), pairs, cb.distance_request(), coal.DistanceResult())

    def compute(self, world: WorldShapes, near=None) -> PairResult:
        """Distances, witness points and normals of all pairs for the shapes in ``world``.
        Returns the reused result buffers (copy what you keep).

        ``near`` (m, optional): only pairs that may be closer than ``near`` or than the smallest
        pair distance need exact values. Sphere/capsule pairs and pairs with a plane are always
        exact; a pair of a sphere/capsule, box, cylinder, cone or hull with a box, cylinder, cone
        or hull whose conservative lower bound (gaps along the solid's box axes; also centre
        spheres when no exactly computed pair caps the cutoff) exceeds both (plus
        ``BOUND_MARGIN``) is not computed: ``exact`` is False for it, ``distance`` holds the
        lower bound, its witnesses are a reference point in each shape (the solid's centre; the
        capsule's first end, or the first solid's centre) and ``normal`` the unit vector between
        them. Every pair below ``near`` and the smallest distance are then the same as without
        ``near``."""
        res = self.result
        flat = _flat(world)
        if flat.size != self._flat_size:
            raise ValueError(f"PairDistance.compute: world has {flat.size // 23} shapes, "
                             f"compiled for {self._flat_size // 23}")
        bounded = near is not None
        if not bounded:
            res.exact.fill(True)
        known = np.inf
        if self._cc.size:
            self._compute_cc(flat[:self._n_abr])
            if bounded:
                known = float(_min(self._cc_out[0]))
        if self._ss_plane.size:
            self._compute_ss_plane(world)
            if bounded:
                known = min(known, float(_min(self._sp_out[0])))
        cs = self._cs
        if cs.size:
            known = cs.prepare(flat, bounded, known)
            cutoff = max(float(near), known) + BOUND_MARGIN if bounded else None
            cs.finish(res, cutoff)
        if self._stage_idx is not None:
            self._stage.take(self._stage_idx, None, res.flat, "clip")  # indices made in __init__
        if cs.size:
            cs.penetrating(world, res)
        if self._ss_coal.size:
            self._compute_ss_coal(world, cs.pair_live)
        return res

    def _compute_cc(self, abr):
        """Sphere/capsule pairs, closed form, into the staging area (``abr``: see
        :class:`WorldShapes`)."""
        self._solver.gather(abr)
        self._solver.capsules(*self._cc_out)

    def _compute_ss_coal(self, world, live):
        """Solid - solid pairs through coal, one call per pair, those flagged in ``live`` (their
        bounds are already in the result)."""
        res = self.result
        if not _count_nonzero(live):
            return
        if self._coal is None:
            self._build_coal()
        cb, tfs, pairs, req, cres = self._coal
        live = live.tolist()
        for j, tf in tfs:  # world pose of each shape (world from local), metres
            tf.setRotation(world.rot[j])
            tf.setTranslation(world.a[j])
        for n, (k, g1, tf1, g2, tf2) in enumerate(pairs):
            if live[n]:
                res.distance[k], res.point_1[k], res.point_2[k], res.normal[k] = cb.coal_distance(
                    g1, tf1, g2, tf2, req, cres)
                res.position[k] = 0.5 * (res.point_1[k] + res.point_2[k])

    def _compute_ss_plane(self, world):
        """Solid - plane pairs, closed form, one vectorised call per solid kind: the solid's
        support point along the plane's inward normal is its deepest point (coal semantics:
        normal = the plane's, from the plane to the solid)."""
        sd = _solid_module()
        dist, pts, nrm, pos = self._sp_out
        Pp = len(dist)
        for kind, rows, _, plane, solid, plane_first, hull in self._plane_groups:
            n = world.normal[plane]
            x = sd.support_point(kind, -n, world.a[solid], world.rot[solid], world.half[solid], hull)
            d = _vecdot(n, x) - world.offset[plane]
            on_plane = x - d[:, None] * n
            dist[rows] = d
            pts[rows] = np.where(plane_first, on_plane, x)
            pts[Pp:][rows] = np.where(plane_first, x, on_plane)
            nrm[rows] = np.where(plane_first, n, -n)
            pos[rows] = 0.5 * (on_plane + x)


def centre_radii(kind, half, hull=None):
    """``(outer, inner)`` (N,) radii (m) about each shape's centre: every point of a box,
    cylinder, cone or convex hull lies within ``outer`` of its centre (hull: its farthest vertex
    of ``hull[k]``, local vertices), and the ball of radius ``inner`` about the centre lies
    inside it (box: smallest half extent; cylinder: min(radius, height/2); cone: 0, its centre is
    inside). No bound otherwise: ``outer = +inf``; ``inner = -inf`` (a hull need not contain its
    centre)."""
    kind = np.asarray(kind)
    h = np.asarray(half, dtype=float).reshape(-1, 3)
    box, cyl, cone = kind == BOX, kind == CYLINDER, kind == CONE
    outer = np.where(box, np.linalg.norm(h, axis=1),
                     np.where(cyl | cone, np.hypot(h[:, 0], h[:, 2]), np.inf))
    for k in np.flatnonzero(kind == CONVEX):
        v = np.asarray(hull[k], dtype=float).reshape(-1, 3) if hull is not None else None
        if v is not None and v.size:
            outer[k] = np.sqrt(np.einsum("ij,ij->i", v, v).max())
    inner = np.where(box, h.min(axis=1, initial=np.inf),
                     np.where(cyl, np.minimum(h[:, 0], h[:, 2]), np.where(cone, 0.0, -np.inf)))
    return outer, inner


class _CapsuleSolidGroups:
    """Sphere/capsule - solid pairs, one group per solid kind, compiled once.

    All T rows (groups in ``SOLID_KINDS`` order: the bounded kinds' rows first, the plane rows
    last) share one input area: capsule ends ``a``, ``b`` (T,3), radius ``r`` (T,), solid centre
    ``center`` (T,3), rotation and half extents (and the extra copies listed in ``__init__``),
    all gathered from ``WorldShapes.flat`` with one ``take``; a group's inputs are row slices of
    it. A sign per row (+1 where the solid is shape 1) turns the solid's outward normal into the
    pair normal (shape 1 -> shape 2). All groups write their outputs into slices of their part
    of :class:`PairDistance`'s staging area, which it copies into the result with one ``take``.

    With ``near`` (m), box, cylinder, cone and hull rows first get a conservative distance interval
    (:meth:`bounds`); :meth:`compute` then runs the exact kernel only on the rows whose lower
    bound does not exceed ``cutoff``.
    """

    @staticmethod
    def _sizes(groups):
        """Rows ``T``, bounded rows ``Tb`` (the first ones) and inputs gathered per cycle."""
        T = sum(len(sel) for _, sel, _ in groups)
        Tp = sum(len(sel) for kind, sel, _ in groups if kind == PLANE)   # the last rows
        Tb = T - Tp
        return T, Tb, 22 * T + 17 * Tp + 6 * Tb

    @classmethod
    def stage_size(cls, groups) -> int:
        """Length of the flat staging area the groups need (inputs and outputs)."""
        T, _, n_in = cls._sizes(groups)
        return n_in + 13 * T

    def __init__(self, groups, pairs, round1, n_shapes: int, local_kind, local_half, outer, inner,
                 stage):
        P = len(pairs)
        T, Tb, n_in = self._sizes(groups)
        self.size = T
        # ``stage (stage_size,)``: the inputs, gathered with one take from WorldShapes.flat:
        # a, b (T,3), r (T,), center (T,3), rot (T,3,3), half (T,3); of the plane rows (the
        # last Tp): both ends stacked [a; b] (2Tp,3), the normal twice (2Tp,3), the offset
        # twice (2Tp,), a (Tp,3); both ends of the bounded rows (Tb,2,3); then the outputs:
        # witnesses (rows [0, T): solid's, [T, 2T): capsule's; gathered as the solid's centre
        # and the capsule's first end, the witnesses of a row left bounded), distance, normal,
        # position
        self.n_gather = n_in + 6 * T
        self.buf = stage[:self.n_gather]
        Tp = T - Tb
        ins = np.split(self.buf, np.cumsum([3 * T, 3 * T, T, 3 * T, 9 * T, 3 * T, 6 * Tp, 6 * Tp,
                                            2 * Tp, 3 * Tp, 6 * Tb]))
        self.a, self.b, self.center = (x.reshape(T, 3) for x in (ins[0], ins[1], ins[3]))
        self.r = ins[2]
        self.rot = ins[4].reshape(T, 3, 3)
        self.half = ins[5].reshape(T, 3)
        plane_ab, plane_nn, plane_oo = ins[6].reshape(2 * Tp, 3), ins[7].reshape(2 * Tp, 3), ins[8]
        plane_on = ins[9].reshape(Tp, 3)
        self._ab = ins[10].reshape(Tb, 2, 3)
        self.pts = ins[11].reshape(2 * T, 3)
        self.dist = stage[self.n_gather:self.n_gather + T]
        self.nrm = stage[self.n_gather + T:self.n_gather + 4 * T].reshape(T, 3)
        self.pos = stage[self.n_gather + 4 * T:].reshape(T, 3)
        self.groups = []
        sels, caps, sols, signs, near_dst, cap_dst = [], [], [], [], [], []
        off = 0
        self._pair_rows = slice(0, 0)
        for kind, sel, hull in groups:
            K = len(sel)
            # the first shape of a solid - solid pair takes the capsule's place (a ball)
            solid_first = ~round1[sel] if kind != SOLID_PAIR else np.zeros(K, dtype=bool)
            g = _SolidGroup()
            g.kind, g.sel, g.hull = kind, sel, hull
            g.all_rows = np.arange(K)
            g.cap = np.where(solid_first, pairs[sel, 1], pairs[sel, 0])
            g.sol = np.where(solid_first, pairs[sel, 0], pairs[sel, 1])
            rows = slice(off, off + K)
            g.rows = rows
            if kind == SOLID_PAIR:
                self._pair_rows = rows
            g.a, g.b, g.r, g.center = self.a[rows], self.b[rows], self.r[rows], self.center[rows]
            g.r2 = g.r.reshape(K, 1)
            g.rot, g.half = self.rot[rows], self.half[rows]
            g.sign = np.where(solid_first, 1.0, -1.0)[:, None]
            g.neg_sign = -g.sign
            if kind == PLANE:  # the only plane group: rows [Tb, T)
                g.ab, g.nn, g.oo, g.on = plane_ab, plane_nn, plane_oo, plane_on
                g.normal, g.offset = plane_nn[:K], plane_oo[:K]
                g.dab = np.empty(2 * K)                 # [normal . a - offset; same for b]
                g.da, g.db = g.dab[:K], g.dab[K:]
                g.da2 = g.da.reshape(K, 1)
                g.use_b = np.empty(K, dtype=bool)
                g.use_b2 = g.use_b.reshape(K, 1)
            else:   # zero for non-plane solids (WorldShapes contract)
                g.normal, g.offset = np.zeros((K, 3)), np.zeros(K)
            g.s_dist = self.dist[rows]
            g.s_near = self.pts[rows]
            g.s_cap = self.pts[T + off:T + off + K]
            g.s_nrm = self.nrm[rows]
            g.s_pos = self.pos[rows]
            g.near_dst = np.where(solid_first, sel, sel + P)   # row in PairResult.points
            g.cap_dst = np.where(solid_first, sel + P, sel)
            sels.append(sel)
            caps.append(g.cap)
            sols.append(g.sol)
            signs.append(g.sign)
            near_dst.append(g.near_dst)
            cap_dst.append(g.cap_dst)
            self.groups.append(g)
            off += K
        empty = np.zeros(0, np.intp)
        self.sel = np.concatenate(sels) if sels else empty
        self.pt_dst = np.concatenate(near_dst + cap_dst) if sels else empty
        cap = np.concatenate(caps) if sels else empty
        self.sol = sol = np.concatenate(sols) if sels else empty
        N, xyz, psol, cap_b = n_shapes, np.arange(3), sol[Tb:], cap[:Tb]
        a_i, c_i = (3 * cap[:, None] + xyz).ravel(), (3 * sol[:, None] + xyz).ravel()
        ap_i, n_i = a_i[3 * Tb:], (19 * N + 3 * psol[:, None] + xyz).ravel()
        self.fidx = np.concatenate([
            a_i, 3 * N + a_i, 6 * N + cap, c_i,                              # a, b, r, centre
            (7 * N + 9 * sol[:, None] + np.arange(9)).ravel(),               # rot
            16 * N + c_i,                                                    # half
            ap_i, 3 * N + ap_i, n_i, n_i, 22 * N + psol, 22 * N + psol, ap_i,  # plane rows
            (3 * cap_b[:, None, None] + [0, 3 * N] + xyz[:, None]).transpose(0, 2, 1).ravel(),
            c_i, a_i])                                                       # witnesses
        self._sd = None
        self._penetrating = []
        # rows [0, Tb): box, cylinder, cone and hull solids, bounded by their centre's spheres
        # and boxes (a hull's box: the cube about its outer sphere)
        self.n_bounded = Tb
        self.outer = outer[sol[:Tb]]
        self.inner = inner[sol[:Tb]]
        # solid - solid rows: the first solid as a ball of its outer radius about its centre
        # (the capsule radius of the row), and upper = centre distance - both inner radii
        first = cap[self._pair_rows]
        self.pair_r = outer[first]
        self.inner[self._pair_rows] += inner[first] - outer[first]
        self.sign_b = (np.concatenate(signs)[:Tb] if sels else np.zeros((0, 1)))
        self.lower = self.dist[:Tb]     # the reported distance of a row left bounded
        self.upper = np.empty(Tb)
        self._rel = np.empty((Tb, 2, 3))
        self._loc = np.empty((2, Tb, 2, 3))     # both ends in the solid's frame, and negated
        self._side = np.empty((2, Tb, 3))
        self._rot_b = self.rot[:Tb]
        self._end_a = self._rel[:, 0]
        self._center_b = self.center[:Tb, None, :]
        self._nrm_b, self._pos_b = self.nrm[:Tb], self.pos[:Tb]
        self.half_b = np.asarray(local_half, dtype=float)[sol[:Tb]]
        hull_rows = np.asarray(local_kind)[sol[:Tb]] == CONVEX
        self.half_b[hull_rows] = self.outer[hull_rows, None]
        # exact flags of all pairs: ``live`` of the bounded rows, True for the others
        self._exact_src = np.ones(Tb + 1, dtype=bool)
        self.live = self._exact_src[:Tb]
        self.pair_live = self.live[self._pair_rows]
        self._exact_idx = np.full(P, Tb, dtype=np.intp)
        self._exact_idx[self.sel[:Tb]] = np.arange(Tb)
        # groups of the exact kernel (rows [0, Tk)), each with its view of ``live``
        self._kernel_groups = [g for g in self.groups if g.kind not in (PLANE, SOLID_PAIR)]
        for g in self._kernel_groups:
            g.live = self.live[g.rows]
        self._kernel_live = self.live[:sum(len(g.sel) for g in self._kernel_groups)]
        self._plane_group = next((g for g in self.groups if g.kind == PLANE), None)
        self._pts_solid, self._pts_round = self.pts[:T], self.pts[T:]

    def gather(self, flat):
        """This cycle's inputs of all rows from ``flat`` (``WorldShapes.flat``)."""
        flat.take(self.fidx, None, self.buf, "clip")  # indices checked at construction
        if self.pair_r.size:
            self.r[self._pair_rows] = self.pair_r

    def bounds(self, upper: bool = True) -> float:
        """Distance bounds (m) of the box, cylinder, cone, hull and solid-pair rows (after
        :meth:`gather`).

        ``lower``: the largest gap between the capsule and the solid's extents along one of the
        solid's box axes and, with ``upper``, also the distance between the capsule and the
        solid's outer sphere, whichever is larger; ``upper`` (only with ``upper``): the distance
        between the capsule and the inner ball. The reported values of rows the exact kernel
        skips are written into the staging rows: distance = ``lower``, witnesses = the solid's
        centre and the capsule's first end, normal = the unit vector between these two.
        Returns the smallest ``upper`` (+inf without ``upper``)."""
        Tb = self.n_bounded
        if not Tb:
            return np.inf
        a, b, c, r = self.a[:Tb], self.b[:Tb], self.center[:Tb], self.r[:Tb]
        # gaps along the solid's axes: both ends in local coordinates (one matmul), extents
        # [-half, half] (constant per shape)
        # [-half, half] (constant per shape): gap = max(min(l_a, l_b) - half, -max(l_a, l_b) -
        # half) per axis, the second as min(-l_a, -l_b) - half
        rel = np.subtract(self._ab, self._center_b, out=self._rel)    # (Tb, 2, 3)
        end_a = self._end_a
        E = self._loc                                                  # (2, Tb, 2, 3)
        loc = np.matmul(rel, self._rot_b, out=E[0])
        np.negative(loc, out=E[1])
        side = np.minimum(E[:, :, 0], E[:, :, 1], out=self._side)     # (2, Tb, 3)
        side -= self.half_b
        gap = _max(side, (0, 2))
        lower = np.subtract(gap, r, out=self.lower)
        smallest_upper = np.inf
        if upper:  # the capsule against the solid's centre spheres
            u = b - a
            w = c - a
            uu = _vecdot(u, u)
            t = _vecdot(w, u)
            np.divide(t, uu, out=t, where=uu > 0.0)
            np.minimum(np.maximum(t, 0.0, out=t), 1.0, out=t)
            v = a + t[:, None] * u                 # capsule axis point closest to the centre
            v -= c
            dist = np.sqrt(_vecdot(v, v))
            dist -= r
            np.subtract(dist, self.inner, out=self.upper)
            dist -= self.outer
            np.maximum(lower, dist, out=lower)
            smallest_upper = float(_min(self.upper))
        # the values reported for rows that stay bounded only (distance: ``lower``; witnesses
        # gathered; position: by prepare)
        norm = np.sqrt(_vecdot(end_a, end_a))[:, None]
        if _count_nonzero(norm) == Tb:
            nrm = np.divide(end_a, norm, out=self._nrm_b)
        else:
            nrm = np.divide(end_a, norm, out=self._nrm_b, where=norm > 0.0)
            nrm[norm[:, 0] == 0.0] = (0.0, 0.0, 1.0)
        nrm *= self.sign_b
        return smallest_upper

    def prepare(self, flat, bounded: bool, known: float = np.inf) -> float:
        """Gather this cycle's inputs from ``flat`` (``WorldShapes.flat``), compute the plane
        rows exactly and, when ``bounded``, the other rows' bounds. ``known`` (m): the smallest
        distance of pairs computed exactly elsewhere. Returns the smallest distance known from
        above (m): of the exact rows and, when no exact row gives a finite one, the upper
        bounds."""
        self.gather(flat)
        self._penetrating = []
        g = self._plane_group
        if g is not None:
            self._finish(g, *self._plane(g), position=False)
            known = min(known, float(_min(g.s_dist)))
        if bounded:
            # an exact distance already caps the cutoff: the cheaper box-axis bounds suffice
            known = min(known, self.bounds(upper=not math.isfinite(known)))
        # position of every row from its witnesses (plane rows: exact; the others: the
        # gathered reference points, replaced by the exact kernel where it runs)
        pos = np.add(self._pts_solid, self._pts_round, out=self.pos)
        pos *= 0.5
        return known

    def finish(self, res: PairResult, cutoff=None):
        """The bounded rows into the staging rows (exactly; with ``cutoff`` (m) only those whose
        lower bound does not exceed it, ``res.exact`` False for the others; a hull group is
        computed whole when one of its rows is needed)."""
        if cutoff is None:
            self.live.fill(True)
            self._exact_live()
        else:
            np.less_equal(self.lower, cutoff, out=self.live)
            if _count_nonzero(self._kernel_live):
                self._exact_live()
            self._exact_src.take(self._exact_idx, None, res.exact, "clip")

    def _exact_live(self):
        """The exact kernel on the rows flagged in ``live`` (solid - solid rows: coal, by
        PairDistance)."""
        for g in self._kernel_groups:
            n_live = _count_nonzero(g.live)
            if n_live == len(g.live):
                self._exact(g, slice(None))
            elif n_live:
                if g.kind == CONVEX:  # compiled hulls: the whole group
                    g.live.fill(True)
                    self._exact(g, slice(None))
                else:
                    self._exact(g, g.live.nonzero()[0])

    def penetrating(self, world, res: PairResult):
        """Overwrite in ``res`` (after the staging rows were scattered into it) the pairs
        whose capsule core entered the solid (queued by :meth:`_exact`)."""
        for g, pen in self._penetrating:
            self._penetrating_capsules(world, g, pen, res)

    def _exact(self, g, rows):
        """Exact kernel of group ``g`` on ``rows`` (a slice: all of them, or indices) into the
        staging rows; penetrating capsules are queued for :meth:`_penetrating_capsules`."""
        sd = self._sd
        if sd is None:
            sd = self._sd = _solid_module()
        if isinstance(rows, slice):
            d, on_seg, nearest, n = sd.segment_solid_distance(
                g.kind, g.a, g.b, g.center, g.rot, g.half, g.normal, g.offset, g.hull)
            np.copyto(g.s_near, nearest)
            self._finish(g, d, on_seg, g.s_near, n)
            idx = g.all_rows
        else:   # take: ~3x cheaper than fancy indexing on these small arrays
            k = len(rows)
            d, on_seg, nearest, n = sd.segment_solid_distance(
                g.kind, g.a.take(rows, 0), g.b.take(rows, 0), g.center.take(rows, 0),
                g.rot.take(rows, 0), g.half.take(rows, 0), g.normal[:k], g.offset[:k], g.hull)
            r = g.r[rows]
            g.s_dist[rows] = d - r
            cap_pt = on_seg - r[:, None] * n
            g.s_near[rows] = nearest
            g.s_cap[rows] = cap_pt
            g.s_nrm[rows] = n * g.sign.take(rows, 0)
            g.s_pos[rows] = 0.5 * (nearest + cap_pt)
            idx = rows
        # a capsule whose core segment enters the solid: coal's minimum translation (for a
        # half-space the deepest end already is the minimum translation)
        pen = (d < 0.0).nonzero()[0]
        if pen.size:
            pen = idx[pen]
            pen = pen[np.any(g.a[pen] != g.b[pen], axis=1)]
            if pen.size:
                self._penetrating.append((g, pen))

    @staticmethod
    def _finish(g, d, on_seg, nearest, n, position=True):
        """Staging rows of a whole group from the solid-side result (``nearest`` already in
        ``g.s_near``); the position only with ``position``."""
        np.subtract(d, g.r, out=g.s_dist)
        np.multiply(g.r2, n, out=g.s_cap)
        np.subtract(on_seg, g.s_cap, out=g.s_cap)
        np.multiply(n, g.sign, out=g.s_nrm)
        if position:
            np.add(nearest, g.s_cap, out=g.s_pos)
            g.s_pos *= 0.5

    @staticmethod
    def _plane(g):
        """Segment against half-space ``normal . x < offset``, closed form (the deepest end; ``a``
        on ties); the solid's witness is written straight into the staging rows."""
        dab = np.einsum("ij,ij->i", g.nn, g.ab, out=g.dab)    # both ends in one call
        dab -= g.oo
        d, db = g.da, g.db
        np.less(db, d, out=g.use_b)
        np.copyto(d, db, where=g.use_b)
        np.copyto(g.on, g.b, where=g.use_b2)                   # g.on: gathered as a
        np.multiply(g.da2, g.normal, out=g.s_near)
        np.subtract(g.on, g.s_near, out=g.s_near)
        return d, g.on, g.s_near, g.normal

    def _penetrating_capsules(self, world, g, pen, res):
        sel = g.sel[pen]
        if g.kind == BOX:
            d, pc, pb, n = _solid_module().capsule_box_penetration(
                g.a[pen], g.b[pen], g.r[pen], g.center[pen], g.rot[pen], g.half[pen])
        else:  # rare: only capsules whose axis is inside a cylinder / cone / hull
            from ambf_collision.geometry.coal_bridge import solid_pair_distance
            m = len(sel)
            d, pc, pb, n = np.empty(m), np.empty((m, 3)), np.empty((m, 3)), np.empty((m, 3))
            for k, (i, j) in enumerate(zip(g.cap[pen].tolist(), g.sol[pen].tolist())):
                d[k], pc[k], pb[k], n[k] = solid_pair_distance(shape_at(world, i), shape_at(world, j))
        res.distance[sel] = d
        res.points[g.near_dst[pen]] = pb
        res.points[g.cap_dst[pen]] = pc
        res.normal[sel] = n * g.neg_sign[pen]
        res.position[sel] = 0.5 * (pc + pb)


class _SolidGroup:
    """Precomputed indices and reused buffers of one sphere/capsule - solid group."""


def _flat(world):
    """``world.flat`` (see :class:`WorldShapes`), or a fresh copy when its arrays were
    replaced."""
    f = world.flat
    if (world.a.base is f and world.b.base is f and world.radius.base is f
            and world.rot.base is f and world.half.base is f and world.normal.base is f
            and world.offset.base is f):
        return f
    return np.concatenate([np.ravel(x) for x in (world.a, world.b, world.radius, world.rot,
                                                  world.half, world.normal, world.offset)])


def link_shapes_hull(link_shapes, j):
    """Local hull vertices of shape ``j`` (LinkShapes or WorldShapes)."""
    src = getattr(link_shapes, "local", link_shapes)
    return src.hull[j]


def point_signed_distance(world: WorldShapes, shape_index, points):
    """Signed distance (m, negative inside) from each point ``points[k]`` (K,3, world) to the
    surface of shape ``shape_index[k]``; returns ``d (K,)``, ``nearest (K,3)`` on the surface
    and ``normal (K,3)``, the outward unit normal there (pointing from the surface to the point).

    Fallback normal when a point lies on a sphere centre / capsule axis: a unit vector
    perpendicular to the capsule axis (see :func:`segment_distance.perpendicular_unit`), +z for
    a sphere centre.
    """
    idx = np.asarray(shape_index, dtype=np.intp).reshape(-1)
    pts = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    if len(idx) != len(pts):
        raise ValueError(f"point_signed_distance: {len(idx)} shape indices for {len(pts)} points")
    K = len(idx)
    d = np.empty(K)
    nearest = np.empty((K, 3))
    normal = np.empty((K, 3))
    kinds = world.kind[idx]
    rnd = np.flatnonzero(kinds <= CAPSULE)
    if rnd.size:
        s = idx[rnd]
        p = pts[rnd]
        L, C, N = point_segment_normal(p, world.a[s], world.b[s])
        r = world.radius[s]
        d[rnd] = L - r
        normal[rnd] = N
        nearest[rnd] = C + r[:, None] * N
    for kind in SOLID_KINDS:
        sel = np.flatnonzero(kinds == kind)
        if not sel.size:
            continue
        s = idx[sel]
        hull = [world.hull[j] for j in s] if kind == CONVEX else None
        dk, xk, nk = _solid_module().point_solid_distance(
            kind, pts[sel], world.a[s], world.rot[s], world.half[s], world.normal[s],
            world.offset[s], hull)
        d[sel], nearest[sel], normal[sel] = dk, xk, nk
    bad_kind = np.flatnonzero((kinds < 0) | (kinds > CONVEX))
    if bad_kind.size:
        raise ShapeError(f"shape {int(idx[bad_kind[0]])}: unknown kind {int(kinds[bad_kind[0]])}")
    return d, nearest, normal

