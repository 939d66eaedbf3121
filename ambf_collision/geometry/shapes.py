"""Collision shape dataclasses, their validation and their JSON form.

All coordinates in metres. Orientations are quaternions ``[x, y, z, w]``
(normalised on construction). A solid's ``position``/``orientation`` place its
local frame in the frame the shape is given in (world or a body frame).

Kind codes (``Shape.kind``): SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX, MESH = 0..7.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ambf_collision.geometry.meshes import MeshError, read_mesh
from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix
from ambf_collision.geometry.trimesh import TriangleMesh

__all__ = [
    "SPHERE", "CAPSULE", "BOX", "CYLINDER", "CONE", "PLANE", "CONVEX", "MESH",
    "KIND_NAMES", "ShapeError",
    "Sphere", "Capsule", "Box", "Cylinder", "Cone", "Plane", "ConvexHull", "Mesh",
    "shape_from_json", "shape_to_json",
]

SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX, MESH = range(8)
KIND_NAMES = ("sphere", "capsule", "box", "cylinder", "cone", "plane", "convex", "mesh")
_IDENTITY_Q = (0.0, 0.0, 0.0, 1.0)


class ShapeError(ValueError):
    """Invalid shape data; the message names the field and the offending value."""


def _fmt(value) -> str:
    try:
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0:
            return repr(float(arr))
        return repr(arr.tolist())
    except (TypeError, ValueError):
        return repr(value)


def _vector(value, name: str, length: int) -> np.ndarray:
    """A finite float64 vector of ``length`` items, or ShapeError naming ``name``."""
    if isinstance(value, (str, bytes, dict)):
        raise ShapeError(f"{name}: must be a list of {length} numbers, got {value!r}")
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ShapeError(f"{name}: must be a list of {length} numbers, got {value!r}") from None
    if arr.shape != (length,):
        raise ShapeError(f"{name}: must be a list of {length} numbers, got {_fmt(value)}")
    if not np.all(np.isfinite(arr)):
        raise ShapeError(f"{name}: must be finite, got {_fmt(arr)}")
    return arr


def _scalar(value, name: str, nonneg: bool = True) -> float:
    """A finite float (>= 0 when ``nonneg``), or ShapeError naming ``name``."""
    if isinstance(value, (bool, str, bytes)) or value is None:
        raise ShapeError(f"{name}: must be a number, got {value!r}")
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ShapeError(f"{name}: must be a number, got {value!r}") from None
    if not math.isfinite(x):
        raise ShapeError(f"{name}: must be finite, got {x!r}")
    if nonneg and x < 0.0:
        raise ShapeError(f"{name}: must be >= 0, got {x!r}")
    return x


def _quaternion(value, name: str) -> np.ndarray:
    q = _vector(value, name, 4)
    n = float(np.linalg.norm(q))
    if n == 0.0:
        raise ShapeError(f"{name}: quaternion must be non-zero, got {_fmt(q)}")
    # Normalise once: a quaternion already unit to rounding is kept as it is, so that
    # validate() is idempotent (re-dividing by a norm of 1 +- ulp would move it by an ulp).
    return q if abs(n - 1.0) <= 8 * np.finfo(float).eps else q / n


class _Shape:
    kind: int = -1

    def __post_init__(self):
        self.validate()

    @property
    def name(self) -> str:
        return KIND_NAMES[self.kind]


@dataclass(eq=False)
class Sphere(_Shape):
    """Sphere of ``radius`` (m) about ``center`` (m)."""

    center: np.ndarray
    radius: float
    kind = SPHERE

    def validate(self) -> "Sphere":
        self.center = _vector(self.center, "sphere.center", 3)
        self.radius = _scalar(self.radius, "sphere.radius")
        return self

    def transformed(self, R, t) -> "Sphere":
        """This sphere moved by the rigid transform ``x -> R x + t``."""
        R, t = np.asarray(R, float), np.asarray(t, float)
        return Sphere(R @ self.center + t, self.radius)


@dataclass(eq=False)
class Capsule(_Shape):
    """Sphere of ``radius`` (m) swept along segment ``a``-``b`` (m); ``a == b`` is a sphere."""

    a: np.ndarray
    b: np.ndarray
    radius: float
    kind = CAPSULE

    def validate(self) -> "Capsule":
        self.a = _vector(self.a, "capsule.a", 3)
        self.b = _vector(self.b, "capsule.b", 3)
        self.radius = _scalar(self.radius, "capsule.radius")
        return self

    def transformed(self, R, t) -> "Capsule":
        R, t = np.asarray(R, float), np.asarray(t, float)
        return Capsule(R @ self.a + t, R @ self.b + t, self.radius)


class _Posed(_Shape):
    """Solid with a local frame: ``position`` (m) and ``orientation`` [x,y,z,w]."""

    @property
    def rotation(self) -> np.ndarray:
        """World-from-local rotation matrix (3, 3)."""
        return quat_to_matrix(self.orientation)

    def _validate_pose(self):
        self.position = _vector(self.position, f"{self.name}.position", 3)
        self.orientation = _quaternion(self.orientation, f"{self.name}.orientation")

    def _moved_pose(self, R, t):
        R, t = np.asarray(R, float), np.asarray(t, float)
        return R @ self.position + t, matrix_to_quat(R @ self.rotation)


@dataclass(eq=False)
class Box(_Posed):
    """Box of full extents ``size`` (m) centred at ``position``."""

    size: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array(_IDENTITY_Q))
    kind = BOX

    def validate(self) -> "Box":
        self.size = _vector(self.size, "box.size", 3)
        if np.any(self.size < 0.0):
            raise ShapeError(f"box.size: must be >= 0, got {_fmt(self.size)}")
        self._validate_pose()
        return self

    def transformed(self, R, t) -> "Box":
        p, q = self._moved_pose(R, t)
        return Box(self.size.copy(), p, q)


@dataclass(eq=False)
class Cylinder(_Posed):
    """Cylinder of ``radius`` and full ``height`` (m) along local z, centred at ``position``."""

    radius: float
    height: float
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array(_IDENTITY_Q))
    kind = CYLINDER

    def validate(self):
        self.radius = _scalar(self.radius, f"{self.name}.radius")
        self.height = _scalar(self.height, f"{self.name}.height")
        self._validate_pose()
        return self

    def transformed(self, R, t):
        p, q = self._moved_pose(R, t)
        return type(self)(self.radius, self.height, p, q)


@dataclass(eq=False)
class Cone(Cylinder):
    """Cone of base ``radius`` and ``height`` (m) along local z, centred at ``position``:
    base disc at z = -height/2, apex at z = +height/2 (as Bullet and coal)."""

    kind = CONE


@dataclass(eq=False)
class Plane(_Shape):
    """Half-space ``normal . x < offset`` (solid side); ``normal`` is normalised here."""

    normal: np.ndarray
    offset: float
    kind = PLANE

    def validate(self) -> "Plane":
        n = _vector(self.normal, "plane.normal", 3)
        length = float(np.linalg.norm(n))
        if length == 0.0:
            raise ShapeError(f"plane.normal: must be non-zero, got {_fmt(n)}")
        self.normal = n / length
        self.offset = _scalar(self.offset, "plane.offset", nonneg=False)
        return self

    def transformed(self, R, t) -> "Plane":
        n = np.asarray(R, float) @ self.normal
        return Plane(n, self.offset + float(n @ np.asarray(t, float)))


@dataclass(eq=False)
class ConvexHull(_Posed):
    """Convex hull of ``vertices`` (M, 3) given in the local frame (m)."""

    vertices: np.ndarray
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array(_IDENTITY_Q))
    kind = CONVEX

    def validate(self) -> "ConvexHull":
        try:
            v = np.array(self.vertices, dtype=np.float64)
        except (TypeError, ValueError):
            raise ShapeError(f"convex.vertices: must be a list of [x, y, z], got {self.vertices!r}") from None
        if v.ndim != 2 or v.shape[1] != 3 or v.shape[0] < 1:
            raise ShapeError(f"convex.vertices: must be a non-empty list of [x, y, z], got shape {v.shape}")
        bad = np.flatnonzero(~np.all(np.isfinite(v), axis=1))
        if bad.size:
            raise ShapeError(f"convex.vertices[{bad[0]}]: must be finite, got {_fmt(v[bad[0]])}")
        self.vertices = v
        self._validate_pose()
        return self

    def transformed(self, R, t) -> "ConvexHull":
        p, q = self._moved_pose(R, t)
        return ConvexHull(self.vertices.copy(), p, q)


@dataclass(eq=False)
class Mesh(_Posed):
    """A triangle mesh, concave in general: ``mesh`` a prepared
    :class:`~ambf_collision.geometry.trimesh.TriangleMesh` in the local frame (m; closed meshes
    have an inside and signed distances, open ones unsigned). ``path`` and ``scale``: the file
    it was read from and the factor applied to its coordinates (for markers; "" and 1 when built
    from arrays); ``part``: which solid of the file this is when the file's interpenetrating
    shells were split (:mod:`~ambf_collision.geometry.mesh_parts`; markers draw the file once,
    with part 0)."""

    mesh: TriangleMesh
    position: np.ndarray = field(default_factory=lambda: np.zeros(3))
    orientation: np.ndarray = field(default_factory=lambda: np.array(_IDENTITY_Q))
    path: str = ""
    scale: float = 1.0
    part: int = 0
    kind = MESH

    def validate(self) -> "Mesh":
        if not isinstance(self.mesh, TriangleMesh):
            raise ShapeError(f"mesh.mesh: must be a TriangleMesh, got {type(self.mesh).__name__}")
        self.scale = _scalar(self.scale, "mesh.scale")
        self._validate_pose()
        return self

    @property
    def vertices(self) -> np.ndarray:
        """The mesh's distinct vertices (N, 3) in the local frame (m)."""
        return self.mesh.vertices

    def transformed(self, R, t) -> "Mesh":
        p, q = self._moved_pose(R, t)
        return Mesh(self.mesh, p, q, self.path, self.scale, self.part)


