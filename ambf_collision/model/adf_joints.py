"""A joint of an ADF file as AMBF creates it (``afJoint::createFromAttribs``), or a warning.

Types (any case): ``revolute`` = ``hinge`` = ``continuous``; ``prismatic`` = ``slider``; ``fixed``;
``p2p``; ``spring`` = ``linear spring``; ``torsion spring`` = ``torsional spring`` = ``angular
spring``; ``cone twist``; ``six dof``; ``six dof spring``. AMBF creates no constraint for another
type, nor for a joint whose parent or child it cannot find: such a joint is skipped here, with one
warning; so is a joint whose two ends are one body.

``parent`` and ``child`` are resolved as AMBF's ``afJoint::findConnectingBody`` does, over
``namespace + identifier`` (e.g. ``/ambf/env/BODY link1``): in the joint's file, the reference
itself, then the joint's namespace + the reference; then the same over all files; at each step an
exact match or else a unique substring. Then, beyond AMBF, a body name in any spelling
:class:`~ambf_collision.model.names.NameIndex` accepts.

``joint limits {low, high}``: both bounds enable the limits (as AMBF); low > high leaves the joint
free, as Bullet does (warned); cone twist and six dof joints have other limits, not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ambf_collision.model.adf_fields import Entry, entry_names, short
from ambf_collision.model.names import NameIndex

__all__ = [
    "JointSpec", "read_joint", "BodyReferences",
    "REVOLUTE", "PRISMATIC", "FIXED", "P2P", "LINEAR_SPRING", "TORSION_SPRING", "CONE_TWIST",
    "SIX_DOF", "SIX_DOF_SPRING", "MOVING_TYPES",
]

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
    "revolute": REVOLUTE, "hinge": REVOLUTE, "continuous": REVOLUTE,
    "prismatic": PRISMATIC, "slider": PRISMATIC,
    "fixed": FIXED,
    "p2p": P2P,
    "spring": LINEAR_SPRING, "linear spring": LINEAR_SPRING,
    "torsion spring": TORSION_SPRING, "torsional spring": TORSION_SPRING,
    "angular spring": TORSION_SPRING,
    "cone twist": CONE_TWIST,
    "six dof": SIX_DOF,
    "six dof spring": SIX_DOF_SPRING,
}
_MULTI_LIMIT_TYPES = (CONE_TWIST, SIX_DOF, SIX_DOF_SPRING)  # their limits are not {low, high}


@dataclass
class JointSpec:
    """A joint. ``parent``/``child`` are body indices into ``AdfWorld.bodies``.

    ``name``: AMBF's plain name (spaces removed), ``qualified_name``: namespace + name,
    ``original_name``: as written. Pivots (m, unscaled as in the file) and axes are in each
    body's own frame. ``offset`` (rad): AMBF's ``offset`` (or ``child offset``), an angle about
    the parent axis. ``limits``: ``(low, high)`` in rad or m, or None (unlimited). ``type``:
    canonical type name, ``type_raw`` as written.
    """

    name: str
    qualified_name: str
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
    limits: Optional[tuple] = None
    ignore_inter_collision: bool = True
    original_name: str = ""


def read_joint(e: Entry, j: dict, fi: int, file_ns: str, ns_override, refs) -> Optional[JointSpec]:
    """The joint of entry ``e``, or None (with one warning) when AMBF would create no constraint."""
    original, name, ns = entry_names(e, j, "JOINT ", file_ns, ns_override)
    type_raw = e.string(j, ["type"])
    jtype = _JOINT_TYPES.get(type_raw.strip().lower())
    if jtype is None:
        e.warn(["type"], f"unknown joint type {{}} (known: {', '.join(sorted(_JOINT_TYPES))}):"
               " joint skipped, AMBF creates no constraint for it", repr(type_raw))
        return None
    ends = []
    for key in ("parent", "child"):
        if j.get(key) is None:
            e.warn([key], "missing: joint skipped")
            return None
        k, problem = refs.resolve(e.string(j, [key]), fi, ns)
        if k is None:
            e.warn([key], "{}: joint skipped, as AMBF skips it", problem)
            return None
        ends.append(k)
    if ends[0] == ends[1]:
        e.warn(["child"], "joint connects body {} to itself: joint skipped", refs.bodies[ends[0]].name)
        return None
    offset_key = "offset" if j.get("offset") is not None else "child offset"
    return JointSpec(
        name=name, qualified_name=ns + name, identifier=e.entry, file=e.file, file_index=fi,
        parent=ends[0], child=ends[1], type=jtype, type_raw=type_raw,
        parent_pivot=e.vector(j, ["parent pivot"], (0.0, 0.0, 0.0)),
        parent_axis=e.vector(j, ["parent axis"], (0.0, 0.0, 1.0), direction=True),
        child_pivot=e.vector(j, ["child pivot"], (0.0, 0.0, 0.0)),
        child_axis=e.vector(j, ["child axis"], (0.0, 0.0, 1.0), direction=True),
        offset=e.number(j, [offset_key], 0.0),
        limits=None if jtype in _MULTI_LIMIT_TYPES else _limits(e, j),
        ignore_inter_collision=e.boolean(j, ["ignore inter-collision"], True),
        original_name=original,
    )


def _limits(e: Entry, j: dict) -> Optional[tuple]:
    """``(low, high)``, or None: no limits, only one bound (AMBF enables limits only with both),
    or low > high (Bullet then leaves the joint free; warned)."""
    lim = e.get(j, ["joint limits"], None)
    if lim is None:
        return None
    if not isinstance(lim, dict):
        e.warn(["joint limits"], "not a mapping of low and high ({}): unlimited, as AMBF", short(lim))
        return None
    lo = e.number(j, ["joint limits", "low"], None)
    hi = e.number(j, ["joint limits", "high"], None)
    if lo is None or hi is None:
        return None
    if lo > hi:
        e.warn(["joint limits"], "{}: unlimited, as Bullet treats it", f"low ({lo:g}) > high ({hi:g})")
        return None
    return (lo, hi)


class BodyReferences:
    """AMBF's resolution of a joint's ``parent``/``child`` text to a body index."""

    def __init__(self, bodies: list, by_name: NameIndex):
        self.bodies = bodies
        self.by_name = by_name
        self.ids = [b.namespace + b.identifier + b.remap for b in bodies]  # AMBF's map keys
        self.in_file: dict = {}
        for k, b in enumerate(bodies):
            self.in_file.setdefault(b.file_index, []).append(k)

    def resolve(self, ref: str, file_index: int, joint_ns: str):
        """``(body index, None)`` or ``(None, reason)``."""
        everywhere = range(len(self.bodies))
        ambiguous: list = []
        for scope, key in ((self.in_file.get(file_index, []), ref),
                           (self.in_file.get(file_index, []), joint_ns + ref),
                           (everywhere, joint_ns + ref), (everywhere, ref)):
            exact = [k for k in scope if self.ids[k] == key]
            hits = exact or [k for k in scope if key in self.ids[k]]
            if len(hits) == 1:
                return hits[0], None
            ambiguous = ambiguous or hits
        try:
            k = self.by_name.get(ref)
        except KeyError as err:
            return None, str(err)
        if k is not None:
            return k, None
        if ambiguous:
            return None, f"body {ref!r} is ambiguous ({', '.join(self.ids[k] for k in ambiguous[:6])})"
        return None, f"no body {ref!r} is loaded"
