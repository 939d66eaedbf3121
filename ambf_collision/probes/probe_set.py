"""The probe evaluator (NumPy); the probe semantics and the file format are documented in
``probes/spec.py``."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ambf_collision.geometry.pairs import LinkShapes
from ambf_collision.geometry.segments import _TINY_LEN2, COINCIDENT, point_segment_normal
from ambf_collision.geometry.shapes import BOX, CAPSULE, CONE, CONVEX, CYLINDER, PLANE, SPHERE

__all__ = [  # noqa: F822 (spec names re-exported)
    "ProbeError",
    "ProbeSpec",
    "PatchSpec",
    "load_probe_file",
    "parse_probe_document",
    "resolve_body",
    "ProbeSet",
    "ProbeResult",
    "probe_report_json",
    "probe_report_table",
    "ProbeCheckExtension",
    "rigid_roots",
]

from ambf_collision.probes.spec import (DEFAULT_RANGE, PatchSpec, ProbeError, ProbeSpec,  # noqa: F401,E402
                                        _plain, expand_specs, load_probe_file,
                                        parse_probe_document, resolve_body, sensed_bodies)


# ----------------------------------------------------------------------------- evaluation


@dataclass
class ProbeResult:
    """Per-probe state of one evaluation (world frame unless stated; SI units).

    Arrays are buffers owned by the ``ProbeSet`` and overwritten by its next ``evaluate``
    (copy what you keep; do not write into them: an evaluation that finds nothing within
    range resets them only when the previous one wrote them). Probe ``i`` is ``names[i]``;
    patch ``j`` is ``patch_names[j]``.
    """

    names: list
    body: list  # body name per probe
    position: np.ndarray  # (N, 3) m, probe centre
    normal: np.ndarray  # (N, 3) unit sensor normal
    in_contact: np.ndarray  # (N,) bool
    depth: np.ndarray  # (N,) m, largest d_pen (0 when free)
    area: np.ndarray  # (N,) m^2
    force: np.ndarray  # (N, 3) N
    force_body: np.ndarray  # (N, 3) N, in the probe's body frame
    contact_normal: np.ndarray  # (N, 3) unit normal of the deepest contact (0 when free)
    touching_shape: np.ndarray  # (N,) int shape index of the deepest contact, -1 none
    touching_body: np.ndarray  # (N,) int body index of the deepest contact, -1 none
    distance: np.ndarray  # (N,) m, smallest gap d_surf - r within range, +inf beyond
    patch_names: list
    patch_force: np.ndarray  # (Q, 3) N
    patch_area: np.ndarray  # (Q,) m^2
    patch_in_contact: np.ndarray  # (Q,) int, number of probes in contact
    pairs_checked: int = 0  # exact (probe, shape) distance queries this cycle
    # float buffers of which position, normal, depth, area, force, force_body, contact_normal,
    # patch_force and patch_area are views, and nothing else: finite buffers <=> finite fields
    # (the monitor's NaN guard tests one isfinite per buffer); () when not known
    finite_buffers: tuple = ()


def rigid_roots(model) -> np.ndarray:
    """``(B,)`` per body of a :class:`ambf_collision.model.Model` the index of the body it is
    rigidly attached to: following its parent joints while they do not move (fixed and other
    non-revolute, non-prismatic joints hold a constant relative pose), up to a body whose parent
    joint moves or that has none. Equal roots: the bodies move together."""
    tree = model.tree
    parent = [j.parent for j in model.world.joints]
    root = np.arange(tree.n_bodies, dtype=np.intp)
    for b in range(tree.n_bodies):
        r = b
        while tree.parent_joint[r] >= 0 and not tree.movable[tree.parent_joint[r]]:
            r = parent[tree.parent_joint[r]]
        root[b] = r
    return root


def shape_bounding_sphere(shape):
    """``(center (3,), radius)`` of a sphere containing ``shape``, in the frame the shape is
    given in (m); radius ``inf`` for a plane. Uses the ``shapes.py`` field names."""
    kind = shape.kind
    if kind == 0:  # sphere
        return np.asarray(shape.center, float), float(shape.radius)
    if kind == 1:  # capsule
        a, b = np.asarray(shape.a, float), np.asarray(shape.b, float)
        return 0.5 * (a + b), 0.5 * float(np.linalg.norm(b - a)) + float(shape.radius)
    if kind == 2:  # box
        return np.asarray(shape.position, float), 0.5 * float(np.linalg.norm(shape.size))
    if kind in (3, 4):  # cylinder, cone (base at -h/2, apex at +h/2)
        return np.asarray(shape.position, float), math.hypot(float(shape.radius), 0.5 * float(shape.height))
    if kind == 5:  # plane
        return np.zeros(3), math.inf
    if kind == 6:  # convex hull: sphere about the local AABB centre
        v = np.asarray(shape.vertices, float)
        c_local = 0.5 * (v.min(0) + v.max(0))
        rad = float(np.max(np.linalg.norm(v - c_local, axis=1)))
        return shape.rotation @ c_local + np.asarray(shape.position, float), rad
    raise ValueError(f"unknown shape kind {kind!r}")


def _transform(R, t, index, v, out):
    """``out[i] = R[index[i]] @ v[i] + t[index[i]]`` (``t`` may be None); returns out."""
    Ri = R[index]
    np.multiply(Ri[:, :, 0], v[:, 0:1], out=out)
    out += Ri[:, :, 1] * v[:, 1:2]
    out += Ri[:, :, 2] * v[:, 2:3]
    if t is not None:
        out += t[index]
    return out


def _body_groups(index, max_groups: int = 8, min_per_body: int = 64):
    """``[(body, slice or index array)]`` of the entries of ``index`` per body, or None when
    there are more than ``max_groups`` bodies with fewer than ``min_per_body`` entries each
    on average (then a gather per entry is cheaper than a matmul per body)."""
    bodies = np.unique(index)
    if index.size == 0 or (len(bodies) > max_groups and index.size < min_per_body * len(bodies)):
        return None
    groups = []
    for b in bodies.tolist():
        sel = np.flatnonzero(index == b)
        if sel[-1] - sel[0] + 1 == sel.size:
            sel = slice(int(sel[0]), int(sel[-1]) + 1)
        groups.append((b, sel))
    return groups


# Candidate gathers use ``a.take(index, axis=0)``: the rows of ``a[index]``, about 3x faster
# than fancy indexing for hundreds of (3,) or (3, 3) rows, and the method skips np.take's
# Python wrapper (per-body and per-shape gathers of a few rows stay fancy indexing).
try:  # np.einsum(..., optimize=False) calls this C function: the same results, without
    from numpy._core.multiarray import c_einsum as _einsum  # its Python wrapper (~1 us)
except ImportError:  # pragma: no cover
    _einsum = np.einsum
# x.any() / x.all() (optionally along an axis) without the Python wrapper of the methods
_any = np.logical_or.reduce
_all = np.logical_and.reduce
try:  # the ufunc np.clip calls (same results, without its two Python layers)
    from numpy._core.umath import clip as _clip
except ImportError:  # pragma: no cover
    _clip = np.clip


def _slice_if_contiguous(idx):
    """``idx`` (ascending run of consecutive indices) as a slice, so that indexing with it
    takes a view instead of a copy; other index arrays unchanged."""
    if idx.size and idx[-1] - idx[0] + 1 == idx.size and np.all(np.diff(idx) == 1):
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


def _split_clusters(points, members, size):
    """Split ``members`` (indices into ``points``) into spatial chunks of at most ``size``
    by recursive median cuts along the widest axis."""
    if len(members) <= size:
        return [members]
    p = points[members]
    axis = int(np.argmax(p.max(0) - p.min(0)))
    order = members[np.argsort(p[:, axis], kind="stable")]
    half = len(order) // 2
    return _split_clusters(points, order[:half], size) + _split_clusters(points, order[half:], size)


# ----------------------------------------------------------------------------- exact stage
# Point SDFs of one shape kind on a contiguous slice of candidates, written into d (K,) and
# n (K,3) (world, m): the formulas of batch.point_signed_distance / solid_distance, without
# the nearest points (the probes never use them). Cylinders, cones and hulls go through
# batch.point_signed_distance.

_PLANE_SLACK = 1e-9
"""Slack (m) of the plane-vs-cluster broadphase test, far above its float rounding."""

_AXES = np.arange(3, dtype=np.intp)

_FINE_SLACK = 1e-9
"""Slack (m) of the "cluster wholly within a shape's reach" test that skips the fine per-probe
test, far above the float rounding of both tests (scene coordinates up to ~1e3 m)."""

_FACING_SLACK = 1e-9
"""Slack (m, and for unit-vector dots) of the cluster facing tests, far above float rounding."""

_STATIC_MARGIN = 1e-6
"""Margin (m) by which a shape must lie behind the sensor plane of a cluster it moves rigidly
with to be dropped for good: far above the rounding of rigid motions (coordinates ~1e3 m)."""


def _penetration(gap, two_r):
    """``d_pen = clip(r - d_surf, 0, 2r)`` (m) of touching pairs from their gaps
    ``d_surf - r < 0``: ``r - d_surf`` is exactly ``-gap`` (rounding is symmetric) and positive."""
    return np.minimum(-gap, two_r)


def _round_support(world, rows, n):
    """``(R, C)`` support ``max_x x . n_c`` of the segments of spheres/capsules ``rows``
    (world shape indices) along the unit vectors ``n (C, 3)``."""
    sup = world.a[rows] @ n.T
    np.maximum(sup, world.b[rows] @ n.T, out=sup)
    return sup


def _box_support(world, rows, n):
    """``(R, C)`` support of boxes ``rows`` along ``n (C, 3)``: ``c . n + sum_i h_i |R^T n|_i``."""
    sup = np.abs(np.matmul(n[None, :, :], world.rot[rows]))  # |R^T n|, (R, C, 3)
    sup = _einsum("sci,si->sc", sup, world.half[rows])
    sup += world.a[rows] @ n.T
    return sup


def _solid_support(center, radius, n):
    """``(R, C)`` support of bounding spheres (centres ``(R, 3)``, radii ``(R,)``) along ``n``."""
    sup = center @ n.T
    sup += radius[:, None]
    return sup


def _round_sdf(ps, world, s, p, d, n):
    """Spheres and capsules (segment a-b of radius r): the distance and normal of
    ``segment_distance.point_segment_normal`` (same operations, same values), with the
    segment terms ``b - a`` and ``1 / |b - a|^2`` computed once per shape and gathered
    per candidate. Points on their segment take its fallback normals (computed there)."""
    seg = world.b - world.a  # (S, 3), every shape (a few rows)
    l2 = _einsum("ij,ij->i", seg, seg)
    inv = np.divide(1.0, l2, out=np.zeros_like(l2), where=l2 > _TINY_LEN2)
    a, dk = world.a.take(s, axis=0), seg.take(s, axis=0)
    t = _einsum("ij,ij->i", p - a, dk)
    t *= inv.take(s)
    t = _clip(t, 0.0, 1.0)
    w = p - (a + t[:, None] * dk)  # p - closest point
    L = np.sqrt(_einsum("ij,ij->i", w, w))
    if _any(L < COINCIDENT):  # a point on its segment: the reference's fallback normals
        L, _, _ = point_segment_normal(p, a, world.b.take(s, axis=0), normal=n)
    else:
        np.divide(w, np.maximum(L, COINCIDENT)[:, None], out=n)
    np.subtract(L, world.radius.take(s), out=d)


def _plane_sdf(ps, world, s, p, d, n):
    """Planes ``normal . x < offset``."""
    world.normal.take(s, axis=0, out=n)
    _einsum("ij,ij->i", n, p, out=d)
    d -= world.offset[s]


def _box_sdf(ps, world, s, p, d, n):
    """Boxes: outside the distance to the clamped point, inside the nearest face (ties:
    lowest axis, + face at 0), as solid_distance. ``s`` is sorted: when it holds one box,
    that box's pose and half sizes broadcast over the candidates instead of being gathered
    per candidate (same products and sums)."""
    if s[0] == s[-1]:
        s = s[0]
    rot = world.rot.take(s, axis=0)
    h = world.half.take(s, axis=0)
    q = _einsum("...ji,...j->...i", rot, p - world.a.take(s, axis=0))  # box frame
    diff = q - _clip(q, -h, h)
    d_out = np.sqrt(_einsum("ij,ij->i", diff, diff))
    outside = d_out > 0.0
    if _all(outside):  # no candidate inside: no nearest-face search
        np.copyto(d, d_out)
        m = diff / d_out[:, None]
    else:  # nearest face inside, then the outside candidates overwritten
        depth = h - np.abs(q)
        face = depth.argmin(axis=1)
        face += np.arange(0, q.size, 3)  # flat index of each candidate's nearest face
        m = np.zeros(q.shape)
        m.put(face, np.where(q.take(face) >= 0.0, 1.0, -1.0))
        np.negative(depth.take(face), out=d)
        if _any(outside):
            np.copyto(d, d_out, where=outside)
            np.divide(diff, d_out[:, None], out=m, where=outside[:, None])
    _einsum("...ij,...j->...i", rot, m, out=n)  # box frame -> world


def _other_sdf(ps, world, s, p, d, n):
    """Cylinders, cones and convex hulls through the injected/batch point distance."""
    dk, _, nk = ps._point_distance(world, s, p)
    d[:] = dk
    n[:] = nk


_EXACT_GROUPS = (  # (first kind, last kind, function) over the kind-sorted shapes
    (SPHERE, CAPSULE, _round_sdf),
    (BOX, BOX, _box_sdf),
    (CYLINDER, CONE, _other_sdf),
    (PLANE, PLANE, _plane_sdf),
    (CONVEX, CONVEX, _other_sdf),
)


class ProbeSet:
    """Probes compiled once against a scene of shapes fixed on bodies.

    ``specs``: ``ProbeSpec``/``PatchSpec`` list (bodies resolved to ``body_names``).
    ``shape_body (S,)``: body index of each shape (its pose is ``body_R/body_t`` of that body).
    ``shape_center (S, 3)``, ``shape_radius (S,)``: a bounding sphere of each shape in its
    body's frame (m; ``inf`` for unbounded shapes such as planes), used by the broadphase.
    ``groups_of(body_name)``: collision groups of a body (for ``sense: {groups: ...}``).
    ``point_distance``: the exact point-to-shape function used for every kind when given;
    by default spheres, capsules, planes and boxes are computed here with the formulas of
    ``ambf_collision.batch.point_signed_distance`` (which handles cylinders, cones, hulls).
    ``shape_kind (S,)``: kind codes of the shapes (``from_shapes`` passes them; else taken
    from the first world shapes evaluated).
    ``rigid_root (B,)``: per body an index shared by exactly the bodies that move rigidly
    together (through non-movable joints; see :func:`rigid_roots`; ``from_model`` passes it).
    A shape lying wholly behind the sensor plane of a cluster it moves rigidly with stays
    behind it: the first evaluation with world shapes drops such pairs for good.

    Per cycle: probe centres/normals by two matmuls per body; broadphase of probe clusters
    against shape bounding spheres, then per cluster the exact tests "plane/box farther than
    the cluster's reach" and "shape wholly behind the members' common sensor plane" (both
    can only drop pairs no member sees); the exact stage over the remaining pairs, one
    contiguous slice per shape kind; no exact stage at all when nothing is left.
    """

    def __init__(self, specs, body_names, shape_body, shape_center, shape_radius,
                 groups_of=None, point_distance=None, cluster_size=32, shape_kind=None,
                 rigid_root=None):
        # the default exact stage computes sphere/capsule/plane/box SDFs here (same formulas
        # as batch.point_signed_distance, without the nearest points the probes never use)
        self._fast = point_distance is None
        if point_distance is None:
            from ambf_collision.geometry.pairs import point_signed_distance as point_distance
        body_names = list(body_names)
        for p in expand_specs(specs):
            if p.body not in body_names:  # specs loaded without the model's names
                try:
                    object.__setattr__(p, "body", resolve_body(p.body, body_names))
                except KeyError as e:
                    raise ValueError(f"probe {p.name!r}: {e.args[0]}") from None
        self._point_distance = point_distance
        self.body_names = list(body_names)
        probes = expand_specs(specs)
        self.specs = probes
        B = len(self.body_names)
        S = len(shape_body)
        N = len(probes)
        self.rigid_root = None if rigid_root is None else np.asarray(rigid_root, dtype=np.intp).reshape(B)
        self.shape_body = np.asarray(shape_body, dtype=np.intp).reshape(S)
        self.shape_center = np.asarray(shape_center, dtype=float).reshape(S, 3)
        self.shape_radius = np.asarray(shape_radius, dtype=float).reshape(S)
        if np.any(self.shape_body < 0) or np.any(self.shape_body >= B):
            raise ValueError("shape_body holds an index outside body_names")
        index = {n: i for i, n in enumerate(self.body_names)}
        for p in probes:
            if p.body not in index:
                raise ValueError(f"probe {p.name!r}: body {p.body!r} is not a model body")
            if p.sense_groups and groups_of is None:
                raise ValueError(f"probe {p.name!r}: 'sense: groups' needs the bodies' collision groups")

        self.names = [p.name for p in probes]
        self.probe_body = np.array([index[p.body] for p in probes], dtype=np.intp).reshape(N)
        self.local_position = np.array([p.position for p in probes], dtype=float).reshape(N, 3)
        self.local_normal = np.array([p.normal for p in probes], dtype=float).reshape(N, 3)
        self._groups = _body_groups(self.probe_body)  # per-body matmuls when few bodies
        self.radius = np.array([p.radius for p in probes], dtype=float).reshape(N)
        self.stiffness = np.array([p.stiffness for p in probes], dtype=float).reshape(N)
        self.range = np.array([p.range for p in probes], dtype=float).reshape(N)
        self.patch_names = list(dict.fromkeys(p.patch for p in probes if p.patch is not None))
        pidx = {n: j for j, n in enumerate(self.patch_names)}
        self.patch_index = np.array([pidx.get(p.patch, -1) for p in probes], dtype=np.intp).reshape(N)
        inp = self.patch_index >= 0
        self._patch_members = None if inp.all() else np.flatnonzero(inp)  # None: every probe
        self._patch_q = self.patch_index[inp]

        # Sense mask per (probe, body) -> per (probe, shape); probes with equal (body, mask)
        # share clusters, so each cluster has one allowed-shape row.
        sense_cache, sense_key = {}, np.empty(N, dtype=np.intp)
        masks = []
        for i, p in enumerate(probes):
            key = (p.body, p.sense_bodies, p.sense_groups, p.include_own_body)
            if key not in sense_cache:
                sense_cache[key] = len(masks)
                masks.append(sensed_bodies(p, self.body_names, groups_of))
            sense_key[i] = sense_cache[key]
        body_mask = np.array(masks, dtype=bool).reshape(len(masks), B)
        shape_mask = body_mask[:, self.shape_body]  # (K, S)
        # candidate (probe, shape) pairs before the broadphase
        self.pairs_total = int(shape_mask[sense_key].sum()) if N else 0

        clusters = []
        for k in range(len(masks)):
            members = np.flatnonzero(sense_key == k)
            clusters += [(k, c) for c in _split_clusters(self.local_position, members, cluster_size)]
        C = len(clusters)
        self.cluster_body = np.array([self.probe_body[c[0]] for _, c in clusters], dtype=np.intp).reshape(C)
        self.cluster_allowed = np.array([shape_mask[k] for k, _ in clusters], dtype=bool).reshape(C, S)
        self.cluster_order = (np.concatenate([c for _, c in clusters]) if C else np.zeros(0)).astype(np.intp)
        self.cluster_len = np.array([len(c) for _, c in clusters], dtype=np.intp).reshape(C)
        self.cluster_start = np.concatenate([[0], np.cumsum(self.cluster_len)[:-1]]).astype(np.intp)[:C]
        reach = self.radius + self.range
        cc = np.zeros((C, 3))
        cr = np.zeros(C)
        spread, least = np.zeros(C), np.zeros(C)  # largest member offset, smallest member reach
        for j, (_, c) in enumerate(clusters):
            pts = self.local_position[c]
            cc[j] = 0.5 * (pts.min(0) + pts.max(0))
            off = np.linalg.norm(pts - cc[j], axis=1)
            cr[j] = float(np.max(off + reach[c]))
            spread[j], least[j] = float(np.max(off)), float(np.min(reach[c]))
        self.cluster_center, self.cluster_radius = cc, cr
        self._cluster_spread, self._cluster_least_reach = spread, least
        # clusters whose members share one sensor normal: the normal (body frame) and the
        # members' smallest height p . n along it (their sensor planes), for the facing test
        cn = np.zeros((C, 3))
        front = np.full(C, -np.inf)
        for j, (_, c) in enumerate(clusters):
            nl = self.local_normal[c]
            if np.all(nl == nl[0]):
                cn[j] = nl[0]
                front[j] = float(np.min(self.local_position[c] @ nl[0]))
        self._cluster_normal, self._cluster_front = cn, front
        self._cluster_front_slack = front - _FACING_SLACK  # -inf: members with different normals, never pruned
        self._any_uniform = bool(np.any(np.isfinite(front)))
        self._cluster_slack = cr + _PLANE_SLACK  # plane/box tests: centre distance beyond this
        self._cluster_slack_sq = self._cluster_slack ** 2
        self._reach = reach  # (N,) m, radius + range
        self._two_r = 2.0 * self.radius
        self._best = np.empty(N)  # smallest gap per probe (_nearest)
        self._full_rows = {}  # _full_row cache
        # cluster members padded to one row per cluster (expansion = one gather) unless
        # the padding would waste more than a quarter of the rows
        L = int(self.cluster_len.max()) if C else 0
        self._members = self._member_ok = None
        if C and 4 * int(self.cluster_len.sum()) >= 3 * C * L:
            self._members = np.zeros((C, L), dtype=np.intp)
            ok = np.zeros((C, L), dtype=bool)
            for j, (_, c) in enumerate(clusters):
                self._members[j, :len(c)] = c
                ok[j, :len(c)] = True
            self._member_ok = None if ok.all() else ok
        # every probe in exactly one cluster: a shape hit by every cluster has every probe
        # as candidate, emitted in probe order (this array itself when one shape: outputs then
        # written as whole arrays instead of scattered)
        self._probe_ids = np.arange(N, dtype=np.intp)

        # reused buffers (broadphase in (shape, cluster) layout, shapes ordered by kind)
        # world shape centres, cluster centres and cluster sensor normals: one buffer, moved
        # by one einsum per cycle (local points and their bodies: _compile_kinds)
        self._pt_world = np.empty((S + 2 * C, 3))
        self._shape_w = self._pt_world[:S]
        self._cluster_w = self._pt_world[S:S + C]
        self._cluster_n = self._pt_world[S + C:]
        self._front = np.empty(C)
        self._d2 = np.empty((S, C))
        small = S * C <= 2048
        self._diff = np.empty((S, C, 3)) if small else None
        self._d2_tmp = None if small else np.empty((S, C))
        self._hit = np.empty((S, C), dtype=bool)
        self._ws_d = np.empty(0)
        self._ws_n = np.empty((0, 3))
        self._kind_src = None
        self._compile_kinds(shape_kind)
        # the outputs that every evaluation resets to zero (or -1) are views of one buffer
        # each, so that one fill resets them all
        Q = len(self.patch_names)
        self._reset_zero = np.zeros(11 * N + 4 * Q)
        self._reset_index = np.full(2 * N, -1, dtype=np.intp)
        z, zi = self._reset_zero, self._reset_index
        pose = np.empty((2 * N, 3))  # probe centres and sensor normals (set every evaluation)
        # local centres as homogeneous rows [p, 1]: R p + t by one matmul with [R^T; t^T]
        self._local_h = np.concatenate([self.local_position, np.ones((N, 1))], axis=1)
        self._pose_map = np.empty((4, 3))  # [R^T; t^T] of one body
        self._compile_patch_sums(z)
        self._written = False  # outputs written since their last reset (else: reset values)
        self.result = ProbeResult(
            names=self.names,
            body=[p.body for p in probes],
            position=pose[:N],
            normal=pose[N:],
            in_contact=np.zeros(N, dtype=bool),
            depth=z[:N],
            area=z[N:2 * N],
            force=z[2 * N:5 * N].reshape(N, 3),
            force_body=z[5 * N:8 * N].reshape(N, 3),
            contact_normal=z[8 * N:11 * N].reshape(N, 3),
            touching_shape=zi[:N],
            touching_body=zi[N:],
            distance=np.full(N, np.inf),
            patch_names=self.patch_names,
            patch_area=z[11 * N:11 * N + Q],
            patch_force=z[11 * N + Q:].reshape(Q, 3),
            patch_in_contact=np.zeros(Q, dtype=np.intp),
            finite_buffers=(pose, z),
        )

    def _compile_patch_sums(self, z):
        """One bincount for all patch totals: the weights are the members' area and force
        entries of the reset buffer ``z`` (``area`` then ``force``, both probe-major), binned
        to ``[patch_area (Q) | patch_force (3Q)]`` (each bin adds in probe order, as one
        bincount per field)."""
        N, Q = len(self.names), len(self.patch_names)
        m = np.arange(N) if self._patch_members is None else self._patch_members
        q = self._patch_q
        self._patch_bins = np.concatenate([q, (Q + 3 * q[:, None] + _AXES).reshape(-1)])
        self._patch_src = np.concatenate([N + m, (2 * N + 3 * m[:, None] + _AXES).reshape(-1)])
        self._patch_weights = z[N:5 * N] if self._patch_members is None else None
        self._patch_sums = z[11 * N:11 * N + 4 * Q]

    @classmethod
    def from_shapes(cls, specs, body_names, shapes, shape_body, **kw):
        """Compile from shape objects (``shapes.py``) given in their bodies' frames."""
        bounds = [shape_bounding_sphere(s) for s in shapes]
        center = np.array([b[0] for b in bounds], dtype=float).reshape(len(bounds), 3)
        radius = np.array([b[1] for b in bounds], dtype=float)
        kw.setdefault("shape_kind", [s.kind for s in shapes])
        return cls(specs, body_names, shape_body, center, radius, **kw)

    @classmethod
    def from_model(cls, specs, model, **kw):
        """Compile against a :class:`ambf_collision.model.Model` (its bodies, shapes in body
        frames and collision groups). The set keeps its own world-shape buffer, so evaluating
        it never touches the model's buffers."""
        kw.setdefault("rigid_root", rigid_roots(model))
        self = cls.from_shapes(specs, model.body_names, model.shapes, model.shape_body,
                               groups_of=model.groups_of, **kw)
        self._link = LinkShapes(model.shapes, model.shape_body) if len(model.shapes) else None
        return self

    def evaluate_model(self, evaluation) -> "ProbeResult":
        """Evaluate for the body poses of a model ``EvaluationResult`` (needs ``from_model``)."""
        if not hasattr(self, "_link"):
            raise RuntimeError("evaluate_model needs a ProbeSet built with ProbeSet.from_model")
        R, t = evaluation.body_R, evaluation.body_t
        world = self._link.to_world(R, t) if self._link is not None else None
        return self.evaluate(R, t, world)

    def __len__(self):
        return len(self.names)

    # -- kind order (compile) ------------------------------------------------------------

    def _compile_kinds(self, kinds):
        """Order the shapes by kind (stable) for the broadphase, so that the candidates of
        each kind form one contiguous slice for the exact stage. ``kinds (S,)``: shape kind
        codes, or None (then the order is fixed at the first evaluation from its world
        shapes)."""
        S = len(self.shape_body)
        order = np.arange(S, dtype=np.intp)
        groups = []
        if kinds is not None:
            kinds = np.array(kinds, dtype=np.intp).reshape(S)
            order = np.argsort(kinds, kind="stable").astype(np.intp)
            ks = kinds[order]
            first = np.searchsorted(ks, np.arange(SPHERE, CONVEX + 2)).tolist()  # kind k: [first[k], first[k+1])
            if S and (ks[0] < SPHERE or ks[-1] > CONVEX):  # unknown kind: batch raises
                self._fast_kinds = False
            else:
                self._fast_kinds = True
            for lo_kind, hi_kind, fn in _EXACT_GROUPS:
                lo, hi = first[lo_kind], first[hi_kind + 1]
                if hi > lo:
                    groups.append((lo, hi, fn))
            p0, p1 = first[PLANE], first[PLANE + 1]
            self._plane_rows = (p0, p1) if p1 > p0 else None
            self._plane_shapes = _slice_if_contiguous(order[p0:p1])
            r1 = first[CAPSULE + 1]
            self._round_rows = r1 if r1 > 0 else 0
            self._round_shapes = _slice_if_contiguous(order[:r1])
            b0, b1 = first[BOX], first[BOX + 1]
            self._box_rows = (b0, b1) if b1 > b0 else None
            self._box_shapes = _slice_if_contiguous(order[b0:b1])
            # other bounded solids (cylinder, cone: before planes; hulls: after)
            self._solid_rows = [(a, b) for a, b in ((b1, p0), (p1, S)) if b > a]
        else:
            self._fast_kinds = False
            self._plane_rows = None
            self._round_rows = 0
            self._box_rows = None
            self._solid_rows = []
        self._kinds = kinds
        self._exact_groups = groups
        self._group_bounds = np.array([g[0] for g in groups] + [groups[-1][1]] if groups else [0],
                                      dtype=np.intp)
        self._pos_group = [0] * S  # kind group of each sorted shape position
        for g, (lo, hi, _) in enumerate(groups):
            self._pos_group[lo:hi] = [g] * (hi - lo)
        self._sorder = order
        # per sorted position, the last position up to which the shape indices ascend
        self._ascending_to = list(range(S))
        for pos in range(S - 2, -1, -1):
            if order[pos] < order[pos + 1]:
                self._ascending_to[pos] = self._ascending_to[pos + 1]
        self._s_body = self.shape_body[order]
        self._s_center = np.ascontiguousarray(self.shape_center[order])
        self._pt_local = np.concatenate([self._s_center, self.cluster_center, self._cluster_normal])
        self._pt_body = np.concatenate([self._s_body, self.cluster_body, self.cluster_body])
        self._pt_moved = self._pt_body[:S + len(self.cluster_body)]  # points (not normals): + t
        self._s_radius = self.shape_radius[order]
        cr = self.cluster_radius
        # (S, C) bound of |cluster centre - shape centre|^2; inf stays inf
        self._allowed = np.ascontiguousarray(self.cluster_allowed.T[order])
        # -1 for the pairs not sensed (no distance is <= -1): one comparison tests both
        bound = ((cr[:, None] + self.shape_radius[None, :]) ** 2).T[order]
        self._bound = np.where(self._allowed, bound, -1.0)
        # (S, C) bound of |cluster centre - shape centre|^2 within which every member passes
        # the fine test (|p - shape centre| <= member reach + shape radius); -1: never
        inner = (self._s_radius[:, None] + self._cluster_least_reach[None, :]
                 - self._cluster_spread[None, :] - _FINE_SLACK)
        self._within = np.where(inner > 0.0, inner * inner, -1.0)
        # sensed (shape, cluster) pairs moving rigidly together, with a common sensor normal:
        # their facing test never changes, so those it rejects are dropped once (_static_prune)
        self._bound_world = self._bound  # the bound with world shapes (after _static_prune)
        self._rigid = None
        if self.rigid_root is not None and kinds is not None and self._any_uniform:
            root = self.rigid_root
            rigid = root[self._s_body][:, None] == root[self.cluster_body][None, :]
            rigid &= self._allowed & np.isfinite(self._cluster_front)[None, :]
            if rigid.any():
                self._rigid = rigid
        self._beyond = np.empty(self._within.shape, dtype=bool)

    def _sync_kinds(self, world):
        """Take the shape kinds from the world shapes when they were not known at compile
        time (or changed)."""
        k = world.kind
        if k is self._kind_src:
            return
        if len(k) != len(self.shape_body):
            raise ValueError(f"world shapes hold {len(k)} shapes; the probe set was compiled "
                             f"for {len(self.shape_body)}")
        if self._kinds is None or not np.array_equal(k, self._kinds):
            self._compile_kinds(np.array(k))
        self._kind_src = k

    # -- per cycle ---------------------------------------------------------------------

    def candidates(self, body_R, body_t, world_shapes=None):
        """Broadphase: ``(probe, shape)`` index arrays whose bounding spheres (inflated by
        the probe radius and range) overlap, for probe centres ``self.result.position``.
        With ``world_shapes`` (the cycle's world shapes), planes are also tested against
        each probe cluster's bounding sphere (else every plane is a candidate).
        Candidates come grouped by shape kind."""
        body_R = np.asarray(body_R, dtype=float)
        body_t = np.asarray(body_t, dtype=float)
        if world_shapes is not None and len(self.shape_body):
            self._sync_kinds(world_shapes)
        cand = self._broadphase(body_R, body_t, world_shapes)
        if cand is None:
            e = np.zeros(0, dtype=np.intp)
            return e, e
        return cand[0], self._sorder[cand[1]]

    def _broadphase(self, body_R, body_t, world):
        """``(pi, sp, P)``: candidate probe indices, sorted shape positions (index into
        ``self._sorder``) and probe centres (K,3), grouped by shape kind; None when empty."""
        S, C = self._d2.shape
        if C == 0 or S == 0:
            return None
        pw = self._pt_world  # shape centres, cluster centres, cluster normals (world)
        _einsum("nij,nj->ni", body_R.take(self._pt_body, axis=0), self._pt_local, out=pw)
        pw[:S + C] += body_t.take(self._pt_moved, axis=0)
        sw, cw = self._shape_w, self._cluster_w
        d2, diff, hit = self._d2, self._diff, self._hit
        if diff is not None:  # small: one (S, C, 3) difference
            np.subtract(sw[:, None, :], cw[None, :, :], out=diff)
            _einsum("sck,sck->sc", diff, diff, out=d2)
        else:  # large: by components into contiguous (S, C) buffers
            tmp = self._d2_tmp
            np.subtract(sw[:, 0, None], cw[None, :, 0], out=d2)
            np.multiply(d2, d2, out=d2)
            for ax in (1, 2):
                np.subtract(sw[:, ax, None], cw[None, :, ax], out=tmp)
                np.multiply(tmp, tmp, out=tmp)
                d2 += tmp
        if world is not None and self._rigid is not None:
            self._static_prune(body_t, world, sw)
        # within the bound and sensed (unsensed pairs have the bound -1)
        np.less_equal(d2, self._bound if world is None else self._bound_world, out=hit)
        if world is not None and not self._prune(body_R, body_t, world, sw, cw, hit):
            return None  # every pair pruned (the usual free cycle): no nonzero
        sp, ci = np.nonzero(hit)
        if sp.size == 0:
            return None
        # expand each (shape, cluster) into (shape, probe) for the cluster's members
        ok = None
        k = sp.size // C
        if sp.size == k * C and _all(sp[::C] == sp[C - 1::C]):
            # every hit shape row is hit by all clusters (sp sorted): all probes, in order
            if k == 1:
                pi, P, sp = self._probe_ids, self.result.position, self._full_row(int(sp[0]))
            else:
                pi = np.concatenate([self._probe_ids] * k)
                P = self.result.position.take(pi, axis=0)
                sp = np.repeat(sp[::C], self._probe_ids.size)
        elif self._members is not None:
            L = self._members.shape[1]
            pi = self._members[ci].ravel()
            sp = np.repeat(sp, L)
            if self._member_ok is not None:
                ok = self._member_ok[ci].ravel()
            P = self.result.position.take(pi, axis=0)
        else:
            counts = self.cluster_len[ci]
            total = int(counts.sum())
            ends = np.cumsum(counts)
            offs = np.arange(total, dtype=np.intp) - np.repeat(ends - counts, counts)
            pi = self.cluster_order[np.repeat(self.cluster_start[ci], counts) + offs]
            sp = np.repeat(sp, counts)
            P = self.result.position.take(pi, axis=0)
        # fine test per probe against the shape's bounding sphere, unless every hit cluster
        # lies wholly within the shape's reach (then every member passes it)
        beyond = np.greater(self._d2, self._within, out=self._beyond)
        beyond &= hit
        if not _any(beyond, axis=None):
            if ok is None:
                return pi, sp, P
            keep = ok
        else:
            diff = P - sw.take(sp, axis=0)
            reach = self._reach[pi] + self._s_radius[sp]
            keep = _einsum("ij,ij->i", diff, diff) <= reach * reach
            if ok is not None:
                keep &= ok
        idx = keep.nonzero()[0]
        if idx.size == 0:
            return None
        if idx.size < keep.size:
            pi, sp, P = pi[idx], sp[idx], P.take(idx, axis=0)
        return pi, sp, P

    def _full_row(self, pos):
        """Sorted shape position ``pos`` once per probe (the ``sp`` of a shape whose every
        cluster is hit; read only, cached while the cache holds under 2**18 entries)."""
        sp = self._full_rows.get(pos)
        if sp is None:
            sp = np.full(self._probe_ids.size, pos, dtype=np.intp)
            if (len(self._full_rows) + 1) * sp.size <= 1 << 18:
                self._full_rows[pos] = sp
        return sp

    def _prune(self, body_R, body_t, world, sw, cw, hit):
        """Drop (shape, cluster) pairs from ``hit`` that no member can see, for any radius:

        - a plane or box whose distance from the cluster centre exceeds the cluster radius
          (which includes every member's radius + range): every gap > range;
        - a plane whose normal points along the members' common sensor normal (n_c = plane
          normal, so n_c . n_s > 0);
        - a shape lying wholly behind the members' sensor planes (sphere/capsule: its
          segment; box: itself; other solids: their bounding sphere), farther than a slack: for every member the
          nearest surface point x lies behind it, n_c = (p - x) / |p - x| and n_c . n_s > 0.

        Returns False when no pair is left (known from the rows still hit), else True.
        """
        rows = _any(hit, axis=1).tolist()  # shapes (sorted rows) still hit by some cluster
        pr, br = self._plane_rows, self._box_rows
        planes = pr is not None and True in rows[pr[0]:pr[1]]
        boxes = br is not None and True in rows[br[0]:br[1]]
        if planes:
            p0, p1 = pr
            ps = self._plane_shapes
            pn = world.normal[ps]
            dp = pn @ cw.T
            dp -= world.offset[ps][:, None]
            hit[p0:p1] &= dp <= self._cluster_slack
        if boxes:
            # box: the cluster centre's distance to the box beyond the cluster radius
            b0, b1 = br
            bs = self._box_shapes
            rot, half = world.rot[bs], world.half[bs]
            q = np.matmul(cw[None, :, :] - world.a[bs][:, None, :], rot)  # R^T (c - x), (Sb,C,3)
            np.abs(q, out=q)
            q -= half[:, None, :]
            np.maximum(q, 0.0, out=q)
            hit[b0:b1] &= _einsum("sck,sck->sc", q, q) <= self._cluster_slack_sq
        if not self._any_uniform:
            return True
        if planes or boxes:
            if not _any(hit, axis=None):  # the usual free cycle ends here
                return False
            rows = _any(hit, axis=1).tolist()
            planes = planes and True in rows[p0:p1]
            boxes = boxes and True in rows[b0:b1]
        r1 = self._round_rows
        rounds = r1 and True in rows[:r1]
        solids = [(a, b) for a, b in self._solid_rows if True in rows[a:b]]
        if not (planes or boxes or rounds or solids):
            # no row left (the kind rows cover every shape unless a kind is unknown)
            return not self._fast_kinds
        nw, front = self._cluster_n, self._front  # nw: rotated by _broadphase
        _einsum("ij,ij->i", body_t.take(self.cluster_body, axis=0), nw, out=front)
        front += self._cluster_front_slack
        if planes:
            hit[p0:p1] &= pn @ nw.T <= _FACING_SLACK
        if rounds:
            hit[:r1] &= _round_support(world, self._round_shapes, nw) >= front
        if boxes:
            hit[b0:b1] &= _box_support(world, bs, nw) >= front
        for a, b in solids:
            hit[a:b] &= _solid_support(sw[a:b], self._s_radius[a:b], nw) >= front
        return True

    def _static_prune(self, body_t, world, sw):
        """Drop for good the rigid (shape, cluster) pairs (``self._rigid``) whose shape lies
        behind the cluster's sensor plane by more than ``_STATIC_MARGIN``: moving together,
        they keep that margin (to float rounding), so the facing test of :meth:`_prune` would
        reject them at every cycle. Uses this cycle's world shapes, shape centres ``sw`` and
        cluster normals (``_broadphase`` computed them)."""
        nw = self._cluster_n
        front = _einsum("ij,ij->i", body_t.take(self.cluster_body, axis=0), nw) + self._cluster_front
        sup = np.full(self._bound.shape, np.inf)  # planes: never dropped here
        if self._round_rows:
            sup[:self._round_rows] = _round_support(world, self._round_shapes, nw)
        if self._box_rows is not None:
            b0, b1 = self._box_rows
            sup[b0:b1] = _box_support(world, self._box_shapes, nw)
        for a, b in self._solid_rows:
            sup[a:b] = _solid_support(sw[a:b], self._s_radius[a:b], nw)
        behind = self._rigid & (sup < front - _STATIC_MARGIN)
        if behind.any():
            self._bound_world = np.where(behind, -1.0, self._bound)
        self._rigid = None

    def _exact(self, world, pi, sp, P):
        """Signed distances ``d (K,)`` and outward normals ``n (K,3)`` of the candidates
        (views of reused buffers, valid until the next call)."""
        K = pi.size
        if not (self._fast and self._fast_kinds):
            d, _, nc = self._point_distance(world, self._sorder[sp], P)
            return (np.asarray(d, dtype=float).reshape(K),
                    np.asarray(nc, dtype=float).reshape(K, 3))
        if self._ws_d.size < K:
            cap = min(max(K, 2 * self._ws_d.size), max(K, self.pairs_total))
            self._ws_d = np.empty(cap)
            self._ws_n = np.empty((cap, 3))
        d, nc = self._ws_d[:K], self._ws_n[:K]
        g = self._pos_group[sp[0]]
        if g == self._pos_group[sp[-1]]:  # one kind group (sp is sorted)
            self._exact_groups[g][2](self, world, self._sorder[sp], P, d, nc)
            return d, nc
        bounds = np.searchsorted(sp, self._group_bounds).tolist()
        for g, (_, _, fn) in enumerate(self._exact_groups):
            a, b = bounds[g], bounds[g + 1]
            if b > a:
                s = self._sorder[sp[a:b]]
                fn(self, world, s, P[a:b], d[a:b], nc[a:b])
        return d, nc

    def evaluate(self, body_R, body_t, world_shapes) -> ProbeResult:
        """Evaluate all probes for body poses ``body_R (B,3,3)``, ``body_t (B,3)`` (world,
        m) and the model's world shapes of the same cycle. Returns the reused result."""
        body_R = np.asarray(body_R, dtype=float)
        body_t = np.asarray(body_t, dtype=float)
        res = self.result
        N = len(self.names)
        # probe centres and sensor normals in world (views of one (2N, 3) buffer)
        if self._groups is not None:  # two matmuls per body
            self._move_probes(body_R, body_t, res.position, res.normal)
        else:
            _transform(body_R, body_t, self.probe_body, self.local_position, res.position)
            _transform(body_R, None, self.probe_body, self.local_normal, res.normal)
        if self._written:  # else every output but the pose still holds its reset value
            self._reset(res)
        res.pairs_checked = 0
        if N == 0 or world_shapes is None or len(self.shape_body) == 0:
            return res
        if world_shapes.kind is not self._kind_src:
            self._sync_kinds(world_shapes)
        cand = self._broadphase(body_R, body_t, world_shapes)
        if cand is None:  # nothing within reach: no exact stage
            return res
        pi, sp, P = cand
        self._written = True  # the stages below write the outputs
        res.pairs_checked = int(pi.size)
        d, nc = self._exact(world_shapes, pi, sp, P)
        every = pi is self._probe_ids  # one shape, every probe in order: whole arrays
        r = self.radius if every else self.radius[pi]
        gap = d - r
        seen = _einsum("ij,ij->i", nc, res.normal if every else res.normal.take(pi, axis=0)) < 0.0
        seen &= gap <= (self.range if every else self.range[pi])
        if _all(seen):  # every candidate seen: nothing to select
            if sp[0] == sp[-1]:  # one shape (sp is sorted): each probe once
                self._one_shape(res, body_R, int(self._sorder[sp[0]]), pi, nc, gap, r)
            else:
                self._several_shapes(res, body_R, None, pi, sp, nc, gap, r)
            return res
        idx = seen.nonzero()[0]
        if idx.size == 0:
            return res
        if sp[idx[0]] == sp[idx[-1]]:
            self._one_shape(res, body_R, int(self._sorder[sp[idx[0]]]), pi[idx],
                            nc.take(idx, axis=0), gap[idx], r[idx])
        else:
            self._several_shapes(res, body_R, idx, pi, sp, nc, gap, r)
        return res

    def _several_shapes(self, res, body_R, idx, pi, sp, nc, gap, r):
        """Per-probe outputs from the seen pairs ``idx`` (None: every pair) of candidates on
        several shapes: sums over the touching shapes, nearest seen shape per probe."""
        N = len(self.names)
        si = self._sorder[sp if idx is None else sp[idx]]
        if sp[-1] > self._ascending_to[sp[0]]:  # (sp is sorted)
            # back to ascending shape index per probe (the order the sums below add in)
            o = np.argsort(si, kind="stable")
            idx, si = (o if idx is None else idx[o]), si[o]
        if idx is not None:
            pi, nc, gap, r = pi[idx], nc.take(idx, axis=0), gap[idx], r[idx]

        # sums over touching shapes (one bincount over probe*3 + axis: per entry the same
        # additions in the same order as one bincount per axis)
        t = (gap < 0.0).nonzero()[0]  # touching pairs
        any_touch = t.size > 0
        if any_touch:
            pt, two_r = pi.take(t), 2.0 * r.take(t)
            dpen = _penetration(gap.take(t), two_r)
            w = self.stiffness[pt] * dpen
            f = w[:, None] * nc.take(t, axis=0)
            res.force.reshape(-1)[:] = np.bincount((3 * pt[:, None] + _AXES).reshape(-1),
                                                   weights=f.reshape(-1), minlength=3 * N)
            res.area[:] = np.bincount(pt, weights=np.pi * (two_r * dpen - dpen * dpen), minlength=N)

        # nearest seen shape per probe (= deepest contact when touching; ties: lowest shape)
        sel = self._nearest(pi, gap)
        p1 = pi[sel]
        res.distance[p1] = gap[sel]
        if not any_touch:  # force, area, contacts and patch totals stay as reset
            return
        hit = gap[sel] < 0.0
        ph, sh = p1[hit], sel[hit]
        res.in_contact[ph] = True
        res.depth[ph] = _penetration(gap[sh], 2.0 * r[sh])
        res.contact_normal[ph] = nc.take(sh, axis=0)
        res.touching_shape[ph] = si[sh]
        res.touching_body[ph] = self.shape_body[si[sh]]
        self._finish(res, body_R)

    def _nearest(self, pi, gap):
        """Per probe of ``pi`` the index of its pair with the smallest gap, the first one on
        ties (pairs come in ascending shape order: the lowest shape), in any order."""
        best = self._best
        best.fill(np.inf)
        np.minimum.at(best, pi, gap)
        sel = (gap == best.take(pi)).nonzero()[0]
        if sel.size == np.count_nonzero(best != np.inf):  # one pair per probe: no tie
            return sel
        order = np.lexsort((gap, pi))  # ties: the first pair in (probe, gap, order) order
        ps = pi[order]
        first = np.ones(ps.size, dtype=bool)
        first[1:] = ps[1:] != ps[:-1]
        return order[first]

    def _reset(self, res):
        """Outputs back to their free values (no contact, nothing within range)."""
        res.in_contact.fill(False)
        self._reset_zero.fill(0.0)  # depth, area, force, force_body, contact_normal, patch totals
        self._reset_index.fill(-1)  # touching_shape, touching_body
        res.distance.fill(np.inf)
        res.patch_in_contact.fill(0)
        self._written = False

    def _move_probes(self, body_R, body_t, position, normal):
        """Probe centres ``R p + t`` and sensor normals ``R n`` in world, per body of
        ``self._groups``. Bodies with several probes move their centres by one matmul of the
        rows ``[p, 1]`` by ``[R^T; t^T]`` (the same products and sums in the same order as
        ``p R^T`` then ``+ t``) and their normals by its contiguous ``R^T`` rows; a single
        probe keeps the vector-matrix products with the view ``R^T`` (plus ``t``): one-row
        products add in another order."""
        M = self._pose_map
        for b, sel in self._groups:
            Rt = body_R[b].T
            sliced = isinstance(sel, slice)  # an index array always holds several probes
            if sliced and sel.stop - sel.start == 1:  # a lone probe
                np.add(self.local_position[sel] @ Rt, body_t[b], out=position[sel])
                np.matmul(self.local_normal[sel], Rt, out=normal[sel])
                continue
            np.copyto(M[:3], Rt)
            M[3] = body_t[b]
            if sliced:
                np.matmul(self._local_h[sel], M, out=position[sel])
                np.matmul(self.local_normal[sel], M[:3], out=normal[sel])
            else:
                position[sel] = self._local_h[sel] @ M
                normal[sel] = self.local_normal[sel] @ M[:3]

    def _one_shape(self, res, body_R, s0, pi, nc, gap, r):
        """Per-probe outputs when all seen pairs are on shape ``s0`` (each probe at most
        once: no sums, no nearest-per-probe search)."""
        every = pi is self._probe_ids  # every probe, in order: whole-array writes
        if every:
            pi = slice(None)
        res.distance[pi] = gap
        touch = gap < 0.0
        if _all(touch):  # every seen probe touches: nothing to select
            pt, gt, nt = pi, gap, nc
            two_r = self._two_r if every else 2.0 * r
        elif _any(touch):
            t = touch.nonzero()[0]
            pt, gt, nt = (t if every else pi[t]), gap[t], nc.take(t, axis=0)
            two_r = 2.0 * r[t]
        else:
            return
        dpen = _penetration(gt, two_r)
        res.depth[pt] = dpen  # one contact per probe: the deepest
        res.force[pt] = (self.stiffness[pt] * dpen)[:, None] * nt
        res.area[pt] = np.pi * (two_r * dpen - dpen * dpen)
        res.in_contact[pt] = True
        res.contact_normal[pt] = nt
        res.touching_shape[pt] = s0
        res.touching_body[pt] = self.shape_body[s0]
        self._finish(res, body_R)

    def _finish(self, res, body_R):
        """Body-frame forces and patch totals from the per-probe forces and contacts."""
        # body-frame force: R^T f (row vectors: f^T R)
        if self._groups is not None:
            for b, sel in self._groups:
                if isinstance(sel, slice):
                    np.matmul(res.force[sel], body_R[b], out=res.force_body[sel])
                else:
                    res.force_body[sel] = res.force[sel] @ body_R[b]
        else:
            Rb = body_R[self.probe_body]
            _einsum("nji,nj->ni", Rb, res.force, out=res.force_body)

        if self.patch_names:
            Q, inp = len(self.patch_names), self._patch_members
            w = self._patch_weights
            if w is None:  # some probes outside patches
                w = self._reset_zero.take(self._patch_src)
            self._patch_sums[:] = np.bincount(self._patch_bins, weights=w, minlength=4 * Q)
            inc = res.in_contact if inp is None else res.in_contact[inp]
            res.patch_in_contact[:] = np.bincount(self._patch_q[inc], minlength=Q)


