"""Per-cycle buffers of a :class:`~ambf_collision.model.model.Model` (``Data``) and what one
evaluation returns (``EvaluationResult``; its contacts: ``contact_rows.py``).

Every buffer an evaluation writes lives in a ``Data``, so two ``Data`` of one ``Model`` never
interfere. Frames and units: metres, radians, world frame unless a name says otherwise;
``distance`` is signed (< 0: penetration).
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.pairs import PAIR_RESULT_DTYPE
from ambf_collision.geometry.tolerances import LOOP_OPEN_ANGLE, LOOP_OPEN_POSITION
from ambf_collision.geometry.transforms import matrix_to_quat
from ambf_collision.geometry.world_shapes import WorldShapes
from ambf_collision.model.evaluate_kernel import DATA_TABLES
from ambf_collision.model.contact_rows import (GEOMETRY_VALUES, ModelContact, contact_columns,
                                                contact_row_width, model_contacts)
from ambf_collision.model.kinematics import KinematicsState
from ambf_collision.model.kinematics_kernels import JOINT_STATE_DTYPE, POSE_DTYPE
from ambf_collision.model.table_buffer import pack

__all__ = ["Data", "EvaluationResult", "ModelContact", "report_distances"]


def report_distances(report_distance, environment_report_distance) -> tuple:
    """``(self pairs', robot-environment pairs')`` report distances (m) of an evaluation, as
    floats (the second defaults to the first); ValueError when either is NaN."""
    report_distance = float(report_distance)
    environment = (report_distance if environment_report_distance is None
                   else float(environment_report_distance))
    if math.isnan(report_distance) or math.isnan(environment):
        raise ValueError("report_distance and environment_report_distance must be numbers "
                         f"(m), got {report_distance}, {environment}")
    return report_distance, environment


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
    evaluation moved; ``contact_index (P,)``: its first entries are the last evaluation's
    contacts; ``contact_rows (P, 20 + J)``: row r holds contact r's values in message order
    (closest first; distance, world vectors, distance Jacobian, rate, body-frame witnesses:
    ``contact_rows.py``).
    ``velocity_given``: True once :meth:`Model.set_joint_velocities` was called. ``motion``:
    the buffers of :meth:`Model.evaluate_motion` (``motion.MotionBuffers``; None before its
    first call).
    """

    def __init__(self, model):
        """``model``: the compiled model (``model.py``) whose buffers this Data holds."""
        P, J, N = len(model.pairs), len(model.joint_names), len(model.shapes)
        K = len(model.closure_joint_names)
        files = np.zeros(len(model.world.files), POSE_DTYPE)
        for f, (R, t) in enumerate(model.world.file_poses):
            files[f] = (R, t)
        self.buffer, views = pack([
            np.zeros(J, JOINT_STATE_DTYPE), files, np.zeros(len(model.body_names), POSE_DTYPE),
            np.zeros((K, 2)), model.link_shapes.local.table, np.zeros(P, PAIR_RESULT_DTYPE),
            np.zeros(P, np.int64), np.zeros(P * contact_row_width(J)), np.ones(N, np.int64)])
        self.tables = dict(zip(DATA_TABLES, views))
        joints, files, bodies, residuals, world, results, contact_index, rows, moved = views
        self.kinematics = k = KinematicsState(joints, files, bodies, residuals)
        self.q, self.velocity, self.file_R, self.file_t = k.q, k.velocity, k.file_R, k.file_t
        self.body_R, self.body_t, self.joint_R, self.joint_t = k.body_R, k.body_t, k.joint_R, k.joint_t
        self.joint_axis, self.joint_origin = k.joint_axis, k.joint_origin
        self.closure_residuals = residuals
        self.world = WorldShapes(N, model.hulls, world, model.meshes)
        self.results = results
        self.distance, self.exact = results["distance"], results["exact"]
        self.point_1, self.point_2 = results["point_1"], results["point_2"]
        self.normal, self.position = results["normal"], results["position"]
        self.distance[...] = np.inf
        self.contact_index = contact_index
        self.contact_rows = rows.reshape(P, contact_row_width(J))
        self.shape_moved = moved
        self.velocity_given = False  # set_joint_velocities was called
        self.motion = None  # MotionBuffers of evaluate_motion (motion.py), made at its first call
        self.name_cache: dict = {}  # tuple of joint names -> (idx, keep, unknown, all in order)
        self.obstacle_buffers: dict = {}  # checked bodies -> (rows, nearest): obstacles.py


