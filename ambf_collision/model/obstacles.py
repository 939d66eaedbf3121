"""Sensed obstacles: a point cloud's contacts with the robot's bodies, with Jacobians.

A sensor (a depth camera, a stereo endoscope, a lidar) sees things no ADF file describes. An
:class:`ObstacleSource` is one such sensor, compiled once against a :class:`Model`: its name,
the bodies checked against it (every robot body by default; fnmatch patterns as for padding),
its points' radius (m: each point is a ball) and the filters of its clouds (voxel size, range
from the sensor, m). :meth:`ObstacleSource.cloud` builds a :class:`PointCloudObstacle` per cloud:
the points given in the sensor's frame with the sensor's pose in world at the cloud's stamp
(``x_world = R x + t``), as a :class:`~ambf_collision.geometry.point_set.PointSet` in world.

``Model.evaluate(data, ..., obstacles=[cloud, ...])`` then gives, per checked body and cloud,
**one contact**: the body's exact signed distance (m) to the nearest ball of the cloud, over
the body's shapes (each grown by the body's padding, as in the pairs), when it is below the
source's report distance. Its row is that of every contact (``contact_rows.py``, written by the
evaluation's own row writer, ``jacobians.write_contact_row``):

* ``point_1`` on the body's shape, ``point_2`` on the point's ball, ``normal`` from the body to
  the point (world), ``position`` their midpoint;
* ``jacobian``: the distance's derivative along the body's joints (the point is fixed in world:
  no joint moves it), ``distance_rate`` = ``jacobian . velocities``;
* ``point_1_local`` in the body's frame, ``point_2_local`` in the **sensor's** frame (the
  frame the cloud was given in).

Who: ``(body, "source:<name>", shape index within the body, input row of the point)``. One
compiled call per cloud (:func:`obstacle_rows`), after the evaluation's own.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import numpy as np
from numba import njit

from ambf_collision.geometry.point_query import PointTree, nearest_ball
from ambf_collision.geometry.point_set import (BuildScratch, PointSet, checked_array,
                                                checked_length)
from ambf_collision.model.contact_rows import contact_row_width
from ambf_collision.model.evaluate_kernel import data_tables, model_tables
from ambf_collision.model.names import name_matches
from ambf_collision.model.jacobians import write_contact_row

__all__ = ["ObstacleSource", "PointCloudObstacle", "ObstacleContacts", "obstacle_rows",
           "evaluate_obstacles", "robot_bodies", "robot_shapes", "SOURCE_PREFIX"]

SOURCE_PREFIX = "source:"
"""``body_2`` of an obstacle contact: this prefix and the source's name."""


@njit(cache=True, error_model="numpy")
def obstacle_rows(model, data, points, index, nodes, boxes, radius, shapes, shape_slot, padding,
                  body_of_slot, cutoff, sensor_R, sensor_t, rows, nearest):
    """Per slot (a checked body) the nearest ball of the point tree ``(points, index, nodes,
    boxes)`` (world, radius ``radius`` m) over the slot's shapes: ``shapes (S,)`` shape indices,
    ``shape_slot (S,)`` their slot, ``padding (S,)`` their body's padding (m);
    ``body_of_slot (B,)``. The Data's shapes must be posed (after the evaluation). Writes
    ``rows (B, 20 + J)`` (``contact_rows.py``; ``point_2_local`` in the sensor's frame
    ``(sensor_R, sensor_t)``) and ``nearest (B, 2)``: the shape index and the point's input row
    (-1, -1 and a +inf distance when no ball is within ``cutoff`` m of the slot)."""
    K, link, C, H, M, pair_bodies, pair_environment = model_tables(model)
    D, velocity, W, R, contact_index, contact_rows, moved = data_tables(data)
    T = PointTree(points, index, nodes, boxes)
    B = rows.shape[0]
    best = np.full(B, math.inf)
    witness = np.zeros((3, B, 3))   # per slot: point_1, point_2, normal of its best
    nearest[:, :] = -1
    for i in range(shapes.shape[0]):
        k, b, pad = shapes[i], shape_slot[i], padding[i]
        d, row, y, x, n, evals = nearest_ball(W, H, M, T, C.centre, C.outer, k, radius + pad,
                                              min(cutoff, best[b]))
        if row < 0 or d >= best[b]:   # ties: the slot's first shape
            continue
        best[b] = d
        nearest[b, 0], nearest[b, 1] = k, row
        for a in range(3):   # grown by the padding: both witnesses move out along n
            witness[0, b, a] = y[a] + pad * n[a]
            witness[1, b, a] = x[a] + pad * n[a]
            witness[2, b, a] = n[a]
    local = rows.shape[1] - 3
    for b in range(B):
        if nearest[b, 0] < 0:
            rows[b, 0] = math.inf
            continue
        write_contact_row(K, D, velocity, body_of_slot[b], -1, best[b], witness[0], witness[1],
                          witness[2], b, rows[b])
        for c in range(3):   # point_2 in the sensor's frame: R^T (x - t)
            v = 0.0
            for a in range(3):
                v += sensor_R[a, c] * (witness[1, b, a] - sensor_t[a])
            rows[b, local + c] = v


