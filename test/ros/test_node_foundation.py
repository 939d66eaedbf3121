"""The installed collision_monitor node as a real process over real DDS (issue 2)."""

from __future__ import annotations

import math
import signal

import pytest
from ros_harness import NodeProcess, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import ContactArray  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from rclpy.qos import qos_profile_sensor_data  # noqa: E402


def _collect(peer, topic="/collision_monitor/contacts"):
    got = []
    peer.node.create_subscription(ContactArray, topic, got.append, 10)
    return got


def test_status_is_no_joint_state_until_one_arrives_then_ok(domain, peer):
    node = NodeProcess(domain, {"heartbeat_rate": 20.0})
    try:
        got = _collect(peer)
        assert peer.spin_until(lambda: len(got) >= 3, timeout=20.0), "no ContactArray arrived"
        assert all(m.status == ContactArray.STATUS_NO_JOINT_STATE for m in got)
        assert all(math.isinf(m.min_distance) and m.pairs_checked == 0 for m in got)
        assert got[-1].header.frame_id == "world"

        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        js = JointState(name=[], position=[])
        js.header.stamp = peer.node.get_clock().now().to_msg()  # far-past stamps are BAD (issue 6)
        for _ in range(100):
            pub.publish(js)
            if peer.spin_until(lambda: got[-1].status == ContactArray.STATUS_OK, timeout=0.1):
                break
        assert got[-1].status == ContactArray.STATUS_OK
        assert got[-1].header.stamp == js.header.stamp, "header stamp must be the joint-state stamp used"
    finally:
        code, _, err = node.stop()
    assert code == 0, err
    assert "Traceback" not in err


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_clean_shutdown_on_signal(domain, peer, sig):
    node = NodeProcess(domain, {"heartbeat_rate": 20.0})
    got = _collect(peer)
    assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0), "node never published"
    code, out, err = node.stop(sig)
    assert code == 0, f"exit code {code}\n{err}"
    assert "Traceback" not in err + out


def test_world_frame_parameter_reaches_the_header(domain, peer):
    node = NodeProcess(domain, {"heartbeat_rate": 20.0, "world_frame": "map"})
    try:
        got = _collect(peer)
        assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0)
        assert got[-1].header.frame_id == "map"
    finally:
        node.stop()


def test_unreadable_joint_state_bytes_are_survived(domain, peer):
    """The node reads joint states from the serialized data (raw subscription): bytes that are
    no JointState (garbage, a truncated message, another encoding flag) are dropped with a
    warning, the node keeps publishing, and the next good message is evaluated (OK, stamp
    echoed)."""
    from rclpy.serialization import serialize_message

    node = NodeProcess(domain, {"heartbeat_rate": 20.0})
    try:
        got = _collect(peer)
        assert peer.spin_until(lambda: len(got) >= 1, timeout=20.0), "no ContactArray arrived"
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        js = JointState(name=[], position=[])
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
