"""Sensed obstacles in the evaluation (``model/obstacles.py``): each checked body's contact with
a point cloud.

Oracles: brute force over every point and every shape of a body with the package's point
kernel (``point_signed_distance_batch``), called from Python on the evaluation's posed shapes;
central finite differences of the body's distance for the Jacobian; the body and sensor poses
for the local witnesses; the ADF's own padding arithmetic (distance drops by the padding).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import DEMO_ARM

from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.model import Model, ObstacleSource

TOL = 1e-12   # m


def sensor_pose(rng):
    q = rng.normal(size=4)
    return quat_to_matrix(q / np.linalg.norm(q)), rng.uniform(-0.3, 0.3, 3)


def arm_and_cloud(seed, n=3000, padding=None):
    """The demo arm at random joint positions and a cloud around it in a random sensor frame:
    ``(model, data, points in the sensor frame, (R, t), points in world)``."""
    rng = np.random.default_rng(seed)
    m = Model.from_files([DEMO_ARM], padding=padding)
    d = m.create_data()
    m.set_joint_positions(d, m.joint_names, rng.uniform(-1.0, 1.0, len(m.joint_names)))
    m.evaluate(d)
    lo, hi = d.body_t.min(axis=0) - 0.3, d.body_t.max(axis=0) + 0.3
    world = rng.uniform(lo, hi, (n, 3))
    R, t = sensor_pose(rng)
    return m, d, (world - t) @ R, (R, t), world


def brute_force(model, data, body, world_points, radius, padding=0.0):
    """``(distance, shape, row)`` of the nearest ball to body ``body``: every shape, every point."""
    best = (math.inf, -1, -1)
    for k in np.flatnonzero(model.shape_body == body):
        dist = point_signed_distance_batch(data.world, None, np.full(len(world_points), k),
                                           world_points)[0] - radius - padding
        i = int(np.argmin(dist))
        if dist[i] < best[0]:
            best = (float(dist[i]), int(k), i)
    return best


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_every_body_gets_its_nearest_ball_as_brute_force_does(seed):
    m, d, P, pose, world = arm_and_cloud(seed)
    source = ObstacleSource(m, "camera", point_radius=0.004)
    r = m.evaluate(d, report_distance=10.0, obstacles=[source.cloud(P, pose)])
    (found,) = r.obstacles
    assert found.source == "camera" and len(found.info) == len(source.body_indices) > 3
    assert list(found.rows[:, 0]) == sorted(found.rows[:, 0])
    for (body, name, shape, row), values, point in zip(found.info, found.rows, found.points):
        b = m.body_index(body)
        dist, k, i = brute_force(m, d, b, world, 0.004)
        assert name == "source:camera" and row == point == i
        assert abs(values[0] - dist) <= TOL and m.shape_info[k].index == shape
        p1, p2, normal = values[1:4], values[4:7], values[10:13]
        np.testing.assert_allclose(p2 - p1, dist * normal, atol=1e-9)
        np.testing.assert_allclose(p2, world[i] - 0.004 * normal, atol=1e-9)
        np.testing.assert_allclose(values[7:10], 0.5 * (p1 + p2), atol=1e-15)
        J = len(m.joint_names)
        local_1, local_2 = values[14 + J:17 + J], values[17 + J:]
        np.testing.assert_allclose(d.body_R[b] @ local_1 + d.body_t[b], p1, atol=1e-12)
        np.testing.assert_allclose(pose[0] @ local_2 + pose[1], p2, atol=1e-12)


def test_jacobian_and_rate_match_central_differences():
    """One point: the body's distance to it, differentiated over every joint."""
    m, d, P, pose, world = arm_and_cloud(5, n=1)
    q = d.q.copy()
    source = ObstacleSource(m, "camera", point_radius=0.01)
    cloud = source.cloud(P, pose)
    r = m.evaluate(d, report_distance=10.0, obstacles=[cloud])
    rows, info = r.obstacles[0].rows, r.obstacles[0].info
    J = len(m.joint_names)
    h = 1e-6
    fd = np.zeros((len(rows), J))
    for j in range(J):
        for sign in (1.0, -1.0):
            qq = q.copy()
            qq[j] += sign * h
            m.set_joint_positions(d, m.joint_names, qq)
            again = m.evaluate(d, report_distance=10.0, obstacles=[cloud]).obstacles[0]
            by_body = {who[0]: v[0] for who, v in zip(again.info, again.rows)}
            fd[:, j] += sign * np.array([by_body[who[0]] for who in info]) / (2 * h)
    jac = rows[:, 13:13 + J]
    assert np.abs(jac).max() > 0.05
    np.testing.assert_allclose(jac, fd, atol=2e-6)
    velocity = np.linspace(-1.0, 1.0, J)
    m.set_joint_positions(d, m.joint_names, q)
    m.set_joint_velocities(d, m.joint_names, velocity)
    rows = m.evaluate(d, report_distance=10.0, obstacles=[cloud]).obstacles[0].rows
    np.testing.assert_allclose(rows[:, 13 + J], rows[:, 13:13 + J] @ velocity, atol=1e-12)


