"""Load AMBF description files (ADF 1.0 YAML) into an :class:`AdfWorld`.

Pure Python + NumPy + PyYAML (``SafeLoader`` only). One or several files make one world.

Frames and units: metres, radians. A body's ``location`` is its frame in the file's world
frame. Every collision shape of a body is given in that BODY frame (``BodySpec.shapes``):
AMBF's ``collision offset`` (falling back to the ``inertial offset``, AMBF's legacy rule) or a
compound entry's ``offset`` places a primitive in the body frame; mesh vertices are already in
the body frame (scaled by the body ``scale``). ADF primitive sizes are not scaled (as AMBF).

Shape mapping (AMBF/Bullet -> geometry core): BOX ``{x,y,z}`` full extents -> ``Box``;
SPHERE -> ``Sphere``; CAPSULE ``height`` is tip to tip -> ``Capsule`` whose segment is
``height - 2 radius`` long along ``axis``; CYLINDER -> ``Cylinder``; CONE (apex towards +axis,
as Bullet's ``btConeShape``) -> ``Cone``; PLANE ``{normal, offset}`` -> ``Plane`` (a single
PLANE ignores the offset pose, as AMBF); mesh collision (``collision mesh`` or ``mesh`` in the
body's or file's ``low resolution path``, relative to the ADF file) -> ``ConvexHull`` of the
mesh vertices (STL binary/ASCII or OBJ). AMBF's default for meshes is a concave trimesh; the
convex hull is a conservative stand-in. A missing mesh file leaves that body without
collision and emits one ``UserWarning`` naming file, body and path.

Every problem with the input raises :class:`AdfError` naming file, entry and key.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np
import yaml

from ambf_collision.geometry.transforms import rpy_to_matrix

__all__ = [
    "AdfError",
    "ShapeSpec",
    "BodySpec",
    "JointSpec",
    "AdfWorld",
    "load_adf_files",
    "MAX_FILE_BYTES",
    "MAX_YAML_NODES",
    "REVOLUTE",
    "PRISMATIC",
    "FIXED",
    "P2P",
    "LINEAR_SPRING",
    "TORSION_SPRING",
    "CONE_TWIST",
    "SIX_DOF",
    "SIX_DOF_SPRING",
    "MOVING_TYPES",
]

MAX_FILE_BYTES = 8 * 1024 * 1024
"""ADF files larger than this are rejected (bytes)."""
MAX_YAML_NODES = 2_000_000
"""Limit on YAML nodes after alias expansion (guards against 'billion laughs')."""
MAX_MESH_BYTES = 256 * 1024 * 1024
MAX_MAGNITUDE = 1e6
"""Largest accepted magnitude of any ADF number (metres, radians, kg): beyond it the
geometry overflows."""
DEFAULT_NAMESPACE = "/ambf/env/"

# Canonical joint types.
REVOLUTE = "revolute"
PRISMATIC = "prismatic"
FIXED = "fixed"
P2P = "p2p"
LINEAR_SPRING = "linear spring"
TORSION_SPRING = "torsion spring"
CONE_TWIST = "cone twist"
SIX_DOF = "six dof"
SIX_DOF_SPRING = "six dof spring"
MOVING_TYPES = (REVOLUTE, PRISMATIC)
"""Joint types whose child follows the joint position; the others hold their ADF pose."""

_JOINT_TYPES = {
    "revolute": REVOLUTE,
    "hinge": REVOLUTE,
    "continuous": REVOLUTE,
    "prismatic": PRISMATIC,
    "slider": PRISMATIC,
    "fixed": FIXED,
    "p2p": P2P,
    "spring": LINEAR_SPRING,
    "linear spring": LINEAR_SPRING,
    "torsion spring": TORSION_SPRING,
    "torsional spring": TORSION_SPRING,
    "angular spring": TORSION_SPRING,
    "cone twist": CONE_TWIST,
    "six dof": SIX_DOF,
    "six dof spring": SIX_DOF_SPRING,
}
_SHAPE_KINDS = ("box", "sphere", "cylinder", "capsule", "cone", "plane")
# Rotation taking the local z axis (the geometry core's shape axis) onto the ADF ``axis``.
_AXIS_ROT = {
    "x": rpy_to_matrix(0.0, math.pi / 2.0, 0.0),  # z -> +x
    "y": rpy_to_matrix(-math.pi / 2.0, 0.0, 0.0),  # z -> +y
    "z": np.eye(3),
}
_AXIS_VEC = {"x": np.array([1.0, 0, 0]), "y": np.array([0, 1.0, 0]), "z": np.array([0, 0, 1.0])}


class AdfError(ValueError):
    """Bad ADF input. ``file``, ``entry`` (e.g. ``BODY Wrist``), ``key`` (e.g.
    ``'collision geometry'.radius``); ``str()`` is one line naming all three."""

    def __init__(self, file: str, entry: str, key: str, message: str):
        self.file = str(file)
        self.entry = str(entry)
        self.key = str(key)
        self.message = str(message)
        parts = [p for p in (self.file, self.entry, self.key) if p]
        super().__init__(": ".join(parts + [self.message]))


# ---------------------------------------------------------------------------------------------
# Data classes
# ---------------------------------------------------------------------------------------------


@dataclass
class ShapeSpec:
    """One collision primitive in its body's frame, before conversion to a geometry shape.

    ``kind`` is one of box, sphere, cylinder, capsule, cone, plane, convex. ``R``, ``t``: pose
    of the shape frame in the body frame (shape axis = local z). ``params``: ``size`` (box, full
    extents, m), ``radius``/``height`` (m; capsule height tip to tip), ``normal``/``offset``
    (plane, body frame), ``vertices`` (convex, shape frame, m).
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
            nn = np.linalg.norm(n)
            return S.Plane(n / nn, p["offset"] + float((n / nn) @ self.t))
        if self.kind == "convex":
            return S.ConvexHull(np.asarray(p["vertices"], float), self.t.copy(), q)
        raise ValueError(f"unknown shape kind {self.kind!r}")


