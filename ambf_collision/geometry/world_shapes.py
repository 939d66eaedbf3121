"""Shapes as a record table: the layout every compiled kernel reads.

:class:`WorldShapes` holds N shapes in one frame (metres) as one record table of
:data:`SHAPE_DTYPE` (``world.table``), each field also an attribute (a view):

* ``kind (N,) int64``: ``SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX, MESH``
  (``shapes.py``)
* ``a (N,3)``, ``b (N,3)``: sphere centre (``a == b``); capsule segment ends; solid centre
  (``a == b``); plane: the point ``offset * normal``
* ``radius (N,)``: sphere, capsule, cylinder and cone radius; 0 otherwise
* ``rot (N,3,3)``: frame-from-local rotation of solids (identity for sphere, capsule, plane)
* ``half (N,3)``: box half extents; cylinder and cone ``(r, r, height/2)``; 0 otherwise
* ``normal (N,3)``, ``offset (N,)``: plane, solid where ``normal . x < offset``; 0 otherwise
* ``hull_id (N,) int64``: index into the :class:`~ambf_collision.geometry.hulls.HullSet` of
  CONVEX shapes (vertices in the shape's local frame), and of the convex hull of each MESH
  (what planes and bounds see of it: the lowest point of a mesh along a direction is a hull
  vertex), -1 for other kinds
* ``mesh_id (N,) int64``: index into the :class:`~ambf_collision.geometry.mesh_set.MeshSet` of
  MESH shapes (triangles in the shape's local frame), -1 for other kinds

Inside compiled code these fields travel as the :class:`World` NamedTuple: an entry point
takes the table and builds it with :func:`world_of` (one argument; every caller then hands the
kernels the same array types, so each kernel is compiled once).

:class:`ShapeRow` is one shape as plain values (:func:`shape_row`): what per-pair and per-point
kernels take, since numba reference-counts every array passed to a function.

:class:`LinkShapes` (constant, part of a Model) holds the same table with each shape in the
frame of its body (``frame_index``); :func:`to_world` moves them all by the bodies' world
poses into a :class:`WorldShapes` that the caller owns (one per Data). In a compiled caller:
``to_world(Link(world_of(local_table), frame_index), body_R, body_t, world_of(world_table), moved)``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.hulls import Hulls, HullSet
from ambf_collision.geometry.mesh_set import MeshSet
from ambf_collision.geometry.shapes import (BOX, CAPSULE, CONE, CONVEX, CYLINDER, MESH, PLANE, SPHERE,
                                            Box, Capsule, Cone, ConvexHull, Cylinder, Mesh, Plane,
                                            ShapeError, Sphere)
from ambf_collision.geometry.transforms import matrix_to_quat

__all__ = ["SHAPE_DTYPE", "World", "WorldShapes", "Link", "LinkShapes", "ShapeRow", "world_of",
           "make_world", "shape_row",
           "to_world", "shape_at", "hull_arrays", "make_hulls", "no_hulls", "local_point", "local_vector",
           "world_point", "world_vector"]


SHAPE_DTYPE = np.dtype([
    ("kind", np.int64),           # shape kind code (shapes.py)
    ("a", np.float64, (3,)),      # m: sphere centre, capsule end a, solid centre, plane point
    ("b", np.float64, (3,)),      # m: capsule end b (= a for the other kinds)
    ("radius", np.float64),       # m: sphere, capsule, cylinder, cone radius; 0 otherwise
    ("rot", np.float64, (3, 3)),  # frame-from-local rotation (identity: sphere, capsule, plane)
    ("half", np.float64, (3,)),   # m: box half extents; cylinder, cone (r, r, h/2)
    ("normal", np.float64, (3,)),  # plane: unit normal (solid where normal . x < offset)
    ("offset", np.float64),       # m: plane offset
    ("hull_id", np.int64),        # CONVEX, MESH: hull index in the HullSet; -1 otherwise
    ("mesh_id", np.int64),        # MESH: mesh index in the MeshSet; -1 otherwise
], align=True)
"""One shape per row (module docstring: what each field holds for each kind)."""


class World(NamedTuple):
    """The fields of a :data:`SHAPE_DTYPE` table, as compiled code reads them (see the module)."""

    kind: np.ndarray
    a: np.ndarray
    b: np.ndarray
    radius: np.ndarray
    rot: np.ndarray
    half: np.ndarray
    normal: np.ndarray
    offset: np.ndarray
    hull_id: np.ndarray
    mesh_id: np.ndarray


@njit(cache=True, error_model="numpy", inline="always")
def world_of(table):
    """:class:`World` of a :data:`SHAPE_DTYPE` table's fields (inside compiled entry points)."""
    return World(table.kind, table.a, table.b, table.radius, table.rot, table.half, table.normal,
                 table.offset, table.hull_id, table.mesh_id)