class EvaluationResult:
    """Result of :meth:`Model.evaluate` (views of the ``Data`` buffers, valid until the next
    ``evaluate`` with the same ``Data``, except the contacts' rows, copied once).

    ``min_distance`` (m, +inf when no pair is checked), ``closest`` (pair index or -1),
    ``pairs_checked``, ``distances (P,)``, ``contact_index`` (pair indices with distance below
    the report distance, closest first), ``body_R (B,3,3)``, ``body_t (B,3)``, ``world`` (all
    shapes in world, the Data's ``WorldShapes``), ``closure_residuals (K,2)`` position (m) and
    angle (rad) mismatch of each closure joint (``model.closure_joint_names``).

    The reported contacts (same order): ``contact_rows (n, 20 + J)`` their values in message
    order (``contact_rows.py``), ``contact_info`` their ``(body_1, body_2, shape_1, shape_2)``,
    ``contacts`` the same as :class:`ModelContact` records; views of the rows:
    ``contact_vectors (n,4,3)`` point_1, point_2, position, normal (m, world), ``jacobians
    (n,J)`` distance Jacobians (m/rad or m/m, columns ``model.joint_names``; coupled joints
    folded into their source, ``jacobians.py``), ``distance_rates (n,)`` m/s (J q_dot; 0 when
    no velocities were set: ``rates_valid`` False), ``point_1_local``, ``point_2_local`` (n,3)
    the witnesses in their bodies' frames (m).

    ``obstacles``: per cloud given to ``evaluate``, its
    :class:`~ambf_collision.model.obstacles.ObstacleContacts` (their own rows and names; not in
    the pairs' contacts above, nor in ``min_distance``).
    """

    def __init__(self, model, data: Data, n_contacts: int, closest: int,
                 min_distance: float, obstacles: tuple = ()):
        self._model, self._data = model, data
        self.obstacles = obstacles
        self.pairs_checked = len(model.pairs)
        self.distances = data.distance
        self.body_R, self.body_t = data.body_R, data.body_t
        self.closure_residuals = data.closure_residuals
        self.world = data.world
        self.contact_index = data.contact_index[:n_contacts]
        self.rates_valid = data.velocity_given
        self.closest, self.min_distance = closest, min_distance
        self._rows = None
        self._contacts = None

    @property
    def contact_rows(self) -> np.ndarray:
        """``(n, 20 + J)``: copied from the Data once per result (it stays when the Data's next
        evaluation overwrites its rows)."""
        if self._rows is None:
            self._rows = self._data.contact_rows[:len(self.contact_index)].copy()
        return self._rows

    @property
    def contact_info(self) -> list:
        """``[(body_1, body_2, shape_1, shape_2)]`` per contact (``Model.pair_contact_info``)."""
        who = self._model.pair_contact_info
        return [who[k] for k in self.contact_index.tolist()]

    @property
    def contacts(self) -> list:
        if self._contacts is None:
            self._contacts = model_contacts(self.contact_info, self.contact_rows)
        return self._contacts

    @property
    def contact_vectors(self) -> np.ndarray:
        return self.contact_rows[:, 1:GEOMETRY_VALUES].reshape(-1, 4, 3)

    @property
    def jacobians(self) -> np.ndarray:
        return contact_columns(self.contact_rows).jacobian

    @property
    def distance_rates(self) -> np.ndarray:
        return contact_columns(self.contact_rows).distance_rate

    @property
    def point_1_local(self) -> np.ndarray:
        return contact_columns(self.contact_rows).point_1_local

    @property
    def point_2_local(self) -> np.ndarray:
        return contact_columns(self.contact_rows).point_2_local

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
