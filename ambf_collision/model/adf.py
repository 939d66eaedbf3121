"""Load AMBF description files (ADF 1.0 YAML) into an :class:`AdfWorld`, as AMBF reads them.

One or several files make one world. Frames and units: metres, radians. A body's ``location`` is
its frame in the file's world frame (no ``location``: the origin, as AMBF's tool files).
Collision shapes are given in the body frame (:mod:`ambf_collision.model.adf_shapes`).

What AMBF accepts loads here (``adf_loader_1_0.cpp``, ``afFramework.cpp``); where this project
reads something differently or cannot honour it, an :class:`AdfWarning` says so, naming file,
entries and key: one line per file, key and message, however many entries it concerns
(:class:`~ambf_collision.model.adf_fields.FileWarnings`; files and meshes named as the user named
the file, relative if it was):

- closed kinematic loops (a body with several parent joints): every joint is kept; the
  kinematics layer chooses a spanning tree and keeps the others as loop constraints;
- names: AMBF removes spaces from body and joint names (:mod:`ambf_collision.model.names`);
- numbers as yaml-cpp reads them (``1e-3``), booleans written as strings (``'True'``, warned);
- inverted ``joint limits`` (low > high): unlimited, as Bullet (warned); limits with only one of
  ``low``/``high``: unlimited, as AMBF;
- a joint whose parent or child is missing, cannot be found, is ambiguous or is the other end
  itself, and a joint of a type AMBF does not know: skipped (warned), as AMBF creates no
  constraint for it;
- collision groups outside 0-999: ignored (warned), as AMBF;
- a body without collision geometry (no shape and no mesh, ``mesh: ''``, a mesh file missing or
  unreadable): kept as a frame, without collision (warned); AMBF drops such a body;
- meshes: monitored as AMBF collides them, the concave triangle mesh by default and the convex
  hull for ``CONVEX_HULL`` and ``CONVEX_MESH`` (:mod:`~ambf_collision.model.adf_shapes`), or the
  hull on request (``hull_meshes``);
- ``sensors``, ``actuators``, ``soft bodies``, ``ghost objects``, ``vehicles``, ``volumes``: not
  monitored (warned); sensors are kept raw in ``AdfWorld.sensors``. A sensor or actuator listed
  without a mapping that has a ``type`` is skipped (warned), as AMBF skips it;
- a body listed twice in one file's ``bodies``: loaded twice, as AMBF, the copy under AMBF's
  non-colliding name (``getNonCollidingIdx``: ``link3`` -> ``link31``; warned); joints naming it
  join the first copy, as in AMBF.

Refused with an :class:`AdfError` (file, entry, key): what AMBF refuses (malformed YAML, a value
yaml-cpp cannot convert, a missing required value such as a joint ``type`` or a shape size, a
listed body or joint that is not defined) and what makes the geometry meaningless (negative sizes, zero
axes, a capsule shorter than its diameter, non-positive scale, numbers beyond 1e6), plus two
names for one body or joint from two entries or two files, and a joint listed twice (AMBF
would rename one; pass ``namespaces=`` to load two copies of a robot).

Joints, their types, limits and body references: :mod:`ambf_collision.model.adf_joints`.
"""

from __future__ import annotations

import fnmatch
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import numpy as np

from ambf_collision.model.adf_errors import AdfError, AdfWarning
from ambf_collision.model.adf_fields import Entry, FileWarnings, entry_names, key_text, short
from ambf_collision.model.adf_joints import (
    CONE_TWIST,
    FIXED,
    LINEAR_SPRING,
    MOVING_TYPES,
    P2P,
    PRISMATIC,
    REVOLUTE,
    SIX_DOF,
    SIX_DOF_SPRING,
    TORSION_SPRING,
    BodyReferences,
    JointSpec,
    read_joint,
)
from ambf_collision.model.adf_shapes import ShapeSpec, as_hulls, body_shapes
from ambf_collision.model.adf_yaml import MAX_FILE_BYTES, MAX_YAML_NODES, read_yaml
from ambf_collision.model.names import NameIndex, normalize_namespace

__all__ = [
    "AdfError", "AdfWarning", "ShapeSpec", "BodySpec", "JointSpec", "AdfWorld", "load_adf_files",
    "MAX_FILE_BYTES", "MAX_YAML_NODES", "DEFAULT_NAMESPACE",
    "REVOLUTE", "PRISMATIC", "FIXED", "P2P", "LINEAR_SPRING", "TORSION_SPRING", "CONE_TWIST",
    "SIX_DOF", "SIX_DOF_SPRING", "MOVING_TYPES",
]

DEFAULT_NAMESPACE = "/ambf/env/"
"""Namespace of a file that names none (AMBF's)."""