def _mesh_from_json(body: dict, where: str) -> "Mesh":
    """``{"file": path, "scale": s}`` or ``{"vertices": [[x, y, z], ...], "triangles": [[i, j,
    k], ...]}``, each with an optional ``position`` and ``orientation``."""
    has_file = "file" in body
    if has_file == ("vertices" in body or "triangles" in body):
        raise ShapeError(f"{where}.mesh: give either 'file' or 'vertices' and 'triangles'")
    pose = {k: body[k] for k in ("position", "orientation") if k in body}
    scale = 1.0
    try:
        if has_file:
            scale = _scalar(body.get("scale", 1.0), f"{where}.mesh.scale")
            V, F = read_mesh(body["file"])
            V = V * scale
        else:
            for key in ("vertices", "triangles"):
                if key not in body:
                    raise ShapeError(f"{where}.mesh.{key}: missing")
            V = _finite_rows(body["vertices"], f"{where}.mesh.vertices", float)
            F = _finite_rows(body["triangles"], f"{where}.mesh.triangles", np.int64)
            if F.size and (F.min() < 0 or F.max() >= len(V)):
                raise ShapeError(f"{where}.mesh.triangles: vertex index out of range 0..{len(V) - 1}")
        mesh = TriangleMesh.build(V, F)
    except (MeshError, ValueError) as err:
        if isinstance(err, ShapeError):
            raise
        raise ShapeError(f"{where}.mesh: {err}") from None
    return Mesh(mesh, path=str(body.get("file", "")), scale=scale, **pose)


