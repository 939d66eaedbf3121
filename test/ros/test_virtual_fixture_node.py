"""The ``virtual_fixture`` executable over DDS (issue 37 §3), in lockstep with a simulated clock
(``/clock``, ``use_sim_time`` on the fixture) so that a busy machine changes only how long it
takes, never what happens.

- Closed loop: the real ``collision_monitor`` (on the system clock, see ``MONITOR``) on the test's dVRK-like model
  (test/model/adf_models/fixture/) reads the PSM's CRTK joint states (``/PSM1/measured_js``,
  positions and velocities), the ``virtual_fixture`` reads its contacts and drives the master
  (``/MTMR/body/servo_cf``), and the test's hand model (``test/monitor/fixture_loop.py``: a
  mass-damper hand on the master, the PSM moved through the teleop scale and the registration)
  moves the PSM by what the master does. Each 1 ms step: the PSM's state of step t, the
  monitor's contacts of it, the clock to t, the fixture's wrench of t. Every
  approach stops out of contact, and nothing pushes the tool while it retreats.
- Faults: contacts that go stale (the fixture's ramp measured step by step), a dead monitor,
  NaN and empty messages, a NaN in a joint state: zero wrench, never NaN, the node alive.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import TEST_DIR
from ros_harness import NodeProcess, Received, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import Contact, ContactArray

pytestmark = pytest.mark.dds

import sys  # noqa: E402

sys.path.insert(0, str(TEST_DIR / "monitor"))
import fixture_loop as loop  # noqa: E402

T0 = 1000.0  # s of sim time at the start
MONITOR = {"adf_files": [str(f) for f in loop.FILES], "joint_state_topics": ["/PSM1/measured_js"],
           "report_distance": 0.05, "max_rate": 100000.0, "publish_markers": False,
           "joint_state_timeout": 0.0, "max_stamp_age": 1e6}
"""The monitor on the system clock (evaluating each joint state as it comes; its rate cap and
busy share are wall-clock budgets, which a frozen sim clock would never refill): the joint
states carry wall-clock stamps, one 1 ms apart per step (they fall behind the wall clock: the
stale check is off)."""
WRENCH = "/MTMR/body/servo_cf"
CONTACTS = "/collision_monitor/contacts"
R = np.array([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])  # W -> M: +90 deg about z
ANSWER_SHIFT = 500_000  # ns: hand-made contacts' stamps before the step's clock (their answers
# then differ from the timer's wrenches, stamped with the clock)


def _stamp(m) -> int:
    return m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec


def _ns(t: float) -> int:
    return int(round(t * 1e9))


def _js_stamp(js, t: float, wall0: int) -> int:
    """Stamp ``js`` for sim time ``t``: ``wall0`` (ns) plus the sim time since T0."""
    ns = wall0 + _ns(t) - _ns(T0)
    js.header.stamp.sec, js.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    return ns


class SimClock:
    """Publishes ``/clock`` and waits for each node's answer to one step."""

    def __init__(self, peer):
        from rosgraph_msgs.msg import Clock

        self.peer, self.Clock = peer, Clock
        self.pub = peer.node.create_publisher(Clock, "/clock", 10)
        self.t = T0

    def set(self, t: float):
        self.t = t
        c = self.Clock()
        c.clock.sec, c.clock.nanosec = divmod(_ns(t), 1_000_000_000)
        self.pub.publish(c)


def _fixture(domain, **params):
    base = {"use_sim_time": True, "registration": R.ravel().tolist()}
    return NodeProcess(domain, dict(base, **params), executable="virtual_fixture")


def _exchange(peer, send, received, stamp_ns: int, what: str, timeout=60.0):
    """``send()``, then the message of ``received`` stamped ``stamp_ns``; ``send()`` again
    every 0.25 s until it comes (``/clock`` and joint states travel best effort: a lost one
    is sent again; a repeated clock value fires no timer, a repeated joint state only gives a
    second evaluation of the same stamp)."""
    def found():
        return any(_stamp(m) == stamp_ns for m in received.msgs[-5:])
    for _ in range(int(timeout / 0.25)):
        send()
        if peer.spin_until(found, timeout=0.25, step=0.001):
            return next(m for m in reversed(received.msgs) if _stamp(m) == stamp_ns)
    raise AssertionError(f"no {what} stamped {stamp_ns}; last: "
                         f"{[_stamp(m) for m in received.msgs[-5:]]}")


