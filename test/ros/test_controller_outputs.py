"""Issue 13 over real DDS: the contacts a controller uses (Jacobians, distance rates, body-frame
points, joint names, the velocities flag), padding, per-class report distances and the pair
list changed at run time, against the installed node.

Oracles: central finite differences of the library's own distance (an independent computation:
positions only, no Jacobian code) for the Jacobians; the dot product of the published Jacobian
with the velocities this test sent for the rates; the body poses of an in-process Model for the
body-frame points; the padding's definition (a pair's distance drops by both paddings); the demo
file's structure (floor and table are joined to nothing: environment bodies).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest
from conftest import DEMO_ARM
from ros_harness import NodeInProcess, Received, domain, peer, stamped_joint_state  # noqa: F401

from ambf_collision.model import Model
from ambf_collision.msg import ContactArray
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

NS = "/collision_monitor"
MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
SELF = [0.8, 0.3, 2.5, 1.74]  # demo trajectory's self-contact pose (fingertip on the upper arm)
VELOCITY = [0.3, -0.2, 0.5, 0.1]  # rad/s
ENVIRONMENT = {"floor", "table"}  # demo bodies joined to nothing


def _plain(name: str) -> str:
    return name.rsplit("/", 1)[-1]


def _set(peer, **values):
    """Set parameters of the node; returns the SetParametersResult list."""
    from rcl_interfaces.srv import SetParameters
    from rclpy.parameter import Parameter

    client = peer.node.create_client(SetParameters, NS + "/set_parameters")
    assert peer.spin_until(client.service_is_ready, timeout=15.0)
    req = SetParameters.Request(parameters=[Parameter(k, value=v).to_parameter_msg()
                                            for k, v in values.items()])
    fut = client.call_async(req)
    assert peer.spin_until(fut.done, timeout=15.0)
    return fut.result().results


def _next(peer, pub, contacts, msg_fn, pred=lambda m: True, timeout=20.0):
    """Publish ``msg_fn()`` every 50 ms until a ContactArray received after it satisfies pred."""
    end = time.monotonic() + timeout
    start = len(contacts.msgs)
    while time.monotonic() < end:
        pub.publish(msg_fn())
        peer.spin_for(0.05)
        for m in contacts.msgs[start:]:
            if m.status == ContactArray.STATUS_OK and pred(m):
                return m
    raise AssertionError(f"no matching ContactArray within {timeout} s")


def _state(peer, positions, velocities=None):
    m = stamped_joint_state(peer, MOVABLE, positions)
    if velocities is not None:
        m.velocity = [float(v) for v in velocities]
    return m


def _pair_distance(model, data, q, body_1, body_2, shape_1, shape_2):
    model.set_joint_positions(data, MOVABLE, q)
    r = model.evaluate(data, report_distance=1.0)
    for c in r.contacts:
        if (c.body_1, c.body_2, c.shape_1, c.shape_2) == (body_1, body_2, shape_1, shape_2):
            return c.distance
    raise AssertionError(f"pair {body_1}-{body_2} not within 1 m")


@pytest.fixture
def node(peer):
    """The demo node in this process (``NodeInProcess``), spun with ``peer``."""
    n = NodeInProcess(peer, {"adf_files": [str(DEMO_ARM)], "report_distance": 0.1,
                             "heartbeat_rate": 20.0})
    yield n
    code, _, err = n.stop()
    assert code == 0, err


def test_contacts_carry_jacobians_rates_and_body_points(node, peer):
    model = Model.from_files([str(DEMO_ARM)])
    data, fd_data = model.create_data(), model.create_data()
    contacts = Received(peer, ContactArray, NS + "/contacts")
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    m = _next(peer, pub, contacts, lambda: _state(peer, SELF, VELOCITY),
              lambda m: m.velocities_given and len(m.contacts) > 0)
    assert list(m.joint_names) == model.joint_names
    J = len(model.joint_names)
    qdot = np.zeros(J)
    for name, v in zip(MOVABLE, VELOCITY):
        qdot[[_plain(n) for n in model.joint_names].index(name)] = v
    model.set_joint_positions(data, MOVABLE, SELF)
    model.evaluate(data, report_distance=0.1)
    body = {n: i for i, n in enumerate(model.body_names)}
    h = 1e-6
    checked = 0
    for c in m.contacts:
        jac = np.array(c.jacobian)
        assert jac.shape == (J,) and np.isfinite(jac).all()
        assert c.distance_rate == pytest.approx(float(jac @ qdot), rel=1e-12, abs=1e-15)
        for p, local, b in ((c.point_1, c.point_1_local, c.body_1),
                            (c.point_2, c.point_2_local, c.body_2)):
            R, t = data.body_R[body[b]], data.body_t[body[b]]
            world = R @ [local.x, local.y, local.z] + t
            np.testing.assert_allclose(world, [p.x, p.y, p.z], atol=1e-9)
        if c.distance < -1e-4 or c.distance > 1e-4:  # a unique witness pair away from touching
            fd = []
            for k, name in enumerate(MOVABLE):
                qp, qm = list(SELF), list(SELF)
                qp[k] += h
                qm[k] -= h
                key = (c.body_1, c.body_2, c.shape_1, c.shape_2)
                fd.append((_pair_distance(model, fd_data, qp, *key)
                           - _pair_distance(model, fd_data, qm, *key)) / (2 * h))
            cols = [[_plain(n) for n in model.joint_names].index(nm) for nm in MOVABLE]
            np.testing.assert_allclose(jac[cols], fd, rtol=1e-5, atol=1e-7)
            checked += 1
    assert checked >= 1
    # without velocities: the flag is false and every rate is exactly 0; a NaN velocity: the same
    for vel in (None, [math.nan, 0.0, 0.0, 0.0]):
        m = _next(peer, pub, contacts, lambda: _state(peer, SELF, vel),
                  lambda m: not m.velocities_given and len(m.contacts) > 0)
        assert all(c.distance_rate == 0.0 for c in m.contacts)
        assert all(np.isfinite(c.jacobian).all() for c in m.contacts)


def test_pairs_padding_and_report_distances_change_at_run_time(node, peer):
    contacts = Received(peer, ContactArray, NS + "/contacts")
    pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    state = lambda: _state(peer, SELF)  # noqa: E731

    def pairs(m):
        return {(_plain(c.body_1), _plain(c.body_2)): c.distance for c in m.contacts}

    first = _next(peer, pub, contacts, state, lambda m: len(m.contacts) > 0)
    base = pairs(first)
    assert ("upper_arm", "fingertip") in base or ("fingertip", "upper_arm") in base
    target = next(p for p in base if "fingertip" in p and "upper_arm" in p)
    pairs_before = first.pairs_checked

    # ignore the self-contact pair at run time: gone at the next evaluations, one pair fewer
    (r,) = _set(peer, ignore_pairs=["upper_arm:fingertip"])
    assert r.successful, r.reason
    m = _next(peer, pub, contacts, state, lambda m: target not in pairs(m))
    assert m.pairs_checked == pairs_before - 1
    # bad values are refused with a reason; the node keeps its list and keeps running
    for name, value, words in (("ignore_pairs", ["no_colon"], "BODY_A:BODY_B"),
                               ("padding", ["fingertip"], "BODY=METRES"),
                               ("padding", ["nobody=0.01"], "matches no body"),
                               ("padding", ["fingertip=-1"], "BODY=METRES"),
                               ("self_report_distance", -0.5, "-1")):
        (r,) = _set(peer, **{name: value})
        assert not r.successful and words in r.reason, (name, r.reason)
    assert node.alive()
    m = _next(peer, pub, contacts, state)
    assert target not in pairs(m) and m.pairs_checked == pairs_before - 1

    # check it again, with 5 mm of padding on the fingertip: that pair's distance drops by 5 mm
    rs = _set(peer, ignore_pairs=[""], padding=["fingertip=0.005"])  # one result each
    assert all(r.successful for r in rs), [r.reason for r in rs]
    m = _next(peer, pub, contacts, state, lambda m: target in pairs(m))
    assert pairs(m)[target] == pytest.approx(base[target] - 0.005, abs=1e-9)
    assert m.pairs_checked == pairs_before
    for p, d in pairs(m).items():
        if "fingertip" in p:
            assert d == pytest.approx(base[p] - 0.005, abs=1e-9) if p in base else d < 0.1

    # self pairs reported only when penetrating, environment pairs up to 0.5 m
    rs = _set(peer, padding=[""], self_report_distance=0.0, environment_report_distance=0.5)
    assert all(r.successful for r in rs), [r.reason for r in rs]
    m = _next(peer, pub, contacts, state,
              lambda m: any(d > 0.1 for d in pairs(m).values()))
    for (a, b), d in pairs(m).items():
        env = a in ENVIRONMENT or b in ENVIRONMENT
        assert d < (0.5 if env else 0.0), ((a, b), d)
    assert any(a in ENVIRONMENT or b in ENVIRONMENT for a, b in pairs(m))
    assert target in pairs(m) and pairs(m)[target] < 0.0  # the self contact penetrates


def test_probe_patch_state_of_the_pad_pressed_into_the_floor(peer):
    """ProbeArray.patches over DDS, hand-derived (test_node_full.py's touch): shoulder_pitch
    -acos(0.46), elbow -pi minus that put the fingertip's 4x4 pad 3.5 mm into the floor with its
    normal (body +z) pointing down; every pad probe pushes 7 N along +z. The patch: 16 probes in
    contact, force (0, 0, 112) N in world, (0, 0, -112) N along the body's z, torque 0 about
    its origin (a symmetric grid of equal parallel forces), area the sum of its probes'."""
    from ambf_collision.msg import ProbeArray

    t1 = -math.acos(0.46)
    touch = [0.0, t1, -math.pi - t1, 0.0]
    node = NodeInProcess(peer, {"adf_files": [str(DEMO_ARM)], "heartbeat_rate": 20.0,
                                  "probe_files": [str(DEMO_ARM.parent / "demo_probes.yaml")]})
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        probes = Received(peer, ProbeArray, NS + "/probes")
        pub = peer.node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
        _next(peer, pub, contacts, lambda: _state(peer, touch), lambda m: len(m.contacts) > 0)
        assert peer.spin_until(lambda: probes.last is not None and probes.last.patches
                               and probes.last.patches[0].in_contact == 16, timeout=10.0)
        (pad,) = probes.last.patches
        assert (pad.name, pad.body) == ("pad", "/ambf/env/fingertip")
        assert (pad.force.x, pad.force.y, pad.force.z) == pytest.approx((0, 0, 112.0), abs=1e-5)
        assert pad.force_body.z == pytest.approx(-112.0, abs=1e-5)
        assert math.hypot(pad.force_body.x, pad.force_body.y) == pytest.approx(0.0, abs=1e-5)
        for v in (pad.torque_body.x, pad.torque_body.y, pad.torque_body.z):
            assert v == pytest.approx(0.0, abs=1e-7)
        pads = [p for p in probes.last.probes if p.name.startswith("pad/")]
        assert pad.area == pytest.approx(sum(p.area for p in pads), rel=1e-12) and pad.area > 0
    finally:
        code, _, err = node.stop()
    assert code == 0, err
