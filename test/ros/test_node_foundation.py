"""The collision_monitor node (issue 2): in this process (``NodeInProcess``), and as the installed
executable over real DDS (marked ``dds``) for its clean shutdown on a signal."""

from __future__ import annotations

import math
import signal

import pytest
from conftest import DEMO_ARM
from ros_harness import NodeInProcess, NodeProcess, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import ContactArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402


def _collect(peer, topic="/collision_monitor/contacts"):
    got = []
    peer.node.create_subscription(ContactArray, topic, got.append, 10)
    return got


def test_node_without_adf_file_says_so(peer, capfd):
    """Before: NO_JOINT_STATE and no word about the missing files, and an empty joint state
    turned it OK while nothing was monitored. Now: DISABLED with the reason in /diagnostics
    (level WARN) and a warning in the log, whatever joint states arrive."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus

    node = NodeInProcess(peer, {"heartbeat_rate": 20.0, "diagnostics_period": 0.2}, capfd=capfd)
    try:
        got = _collect(peer)
        diags = []
        peer.node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 10)
        assert peer.spin_until(lambda: len(got) >= 3 and diags, timeout=20.0), "nothing arrived"
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        js = JointState(name=[], position=[])
        js.header.stamp = peer.node.get_clock().now().to_msg()
        for _ in range(10):
            pub.publish(js)
            peer.spin_for(0.05)
        assert all(m.status == ContactArray.STATUS_DISABLED for m in got)
        assert all(math.isinf(m.min_distance) and m.pairs_checked == 0 for m in got)
        assert got[-1].header.frame_id == "world"
        st = diags[-1].status[0]
        assert st.level == DiagnosticStatus.WARN and "no ADF file given" in st.message
    finally:
        code, out, err = node.stop()
    assert code == 0, err
    assert "Traceback" not in err
    assert "no ADF file given (parameter adf_files)" in out + err


@pytest.mark.dds
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_clean_shutdown_on_signal(domain, peer, sig):
    node = NodeProcess(domain, {"heartbeat_rate": 20.0})
    got = _collect(peer)
    assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0), "node never published"
    code, out, err = node.stop(sig)
    assert code == 0, f"exit code {code}\n{err}"
    assert "Traceback" not in err + out


def test_world_frame_parameter_reaches_the_header(peer):
    node = NodeInProcess(peer, {"heartbeat_rate": 20.0, "world_frame": "map"})
    try:
        got = _collect(peer)
        assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0)
        assert got[-1].header.frame_id == "map"
    finally:
        node.stop()


def test_unreadable_joint_state_bytes_are_survived(peer, capfd):
    """The node reads joint states from the serialized data (raw subscription): bytes that are
    no JointState (garbage, a truncated message, another encoding flag) are dropped with a
    warning, the node keeps publishing, and the next good message is evaluated (OK, stamp
    echoed)."""
    from rclpy.serialization import serialize_message

    node = NodeInProcess(peer, {"heartbeat_rate": 20.0, "adf_files": [str(DEMO_ARM)]}, capfd=capfd)
    try:
        got = _collect(peer)
        assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0), "no ContactArray arrived"
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        # the fix of issue 12 #7: publish only once the node's subscription is discovered
        assert peer.spin_until(lambda: pub.get_subscription_count() > 0, timeout=20.0)
        js = JointState(name=["shoulder_yaw"], position=[0.0])
        js.header.stamp = peer.node.get_clock().now().to_msg()
        good = serialize_message(js)
        for bad in (b"\x00\x01\x00\x00garbage!", good[:9], b"\x00\x05" + good[2:], b"\x00\x01"):
            pub.publish(bad)
        n = len(got)
        assert peer.spin_until(lambda: len(got) > n + 2, timeout=5.0), "node stopped publishing"
        for _ in range(100):
            pub.publish(good)
            if peer.spin_until(lambda: got[-1].status == ContactArray.STATUS_OK, timeout=0.1):
                break
        assert got[-1].status == ContactArray.STATUS_OK
        assert got[-1].header.stamp == js.header.stamp
    finally:
        code, out, err = node.stop()
    assert code == 0, err
    assert "Traceback" not in err + out
    assert "unreadable joint state" in err + out