def _force(m) -> np.ndarray:
    f = m.wrench.force
    return np.array([f.x, f.y, f.z])


def _start_wrenches(peer, clock, wrenches, t=T0):
    """Advance the clock until the fixture answers (its subscriptions matched)."""
    for k in range(3000):
        clock.set(t + k * loop.DT)
        if peer.spin_until(lambda: wrenches.msgs and _stamp(wrenches.msgs[-1]) == _ns(clock.t),
                           timeout=0.05, step=0.005):
            return clock.t
    raise AssertionError("the virtual_fixture node never published a wrench")


def _run_approaches(peer, domain, n: int, seed: int):
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import JointState

    from ambf_collision.monitor.virtual_fixture import FixtureParams

    p = FixtureParams()
    monitor = NodeProcess(domain, MONITOR)
    fixture = _fixture(domain)
    try:
        clock = SimClock(peer)
        wrenches = Received(peer, WrenchStamped, WRENCH, qos=100)
        contacts = Received(peer, ContactArray, CONTACTS, qos=100)
        js_pub = peer.node.create_publisher(JointState, "/PSM1/measured_js", 100)
        t = _start_wrenches(peer, clock, wrenches)
        wall0 = time.time_ns() - (_ns(t) - _ns(T0))
        rng = np.random.default_rng(seed)
        min_distance, max_force, pushed, stopped = math.inf, 0.0, 0, 0
        for i in range(n):
            a = loop.random_approach(rng, p.activation_distance)
            a.registration = R
            tip, v_m = a.start.copy(), a.master_intent.copy()
            n_approach = int(round(((p.activation_distance + loop.START_GAP) / a.speed
                                    + loop.HOLD) / loop.DT))
            n_total = n_approach + int(round(loop.RETREAT / loop.DT))
            to_psm = loop.SCALE * R.T
            closest, was_away = math.inf, False
            for k in range(n_total):
                t += loop.DT
                intent = a.master_intent if k < n_approach else -a.master_intent
                js = JointState(name=loop.JOINTS, position=(tip - loop.TIP_AT_ZERO).tolist(),
                                velocity=(to_psm @ v_m).tolist())
                stamp = _js_stamp(js, t, wall0)
                c = _exchange(peer, lambda: js_pub.publish(js), contacts, stamp, "contacts")
                assert c.status == ContactArray.STATUS_OK, c.status_message
                tool = [x for x in c.contacts if x.body_1.startswith("/PSM1/")
                        or x.body_2.startswith("/PSM1/")]
                d = min((x.distance for x in tool), default=math.inf)
                rate = min(tool, key=lambda x: x.distance).distance_rate if tool else 0.0
                closest = min(closest, d)
                peer.spin_for(0.002)  # the fixture takes the same contacts
                # the fixture's 1 kHz timer: the wrench of t
                w = _exchange(peer, lambda: clock.set(t), wrenches, _ns(t), "wrench")
                f_m = _force(w)
                assert np.isfinite(f_m).all()
                max_force = max(max_force, float(np.linalg.norm(f_m)))
                # moving away outside d_s at this step and the one before (the fixture may take
                # the contacts of t after the clock's t: one step of transport delay)
                away = rate > 0.0 and d > p.safety_distance
                if k >= n_approach and away and was_away and f_m.any():
                    pushed += 1
                was_away = away
                v_new = loop.hand_step(v_m, intent, a.damping, a.mass, f_m)
                tip = tip + to_psm @ (0.5 * loop.DT * (v_m + v_new))
                v_m = v_new
            min_distance = min(min_distance, closest)
            stopped += closest > 0.0
        assert monitor.alive() and fixture.alive()
    finally:
        fixture.stop()
        monitor.stop()
    print(f"{n} approaches over DDS: min distance {min_distance * 1e3:.2f} mm, max force "
          f"{max_force:.2f} N")
    assert stopped == n, min_distance
    assert pushed == 0
    assert max_force <= p.max_force + 1e-9


