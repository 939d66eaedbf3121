"""RViz markers (``visualization_msgs/MarkerArray``) of the collision scene, all in the world frame.

* every collision shape, coloured by its smallest pair distance (red in contact, orange to yellow
  closer than ``near`` metres, green farther, grey when no pair of it is checked):
  sphere -> SPHERE; capsule -> CYLINDER along its segment + two SPHERE end caps; box -> CUBE;
  cylinder -> CYLINDER; cone -> TRIANGLE_LIST (a 24-sided mesh in the cone's frame);
  plane -> a large thin CUBE whose top face is the plane; convex hull -> TRIANGLE_LIST of its faces;
  triangle mesh -> MESH_RESOURCE of its file (``file://`` URI of the absolute path, spaces and
  other reserved characters percent-encoded as RViz's resource retriever, libcurl, needs them;
  scale the body scale on all three axes; RViz reads the file itself), or for a mesh built from
  arrays (no file) TRIANGLE_LIST of its triangles. A file split into several solids (the parts of
  one body's file: ``Mesh.part``) is drawn once, by its first part's marker, coloured by the
  smallest distance of all its parts; the other parts' markers are DELETE actions (drawn by
  the first); namespace ``shapes/<body>``, fixed ids;
* every reported contact, namespace ``<body_1>=<body_2>``: an ARROW from witness point 1 along the
  normal (body 1 -> body 2) and a SPHERE_LIST of both witness points, coloured by distance, or
  violet for a swept contact (continuous mode: the pair touched between two joint states and is
  apart now; drawn where it touched);
* the probes: one SPHERE_LIST (namespace ``probes``), blue when free, yellow to red by force
  magnitude in contact.

Each array starts with a DELETEALL and every marker has a short ``lifetime``, so markers of contacts
that ended and of a stopped node vanish. :class:`MarkerBuilder` gives the array serialized, ready
to publish raw: per layout it serializes a template once (the static part: types, namespaces,
ids, mesh triangles) and per cycle writes only the numbers (poses, scales, points, colours,
stamps) into its bytes, computed by the compiled functions of :mod:`marker_geometry`. Contacts
are drawn grouped by namespace (closest first within one), so a layout is a set of contacts, not
their order. No value of a marker is ever NaN.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from ambf_collision.geometry.shapes import BOX, CAPSULE, CONE, CONVEX, CYLINDER, MESH, PLANE, SPHERE
from ambf_collision.model.contact_rows import contact_columns, contact_row_width
from ambf_collision.ros.marker_geometry import (SWEPT, cone_triangles, contact_markers,
                                                probe_markers, shape_colours, shape_markers)
from ambf_collision.ros.message_template import MessageTemplate

__all__ = ["MarkerBuilder", "build_markers"]


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


def mesh_uri(path: str) -> str:
    """The ``file://`` URI of a mesh file (absolute, percent-encoded) for ``mesh_resource``."""
    return Path(os.path.abspath(path)).as_uri()


def _mesh_markers(world, shapes) -> list:
    """Per shape of ``world`` (WorldShapes) what draws a MESH shape: ``(uri, scale)`` when its
    shape object in ``shapes`` (the shapes in the world's order, or None) names a file, else
    its triangles as points ``(3T, 3)`` in its frame (the shape object's mesh, or the world's
    MeshSet; none when neither is at hand); None for other kinds."""
    out = []
    for k, m in enumerate(np.asarray(world.mesh_id).tolist()):
        shape = shapes[k] if shapes is not None else None
        if m < 0:
            out.append(None)
        elif getattr(shape, "kind", None) == MESH and shape.path:
            out.append((mesh_uri(shape.path), float(shape.scale)))
        else:
            tm = shape.mesh if getattr(shape, "kind", None) == MESH else (
                world.meshes.meshes[m] if world.meshes is not None else None)
            out.append(np.zeros((0, 3)) if tm is None else tm.vertices[tm.faces].reshape(-1, 3))
    return out


