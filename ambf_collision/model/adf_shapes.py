"""A body's collision geometry as AMBF builds it: primitives, compound shapes, collision meshes.

Every shape is returned in its BODY frame (m, rad). Rules (AMBF ``afRigidBody::createFromAttribs``
and ``afShapeUtils::createCollisionShape``):

- ``collision shape`` + ``collision geometry``: one primitive at the ``collision offset``, or,
  without one, at the ``inertial offset`` (AMBF's legacy rule). A single PLANE ignores the
  collision offset: AMBF gives the plane to Bullet directly, in the body's inertial frame, so it
  sits at the ``inertial offset``.
- ``compound collision shape: [{shape, geometry, offset}, ...]``: each primitive at its ``offset``.
- otherwise ``collision mesh`` (or ``mesh``): the mesh, scaled by the body ``scale``, in the body
  frame. The file is ``<ADF folder>/<file low resolution path>/<body low (or high) resolution
  path>/<mesh>`` (absolute parts replace what precedes them).

Primitive sizes are not scaled (as AMBF). BOX ``{x,y,z}`` full extents; CAPSULE ``height`` tip to
tip (the segment is ``height - 2 radius`` long); CYLINDER, CONE (apex towards +axis, as Bullet's
``btConeShape``), CAPSULE along ``axis`` X, Y or Z (default Z; another letter: Z with a warning,
as AMBF); PLANE ``{normal, offset}``: solid where ``normal . x < offset``.

A mesh is monitored as AMBF collides it (``afShapeUtils``): as its convex hull when ``collision
mesh type`` is ``CONVEX_HULL`` or ``CONVEX_MESH`` (:data:`HULL_MESH_TYPES`, kind ``convex``), and
otherwise as the concave triangle mesh (kind ``mesh``: no type, AMBF's default ``TRIMESH``,
``CONCAVE_MESH``; another value is warned and read as the default). The caller may make a concave
mesh a hull on purpose (``hull_meshes``, :func:`as_hulls`). What preparing a mesh changed or found
(welded vertices, zero-area triangles dropped, triangles flipped, an open mesh, which has no
inside and unsigned distances) is one warning naming the file. A mesh file that cannot be used
(missing, empty name, unreadable, unsupported format, non-finite or huge, no triangle of
non-zero area) leaves its body without collision, with one warning; AMBF drops such a body
altogether.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Optional

import numpy as np

from ambf_collision.geometry.meshes import MeshError, read_mesh, read_mesh_vertices, unique_vertices
from ambf_collision.geometry.mesh_parts import solid_parts
from ambf_collision.geometry.trimesh import TriangleMesh
from ambf_collision.geometry.tolerances import ADF_CAPSULE_HEIGHT_SLACK
from ambf_collision.geometry.transforms import rpy_to_matrix
from ambf_collision.model.adf_fields import MAX_MAGNITUDE, Entry, key_text, short

__all__ = ["ShapeSpec", "body_shapes", "as_hulls", "SHAPE_KINDS", "HULL_MESH_TYPES",
           "CONCAVE_MESH_TYPES"]

SHAPE_KINDS = ("box", "sphere", "cylinder", "capsule", "cone", "plane")
"""Primitive kinds of ``collision shape`` (any case)."""
HULL_MESH_TYPES = ("CONVEX_HULL", "convex_hull", "hull", "CONVEX_MESH", "convex_mesh")
"""``collision mesh type`` values AMBF makes convex: monitored exactly by the hull."""
CONCAVE_MESH_TYPES = ("CONCAVE_MESH", "concave_mesh", "TRIMESH", "trimesh")
"""``collision mesh type`` values that name AMBF's default, the concave triangle mesh."""

# Rotation taking the local z axis (the geometry core's shape axis) onto the ADF ``axis``.
_AXIS_ROT = {
    "x": rpy_to_matrix(0.0, math.pi / 2.0, 0.0),  # z -> +x
    "y": rpy_to_matrix(-math.pi / 2.0, 0.0, 0.0),  # z -> +y
    "z": np.eye(3),
}


