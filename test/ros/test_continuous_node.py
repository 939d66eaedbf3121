"""The node's continuous mode (issue 38): a contact between two joint states reaches
``~/contacts`` as a swept ``Contact`` with its ``time_of_contact``, ``/diagnostics`` says which
evaluations were at the state only. The node runs
in this process (``NodeInProcess``) on the hand-derived model ``test/model/adf_models/hand.yaml``:
a 10 mm sphere on a prismatic lift along z through a 1 mm plate at z = 0."""

from __future__ import annotations

import time

import pytest
from conftest import TEST_DIR
from ros_harness import NodeInProcess, Received, diagnostics_of, peer, domain  # noqa: F401

from ambf_collision.geometry.tolerances import MOTION_TIME_TOLERANCE
from ambf_collision.msg import ContactArray
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

HAND = TEST_DIR / "model" / "adf_models" / "hand.yaml"
NS = "/collision_monitor"
PLATE_SPHERE = ("/hand/carriage", "/hand/plate")


def _state(lift: float, stamp_ns: int) -> JointState:
    m = JointState(name=["lift", "turn"], position=[lift, 1.0])   # the swing away from its post
    m.header.stamp.sec, m.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    return m


def _ns(t) -> int:
    return t.sec * 1_000_000_000 + t.nanosec


def _answer(peer, pub, contacts, msg, timeout=15.0):
    """Publishes ``msg`` until the node answers with its stamp; returns the answer."""
    stamp = _ns(msg.header.stamp)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        pub.publish(msg)
        peer.spin_for(0.05)
        for m in contacts.msgs:
            if _ns(m.header.stamp) == stamp and m.status == ContactArray.STATUS_OK:
                return m
    raise AssertionError(f"no answer stamped {stamp} ns")


def _set(peer, name, value):
    from rclpy.parameter import Parameter
    from rcl_interfaces.srv import SetParameters

    client = peer.node.create_client(SetParameters, NS + "/set_parameters")
    assert peer.spin_until(client.service_is_ready, timeout=10.0)
    fut = client.call_async(SetParameters.Request(
        parameters=[Parameter(name, value=value).to_parameter_msg()]))
    assert peer.spin_until(fut.done, timeout=10.0)
    return fut.result().results[0]


def _plate(msg):
    return [c for c in msg.contacts if tuple(sorted((c.body_1, c.body_2))) == PLATE_SPHERE]


def test_a_contact_between_two_states_is_published_swept_with_its_time(peer, capfd):
    """Without ``continuous`` the second state shows a near contact (39.5 mm, no time). Set at
    run time, the same crossing (+50 mm at T, -50 mm at T + 10 ms: apart at both) gives one
    swept contact at T + 3.95 ms (s = 0.395, by hand), to the nanosecond of the stamps' own
    integers; distance about 0, normal along z. A jump of 0.65 m (more than
    continuous_max_step) is evaluated at the state alone and ``/diagnostics`` says why (the
    markers' colour: test_markers.py)."""
    node = NodeInProcess(peer, {"adf_files": [str(HAND)], "joint_state_timeout": 0.0,
                                "heartbeat_rate": 20.0, "continuous": False}, capfd=capfd)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diagnostics = Received(peer, DiagnosticArray, "/diagnostics")
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        t = peer.node.get_clock().now().nanoseconds
        _answer(peer, pub, contacts, _state(0.05, t))
        near = _plate(_answer(peer, pub, contacts, _state(-0.05, t + 10_000_000)))
        assert len(near) == 1 and near[0].distance == pytest.approx(0.0395, abs=1e-12)
        assert not near[0].swept and _ns(near[0].time_of_contact) == 0
        r = _set(peer, "continuous", True)   # (off at the start: the default is on)
        assert r.successful, r.reason
        _answer(peer, pub, contacts, _state(0.05, t + 20_000_000))
        swept = _plate(_answer(peer, pub, contacts, _state(-0.05, t + 30_000_000)))
        assert len(swept) == 1 and swept[0].swept
        assert 0.0 <= swept[0].distance <= 0.1 * MOTION_TIME_TOLERANCE
        assert abs(abs(swept[0].normal.z) - 1.0) < 1e-12
        expected = t + 20_000_000 + 3_950_000
        assert abs(_ns(swept[0].time_of_contact) - expected) <= 10   # ns: s within 1e-6 of 10 ms
        jump = _plate(_answer(peer, pub, contacts, _state(0.6, t + 40_000_000)))
        assert not jump   # 0.65 m in one step: the state alone, far from the plate
        note = "1 at the state only (last: /hand/lift moved 0.65 in one step (continuous_max_step 0.5))"
        assert peer.spin_until(lambda: any(
            v.get("continuous", "").endswith(note) for *_, v in diagnostics_of(diagnostics.msgs)),
            timeout=5.0), [v.get("continuous") for *_, v in diagnostics_of(diagnostics.msgs)]
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err