_UNMONITORED_LISTS = ("sensors", "actuators", "soft bodies", "ghost objects", "vehicles", "volumes")
_TYPED_LISTS = ("sensors", "actuators")  # AMBF loads an entry of these only when it has a `type`
_OTHER_LISTS = ("bodies", "joints", "cameras", "lights")


@dataclass
class BodySpec:
    """A rigid body. ``R``, ``t``: its ADF ``location`` (body frame in the file frame).

    ``name``: canonical qualified name (namespace + plain), ``plain_name``: AMBF's name (spaces
    removed), ``original_name``: the ``name`` as written, ``identifier``: e.g. ``BODY link3``.
    ``shapes``: geometry-core shapes in the body frame (from ``shape_specs``). ``remap``: the
    suffix AMBF gives a body whose identifier a file lists again (``"1"``, ``"2"``...; ``""``
    for the first), appended to its names (``link3`` -> ``link31``)."""

    name: str
    plain_name: str
    identifier: str
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
    shapes: list = field(default_factory=list)
    mesh_path: Optional[str] = None
    original_name: str = ""
    remap: str = ""


@dataclass
class AdfWorld:
    """All bodies and joints of one or more ADF files.

    ``files``: paths as given. ``file_poses``: per file the (R, t) applied on top of its
    locations (``T_world = T_file * T_location``). ``file_ignore_inter_collision``: per file.
    ``sensors``: raw sensor dicts (``{"file", "identifier", "data"}``), kept for reference.
    ``bodies_by_name`` / ``joints_by_name``: :class:`NameIndex` of the bodies / joints (built
    from ``bodies`` and ``joints`` when not given).
    """

    files: list
    bodies: list
    joints: list
    file_poses: list
    file_ignore_inter_collision: list
    sensors: list = field(default_factory=list)
    bodies_by_name: Optional[NameIndex] = None
    joints_by_name: Optional[NameIndex] = None

    def __post_init__(self):
        if self.bodies_by_name is None:
            self.bodies_by_name = NameIndex([b.namespace for b in self.bodies],
                                            [b.original_name or b.plain_name for b in self.bodies], "body")
        if self.joints_by_name is None:
            self.joints_by_name = NameIndex([j.qualified_name[: -len(j.name)] for j in self.joints],
                                            [j.original_name or j.name for j in self.joints], "joint")

    def body_index(self, name: str) -> int:
        """Index of the body ``name`` designates (:class:`NameIndex` rules); ``KeyError``
        (:class:`NameLookupError`) when none or several."""
        return self.bodies_by_name.index(name)

    def joint_index(self, name: str) -> int:
        """Index of the joint ``name`` designates; ``KeyError`` when none or several."""
        return self.joints_by_name.index(name)


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def load_adf_files(paths, root_poses=None, namespaces=None, hull_meshes=()) -> AdfWorld:
    """Load one or several ADF files into one :class:`AdfWorld`.

    ``paths``: a path or a sequence of paths. ``root_poses``: optional per file (sequence aligned
    with ``paths``, or a dict keyed by the path as given) ``(R (3,3), t (3,))`` applied on top of
    the file's locations: ``T_world = T_file * T_location``. ``namespaces``: optional per file
    (sequence or dict, like ``root_poses``; None keeps the file's) the namespace that replaces
    the namespace of every body and joint of that file, so that two copies of one robot file load
    side by side (``["/PSM1/", "/PSM2/"]``). ``hull_meshes``: fnmatch patterns of body names
    (qualified or plain) whose concave meshes are monitored as their convex hulls, for speed (a
    pattern that matches no such body is warned). Raises :class:`AdfError`; warns with
    :class:`AdfWarning`.
    """
    files = [str(p) for p in ([paths] if isinstance(paths, (str, os.PathLike)) else paths)]
    poses = [_file_pose(p, f) for p, f in zip(_per_file(root_poses, files, "root_poses"), files)]
    ns_override = [_namespace_override(n, f) for n, f in zip(_per_file(namespaces, files, "namespaces"), files)]
    bodies: list = []
    sensors: list = []
    ignore_file: list = []
    loaded = []
    body_keys: set = set()  # AMBF's map keys: namespace + identifier + remap
    hull_meshes = tuple(str(p) for p in (hull_meshes or ()))
    hulled: set = set()  # the patterns that made a concave mesh a hull
    for fi, file in enumerate(files):
        path = Path(file)
        doc = read_yaml(path, file)
        sink = FileWarnings(file)
        top = Entry(file, "", sink)
        if not isinstance(doc, dict):
            raise AdfError(file, "", "", f"top level must be a mapping, got {type(doc).__name__}")
        if not any(k in doc for k in _UNMONITORED_LISTS + _OTHER_LISTS):
            raise top.error(["bodies"], "missing: not an ADF file (it lists no bodies, joints or "
                            "other AMBF objects)")
        for key in _UNMONITORED_LISTS:
            idents = _entry_list(top, doc, key, require_mapping=False, repeats=True)
            kept = _unmonitored(sink, doc, key, idents)
            if key == "sensors":
                sensors += [{"file": file, "identifier": s, "data": doc[s]} for s in kept]
        ignore_file.append(top.boolean(doc, ["ignore inter-collision"], False))
        ns = ns_override[fi] or normalize_namespace(top.string(doc, ["namespace"], DEFAULT_NAMESPACE))
        low = top.string(doc, ["low resolution path"], "")
        dirs = (path.resolve().parent / low, path.parent / low)  # read, and named in messages
        file_keys: set = set()
        for ident in _entry_list(top, doc, "bodies", repeats=True):
            b = _body(Entry(file, ident, sink), doc[ident], fi, ns, ns_override[fi], dirs)
            _apply_hull_meshes(b, hull_meshes, hulled)
            if b.namespace + b.identifier in file_keys:
                _rename_copy(b, body_keys, sink)
            file_keys.add(b.namespace + b.identifier + b.remap)
            body_keys.add(b.namespace + b.identifier + b.remap)
            bodies.append(b)
        loaded.append((file, fi, doc, ns, top, sink))
    _check_unique(bodies, lambda b: b.name, "body")
    bodies_by_name = NameIndex([b.namespace for b in bodies], [b.original_name for b in bodies], "body")
    refs = BodyReferences(bodies, bodies_by_name)
    joints: list = []
    for file, fi, doc, ns, top, sink in loaded:
        for ident in _entry_list(top, doc, "joints"):
            j = read_joint(Entry(file, ident, sink), doc[ident], fi, ns, ns_override[fi], refs)
            if j is not None:
                joints.append(j)
    _check_unique(joints, lambda j: j.qualified_name, "joint")
    for *_, sink in loaded:
        sink.issue()
    for pattern in hull_meshes:
        if pattern not in hulled:
            warnings.warn(AdfWarning(", ".join(files), "", "hull_meshes",
                                     f"{pattern!r} matches no body with a concave mesh"), stacklevel=2)
    return AdfWorld(files, bodies, joints, poses, ignore_file, sensors, bodies_by_name)