@dataclass
class BodySpec:
    """A rigid body. ``R``, ``t``: its ADF ``location`` (body frame in the file frame)."""

    name: str  # qualified: namespace + name, e.g. /ambf/env/link3
    plain_name: str  # e.g. link3
    identifier: str  # e.g. "BODY link3"
    file: str
    file_index: int
    namespace: str
    R: np.ndarray
    t: np.ndarray
    scale: float = 1.0
    mass: float = 0.0
    margin: float = 0.001
    groups: tuple = ()
    shape_specs: list = field(default_factory=list)
    shapes: list = field(default_factory=list)  # geometry-core shapes, body frame
    mesh_path: Optional[str] = None


@dataclass
class JointSpec:
    """A joint. ``parent``/``child`` are body indices into ``AdfWorld.bodies``.

    Pivots (m, unscaled as in the file) and axes are in each body's own frame. ``offset``
    (rad): AMBF's ``offset`` (or ``child offset``), an angle about the parent axis.
    ``limits``: ``(low, high)`` in rad or m, or None. ``type``: canonical type name.
    """

    name: str  # plain
    qualified_name: str  # namespace + name
    identifier: str
    file: str
    file_index: int
    parent: int
    child: int
    type: str
    type_raw: str
    parent_pivot: np.ndarray
    parent_axis: np.ndarray
    child_pivot: np.ndarray
    child_axis: np.ndarray
    offset: float = 0.0
    limits: Optional[tuple] = None  # (low, high) or None
    ignore_inter_collision: bool = True


@dataclass
class AdfWorld:
    """All bodies and joints of one or more ADF files.

    ``files``: paths as given. ``file_poses``: per file the (R, t) applied on top of its
    locations (``T_world = T_file * T_location``). ``file_ignore_inter_collision``: per file.
    ``sensors``: raw sensor dicts (``{"file", "identifier", "data"}``), kept for reference.
    """

    files: list
    bodies: list
    joints: list
    file_poses: list
    file_ignore_inter_collision: list
    sensors: list = field(default_factory=list)

    def body_index(self, name: str) -> int:
        """Index of a body by qualified or (unique) plain name; KeyError otherwise."""
        for i, b in enumerate(self.bodies):
            if b.name == name:
                return i
        hits = [i for i, b in enumerate(self.bodies) if b.plain_name == name]
        if len(hits) == 1:
            return hits[0]
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# YAML with an alias-expansion guard
# ---------------------------------------------------------------------------------------------