@njit(cache=True, error_model="numpy")
def make_world(kind, a, b, radius, rot, half, normal, offset, hull_id, mesh_id):
    """:class:`World` of the arrays (inside compiled entry points)."""
    return World(kind, a, b, radius, rot, half, normal, offset, hull_id, mesh_id)


class ShapeRow(NamedTuple):
    """One shape of a :class:`World` as plain values (the kernels' argument): ``kind`` (int),
    ``a``, ``b``, ``half``, ``normal`` (3-tuples), ``radius``, ``offset`` (floats), ``rot`` (3
    row 3-tuples: ``rot[i][j]``), ``hull_id`` (int). Values, not arrays: passing one costs no
    reference counting, so kernels on rows can be called per pair at no overhead."""

    kind: int
    a: tuple
    b: tuple
    radius: float
    rot: tuple
    half: tuple
    normal: tuple
    offset: float
    hull_id: int


@njit(cache=True, error_model="numpy", inline="always")
def shape_row(W, k):
    """Shape ``k`` of ``W`` as a :class:`ShapeRow`."""
    return ShapeRow(W.kind[k], (W.a[k, 0], W.a[k, 1], W.a[k, 2]), (W.b[k, 0], W.b[k, 1], W.b[k, 2]),
                    W.radius[k],
                    ((W.rot[k, 0, 0], W.rot[k, 0, 1], W.rot[k, 0, 2]),
                     (W.rot[k, 1, 0], W.rot[k, 1, 1], W.rot[k, 1, 2]),
                     (W.rot[k, 2, 0], W.rot[k, 2, 1], W.rot[k, 2, 2])),
                    (W.half[k, 0], W.half[k, 1], W.half[k, 2]),
                    (W.normal[k, 0], W.normal[k, 1], W.normal[k, 2]), W.offset[k], W.hull_id[k])


@njit(cache=True, error_model="numpy")
def local_point(s, x):
    """World point ``x`` (3-tuple) in the local frame of shape row ``s``: ``rot^T (x - a)``."""
    R = s.rot
    p0, p1, p2 = x[0] - s.a[0], x[1] - s.a[1], x[2] - s.a[2]
    return (R[0][0] * p0 + R[1][0] * p1 + R[2][0] * p2, R[0][1] * p0 + R[1][1] * p1 + R[2][1] * p2,
            R[0][2] * p0 + R[1][2] * p1 + R[2][2] * p2)


@njit(cache=True, error_model="numpy")
def local_vector(s, v):
    """World vector ``v`` (3-tuple) in the local frame of shape row ``s``: ``rot^T v``."""
    R = s.rot
    return (R[0][0] * v[0] + R[1][0] * v[1] + R[2][0] * v[2],
            R[0][1] * v[0] + R[1][1] * v[1] + R[2][1] * v[2],
            R[0][2] * v[0] + R[1][2] * v[1] + R[2][2] * v[2])


