"""One way to assemble what a user names into a scene: the node and the CLI both call
:func:`load_scene` (no ROS).

A scene is the compiled :class:`~ambf_collision.model.Model` of one or more ADF files (each under
its own namespace if given, with the user's pair overrides and joint couplings) plus, optionally,
the tactile probes of probe files, compiled against that model, and the callable the monitor
runs them with. Loading warnings (Python ``warnings``, e.g. the loader's ``AdfWarning``) are
collected as one line each in :attr:`Scene.warnings`: the node logs them through its ROS logger,
the CLI prints them on stderr.

Bad input raises ``ValueError`` subclasses (``AdfError``, ``ProbeError``, ``ShapeError``) or
``OSError`` with one line naming the file, entry and key; nothing else escapes.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field
from types import SimpleNamespace

import numpy as np

from ambf_collision.probes import load_probe_file, probe_evaluator

__all__ = ["EmptyModel", "Scene", "load_scene", "probe_evaluator"]


class EmptyModel:
    """The model of a scene without ADF files: no bodies, joints or pairs."""

    body_names: list = []
    joint_names: list = []
    joint_plain_names: list = []
    shapes: list = []

    def create_data(self):
        return None

    def set_joint_positions(self, data, names, positions):
        return list(names)

    def evaluate(self, data, root_poses=None, report_distance=0.05, near_only=False):
        return SimpleNamespace(min_distance=math.inf, closest=-1, pairs_checked=0,
                               distances=np.zeros(0), contact_index=np.zeros(0, np.int64))


@dataclass
class Scene:
    """What the files compile into. ``adf_paths`` / ``probe_paths``: the resolved paths;
    ``model``; ``probe_set``: the compiled :class:`~ambf_collision.probes.ProbeModel` (None
    without probes); ``probes``: ``probes(model, data, result)
    -> probe result`` for :class:`~ambf_collision.monitor.monitor.CollisionMonitor` (None
    without probes); ``warnings``: one line per loading warning."""

    adf_paths: list
    probe_paths: list
    model: object
    probe_set: object = None
    probes: object = None
    warnings: list = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """True when no ADF file was given (nothing to monitor)."""
        return not self.adf_paths

    def probe_count(self) -> int:
        return len(self.probe_set) if self.probe_set is not None else 0


def load_scene(adf_files, probe_files=(), namespaces=None, ignore_pairs=(), check_pairs=(),
               coupling_files=(), couplings=(), root_poses=None, resolve=str,
               hull_meshes=()) -> Scene:
    """Load and compile a scene.

    ``adf_files``: ADF paths (one world); ``namespaces``: per file the namespace that replaces
    the file's own (``''``/None keeps it), so two copies of one robot load side by side;
    ``ignore_pairs`` / ``check_pairs``: body-pair overrides ``'A:B'`` (fnmatch patterns);
    ``coupling_files`` (YAML) and ``couplings`` (strings) of coupled joints, ``passive =
    multiplier * source + offset`` (format: :mod:`ambf_collision.model.couplings`);
    ``root_poses``: per file ``(R, t)`` placing it; ``probe_files``: tactile probe YAML files;
    ``resolve``: maps each path as given to a file system path (the node resolves
    ``package://`` paths with it); ``hull_meshes``: body name patterns whose concave meshes are
    monitored as their convex hulls (``Model.from_files``; a pattern matching none is warned).
    """
    adf_paths = [resolve(p) for p in adf_files]
    probe_paths = [resolve(p) for p in probe_files]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = _load_model(adf_paths, namespaces, ignore_pairs, check_pairs,
                            [resolve(p) for p in coupling_files], list(couplings), root_poses,
                            list(hull_meshes))
        probe_set, probes = _load_probes(model, probe_paths)
    lines = []
    for w in caught:
        text = " ".join(str(w.message).split())
        if text not in lines:
            lines.append(text)
    return Scene(adf_paths, probe_paths, model, probe_set, probes, lines)


def _load_model(adf_paths, namespaces, ignore_pairs, check_pairs, coupling_files, couplings,
                root_poses, hull_meshes):
    if not adf_paths:
        if coupling_files or couplings:
            raise ValueError("couplings given without any ADF file")
        if hull_meshes:
            warnings.warn(f"hull_meshes {hull_meshes}: no ADF file loaded, nothing matches",
                          stacklevel=2)
        return EmptyModel()
    from ambf_collision.model import Model
    from ambf_collision.model.filtering import Overrides

    kwargs = {"overrides": Overrides.from_strings(list(ignore_pairs), list(check_pairs))}
    if root_poses is not None:
        kwargs["root_poses"] = root_poses
    if namespaces is not None and any(namespaces):
        if len(namespaces) != len(adf_paths):
            raise ValueError(f"namespaces: {len(namespaces)} entries for {len(adf_paths)} ADF "
                             "files (one per file, '' keeps the file's own)")
        kwargs["namespaces"] = [ns or None for ns in namespaces]
    if coupling_files or couplings:
        kwargs["couplings"] = _couplings(coupling_files, couplings)
    if hull_meshes:
        kwargs["hull_meshes"] = hull_meshes
    return Model.from_files(adf_paths, **kwargs)


def _couplings(files, strings) -> list:
    """The couplings of the files and the rule strings, in that order
    (:mod:`ambf_collision.model.couplings`: its YAML format and rule grammar)."""
    from ambf_collision.model.couplings import couplings_from

    out = []
    for f in files:
        out += couplings_from(str(f))
    if strings:
        out += couplings_from(list(strings), origin="couplings")
    return out


def _load_probes(model, probe_paths):
    """``(probe_set, probes callable)``, or ``(None, None)`` without probes."""
    if not probe_paths:
        return None, None
    specs = []
    for p in probe_paths:
        specs += load_probe_file(p, model.body_names)
    if not specs or not len(getattr(model, "shapes", ())):
        return None, None
    probes, probe_set = probe_evaluator(model, specs)
    return probe_set, probes
