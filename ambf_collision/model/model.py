"""Compiled collision model of AMBF ADF files (``Model``); its per-cycle buffers (``Data``) are in
:mod:`.data`.

Like Pinocchio's Model/Data: ``Model`` holds what never changes after compilation (shapes in
body frames, the kinematics, the checked shape pairs as arrays, names); ``Data`` holds every
buffer an evaluation writes (joint positions, per-file root poses, body poses, joint frames,
loop residuals, the shapes in world, pair results), so two ``Data`` of one ``Model`` never
interfere.

Frames and units: metres, radians; poses ``(R, t)`` with ``x_world = R x_body + t``; contact
points, normals and positions in world. ``distance`` is signed (< 0: penetration).

Usage::

    model = Model.from_files(paths, overrides=Overrides.from_strings(ignore=["a:b"]),
                             couplings="config/couplings/blender-psm.yaml")
    data = model.create_data()
    unknown = model.set_joint_positions(data, names, positions)
    result = model.evaluate(data, report_distance=0.05)
    swept = model.evaluate_motion(data, q0, q1, report_distance=0.05)   # motion.py
"""

from __future__ import annotations

import copy
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ambf_collision.geometry.mesh_set import no_meshes
from ambf_collision.geometry.pairs import PairDistance
from ambf_collision.geometry.shapes import KIND_NAMES
from ambf_collision.geometry.tolerances import MOTION_DISTANCE_TOLERANCE
from ambf_collision.geometry.world_shapes import LinkShapes, hull_arrays
from ambf_collision.model.adf import AdfError, AdfWorld, load_adf_files
from ambf_collision.model.filtering import Overrides, filter_pairs
from ambf_collision.model.names import name_matches
from ambf_collision.model.data import Data, EvaluationResult, report_distances
from ambf_collision.model.evaluate_kernel import MODEL_TABLES, evaluate_model
from ambf_collision.model.kinematics import Kinematics
from ambf_collision.model.motion import MotionResult, evaluate_motion
from ambf_collision.model.motion_bounds import MotionBounds
from ambf_collision.model.obstacles import evaluate_obstacles
from ambf_collision.model.table_buffer import pack

__all__ = ["Model", "ShapeInfo", "body_padding"]

@dataclass(frozen=True)
class ShapeInfo:
    """Shape ``k`` of the model: owning body (qualified name and index), index within the
    body's compound shape (-1 when the body has exactly one shape), kind name."""

    body: str
    body_index: int
    index: int
    kind: str


def body_padding(world: AdfWorld, padding=None) -> np.ndarray:
    """``(B,)`` padding (m) per body from ``{name or pattern: metres}``: patterns are fnmatch
    patterns matched against the qualified and the plain body name; entries apply in order,
    a later match overrides an earlier one. Raises ValueError (naming the entry) for a value
    that is not finite and >= 0, or an entry that matches no body."""
    out = np.zeros(len(world.bodies))
    for pattern, value in (padding or {}).items():
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ValueError(f"padding[{pattern!r}]: must be a finite number of metres >= 0, got {value}")
        hit = [i for i, b in enumerate(world.bodies)
               if name_matches(pattern, b.name, b.plain_name)]
        if not hit:
            raise ValueError(f"padding[{pattern!r}]: matches no body")
        out[hit] = value
    return out


def _tree_roots(parent_body) -> np.ndarray:
    """``(B,)`` the root body of each body's kinematic tree, from the spanning tree's parents
    (-1 at roots). Compile time only."""
    root = np.arange(len(parent_body))
    for b in range(len(parent_body)):
        r = b
        while parent_body[r] >= 0:
            r = parent_body[r]
        root[b] = r
    return root


