"""Compiled collision model of AMBF ADF files (``Model``) and its per-cycle buffers (``Data``).

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
"""

from __future__ import annotations

import copy
import fnmatch
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ambf_collision.geometry.pairs import PAIR_RESULT_DTYPE, PairDistance
from ambf_collision.geometry.shapes import KIND_NAMES
from ambf_collision.geometry.tolerances import LOOP_OPEN_ANGLE, LOOP_OPEN_POSITION
from ambf_collision.geometry.transforms import matrix_to_quat
from ambf_collision.geometry.world_shapes import LinkShapes, WorldShapes, hull_arrays
from ambf_collision.model.adf import AdfError, AdfWorld, load_adf_files
from ambf_collision.model.filtering import Overrides, filter_pairs
from ambf_collision.model.evaluate_kernel import DATA_TABLES, MODEL_TABLES, evaluate_model
from ambf_collision.model.jacobians import CONTACT_DTYPE
from ambf_collision.model.kinematics import Kinematics, KinematicsState
from ambf_collision.model.kinematics_kernels import JOINT_STATE_DTYPE, POSE_DTYPE
from ambf_collision.model.table_buffer import pack

__all__ = ["Model", "Data", "EvaluationResult", "ModelContact", "ShapeInfo", "body_padding"]

@dataclass(frozen=True)
class ShapeInfo:
    """Shape ``k`` of the model: owning body (qualified name and index), index within the
    body's compound shape (-1 when the body has exactly one shape), kind name."""

    body: str
    body_index: int
    index: int
    kind: str


@dataclass
class ModelContact:
    """One reported pair (the ``Contact`` fields plus who): world frame, metres."""

    body_1: str
    body_2: str
    shape_1: int
    shape_2: int
    distance: float
    point_1: np.ndarray
    point_2: np.ndarray
    position: np.ndarray
    normal: np.ndarray
    jacobian: Optional[np.ndarray] = None  # (J,) m/rad or m/m, Model.joint_names order
    distance_rate: float = 0.0  # m/s: jacobian . joint velocities (0 when none were set)
    point_1_local: Optional[np.ndarray] = None  # (3,) m: point_1 in body_1's frame
    point_2_local: Optional[np.ndarray] = None  # (3,) m: point_2 in body_2's frame

    def to_json(self) -> dict:
        return {
            "body_1": self.body_1, "body_2": self.body_2,
            "shape_1": self.shape_1, "shape_2": self.shape_2,
            "distance": float(self.distance),
            "point_1": [float(x) for x in self.point_1],
            "point_2": [float(x) for x in self.point_2],
            "position": [float(x) for x in self.position],
            "normal": [float(x) for x in self.normal],
        }


