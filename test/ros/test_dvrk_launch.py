"""dvrk.launch.py in a real ROS graph: two PSMs of AMBF's file on their CRTK topics, placed by
cart_frames (one static placement, one relayed from a set-up-joint pose topic), beside an
environment file that keeps its own namespace (examples/dvrk/patient.yaml).

Expectation: the library's own evaluation of the same cart (the parameters of
``monitor_parameters``, the placements of the cart file, the same joint values under AMBF's
names): the node's pair count and minimum distance agree to 1e-9 m.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import yaml
from conftest import REPO
from ros_harness import LaunchProcess, domain, installed_launch_file, peer  # noqa: F401

from ambf_collision.msg import ContactArray
from geometry_msgs.msg import PoseStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

pytestmark = [pytest.mark.launch, pytest.mark.dds, pytest.mark.slow]

ROBOTS = REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
CRTK = ["outer_yaw", "outer_pitch", "outer_insertion", "outer_roll", "outer_wrist_pitch",
        "outer_wrist_yaw"]
AMBF = ["base link-yaw link", "yaw link-pitch back link", "pitch end link-main insertion link",
        "main insertion link-tool roll link", "tool roll link-tool pitch link",
        "tool pitch link-tool gripper1 link"]
PATIENT = REPO / "examples" / "dvrk" / "patient.yaml"
Q1 = [0.1, 0.1, 0.16, 0.2, 0.1, -0.3]   # PSM1's jaws into the patient
Q2 = [-0.5, 0.2, 0.12, -0.6, 0.3, 0.2]
# PSM2's base frame as a set-up joint reports it: 30 degrees about z, then a shift
YAW2 = math.radians(30.0)
SUJ2 = (np.array([0.35, -0.42, 0.71]), (0.0, 0.0, math.sin(YAW2 / 2), math.cos(YAW2 / 2)))


def _rz(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _expected(cart_path):
    """The library's evaluation of the same two arms at Q1, Q2."""
    from ambf_collision.model import Model
    from ambf_collision.ros.dvrk_cart import load_cart, monitor_parameters

    cart = load_cart(cart_path)
    p = monitor_parameters(cart, "PSM1,PSM2", str(ROBOTS), extra_files=[str(PATIENT)])
    assert p["adf_namespaces"] == ["/PSM1/", "/PSM2/", ""]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Model.from_files(p["adf_files"], namespaces=["/PSM1/", "/PSM2/", None],
                                 couplings=p["couplings"], hull_meshes=["*"])
    data = model.create_data()
    names = [f"/{arm}/{n.replace(' ', '')}" for arm in ("PSM1", "PSM2") for n in AMBF]
    model.set_joint_positions(data, names, Q1 + Q2)
    _, xyz, rpy = cart.arms["PSM1"].placement
    poses = [(_rz(rpy[2]), np.array(xyz)), (_rz(YAW2), SUJ2[0]), None]
    return model, model.evaluate(data, root_poses=poses)


def test_two_psms_on_crtk_topics_static_and_relayed_placements(domain, peer, tmp_path):  # noqa: F811
    cart = yaml.safe_load((REPO / "config" / "dvrk_cart.yaml").read_text())
    cart["arms"]["PSM2"]["placement"] = {"pose_topic": "/SUJ/PSM2/measured_cp"}
    cart_path = tmp_path / "cart.yaml"
    cart_path.write_text(yaml.safe_dump(cart))
    model, expected = _expected(cart_path)
    msgs = []
    peer.node.create_subscription(ContactArray, "/collision_monitor/contacts", msgs.append, 10)
    js = {arm: peer.node.create_publisher(JointState, f"/{arm}/measured_js",
                                          qos_profile_sensor_data) for arm in ("PSM1", "PSM2")}
    suj = peer.node.create_publisher(PoseStamped, "/SUJ/PSM2/measured_cp", 10)
    launch = LaunchProcess(domain, installed_launch_file("dvrk.launch.py"),
                           ["arms:=PSM1,PSM2", f"ambf_models:={ROBOTS}", f"cart:={cart_path}",
                            f"adf_files:=['{PATIENT}']"])
    try:
        def publish():
            now = peer.node.get_clock().now().to_msg()
            pose = PoseStamped()
            pose.header.stamp, pose.header.frame_id = now, "world"
            pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = SUJ2[0]
            (pose.pose.orientation.x, pose.pose.orientation.y, pose.pose.orientation.z,
             pose.pose.orientation.w) = SUJ2[1]
            suj.publish(pose)
            for arm, q in (("PSM1", Q1), ("PSM2", Q2)):
                m = JointState(name=CRTK, position=q)
                m.header.stamp = now
                js[arm].publish(m)

        def answered():
            publish()
            return bool(msgs) and msgs[-1].status == ContactArray.STATUS_OK

        assert peer.spin_until(answered, timeout=60.0, step=0.05), (
            launch.alive(), (msgs[-1].status, msgs[-1].status_message) if msgs else "no message")
        last = msgs[-1]
        assert last.pairs_checked == len(model.pairs)
        assert last.min_distance == pytest.approx(expected.min_distance, abs=1e-9)
        c = expected.contacts[0]
        assert "/ambf/env/patient" in (c.body_1, c.body_2) and c.distance < 0
        assert (last.contacts[0].body_1, last.contacts[0].body_2) == (c.body_1, c.body_2)
        assert last.contacts[0].distance == pytest.approx(c.distance, abs=1e-9)
    finally:
        code, out, err = launch.stop(timeout=20.0)
        assert "Traceback" not in out + err, err[-3000:]