class Model:
    """Collision model compiled once from an :class:`AdfWorld`.

    Attributes: ``world``; ``kinematics`` (:class:`Kinematics`: spanning tree, couplings,
    closure joints); ``body_names`` (qualified), ``body_plain_names``, ``joint_names``
    (qualified), ``joint_plain_names``, ``closure_joint_names``; ``shapes``
    (geometry-core shapes in body frames), ``shape_body (S,)``, ``shape_info`` (list of
    :class:`ShapeInfo`); ``pairs (P,2)`` checked shape pairs, ``pair_bodies (P,2)`` their
    bodies; ``body_pairs (Q,2)`` checked body pairs, ``ignored`` ``[(i, j, reason)]``;
    ``filter`` (the :class:`FilterResult`); ``link_shapes`` / ``pair_distance`` (the batch
    objects, possibly empty, never None); ``body_padding (B,)`` (m, see :func:`body_padding`);
    ``body_tree (B,)`` the root body of each body's kinematic tree; ``pair_environment (P,)``
    True for a **robot-environment pair**: its two bodies are in different kinematic trees (not
    connected by joints: a robot and the table, the floor or another robot), False for a **self
    pair** (one articulated body, loops included). ``evaluate`` may report the two kinds at
    different distances.

    ``padding``: ``{body name or fnmatch pattern: metres}``: every shape of a matching body is
    grown by a ball of that radius (Minkowski sum; a safety margin): a pair's distance drops by
    both bodies' padding and its witnesses move out along the normal (``geometry/pairs.py``).
    """

    def __init__(self, world: AdfWorld, overrides: Optional[Overrides] = None, couplings=None,
                 padding=None):
        self.world = world
        self.kinematics = Kinematics(world, couplings)
        self.body_names = [b.name for b in world.bodies]
        self.body_plain_names = [b.plain_name for b in world.bodies]
        self.joint_names = list(self.kinematics.joint_names)
        self.joint_plain_names = list(self.kinematics.joint_plain_names)
        self.closure_joint_names = list(self.kinematics.closure_joint_names)
        shapes, shape_body, info = [], [], []
        self._first_shape = first = np.zeros(len(world.bodies) + 1, dtype=np.intp)
        for bi, b in enumerate(world.bodies):
            first[bi] = len(shapes)
            for k, s in enumerate(b.shapes):
                shapes.append(s)
                shape_body.append(bi)
                info.append(ShapeInfo(b.name, bi, k if len(b.shapes) > 1 else -1, KIND_NAMES[s.kind]))
        first[len(world.bodies)] = len(shapes)
        self.shapes = shapes
        self.shape_body = np.array(shape_body, dtype=np.intp)
        self.shape_info = info
        self.link_shapes = LinkShapes(shapes, self.shape_body)  # may be empty
        self.hulls, self.meshes = self.link_shapes.hulls, self.link_shapes.meshes
        self._groups = {}
        for b in world.bodies:
            self._groups[b.name] = b.groups
            self._groups.setdefault(b.plain_name, b.groups)
        self.body_tree = _tree_roots(self.kinematics.tree_parent_body)
        self._compile_pairs(overrides, padding)

    def _compile_pairs(self, overrides, padding) -> None:
        """The checked pairs (AMBF's filtering plus ``overrides``), their padding and the
        compiled buffer (everything that depends on them)."""
        first, info = self._first_shape, self.shape_info
        self.filter = filter_pairs(self.world, overrides)
        self.body_pairs = self.filter.checked
        self.ignored = self.filter.ignored
        pairs, pair_bodies = [], []
        for i, j in self.body_pairs:  # compile time only: all shape combinations of each body pair
            si = np.arange(first[i], first[i + 1])
            sj = np.arange(first[j], first[j + 1])
            a, b = np.meshgrid(si, sj, indexing="ij")
            pairs.append(np.stack([a.ravel(), b.ravel()], axis=1))
            pair_bodies.append(np.tile([i, j], (a.size, 1)))
        self.pairs = np.concatenate(pairs).astype(np.intp) if pairs else np.zeros((0, 2), np.intp)
        self.pair_bodies = np.concatenate(pair_bodies).astype(np.intp) if pairs else np.zeros((0, 2), np.intp)
        self.pair_shapes = [tuple(p) for p in self.pairs.tolist()]  # Python ints, per pair
        # per pair: (body_1, body_2, shape_1, shape_2) of its ModelContact
        self.pair_contact_info = [(info[a].body, info[b].body, info[a].index, info[b].index)
                                  for a, b in self.pair_shapes]
        self.body_padding = body_padding(self.world, padding)
        self.pair_environment = (self.body_tree[self.pair_bodies[:, 0]]
                                 != self.body_tree[self.pair_bodies[:, 1]]).reshape(-1)
        self.pair_distance = PairDistance(self.link_shapes, self.pairs,
                                          padding=self.body_padding[self.shape_body])
        self.buffer, views = pack(self.kinematics.tables() + (
            self.link_shapes.local.table, self.link_shapes.frame_index,
            self.pair_distance.bound_table, self.pair_distance.pair_table)
            + tuple(hull_arrays(self.hulls))
            + (np.ascontiguousarray(self.pair_bodies, dtype=np.int64).reshape(-1),
               self.pair_environment.astype(np.int64))
            + tuple(no_meshes() if self.meshes is None else self.meshes.arrays()), writeable=False)
        self.tables = dict(zip(MODEL_TABLES, views))
        self.motion_bounds = MotionBounds(self)
        self.motion_buffer = pack(self.motion_bounds.tables(), writeable=False)[0]

    def with_overrides(self, overrides: Optional[Overrides] = None, padding=None) -> "Model":
        """A new Model of the same files with other pair ``overrides`` and ``padding`` (as in
        the constructor): only the pair list and the buffer are rebuilt; the kinematics, the
        shapes and their hulls are shared (constant). This Model does not change; its Data
        do not fit the new one (``create_data`` again)."""
        new = copy.copy(self)
        new._compile_pairs(overrides, padding)
        return new

    # -- construction ---------------------------------------------------------------------------

    @classmethod
    def from_files(cls, paths, overrides: Optional[Overrides] = None, root_poses=None,
                   couplings=None, namespaces=None, padding=None, hull_meshes=()) -> "Model":
        """Load ADF files (see :func:`load_adf_files`: ``namespaces`` renames each file's bodies
        and joints; ``hull_meshes`` body name patterns whose concave meshes become hulls) and
        compile. ``couplings``: a couplings YAML path or a sequence of rules (:mod:`couplings`).
        Raises ``AdfError`` (also :class:`CouplingError`, one of them)."""
        world = load_adf_files(paths, root_poses=root_poses, namespaces=namespaces,
                               hull_meshes=hull_meshes)
        return cls.from_world(world, overrides, couplings, padding)

    @classmethod
    def from_world(cls, world: AdfWorld, overrides: Optional[Overrides] = None,
                   couplings=None, padding=None) -> "Model":
        return cls(world, overrides, couplings, padding)

    def create_data(self) -> Data:
        return Data(self)

    # -- queries --------------------------------------------------------------------------------

    def body_index(self, name: str) -> int:
        """Index of a body by qualified or (unique) plain name; KeyError otherwise."""
        return self.world.body_index(name)

    def groups_of(self, body: str) -> tuple:
        """Collision groups of a body (qualified or plain name); ``()`` = collides with all."""
        if body not in self._groups:
            raise KeyError(body)
        return self._groups[body]

    # -- per cycle ------------------------------------------------------------------------------

    def set_joint_positions(self, data: Data, names, positions) -> list:
        """Set joint positions (rad / m) by joint name (plain when unique, else qualified).
        Returns the names not known (not raised). Joints not named keep their last value; a
        coupled joint's position is overwritten by its coupling at the next ``evaluate``.
        Raises ValueError for non-finite positions or a length mismatch."""
        return self._set_joint_values(data, data.q, names, positions, "position")

    def set_joint_velocities(self, data: Data, names, velocities) -> list:
        """Set joint velocities (rad/s / m/s) by joint name, as :meth:`set_joint_positions`:
        the contacts' ``distance_rate`` is then J q_dot (a coupled joint's velocity is not
        used: its rate follows its source's). Returns the names not known."""
        unknown = self._set_joint_values(data, data.velocity, names, velocities, "velocity")
        data.velocity_given = True
        return unknown

    def _set_joint_values(self, data: Data, target, names, positions, what: str) -> list:
        positions = np.asarray(positions, dtype=float)
        if positions.ndim != 1:
            positions = positions.reshape(-1)
        names = tuple(names)
        if len(names) != positions.size:
            raise ValueError(f"{len(names)} joint names but {positions.size} "
                             f"{'positions' if what == 'position' else 'velocities'}")
        if not all(map(math.isfinite, positions.tolist())):  # a few joints: faster than NumPy
            i = int(np.argmin(np.isfinite(positions)))
            raise ValueError(f"joint {names[i]!r}: {what} must be finite, got {positions[i]}")
        cache = data.name_cache
        try:
            entry = cache.get(names)
        except TypeError:  # unhashable names: no cache
            entry = None
        if entry is None:
            idx, keep, unknown = self.kinematics.joint_indices(names)
            full = len(unknown) == 0 and np.array_equal(idx, np.arange(len(self.joint_names)))
            entry = (idx, keep, unknown, full)
            try:
                if len(cache) >= 64:
                    cache.clear()
                cache[names] = entry
            except TypeError:
                pass
        idx, keep, unknown, full = entry
        if full:  # every joint, in model order (the monitor's case)
            target[...] = positions
        else:
            target[idx] = positions[keep]
        return list(unknown)

    def set_root_poses(self, data: Data, root_poses) -> None:
        """Per-file root poses: sequence aligned with the files, or dict keyed by file path or
        file index, of ``(R (3,3), t (3,))``; ``None`` entries are left unchanged."""
        items = root_poses.items() if isinstance(root_poses, dict) else enumerate(root_poses)
        files = self.world.files
        for key, pose in items:
            f = key if isinstance(key, int) else files.index(str(key)) if str(key) in files else None
            if f is None or not 0 <= f < len(files):
                raise ValueError(f"root pose for unknown file {key!r}")
            if pose is None:
                continue
            R = np.asarray(pose[0], float).reshape(3, 3)
            t = np.asarray(pose[1], float).reshape(3)
            if not (np.all(np.isfinite(R)) and np.all(np.isfinite(t))):
                raise ValueError(f"root pose of {files[f]}: must be finite")
            data.file_R[f], data.file_t[f] = R, t

    def evaluate(self, data: Data, root_poses=None, report_distance: float = 0.05,
                 near_only: bool = False,
                 environment_report_distance: Optional[float] = None,
                 obstacles=()) -> EvaluationResult:
        """Pose all bodies, compute all checked pairs' signed distances, report contacts below
        ``report_distance`` (m), closest first: one compiled call (``evaluate_kernel.py``).
        ``environment_report_distance`` (m, default ``report_distance``): the report distance of
        the robot-environment pairs (``pair_environment``); ``report_distance`` then applies
        to the self pairs.

        ``near_only=True`` (what the node uses): a pair proven farther than both
        ``report_distance`` and the smallest pair distance keeps a lower bound of its distance
        instead of the exact value (``data.exact`` is False for it). Contacts, ``min_distance``
        and ``closest`` are the same as with ``near_only=False``.

        ``obstacles``: point clouds (:meth:`ObstacleSource.cloud <ambf_collision.model.obstacles.
        ObstacleSource.cloud>`): each checked body's contact with each cloud, in
        ``result.obstacles`` (reported below the source's report distance, by default
        ``environment_report_distance``; ``obstacles.py``)."""
        if root_poses is not None:
            self.set_root_poses(data, root_poses)
        report_distance, environment = report_distances(report_distance,
                                                         environment_report_distance)
        n, closest, lowest = evaluate_model(self.buffer, data.buffer,
                                            max(report_distance, environment) if near_only else math.inf,
                                            report_distance, environment)
        found = evaluate_obstacles(self, data, obstacles, environment) if obstacles else ()
        return EvaluationResult(self, data, n, closest, lowest, found)

    def evaluate_obstacles(self, data: Data, obstacles, report_distance: float = 0.05) -> tuple:
        """The contacts of point clouds (``obstacles``, as for :meth:`evaluate`) with the bodies
        as the Data's last evaluation posed them (after :meth:`evaluate_motion`, say): per cloud
        an :class:`~ambf_collision.model.obstacles.ObstacleContacts`. ``report_distance`` (m):
        for the sources without their own."""
        return evaluate_obstacles(self, data, obstacles, float(report_distance))

    def evaluate_motion(self, data: Data, q0, q1, root_poses0=None, root_poses1=None,
                        report_distance: float = 0.05, near_only: bool = False,
                        environment_report_distance: Optional[float] = None,
                        distance_tolerance: float = MOTION_DISTANCE_TOLERANCE) -> MotionResult:
        """Continuous collision over the step from joint positions ``q0`` to ``q1`` (``(J,)``,
        ``joint_names`` order; ``q0`` None: ``data.q``): per checked pair the earliest ``s`` in
        [0, 1] at which it touches along ``q(s) = q0 + s (q1 - q0)`` (root poses by SLERP and
        a linear translation), its witnesses and normal there, and its minimum distance over
        the step; the Data is left at ``q1`` with ``evaluate``'s results
        (``result.discrete``). One compiled call; ``motion.py`` documents the motion, the
        tolerances and the :class:`MotionResult`."""
        return evaluate_motion(self, data, q0, q1, root_poses0, root_poses1, report_distance,
                               near_only, environment_report_distance, distance_tolerance)


# Re-exported for callers that catch loader errors through the model module.
AdfError = AdfError
