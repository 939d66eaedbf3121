"""The README's launch command in a real ROS graph (issue 12): the installed
collision_monitor.launch.py run by the real `launch` (``ros2launch.api``, as `ros2 launch`
runs it) for an AMBF example file, under a namespace, and for two arms at once.

Expectations are the demo arm's hand-derived values (test_node_full.py): at the touch pose the
fingertip penetrates the floor by 1 mm; at home the closest pair is 0.1 m apart.
"""

from __future__ import annotations

import math
import time

import pytest
from conftest import DEMO_ARM, EXAMPLES
from ros_harness import LaunchProcess, domain, installed_launch_file, peer  # noqa: F401

from ambf_collision.msg import ContactArray
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy, qos_profile_sensor_data
from sensor_msgs.msg import JointState

pytestmark = [pytest.mark.launch, pytest.mark.dds, pytest.mark.slow]

MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
T1 = -math.acos(0.46)
TOUCH = [0.0, T1, -math.pi - T1, 0.0]
HOME = [0.0, 0.0, 0.0, 0.0]
FINGER, FLOOR = "/ambf/env/fingertip", "/ambf/env/floor"


def _launch(domain, *args, cwd=None):
    return LaunchProcess(domain, installed_launch_file("collision_monitor.launch.py"), args,
                         cwd=cwd)


def _stop(launch):
    code, out, err = launch.stop(timeout=20.0)
    assert "Traceback" not in out + err, err[-3000:]
    return code, out + err


class Arm:
    """One monitored arm seen from the test: its contacts topic and joint-state publisher."""

    def __init__(self, peer, ns: str, joint_topic: str | None = None):
        self.peer = peer
        self.msgs = []
        prefix = f"/{ns}" if ns else ""
        peer.node.create_subscription(ContactArray, f"{prefix}/collision_monitor/contacts",
                                      self.msgs.append, 10)
        self.pub = peer.node.create_publisher(JointState, joint_topic or f"{prefix}/joint_states",
                                              qos_profile_sensor_data)

    def js(self, names, positions):
        m = JointState(name=list(names), position=[float(p) for p in positions])
        m.header.stamp = self.peer.node.get_clock().now().to_msg()
        return m


def drive(arms_poses, pred, timeout=30.0):
    """Publish each arm's pose every 50 ms until ``pred()`` holds."""
    peer = arms_poses[0][0].peer
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        for arm, names, pose in arms_poses:
            arm.pub.publish(arm.js(names, pose))
        peer.spin_for(0.05)
        if pred():
            return True
    return False


def _pair(msg, a, b):
    return next((c for c in msg.contacts if {c.body_1, c.body_2} == {a, b}), None)


def _floor_point(msg):
    c = _pair(msg, FINGER, FLOOR)
    return c.point_2 if c.body_2 == FLOOR else c.point_1


def _touching(arm):
    m = arm.msgs[-1] if arm.msgs else None
    return (m is not None and m.status == ContactArray.STATUS_OK and _pair(m, FINGER, FLOOR)
            is not None)


def _home(arm):
    m = arm.msgs[-1] if arm.msgs else None
    return (m is not None and m.status == ContactArray.STATUS_OK and not m.contacts
            and abs(m.min_distance - 0.1) < 1e-9)


def test_readme_command_runs_an_ambf_example_file(domain, peer):
    """Before: exit 2, `demo_probes.yaml: probes[0] 'fingertip_side': body: no body named
    'fingertip'` (the default config was the demo's). Now the node monitors the file: its pairs
    and minimum distance at q = 0 are the library's for the same file."""
    from ambf_collision.model import Model

    src = EXAMPLES / "blender-toy-car.yaml"
    if not src.exists():
        pytest.skip(f"AMBF ADF examples not found at {EXAMPLES}")
    model = Model.from_files([src])
    expect = model.evaluate(model.create_data(), near_only=False)
    assert len(model.pairs) > 0
    launch = _launch(domain, f"adf_files:=['{src}']")
    try:
        arm = Arm(peer, "")
        names = list(model.joint_names)
        ok = drive([(arm, names, [0.0] * len(names))],
                   lambda: arm.msgs and arm.msgs[-1].status == ContactArray.STATUS_OK)
        assert ok, (launch.alive(), arm.msgs[-1:] if arm.msgs else "no message")
        assert arm.msgs[-1].pairs_checked == len(model.pairs)
        assert arm.msgs[-1].min_distance == pytest.approx(expect.min_distance, abs=1e-12)
    finally:
        _stop(launch)


def test_launch_under_a_namespace_gets_its_parameters(domain, peer):
    """Before: /psm1/collision_monitor started with no ADF file (the parameter file's
    `collision_monitor:` key did not match) and reported no problem."""
    launch = _launch(domain, "namespace:=psm1", f"adf_files:=['{DEMO_ARM}']")
    try:
        arm = Arm(peer, "psm1")
        assert drive([(arm, MOVABLE, TOUCH)], lambda: _touching(arm)), arm.msgs[-1:]
        c = _pair(arm.msgs[-1], FINGER, FLOOR)
        assert c.distance == pytest.approx(-0.001, abs=1e-9)
    finally:
        _stop(launch)


def test_two_arms_in_two_namespaces_do_not_interfere(domain, peer, tmp_path):
    """/psm1 and /psm2, each its own monitor, joint states and TF root (psm2 placed by a static
    transform): each reports its own arm's pose, also after the poses are swapped."""
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    cfg = tmp_path / "psm2.yaml"
    cfg.write_text("/**:\n  ros__parameters:\n    root_frames: ['psm2_base']\n")
    static = peer.node.create_publisher(TFMessage, "/tf_static", QoSProfile(
        depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
        reliability=ReliabilityPolicy.RELIABLE))
    ts = TransformStamped()
    ts.header.stamp = peer.node.get_clock().now().to_msg()
    ts.header.frame_id, ts.child_frame_id = "world", "psm2_base"
    ts.transform.translation.x = 2.0
    ts.transform.rotation.w = 1.0
    static.publish(TFMessage(transforms=[ts]))
    one = _launch(domain, "namespace:=psm1", f"adf_files:=['{DEMO_ARM}']")
    two = _launch(domain, "namespace:=psm2", f"adf_files:=['{DEMO_ARM}']", f"config:={cfg}")
    try:
        psm1, psm2 = Arm(peer, "psm1"), Arm(peer, "psm2")
        assert drive([(psm1, MOVABLE, TOUCH), (psm2, MOVABLE, HOME)],
                     lambda: _touching(psm1) and _home(psm2)), (psm1.msgs[-1:], psm2.msgs[-1:])
        x1 = _floor_point(psm1.msgs[-1]).x
        assert drive([(psm1, MOVABLE, HOME), (psm2, MOVABLE, TOUCH)],
                     lambda: _home(psm1) and _touching(psm2)), (psm1.msgs[-1:], psm2.msgs[-1:])
        assert _floor_point(psm2.msgs[-1]).x == pytest.approx(x1 + 2.0, abs=1e-9)  # TF root
        assert _pair(psm2.msgs[-1], FINGER, FLOOR).distance == pytest.approx(-0.001, abs=1e-9)
    finally:
        _stop(one)
        _stop(two)