class Data:
    """Every buffer one evaluation of a :class:`Model` writes (reused by every ``evaluate``),
    as record tables in one buffer (``buffer``; ``tables``: name -> table, see
    ``evaluate_kernel.DATA_TABLES``), with views of their fields:

    Kinematics (``kinematics``: the :class:`KinematicsState`): ``q (J,)`` joint positions
    (rad / m; coupled joints are overwritten by their coupling at each evaluation), ``velocity
    (J,)``; ``file_R (F,3,3)``, ``file_t (F,3)`` per-file root poses; ``body_R (B,3,3)``,
    ``body_t (B,3)`` body poses in world; ``joint_R (J,3,3)``, ``joint_t (J,3)`` joint
    transforms (child in parent); ``joint_axis``, ``joint_origin (J,3)`` every joint's unit axis
    and pivot in world; ``closure_residuals (K,2)`` position (m) and angle (rad) mismatch per
    closure joint.

    Shapes and pairs: ``world`` (all shapes in world, this Data's own :class:`WorldShapes`);
    ``results`` (the pairs' table) and its fields ``distance (P,)``, ``point_1``, ``point_2``,
    ``normal``, ``position`` (P,3); ``exact (P,)`` bool: False where
    ``evaluate(near_only=True)`` kept only a lower bound (an exact row whose two shapes did not
    move is kept by the next evaluation, bit for bit what recomputing it gives; setting
    ``exact`` False makes it computed again); ``shape_moved (N,)``: 1 for the shapes the last
    evaluation moved; ``contact_index (P,)``: its first
    entries are the last evaluation's contacts; per contact r (closest first): ``jacobians
    (P,J)`` row r, the distance Jacobian (m/rad or m/m, ``jacobians.py``), ``contacts`` row r
    (``distance_rate`` m/s, ``point_1_local``, ``point_2_local`` m, body frames).
    ``velocity_given``: True once :meth:`Model.set_joint_velocities` was called.
    """

    def __init__(self, model: "Model"):
        P, J, N = len(model.pairs), len(model.joint_names), len(model.shapes)
        K = len(model.closure_joint_names)
        files = np.zeros(len(model.world.files), POSE_DTYPE)
        for f, (R, t) in enumerate(model.world.file_poses):
            files[f] = (R, t)
        self.buffer, views = pack([
            np.zeros(J, JOINT_STATE_DTYPE), files, np.zeros(len(model.body_names), POSE_DTYPE),
            np.zeros((K, 2)), model.link_shapes.local.table, np.zeros(P, PAIR_RESULT_DTYPE),
            np.zeros(P, np.int64), np.zeros(P, CONTACT_DTYPE), np.zeros(P * J), np.ones(N, np.int64)])
        self.tables = dict(zip(DATA_TABLES, views))
        joints, files, bodies, residuals, world, results, contact_index, contacts, jac, moved = views
        self.kinematics = k = KinematicsState(joints, files, bodies, residuals)
        self.q, self.velocity, self.file_R, self.file_t = k.q, k.velocity, k.file_R, k.file_t
        self.body_R, self.body_t, self.joint_R, self.joint_t = k.body_R, k.body_t, k.joint_R, k.joint_t
        self.joint_axis, self.joint_origin = k.joint_axis, k.joint_origin
        self.closure_residuals = residuals
        self.world = WorldShapes(N, model.hulls, world)
        self.results = results
        self.distance, self.exact = results["distance"], results["exact"]
        self.point_1, self.point_2 = results["point_1"], results["point_2"]
        self.normal, self.position = results["normal"], results["position"]
        self.distance[...] = np.inf
        self.contact_index = contact_index
        self.contacts, self.jacobians = contacts, jac.reshape(P, J)
        self.shape_moved = moved
        self.velocity_given = False  # set_joint_velocities was called
        self.name_cache: dict = {}  # tuple of joint names -> (idx, keep, unknown, all in order)


