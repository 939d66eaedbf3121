"""Bad TF against the installed node over real DDS, with either TF backend (issue 15 #2, #4 and the
harness's "bad TF" class).

Scene: two spheres of radius 0.1 m; ball_b's file sits at x = 1 and is placed by the TF frame
'mover', so with 'mover' at x = t the centres are |1 + t| apart and the gap is |1 + t| - 0.2
(hand-derived, as test_node_full.py). ball_a carries a knob inside it on a joint 'spin' that
changes nothing: joint states at 50 Hz keep ~/contacts flowing, so a stalled node shows as a gap.
"""

from __future__ import annotations

import time

import pytest
from ros_harness import (SPHERE_ADF, SPINNER_ADF, NodeProcess, RatePublisher,  # noqa: F401
                         Received, diagnostics_of, domain, peer, stamped_joint_state)

from ambf_collision.msg import ContactArray
from rclpy.qos import QoSProfile, qos_profile_sensor_data
from sensor_msgs.msg import JointState

pytestmark = pytest.mark.dds

NS = "/collision_monitor"
HEARTBEAT = 5.0  # Hz; "never silent" = no gap in ~/contacts of 2 periods (0.4 s)
BACKENDS = pytest.mark.parametrize("backend", ["auto", "fallback"], ids=["tf2_ros", "fallback"])


def _node(domain, tmp_path, backend, **params):
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(SPINNER_ADF.format(name="ball_a", ns="a", x=0.0))
    b.write_text(SPHERE_ADF.format(name="ball_b", ns="b", x=1.0))
    p = {"adf_files": [str(a), str(b)], "root_frames": ["", "mover"], "report_distance": 2.0,
         "heartbeat_rate": HEARTBEAT, "transform_tolerance": 0.5, "tf_backend": backend,
         "diagnostics_period": 0.5}
    p.update(params)
    return NodeProcess(domain, p)


def _joint_states(peer):
    """Joint states for 'spin' at 50 Hz from a thread (stop() it)."""
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    return RatePublisher(pub, lambda: stamped_joint_state(peer, ["spin"], [0.0]), 50.0)


def _transform(peer, child, x, offset=0.0):
    from geometry_msgs.msg import TransformStamped

    ts = TransformStamped()
    ns = peer.node.get_clock().now().nanoseconds + int(offset * 1e9)
    ts.header.stamp.sec, ts.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    ts.header.frame_id, ts.child_frame_id = "world", child
    ts.transform.translation.x = float(x)
    ts.transform.rotation.w = 1.0
    return ts


def _gap(m):
    return m.contacts[0].distance if m.status == ContactArray.STATUS_OK and m.contacts else None


def _until_gap(peer, send, contacts, gap, timeout=10.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        send()
        peer.spin_for(0.05)
        g = _gap(contacts.last) if contacts.msgs else None
        if g is not None and abs(g - gap) < 1e-9:
            return time.monotonic()
    raise AssertionError(f"gap {gap} never reported; last {contacts.last}")


@BACKENDS
def test_a_future_transform_never_wins_over_current_ones(domain, peer, tmp_path, backend):
    """'mover' stamped 3 s ahead at x = -0.3 (gap 0.5), then current transforms at x = -0.5
    (gap 0.3) at 20 Hz. Before: the future pose was used for about 3 s with status OK. Now
    it is refused (counted in /diagnostics) and the current pose is what is evaluated."""
    from diagnostic_msgs.msg import DiagnosticArray
    from tf2_msgs.msg import TFMessage

    node = _node(domain, tmp_path, backend)
    joints = _joint_states(peer)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        tf_pub = peer.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=10))
        _until_gap(peer, lambda: tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.5)])),
                   contacts, 0.3, timeout=20.0)
        tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.3, offset=3.0)]))
        t0 = time.monotonic()
        while time.monotonic() < t0 + 1.5:
            tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.5)]))
            peer.spin_for(0.05)
        after = [_gap(m) for m in contacts.since(t0 + 0.2)]
        assert after and all(g is not None and abs(g - 0.3) < 1e-9 for g in after), after[:5]
        assert peer.spin_until(lambda: diags.msgs and diagnostics_of(diags.msgs)[-1][3]
                               ["tf_refused"].startswith("future 1,"), timeout=5.0)
    finally:
        joints.stop()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
    assert "in the future (tolerance 0.5 s)" in out + err