def test_approaches_over_dds_stop_before_contact(peer, domain):
    _run_approaches(peer, domain, 6, seed=370)


@pytest.mark.slow
def test_more_approaches_over_dds_stop_before_contact(peer, domain):
    _run_approaches(peer, domain, 30, seed=3700)


def _contact(d, normal=(0.0, 0.0, -1.0), rate=-0.01, body_1="/PSM1/tip", body_2="/env/organ"):
    c = Contact(body_1=body_1, body_2=body_2, distance=float(d), distance_rate=float(rate))
    c.normal.x, c.normal.y, c.normal.z = (float(v) for v in normal)
    return c


def test_stale_contacts_ramp_to_zero_and_bad_messages_give_zero(peer, domain):
    """Hand-made contacts straight to the node: d 0.01 closing at 0.01 m/s, normal -z from the
    tool: 4.5 N up in W (test_virtual_fixture.py), +z in M too (R turns about z). Then none:
    stale 50 ms after the last (max_contact_age), zero 10 ms (ramp_time) later, as a ramp of at
    most 0.45 N per 1 ms step. NaN values, an empty array and a status other than OK: zero.
    The velocity scale (d_i 0.05, d_s 0.003, xi 0.3): at d 0.01 the bound is
    -0.3 * 0.007 / 0.047 = -0.0447 m/s, so -0.01 m/s keeps 1 and -0.1 m/s gets 0.447; stale: 0."""
    from geometry_msgs.msg import WrenchStamped
    from std_msgs.msg import Float64

    fixture = _fixture(domain, publish_velocity_scale=True)
    scales = Received(peer, Float64, "/velocity_scale", qos=1000)
    try:
        clock = SimClock(peer)
        wrenches = Received(peer, WrenchStamped, WRENCH, qos=1000)
        pub = peer.node.create_publisher(ContactArray, CONTACTS, 10)
        t = _start_wrenches(peer, clock, wrenches)
        assert not _force(wrenches.msgs[-1]).any()  # nothing received yet: zero

        def steps(n, msg=None):
            nonlocal t
            out = []
            for _ in range(n):
                t += loop.DT
                if msg is not None:  # stamped half a step before t: its answer's stamp
                    msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(
                        _ns(t) - ANSWER_SHIFT, 10**9)
                    pub.publish(msg)
                    peer.spin_for(0.003)
                out.append(_force(_exchange(peer, lambda: clock.set(t), wrenches, _ns(t),
                                            "wrench")))
            return np.array(out)

        good = ContactArray(status=ContactArray.STATUS_OK, contacts=[_contact(0.01)])
        held = steps(60, good)
        assert held[-1] == pytest.approx([0.0, 0.0, 4.5], abs=1e-9)
        # each array is answered at once, stamped with its stamp: the same wrench as the timer's
        answer = _exchange(peer, lambda: None, wrenches, _ns(t) - ANSWER_SHIFT, "answer")
        assert _force(answer) == pytest.approx([0.0, 0.0, 4.5], abs=1e-9)
        assert peer.spin_until(lambda: scales.msgs and scales.last.data == 1.0, timeout=10.0)
        fall = steps(100)
        assert peer.spin_until(lambda: scales.last.data == 0.0, timeout=10.0)
        trace = np.concatenate((held[-1:, 2], fall[:, 2]))
        assert np.abs(np.diff(trace)).max() <= 0.45 + 1e-9  # a ramp, no step
        # the last contacts arrived one step (the clock's previous value) before the last held
        # wrench: stale from about the 50th step on, zero 10 steps later at the latest
        assert fall[:45, 2].min() == pytest.approx(4.5) and not fall[62:].any()
        for bad in (ContactArray(status=ContactArray.STATUS_OK,
                                 contacts=[_contact(math.nan), _contact(0.01)]),
                    ContactArray(status=ContactArray.STATUS_OK,
                                 contacts=[_contact(0.01, normal=(math.inf, 0.0, 0.0))]),
                    ContactArray(status=ContactArray.STATUS_BAD_JOINT_STATE,
                                 contacts=[_contact(0.01)]),
                    ContactArray(status=ContactArray.STATUS_OK, contacts=[])):
            steps(30, good)
            out = steps(30, bad)
            assert np.isfinite(out).all() and not out[12:].any(), out[:, 2]
        steps(5, ContactArray(status=ContactArray.STATUS_OK, contacts=[_contact(0.01, rate=-0.1)]))
        assert peer.spin_until(lambda: scales.last.data == pytest.approx(
            0.3 * 0.007 / 0.047 / 0.1, rel=1e-12), timeout=10.0), scales.last.data
        assert fixture.alive()
    finally:
        code, _, err = fixture.stop()
        print(err[-3000:])
    assert code == 0, err