@njit(cache=True, error_model="numpy")
def world_vector(s, v):
    """Local vector ``v`` of shape row ``s`` in the world frame: ``rot v``."""
    R = s.rot
    return (R[0][0] * v[0] + R[0][1] * v[1] + R[0][2] * v[2],
            R[1][0] * v[0] + R[1][1] * v[1] + R[1][2] * v[2],
            R[2][0] * v[0] + R[2][1] * v[1] + R[2][2] * v[2])


@njit(cache=True, error_model="numpy")
def world_point(s, x):
    """Local point ``x`` of shape row ``s`` in the world frame: ``rot x + a``."""
    v = world_vector(s, x)
    return v[0] + s.a[0], v[1] + s.a[1], v[2] + s.a[2]


class WorldShapes:
    """N shapes in one frame as a :data:`SHAPE_DTYPE` table (see the module docstring);
    ``hulls`` is the constant :class:`~ambf_collision.geometry.hulls.HullSet` that ``hull_id``
    points into (None when there is no CONVEX shape). ``table``: an existing table to wrap
    (e.g. a view into a Data buffer); by default a new one (rotations identity, no hull)."""

    __slots__ = ("table", "kind", "a", "b", "radius", "rot", "half", "normal", "offset",
                 "hull_id", "mesh_id", "hulls", "meshes")

    def __init__(self, n: int, hulls=None, table=None, meshes=None):
        if table is None:
            table = np.zeros(n, dtype=SHAPE_DTYPE)
            table["rot"] = np.eye(3)
            table["hull_id"] = -1
            table["mesh_id"] = -1
        self.table = table
        for name in World._fields:
            setattr(self, name, table[name])
        self.hulls = hulls
        self.meshes = meshes

    def __len__(self) -> int:
        return len(self.table)

    def arrays(self) -> tuple:
        """The nine field views in :class:`World` order."""
        return (self.kind, self.a, self.b, self.radius, self.rot, self.half, self.normal,
                self.offset, self.hull_id, self.mesh_id)

    def copy(self) -> "WorldShapes":
        """An independent, writable copy (the HullSet, constant, is shared)."""
        return WorldShapes(len(self), self.hulls, self.table.copy(), self.meshes)

    @classmethod
    def from_shapes(cls, shapes) -> "WorldShapes":
        """Arrays of the given shape objects, taken in their own coordinates; the CONVEX
        shapes' vertices and the MESH shapes' vertices go into a new HullSet (``hull_id`` in
        order of appearance), the MESH shapes' triangles into a new MeshSet (``mesh_id``)."""
        shapes = list(shapes)
        w = cls(len(shapes))
        clouds, meshes = [], []
        for k, s in enumerate(shapes):
            kind = getattr(s, "kind", None)
            if kind not in (SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX, MESH):
                raise ShapeError(f"shapes[{k}]: not a shape of ambf_collision.geometry.shapes: {s!r}")
            try:
                s.validate()
            except ShapeError as err:
                raise ShapeError(f"shapes[{k}].{err}") from None
            w.kind[k] = kind
            if kind == SPHERE:
                w.a[k] = w.b[k] = s.center
                w.radius[k] = s.radius
            elif kind == CAPSULE:
                w.a[k], w.b[k] = s.a, s.b
                w.radius[k] = s.radius
            elif kind == PLANE:
                w.normal[k] = s.normal
                w.offset[k] = s.offset
                w.a[k] = w.b[k] = s.offset * s.normal
            else:
                w.a[k] = w.b[k] = s.position
                w.rot[k] = s.rotation
                if kind == BOX:
                    w.half[k] = 0.5 * s.size
                elif kind == CONVEX:
                    w.hull_id[k] = len(clouds)
                    clouds.append(s.vertices)
                elif kind == MESH:
                    w.hull_id[k] = len(clouds)
                    clouds.append(s.mesh.vertices)
                    w.mesh_id[k] = len(meshes)
                    meshes.append(s.mesh)
                else:
                    w.half[k] = (s.radius, s.radius, 0.5 * s.height)
                    w.radius[k] = s.radius
        if clouds:
            w.hulls = HullSet.from_clouds(clouds)
        if meshes:
            w.meshes = MeshSet(meshes)
        return w