@BACKENDS
def test_a_tf_message_of_10000_transforms_does_not_silence_the_node(domain, peer, tmp_path,
                                                                     backend):
    """One TFMessage with 10,000 transforms of other frames, published as bytes while 'mover'
    keeps coming at 20 Hz. Before: the node stalled 0.7 s on it. Now it is read in slices, the
    executor free for joint states between them: all 10,000 are taken, no slice took over 20 ms
    of the node's CPU (40 slice budgets; reading them in one go took 0.7 s), and the contacts
    stay right. Told by the node's own counts in /diagnostics, not by gaps of
    arrival, which a loaded machine stretches whatever the node does."""
    from diagnostic_msgs.msg import DiagnosticArray
    from rclpy.serialization import serialize_message
    from tf2_msgs.msg import TFMessage

    huge = serialize_message(TFMessage(transforms=[
        _transform(peer, f"frame_{k % 500}", 0.001 * k) for k in range(10_000)]))
    # this process's publishers may stall on a loaded machine: joint states and 'mover' are
    # let age 5 s before the node says so (the point here is the huge message, not their age)
    node = _node(domain, tmp_path, backend, transform_tolerance=5.0, joint_state_timeout=5.0)
    joints = _joint_states(peer)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        tf_pub = peer.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=10))

        def mover():
            tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.5)]))

        _until_gap(peer, mover, contacts, 0.3, timeout=20.0)
        t0 = time.monotonic()
        tf_pub.publish(huge)

        def taken():
            got = diagnostics_of(diags.since(t0))
            return got and int(got[-1][3]["tf_received"]) >= 10_000

        end = time.monotonic() + 15.0
        while not taken() and time.monotonic() < end:
            mover()
            peer.spin_for(0.05)
        assert taken(), diagnostics_of(diags.msgs)[-1:]
        values = diagnostics_of(diags.since(t0))[-1][3]
        assert 0.0 < float(values["tf_slice_cpu_max_ms"]) < 20.0, values
        wrong = [(m.status, m.status_message, _gap(m)) for m in contacts.since(t0)
                 if _gap(m) is None or abs(_gap(m) - 0.3) > 1e-9]
        assert not wrong, wrong[:3]
    finally:
        joints.stop()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


def test_broken_and_non_finite_transforms_are_refused_and_survived(domain, peer, tmp_path):
    """A NaN translation, a zero quaternion and bytes that are no TFMessage: each refused
    (counted), the node keeps the last good pose and keeps publishing."""
    from diagnostic_msgs.msg import DiagnosticArray
    from tf2_msgs.msg import TFMessage

    node = _node(domain, tmp_path, "fallback")
    joints = _joint_states(peer)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        tf_pub = peer.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=10))
        _until_gap(peer, lambda: tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.5)])),
                   contacts, 0.3, timeout=20.0)
        nan = _transform(peer, "mover", float("nan"))
        zero = _transform(peer, "mover", -0.2)
        zero.transform.rotation.w = 0.0
        tf_pub.publish(TFMessage(transforms=[nan, zero]))
        tf_pub.publish(b"\x00\x01\x00\x00\xff\xff\xff\x7f")  # claims 2^31 transforms, has none
        peer.spin_for(0.3)
        assert node.alive()
        _until_gap(peer, lambda: tf_pub.publish(TFMessage(transforms=[_transform(peer, "mover", -0.5)])),
                   contacts, 0.3)
        assert peer.spin_until(lambda: diags.msgs and diagnostics_of(diags.msgs)[-1][3]
                               ["tf_refused"].startswith("future 0, invalid 3,"), timeout=5.0), \
            diagnostics_of(diags.msgs)[-1][3]["tf_refused"]
    finally:
        joints.stop()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
