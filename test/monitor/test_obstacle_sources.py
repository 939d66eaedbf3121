"""The monitor's sensed obstacles (``monitor/obstacle_sources.py``) on the hand-derived model
``test/model/adf_models/hand.yaml``: the carriage is a 10 mm sphere at (0, 0, lift) on a
prismatic joint along z; the swing a 10 mm sphere 0.3 m out on a turn about z, at height
0.3 m; the plate and the post are static (not robot bodies).

Expected values by hand: a point at height ``z`` above the carriage is ``z - lift - 0.01`` from
it, less the point radius; its distance falls 1 m per m of lift (Jacobian -1).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import TEST_DIR

from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.model import Model
from ambf_collision.monitor.config import STATUS_OK, STATUS_STALE_SOURCE, MonitorConfig
from ambf_collision.monitor.monitor import CollisionMonitor
from ambf_collision.monitor.obstacle_sources import JointHistory, SourceSpec

HAND = TEST_DIR / "model" / "adf_models" / "hand.yaml"
TOL = 1e-12


@pytest.fixture(scope="module")
def hand():
    return Model.from_files([HAND])


def sensor():
    """A camera 1 m up, looking down (its z along world -z), turned about its axis."""
    q = np.array([0.9, 0.1, -0.3, 0.2])
    return quat_to_matrix(q / np.linalg.norm(q)), np.array([0.1, -0.2, 1.0])


def in_sensor(world_points, pose):
    R, t = pose
    return (np.asarray(world_points, float) - t) @ R


def monitor_at(hand, lift_by_stamp, **spec):
    """A monitor of the hand with one source ``camera``, fed joint states ``{stamp: lift}``
    and evaluated after each."""
    m = CollisionMonitor(hand, MonitorConfig(joint_state_timeout=0.0, report_distance=0.2),
                         obstacle_sources=[SourceSpec("camera", **spec)])
    for stamp, lift in sorted(lift_by_stamp.items()):
        m.on_joint_state(["lift", "turn"], [lift, 0.0], stamp, stamp)
        m.step(stamp)
    return m


def source_contacts(out):
    return [(who, row) for who, row in zip(out.contact_info, out.contact_rows)
            if who[1] == "source:camera"]


def test_joint_history_interpolates_between_the_states_around_a_stamp():
    h = JointHistory(2, size=4)
    assert h.at(1.0) is None
    for stamp, q in [(1.0, [0.0, 1.0]), (2.0, [1.0, 3.0]), (3.0, [1.0, 3.0])]:
        h.add(stamp, q)
    np.testing.assert_allclose(h.at(1.25), [0.25, 1.5], atol=TOL)
    np.testing.assert_array_equal(h.at(0.0), [0.0, 1.0])     # before: the oldest
    np.testing.assert_array_equal(h.at(9.0), [1.0, 3.0])     # after: the newest
    for stamp in (4.0, 5.0, 6.0):                             # the ring forgets the oldest
        h.add(stamp, [stamp, 0.0])
    np.testing.assert_array_equal(h.at(0.0), [1.0, 3.0])


def test_a_point_above_the_carriage_gives_its_contact_with_the_jacobian(hand):
    pose = sensor()
    m = monitor_at(hand, {1.0: 0.05}, point_radius=0.005, self_filter_padding=0.0)
    note = m.on_cloud("camera", in_sensor([[0.0, 0.0, 0.15], [5.0, 5.0, 5.0]], pose), pose, 1.0, 1.0)
    assert (note.received, note.kept, note.self_filtered) == (2, 2, 0)
    out = m.step(1.01)
    assert out.status == STATUS_OK
    (who, row), = source_contacts(out)
    assert who == ("/hand/carriage", "source:camera", -1, 0)
    assert abs(row[0] - (0.15 - 0.05 - 0.01 - 0.005)) <= TOL
    np.testing.assert_allclose(row[1:4], [0.0, 0.0, 0.06], atol=TOL)      # on the sphere
    np.testing.assert_allclose(row[4:7], [0.0, 0.0, 0.145], atol=TOL)     # on the ball
    np.testing.assert_allclose(row[10:13], [0.0, 0.0, 1.0], atol=TOL)
    J = len(hand.joint_names)
    expected = np.zeros(J)
    expected[[n.rsplit("/", 1)[-1] for n in hand.joint_names].index("lift")] = -1.0
    np.testing.assert_allclose(row[13:13 + J], expected, atol=TOL)
    np.testing.assert_allclose(pose[0] @ row[17 + J:] + pose[1], row[4:7], atol=1e-12)
    # ordered with the pairs' contacts by distance
    assert list(out.contact_rows[:, 0]) == sorted(out.contact_rows[:, 0])


def test_the_self_filter_uses_the_pose_at_the_cloud_stamp(hand):
    pose = sensor()
    m = monitor_at(hand, {1.0: 0.0, 2.0: 0.2}, self_filter_padding=0.02)
    # at t = 1 the carriage was at 0: a point 15 mm above its centre (5 mm off its surface) is
    # the robot's own image and goes; at t = 2 the carriage is at 0.2: the same point stays
    pts = in_sensor([[0.0, 0.0, 0.015]], pose)
    assert m.on_cloud("camera", pts, pose, 1.0, 2.0).self_filtered == 1
    assert source_contacts(m.step(2.01)) == []
    assert m.obstacles.sources["camera"].removed.tolist() == [0]
    np.testing.assert_allclose(m.obstacles.sources["camera"].removed_points, [[0, 0, 0.015]], atol=1e-12)
    assert m.on_cloud("camera", pts, pose, 2.0, 2.0).self_filtered == 0
    (who, row), = source_contacts(m.step(2.02))
    assert abs(row[0] - (0.2 - 0.015 - 0.01)) <= TOL   # below the carriage: distance to (0,0,0.015)
    # halfway (t = 1.5, lift 0.1): 25 mm above the interpolated centre goes (15 mm off the
    # surface), 35 mm above stays
    note = m.on_cloud("camera", in_sensor([[0, 0, 0.125], [0, 0, 0.135]], pose), pose, 1.5, 2.0)
    assert note.self_filtered == 1 and m.obstacles.sources["camera"].removed.tolist() == [0]


def test_a_stale_or_silent_source_is_named_and_not_used(hand):
    pose = sensor()
    m = monitor_at(hand, {1.0: 0.0}, source_timeout=0.5, self_filter_padding=0.0)
    out = m.step(1.4)
    assert out.status == STATUS_OK
    out = m.step(1.6)   # no cloud for 0.6 s since the first step
    assert out.status == STATUS_STALE_SOURCE and "camera (no cloud yet)" in out.reason
    assert out.evaluated
    m.on_cloud("camera", in_sensor([[0.0, 0.0, 0.1]], pose), pose, 1.6, 1.6)
    out = m.step(1.7)
    assert out.status == STATUS_OK and len(source_contacts(out)) == 1
    out = m.step(2.2)   # the cloud is 0.6 s old
    assert out.status == STATUS_STALE_SOURCE and "camera (0.600 s)" in out.reason
    assert source_contacts(out) == [] and out.evaluated
    m.on_clock_jump_back(1.0)   # the cloud now lies in the future: dropped
    assert m.obstacles.sources["camera"].cloud is None


def test_bad_sources_and_clouds_are_refused_by_name(hand):
    with pytest.raises(ValueError, match="'camera'.*source_timeout"):
        CollisionMonitor(hand, obstacle_sources=[SourceSpec("camera", source_timeout=math.nan)])
    with pytest.raises(ValueError, match="unique"):
        CollisionMonitor(hand, obstacle_sources=[SourceSpec("a"), SourceSpec("a")])
    with pytest.raises(ValueError, match="'lidar' is not configured"):
        monitor_at(hand, {}).on_cloud("lidar", np.zeros((1, 3)), sensor(), 0.0, 0.0)
    m = monitor_at(hand, {1.0: 0.0})
    with pytest.raises(ValueError, match="points must be an"):
        m.on_cloud("camera", np.zeros((4, 2)), sensor(), 1.0, 1.0)