def _expanded_size(root, limit: int) -> int:
    """Node count of the YAML graph with aliases expanded (memoised; cycles count as over)."""
    memo: dict = {}
    on_stack: set = set()
    # Iterative post-order traversal to avoid recursion limits.
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_stack.discard(nid)
            total = 1
            if isinstance(node, yaml.SequenceNode):
                for ch in node.value:
                    total += memo[id(ch)]
            elif isinstance(node, yaml.MappingNode):
                for k, v in node.value:
                    total += memo[id(k)] + memo[id(v)]
            memo[nid] = min(total, limit + 1)
            continue
        if nid in memo:
            continue
        if nid in on_stack:
            return limit + 1  # recursive alias
        on_stack.add(nid)
        stack.append((node, True))
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
            children = [c for kv in node.value for c in kv]
        else:
            children = []
        for ch in children:
            if id(ch) in on_stack:
                return limit + 1
            if id(ch) not in memo:
                stack.append((ch, False))
    return memo[id(root)]


def _safe_load_text(text: str, file: str):
    """``yaml.safe_load`` with a limit on the alias-expanded node count."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        n = _expanded_size(node, MAX_YAML_NODES)
        if n > MAX_YAML_NODES:
            raise AdfError(
                file, "", "", f"YAML expands to more than {MAX_YAML_NODES} nodes (alias bomb?)"
            )
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _read_yaml(path: Path, file: str):
    try:
        size = path.stat().st_size
    except OSError as e:
        raise AdfError(file, "", "", f"cannot read file: {e.strerror or e}") from None
    if not path.is_file():
        raise AdfError(file, "", "", "not a regular file")
    if size > MAX_FILE_BYTES:
        raise AdfError(file, "", "", f"file is {size} bytes, over the {MAX_FILE_BYTES} limit")
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as e:
        raise AdfError(file, "", "", f"cannot read file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise AdfError(file, "", "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return _safe_load_text(text, file)
    except AdfError:
        raise
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise AdfError(file, "", "", f"malformed YAML{where}: {problem}") from None
    except (RecursionError, MemoryError):
        raise AdfError(file, "", "", "YAML too deeply nested or too large") from None
    except (ValueError, TypeError, OverflowError) as e:
        # e.g. invalid timestamps or unhashable keys rejected by the constructor
        raise AdfError(file, "", "", f"malformed YAML: {e}") from None


# ---------------------------------------------------------------------------------------------
# Field readers
# ---------------------------------------------------------------------------------------------

_MISSING = object()
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _key_str(path: Sequence) -> str:
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        s = str(p)
        s = s if _IDENT.match(s) else repr(s)
        out += ("." if out else "") + s
    return out


def _short(v: Any) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


class _Ctx:
    """Error context for one entry of one file."""

    def __init__(self, file: str, entry: str):
        self.file = file
        self.entry = entry

    def error(self, path: Sequence, message: str) -> AdfError:
        return AdfError(self.file, self.entry, _key_str(path), message)

    def get(self, mapping, path: Sequence, default=_MISSING):
        """Value at ``path`` (keys) inside ``mapping``; missing -> default or error."""
        cur = mapping
        for i, k in enumerate(path):
            if isinstance(k, int):
                if not isinstance(cur, list):
                    raise self.error(path[:i], f"must be a list, got {_short(cur)}")
                cur = cur[k]
                continue
            if not isinstance(cur, dict):
                raise self.error(path[:i], f"must be a mapping, got {_short(cur)}")
            if k not in cur or cur[k] is None and default is not _MISSING:
                if default is _MISSING:
                    raise self.error(path[: i + 1], "missing")
                return default
            cur = cur[k]
        return cur

    def number(self, mapping, path, default=_MISSING, minimum=None, strict=False) -> float:
        v = self.get(mapping, path, default)
        if v is default and default is not _MISSING:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(path, f"must be a finite number{_bound(minimum, strict)}, got {_short(v)}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f) or (
            minimum is not None and (f <= minimum if strict else f < minimum)
        ):
            raise self.error(path, f"must be a finite number{_bound(minimum, strict)}, got {_short(v)}")
        if abs(f) > MAX_MAGNITUDE:
            raise self.error(path, f"must be at most {MAX_MAGNITUDE:g} in magnitude, got {f:g}")
        return f

    def vector(self, mapping, path, default=_MISSING, nonzero=False) -> np.ndarray:
        v = self.get(mapping, path, default)
        if v is default and default is not _MISSING:
            return np.array(default, float)
        out = np.array([self.number(mapping, list(path) + [c]) for c in "xyz"])
        if nonzero and not np.linalg.norm(out) > 1e-12:
            raise self.error(path, "must be a non-zero vector")
        return out

    def rpy(self, mapping, path) -> np.ndarray:
        self.get(mapping, path)
        r, p, y = (self.number(mapping, list(path) + [c]) for c in "rpy")
        return rpy_to_matrix(r, p, y)

    def pose(self, mapping, path, required=True):
        """``{position {x,y,z}, orientation {r,p,y}}`` -> (R, t); missing parts identity
        unless ``required``."""
        node = self.get(mapping, path, None if not required else _MISSING)
        if node is None:
            return np.eye(3), np.zeros(3)
        if not isinstance(node, dict):
            raise self.error(path, f"must be a mapping, got {_short(node)}")
        p = list(path)
        if required:
            t = self.vector(mapping, p + ["position"])
            R = self.rpy(mapping, p + ["orientation"])
        else:
            t = self.vector(mapping, p + ["position"]) if node.get("position") is not None else np.zeros(3)
            R = self.rpy(mapping, p + ["orientation"]) if node.get("orientation") is not None else np.eye(3)
        return R, t

    def boolean(self, mapping, path, default) -> bool:
        v = self.get(mapping, path, default)
        if not isinstance(v, bool):
            raise self.error(path, f"must be true or false, got {_short(v)}")
        return v

    def string(self, mapping, path, default=_MISSING) -> str:
        v = self.get(mapping, path, default)
        if v is default and default is not _MISSING:
            return default
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.error(path, f"must be a string, got {_short(v)}")
        return str(v)


def _bound(minimum, strict) -> str:
    if minimum is None:
        return ""
    return f" {'>' if strict else '>='} {minimum:g}"


# ---------------------------------------------------------------------------------------------
# Shapes
# ---------------------------------------------------------------------------------------------


def _primitive(ctx: _Ctx, body: dict, shape_path, geom_path, R_off, t_off, key) -> ShapeSpec:
    kind_raw = ctx.get(body, shape_path)
    if not isinstance(kind_raw, str) or kind_raw.lower() not in _SHAPE_KINDS:
        raise ctx.error(
            shape_path,
            f"unknown shape type {_short(kind_raw)} (expected one of "
            + ", ".join(k.upper() for k in _SHAPE_KINDS)
            + ")",
        )
    kind = kind_raw.lower()
    geom = ctx.get(body, geom_path)
    if not isinstance(geom, dict):
        raise ctx.error(geom_path, f"must be a mapping, got {_short(geom)}")
    g = list(geom_path)
    if kind == "box":
        size = [ctx.number(body, g + [c], minimum=0.0) for c in "xyz"]
        return ShapeSpec("box", R_off, t_off, {"size": np.array(size)}, key)
    if kind == "sphere":
        return ShapeSpec("sphere", R_off, t_off, {"radius": ctx.number(body, g + ["radius"], minimum=0.0)}, key)
    if kind == "plane":
        n = ctx.vector(body, g + ["normal"], nonzero=True)
        off = ctx.number(body, g + ["offset"])
        return ShapeSpec("plane", R_off, t_off, {"normal": n / np.linalg.norm(n), "offset": off}, key)
    radius = ctx.number(body, g + ["radius"], minimum=0.0)
    height = ctx.number(body, g + ["height"], minimum=0.0)
    axis = ctx.string(body, g + ["axis"], "z").lower()
    if axis not in _AXIS_ROT:
        raise ctx.error(g + ["axis"], f"must be X, Y or Z, got {_short(geom.get('axis'))}")
    if kind == "capsule" and height < 2.0 * radius - 1e-12:
        raise ctx.error(
            g + ["height"],
            f"CAPSULE height is tip to tip and must be >= 2*radius ({2 * radius:g}), got {height:g}",
        )
    R = R_off @ _AXIS_ROT[axis]
    return ShapeSpec(kind, R, t_off, {"radius": radius, "height": height}, key)


def _read_stl(data: bytes) -> np.ndarray:
    """Vertices (N,3) of a binary or ASCII STL file."""
    if len(data) >= 84:
        n = int(np.frombuffer(data, "<u4", 1, 80)[0])
        if 84 + 50 * n == len(data):
            rec = np.dtype([("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
            tri = np.frombuffer(data, rec, n, 84)
            return tri["v"].reshape(-1, 3).astype(float)
    head = data[:5].lower()
    if head == b"solid":
        text = data.decode("ascii", "replace")
        nums = re.findall(r"vertex\s+(\S+)\s+(\S+)\s+(\S+)", text)
        return np.array(nums, float).reshape(-1, 3)
    raise ValueError("neither binary STL (size does not match the triangle count) nor ASCII STL")


def _read_obj(data: bytes) -> np.ndarray:
    text = data.decode("utf-8", "replace")
    nums = re.findall(r"^v\s+(\S+)\s+(\S+)\s+(\S+)", text, flags=re.M)
    return np.array(nums, float).reshape(-1, 3)


def _mesh_spec(ctx: _Ctx, body: dict, file_dir: Path, file_doc: dict, scale: float):
    """ConvexHull spec from the body's collision mesh, or (None, path) when the file is missing."""
    key = "collision mesh" if body.get("collision mesh") is not None else "mesh"
    name = ctx.string(body, [key])
    lr = body.get("low resolution path") or body.get("high resolution path")
    if lr is None:
        lr = file_doc.get("low resolution path") or file_doc.get("high resolution path") or ""
    if not isinstance(lr, str):
        raise ctx.error(["low resolution path"], f"must be a string, got {_short(lr)}")
    path = file_dir / lr / name
    if not path.is_file():
        return None, str(path)
    ext = path.suffix.lower()
    try:
        if path.stat().st_size > MAX_MESH_BYTES:
            raise ValueError(f"mesh larger than {MAX_MESH_BYTES} bytes")
        data = path.read_bytes()
        if ext == ".stl":
            v = _read_stl(data)
        elif ext == ".obj":
            v = _read_obj(data)
        else:
            warnings.warn(
                f"{ctx.file}: {ctx.entry}: mesh format {ext or '(none)'} not supported, "
                f"body left without collision: {path}",
                stacklevel=4,
            )
            return None, None
    except (OSError, ValueError) as e:
        raise ctx.error([key], f"cannot read mesh {path}: {e}") from None
    if v.shape[0] < 1 or not np.all(np.isfinite(v)) or np.abs(v).max() * scale > MAX_MAGNITUDE:
        raise ctx.error([key], f"mesh {path} has no vertices, or non-finite or huge ones")
    v = np.unique(v * scale, axis=0)
    return ShapeSpec("convex", np.eye(3), np.zeros(3), {"vertices": v, "path": str(path)}, key), str(path)