def _mesh_groups(meshes, labels) -> np.ndarray:
    """Per shape the first shape with the same label (body) drawing the same mesh file
    (``(uri, scale)`` entries of :func:`_mesh_markers`), else itself."""
    first: dict = {}
    group = np.arange(len(meshes), dtype=np.int64)
    for k, m in enumerate(meshes):
        if isinstance(m, tuple):
            group[k] = first.setdefault((str(labels[k]), m), k)
    return group


def _expect_rows(what: str, a, rows: int) -> None:
    """ValueError unless ``a`` has ``rows`` rows."""
    if len(a) != rows:
        raise ValueError(f"build_markers: {what}: {len(a)} row(s) where the layout has {rows}")


_MARKER_TYPE = {SPHERE: Marker.SPHERE, CAPSULE: Marker.CYLINDER, BOX: Marker.CUBE,
                CYLINDER: Marker.CYLINDER, CONE: Marker.TRIANGLE_LIST, PLANE: Marker.CUBE,
                CONVEX: Marker.TRIANGLE_LIST, MESH: Marker.TRIANGLE_LIST}
_TEMPLATES_KEPT = 64  # layouts (contact sets) kept per model before the cache starts afresh


class _Numbers:
    """The numbers of one MarkerArray layout as views into two flat arrays.

    ``v64`` (float64): shape marker positions ``pos (M,3)``, orientations ``quat (M,4)``
    [x,y,z,w], scales of the markers that are not meshes ``scale (S,3)``, contact points
    ``contact_points (C,3,3)`` (witness point 1, where the arrow starts; the arrow's end; witness
    point 2) and probe centres ``probe_points (P,3)``; ``v32`` (float32): RGB of the shape markers
    ``shape_rgb (M,3)``, of the contacts ``contact_rgb (C,3)`` and of the probes ``probe_rgb
    (P,3)``. Metres, world frame.
    """

    def __init__(self, v64, v32, m: int, s: int, c: int, p: int):
        self.v64, self.v32 = v64, v32
        cut64 = np.cumsum([3 * m, 4 * m, 3 * s, 9 * c])
        self.pos, self.quat, self.scale, self.contact_points, self.probe_points = (
            part.reshape(shape) for part, shape in zip(
                np.split(v64, cut64), ((m, 3), (m, 4), (s, 3), (c, 3, 3), (p, 3))))
        self.shape_rgb, self.contact_rgb, self.probe_rgb = (
            part.reshape(-1, 3) for part in np.split(v32, np.cumsum([3 * m, 3 * c])))

    @classmethod
    def zeros(cls, m: int, s: int, c: int, p: int) -> "_Numbers":
        return cls(np.zeros(3 * m + 4 * m + 3 * s + 9 * c + 3 * p),
                   np.zeros(3 * (m + c + p), np.float32), m, s, c, p)


