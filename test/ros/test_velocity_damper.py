"""examples/velocity_damper.py in the loop with the installed monitor over real DDS (issue 13
item 7): the damper node drives the demo arm along its scripted self-contact approach (script
2.0-4.5 s: free pose, fold the fingertip onto the upper arm, hold), publishing the joint states
the monitor evaluates, and scales the script's velocities with the monitor's contacts.

Expectations: without the damper the script is followed and the fingertip penetrates the upper
arm (the script's key pose is ~3 mm deep: test_demo_model.py); with it, no published contact
distance ever drops below d_s (0.01 m), and the damper did act (the arm came within d_i).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest
from conftest import REPO
from ros_harness import NodeProcess, Received, domain, peer  # noqa: F401

from ambf_collision.msg import ContactArray

NS = "/collision_monitor"
D_S, D_I = 0.01, 0.08  # the example's defaults (m)


def _damper(domain: int, enabled: bool):
    args = [sys.executable, str(REPO / "examples" / "velocity_damper.py"), "--ros-args",
            "-r", f"contacts:={NS}/contacts", "-p", "demo:=true", "-p", "demo_start:=2.0",
            "-p", "demo_end:=4.5", "-p", f"enabled:={'true' if enabled else 'false'}"]
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
    return subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=str(REPO))


def _stamp(m) -> float:
    return m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec


def _run(peer, contacts, domain, enabled: bool, seconds: float = 5.0) -> list:
    """Contact distances (min per message) of the monitor's evaluations of this damper's
    joint states."""
    start = time.time()
    proc = _damper(domain, enabled)
    try:
        first = len(contacts.msgs)
        end = time.monotonic() + seconds + 10.0
        # until the damper's states arrive, then the script's 2.5 s and a margin
        while time.monotonic() < end:
            peer.spin_for(0.1)
            mine = [m for m in contacts.msgs[first:] if _stamp(m) >= start]
            if mine and _stamp(mine[-1]) - _stamp(mine[0]) > seconds:
                break
        assert proc.poll() is None, proc.communicate()[1]
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    mine = [m for m in contacts.msgs[first:] if _stamp(m) >= start and
            m.status == ContactArray.STATUS_OK]
    assert len(mine) > 100, (len(mine), err[-2000:])
    return [min((c.distance for c in m.contacts), default=float("inf")) for m in mine]


@pytest.mark.dds
@pytest.mark.slow
def test_damper_keeps_the_arm_out_of_contact_and_without_it_the_arm_penetrates(domain, peer):
    node = NodeProcess(domain, {"adf_files": [str(REPO / "examples" / "demo" / "demo_arm.yaml")],
                                "report_distance": 0.1, "heartbeat_rate": 20.0})
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts", qos=1000)
        assert peer.spin_until(lambda: contacts.msgs, timeout=60.0), "monitor not publishing"
        without = _run(peer, contacts, domain, enabled=False)
        assert min(without) < 0.0, min(without)  # the script penetrates
        damped = _run(peer, contacts, domain, enabled=True)
        print(f"min distance without {min(without):.4f} m, with {min(damped):.4f} m")
        assert min(damped) >= D_S, min(damped)
        assert min(damped) < D_I, min(damped)  # it came close: the damper acted
    finally:
        code, _, err = node.stop()
    assert code == 0, err


def test_damper_scale_hand_values():
    """The rule of examples/velocity_damper.py on values worked by hand (d_i 0.08, d_s 0.01,
    xi 0.3): at d = 0.045 the bound is -0.3 * 0.035 / 0.07 = -0.15 m/s, so an approach at
    -0.3 m/s is halved; contacts beyond d_i or moving away fast enough do not limit; an
    approach at or below d_s stops."""
    sys.path.insert(0, str(REPO / "examples"))
    from velocity_damper import damper_bound, damper_scale

    assert damper_bound(0.045, 0.08, 0.01, 0.3) == pytest.approx(-0.15, rel=1e-15)
    qdot = [1.0, 0.0]
    args = (0.08, 0.01, 0.3)
    assert damper_scale([0.045], [[-0.3, 5.0]], qdot, *args) == pytest.approx(0.5, rel=1e-14)
    assert damper_scale([0.045, 0.2], [[-0.3, 0.0], [-9.0, 0.0]], qdot, *args) == pytest.approx(0.5)
    assert damper_scale([0.045], [[-0.1, 0.0]], qdot, *args) == 1.0  # -0.1 >= -0.15
    assert damper_scale([0.005], [[0.1, 0.0]], qdot, *args) == 1.0  # moving away fast enough
    assert damper_scale([0.005], [[-0.01, 0.0]], qdot, *args) == 0.0  # below d_s, approaching
    assert damper_scale([0.01], [[-1e-9, 0.0]], qdot, *args) == 0.0  # at d_s
    assert damper_scale([], [], qdot, *args) == 1.0
    # the smallest of several limits: d 0.045 at -0.3 (0.5) and d 0.03 at -0.5 (bound
    # -0.3 * 0.02 / 0.07 = -0.0857..., s = 0.1714...)
    s = damper_scale([0.045, 0.03], [[-0.3, 0.0], [-0.5, 0.0]], qdot, *args)
    assert s == pytest.approx(0.3 * 0.02 / 0.07 / 0.5, rel=1e-12)