def _body_shapes(ctx: _Ctx, body: dict, file_dir: Path, file_doc: dict, scale: float):
    """Shape specs of one body in its body frame, and the mesh path used (if any)."""
    if body.get("collision shape") is not None:
        off_key = "collision offset" if body.get("collision offset") is not None else "inertial offset"
        R, t = ctx.pose(body, [off_key], required=False)
        if str(body["collision shape"]).lower() == "plane":
            R, t = np.eye(3), np.zeros(3)  # a single PLANE is used without offset
        return [_primitive(ctx, body, ["collision shape"], ["collision geometry"], R, t, "collision shape")], None
    comp = body.get("compound collision shape")
    if comp is not None:
        if not isinstance(comp, list):
            raise ctx.error(["compound collision shape"], f"must be a list, got {_short(comp)}")
        out = []
        for i, item in enumerate(comp):
            p = ["compound collision shape", i]
            if not isinstance(item, dict):
                raise ctx.error(p, f"must be a mapping, got {_short(item)}")
            R, t = ctx.pose(body, p + ["offset"], required=False)
            out.append(_primitive(ctx, body, p + ["shape"], p + ["geometry"], R, t, _key_str(p)))
        return out, None
    if body.get("collision mesh") is not None or body.get("mesh") is not None:
        spec, path = _mesh_spec(ctx, body, file_dir, file_doc, scale)
        if spec is None:
            if path is not None:
                warnings.warn(
                    f"{ctx.file}: {ctx.entry}: collision mesh not found, body left without "
                    f"collision: {path}",
                    stacklevel=3,
                )
            return [], path
        return [spec], path
    return [], None


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def _namespace(ctx: _Ctx, doc, default: str) -> str:
    ns = ctx.string(doc, ["namespace"], default) if isinstance(doc, dict) else default
    ns = ns.strip()
    if not ns.startswith("/"):
        ns = "/" + ns
    if not ns.endswith("/"):
        ns = ns + "/"
    return ns


