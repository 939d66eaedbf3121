"""The monitor's sensed obstacles (no ROS): per source its latest cloud, self-filtered.

A **source** (:class:`SourceSpec`) is a sensor the node subscribes to (``obstacle_sources``:
``camera.topic``, ``camera.point_radius``, ...). Each cloud arrives with its points in the
sensor's frame and the sensor's pose in world at the cloud's stamp (the node resolves it by TF).
:meth:`ObstacleSources.on_cloud`:

1. builds the cloud's point set in world (``model/obstacles.py``: NaN points dropped, the range
   and voxel filters);
2. **self filter**: removes the points within ``self_filter_padding`` (m) of the robot's own
   shapes (every robot body, whichever bodies the source checks) posed at the cloud's stamp, so that the robot never
   collides with its own image (MoveIt's occupancy map monitor does the same). The joint
   positions at the stamp are interpolated linearly between the two evaluated states around it
   (:class:`JointHistory`; the oldest or the newest kept when the stamp lies outside); the
   roots stay at their current poses;
3. keeps the filtered set as the source's obstacle for every evaluation until the next cloud.

A source whose newest cloud's stamp is older than its ``source_timeout`` (s) is **stale**: its
cloud is no longer used and the status says so (``STALE_SOURCE``, :mod:`.status`); so is a
source from which no cloud came for ``source_timeout`` since the monitor started.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

from ambf_collision.geometry.point_filter import points_near_shapes
from ambf_collision.geometry.point_query import shape_bounds
from ambf_collision.geometry.point_set import BuildScratch, PointSet
from ambf_collision.model.obstacles import ObstacleSource, robot_shapes
from ambf_collision.monitor.continuous import touch_fractions

__all__ = ["SourceSpec", "CloudNote", "JointHistory", "ObstacleSources", "with_obstacles"]


@dataclass(frozen=True)
class SourceSpec:
    """One source's parameters (m, s): ``name``; ``point_radius`` (each point a ball);
    ``voxel_size`` (0 keeps every point); ``min_range``, ``max_range`` (from the sensor);
    ``source_timeout`` (s; 0: never stale); ``self_filter_padding`` (m; points this near the
    robot are its own image); ``bodies`` (fnmatch patterns of the checked bodies; empty: every
    robot body); ``report_distance`` (m; < 0: the environment pairs' report distance)."""

    name: str
    point_radius: float = 0.0
    voxel_size: float = 0.0
    min_range: float = 0.0
    max_range: float = math.inf
    source_timeout: float = 1.0
    self_filter_padding: float = 0.02
    bodies: tuple = ()
    report_distance: float = -1.0

    def validate(self) -> None:
        """ValueError naming the source and the key for a value out of range."""
        for key in ("source_timeout", "self_filter_padding"):
            v = getattr(self, key)
            if not (math.isfinite(v) and v >= 0.0):
                raise ValueError(f"obstacle source {self.name!r}: {key} must be finite and "
                                 f">= 0, got {v!r}")


class CloudNote(NamedTuple):
    """What one cloud gave: points received, kept, and dropped per reason."""

    received: int
    kept: int
    nonfinite: int
    out_of_range: int
    voxel_merged: int
    self_filtered: int

    def text(self) -> str:
        return (f"{self.kept} of {self.received} points kept ({self.nonfinite} not finite, "
                f"{self.out_of_range} out of range, {self.voxel_merged} merged by the voxel "
                f"filter, {self.self_filtered} on the robot)")


class JointHistory:
    """The last ``size`` evaluated joint states ``(stamp s, q (J,))`` in a ring, for the robot's
    pose at a cloud's stamp (:meth:`at`)."""

    def __init__(self, n_joints: int, size: int = 256):
        self.stamps = np.full(size, -math.inf)
        self.q = np.zeros((size, n_joints))
        self.count = 0

    def add(self, stamp: float, q) -> None:
        i = self.count % len(self.stamps)
        self.stamps[i], self.q[i] = stamp, q
        self.count += 1

    def at(self, stamp: float) -> Optional[np.ndarray]:
        """``q`` at ``stamp``, linear between the two kept states around it (the oldest or the
        newest outside them); None before the first state."""
        n = min(self.count, len(self.stamps))
        if n == 0:
            return None
        order = np.argsort(self.stamps[:n], kind="stable")
        s, q = self.stamps[:n][order], self.q[:n][order]
        i = int(np.searchsorted(s, stamp))
        if i == 0:
            return q[0].copy()
        if i == n:
            return q[-1].copy()
        w = (stamp - s[i - 1]) / (s[i] - s[i - 1])
        return (1.0 - w) * q[i - 1] + w * q[i]


class _Source:
    """One source's compiled part and its newest cloud."""

    def __init__(self, model, spec: SourceSpec):
        spec.validate()
        self.spec = spec
        self.obstacle = ObstacleSource(
            model, spec.name, bodies=list(spec.bodies) or None,
            report_distance=None if spec.report_distance < 0.0 else spec.report_distance,
            point_radius=spec.point_radius, voxel_size=spec.voxel_size,
            min_range=spec.min_range, max_range=spec.max_range)
        # where clouds are built: the newest cloud's set lives in one, the next cloud's is built
        # in another and its self-filtered set made in the third (no new arrays per cloud)
        self.scratches = (BuildScratch(), BuildScratch(), BuildScratch())
        self.cloud = None        # PointCloudObstacle of the newest cloud, or None
        self.stamp = -math.inf   # its stamp (s)
        self.removed = np.zeros(0, np.int64)   # input rows the self filter removed
        self.removed_points = np.zeros((0, 3))   # and those points in world (m), for markers


class ObstacleSources:
    """The sources of one model (module docstring): ``specs`` a sequence of
    :class:`SourceSpec` (unique names); ``started`` (s): when the monitor started (a source
    that never sent a cloud is stale ``source_timeout`` after it; NaN: at the first
    :meth:`stale` or :meth:`fresh`)."""

    def __init__(self, model, specs=(), started: float = math.nan):
        names = [s.name for s in specs]
        if len(set(names)) != len(names):
            raise ValueError(f"obstacle_sources: names must be unique, got {names}")
        self.model = model
        self.sources = {s.name: _Source(model, s) for s in specs}
        self.history = JointHistory(len(model.joint_names) if specs else 0)
        self.started = float(started)
        if specs:   # (a monitor without sources may run a stand-in model)
            self._filter_data = data = model.create_data()
            self._root_R, self._root_t = data.file_R.copy(), data.file_t.copy()
            self._robot_shapes = robot_shapes(model)
            self._bounds = shape_bounds(data.world)   # local frames: constant (40 us a call)

    def __bool__(self) -> bool:
        return bool(self.sources)

    def on_cloud(self, name: str, points, sensor_pose, stamp: float) -> CloudNote:
        """Take a cloud of source ``name``: ``points (N,3)`` (m, sensor frame; NaN allowed),
        ``sensor_pose = (R, t)`` the sensor in world at ``stamp`` (s). Returns its
        :class:`CloudNote`. ValueError for an unknown source or a malformed array (the source
        keeps its previous cloud then)."""
        if name not in self.sources:
            raise ValueError(f"obstacle source {name!r} is not configured")
        src = self.sources[name]
        in_use = src.cloud.point_set if src.cloud is not None else None
        build, rest = [s for s in src.scratches if not s.holds(in_use)][:2]
        cloud = src.obstacle.cloud(points, sensor_pose, scratch=build)
        ps = cloud.point_set
        mine = self._self_filter(src, ps, float(stamp))
        removed = ps.index[mine]
        if len(removed):   # the rest in a new tree (a tree holds no holes)
            cloud = cloud._replace(point_set=ps.subset(~mine, rest))
        src.cloud, src.stamp, src.removed = cloud, float(stamp), removed
        src.removed_points = ps.points[mine]
        return CloudNote(ps.n_input, len(cloud.point_set), ps.n_nonfinite, ps.n_out_of_range,
                         ps.n_voxel_merged, len(removed))

    def _self_filter(self, src: _Source, point_set: PointSet, stamp: float) -> np.ndarray:
        """``(len(point_set),) bool`` (tree order): the points within the source's padding of the robot's shapes
        (``model/obstacles.robot_shapes``, whichever bodies the source checks) at the robot's
        pose at ``stamp``."""
        if not len(point_set) or not len(self._robot_shapes):
            return np.zeros(len(point_set), dtype=bool)
        data, model = self._filter_data, self.model
        q = self.history.at(stamp)
        if q is not None:
            model.set_joint_positions(data, model.joint_names, q)
        data.file_R[...], data.file_t[...] = self._root_R, self._root_t
        model.evaluate(data, report_distance=-math.inf, near_only=True)
        return points_near_shapes(point_set, data.world, self._robot_shapes,
                                  src.spec.self_filter_padding, bounds=self._bounds)

    def evaluated(self, stamp: float, q, file_R, file_t) -> None:
        """The monitor evaluated the state ``q`` at ``stamp`` with these root poses."""
        self.history.add(stamp, q)
        self._root_R, self._root_t = file_R, file_t

    def fresh(self, now: float) -> list:
        """The clouds to use at ``now``: those of the sources that are not stale."""
        return [s.cloud for s in self.sources.values()
                if s.cloud is not None and not self._stale(s, now)]

    def stale(self, now: float) -> list:
        """``[(name, age s)]`` of the stale sources at ``now``, oldest first (age +inf: no
        cloud yet)."""
        old = [(s.spec.name, now - s.stamp if s.cloud is not None else math.inf)
               for s in self.sources.values() if self._stale(s, now)]
        return sorted(old, key=lambda item: -item[1])

    def _stale(self, src: _Source, now: float) -> bool:
        if math.isnan(self.started):
            self.started = float(now)
        timeout = src.spec.source_timeout
        if timeout <= 0.0:
            return False
        if src.cloud is None:
            return now - self.started > timeout
        return now - src.stamp > timeout

    def rebase(self, now: float) -> None:
        """The clock jumped back to ``now``: clouds stamped after it are dropped, and the
        never-received timeouts count from ``now``."""
        self.started = float(now)
        for s in self.sources.values():
            if s.stamp > now:
                s.cloud, s.stamp = None, -math.inf
        self.history = JointHistory(len(self.model.joint_names))



def with_obstacles(info: list, rows: np.ndarray, fractions, swept, obstacles) -> tuple:
    """``(info, rows, fractions, swept)``: the pairs' contacts (``fractions``/``swept`` None
    for a state-only evaluation) and every cloud's (:class:`~ambf_collision.model.obstacles.
    ObstacleContacts`: evaluated at the state, so touching ones at fraction 0, never swept)
    in one list, ordered by distance (stable: pairs first on a tie)."""
    if fractions is None:
        fractions, swept = touch_fractions(rows), np.zeros(len(info), dtype=bool)
    found = [o for o in obstacles if len(o.info)]
    info = list(info) + [who for o in found for who in o.info]
    rows = np.concatenate([rows] + [o.rows for o in found])
    fractions = np.concatenate([fractions] + [touch_fractions(o.rows) for o in found])
    swept = np.concatenate([swept] + [np.zeros(len(o.info), dtype=bool) for o in found])
    order = np.argsort(rows[:, 0], kind="stable")
    return [info[i] for i in order.tolist()], rows[order], fractions[order], swept[order]