# ----------------------------------------------------------------------------- reports


def _vec(v):
    return [float(x) for x in v]


def probe_report_json(probe_set: ProbeSet, result: ProbeResult, model=None) -> dict:
    """``{"probes": [...], "patches": {...}}`` for ``check --json`` (world frame, SI units).

    Each probe: ``name``, ``body`` (qualified), ``in_contact``, ``depth`` (m), ``area`` (m^2),
    ``force`` [x, y, z] (N), ``contact_normal`` [x, y, z] (zeros when free), ``distance`` (m,
    ``null`` beyond range), ``touching_body`` (qualified name, ``null`` when free),
    ``position`` [x, y, z] (m), ``normal`` [x, y, z]. Patches: ``{name: {"force", "area",
    "in_contact"}}`` (summed force N, summed area m^2, number of probes in contact).
    """
    names = list(model.body_names) if model is not None else probe_set.body_names
    probes = []
    for i, name in enumerate(result.names):
        tb = int(result.touching_body[i])
        dist = float(result.distance[i])
        probes.append({
            "name": name,
            "body": result.body[i],
            "in_contact": bool(result.in_contact[i]),
            "depth": float(result.depth[i]),
            "area": float(result.area[i]),
            "force": _vec(result.force[i]),
            "contact_normal": _vec(result.contact_normal[i]),
            "distance": dist if math.isfinite(dist) else None,
            "touching_body": names[tb] if tb >= 0 else None,
            "position": _vec(result.position[i]),
            "normal": _vec(result.normal[i]),
        })
    patches = {
        name: {
            "force": _vec(result.patch_force[j]),
            "area": float(result.patch_area[j]),
            "in_contact": int(result.patch_in_contact[j]),
        }
        for j, name in enumerate(result.patch_names)
    }
    return {"probes": probes, "patches": patches}