def shape_at(world: WorldShapes, hulls=None, k: int = 0):
    """Shape object of item ``k`` of ``world`` in the world's frame (``hulls``: the HullSet of
    ``hull_id``, by default ``world.hulls``)."""
    k = int(k)
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
    if kind in (CYLINDER, CONE):
        cls = Cylinder if kind == CYLINDER else Cone
        return cls(float(world.half[k, 0]), 2.0 * float(world.half[k, 2]), p, q)
    if kind == CONVEX:
        hs = world.hulls if hulls is None else hulls
        return ConvexHull(hs.hull_vertices(int(world.hull_id[k])).copy(), p, q)
    if kind == MESH:
        return Mesh(world.meshes.meshes[int(world.mesh_id[k])], p, q)
    raise ShapeError(f"shapes[{k}]: unknown kind {kind!r}")


# ----------------------------------------------------------------------------------- hull arrays

def no_hulls() -> Hulls:
    """Empty hull arrays, for a world without CONVEX shapes: read-only like a HullSet's, so that
    the kernels see the same array types with and without hulls (one compilation)."""
    z = np.zeros((0, 3))
    start = np.zeros(1, dtype=np.int64)
    h = Hulls(z, start, z, np.zeros(0), start, z, np.zeros(0), start, np.zeros(0, np.int64))
    for x in h:
        x.flags.writeable = False
    return h


def hull_arrays(hulls) -> Hulls:
    """The ``Hulls`` arrays of a HullSet (:func:`no_hulls` for None), in the order
    :func:`make_hulls` takes them."""
    return no_hulls() if hulls is None else hulls.arrays()


@njit(cache=True, error_model="numpy")
def make_hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
               bound_radius, neighbor_start, neighbors):
    """The ``Hulls`` NamedTuple of its arrays (inside compiled entry points)."""
    return Hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
                 bound_radius, neighbor_start, neighbors)


# ----------------------------------------------------------------------------------- link shapes

class Link(NamedTuple):
    """:class:`LinkShapes` as compiled code reads it: the shapes in their bodies' frames and
    the body of each (``frame_index (N,) int64``)."""

    local: World
    frame_index: np.ndarray


@njit(cache=True, error_model="numpy", inline="always")
def to_world(link, body_R, body_t, out, moved):
    """Move every shape of ``link`` (:class:`Link`) by its body's world pose ``body_R (B,3,3)``,
    ``body_t (B,3)`` (``x_world = R x_body + t``, metres) into ``out`` (:class:`World`, whose
    ``kind``, ``radius``, ``half`` and ``hull_id`` are already those of ``link.local``).
    ``moved (N,)`` (bool or int): 1 where a value written differs from the one it replaced (NaN
    differs from everything), else 0: shape ``k`` is then bit for bit where it was."""
    L = link.local
    for k in range(L.kind.shape[0]):
        f = link.frame_index[k]
        kind = L.kind[k]
        changed = False
        for i in range(3):
            R0, R1, R2, t = body_R[f, i, 0], body_R[f, i, 1], body_R[f, i, 2], body_t[f, i]
            if kind == PLANE:   # its a and b follow from normal and offset, below
                n = R0 * L.normal[k, 0] + R1 * L.normal[k, 1] + R2 * L.normal[k, 2]
                changed = changed or not n == out.normal[k, i]
                out.normal[k, i] = n
                continue
            a = R0 * L.a[k, 0] + R1 * L.a[k, 1] + R2 * L.a[k, 2] + t
            b = R0 * L.b[k, 0] + R1 * L.b[k, 1] + R2 * L.b[k, 2] + t
            changed = changed or not (a == out.a[k, i] and b == out.b[k, i])
            out.a[k, i], out.b[k, i] = a, b
            if kind != SPHERE and kind != CAPSULE:
                for j in range(3):
                    r = R0 * L.rot[k, 0, j] + R1 * L.rot[k, 1, j] + R2 * L.rot[k, 2, j]
                    changed = changed or not r == out.rot[k, i, j]
                    out.rot[k, i, j] = r
        if kind == PLANE:   # offset and the point offset * normal in the world frame
            off = L.offset[k]
            for i in range(3):
                off += out.normal[k, i] * body_t[f, i]
            changed = changed or not off == out.offset[k]
            out.offset[k] = off
            for i in range(3):
                out.a[k, i] = off * out.normal[k, i]
                out.b[k, i] = out.a[k, i]
        moved[k] = changed


