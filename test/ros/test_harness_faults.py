"""Faults around the installed node (issue 15 #6 and the harness's "faults" class): bodies that
lose their collision geometry, warnings that must reach the ROS log, signals and services while
a reload runs. The warnings with the node in this process (``NodeInProcess``, its log read
through capfd); signals and services during a reload against the installed node over real DDS
(marked ``dds``: the process and its executor are the point).
"""

from __future__ import annotations

import math
import signal
import time

import pytest
from conftest import REPO
from ros_harness import (RELOAD_UNDER_LOAD_ON_JAZZY, SPHERE_ADF, NodeInProcess, NodeProcess, Received, domain, peer,  # noqa: F401
                         stamped_joint_state)

from ambf_collision.msg import ContactArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_srvs.srv import SetBool, Trigger

NS = "/collision_monitor"
ARM = REPO / "examples" / "demo" / "demo_arm.yaml"

NO_GEOMETRY = """
BODY ghost:
  name: ghost
  mass: 0.0
  location:
    position: {x: 3.0, y: 0.0, z: 0.0}
    orientation: {r: 0.0, p: 0.0, y: 0.0}
BODY lost_mesh:
  name: lost_mesh
  mass: 0.0
  location:
    position: {x: 5.0, y: 0.0, z: 0.0}
    orientation: {r: 0.0, p: 0.0, y: 0.0}
  collision mesh: missing_part.STL
"""


def _file_without_geometry(tmp_path):
    """One sphere and two bodies without collision geometry: 'ghost' (neither shape nor mesh)
    and 'lost_mesh' (its mesh file does not exist)."""
    text = SPHERE_ADF.format(name="ball", ns="f", x=0.0).replace(
        "bodies: [BODY ball]", "bodies: [BODY ball, BODY ghost, BODY lost_mesh]")
    path = tmp_path / "f.yaml"
    path.write_text(text + NO_GEOMETRY)
    return path


def _warnings(log: str, words: str) -> list:
    return [ln for ln in log.splitlines() if words in ln]


def _call(peer, srv, name, request, timeout=30.0):
    client = peer.node.create_client(srv, name)
    assert peer.spin_until(client.service_is_ready, timeout=10.0), name
    fut = client.call_async(request)
    return fut


def test_bodies_without_geometry_are_warned_through_the_ros_log(peer, tmp_path, capfd):
    """At start-up and again on reload: one warning per body, through the ROS logger (the
    '[WARN] ... [collision_monitor]:' lines), none through Python's warnings module."""
    path = _file_without_geometry(tmp_path)
    node = NodeInProcess(peer, {"adf_files": [str(path)], "heartbeat_rate": 10.0}, capfd=capfd)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        assert peer.spin_until(lambda: contacts.msgs, timeout=30.0)
        fut = _call(peer, Trigger, NS + "/reload", Trigger.Request())
        assert peer.spin_until(fut.done, timeout=30.0) and fut.result().success
        peer.spin_for(0.3)
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
    log = out + err
    ghost = _warnings(log, "BODY ghost")
    lost = _warnings(log, "BODY lost_mesh")
    assert len(ghost) == 2 and len(lost) == 2, log  # start-up and reload
    for line in ghost + lost:
        assert line.startswith("[WARN]") and "[collision_monitor]:" in line, line
        assert str(path) in line and "no collision geometry" in line, line
    assert "missing_part.STL" in lost[0]
    assert "Warning:" not in log and "warnings.warn" not in log, log


@pytest.mark.dds
def test_sigterm_during_a_reload_ends_cleanly(domain, peer, tmp_path):
    """A reload of a 1.9 MB file is running when SIGTERM comes: exit 0, no traceback."""
    adf = tmp_path / "arm.yaml"
    adf.write_text(ARM.read_text() + "padding:\n" + "  - 0\n" * 320_000)
    node = NodeProcess(domain, {"adf_files": [str(adf)], "heartbeat_rate": 10.0})
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        assert peer.spin_until(lambda: contacts.msgs, timeout=60.0)
        _call(peer, Trigger, NS + "/reload", Trigger.Request())
        peer.spin_for(0.3)
        assert node.alive()
    finally:
        code, out, err = node.stop(signal.SIGTERM)
    assert code == 0 and "Traceback" not in out + err, err


@pytest.mark.dds
@RELOAD_UNDER_LOAD_ON_JAZZY
def test_services_answer_while_a_reload_runs(domain, peer, tmp_path):
    """~/enable answers during a reload of a 0.5 MB file (its load takes many times what the
    answer does), and its effect shows at once in the outputs (DISABLED), before the reload has
    finished."""
    adf = tmp_path / "arm.yaml"
    adf.write_text(ARM.read_text() + "padding:\n" + "  - 0\n" * 80_000)
    node = NodeProcess(domain, {"adf_files": [str(adf)], "heartbeat_rate": 10.0})
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        t1 = -math.acos(0.46)
        end = time.monotonic() + 60.0
        while not (contacts.msgs and contacts.last.status == ContactArray.STATUS_OK):
            assert time.monotonic() < end, contacts.last
            pub.publish(stamped_joint_state(peer, ["shoulder_yaw", "shoulder_pitch", "elbow",
                                                   "wrist"], [0.0, t1, -math.pi - t1, 0.0]))
            peer.spin_for(0.1)
        reload = _call(peer, Trigger, NS + "/reload", Trigger.Request())
        t0 = time.monotonic()
        enable = _call(peer, SetBool, NS + "/enable", SetBool.Request(data=False))
        assert peer.spin_until(enable.done, timeout=10.0) and enable.result().success
        assert peer.spin_until(lambda: contacts.last.status == ContactArray.STATUS_DISABLED,
                               timeout=5.0)
        assert not reload.done(), f"reload finished first ({time.monotonic() - t0:.2f} s)"
        assert peer.spin_until(reload.done, timeout=60.0) and reload.result().success
        peer.spin_for(0.3)
        assert contacts.last.status == ContactArray.STATUS_DISABLED  # the flag carried over
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