def probe_report_table(probe_set: ProbeSet, result: ProbeResult, model=None) -> str:
    """Human-readable table of all probes (mm, N, mm^2) and the patch totals."""
    names = list(model.body_names) if model is not None else probe_set.body_names
    head = f"{'probe':<20} {'body':<16} {'contact':<7} {'depth mm':>9} {'|F| N':>9} " \
           f"{'area mm2':>9} {'gap mm':>9}  touching"
    lines = [head, "-" * len(head)]
    for i, name in enumerate(result.names):
        dist = float(result.distance[i])
        tb = int(result.touching_body[i])
        lines.append(
            f"{name:<20} {_plain(result.body[i]):<16} {'yes' if result.in_contact[i] else 'no':<7} "
            f"{1e3 * result.depth[i]:>9.3f} {float(np.linalg.norm(result.force[i])):>9.4f} "
            f"{1e6 * result.area[i]:>9.3f} {(f'{1e3 * dist:.3f}' if math.isfinite(dist) else '-'):>9}  "
            f"{_plain(names[tb]) if tb >= 0 else '-'}"
        )
    if result.patch_names:
        lines.append("")
        lines.append(f"{'patch':<20} {'in contact':>10} {'|F| N':>9} {'force N [x, y, z]':<30} {'area mm2':>9}")
        for j, name in enumerate(result.patch_names):
            f = result.patch_force[j]
            lines.append(
                f"{name:<20} {int(result.patch_in_contact[j]):>10} {float(np.linalg.norm(f)):>9.4f} "
                f"{'[' + ', '.join(f'{x:.4f}' for x in f) + ']':<30} {1e6 * result.patch_area[j]:>9.3f}"
            )
    return "\n".join(lines)


class ProbeCheckExtension:
    """``ambf-collision check FILE... --probes PROBES.yaml [--json]`` (for
    ``cli_model.register_check_extension``): adds ``"probes"`` and ``"patches"`` to the JSON
    report (see :func:`probe_report_json`) or the probe table to the text output.
    Bad probe files raise :class:`ProbeError` (file, entry, key)."""

    def add_arguments(self, parser):
        parser.add_argument("--probes", metavar="PROBES.yaml", default=None,
                            help="tactile probe file (YAML: probes/patches in body frames, m, N/m); "
                                 "adds each probe's depth, force, area, distance and patch totals")

    def extend(self, args, model, data, result, report):
        path = getattr(args, "probes", None)
        if not path:
            return []
        ps = ProbeSet.from_model(load_probe_file(path, model.body_names), model)
        res = ps.evaluate_model(result)
        report.update(probe_report_json(ps, res, model))
        return ["", f"tactile probes: {len(ps)} from {path} (world frame; gap '-' beyond range)"] + [
            "  " + line for line in probe_report_table(ps, res, model).splitlines()
        ]