def _entry_list(ctx: _Ctx, doc: dict, key: str, required: bool) -> list:
    v = doc.get(key)
    if v is None:
        if required:
            raise ctx.error([key], "missing (an ADF file lists its bodies)")
        return []
    if not isinstance(v, list):
        raise ctx.error([key], f"must be a list of identifiers, got {_short(v)}")
    seen = set()
    for i, ident in enumerate(v):
        if not isinstance(ident, str):
            raise ctx.error([key, i], f"must be an identifier string, got {_short(ident)}")
        if ident in seen:
            raise ctx.error([key, i], f"duplicate identifier {ident!r}")
        seen.add(ident)
        if not isinstance(doc.get(ident), dict):
            raise AdfError(ctx.file, ident, "", f"listed in {key!r} but no such mapping in the file")
    return v


def _strip_prefix(ident: str, prefix: str) -> str:
    return ident[len(prefix):].strip() if ident.startswith(prefix) else ident


def _load_bodies(file, fi, doc, file_dir, bodies_out):
    fctx = _Ctx(file, "")
    ns = _namespace(fctx, doc, DEFAULT_NAMESPACE)
    local = {}
    for ident in _entry_list(fctx, doc, "bodies", True):
        ctx = _Ctx(file, ident)
        b = doc[ident]
        name = ctx.string(b, ["name"], _strip_prefix(ident, "BODY ")).replace(" ", "")
        if not name:
            raise ctx.error(["name"], "must not be empty")
        bns = _namespace(ctx, b, ns)
        R, t = ctx.pose(b, ["location"])
        scale = ctx.number(b, ["scale"], 1.0, minimum=0.0, strict=True)
        mass = ctx.number(b, ["mass"], 0.0, minimum=0.0)
        margin = ctx.number(b, ["collision margin"], 0.001, minimum=0.0)
        groups_raw = ctx.get(b, ["collision groups"], [])
        if not isinstance(groups_raw, list):
            raise ctx.error(["collision groups"], f"must be a list of integers 0-999, got {_short(groups_raw)}")
        groups = []
        for i, g in enumerate(groups_raw):
            if isinstance(g, bool) or not isinstance(g, int) or not 0 <= g <= 999:
                raise ctx.error(["collision groups", i], f"must be an integer 0-999, got {_short(g)}")
            groups.append(g)
        specs, mesh_path = _body_shapes(ctx, b, file_dir, doc, scale)
        shapes = []
        for spec in specs:
            try:
                shapes.append(spec.to_shape())
            except ValueError as e:  # ShapeError: the geometry core refused the values
                raise AdfError(file, ident, spec.key, str(e)) from None
        bodies_out.append(
            BodySpec(
                name=bns + name, plain_name=name, identifier=ident, file=file, file_index=fi,
                namespace=bns, R=R, t=t, scale=scale, mass=mass, margin=margin,
                groups=tuple(sorted(set(groups))), shape_specs=specs, shapes=shapes,
                mesh_path=mesh_path,
            )
        )
        local[ident] = len(bodies_out) - 1
    return ns, local


