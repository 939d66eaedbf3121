"""Parameters as users write them (issue 12 #4), several joint-state topics, diagnostics levels
and period: the node in this process (``NodeInProcess``), and as the installed executable (a
real process over real DDS, marked ``dds``) where its exit status or another executable is the
point.

Expectations are the demo arm's hand-derived values (test_node_full.py): at home the closest
pair (turret capsule tip and floor) is 0.1 m apart.
"""

from __future__ import annotations

import math
import time

import pytest
from conftest import DEMO_ARM
from ros_harness import NodeInProcess, NodeProcess, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import ContactArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
HOME = [0.0, 0.0, 0.0, 0.0]
NS = "/collision_monitor"


def _wait_exit(node, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end and node.alive():
        time.sleep(0.05)
    return not node.alive()


def _js(peer, names, positions):
    m = JointState(name=list(names), position=[float(p) for p in positions])
    m.header.stamp = peer.node.get_clock().now().to_msg()
    return m


def test_integers_are_accepted_for_numbers(peer, tmp_path):
    """`report_distance: 1` in a parameter file and `-p max_rate:=1000` (integers where numbers
    are declared). Before: a traceback from rclpy and exit 1. Now the node runs with them: the
    1 m report distance reports the 0.1 m home gap as a contact."""
    params = tmp_path / "ints.yaml"
    params.write_text(f"/**:\n  ros__parameters:\n    adf_files: ['{DEMO_ARM}']\n"
                      "    report_distance: 1\n    heartbeat_rate: 20\n")
    node = NodeInProcess(peer, {"max_rate": 1000},
                         extra_args=["--params-file", str(params)])
    try:
        got = []
        peer.node.create_subscription(ContactArray, NS + "/contacts", got.append, 10)
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        end = time.monotonic() + 30.0
        while time.monotonic() < end and not (got and got[-1].contacts):
            pub.publish(_js(peer, MOVABLE, HOME))
            peer.spin_for(0.05)
        assert got and got[-1].status == ContactArray.STATUS_OK, (node.alive(), got[-1:])
        assert got[-1].contacts[0].distance == pytest.approx(0.1, abs=1e-9)
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


BAD = [
    # (parameters, extra arguments, words on the one line)
    ({"max_rate": -5.0}, [], "parameter max_rate: must be a finite number in [0.1, 100000]"),
    ({"report_distance": "nan"}, [], "parameter report_distance: must be a finite number"),
    ({"report_distance": "abc"}, [], "parameter report_distance: must be a number, got 'abc'"),
    ({"heartbeat_rate": 0.0}, [], "parameter heartbeat_rate: must be a finite number in [0.1, 100]"),
    ({"publish_markers": "maybe"}, [], "parameter publish_markers: must be true or false"),
    ({"adf_files": [str(DEMO_ARM)], "joint_state_files": [0, 3]}, [],
     "parameter joint_state_files: 2 entries for 1 joint_state_topics"),
    ({"adf_files": [str(DEMO_ARM)], "joint_state_topics": ["a", "b"], "joint_state_files": [0, 3]},
     [], "parameter joint_state_files: 3 is not the index of one of the 1 adf_files"),
    ({"adf_files": [str(DEMO_ARM)], "root_frames": ["a", "b"]}, [],
     "parameter root_frames: 2 entries for 1 adf_files"),
    ({"tf_backend": "tf3"}, [], "parameter tf_backend: must be 'auto' or 'fallback'"),
    ({}, ["--params-file", "{tmp}/broken.yaml"], "broken.yaml"),
    ({}, ["--params-file", "{tmp}/missing.yaml"], "missing.yaml"),
]


@pytest.mark.parametrize("params,extra,words", BAD,
                         ids=[b[2].split(":")[0].replace("parameter ", "") + f"-{i}"
                              for i, b in enumerate(BAD)])
@pytest.mark.dds
def test_bad_value_or_file_is_one_line_and_exit_2(domain, tmp_path, params, extra, words):
    """Before: exit 1 and an rclpy traceback for each of these."""
    (tmp_path / "broken.yaml").write_text("/**:\n  ros__parameters:\n    max_rate: [1, 2\n")
    node = NodeProcess(domain, params, extra_args=[a.format(tmp=tmp_path) for a in extra])
    assert _wait_exit(node), "node kept running"
    code, out, err = node.stop()
    assert code == 2, (code, err)
    assert "Traceback" not in out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("collision_monitor: error: ") and words in lines[0], lines[0]


@pytest.mark.dds
def test_joint_player_accepts_an_integer_rate(domain, peer):
    """`rate:=50` (issue 12 #4; before: a traceback and exit 1): the player runs its 5 s at
    50 Hz and exits 0 (the first messages may go out before discovery completes)."""
    got = []
    peer.node.create_subscription(JointState, "/joint_states", got.append,
                                  qos_profile_sensor_data)
    node = NodeProcess(domain, {"rate": 50, "duration": 5}, executable="joint_player")
    assert peer.spin_until(lambda: not node.alive(), timeout=40.0)
    code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
    assert "at 50 Hz for 5 s" in out + err
    assert 20 <= len(got) <= 260, len(got)


def test_several_joint_state_topics_merge(peer):
    """joint_state_topics: the arm's pitch joints on one topic, yaw and wrist on another."""
    node = NodeInProcess(peer, {"adf_files": [str(DEMO_ARM)], "heartbeat_rate": 20.0,
                                  "joint_state_topics": ["/arm/pitch_js", "/arm/other_js"]})
    try:
        got = []
        peer.node.create_subscription(ContactArray, NS + "/contacts", got.append, 10)
        a = peer.node.create_publisher(JointState, "/arm/pitch_js", qos_profile_sensor_data)
        b = peer.node.create_publisher(JointState, "/arm/other_js", qos_profile_sensor_data)
        t1 = -math.acos(0.46)
        end = time.monotonic() + 30.0
        found = None
        while found is None and time.monotonic() < end:
            a.publish(_js(peer, MOVABLE[1:3], [t1, -math.pi - t1]))
            b.publish(_js(peer, [MOVABLE[0], MOVABLE[3]], [0.0, 0.0]))
            peer.spin_for(0.05)
            found = next((m for m in got[-3:] if m.status == ContactArray.STATUS_OK
                          and m.contacts and m.contacts[0].distance < 0.0), None)
        assert found is not None, got[-1:]
        assert found.contacts[0].distance == pytest.approx(-0.001, abs=1e-9)
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err


def test_diagnostics_levels_and_period(peer):
    """No joint state yet: level STALE (before: WARN); disabled: WARN (before: OK); published
    every diagnostics_period (0.25 s here; before: fixed 1 Hz)."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
    from std_srvs.srv import SetBool

    node = NodeInProcess(peer, {"adf_files": [str(DEMO_ARM)], "diagnostics_period": 0.25})
    try:
        diags = []
        peer.node.create_subscription(DiagnosticArray, "/diagnostics", diags.append, 10)
        assert peer.spin_until(lambda: diags, timeout=30.0)
        t0, n0 = time.monotonic(), len(diags)
        peer.spin_for(2.0)
        rate = (len(diags) - n0) / (time.monotonic() - t0)
        assert 2.5 <= rate <= 6.0, rate
        st = diags[-1].status[0]
        assert st.level == DiagnosticStatus.STALE and st.message.startswith("NO_JOINT_STATE")
        client = peer.node.create_client(SetBool, NS + "/enable")
        assert peer.spin_until(client.service_is_ready, timeout=10.0)
        fut = client.call_async(SetBool.Request(data=False))
        assert peer.spin_until(fut.done, timeout=10.0)
        assert peer.spin_until(lambda: diags[-1].status[0].message.startswith("DISABLED"), 5.0)
        assert diags[-1].status[0].level == DiagnosticStatus.WARN
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err
