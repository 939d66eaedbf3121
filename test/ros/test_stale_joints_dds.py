"""Issue 33 over real DDS against the installed node: a joint named once never leaves the node
STALE, a joint that stops arriving is named (contacts' ``status_message``, ``/diagnostics``) until
it comes again or is forgotten, and any two signals end the node cleanly.

The staleness rules themselves are tested in process on simulated time
(test/monitor/test_stale_joints.py); here the real node, its parameter file and its messages.
"""

from __future__ import annotations

import signal
import time

import pytest
from conftest import REPEATS, REPO
from ros_harness import (NodeProcess, RatePublisher, Received, diagnostics_of, domain,  # noqa: F401
                         peer, stamped_joint_state)

from ambf_collision.msg import ContactArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
NS = "/collision_monitor"
OK, STALE = ContactArray.STATUS_OK, ContactArray.STATUS_STALE_JOINT_STATE
DEMO_PARAMS = ["--params-file", str(REPO / "config" / "demo.yaml")]
pytestmark = pytest.mark.dds


def _publish(peer, pub, names, seconds: float, rate: float = 50.0):
    """Publish freshly stamped states of ``names`` at ``rate`` for ``seconds`` while spinning."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pub.publish(stamped_joint_state(peer, names, [0.1] * len(names)))
        peer.spin_for(1.0 / rate)


def _first_ok(peer, pub, contacts):
    for _ in range(300):  # start-up and discovery: up to 15 s
        _publish(peer, pub, MOVABLE, 0.05)
        if contacts.last is not None and contacts.last.status == OK:
            return len(contacts.msgs)
    raise AssertionError("the node never answered OK")


@pytest.mark.slow
def test_a_fixed_joint_named_once_never_leaves_the_node_stale(domain, peer):
    """The issue's sequence with config/demo.yaml and joint_state_timeout 5 s: the four movable
    joints, one message that also names the fixed fingertip_mount, then the four at 50 Hz for
    6.5 s. Before: STALE_JOINT_STATE from 5 s on, for good."""
    node = NodeProcess(domain, extra_args=DEMO_PARAMS + ["-p", "joint_state_timeout:=5.0"])
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        start = _first_ok(peer, pub, contacts)
        _publish(peer, pub, MOVABLE, 1.0)
        pub.publish(stamped_joint_state(peer, MOVABLE + ["fingertip_mount"], [0.1] * 5))
        _publish(peer, pub, MOVABLE, 6.5)
        after = contacts.msgs[start:]
        assert len(after) > 300  # answered throughout (7.5 s at 50 Hz)
        assert {m.status for m in after} == {OK}, {(m.status, m.status_message) for m in after}
        assert {m.status_message for m in after} == {""}
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err


def test_a_joint_that_stops_is_named_then_forgotten_then_back(domain, peer):
    """wrist stops: STALE naming it (status_message and /diagnostics' stale_joints) from 0.5 s,
    forgotten after joint_forget_timeout 2 s (OK naming it), OK with nothing to say once it
    comes again."""
    from diagnostic_msgs.msg import DiagnosticArray

    node = NodeProcess(domain, extra_args=DEMO_PARAMS + [
        "-p", "joint_forget_timeout:=2.0", "-p", "diagnostics_period:=0.2"])
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        _first_ok(peer, pub, contacts)
        t0 = time.monotonic()
        _publish(peer, pub, MOVABLE[:3], 1.5)
        stale = [m for m in contacts.since(t0) if m.status == STALE]
        assert stale, [(m.status, m.status_message) for m in contacts.since(t0)][-3:]
        assert "/ambf/env/wrist (" in stale[-1].status_message
        assert "timeout 0.5 s" in stale[-1].status_message
        assert "elbow" not in stale[-1].status_message
        named = [v for _, _, msg, v in diagnostics_of(diags.since(t0))
                 if msg.startswith("STALE_JOINT_STATE")]
        assert named and named[-1]["stale_joints"].startswith("/ambf/env/wrist (")
        t1 = time.monotonic()
        _publish(peer, pub, MOVABLE[:3], 1.5)  # 3 s since wrist's last state: forgotten
        last = contacts.since(t1)[-1]
        assert last.status == OK and "forgotten after 2 s" in last.status_message
        assert "/ambf/env/wrist" in last.status_message
        t2 = time.monotonic()
        _publish(peer, pub, MOVABLE, 0.5)
        back = contacts.since(t2)
        assert back[-1].status == OK and back[-1].status_message == ""
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in err, err
    assert "wrist" in out + err  # the throttled warning names it


SIGNAL_ORDERS = [(signal.SIGTERM, signal.SIGINT, 0.05), (signal.SIGINT, signal.SIGTERM, 0.05),
                 (signal.SIGINT, signal.SIGINT, 0.05), (signal.SIGTERM, signal.SIGTERM, 0.0),
                 (signal.SIGTERM, signal.SIGINT, 0.005)]


@pytest.mark.slow
@pytest.mark.parametrize("run", range(len(SIGNAL_ORDERS) * REPEATS))
def test_two_signals_under_1_khz_load_end_the_node_cleanly(domain, peer, run):
    """Two signals under 1 kHz joint states, in every order and spacing (the issue's SIGTERM then
    SIGINT 50 ms later first; each order 4 times under the ci profile): exit 0, no traceback.
    Before: a KeyboardInterrupt traceback from rclpy's context.ok() when the second came during
    the shutdown."""
    first, second, gap = SIGNAL_ORDERS[run % len(SIGNAL_ORDERS)]
    node = NodeProcess(domain, {"adf_files": [str(REPO / "examples" / "demo" / "demo_arm.yaml")]})
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    contacts = Received(peer, ContactArray, NS + "/contacts")
    load = RatePublisher(pub, lambda: stamped_joint_state(peer, MOVABLE, [0.0] * 4), 1000.0)
    try:
        assert peer.spin_until(lambda: len(contacts.msgs) > 50, timeout=60.0), "no answer"
        node.proc.send_signal(first)
        time.sleep(gap)
        if node.alive():
            node.proc.send_signal(second)
        out, err = node.proc.communicate(timeout=20.0)  # no third signal
        code = node.proc.returncode
    finally:
        load.stop()
        if node.alive():
            node.stop(signal.SIGKILL)
    assert code == 0, (code, err[-2000:])
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-2000:]
