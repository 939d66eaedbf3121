"""Sensed obstacles in the node (issue 39): ``obstacle_sources`` with a ``PointCloud2`` topic
per source, the cloud's frame resolved by TF at its stamp, the self filter, the source timeout
and bad clouds. The node runs in this process (``NodeInProcess``) on the hand-derived model
``test/model/adf_models/hand.yaml``: the carriage is a 10 mm sphere at (0, 0, lift).

Expected values by hand: a point ball (radius 5 mm) at world height ``z`` above the carriage is
``z - lift - 0.015`` m from it, and that distance falls 1 m per m of lift.
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from conftest import TEST_DIR
from ros_harness import NodeInProcess, Received, diagnostics_of, peer, domain  # noqa: F401

from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix
from ambf_collision.msg import ContactArray
from ambf_collision.ros.point_cloud import make_cloud
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState
from visualization_msgs.msg import MarkerArray

HAND = TEST_DIR / "model" / "adf_models" / "hand.yaml"
NS = "/collision_monitor"
PARAMS = {"adf_files": [str(HAND)], "joint_state_timeout": 0.0, "heartbeat_rate": 20.0,
          "continuous": False, "environment_report_distance": 0.2,
          "obstacle_sources": ["camera"], "camera.topic": "/points",
          "camera.point_radius": 0.005, "camera.self_filter_padding": 0.02,
          "camera.source_timeout": 0.0, "camera.max_points": 1000.0}


class Scene:
    """A peer publishing joint states, a moving camera's TF and its clouds, all at one stamp."""

    def __init__(self, peer):
        from tf2_msgs.msg import TFMessage

        self.peer = peer
        self.joints = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        self.tf = peer.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=100))
        self.clouds = peer.node.create_publisher(type(make_cloud(np.zeros((1, 3)))), "/points",
                                                 qos_profile_sensor_data)
        self.contacts = Received(peer, ContactArray, NS + "/contacts")
        self.diagnostics = Received(peer, DiagnosticArray, "/diagnostics")
        self.turn = 0

    def stamp(self):
        ns = self.peer.node.get_clock().now().nanoseconds
        return divmod(ns, 1_000_000_000)

    def camera_pose(self):
        """A new pose of the camera each time: it moves (2 cm steps and a turn)."""
        self.turn += 1
        q = np.array([0.9, 0.1 * self.turn, -0.3, 0.2])
        return quat_to_matrix(q / np.linalg.norm(q)), np.array([0.02 * self.turn, -0.2, 1.0])

    def send(self, lift, world_points=None, cloud=None, tf=True):
        """A joint state (lift), then the camera's TF and a cloud of ``world_points`` (in the
        camera frame), all at one new stamp; returns the stamp."""
        from geometry_msgs.msg import TransformStamped
        from tf2_msgs.msg import TFMessage

        sec, nsec = self.stamp()
        js = JointState(name=["lift", "turn"], position=[lift, 1.0])
        js.header.stamp.sec, js.header.stamp.nanosec = sec, nsec
        self.joints.publish(js)
        self.peer.spin_for(0.02)
        if world_points is not None or cloud is not None:
            R, t = self.camera_pose()
            if tf:
                ts = TransformStamped()
                ts.header.stamp.sec, ts.header.stamp.nanosec = sec, nsec
                ts.header.frame_id, ts.child_frame_id = "world", "camera"
                ts.transform.translation.x, ts.transform.translation.y, ts.transform.translation.z = t
                x, y, z, w = matrix_to_quat(R)
                ts.transform.rotation.x, ts.transform.rotation.y = float(x), float(y)
                ts.transform.rotation.z, ts.transform.rotation.w = float(z), float(w)
                self.tf.publish(TFMessage(transforms=[ts]))
                self.peer.spin_for(0.02)
            if cloud is None:
                cloud = make_cloud((np.asarray(world_points, float) - t) @ R, "camera", (sec, nsec),
                                   dtype=np.float64)   # float32 would round by ~1e-8 m
            else:
                cloud.header.stamp.sec, cloud.header.stamp.nanosec = sec, nsec
            self.clouds.publish(cloud)
        return sec * 1_000_000_000 + nsec

    def answer(self, stamp, status=ContactArray.STATUS_OK, timeout=10.0, sources=1, row=None):
        """The newest output stamped ``stamp`` with ``status`` and a source contact (or, with
        ``sources=0``, without one; with ``row``, of the point in that row of the cloud: the
        evaluation that used the new cloud, not the joint state's before it)."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.peer.spin_for(0.02)
            for m in reversed(self.contacts.msgs):
                if (m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec == stamp
                        and m.status == status and len(of_source(m)) == sources
                        and (row is None or of_source(m)[0].shape_2 == row)):
                    return m
        raise AssertionError(f"no answer stamped {stamp} with status {status}; last "
                             f"{self.contacts.last}")

    def diagnostic(self, key, predicate, timeout=5.0):
        ok = self.peer.spin_until(lambda: any(predicate(v.get(key, "")) for *_, v in
                                              diagnostics_of(self.diagnostics.msgs)), timeout=timeout)
        assert ok, [v.get(key) for *_, v in diagnostics_of(self.diagnostics.msgs)][-3:]


def of_source(msg):
    return [c for c in msg.contacts if c.body_2 == "source:camera"]


def test_a_cloud_in_a_moving_camera_gives_contacts_with_jacobians(peer, capfd):
    node = NodeInProcess(peer, PARAMS, capfd=capfd)
    try:
        scene = Scene(peer)
        markers = Received(peer, MarkerArray, NS + "/markers")
        stamp = scene.send(0.05, [[0.0, 0.0, 0.15], [5.0, 5.0, 5.0]])
        (c,) = of_source(scene.answer(stamp))
        assert c.body_1 == "/hand/carriage" and c.shape_2 == 0
        assert c.distance == pytest.approx(0.15 - 0.05 - 0.015, abs=1e-9)
        assert (c.point_1.z, c.point_2.z, c.normal.z) == pytest.approx((0.06, 0.145, 1.0), abs=1e-9)
        jac = dict(zip(scene.contacts.last.joint_names, c.jacobian))
        assert jac["/hand/lift"] == pytest.approx(-1.0, abs=1e-9)
        assert jac["/hand/turn"] == pytest.approx(0.0, abs=1e-9)
        # the next cloud from elsewhere (the camera moved): the same world point, same contact
        stamp = scene.send(0.10, [[0.0, 0.0, 0.15]])
        (c,) = of_source(scene.answer(stamp))
        assert c.distance == pytest.approx(0.15 - 0.10 - 0.015, abs=1e-9)
        # the robot's own image: a point 5 mm off the carriage's surface goes, the far one stays
        stamp = scene.send(0.10, [[0.0, 0.0, 0.115], [0.0, 0.0, 0.25]])
        (c,) = of_source(scene.answer(stamp, row=1))
        assert c.shape_2 == 1 and c.distance == pytest.approx(0.25 - 0.10 - 0.015, abs=1e-9)
        scene.diagnostic("source camera", lambda v: "1 of 2 points kept" in v and "1 on the robot" in v)
        # the markers show which points were removed (orange) and which are used

        def drawn():
            for a in reversed(markers.msgs):
                got = {m.id: [(p.x, p.y, p.z) for p in m.points] for m in a.markers
                       if m.ns == "source/camera"}
                if got:
                    return got
            return None
        assert peer.spin_until(lambda: drawn() is not None and len(drawn()[1]) == 1, timeout=5.0)
        assert drawn()[1][0] == pytest.approx((0.0, 0.0, 0.115), abs=1e-9)
        assert drawn()[0][0] == pytest.approx((0.0, 0.0, 0.25), abs=1e-9)
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err


def test_bad_clouds_are_refused_or_truncated_and_the_node_keeps_evaluating(peer, capfd):
    node = NodeInProcess(peer, PARAMS, capfd=capfd)
    try:
        scene = Scene(peer)
        stamp = scene.send(0.0, [[0.0, 0.0, 0.2]])
        scene.answer(stamp)
        no_z = make_cloud(np.zeros((3, 3)))
        no_z.fields = [f for f in no_z.fields if f.name != "z"]
        stamp = scene.send(0.0, cloud=no_z)
        scene.diagnostic("source camera", lambda v: "1 refused" in v and "z" in v)
        (c,) = of_source(scene.answer(stamp))   # the previous cloud stays in use
        assert c.distance == pytest.approx(0.2 - 0.015, abs=1e-9)
        short = make_cloud(np.zeros((4, 3)))
        short.width = 10_000_000   # claims ten million points: the data is far too short
        short.row_step = short.width * short.point_step
        scene.send(0.0, cloud=short)
        scene.diagnostic("source camera", lambda v: "2 refused" in v and "bytes" in v)
        big = np.column_stack([np.linspace(-1, 1, 5000), np.full(5000, 3.0), np.full(5000, 3.0)])
        big[2] = [0.0, 0.0, 0.18]
        big[1] = np.nan
        stamp = scene.send(0.0, big)   # 5,000 points: the first 1,000 read, a NaN dropped
        scene.diagnostic("source camera", lambda v: "1 truncated" in v and "999 of 1000" in v)
        (c,) = of_source(scene.answer(stamp, row=2))
        assert c.distance == pytest.approx(0.18 - 0.015, abs=1e-9)
        time.sleep(0.3)   # the newest transform is older than transform_tolerance (0.1 s)
        stamp = scene.send(0.0, [[0.0, 0.0, 0.25]], tf=False)
        scene.diagnostic("source camera", lambda v: "3 refused" in v and "TF of 'camera'" in v)
        assert node.alive()
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err


def test_a_source_older_than_its_timeout_is_stale_and_not_used(peer, capfd):
    node = NodeInProcess(peer, PARAMS | {"camera.source_timeout": 0.4}, capfd=capfd)
    try:
        scene = Scene(peer)
        stamp = scene.send(0.0, [[0.0, 0.0, 0.2]])
        scene.answer(stamp)
        time.sleep(0.5)
        stamp = scene.send(0.0)
        m = scene.answer(stamp, ContactArray.STATUS_STALE_SOURCE, sources=0)
        assert "camera" in m.status_message
        scene.diagnostic("status", lambda v: v == "STALE_SOURCE")
        stamp = scene.send(0.0, [[0.0, 0.0, 0.2]])
        scene.answer(stamp)   # a new cloud: OK again
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err