def _finite_rows(value, name: str, dtype) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ShapeError(f"{name}: must be a list of rows of 3 numbers") from None
    if arr.ndim != 2 or arr.shape[1] != 3 or arr.shape[0] < 1 or not np.all(np.isfinite(arr)):
        raise ShapeError(f"{name}: must be a non-empty list of rows of 3 finite numbers, got shape "
                         f"{arr.shape}")
    if dtype is not float and np.any(arr != np.round(arr)):
        raise ShapeError(f"{name}: must hold integer vertex indices")
    return arr.astype(dtype)


_FIELDS = {
    "sphere": (("center", "radius"), ()),
    "capsule": (("a", "b", "radius"), ()),
    "box": (("size",), ("position", "orientation")),
    "cylinder": (("radius", "height"), ("position", "orientation")),
    "cone": (("radius", "height"), ("position", "orientation")),
    "plane": (("normal", "offset"), ()),
    "convex": (("vertices",), ("position", "orientation")),
    "mesh": ((), ("file", "scale", "vertices", "triangles", "position", "orientation")),
}
_CLASSES = {"sphere": Sphere, "capsule": Capsule, "box": Box, "cylinder": Cylinder,
            "cone": Cone, "plane": Plane, "convex": ConvexHull}


def shape_from_json(obj, index=None):
    """Shape from its JSON form, e.g. ``{"capsule": {"a": [..], "b": [..], "radius": r}}``.

    Errors are ShapeError naming the shape index and field, e.g.
    ``shapes[3].capsule.radius: must be >= 0, got -1.0``.
    """
    where = "shape" if index is None else f"shapes[{index}]"
    if not isinstance(obj, dict) or len(obj) != 1:
        raise ShapeError(f"{where}: must be an object with exactly one key of "
                         f"{sorted(_FIELDS)}, got {obj!r}")
    (tag, body), = obj.items()
    if tag not in _FIELDS:
        raise ShapeError(f"{where}: unknown shape type {tag!r} (expected one of {sorted(_FIELDS)})")
    if not isinstance(body, dict):
        raise ShapeError(f"{where}.{tag}: must be an object, got {body!r}")
    required, optional = _FIELDS[tag]
    for key in body:
        if key not in required and key not in optional:
            raise ShapeError(f"{where}.{tag}.{key}: unknown field (expected {list(required + optional)})")
    for key in required:
        if key not in body:
            raise ShapeError(f"{where}.{tag}.{key}: missing")
    if tag == "mesh":
        return _mesh_from_json(body, where)
    try:
        return _CLASSES[tag](**body)
    except ShapeError as err:
        raise ShapeError(f"{where}.{err}") from None


def shape_to_json(shape) -> dict:
    """JSON form of a shape (plain lists and floats), the inverse of :func:`shape_from_json`."""
    s = shape
    if s.kind == SPHERE:
        body = {"center": s.center.tolist(), "radius": s.radius}
    elif s.kind == CAPSULE:
        body = {"a": s.a.tolist(), "b": s.b.tolist(), "radius": s.radius}
    elif s.kind == BOX:
        body = {"size": s.size.tolist()}
    elif s.kind in (CYLINDER, CONE):
        body = {"radius": s.radius, "height": s.height}
    elif s.kind == PLANE:
        body = {"normal": s.normal.tolist(), "offset": s.offset}
    elif s.kind == CONVEX:
        body = {"vertices": s.vertices.tolist()}
    elif s.kind == MESH:
        body = ({"file": s.path, "scale": s.scale} if s.path else
                {"vertices": s.mesh.vertices.tolist(), "triangles": s.mesh.faces.tolist()})
    else:
        raise ShapeError(f"shape: unknown kind {s.kind!r}")
    if s.kind in (BOX, CYLINDER, CONE, CONVEX, MESH):
        body["position"] = s.position.tolist()
        body["orientation"] = s.orientation.tolist()
    return {KIND_NAMES[s.kind]: body}