def robot_bodies(model) -> list:
    """The **robot bodies** (model order): those with a shape that share their kinematic tree
    (``Model.body_tree``) with another body: the links of an arm, not a static floor or table,
    which a camera sees as well. With no robot in the model, every body with a shape."""
    with_shapes = sorted(set(model.shape_body.tolist()))
    size = np.bincount(model.body_tree, minlength=len(model.body_names))
    return [b for b in with_shapes if size[model.body_tree[b]] > 1] or with_shapes


def robot_shapes(model) -> np.ndarray:
    """``(S,) int64``: the shapes of the :func:`robot_bodies`."""
    robot = set(robot_bodies(model))
    return np.array([k for k, b in enumerate(model.shape_body.tolist()) if b in robot], np.int64)


def _checked_bodies(model, bodies) -> list:
    """Body indices (model order) matching ``bodies`` (fnmatch patterns on qualified or plain
    names of bodies with a shape; None: :func:`robot_bodies`). ValueError naming a pattern that
    matches none."""
    if bodies is None:
        return robot_bodies(model)
    with_shapes = sorted(set(model.shape_body.tolist()))
    chosen = set()
    for pattern in bodies:
        hit = [b for b in with_shapes
               if name_matches(pattern, model.body_names[b], model.body_plain_names[b])]
        if not hit:
            raise ValueError(f"bodies: {pattern!r} matches no body with a shape")
        chosen.update(hit)
    return sorted(chosen)


class ObstacleSource:
    """One sensor's obstacles against a :class:`Model` (module docstring), constant.

    ``name``: the source (``body_2`` of its contacts is ``source:<name>``); ``bodies``: fnmatch
    patterns of the bodies checked (None: every robot body, :func:`_checked_bodies`); ``report_distance``
    (m; None: the evaluation's ``environment_report_distance``); ``point_radius``,
    ``voxel_size``, ``min_range``, ``max_range`` (m) as for
    :class:`~ambf_collision.geometry.point_set.PointSet` (the range measured from the sensor's
    origin). Attributes: ``body_indices (B,)``, ``shapes (S,)`` the checked shapes, and those
    arguments. ValueError naming the source and the key for a bad value."""

    def __init__(self, model, name: str, bodies=None, report_distance: Optional[float] = None,
                 point_radius: float = 0.0, voxel_size: float = 0.0, min_range: float = 0.0,
                 max_range: float = math.inf):
        if not isinstance(name, str) or not name:
            raise ValueError(f"obstacle source name must be a non-empty string, got {name!r}")
        self.name = name
        self.body_2 = SOURCE_PREFIX + name
        self.model = model
        self.report_distance = (None if report_distance is None
                                else float(report_distance))
        if self.report_distance is not None and math.isnan(self.report_distance):
            raise ValueError(f"obstacle source {name!r}: report_distance must be a number (m)")
        who = f"obstacle source {name!r}"
        self.point_radius = checked_length(who, "point_radius", point_radius)
        self.voxel_size = checked_length(who, "voxel_size", voxel_size)
        self.min_range = checked_length(who, "min_range", min_range)
        self.max_range = checked_length(who, "max_range", max_range, allow_inf=True)
        if self.min_range > self.max_range:
            raise ValueError(f"obstacle source {name!r}: min_range {self.min_range} > "
                             f"max_range {self.max_range}")
        try:
            self.body_indices = np.array(_checked_bodies(model, bodies), dtype=np.int64)
        except ValueError as err:
            raise ValueError(f"obstacle source {name!r}: {err}") from None
        slot = {b: i for i, b in enumerate(self.body_indices.tolist())}
        shapes = [k for k, b in enumerate(model.shape_body.tolist()) if b in slot]
        self.shapes = np.array(shapes, dtype=np.int64)
        self.shape_slot = np.array([slot[b] for b in model.shape_body[shapes].tolist()],
                                   dtype=np.int64)
        self.padding = np.ascontiguousarray(model.body_padding[model.shape_body[shapes]],
                                            dtype=np.float64)
        self._shape_index = [model.shape_info[k].index for k in range(len(model.shapes))]
        for a in (self.body_indices, self.shapes, self.shape_slot, self.padding):
            a.flags.writeable = False

    def cloud(self, points, sensor_pose=None, scratch: Optional[BuildScratch] = None
              ) -> "PointCloudObstacle":
        """The obstacle of one cloud: ``points (N,3)`` (m) in the sensor's frame, whose pose in
        world at the cloud's stamp is ``sensor_pose = (R (3,3), t (3,))`` (None: the points are
        in world), applied in the compiled build. NaN points are dropped and counted
        (``PointSet``); ``scratch`` as there."""
        R, t = (np.eye(3), np.zeros(3)) if sensor_pose is None else sensor_pose
        owner = f"obstacle source {self.name!r}"
        R = checked_array(owner, "sensor pose rotation", np.reshape(R, (3, 3)), (3, 3), unit="")
        t = checked_array(owner, "sensor pose translation", np.reshape(t, 3), (3,))
        P = np.asarray(points, dtype=np.float64)
        if P.ndim != 2 or P.shape[1] != 3:
            raise ValueError(f"obstacle source {self.name!r}: points must be an (N, 3) array, "
                             f"got shape {P.shape}")
        use_range = self.min_range > 0.0 or math.isfinite(self.max_range)
        point_set = PointSet(P, self.point_radius, self.voxel_size,
                             origin=t if use_range else None, min_range=self.min_range,
                             max_range=self.max_range, scratch=scratch, pose=(R, t))
        return PointCloudObstacle(self, point_set, R, t)

    def contact_info(self, nearest) -> list:
        """``[(body_1, body_2, shape_1, shape_2)]`` of rows ``nearest (n, 2)`` (shape index,
        point's input row): ``shape_2`` is the point's input row in the cloud."""
        names = self.model.shape_info
        return [(names[k].body, self.body_2, self._shape_index[k], row)
                for k, row in nearest.tolist()]