def _resolve_body(ctx, path, ref, local: dict, bodies: list) -> int:
    """AMBF-style body reference: identifier of this file, ``[namespace]BODY name``, the plain
    or qualified name, or a unique substring of an identifier of this file."""
    if ref in local:
        return local[ref]
    base = ref.rsplit("/", 1)[-1] if "/" in ref else ref
    prefix = ref[: len(ref) - len(base)]
    name = _strip_prefix(base, "BODY ").replace(" ", "")
    # same file, plain name
    hits = [i for i in local.values() if bodies[i].plain_name == name and (not prefix or bodies[i].namespace == prefix)]
    if len(hits) == 1:
        return hits[0]
    # any file: qualified name
    if prefix:
        hits = [i for i, b in enumerate(bodies) if b.name == prefix + name]
        if len(hits) == 1:
            return hits[0]
    hits = [i for i, b in enumerate(bodies) if b.plain_name == name]
    if len(hits) == 1:
        return hits[0]
    if len(hits) > 1:
        raise ctx.error(path, f"body {ref!r} is ambiguous ({', '.join(bodies[i].name for i in hits)})")
    subs = [i for ident, i in local.items() if ref in ident]
    if len(subs) == 1:
        return subs[0]
    raise ctx.error(path, f"unknown body {ref!r}")