class MarkerBuilder:
    """Static marker layout of one model; :meth:`build` gives each cycle's serialized array.

    ``kinds (N,)``: shape kind codes; ``shape_labels (N,)``: body name of each shape (marker
    namespace ``shapes/<label>``); ``pairs (P,2)``: shape indices of the checked pairs (to colour
    each shape by its smallest pair distance); ``hulls``: the outward triangles of CONVEX shapes as
    points ``(3T,3)`` in the shape's frame (list of N, None elsewhere; from the ``HullSet``);
    ``cone_half``: the world shapes' ``half`` (N,3), for the cones' radius and height;
    ``meshes``: per shape, for MESH shapes, ``(uri, scale)`` (a MESH_RESOURCE of that file at
    that scale) or triangle points ``(3T,3)`` in the shape's frame (a TRIANGLE_LIST), None
    elsewhere (list of N); ``mesh_group (N,)``: per shape the shape whose marker draws it (itself,
    or the first part of its body's mesh file: its marker is then a DELETE and its distances
    colour that part's marker). Sizes in metres; colours RGBA in [0, 1].

    :meth:`build` serializes a :class:`~ambf_collision.ros.message_template.MessageTemplate` once
    per layout (the world frame, the contacts' namespaces sorted, the probe count) and then only
    writes the cycle's poses, scales, points, colours and stamp into its bytes.
    """

    def __init__(self, kinds, shape_labels, pairs=None, hulls=None, world_frame="world",
                 near=0.05, lifetime=0.25, plane_size=4.0, plane_thickness=0.01,
                 shape_alpha=0.6, plane_alpha=0.3, probe_diameter=0.005, force_full_scale=2.0,
                 arrow_length=0.05, cone_half=None, meshes=None, mesh_group=None):
        self.kinds = np.asarray(kinds, dtype=np.int64).reshape(-1)
        n = len(self.kinds)
        self.labels = [str(s) for s in shape_labels]
        if len(self.labels) != n:
            raise ValueError(f"shape_labels: need one per shape ({n}), got {len(self.labels)}")
        self.group = np.arange(n, dtype=np.int64) if mesh_group is None else \
            np.asarray(mesh_group, dtype=np.int64).reshape(-1)
        # the pairs as they colour the markers: a part's pairs colour its group's marker
        self.pairs = np.zeros((0, 2), dtype=np.int64) if pairs is None else \
            np.ascontiguousarray(self.group[np.asarray(pairs, dtype=np.int64).reshape(-1, 2)])
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
        self._templates: dict = {}  # layout key -> (MessageTemplate, _Numbers)

        # shape markers: the N main markers, then each capsule's cap spheres at a, then at b
        self.caps = np.flatnonzero(self.kinds == CAPSULE)
        self.owner = np.concatenate([np.arange(n), self.caps, self.caps]).astype(np.int64)
        hulls = hulls if hulls is not None else [None] * n
        meshes = meshes if meshes is not None else [None] * n
        per_label: dict[str, int] = {}
        # (ns, id, type, alpha, mesh points or None, (uri, scale) or None, action) per marker
        self._shape_static = []
        for i, k in enumerate(self.owner.tolist()):
            ns = f"shapes/{self.labels[k]}"
            marker_id = per_label.get(ns, 0)
            per_label[ns] = marker_id + 1
            kind = int(self.kinds[k])
            mesh = resource = None
            marker_type = _MARKER_TYPE[kind] if i < n else Marker.SPHERE
            if i < n and kind == MESH and isinstance(meshes[k], tuple):
                resource, marker_type = meshes[k], Marker.MESH_RESOURCE
            elif i < n and kind == MESH:
                mesh = [_pt(p) for p in (meshes[k] if meshes[k] is not None else ())]
            elif i < n and kind == CONE:
                r, h = (cone_half[k][0], 2.0 * cone_half[k][2]) if cone_half is not None \
                    else (0.05, 0.1)
                mesh = [_pt(p) for p in cone_triangles(r, h)]
            elif i < n and kind == CONVEX:
                mesh = [_pt(p) for p in (hulls[k] if hulls[k] is not None else ())]
            drawn = i >= n or self.group[k] == k
            self._shape_static.append((ns, marker_id, marker_type,
                                       float(plane_alpha if kind == PLANE else shape_alpha), mesh,
                                       resource, Marker.ADD if drawn else Marker.DELETE))
        self.scaled = np.array([mesh is None and resource is None
                                for *_, mesh, resource, _ in self._shape_static], dtype=bool)
        # the row of each marker's scale in the cycle's numbers (-1: a mesh, drawn at scale 1,
        # or a mesh resource, at its file's scale)
        self.scale_row = np.where(self.scaled, np.cumsum(self.scaled) - 1, -1).astype(np.int64)

    @classmethod
    def from_world_shapes(cls, world, shape_labels, pairs=None, shapes=None,
                          **kw) -> "MarkerBuilder":
        """Layout from a :class:`~ambf_collision.geometry.world_shapes.WorldShapes` (hulls drawn
        with their ``HullSet`` triangles; meshes as the files named by their shape objects
        ``shapes``, the shapes in the world's order, else with their ``MeshSet`` triangles)."""
        hs = world.hulls
        hulls = [None if h < 0 or world.kind[k] != CONVEX
                 else hs.hull_vertices(h)[hs.hull_triangles(h)].reshape(-1, 3)
                 for k, h in enumerate(np.asarray(world.hull_id).tolist())]
        meshes = _mesh_markers(world, shapes)
        return cls(world.kind, shape_labels, pairs, hulls=hulls, cone_half=np.asarray(world.half),
                   meshes=meshes, mesh_group=_mesh_groups(meshes, shape_labels), **kw)

    def build(self, world, pair_distances=None, contact_info=(), contact_rows=None,
              probe_result=None, stamp=None, world_frame=None, contact_swept=None) -> bytes:
        """The serialized MarkerArray of this cycle (``publisher.publish(bytes)``; rclpy's
        ``deserialize_message(raw, MarkerArray)`` reads it): DELETEALL, shapes, contacts,
        probes (see module doc). ``contact_info`` ``[(body_1, body_2, shape_1, shape_2)]`` and
        ``contact_rows (n, 20 + J)``: the contacts (``model/contact_rows.py``);
        ``contact_swept (n,)`` bool: which are swept (None: none)."""
        frame = world_frame or self.world_frame
        t = _time_msg(stamp)
        # by namespace (closest first within one): the same contacts in another distance order
        # reuse their layout, since a marker's place in the array means nothing to RViz
        named = sorted((f"{who[0]}={who[1]}", k) for k, who in enumerate(contact_info))
        rows = (np.asarray(contact_rows, np.float64)[[k for _, k in named]] if named
                else np.zeros((0, contact_row_width(0))))
        probes = len(getattr(probe_result, "names", ())) if probe_result is not None else 0
        key = (frame, tuple(ns for ns, _ in named), probes)
        entry = self._templates.get(key)
        if entry is None:
            if len(self._templates) >= _TEMPLATES_KEPT:
                self._templates.clear()
            entry = self._templates[key] = self._template(*key)
        template, numbers = entry
        self._cycle_numbers(numbers, world, pair_distances, rows, probe_result)
        if contact_swept is not None and named:
            swept = np.asarray(contact_swept, bool)[[k for _, k in named]]
            numbers.contact_rgb[swept] = SWEPT
        return template.fill(numbers.v64, numbers.v32, t.sec, t.nanosec)

    def _cycle_numbers(self, out: _Numbers, world, pair_distances, rows, pr) -> None:
        """Writes this cycle's numbers into ``out`` (``marker_geometry``'s compiled functions; no
        value is ever NaN) from the pair distances, the contacts' ``rows`` (drawing order) and
        the probe result. ValueError when an array does not match the layout: the kernels index
        without bounds checks."""
        pd = np.ascontiguousarray(pair_distances if pair_distances is not None else [],
                                  dtype=np.float64).reshape(-1)
        _expect_rows("pair_distances", pd, len(self.pairs))
        _expect_rows("world shapes", world.table, len(self.kinds))
        c = contact_columns(rows)
        distance = np.ascontiguousarray(c.distance)
        vectors = np.stack((c.point_1, c.point_2, c.normal), axis=1)  # (n, 3, 3)
        probes = len(out.probe_points)
        position = force = np.empty((0, 3))
        in_contact = np.empty(0, bool)
        if probes:
            position = np.ascontiguousarray(pr.position, np.float64).reshape(-1, 3)
            force = np.ascontiguousarray(pr.force, np.float64).reshape(-1, 3)
            in_contact = np.ascontiguousarray(pr.in_contact, bool).reshape(-1)
            for name, a in (("probe position", position), ("probe force", force),
                            ("probe in_contact", in_contact)):
                _expect_rows(name, a, probes)
        shapes, contact, probe = self._kernel_calls(out, world, pd, distance, vectors, position,
                                                    force, in_contact)
        for kernel, args in (shapes + ((contact,) if len(rows) else ())
                             + ((probe,) if probes else ())):
            kernel(*args)

    def _kernel_calls(self, out: _Numbers, world, pd, distance, vectors, position, force,
                      in_contact) -> tuple:
        """``((shape_colours, shape_markers), contact_markers, probe_markers)`` calls, each
        ``(kernel, arguments)``, writing into ``out``."""
        return (((shape_colours, (self.pairs, pd, self.checked, self.owner, self.near,
                                  self._shape_d, out.shape_rgb)),
                 (shape_markers, (world.table, self.owner, len(self.caps), self.scale_row,
                                  self.plane_size, self.plane_thickness, out.pos, out.quat,
                                  out.scale))),
                (contact_markers, (distance, vectors, self.arrow_length, self.near,
                                   out.contact_points, out.contact_rgb)),
                (probe_markers, (position, force, in_contact, self.force_full_scale,
                                 out.probe_points, out.probe_rgb)))

    def _template(self, frame: str, contact_namespaces: tuple, probes: int):
        """(MessageTemplate, _Numbers) of one layout."""
        m, s, c = len(self.owner), int(self.scaled.sum()), len(contact_namespaces)
        numbers = _Numbers.zeros(m, s, c, probes)

        def array(v64, v32, stamp):
            return self._marker_array(frame, contact_namespaces,
                                      _Numbers(v64, v32, m, s, c, probes), Time(sec=stamp[0],
                                                                                nanosec=stamp[1]))

        return MessageTemplate(array, len(numbers.v64), len(numbers.v32)), numbers

    def _marker_array(self, frame: str, contact_namespaces, nums: _Numbers, stamp: Time):
        """The MarkerArray of one layout with the numbers ``nums`` (for :class:`MessageTemplate`)."""
        def marker(action=Marker.ADD, **kw) -> Marker:
            mk = Marker(action=action, lifetime=self.lifetime, **kw)
            mk.header.stamp, mk.header.frame_id = stamp, frame
            return mk

        deleteall = Marker(action=Marker.DELETEALL)
        deleteall.header.stamp, deleteall.header.frame_id = stamp, frame
        out = [deleteall]
        scales = iter(nums.scale.tolist())
        for (ns, marker_id, kind, alpha, mesh, resource, action), p, q, rgb in zip(
                self._shape_static, nums.pos.tolist(), nums.quat.tolist(), nums.shape_rgb.tolist()):
            mk = marker(action=action, ns=ns, id=marker_id, type=kind)
            mk.pose.position = Point(x=p[0], y=p[1], z=p[2])
            mk.pose.orientation.x, mk.pose.orientation.y, mk.pose.orientation.z, \
                mk.pose.orientation.w = q
            if resource is not None:
                mk.mesh_resource = resource[0]
                mk.scale.x = mk.scale.y = mk.scale.z = resource[1]
            elif mesh is None:
                mk.scale.x, mk.scale.y, mk.scale.z = next(scales)
            else:
                mk.scale.x = mk.scale.y = mk.scale.z = 1.0
                mk.points = mesh
            mk.color = ColorRGBA(r=rgb[0], g=rgb[1], b=rgb[2], a=alpha)
            out.append(mk)
        count: dict = {}
        for ns, pts, rgb in zip(contact_namespaces, nums.contact_points.tolist(),
                                nums.contact_rgb.tolist()):
            k = count.get(ns, 0)
            count[ns] = k + 1
            arrow = marker(ns=ns, id=2 * k, type=Marker.ARROW)
            arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.004, 0.008, 0.012
            arrow.points = [_pt(pts[0]), _pt(pts[1])]
            witness = marker(ns=ns, id=2 * k + 1, type=Marker.SPHERE_LIST)
            witness.scale.x = witness.scale.y = witness.scale.z = 0.01
            witness.points = [_pt(pts[0]), _pt(pts[2])]
            for mk in (arrow, witness):
                mk.pose.orientation.w = 1.0
                mk.color = ColorRGBA(r=rgb[0], g=rgb[1], b=rgb[2], a=1.0)
            out += [arrow, witness]
        if len(nums.probe_points):  # one SPHERE_LIST of all probe centres, coloured by force
            mk = marker(ns="probes", id=0, type=Marker.SPHERE_LIST)
            mk.pose.orientation.w = 1.0
            mk.scale.x = mk.scale.y = mk.scale.z = self.probe_diameter
            mk.color.a = 1.0
            mk.points = [_pt(p) for p in nums.probe_points.tolist()]
            mk.colors = [ColorRGBA(r=r, g=g, b=b, a=1.0) for r, g, b in nums.probe_rgb.tolist()]
            out.append(mk)
        return MarkerArray(markers=out)