def _per_file(values, files: list, what: str) -> list:
    """``values`` (None, a sequence aligned with ``files`` or a dict keyed by file) as a list."""
    if values is None:
        return [None] * len(files)
    if isinstance(values, dict):
        return [values.get(f) for f in files]
    if isinstance(values, (str, bytes)) or len(values) != len(files):
        raise AdfError("", "", what, f"must give one value per file ({len(files)}), got {short(values)}")
    return list(values)


def _file_pose(pose, file: str):
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


def _namespace_override(ns, file: str) -> Optional[str]:
    if ns is None:
        return None
    if not isinstance(ns, str) or not ns.strip() or " " in ns.strip():
        raise AdfError(file, "", "namespaces", f"must be a namespace such as '/PSM1/', got {short(ns)}")
    return normalize_namespace(ns)


def _entry_list(top: Entry, doc: dict, key: str, require_mapping: bool = True, repeats: bool = False) -> list:
    """The identifiers listed under ``key`` (each defined as a mapping in the file when
    ``require_mapping``; an identifier listed twice refused unless ``repeats``)."""
    v = doc.get(key)
    if v is None:
        return []
    if not isinstance(v, list):
        raise top.error([key], f"must be a list of identifiers, got {short(v)}")
    seen = set()
    for i, ident in enumerate(v):
        if not isinstance(ident, str):
            raise top.error([key, i], f"must be an identifier string, got {short(ident)}")
        if ident in seen and not repeats:
            raise top.error([key, i], f"duplicate identifier {ident!r}")
        seen.add(ident)
        if require_mapping and not isinstance(doc.get(ident), dict):
            raise AdfError(top.file, ident, "", f"listed in {key!r} but no such mapping in the file")
    return v


def _unmonitored(sink: FileWarnings, doc: dict, key: str, idents: list) -> list:
    """The entries of the list ``key`` (sensors, actuators...) that AMBF loads, each listed once
    (a sensor or actuator only with a mapping that has a ``type``, as ``adf_loader_1_0.cpp``);
    one warning for those, not monitored, and one for those AMBF skips."""
    kept = []
    for ident in idents:
        node = doc.get(ident)
        if key in _TYPED_LISTS and not (isinstance(node, dict) and "type" in node):
            sink.add(ident, key_text([key]), "listed but not defined with a 'type' in the file: skipped, as "
                     "AMBF skips it")
        elif ident not in kept:
            kept.append(ident)
            sink.add(ident, key_text([key]), "not monitored: this project checks rigid bodies")
    return kept