def _load_joints(file, fi, doc, ns, local, bodies, joints_out, pending):
    fctx = _Ctx(file, "")
    for ident in _entry_list(fctx, doc, "joints", False):
        ctx = _Ctx(file, ident)
        j = doc[ident]
        name = ctx.string(j, ["name"], _strip_prefix(ident, "JOINT ")).strip()
        if not name:
            raise ctx.error(["name"], "must not be empty")
        jns = _namespace(ctx, j, ns)
        type_raw = ctx.string(j, ["type"])
        jtype = _JOINT_TYPES.get(type_raw.strip().lower())
        if jtype is None:
            raise ctx.error(["type"], f"unknown joint type {type_raw!r} (expected one of {', '.join(sorted(_JOINT_TYPES))})")
        parent_ref = ctx.string(j, ["parent"])
        child_ref = ctx.string(j, ["child"])
        pending.append((ctx, parent_ref, child_ref, local))
        offset_key = "offset" if j.get("offset") is not None else "child offset"
        offset = ctx.number(j, [offset_key], 0.0)
        limits = None
        lim = ctx.get(j, ["joint limits"], None)
        if lim is not None:
            if not isinstance(lim, dict):
                raise ctx.error(["joint limits"], f"must be a mapping {{low, high}}, got {_short(lim)}")
            if lim:
                lo = ctx.number(j, ["joint limits", "low"])
                hi = ctx.number(j, ["joint limits", "high"])
                if lo > hi:
                    raise ctx.error(["joint limits"], f"low ({lo:g}) must not exceed high ({hi:g})")
                limits = (lo, hi)
        joints_out.append(
            JointSpec(
                name=name, qualified_name=jns + name, identifier=ident, file=file, file_index=fi,
                parent=-1, child=-1, type=jtype, type_raw=type_raw,
                parent_pivot=ctx.vector(j, ["parent pivot"], (0.0, 0.0, 0.0)),
                parent_axis=ctx.vector(j, ["parent axis"], (0.0, 0.0, 1.0), nonzero=True),
                child_pivot=ctx.vector(j, ["child pivot"], (0.0, 0.0, 0.0)),
                child_axis=ctx.vector(j, ["child axis"], (0.0, 0.0, 1.0), nonzero=True),
                offset=offset, limits=limits,
                ignore_inter_collision=ctx.boolean(j, ["ignore inter-collision"], True),
            )
        )