def test_report_distance_bodies_and_padding():
    m, d, P, pose, world = arm_and_cloud(3)
    everything = ObstacleSource(m, "cam", point_radius=0.0)
    all_rows = m.evaluate(d, report_distance=10.0, obstacles=[everything.cloud(P, pose)]).obstacles[0]
    limit = float(np.median(all_rows.rows[:, 0]))
    # the environment report distance by default, the source's own when given; strictly below
    near = m.evaluate(d, report_distance=10.0, environment_report_distance=limit,
                      obstacles=[everything.cloud(P, pose)]).obstacles[0]
    assert list(near.rows[:, 0]) == [v for v in all_rows.rows[:, 0] if v < limit]
    own = ObstacleSource(m, "cam", report_distance=limit)
    again = m.evaluate(d, report_distance=10.0, obstacles=[own.cloud(P, pose)]).obstacles[0]
    np.testing.assert_array_equal(again.rows, near.rows)
    # some bodies only, by pattern
    first = all_rows.info[0][0]
    only = ObstacleSource(m, "cam", bodies=[first])
    picked = m.evaluate(d, report_distance=10.0, obstacles=[only.cloud(P, pose)]).obstacles[0]
    assert [w[0] for w in picked.info] == [first]
    np.testing.assert_array_equal(picked.rows[0], all_rows.rows[0])
    # padding: the distance drops by the body's padding, both witnesses move out along n
    padded = Model.from_files([DEMO_ARM], padding={first: 0.02})
    pd = padded.create_data()
    padded.set_joint_positions(pd, padded.joint_names, d.q)
    grown = padded.evaluate(pd, report_distance=10.0,
                            obstacles=[ObstacleSource(padded, "cam").cloud(P, pose)]).obstacles[0]
    row = grown.rows[[w[0] for w in grown.info].index(first)]
    base = all_rows.rows[0]
    assert abs(row[0] - (base[0] - 0.02)) <= TOL
    np.testing.assert_allclose(row[1:4], base[1:4] + 0.02 * base[10:13], atol=1e-12)
    np.testing.assert_allclose(row[4:7], base[4:7], atol=1e-12)


def test_points_on_and_inside_a_body_empty_and_nonfinite_clouds():
    m, d, P, pose, world = arm_and_cloud(4, n=10)
    source = ObstacleSource(m, "cam")
    body = int(m.shape_body[0])
    inside = d.world.a[0]   # the first shape's own origin (inside a solid)
    r = m.evaluate(d, report_distance=10.0,
                   obstacles=[source.cloud(np.array([inside, [np.nan, 0, 0]]))]).obstacles[0]
    dist, k, i = brute_force(m, d, body, np.array([inside]), 0.0)
    got = r.rows[[w[0] for w in r.info].index(m.body_names[body])]
    assert dist < 0 and abs(got[0] - dist) <= TOL
    empty = m.evaluate(d, obstacles=[source.cloud(np.zeros((0, 3)))]).obstacles[0]
    assert empty.info == [] and empty.rows.shape == (0, 20 + len(m.joint_names))
    assert empty.min_distance == math.inf


@pytest.mark.parametrize("kwargs, match", [
    (dict(name=""), "name"), (dict(bodies=["no_such_body"]), "matches no body"),
    (dict(point_radius=-1.0), "point_radius"), (dict(voxel_size=math.nan), "voxel_size"),
    (dict(min_range=2.0, max_range=1.0), "min_range"),
    (dict(report_distance=math.nan), "report_distance")])
def test_bad_sources_are_refused_with_the_key(kwargs, match):
    m = Model.from_files([DEMO_ARM])
    args = dict(name="cam") | kwargs
    with pytest.raises(ValueError, match=match):
        ObstacleSource(m, **args)


@pytest.mark.parametrize("pose, match", [
    ((np.full((3, 3), np.nan), np.zeros(3)), "'cam': sensor pose rotation must be 3x3 finite"),
    ((np.eye(3), [0.0, math.inf, 0.0]), "'cam': sensor pose translation must be 3 finite")])
def test_a_non_finite_sensor_pose_is_refused_naming_the_source_and_the_key(pose, match):
    source = ObstacleSource(Model.from_files([DEMO_ARM]), "cam")
    with pytest.raises(ValueError, match=match):
        source.cloud(np.zeros((2, 3)), sensor_pose=pose)