class PointCloudObstacle(NamedTuple):
    """One cloud of an :class:`ObstacleSource`: its ``point_set`` (world) and the sensor's pose
    ``R (3,3)``, ``t (3,)`` in world."""

    source: ObstacleSource
    point_set: PointSet
    R: np.ndarray
    t: np.ndarray


class ObstacleContacts(NamedTuple):
    """The contacts of one cloud, closest first: ``info`` ``[(body, "source:<name>", shape
    index within the body, point's input row)]``, ``rows (n, 20 + J)`` (``contact_rows.py``),
    ``points (n,) int64`` the points' input rows; ``min_distance`` (m: the first row's; +inf
    when no body is within the report distance)."""

    source: str
    info: list
    rows: np.ndarray
    points: np.ndarray
    min_distance: float


def evaluate_obstacles(model, data, obstacles, report_distance: float) -> tuple:
    """The :class:`ObstacleContacts` of each cloud of ``obstacles`` at the Data's posed shapes
    (after the evaluation): one compiled call per cloud. ``report_distance`` (m): for sources
    without their own."""
    out = []
    width = contact_row_width(len(model.joint_names))
    buffers = data.obstacle_buffers
    for cloud in obstacles:
        source = cloud.source
        if source.model.shapes is not model.shapes:   # with_overrides shares them
            raise ValueError(f"obstacle source {source.name!r} was made for another model")
        B = len(source.body_indices)
        if B not in buffers:   # by size: every call's rows are copied out before the next
            buffers[B] = (np.empty((B, width)), np.empty((B, 2), np.int64))
        rows, nearest = buffers[B]
        limit = report_distance if source.report_distance is None else source.report_distance
        ps = cloud.point_set
        obstacle_rows(model.buffer, data.buffer, ps.points, ps.index, ps.nodes, ps.boxes,
                      ps.point_radius, source.shapes, source.shape_slot, source.padding,
                      source.body_indices, limit, cloud.R, cloud.t, rows, nearest)
        distance = rows[:, 0]
        hit = np.flatnonzero(distance < limit)
        if len(hit) > 1:
            hit = hit[np.argsort(distance[hit], kind="stable")]
        out.append(ObstacleContacts(source.name, source.contact_info(nearest[hit]),
                                    rows[hit], nearest[hit, 1],
                                    float(distance[hit[0]]) if len(hit) else math.inf))
    return tuple(out)