def _check_joints(world_bodies, joints):
    """Refuse a joint that connects a body to itself. Loops (a body with several parent joints,
    cycles of joints) are valid ADF: AMBF makes every joint a constraint; the kinematics layer
    chooses a spanning tree and keeps the loop-closing joints as constraints."""
    for j in joints:
        if j.parent == j.child:
            raise _Ctx(j.file, j.identifier).error(
                ["child"], f"joint connects body {world_bodies[j.child].name} to itself"
            )


def _file_pose(pose, file):
    if pose is None:
        return np.eye(3), np.zeros(3)
    try:
        R, t = pose
        R = np.array(R, float).reshape(3, 3)
        t = np.array(t, float).reshape(3)
    except (TypeError, ValueError):
        raise AdfError(file, "", "root pose", "must be (R 3x3, t 3)") from None
    if not (np.all(np.isfinite(R)) and np.all(np.isfinite(t))):
        raise AdfError(file, "", "root pose", "must be finite")
    return R, t


def _check_unique(entries, name_of, what):
    """AdfError on the second entry (body or joint) whose qualified name repeats an earlier one."""
    seen = {}
    for e in entries:
        name = name_of(e)
        if name in seen:
            o = seen[name]
            raise AdfError(e.file, e.identifier, "name", f"duplicate {what} name {name} (also {o.file}: {o.identifier})")
        seen[name] = e


def load_adf_files(paths, root_poses=None) -> AdfWorld:
    """Load one or several ADF files into one :class:`AdfWorld`.

    ``paths``: a path or a sequence of paths. ``root_poses``: optional per file (sequence
    aligned with ``paths``, or a dict keyed by the path as given) ``(R (3,3), t (3,))`` applied
    on top of the file's locations: ``T_world = T_file * T_location``. Raises :class:`AdfError`.
    """
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [str(p) for p in paths]
    if isinstance(root_poses, dict):
        poses = [_file_pose(root_poses.get(f), f) for f in files]
    elif root_poses is None:
        poses = [_file_pose(None, f) for f in files]
    else:
        if len(root_poses) != len(files):
            raise AdfError("", "", "root_poses", f"{len(root_poses)} poses for {len(files)} files")
        poses = [_file_pose(p, f) for p, f in zip(root_poses, files)]

    bodies: list = []
    joints: list = []
    sensors: list = []
    ignore_file: list = []
    pending: list = []
    docs = []
    for fi, file in enumerate(files):
        path = Path(file)
        doc = _read_yaml(path, file)
        if not isinstance(doc, dict):
            raise AdfError(file, "", "", f"top level must be a mapping, got {type(doc).__name__}")
        ctx = _Ctx(file, "")
        ignore_file.append(ctx.boolean(doc, ["ignore inter-collision"], False))
        ns, local = _load_bodies(file, fi, doc, path.resolve().parent, bodies)
        docs.append((file, fi, doc, ns, local))
        for ident in _entry_list(ctx, doc, "sensors", False):
            sensors.append({"file": file, "identifier": ident, "data": doc[ident]})

    _check_unique(bodies, lambda b: b.name, "body")

    for file, fi, doc, ns, local in docs:
        _load_joints(file, fi, doc, ns, local, bodies, joints, pending)
    for j, (ctx, pref, cref, local) in zip(joints, pending):
        j.parent = _resolve_body(ctx, ["parent"], pref, local, bodies)
        j.child = _resolve_body(ctx, ["child"], cref, local, bodies)
    _check_unique(joints, lambda j: j.qualified_name, "joint")
    _check_joints(bodies, joints)
    return AdfWorld(files, bodies, joints, poses, ignore_file, sensors)