@dataclass
class ShapeSpec:
    """One collision shape in its body's frame, before conversion to a geometry-core shape.

    ``kind``: box, sphere, cylinder, capsule, cone, plane, convex or mesh. ``R``, ``t``: pose of
    the shape frame in the body frame (shape axis = local z). ``params``: ``size`` (box, full
    extents, m), ``radius``/``height`` (m; capsule height tip to tip), ``normal``/``offset``
    (plane, shape frame), ``vertices`` (convex and mesh: distinct mesh vertices (M,3) in the
    shape frame, m), ``mesh`` (mesh: the prepared
    :class:`~ambf_collision.geometry.trimesh.TriangleMesh`), ``path``, ``scale`` and
    ``mesh_type`` (convex and mesh: the mesh file, the body scale applied to it and the
    ``collision mesh type`` as written, None when absent). ``key``: the ADF key it came from.
    """

    kind: str
    R: np.ndarray
    t: np.ndarray
    params: dict
    key: str = ""

    def to_shape(self):
        """The geometry-core shape object (``ambf_collision.geometry.shapes``) in the body frame."""
        from ambf_collision.geometry import shapes as S
        from ambf_collision.geometry.transforms import matrix_to_quat

        q = matrix_to_quat(self.R)
        p = self.params
        if self.kind == "sphere":
            return S.Sphere(self.t.copy(), p["radius"])
        if self.kind == "capsule":
            half = max(p["height"] / 2.0 - p["radius"], 0.0)
            axis = self.R[:, 2]
            return S.Capsule(self.t - half * axis, self.t + half * axis, p["radius"])
        if self.kind == "box":
            return S.Box(np.asarray(p["size"], float), self.t.copy(), q)
        if self.kind == "cylinder":
            return S.Cylinder(p["radius"], p["height"], self.t.copy(), q)
        if self.kind == "cone":
            return S.Cone(p["radius"], p["height"], self.t.copy(), q)
        if self.kind == "plane":
            n = self.R @ np.asarray(p["normal"], float)
            n = n / np.linalg.norm(n)
            return S.Plane(n, p["offset"] + float(n @ self.t))
        if self.kind == "convex":
            return S.ConvexHull(np.asarray(p["vertices"], float), self.t.copy(), q)
        if self.kind == "mesh":
            return S.Mesh(p["mesh"], self.t.copy(), q, p["path"], p["scale"], p["part"])
        raise ValueError(f"unknown shape kind {self.kind!r}")


def body_shapes(entry: Entry, body: dict, mesh_dir: Path, scale: float, shown_dir: Optional[Path] = None) -> list:
    """Shape specs of one body in its body frame (possibly none, then with one warning).

    ``body``: the body's mapping; ``mesh_dir``: the ADF file's folder joined with its ``low
    resolution path``; ``scale``: the body scale (meshes only); ``shown_dir``: the same folder
    as the user named the file (relative if they did), for messages (default ``mesh_dir``)."""
    if body.get("collision shape") is not None:
        if str(body["collision shape"]).lower() == "plane":
            R, t = entry.pose(body, ["inertial offset"])
        else:
            offset = "collision offset" if body.get("collision offset") is not None else "inertial offset"
            R, t = entry.pose(body, [offset])
        return [_primitive(entry, body, ["collision shape"], ["collision geometry"], R, t)]
    compound = body.get("compound collision shape")
    if compound is not None:
        if not isinstance(compound, list):
            raise entry.error(["compound collision shape"], f"must be a list, got {short(compound)}")
        out = []
        for i, item in enumerate(compound):
            p = ["compound collision shape", i]
            if not isinstance(item, dict):
                raise entry.error(p, f"must be a mapping, got {short(item)}")
            R, t = entry.pose(body, p + ["offset"])
            out.append(_primitive(entry, body, p + ["shape"], p + ["geometry"], R, t))
        if not out:
            entry.warn(["compound collision shape"], "empty list: the body has no collision geometry")
        return out
    key = "collision mesh" if body.get("collision mesh") is not None else "mesh"
    if body.get(key) is None:
        entry.warn(["collision shape"], "no 'collision shape', 'compound collision shape' or "
                   "'mesh': the body has no collision geometry")
        return []
    return _mesh(entry, body, key, mesh_dir, scale, mesh_dir if shown_dir is None else shown_dir)


def _primitive(entry: Entry, body: dict, shape_path: list, geom_path: list, R_off, t_off) -> ShapeSpec:
    kind_raw = entry.get(body, shape_path)
    if not isinstance(kind_raw, str) or kind_raw.lower() not in SHAPE_KINDS:
        raise entry.error(shape_path, f"unknown shape type {short(kind_raw)} (expected one of "
                          + ", ".join(k.upper() for k in SHAPE_KINDS) + ")")
    kind = kind_raw.lower()
    geom = entry.get(body, geom_path)
    if not isinstance(geom, dict):
        raise entry.error(geom_path, f"must be a mapping, got {short(geom)}")
    g, key = list(geom_path), key_text(shape_path)
    if kind == "box":
        size = np.array([entry.number(body, g + [c], minimum=0.0) for c in "xyz"])
        return ShapeSpec("box", R_off, t_off, {"size": size}, key)
    if kind == "sphere":
        return ShapeSpec("sphere", R_off, t_off, {"radius": entry.number(body, g + ["radius"], minimum=0.0)}, key)
    if kind == "plane":
        n = entry.vector(body, g + ["normal"], direction=True)
        offset = entry.number(body, g + ["offset"])
        return ShapeSpec("plane", R_off, t_off, {"normal": n / np.linalg.norm(n), "offset": offset}, key)
    radius = entry.number(body, g + ["radius"], minimum=0.0)
    height = entry.number(body, g + ["height"], minimum=0.0)
    axis = entry.string(body, g + ["axis"], "z")
    if axis not in ("x", "X", "y", "Y", "z", "Z"):  # AMBF compares these six spellings
        entry.warn(g + ["axis"], "axis {} is not X, Y or Z: Z used, as AMBF does", repr(axis))
        axis = "z"
    if kind == "capsule" and height < 2.0 * radius - ADF_CAPSULE_HEIGHT_SLACK:
        raise entry.error(g + ["height"], f"CAPSULE height is tip to tip and must be >= 2*radius "
                          f"({2 * radius:g}), got {height:g}")
    return ShapeSpec(kind, R_off @ _AXIS_ROT[axis.lower()], t_off, {"radius": radius, "height": height}, key)