def test_dead_monitor_and_a_nan_joint_state_give_zero_and_the_nodes_live(peer, domain):
    """No monitor at all: zero wrenches at the timer's rate. Then the monitor, the PSM's tip 10 mm
    above the organ closing at 0.01 m/s (4.5 N up), and a joint state with a NaN: the monitor
    says BAD_JOINT_STATE, the wrench goes to zero, both nodes live and recover."""
    from geometry_msgs.msg import WrenchStamped
    from sensor_msgs.msg import JointState

    fixture = _fixture(domain)
    monitor = None
    try:
        clock = SimClock(peer)
        wrenches = Received(peer, WrenchStamped, WRENCH, qos=1000)
        t = _start_wrenches(peer, clock, wrenches)
        for _ in range(200):  # 0.2 s of a dead monitor
            t += loop.DT
            assert not _force(_exchange(peer, lambda: clock.set(t), wrenches, _ns(t),
                                        "wrench")).any()
        monitor = NodeProcess(domain, MONITOR)
        contacts = Received(peer, ContactArray, CONTACTS, qos=100)
        js_pub = peer.node.create_publisher(JointState, "/PSM1/measured_js", 100)
        wall0 = time.time_ns() - (_ns(t) - _ns(T0))
        z = 0.2 + loop.TIP_RADIUS + 0.01 - loop.TIP_AT_ZERO[2]

        def step(position):
            nonlocal t
            t += loop.DT
            js = JointState(name=loop.JOINTS, position=position, velocity=[0.0, 0.0, -0.01])
            stamp = _js_stamp(js, t, wall0)
            if all(math.isfinite(x) for x in position):
                c = _exchange(peer, lambda: js_pub.publish(js), contacts, stamp, "contacts",
                              timeout=180.0)
            else:  # refused: no evaluation; the monitor says so at its heartbeat (10 Hz)
                js_pub.publish(js)
                c = contacts.msgs[-1]
            peer.spin_for(0.002)
            return c, _force(_exchange(peer, lambda: clock.set(t), wrenches, _ns(t), "wrench"))

        for _ in range(3000):  # until the fixture hears the monitor (discovery)
            c, f = step([0.0, 0.0, z])
            if f[2] == pytest.approx(4.5, abs=1e-6):
                break
        assert c.status == ContactArray.STATUS_OK
        assert f == pytest.approx([0.0, 0.0, 4.5], abs=1e-6)  # R keeps z
        bad_at = None
        for k in range(300):  # 0.3 s of NaN joint states
            c, f = step([0.0, math.nan, z])
            assert np.isfinite(f).all()
            if bad_at is None and any(m.status == ContactArray.STATUS_BAD_JOINT_STATE
                                      for m in contacts.msgs[-3:]):
                bad_at = k
            if bad_at is not None and k > bad_at + 11:  # 10 ms after the status at the latest
                assert not f.any(), (k, bad_at, f)
        assert bad_at is not None and bad_at < 150  # the heartbeat said so (10 Hz)
        for _ in range(3000):  # good joint states again: the wrench again
            c, f = step([0.0, 0.0, z])
            if f[2] == pytest.approx(4.5, abs=1e-6):
                break
        assert c.status == ContactArray.STATUS_OK and f[2] == pytest.approx(4.5, abs=1e-6)
        assert monitor.alive() and fixture.alive()
    finally:
        code, _, err = fixture.stop()
        if monitor is not None:
            monitor.stop()
    assert code == 0, err