@njit(cache=True, error_model="numpy")
def _to_world_entry(local, frame_index, body_R, body_t, out):
    to_world(Link(world_of(local), frame_index), body_R, body_t, world_of(out),
             np.empty(local.shape[0], np.int64))


class LinkShapes:
    """N shapes, shape ``k`` given in the frame of body ``frame_index[k]`` (constant after
    construction).

    ``local``: the shapes' arrays in their body frames (:class:`WorldShapes`);
    ``frame_index (N,) int64``; ``hulls``: the HullSet of the CONVEX and MESH shapes (or None);
    ``meshes``: the MeshSet of the MESH shapes (or None).
    """

    def __init__(self, shapes, frame_index):
        self.local = WorldShapes.from_shapes(shapes)
        n = len(self.local)
        fi = np.asarray(frame_index)
        if fi.ndim != 1 or fi.shape[0] != n or (n and not np.issubdtype(fi.dtype, np.integer)):
            raise ShapeError(f"frame_index: must hold one integer per shape ({n}), got "
                             f"{fi.tolist()!r}")
        if n and fi.min() < 0:
            raise ShapeError(f"frame_index: must be >= 0, got {int(fi.min())}")
        self.frame_index = np.ascontiguousarray(fi, dtype=np.int64)
        self.hulls, self.meshes = self.local.hulls, self.local.meshes
        self.local.table.flags.writeable = False
        self.local = WorldShapes(n, self.hulls, self.local.table, self.meshes)  # read-only views
        self.frame_index.flags.writeable = False

    def __len__(self) -> int:
        return len(self.local)

    @property
    def kind(self) -> np.ndarray:
        return self.local.kind

    def arrays(self) -> tuple:
        """The local arrays in :class:`World` order, then ``frame_index``."""
        return self.local.arrays() + (self.frame_index,)

    def new_world(self) -> WorldShapes:
        """A world buffer for these shapes (its constant fields filled; one per Data)."""
        return self.local.copy()

    def to_world(self, body_R, body_t, out: WorldShapes | None = None) -> WorldShapes:
        """All shapes moved by their bodies' poses ``body_R (B,3,3)``, ``body_t (B,3)`` (world
        from body, metres), written into ``out`` (a :meth:`new_world`; a new one when None)."""
        R = np.ascontiguousarray(body_R, dtype=np.float64)
        t = np.ascontiguousarray(body_t, dtype=np.float64)
        if R.ndim != 3 or R.shape[1:] != (3, 3) or t.shape != (R.shape[0], 3):
            raise ValueError(f"to_world: expected body_R (B,3,3) and body_t (B,3), got "
                             f"{R.shape} and {t.shape}")
        if len(self) and int(self.frame_index.max()) >= R.shape[0]:
            raise ValueError(f"to_world: frame index {int(self.frame_index.max())} out of range "
                             f"for {R.shape[0]} body poses")
        if out is None:
            out = self.new_world()
        elif len(out) != len(self):
            raise ValueError(f"to_world: out holds {len(out)} shapes, expected {len(self)}")
        _to_world_entry(self.local.table, self.frame_index, R, t, out.table)
        return out