def as_hulls(specs: list) -> list:
    """The specs with each mesh file's ``mesh`` specs (its solids) replaced by one ``convex``
    spec, the hull of all their vertices (the same file and scale); other specs as they are."""
    out, merged = [], {}
    for spec in specs:
        if spec.kind != "mesh":
            out.append(spec)
            continue
        hull = merged.get(spec.params["path"])
        if hull is None:
            params = {k: v for k, v in spec.params.items() if k not in ("mesh", "part")}
            hull = merged[spec.params["path"]] = ShapeSpec("convex", spec.R, spec.t, params, spec.key)
            out.append(hull)
        else:
            hull.params["vertices"] = np.concatenate([hull.params["vertices"], spec.params["vertices"]])
    return out


@lru_cache(maxsize=64)
def _prepared(path: str, stamp: tuple, scale: float) -> tuple:
    """``(parts, notes)``: the mesh file ``path`` read, scaled, prepared and split into solids
    (:func:`~ambf_collision.geometry.mesh_parts.solid_parts`), and what that did (``stamp``: its
    size and modification time, so that a changed file is read again); bodies and loads that
    share a mesh share it."""
    V, F = read_mesh(path)
    mesh = TriangleMesh.build(V * scale, F)
    parts, note = solid_parts(mesh)
    return parts, mesh.warnings + ([note] if note else [])


def _mesh(entry: Entry, body: dict, key: str, mesh_dir: Path, scale: float, shown_dir: Path) -> list:
    """The specs of the body's collision mesh (``mesh``: one per solid of the file, usually one;
    ``convex`` for AMBF's convex types), or none (with one warning naming the mesh file as
    ``shown_dir`` leads to it)."""
    name = entry.string(body, [key])
    if not name.strip():
        entry.warn([key], "empty mesh name: the body has no collision geometry")
        return []
    folder = body.get("low resolution path")
    folder_key = "low resolution path"
    if folder is None:
        folder, folder_key = body.get("high resolution path"), "high resolution path"
    folder = "" if folder is None else entry.string(body, [folder_key])
    path = mesh_dir / folder / name
    shown = str(shown_dir / folder / name)
    mesh_type = None
    if body.get("collision mesh type") is not None:
        mesh_type = entry.string(body, ["collision mesh type"])
        if mesh_type not in HULL_MESH_TYPES + CONCAVE_MESH_TYPES:
            entry.warn(["collision mesh type"], "{}: not a type AMBF knows: monitored as the "
                       "concave mesh (AMBF's default)", mesh_type)
    try:
        found = path.is_file()
    except OSError as e:  # e.g. a name too long for the file system
        found, shown = False, f"{shown} ({e.strerror or e})"
    if not found:
        entry.warn([key], "collision mesh not found: {}: the body has no collision geometry", shown)
        return []
    hull = mesh_type in HULL_MESH_TYPES
    try:
        if hull:
            v = unique_vertices(read_mesh_vertices(path)) * scale
        else:
            stat = path.stat()
            parts, notes = _prepared(str(path), (stat.st_size, stat.st_mtime_ns), float(scale))
            v = np.concatenate([p.vertices for p in parts])
    except (MeshError, ValueError) as e:  # a MeshError's message starts with the path read
        problem = str(e).replace(str(path), shown, 1) if isinstance(e, MeshError) else f"{shown}: {e}"
        entry.warn([key], "{}: the body has no collision geometry", problem)
        return []
    if np.abs(v).max() > MAX_MAGNITUDE:
        entry.warn([key], f"{{}}: coordinates beyond {MAX_MAGNITUDE:g} m after scaling: the "
                   "body has no collision geometry", shown)
        return []
    params = {"vertices": v, "path": str(path), "scale": float(scale), "mesh_type": mesh_type}
    if hull:
        return [ShapeSpec("convex", np.eye(3), np.zeros(3), params, key)]
    if notes:
        entry.warn([key], "{}", f"{shown}: " + "; ".join(notes))
    return [ShapeSpec("mesh", np.eye(3), np.zeros(3),
                      dict(params, vertices=p.vertices, mesh=p, part=i), key)
            for i, p in enumerate(parts)]