def _non_colliding_suffix(key: str, taken: set) -> str:
    """AMBF's ``afUtils::getNonCollidingIdx``: ``""`` when no object has the key ``key``, else
    the first of ``"1"``, ``"2"``... (at most ``"100"``) such that ``key + suffix`` is free."""
    if key not in taken:
        return ""
    n = 1
    while key + str(n) in taken and n < 100:
        n += 1
    return str(n)


def _rename_copy(b: BodySpec, taken: set, sink: FileWarnings) -> None:
    """Give ``b``, a body whose map key an earlier body of its file has (it is listed again, or
    an earlier copy took its key), AMBF's suffix (``taken``: the map keys of the bodies loaded
    before it) on its map key and names, with one warning per file. A joint naming the listed
    identifier joins the first copy, as in AMBF: its reference matches both keys as a substring
    and the first exactly."""
    b.remap = _non_colliding_suffix(b.namespace + b.identifier, taken)
    b.name, b.plain_name, b.original_name = (n + b.remap for n in (b.name, b.plain_name, b.original_name))
    sink.add(b.identifier, "bodies", "identifier already taken in this file (listed twice): loaded "
             "again as {}, as AMBF loads it", b.name)


def _apply_hull_meshes(b: BodySpec, patterns: tuple, hulled: set) -> None:
    """Make the concave meshes of body ``b`` hulls when a pattern matches its name (qualified or
    plain; the pattern's spaces removed as AMBF removes them from names, so "yaw link" matches
    ``yawlink``); the patterns that did are added to ``hulled``."""
    if not any(s.kind == "mesh" for s in b.shape_specs):
        return
    hits = [p for p in patterns if any(fnmatch.fnmatchcase(n, q) for n in (b.name, b.plain_name)
                                       for q in (p, p.replace(" ", "")))]
    if not hits:
        return
    hulled.update(hits)
    b.shape_specs = as_hulls(b.shape_specs)
    b.shapes = [s.to_shape() for s in b.shape_specs]


def _check_unique(entries: list, name_of, what: str) -> None:
    """AdfError on the second entry (body or joint) whose qualified name repeats an earlier one."""
    seen: dict = {}
    for e in entries:
        name = name_of(e)
        if name in seen:
            o = seen[name]
            raise AdfError(e.file, e.identifier, "name",
                           f"duplicate {what} name {name} (also {o.file}: {o.identifier})")
        seen[name] = e


# ---------------------------------------------------------------------------------------------
# Bodies and joints
# ---------------------------------------------------------------------------------------------


def _body(e: Entry, b: dict, fi: int, file_ns: str, ns_override, mesh_dirs: tuple) -> BodySpec:
    """``mesh_dirs``: the folder the file's meshes are read from, and the same as the user
    named the file (for messages)."""
    original, name, ns = entry_names(e, b, "BODY ", file_ns, ns_override)
    R, t = e.pose(b, ["location"])
    scale = e.number(b, ["scale"], 1.0, minimum=0.0, strict=True)
    mass = e.number(b, ["mass"], 0.0)
    margin = e.number(b, ["collision margin"], 0.001)
    specs = body_shapes(e, b, mesh_dirs[0], scale, mesh_dirs[1])
    shapes = []
    for spec in specs:
        try:
            shapes.append(spec.to_shape())
        except ValueError as err:  # ShapeError: the geometry core refused the values
            raise AdfError(e.file, e.entry, spec.key, str(err)) from None
    mesh = next((s.params["path"] for s in specs if s.kind in ("convex", "mesh")), None)
    return BodySpec(name=ns + name, plain_name=name, identifier=e.entry, file=e.file, file_index=fi,
                    namespace=ns, R=R, t=t, scale=scale, mass=mass, margin=margin,
                    groups=_groups(e, b), shape_specs=specs, shapes=shapes, mesh_path=mesh,
                    original_name=original)


def _groups(e: Entry, b: dict) -> tuple:
    """Sorted distinct collision groups; out-of-range ones ignored with a warning, as AMBF."""
    raw = e.get(b, ["collision groups"], [])
    if not isinstance(raw, list):
        e.warn(["collision groups"], "not a list ({}): ignored, as AMBF does", short(raw))
        return ()
    groups = []
    for i, g in enumerate(raw):
        if isinstance(g, bool) or not isinstance(g, int):
            raise e.error(["collision groups", i], f"must be an integer 0-999, got {short(g)}")
        if 0 <= g <= 999:
            groups.append(g)
        else:
            e.warn(["collision groups", i], "group {} is outside 0-999: ignored, as AMBF does", str(g))
    return tuple(sorted(set(groups)))