class EvaluationResult:
    """Result of :meth:`Model.evaluate` (views of the ``Data`` buffers, valid until the next
    ``evaluate`` with the same ``Data``).

    ``min_distance`` (m, +inf when no pair is checked), ``closest`` (pair index or -1),
    ``pairs_checked``, ``distances (P,)``, ``contact_index`` (pair indices with distance below
    the report distance, closest first), ``contacts`` (list of :class:`ModelContact`, same
    order), ``body_R (B,3,3)``, ``body_t (B,3)``, ``world`` (all shapes in world, the
    Data's ``WorldShapes``), ``closure_residuals (K,2)`` position (m) and angle (rad) mismatch
    of each closure joint (``model.closure_joint_names``). Per contact (same order):
    ``jacobians (n,J)`` distance Jacobians (m/rad or m/m, columns ``model.joint_names``; coupled
    joints folded into their source, ``jacobians.py``), ``distance_rates (n,)`` m/s (J q_dot;
    0 when no velocities were set: ``rates_valid`` False), ``point_1_local``, ``point_2_local``
    (n,3) the witnesses in their bodies' frames (m).
    """

    def __init__(self, model: "Model", data: Data, n_contacts: int, closest: int,
                 min_distance: float):
        self._model, self._data = model, data
        self.pairs_checked = len(model.pairs)
        self.distances = data.distance
        self.body_R, self.body_t = data.body_R, data.body_t
        self.closure_residuals = data.closure_residuals
        self.world = data.world
        self.contact_index = data.contact_index[:n_contacts]
        self.rates_valid = data.velocity_given
        self.closest, self.min_distance = closest, min_distance
        self._contacts = None
        self._vectors = None

    # views made on demand (each costs about as much as the rest of this object)
    @property
    def jacobians(self) -> np.ndarray:
        return self._data.jacobians[:len(self.contact_index)]

    @property
    def distance_rates(self) -> np.ndarray:
        return self._data.contacts["distance_rate"][:len(self.contact_index)]

    @property
    def point_1_local(self) -> np.ndarray:
        return self._data.contacts["point_1_local"][:len(self.contact_index)]

    @property
    def point_2_local(self) -> np.ndarray:
        return self._data.contacts["point_2_local"][:len(self.contact_index)]

    @property
    def contact_vectors(self) -> np.ndarray:
        """``(n,4,3)``: point_1, point_2, position, normal of the reported contacts (m, world),
        closest first; made once per result (the contacts hold views of its rows)."""
        if self._vectors is None:
            rows = self._data.results[self.contact_index]
            self._vectors = np.stack([rows["point_1"], rows["point_2"], rows["position"],
                                      rows["normal"]], axis=1)
        return self._vectors

    @property
    def contacts(self) -> list:
        if self._contacts is None:
            idx = self.contact_index
            vec = self.contact_vectors  # each contact holds views of its own rows
            who = self._model.pair_contact_info
            out = []
            jac, rates = self.jacobians, self.distance_rates.tolist()
            local_1, local_2 = self.point_1_local, self.point_2_local
            for r, (k, dist) in enumerate(zip(idx.tolist(), self._data.distance[idx].tolist())):
                v = vec[r]
                out.append(ModelContact(*who[k], dist, v[0], v[1], v[2], v[3], jac[r], rates[r],
                                        local_1[r], local_2[r]))
            self._contacts = out
        return self._contacts

    def open_loops(self) -> list:
        """``[(closure joint name, position m, angle rad)]`` of the loops the joint state does not
        close: residual above ``LOOP_OPEN_POSITION`` or ``LOOP_OPEN_ANGLE`` (tolerances.py)."""
        names = self._model.closure_joint_names
        return [(names[n], float(p), float(a)) for n, (p, a) in enumerate(self.closure_residuals.tolist())
                if p > LOOP_OPEN_POSITION or a > LOOP_OPEN_ANGLE]

    def contacts_finite(self) -> bool:
        """True when every reported contact (distance, points, position, normal) is finite."""
        if not len(self.contact_index):
            return True
        rows = self._data.results[self.contact_index]
        return all(bool(np.isfinite(rows[f]).all())
                   for f in ("distance", "point_1", "point_2", "position", "normal"))

    def body_poses(self) -> dict:
        """``{qualified body name: (position (3,), quaternion [x,y,z,w])}`` in world."""
        q = matrix_to_quat(self.body_R)
        return {n: (self.body_t[k].copy(), q[k]) for k, n in enumerate(self._model.body_names)}


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
               if fnmatch.fnmatchcase(b.name, pattern) or fnmatch.fnmatchcase(b.plain_name, pattern)]
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
        self.hulls = self.link_shapes.hulls
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
               self.pair_environment.astype(np.int64)), writeable=False)
        self.tables = dict(zip(MODEL_TABLES, views))

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
                   couplings=None, namespaces=None, padding=None) -> "Model":
        """Load ADF files (see :func:`load_adf_files`: ``namespaces`` renames each file's bodies
        and joints) and compile. ``couplings``: a couplings YAML path or a sequence of rules
        (:mod:`couplings`). Raises ``AdfError`` (also :class:`CouplingError`, one of them)."""
        world = load_adf_files(paths, root_poses=root_poses, namespaces=namespaces)
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
                 environment_report_distance: Optional[float] = None) -> EvaluationResult:
        """Pose all bodies, compute all checked pairs' signed distances, report contacts below
        ``report_distance`` (m), closest first: one compiled call (``evaluate_kernel.py``).
        ``environment_report_distance`` (m, default ``report_distance``): the report distance of
        the robot-environment pairs (``pair_environment``); ``report_distance`` then applies
        to the self pairs.

        ``near_only=True`` (what the node uses): a pair proven farther than both
        ``report_distance`` and the smallest pair distance keeps a lower bound of its distance
        instead of the exact value (``data.exact`` is False for it). Contacts, ``min_distance``
        and ``closest`` are the same as with ``near_only=False``."""
        if root_poses is not None:
            self.set_root_poses(data, root_poses)
        report_distance = float(report_distance)
        environment = (report_distance if environment_report_distance is None
                       else float(environment_report_distance))
        if math.isnan(report_distance) or math.isnan(environment):
            raise ValueError("report_distance and environment_report_distance must be numbers "
                             f"(m), got {report_distance}, {environment}")
        n, closest, lowest = evaluate_model(self.buffer, data.buffer,
                                            max(report_distance, environment) if near_only else math.inf,
                                            report_distance, environment)
        return EvaluationResult(self, data, n, closest, lowest)


# Re-exported for callers that catch loader errors through the model module.
AdfError = AdfError