# -- convenience entry point for the node --------------------------------------------------------


def _model_scene(model, result, data, world=None):
    """(world shapes, pairs, pair distances) of a model's evaluation."""
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
    pairs = getattr(model, "pairs", None)
    if pairs is None and hasattr(model, "pair_distance"):
        pairs = model.pair_distance.pairs
    return world, pairs, getattr(result, "distances", None)


def _shape_labels(model) -> list:
    """The body name of each shape (the markers' namespaces): ``shape_body_names``, or from
    ``body_names`` and ``shape_body``. Once per layout, not per cycle."""
    labels = getattr(model, "shape_body_names", None)
    if labels is None:
        body_names = list(getattr(model, "body_names"))
        labels = [body_names[int(i)] for i in getattr(model, "shape_body")]
    return labels


def build_markers(model, result, probe_result, world_frame, stamp, *, data=None, world=None,
                  near=0.05, lifetime=0.25, cache=None, contacts=None, **kw) -> bytes:
    """The serialized MarkerArray of a model's evaluation ``result`` (and ``probe_result``, may
    be None); ``deserialize_message(raw, MarkerArray)`` reads it, a publisher sends it raw.

    Uses from ``model``: ``shape_body_names`` (or ``body_names`` + ``shape_body``), ``pairs``
    (P,2) shape indices and ``shapes`` (the shape objects: the files of its meshes, if any); from ``result``: ``distances (P,)``, ``contact_info`` and
    ``contact_rows`` (``model/contact_rows.py``), and the world shapes
    as ``result.world`` (or ``data.world``, or ``world=``). ``stamp``: builtin_interfaces/Time,
    rclpy Time or seconds. ``near`` (m): distance below which shapes turn orange/yellow (the
    node's ``report_distance``). ``cache``: the caller's dict (a node keeps one); the static
    layout is then compiled once per model and reused (without: built on every call).
    ``contacts``: ``(contact_info, contact_rows, contact_swept)`` drawn instead of the result's
    (a monitor output's, with its swept contacts).
    """
    w, pairs, distances = _model_scene(model, result, data, world)
    cache = {} if cache is None else cache
    if cache.get("model") is not model:
        cache["model"], cache["builder"] = model, MarkerBuilder.from_world_shapes(
            w, _shape_labels(model), pairs, shapes=getattr(model, "shapes", None),
            world_frame=world_frame, near=near,
            lifetime=lifetime, **kw)
    builder = cache["builder"]
    builder.near = float(near)
    info, rows, swept = contacts if contacts is not None else (
        getattr(result, "contact_info", ()), getattr(result, "contact_rows", None), None)
    return builder.build(w, distances, info, rows, probe_result, stamp, world_frame, swept)
