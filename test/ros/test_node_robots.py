"""Several robots in one monitor, and a dVRK arm with couplings (issues 11 §6 and 12): the
node in this process (``NodeInProcess``: the node and the test's peer on one executor).

Two copies of the demo arm from one ADF file under the namespaces /arm1/ and /arm2/, each driven
by its own joint-state topic with the same plain joint names (as dVRK's /PSM1/measured_js and
/PSM2/measured_js): each topic moves its own arm only. Expectations are the demo arm's
hand-derived values (test_node_full.py): at the touch pose the fingertip penetrates its floor by
1 mm, at home no contact.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path

import pytest
from conftest import DEMO_ARM, REPO
from ros_harness import NodeInProcess, NodeProcess, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import ContactArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState

MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
T1 = -math.acos(0.46)
TOUCH = [0.0, T1, -math.pi - T1, 0.0]
HOME = [0.0, 0.0, 0.0, 0.0]
NS = "/collision_monitor"


def _js(peer, names, positions):
    m = JointState(name=list(names), position=[float(p) for p in positions])
    m.header.stamp = peer.node.get_clock().now().to_msg()
    return m


def _pair(msg, a, b):
    return next((c for c in msg.contacts if {c.body_1, c.body_2} == {a, b}), None)


def _static_tf(peer, child, x):
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    pub = peer.node.create_publisher(TFMessage, "/tf_static", QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE))
    ts = TransformStamped()
    ts.header.stamp = peer.node.get_clock().now().to_msg()
    ts.header.frame_id, ts.child_frame_id = "world", child
    ts.transform.translation.x = x
    ts.transform.rotation.w = 1.0
    pub.publish(TFMessage(transforms=[ts]))
    return pub


def test_one_monitor_two_arms_from_one_file_told_apart_by_topic(peer):
    keep = _static_tf(peer, "arm2_base", 2.0)  # noqa: F841 - keeps the latched transform alive
    node = NodeInProcess(peer, {
        "adf_files": [str(DEMO_ARM), str(DEMO_ARM)], "adf_namespaces": ["/arm1/", "/arm2/"],
        "root_frames": ["", "arm2_base"], "heartbeat_rate": 20.0,
        "joint_state_topics": ["/ARM1/measured_js", "/ARM2/measured_js"],
        "joint_state_files": [0, 1],
        # two planes never touch; today's pair code refuses a plane-plane pair (kernels branch)
        "ignore_pairs": ["/arm1/floor:/arm2/floor"]})
    try:
        got = []
        peer.node.create_subscription(ContactArray, NS + "/contacts", got.append, 10)
        one = peer.node.create_publisher(JointState, "/ARM1/measured_js", qos_profile_sensor_data)
        two = peer.node.create_publisher(JointState, "/ARM2/measured_js", qos_profile_sensor_data)

        def drive(q1, q2, touching):
            end = time.monotonic() + 30.0
            while time.monotonic() < end:
                one.publish(_js(peer, MOVABLE, q1))
                two.publish(_js(peer, MOVABLE, q2))
                peer.spin_for(0.05)
                m = got[-1] if got else None
                if m is not None and m.status == ContactArray.STATUS_OK and all(
                        (_pair(m, f"/{a}/fingertip", f"/{a}/floor") is not None) == t
                        for a, t in zip(("arm1", "arm2"), touching)):
                    return m
            raise AssertionError(f"not reached: {touching}; last {got[-1:]}")

        m = drive(TOUCH, HOME, (True, False))
        assert _pair(m, "/arm1/fingertip", "/arm1/floor").distance == pytest.approx(-0.001, abs=1e-9)
        m = drive(HOME, TOUCH, (False, True))
        assert _pair(m, "/arm2/fingertip", "/arm2/floor").distance == pytest.approx(-0.001, abs=1e-9)
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


AMBF_MODELS = os.environ.get("AMBF_MODELS", "")
PSM = Path(AMBF_MODELS) / "robots" / "blender-psm.yaml" if AMBF_MODELS else None


@pytest.mark.skipif(not (PSM and PSM.is_file()),
                    reason="AMBF_MODELS is not set (path to AMBF's ambf_models/descriptions/"
                           "multi-bodies)")
def test_psm_with_couplings_and_only_the_actuated_joints_reports_ok(peer):
    """AMBF's dVRK PSM (closed parallelograms) with config/couplings/blender-psm.yaml and a joint
    state naming only the joints that need a value (actuated; the parallelogram's passive ones
    follow the pitch): status OK, no joint reported as never received, and the loop-closure
    residuals in /diagnostics."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    from ambf_collision.monitor.scene import load_scene

    couplings = REPO / "config" / "couplings" / "blender-psm.yaml"
    model = load_scene([PSM], coupling_files=[couplings]).model
    k = model.kinematics
    actuated = [n for n, need in zip(model.joint_plain_names, k.needs_position) if need]
    assert 0 < len(actuated) < len(model.joint_names)
    node = NodeInProcess(peer, {"adf_files": [str(PSM)], "coupling_files": [str(couplings)],
                                  "heartbeat_rate": 20.0, "diagnostics_period": 0.25})
    try:
        got, diags = [], []
        peer.node.create_subscription(ContactArray, NS + "/contacts", got.append, 10)
        peer.node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 10)
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        end = time.monotonic() + 60.0
        while time.monotonic() < end and not (
                diags and diags[-1].status[0].level == DiagnosticStatus.OK):
            pub.publish(_js(peer, actuated, [0.1] * len(actuated)))
            peer.spin_for(0.05)
        assert got and got[-1].status == ContactArray.STATUS_OK, got[-1:]
        st = diags[-1].status[0]
        values = {kv.key: kv.value for kv in st.values}
        assert st.level == DiagnosticStatus.OK and "unreceived_joints" not in values, values
        assert values["closure_worst_joint"] in k.closure_joint_names
        assert float(values["closure_position_residual_m"]) < 1e-3  # consistent loop: < 1 mm
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
