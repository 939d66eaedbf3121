"""``~/reload`` under load (issue 15 #2 and the harness's "reload under load" class): the node
keeps evaluating and publishing while it reads the files.

Joint states stream at 100 Hz (the demo arm at its touch pose: the fingertip 1 mm into the
floor, test_node_full.py); each case calls ``~/reload`` with its files and checks that
``~/contacts`` never went quiet for two heartbeat periods (5 Hz: 0.4 s) from the call to the
answer, and that every output in that time is OK with the old model's -1 mm fingertip contact
(or the new one's, once installed). Before: a 7.8 MiB file kept the node silent for 3.7-4.9 s,
small files for 7-470 ms with 20-60 % of the joint states unanswered.
"""

from __future__ import annotations

import math
import shutil
import time

import pytest
from ros_harness import (RELOAD_UNDER_LOAD_ON_JAZZY, NodeProcess, RatePublisher, Received, diagnostics_of, domain,  # noqa: F401
                         peer, stamped_joint_state)

from ambf_collision.msg import ContactArray
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger

from conftest import REPO

pytestmark = pytest.mark.dds

ARM = REPO / "examples" / "demo" / "demo_arm.yaml"
MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
T1 = -math.acos(0.46)
TOUCH = [0.0, T1, -math.pi - T1, 0.0]
NS = "/collision_monitor"
HEARTBEAT = 5.0
FINGER, FLOOR = "/ambf/env/fingertip", "/ambf/env/floor"


def _finger_gap(m):
    for c in m.contacts:
        if {c.body_1, c.body_2} == {FINGER, FLOOR}:
            return c.distance
    return None


def _big(text, entries=320_000):  # ~1.9 MB: the arm plus list entries the loader ignores
    return text + "padding:\n" + "  - 0\n" * entries


CASES = {
    # name: (file text from the arm's text, success, words in the answer, gap after)
    "same files": (lambda t: t, True, "reloaded 1 ADF file(s)", -0.001),
    "new radius": (lambda t: t.replace("radius: 0.025", "radius: 0.02", 1), True, "reloaded",
                   0.004),
    "broken value": (lambda t: t.replace("radius: 0.025", "radius: -1.0", 1), False,
                     "BODY fingertip", -0.001),
    "malformed YAML": (lambda t: t + "\n  : [\n", False, "malformed YAML", -0.001),
    "nested 100000 deep": (lambda t: t + "deep: " + "[" * 100_000 + "]" * 100_000 + "\n", False,
                           "arm.yaml", -0.001),
    "alias bomb": (lambda t: t + "a: &a [0,0,0,0,0,0,0,0,0,0]\n" + "".join(
        f"{chr(98 + k)}: &{chr(98 + k)} [{', '.join(['*' + chr(97 + k)] * 10)}]\n"
        for k in range(8)), False, "alias", -0.001),
    "1.9 MB file": (_big, True, "reloaded", -0.001),
    "file deleted": (None, False, "arm.yaml", -0.001),
}


@RELOAD_UNDER_LOAD_ON_JAZZY
@pytest.mark.parametrize("case", list(CASES))
def test_reload_never_silences_the_node(domain, peer, tmp_path, case):
    make, success, words, gap_after = CASES[case]
    adf = tmp_path / "arm.yaml"
    shutil.copy(ARM, adf)
    node = NodeProcess(domain, {"adf_files": [str(adf)], "heartbeat_rate": HEARTBEAT})
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    joints = RatePublisher(pub, lambda: stamped_joint_state(peer, MOVABLE, TOUCH), 100.0)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        assert peer.spin_until(lambda: contacts.msgs and _finger_gap(contacts.last) is not None,
                               timeout=30.0), contacts.last
        good = ARM.read_text()
        if make is None:
            adf.unlink()
        else:
            adf.write_text(make(good))
        client = peer.node.create_client(Trigger, NS + "/reload")
        assert peer.spin_until(client.service_is_ready, timeout=10.0)
        t0 = time.monotonic()
        fut = client.call_async(Trigger.Request())
        assert peer.spin_until(fut.done, timeout=60.0), "no answer"
        t1 = time.monotonic()
        res = fut.result()
        assert res.success is success and words in res.message, res.message
        peer.spin_for(0.5)
        during = contacts.since(t0)
        assert contacts.largest_gap(t0, t1) < 2.0 / HEARTBEAT, (case, t1 - t0)
        assert all(m.status == ContactArray.STATUS_OK for m in during), {m.status for m in during}
        gaps = [_finger_gap(m) for m in during]
        assert all(g is not None and (abs(g + 0.001) < 1e-9 or abs(g - gap_after) < 1e-9)
                   for g in gaps), sorted(set(gaps), key=str)[:5]
        assert abs(gaps[-1] - gap_after) < 1e-9
        # every joint state sent during the reload got its answer (best-effort transport may
        # lose a few, a loaded machine coalesce a few: 10 % + 2 slack, since 5 % + 1 failed once
        # in the full suite for a small file); before, 20-60 % of them went unanswered
        sent = [ns for t, ns in list(joints.log) if t0 <= t <= t1]
        answered = {m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
                    for m in contacts.msgs}
        unanswered = [ns for ns in sent if ns not in answered]
        coalesced = [int(d[3]["coalesced"]) for d in diagnostics_of(diags.msgs)]
        assert len(unanswered) <= 2 + 0.1 * len(sent), (len(unanswered), len(sent), t1 - t0,
                                                        "coalesced", coalesced[:1] + coalesced[-1:])
    finally:
        joints.stop()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


@RELOAD_UNDER_LOAD_ON_JAZZY
def test_a_second_reload_while_one_runs_is_refused_with_the_reason(domain, peer, tmp_path):
    adf = tmp_path / "arm.yaml"
    adf.write_text(_big(ARM.read_text(), 80_000))  # ~0.5 MB: its load outlasts 50 ms many times
    node = NodeProcess(domain, {"adf_files": [str(adf)], "heartbeat_rate": HEARTBEAT})
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        assert peer.spin_until(lambda: contacts.msgs, timeout=30.0)
        client = peer.node.create_client(Trigger, NS + "/reload")
        assert peer.spin_until(client.service_is_ready, timeout=10.0)
        first = client.call_async(Trigger.Request())
        peer.spin_for(0.05)
        second = client.call_async(Trigger.Request())
        assert peer.spin_until(lambda: first.done() and second.done(), timeout=60.0)
        assert first.result().success, first.result().message
        assert not second.result().success
        assert "a reload is already running" in second.result().message
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
