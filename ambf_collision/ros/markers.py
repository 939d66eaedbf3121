"""RViz markers (``visualization_msgs/MarkerArray``) of the collision scene, all in the world frame.

* every collision shape, coloured by its smallest pair distance (red in contact, orange to yellow
  closer than ``near`` metres, green farther, grey when no pair of it is checked):
  sphere -> SPHERE; capsule -> CYLINDER along its segment + two SPHERE end caps; box -> CUBE;
  cylinder -> CYLINDER; cone -> TRIANGLE_LIST (a 24-sided mesh in the cone's frame);
  plane -> a large thin CUBE whose top face is the plane; convex hull -> TRIANGLE_LIST of its faces;
  namespace ``shapes/<body>``, fixed ids;
* every reported contact, namespace ``<body_1>=<body_2>``: an ARROW from witness point 1 along the
  normal (body 1 -> body 2) and a SPHERE_LIST of both witness points;
* the probes: one SPHERE_LIST (namespace ``probes``), blue when free, yellow to red by force
  magnitude in contact.

Each array starts with a DELETEALL and every marker has a short ``lifetime``, so markers of contacts
that ended and of a stopped node vanish. :class:`MarkerBuilder` precomputes the static part (types,
namespaces, ids, mesh triangles) once per model and updates only poses and colours per cycle, with
all pose arithmetic vectorised over the shapes. No value of a marker is ever NaN.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ambf_collision.geometry.shapes import BOX, CAPSULE, CONE, CONVEX, CYLINDER, PLANE, SPHERE
from ambf_collision.geometry.transforms import matrix_to_quat

__all__ = ["MarkerBuilder", "build_markers", "distance_colors", "force_colors",
           "axis_quaternions", "hull_triangles", "cone_triangles"]

GREEN = (0.15, 0.8, 0.25)
RED = (1.0, 0.0, 0.0)
ORANGE = (1.0, 0.5, 0.0)
YELLOW = (1.0, 1.0, 0.0)
GREY = (0.6, 0.6, 0.6)
PROBE_FREE = (0.3, 0.6, 1.0)


def distance_colors(d, near: float) -> np.ndarray:
    """RGB (N,3) for signed distances ``d`` (m): red at d <= 0, orange -> yellow for
    0 < d < near, green at d >= near, grey for +inf (nothing checked). NaN counts as contact."""
    d = np.asarray(d, dtype=float).reshape(-1)
    t = np.clip(d / near, 0.0, 1.0) if near > 0 else np.ones_like(d)
    t = np.nan_to_num(t, nan=0.0)
    near_rgb = np.asarray(ORANGE) + t[:, None] * (np.asarray(YELLOW) - np.asarray(ORANGE))
    rgb = np.where((d >= near)[:, None], GREEN, near_rgb)
    rgb = np.where(~(d > 0.0)[:, None], RED, rgb)
    return np.where(np.isposinf(d)[:, None], GREY, rgb)


def force_colors(force, in_contact, full_scale: float) -> np.ndarray:
    """RGB (N,3) of probes: blue when free, yellow (tiny force) -> red (``full_scale`` N or more)."""
    f = np.linalg.norm(np.nan_to_num(np.asarray(force, dtype=float).reshape(-1, 3)), axis=1)
    t = np.clip(f / full_scale, 0.0, 1.0) if full_scale > 0 else np.ones_like(f)
    touch = np.asarray(YELLOW) + t[:, None] * (np.asarray(RED) - np.asarray(YELLOW))
    return np.where(np.asarray(in_contact, dtype=bool).reshape(-1)[:, None], touch, PROBE_FREE)


def axis_quaternions(u) -> np.ndarray:
    """Quaternions (N,4) [x,y,z,w] rotating local +z onto the directions ``u (N,3)`` (any length;
    zero -> identity; -z -> half turn about x). Shortest-arc rotation."""
    u = np.asarray(u, dtype=float).reshape(-1, 3)
    n = np.linalg.norm(u, axis=1)
    safe = np.where(n > 1e-15, n, 1.0)
    v = np.where((n > 1e-15)[:, None], u / safe[:, None], (0.0, 0.0, 1.0))
    q = np.stack([-v[:, 1], v[:, 0], np.zeros(len(v)), 1.0 + v[:, 2]], axis=1)
    qn = np.linalg.norm(q, axis=1)
    flip = qn < 1e-9  # v == -z
    q = np.where(flip[:, None], (1.0, 0.0, 0.0, 0.0), q / np.where(flip, 1.0, qn)[:, None])
    return q


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


def hull_triangles(vertices, max_vertices: int = 120) -> np.ndarray:
    """Outward triangles (3*T, 3) of the convex hull of ``vertices (M,3)`` (brute force over all
    vertex triples, vectorised; fine for the small hulls of collision shapes). Degenerate (flat,
    collinear or too large) input gives an empty array: the hull is then not drawn."""
    v = np.unique(np.asarray(vertices, dtype=float).reshape(-1, 3), axis=0)
    m = len(v)
    if m < 4 or m > max_vertices:
        return np.zeros((0, 3))
    i, j, k = np.array(list(itertools.combinations(range(m), 3))).T
    nrm = np.cross(v[j] - v[i], v[k] - v[i])
    length = np.linalg.norm(nrm, axis=1)
    scale = float(np.max(np.ptp(v, axis=0)))
    ok = length > 1e-12 * scale * scale
    i, j, k, nrm = i[ok], j[ok], k[ok], nrm[ok] / length[ok, None]
    s = np.einsum("tmd,td->tm", v[None, :, :] - v[i][:, None, :], nrm)
    tol = 1e-9 * scale
    out_pos = (s > tol).any(1)
    out_neg = (s < -tol).any(1)
    face = ~(out_pos & out_neg)
    if not face.any():
        return np.zeros((0, 3))
    i, j, k, out_pos = i[face], j[face], k[face], out_pos[face]
    # orient outward: the other vertices must lie on the negative side
    j2 = np.where(out_pos, k, j)
    k2 = np.where(out_pos, j, k)
    return np.stack([v[i], v[j2], v[k2]], axis=1).reshape(-1, 3)


def _time_msg(stamp) -> Time:
    if isinstance(stamp, Time):
        return stamp
    if hasattr(stamp, "sec") and hasattr(stamp, "nanosec"):
        return Time(sec=int(stamp.sec), nanosec=int(stamp.nanosec))
    if hasattr(stamp, "to_msg"):
        return stamp.to_msg()
    s = float(stamp or 0.0)
    s = s if math.isfinite(s) and s > 0 else 0.0
    sec = int(math.floor(s))
    return Time(sec=sec, nanosec=min(int(round((s - sec) * 1e9)), 999_999_999))


def _duration(seconds: float) -> Duration:
    sec = int(math.floor(seconds))
    return Duration(sec=sec, nanosec=int(round((seconds - sec) * 1e9)))


def _pt(x) -> Point:
    return Point(x=float(x[0]), y=float(x[1]), z=float(x[2]))


def _finite(a, fill=0.0):
    """``a`` as floats with every non-finite value replaced by ``fill`` (``a`` itself when it
    is all finite: read it, do not write it)."""
    a = np.asarray(a, dtype=float)
    finite = np.isfinite(a)
    return a if finite.all() else np.where(finite, a, fill)


def _contact_marker_pair(lifetime: Duration) -> tuple:
    """The ARROW and SPHERE_LIST of one contact with what every contact shares (type, action,
    lifetime, orientation, scale, opacity); :meth:`MarkerBuilder.contact_markers` sets the
    rest on every use."""
    arrow = Marker(type=Marker.ARROW, action=Marker.ADD, lifetime=lifetime)
    arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.004, 0.008, 0.012
    pts = Marker(type=Marker.SPHERE_LIST, action=Marker.ADD, lifetime=lifetime)
    pts.scale.x = pts.scale.y = pts.scale.z = 0.01
    for m in (arrow, pts):
        m.pose.orientation.w = 1.0
        m.color.a = 1.0
    return arrow, pts


class MarkerBuilder:
    """Static marker layout of one model; :meth:`build` fills poses and colours per cycle.

    ``kinds (N,)``: shape kind codes; ``shape_labels (N,)``: body name of each shape (marker
    namespace ``shapes/<label>``); ``pairs (P,2)``: shape indices of the checked pairs (to colour
    each shape by its smallest pair distance); ``hulls``: the outward triangles of CONVEX shapes as
    points ``(3T,3)`` in the shape's frame (list of N, None elsewhere; from the ``HullSet``); ``cone_size``: (radius, height) per shape for CONE shapes (from
    the world shapes' ``half``). Sizes in metres; colours RGBA in [0, 1].
    """

    def __init__(self, kinds, shape_labels, pairs=None, hulls=None, world_frame="world",
                 near=0.05, lifetime=0.25, plane_size=4.0, plane_thickness=0.01,
                 shape_alpha=0.6, plane_alpha=0.3, probe_diameter=0.005, force_full_scale=2.0,
                 arrow_length=0.05, cone_half=None):
        self.kinds = np.asarray(kinds, dtype=np.int64).reshape(-1)
        n = len(self.kinds)
        self.labels = [str(s) for s in shape_labels]
        if len(self.labels) != n:
            raise ValueError(f"shape_labels: need one per shape ({n}), got {len(self.labels)}")
        self.pairs = np.zeros((0, 2), dtype=np.intp) if pairs is None else \
            np.asarray(pairs, dtype=np.intp).reshape(-1, 2)
        self.checked = np.zeros(n, dtype=bool)
        self.checked[self.pairs.ravel()] = True
        self.world_frame = world_frame
        self.near = float(near)
        self.lifetime = _duration(lifetime)
        self.plane_size, self.plane_thickness = float(plane_size), float(plane_thickness)
        self.probe_diameter = float(probe_diameter)
        self.force_full_scale = float(force_full_scale)
        self.arrow_length = float(arrow_length)
        self._shape_d = np.empty(n)
        self._contact_pool: list = []  # (ARROW, SPHERE_LIST) per contact index, grown on demand

        self.caps = np.flatnonzero(self.kinds == CAPSULE)
        per_label: dict[str, int] = {}
        self.shape_markers: list[Marker] = []
        marker_type = {SPHERE: Marker.SPHERE, CAPSULE: Marker.CYLINDER, BOX: Marker.CUBE,
                       CYLINDER: Marker.CYLINDER, CONE: Marker.TRIANGLE_LIST, PLANE: Marker.CUBE,
                       CONVEX: Marker.TRIANGLE_LIST}
        hulls = hulls if hulls is not None else [None] * n
        owners = list(range(n)) + list(self.caps) + list(self.caps)
        for k in owners:
            m = Marker()
            m.header.frame_id = world_frame
            m.ns = f"shapes/{self.labels[k]}"
            m.id = per_label.get(m.ns, 0)
            per_label[m.ns] = m.id + 1
            m.type = marker_type[int(self.kinds[k])] if len(self.shape_markers) < n else Marker.SPHERE
            m.action = Marker.ADD
            m.lifetime = self.lifetime
            m.color.a = float(plane_alpha if self.kinds[k] == PLANE else shape_alpha)
            if len(self.shape_markers) < n and self.kinds[k] in (CONE, CONVEX):
                if self.kinds[k] == CONE:
                    r, h = (cone_half[k][0], 2.0 * cone_half[k][2]) if cone_half is not None \
                        else (0.05, 0.1)
                    tris = cone_triangles(r, h)
                else:
                    tris = hulls[k] if hulls[k] is not None else np.zeros((0, 3))
                m.points = [_pt(p) for p in tris]
                m.scale.x = m.scale.y = m.scale.z = 1.0
            self.shape_markers.append(m)
        self.owner = np.array(owners, dtype=np.intp)
        self.deleteall = Marker(action=Marker.DELETEALL)
        self.deleteall.header.frame_id = world_frame

    @classmethod
    def from_world_shapes(cls, world, shape_labels, pairs=None, **kw) -> "MarkerBuilder":
        """Layout from a :class:`~ambf_collision.geometry.world_shapes.WorldShapes` (hulls drawn
        with their ``HullSet`` triangles)."""
        hs = world.hulls
        hulls = [None if h < 0 else hs.hull_vertices(h)[hs.hull_triangles(h)].reshape(-1, 3)
                 for h in np.asarray(world.hull_id).tolist()]
        return cls(world.kind, shape_labels, pairs, hulls=hulls,
                   cone_half=np.asarray(world.half), **kw)

    def shape_distances(self, pair_distances) -> np.ndarray:
        """Smallest signed distance (m) of each shape over the checked pairs (+inf: none)."""
        d = self._shape_d
        d.fill(math.inf)
        if len(self.pairs):
            pd = np.asarray(pair_distances, dtype=float).reshape(-1)
            pd = np.where(np.isnan(pd), -math.inf, pd)  # never hide a broken pair as "far"
            np.minimum.at(d, self.pairs[:, 0], pd)
            np.minimum.at(d, self.pairs[:, 1], pd)
        return d

    def shape_poses(self, world):
        """Positions (M,3), quaternions (M,4) and scales (M,3) of all shape markers (the N main
        markers, then the capsules' cap spheres at ``a`` and at ``b``), vectorised."""
        kind = self.kinds
        a, b = np.asarray(world.a, float), np.asarray(world.b, float)
        r = np.asarray(world.radius, float)
        half = np.asarray(world.half, float)
        rot = np.asarray(world.rot, float)
        normal = np.asarray(world.normal, float)
        offset = np.asarray(world.offset, float)
        n = len(kind)
        pos = np.where((kind == CAPSULE)[:, None], 0.5 * (a + b), a)
        q = matrix_to_quat(rot) if n else np.zeros((0, 4))
        cap = kind == CAPSULE
        if cap.any():
            q[cap] = axis_quaternions(b[cap] - a[cap])
        plane = kind == PLANE
        if plane.any():
            q[plane] = axis_quaternions(normal[plane])
            pos[plane] = (offset[plane] - 0.5 * self.plane_thickness)[:, None] * normal[plane]
        q[(kind == SPHERE)] = (0.0, 0.0, 0.0, 1.0)
        scale = np.ones((n, 3))
        dia = 2.0 * r
        scale[kind == SPHERE] = dia[kind == SPHERE, None]
        scale[cap] = np.stack([dia[cap], dia[cap], np.linalg.norm(b[cap] - a[cap], axis=1)], 1)
        box = kind == BOX
        scale[box] = 2.0 * half[box]
        cyl = kind == CYLINDER
        scale[cyl] = np.stack([2 * half[cyl, 0], 2 * half[cyl, 1], 2 * half[cyl, 2]], 1)
        scale[plane] = (self.plane_size, self.plane_size, self.plane_thickness)
        c = self.caps
        ident = np.tile((0.0, 0.0, 0.0, 1.0), (2 * len(c), 1))
        pos = np.concatenate([pos, a[c], b[c]])
        q = np.concatenate([q, ident])
        scale = np.concatenate([scale, np.repeat(dia[c, None], 3, 1), np.repeat(dia[c, None], 3, 1)])
        # RViz ignores markers with a zero scale; keep degenerate shapes visible but tiny
        scale = np.maximum(_finite(scale), 1e-4)
        return _finite(pos), _finite(q), scale

    def build(self, world, pair_distances=None, contacts=(), probe_result=None, stamp=None,
              world_frame=None) -> MarkerArray:
        """The MarkerArray of this cycle: DELETEALL, shapes, contacts, probes (see module doc)."""
        frame = world_frame or self.world_frame
        t = _time_msg(stamp)
        out = MarkerArray()
        self.deleteall.header.stamp = t
        self.deleteall.header.frame_id = frame
        out.markers.append(self.deleteall)
        sd = self.shape_distances(pair_distances if pair_distances is not None else [])
        sd = np.where(self.checked, sd, math.inf)
        rgb = distance_colors(sd, self.near)[self.owner]
        pos, q, scale = self.shape_poses(world)
        for m, p, o, s, c in zip(self.shape_markers, pos.tolist(), q.tolist(), scale.tolist(),
                                 rgb.tolist()):
            m.header.stamp = t
            m.header.frame_id = frame
            m.pose.position.x, m.pose.position.y, m.pose.position.z = p
            o_ = m.pose.orientation
            o_.x, o_.y, o_.z, o_.w = o
            if m.type != Marker.TRIANGLE_LIST:
                m.scale.x, m.scale.y, m.scale.z = s
            m.color.r, m.color.g, m.color.b = c
        out.markers.extend(self.shape_markers)
        out.markers.extend(self.contact_markers(contacts, t, frame))
        if probe_result is not None and len(getattr(probe_result, "names", ())):
            out.markers.append(self.probe_marker(probe_result, t, frame))
        return out

    def contact_markers(self, contacts, stamp, frame) -> list:
        """ARROW (normal from witness point 1) and SPHERE_LIST (witness points) per contact,
        namespace ``body_1=body_2``, ids 2k and 2k+1 for the k-th contact of that pair."""
        out, count = [], {}
        contacts = list(contacts)
        if not contacts:
            return out
        d = np.array([float(c.distance) for c in contacts])
        rgb = distance_colors(np.where(np.isfinite(d), d, -1.0), self.near)
        pool = self._contact_pool
        while len(pool) < len(contacts):  # the markers of the i-th contact, reused
            pool.append(_contact_marker_pair(self.lifetime))
        for c, col, (arrow, pts) in zip(contacts, rgb.tolist(), pool):
            ns = f"{c.body_1}={c.body_2}"
            k = count.get(ns, 0)
            count[ns] = k + 1
            p1, p2 = _finite(c.point_1), _finite(c.point_2)
            nrm = _finite(c.normal)
            length = max(self.arrow_length, abs(float(np.nan_to_num(c.distance))))
            for m, marker_id in ((arrow, 2 * k), (pts, 2 * k + 1)):
                m.ns, m.id = ns, marker_id
                m.header.stamp, m.header.frame_id = stamp, frame
                m.color.r, m.color.g, m.color.b = col
            arrow.points = [_pt(p1), _pt(p1 + length * nrm)]
            pts.points = [_pt(p1), _pt(p2)]
            out += [arrow, pts]
        return out

    def probe_marker(self, pr, stamp, frame) -> Marker:
        """One SPHERE_LIST of all probe centres, coloured by force (see :func:`force_colors`)."""
        m = Marker(ns="probes", id=0, type=Marker.SPHERE_LIST, action=Marker.ADD,
                   lifetime=self.lifetime)
        m.header.stamp, m.header.frame_id = stamp, frame
        m.pose.orientation.w = 1.0
        m.scale.x = m.scale.y = m.scale.z = self.probe_diameter
        m.color.a = 1.0
        pos = _finite(pr.position).reshape(-1, 3)
        rgb = force_colors(pr.force, pr.in_contact, self.force_full_scale)
        m.points = [Point(x=x, y=y, z=z) for x, y, z in pos.tolist()]
        m.colors = [ColorRGBA(r=r, g=g, b=b, a=1.0) for r, g, b in rgb.tolist()]
        return m


# -- convenience entry point for the node --------------------------------------------------------


def _model_scene(model, result, data, world=None):
    """(world shapes, shape labels, pairs, pair distances) of a model's evaluation."""
    if world is None:
        world = getattr(result, "world", None)
    if world is None and getattr(model, "link_shapes", None) is not None \
            and getattr(result, "body_R", None) is not None:
        # the shapes at the result's body poses (the same values evaluate() computed)
        world = model.link_shapes.to_world(result.body_R, result.body_t)
    if world is None:
        world = getattr(data, "world", None)
    if world is None:
        raise TypeError("build_markers: pass world= (WorldShapes) or a result with body_R/body_t "
                        "of a model with link_shapes")
    labels = getattr(model, "shape_body_names", None)
    if labels is None:
        body_names = list(getattr(model, "body_names"))
        labels = [body_names[int(i)] for i in getattr(model, "shape_body")]
    pairs = getattr(model, "pairs", None)
    if pairs is None and hasattr(model, "pair_distance"):
        pairs = model.pair_distance.pairs
    return world, labels, pairs, getattr(result, "distances", None)


def build_markers(model, result, probe_result, world_frame, stamp, *, data=None, world=None,
                  near=0.05, lifetime=0.25, cache=None, **kw) -> MarkerArray:
    """MarkerArray of a model's evaluation ``result`` (and ``probe_result``, may be None).

    Uses from ``model``: ``shape_body_names`` (or ``body_names`` + ``shape_body``) and ``pairs``
    (P,2) shape indices; from ``result``: ``distances (P,)``, ``contacts``, and the world shapes
    as ``result.world`` (or ``data.world``, or ``world=``). ``stamp``: builtin_interfaces/Time,
    rclpy Time or seconds. ``near`` (m): distance below which shapes turn orange/yellow (the
    node's ``report_distance``). ``cache``: the caller's dict (a node keeps one); the static
    layout is then compiled once per model and reused (without: built on every call).
    """
    w, labels, pairs, distances = _model_scene(model, result, data, world)
    cache = {} if cache is None else cache
    if cache.get("model") is not model:
        cache["model"], cache["builder"] = model, MarkerBuilder.from_world_shapes(
            w, labels, pairs, world_frame=world_frame, near=near, lifetime=lifetime, **kw)
    builder = cache["builder"]
    builder.near = float(near)
    return builder.build(w, distances, getattr(result, "contacts", ()), probe_result, stamp,
                         world_frame)
