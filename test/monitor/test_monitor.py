"""The monitor's decisions (monitor/monitor.py): joint policy, status, staleness, rate cap,
clock jumps, never NaN.

A small scripted stand-in for the model records exactly which joint positions the monitor handed
to it, so each test checks the monitor's decisions against values written here by hand. The real
demo model is exercised at the end and in test/model.

The joint policy (the lead's decision, replacing "every movable joint required"): evaluate from
the first good joint state on; joints neither received nor coupled keep their last value
(initially 0) and are named; ``required_joints`` still demands joints.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ambf_collision.model.contact_rows import contact_row, contact_row_width
from ambf_collision.monitor.config import (STATUS_BAD_JOINT_STATE, STATUS_DISABLED,
                                           STATUS_NO_JOINT_STATE, STATUS_OK,
                                           STATUS_STALE_JOINT_STATE, STATUS_TF_UNAVAILABLE,
                                           MonitorConfig)
from ambf_collision.monitor.monitor import CollisionMonitor, joint_roles


class ScriptedModel:
    """Records the positions it is given; reports one pair whose distance is 1 - q[0] (m).
    ``movable`` / ``coupled``: the kinematics' joint roles (default: all movable)."""

    def __init__(self, joint_names=("a", "b", "c"), contact_overrides=None, min_distance=None,
                 movable=None, coupled=None):
        self.joint_names = list(joint_names)
        self.calls = []
        self.contact_overrides = contact_overrides or {}
        self.min_distance_override = min_distance
        if movable is not None or coupled is not None:
            n = len(self.joint_names)
            self.kinematics = SimpleNamespace(
                movable=np.array(movable if movable is not None else [True] * n),
                coupled=np.array(coupled if coupled is not None else [False] * n),
                joint_file=np.zeros(n, np.int64))

    def create_data(self):
        return SimpleNamespace(q=np.zeros(len(self.joint_names)))

    def set_joint_positions(self, data, names, positions):
        unknown = []
        for n, p in zip(names, positions):
            if n in self.joint_names:
                data.q[self.joint_names.index(n)] = p
            else:
                unknown.append(n)
        return unknown

    def evaluate(self, data, root_poses=None, report_distance=0.05, near_only=False):
        self.calls.append(data.q.copy())
        d = 1.0 - (data.q[0] if data.q.size else 0.0)
        c = dict(distance=d, point_1=np.zeros(3), point_2=np.array([0.0, 0.0, d]),
                 position=np.array([0.0, 0.0, d / 2]), normal=np.array([0.0, 0.0, 1.0]),
                 jacobian=np.zeros(len(self.joint_names)))
        c.update(self.contact_overrides)
        md = d if self.min_distance_override is None else self.min_distance_override
        return SimpleNamespace(min_distance=md, pairs_checked=1, distances=np.array([d]),
                               contact_index=np.array([0]), contact_info=[("x", "y", -1, -1)],
                               contact_rows=contact_row(**c)[None, :])


def make(joints=("a", "b", "c"), **cfg):
    model = ScriptedModel(joints)
    return model, CollisionMonitor(model, MonitorConfig(**cfg))


# ----------------------------------------------------------------------------- joint policy


def test_first_good_state_starts_evaluation_unreceived_joints_kept_at_zero_and_named():
    model, m = make()
    out = m.step(0.0)
    assert out.status == STATUS_NO_JOINT_STATE and not out.evaluated and model.calls == []
    m.on_joint_state(["b", "a"], [0.2, 0.1], stamp=1.0, now=1.0)
    out = m.step(1.0)
    assert out.status == STATUS_OK and out.evaluated and out.stamp == 1.0
    assert out.unreceived == ["c"] and "c" in out.reason and "last value" in out.reason
    np.testing.assert_array_equal(model.calls[-1], [0.1, 0.2, 0.0])
    assert out.min_distance == pytest.approx(1.0 - 0.1)
    assert any("c" in w for w in out.warnings)
    m.on_joint_state(["c"], [0.3], stamp=1.01, now=1.01)
    out = m.step(1.01)
    assert out.status == STATUS_OK and out.unreceived == [] and out.reason == ""
    np.testing.assert_array_equal(model.calls[-1], [0.1, 0.2, 0.3])
    m.on_joint_state(["a"], [-0.5], stamp=1.02, now=1.02)  # a partial message: its joint only
    m.step(1.02)
    np.testing.assert_array_equal(model.calls[-1], [-0.5, 0.2, 0.3])


def test_coupled_joints_are_not_asked_for():
    """Joint b follows a coupling (the model computes it): a state naming a and c is complete."""
    model = ScriptedModel(coupled=[False, True, False])
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "c"], [0.1, 0.3], 1.0, 1.0)
    out = m.step(1.0)
    assert out.status == STATUS_OK and out.unreceived == [] and out.reason == ""


def test_model_without_joints_needing_a_value_is_evaluated_at_once():
    model, m = make(joints=())
    out = m.step(5.0)
    assert out.status == STATUS_OK and out.evaluated and out.pairs_checked == 1
    assert out.stamp == 5.0  # no joint state used: stamped with the evaluation time, never 0
    fixed = ScriptedModel(joint_names=("a", "b"), movable=[False, False])  # fixed joints only
    m = CollisionMonitor(fixed, MonitorConfig())
    out = m.step(5.0)
    assert out.status == STATUS_OK and out.evaluated and out.unreceived == []
    coupled = ScriptedModel(joint_names=("p",), coupled=[True])  # only a coupled joint
    assert CollisionMonitor(coupled, MonitorConfig()).step(5.0).status == STATUS_OK


def test_required_joints_must_all_arrive():
    model = ScriptedModel()
    m = CollisionMonitor(model, MonitorConfig(), required_joints=["a", "c"])
    m.on_joint_state(["a"], [0.25], 1.0, 1.0)
    out = m.step(1.0)
    assert out.status == STATUS_NO_JOINT_STATE and "required c" in out.reason
    assert not out.evaluated and model.calls == []
    m.on_joint_state(["c"], [0.5], 1.1, 1.1)
    out = m.step(1.1)
    assert out.status == STATUS_OK and out.unreceived == ["b"]
    np.testing.assert_array_equal(model.calls[-1], [0.25, 0.0, 0.5])
    with pytest.raises(ValueError, match="required_joints: unknown joint.*zz"):
        CollisionMonitor(model, MonitorConfig(), required_joints=["zz"])


def test_joint_roles_from_the_kinematics():
    """A joint needs a value when movable, not coupled and not loop-closing."""
    model = ScriptedModel(joint_names=("a", "b", "c", "d"), movable=[True, False, True, True],
                          coupled=[False, False, True, False])
    model.kinematics.closure = np.array([False, False, False, True])
    model.kinematics.joint_file = np.array([0, 0, 1, 1])
    needs, files = joint_roles(model)
    assert needs.tolist() == [True, False, False, False] and files.tolist() == [0, 0, 1, 1]
    needs, files = joint_roles(ScriptedModel())  # no kinematics: every joint, file 0
    assert needs.tolist() == [True, True, True] and files.tolist() == [0, 0, 0]


# ----------------------------------------------------------------------------- bad input


def test_bad_message_keeps_the_last_good_state_evaluated_until_a_good_one():
    model, m = make()
    m.on_joint_state(["a", "b", "c"], [0.4, 0.5, 0.6], 10.0, 10.0)
    assert m.step(10.0).status == STATUS_OK
    accepted, reason = m.on_joint_state(["a"], [math.nan], 10.1, 10.1)
    assert not accepted and "non-finite" in reason
    out = m.step(10.1)
    assert out.status == STATUS_BAD_JOINT_STATE and "non-finite" in out.reason and out.evaluated
    np.testing.assert_array_equal(model.calls[-1], [0.4, 0.5, 0.6])
    assert out.stamp == 10.0 and any("non-finite" in w for w in out.warnings)
    assert m.step(10.15).status == STATUS_BAD_JOINT_STATE  # persists on heartbeats
    m.on_joint_state(["a"], [0.7], 10.2, 10.2)
    out = m.step(10.2)
    assert out.status == STATUS_OK and out.reason == ""
    np.testing.assert_array_equal(model.calls[-1], [0.7, 0.5, 0.6])


def test_bad_message_before_any_good_one_is_reported_and_nothing_evaluated():
    model, m = make()
    m.on_joint_state(["a", "b", "c"], [0.0, math.nan, 0.0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.status == STATUS_BAD_JOINT_STATE and not out.evaluated
    assert out.min_distance == math.inf and out.pairs_checked == 0 and out.contacts == []
    assert model.calls == []


def test_unknown_joints_can_be_ignored_by_option():
    model, m = make(ignore_unknown_joints=True)
    assert m.on_joint_state(["a", "b", "c", "gripper"], [0.1, 0.2, 0.3, 9.0], 1.0, 1.0)[0]
    m.step(1.0)
    np.testing.assert_array_equal(model.calls[-1], [0.1, 0.2, 0.3])


def test_rejected_messages_warn_once_per_period():
    _, m = make(warning_period=1.0)
    for k in range(5):
        m.on_joint_state(["a"], [math.nan], 1.0 + 0.1 * k, 1.0 + 0.1 * k)
    out = m.step(1.5)
    assert len([w for w in out.warnings if "rejected" in w]) == 1


# ----------------------------------------------------------------------------- staleness etc.


def test_stale_after_timeout_still_evaluated_and_timeout_zero_disables():
    model, m = make(joint_state_timeout=0.5)
    m.on_joint_state(["a", "b", "c"], [0.1, 0.2, 0.3], 3.0, 3.0)
    assert m.step(3.5).status == STATUS_OK  # exactly at the timeout: not yet stale
    out = m.step(3.6)
    assert out.status == STATUS_STALE_JOINT_STATE and out.evaluated
    assert math.isclose(out.joint_state_age, 0.6) and "0.600 s old" in out.reason
    m.update_config(joint_state_timeout=0.0)
    assert m.step(1000.0).status == STATUS_OK


def test_one_stopped_publisher_makes_the_state_stale():
    """Per-joint stamps: 'c' stops while 'a', 'b' keep coming."""
    _, m = make(joint_state_timeout=0.5)
    m.on_joint_state(["c"], [0.0], 1.0, 1.0)
    for k in range(10):
        t = 1.0 + 0.1 * k
        m.on_joint_state(["a", "b"], [0.0, 0.0], t, t)
    out = m.step(1.9)
    assert out.status == STATUS_STALE_JOINT_STATE and math.isclose(out.joint_state_age, 0.9)
    assert out.stamp == pytest.approx(1.9)


def test_disabled_idle_and_tf_unavailable_do_not_evaluate():
    model, m = make()
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0, tf_ok=False)
    assert out.status == STATUS_TF_UNAVAILABLE and not out.evaluated and out.min_distance == math.inf
    m.set_enabled(False, 1.1)
    out = m.poll(1.1)
    assert out is not None and out.status == STATUS_DISABLED and not out.evaluated
    assert model.calls == []
    m.set_enabled(True, 1.2)
    assert m.poll(1.2).status == STATUS_OK and len(model.calls) == 1
    idle = CollisionMonitor(ScriptedModel(()), MonitorConfig(), idle_reason="no ADF file given")
    out = idle.step(2.0)
    assert out.status == STATUS_DISABLED and out.reason == "no ADF file given" and not out.evaluated


def test_heartbeat_when_nothing_arrives():
    _, m = make(heartbeat_rate=2.0)
    assert m.poll(0.0).status == STATUS_NO_JOINT_STATE  # first heartbeat at once
    assert m.poll(0.3) is None
    assert m.poll(0.5) is not None
    assert m.poll(0.9) is None
    # a timer at the heartbeat rate (every 0.5 s) publishes once half its period passed
    assert not m.heartbeat_due(0.74, checked_every=0.5) and m.heartbeat_due(0.75, checked_every=0.5)
    assert not m.heartbeat_due(0.99) and m.heartbeat_due(1.0)
    assert m.heartbeat_due(0.2) and m.heartbeat_due(0.2, checked_every=0.5)  # the clock went back
    m.update_config(heartbeat_rate=0.0)
    assert not m.heartbeat_due(100.0) and not m.heartbeat_due(0.2)


def test_clock_jump_back_publishes_again_at_once_and_ages_count_from_the_jump():
    """Sim time runs 100 s -> 106 s, then a bag loop restarts it at 50 s. Without the reset
    the rate cap (next slot at 106 s or later) holds every request back; only the heartbeat, whose last
    output lies after now, goes out."""
    model, m = make(max_rate=100.0, heartbeat_rate=10.0, joint_state_timeout=0.5)
    for k in range(601):
        t = 100.0 + 0.01 * k
        m.on_joint_state(["a", "b", "c"], [0.1, 0.0, 0.0], t, t)
        m.poll(t)
    m.set_enabled(True, 50.0)  # a request
    assert not m.evaluation_due(50.0) and m.next_wakeup() >= 106.0
    assert m.heartbeat_due(50.0)
    m.on_clock_jump_back(50.0)
    out = m.poll(50.0)
    assert out is not None and out.status == STATUS_OK and out.evaluated
    assert out.joint_state_age == 0.0 and out.stamp == 50.0
    assert m.poll(50.05) is None and m.poll(50.1) is not None  # heartbeat at 10 Hz again
    assert m.step(50.6).status == STATUS_STALE_JOINT_STATE  # 0.6 s after the jump
    m.on_joint_state(["a", "b", "c"], [0.2, 0.0, 0.0], 50.6, 50.6)
    assert m.step(50.61).status == STATUS_OK


# ----------------------------------------------------------------------------- rate cap


def test_rate_cap_defers_and_coalesces_without_losing_the_latest_state():
    """100 Hz cap, a bucket of 2 tokens: 1 kHz input for 10 ms. The first two messages use the
    bucket (1.000, 1.001; 0.1 token left), the third waits for a whole token at
    1.001 + 0.9 * 10 ms = 1.010, the other seven coalesce into it."""
    model, m = make(max_rate=100.0)
    outputs = []
    for k in range(10):  # 1 kHz input for 10 ms
        t = 1.0 + 0.001 * k
        m.on_joint_state(["a", "b", "c"], [0.01 * k, 0.0, 0.0], t, t)
        o = m.poll(t)
        if o is not None:
            outputs.append(o)
    assert [o.time for o in outputs] == [1.0, 1.001]
    assert m.next_wakeup() == pytest.approx(1.010)
    assert m.poll(1.0095) is None
    late = m.poll(1.0101)  # the deferred evaluation runs with the newest state
    assert late is not None and late.evaluated
    np.testing.assert_allclose(model.calls[-1], [0.09, 0.0, 0.0])
    assert m.limiter.requests == 10 and m.limiter.deferred == 1 and m.limiter.coalesced == 7
    assert m.next_wakeup() is None and m.poll(1.02) is None


def test_rate_cap_over_one_second_of_1khz_input():
    """250 Hz cap (bucket of ceil(250 * 0.01) = 3) against 1 kHz for 1 s: the bucket plus 250
    tokens a second, the last one flushing the deferred newest state at t = 1.0."""
    model, m = make(max_rate=250.0, heartbeat_rate=0.0)
    n_eval = 0
    for k in range(1000):
        t = 0.001 * k
        m.on_joint_state(["a", "b", "c"], [k * 1e-4, 0, 0], t, t)
        n_eval += m.poll(t) is not None
    n_eval += m.poll(1.0) is not None
    assert n_eval == 3 + 250
    np.testing.assert_allclose(model.calls[-1][0], 999e-4)


def test_no_cap_evaluates_every_message():
    model, m = make(max_rate=0.0)
    for k in range(20):
        m.on_joint_state(["a", "b", "c"], [0, 0, 0], k * 1e-4, k * 1e-4 + 1e-9)
        assert m.poll(k * 1e-4 + 1e-9) is not None


def test_parameter_changes_take_effect_or_are_refused():
    _, m = make()
    m.update_config(max_rate=50, report_distance=0.02)
    assert m.limiter.period == pytest.approx(0.02) and m.config.report_distance == 0.02
    before = dict(m.config.__dict__)
    with pytest.raises(ValueError, match="report_distance"):
        m.update_config(report_distance=-0.01)
    assert m.config.__dict__ == before


# ----------------------------------------------------------------------------- never NaN


def test_non_finite_contact_is_dropped_and_reported():
    model = ScriptedModel(contact_overrides={"normal": np.array([np.nan, 0.0, 1.0])})
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.contacts == [] and out.dropped_contacts == 1
    assert any("non-finite" in w for w in out.warnings)


def test_nan_min_distance_is_recomputed_from_finite_distances():
    model = ScriptedModel(min_distance=math.nan)
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "b", "c"], [0.25, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.min_distance == pytest.approx(0.75)
    assert any("min_distance" in w for w in out.warnings)


def test_non_finite_probe_values_are_zeroed_and_reported():
    pr = SimpleNamespace(
        in_contact=np.array([True, True]), depth=np.array([0.001, np.nan]),
        area=np.array([1e-6, 1e-6]), force=np.array([[0, 0, 2.0], [0, np.inf, 0]]),
        distance=np.array([-0.001, np.nan]))
    m = CollisionMonitor(ScriptedModel(), MonitorConfig(), probes=lambda model, data, res: pr)
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.probes is pr and pr.in_contact.tolist() == [True, False]
    np.testing.assert_array_equal(pr.force, [[0, 0, 2.0], [0, 0, 0]])
    assert any("probe" in w for w in out.warnings)
    pr.depth[1] = np.nan  # later, out of the step: the warning is returned (throttled: counted)
    m.update_config(warning_period=0.0)
    later = m.step(2.0, probes=False)
    assert not any("probe" in w for w in later.warnings)
    warned = m.add_probes(later)
    assert len(warned) == 1 and "zeroed 1 probe" in warned[0] and later.warnings[-1] == warned[0]


def test_a_step_without_probes_is_final_for_contacts_and_takes_its_probes_later():
    """The node's order: ``step(probes=False)`` gives the contact part (published at once),
    ``add_probes`` evaluates the probes of that pose afterwards, once; not for an output that
    is no longer the latest evaluation, nor for one that evaluated nothing."""
    events = []
    model = ScriptedModel()

    def probes(model_, data, result):
        events.append(("probes", float(np.asarray(model_.calls[-1])[0])))
        return SimpleNamespace(in_contact=np.zeros(1, bool), depth=np.zeros(1), area=np.zeros(1),
                               force=np.zeros((1, 3)), distance=np.ones(1))

    m = CollisionMonitor(model, MonitorConfig(), probes=probes)
    out = m.step(0.5, probes=False)  # no joint state yet: status only
    assert out.status == STATUS_NO_JOINT_STATE and not out.evaluated and out.min_distance == math.inf
    assert m.add_probes(out) == [] and events == []
    m.on_joint_state(["a", "b", "c"], [0.25, 0, 0], 1.0, 1.0)
    out = m.step(1.0, probes=False)
    assert out.status == STATUS_OK and out.min_distance == 0.75 and len(out.contacts) == 1  # 1 - q_a
    assert events == [] and out.probes is None
    m.add_probes(out)
    m.add_probes(out)
    assert events == [("probes", 0.25)]
    m.on_joint_state(["a", "b", "c"], [0.5, 0, 0], 2.0, 2.0)
    newer = m.step(2.0, probes=False)
    m.add_probes(out)  # the Data holds the newer pose now
    assert events == [("probes", 0.25)]
    m.step(3.0)  # probes=True: in the step, of its own pose
    assert events == [("probes", 0.25), ("probes", 0.5)] and newer.probes is None


# ----------------------------------------------------------------------------- the real model


def _spheres(tmp_path, xs):
    import yaml

    def body(name, x):
        return {"name": name, "collision shape": "SPHERE", "collision geometry": {"radius": 0.1},
                "location": {"position": {"x": x, "y": 0.0, "z": 0.0},
                             "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}}
    names = "ABC"[:len(xs)]
    doc = {"bodies": [f"BODY {n}" for n in names]}
    doc.update({f"BODY {n}": body(n, x) for n, x in zip(names, xs)})
    p = tmp_path / "spheres.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


def test_real_model_without_joints_contacts_closest_first(tmp_path):
    """Spheres of radius 0.1 at x = 0, 0.25, 0.6: gaps 0.05 (A-B), 0.15 (B-C), 0.4 (A-C)."""
    from ambf_collision.model import Model

    model = Model.from_files([_spheres(tmp_path, [0.0, 0.25, 0.6])])
    m = CollisionMonitor(model, MonitorConfig(report_distance=0.2))
    out = m.step(1.0)
    assert out.status == STATUS_OK and out.dropped_contacts == 0
    assert [(c.body_1[-1], c.body_2[-1], round(c.distance, 12)) for c in out.contacts] == [
        ("A", "B", 0.05), ("B", "C", 0.15)]
    assert out.contact_rows.shape == (2, contact_row_width(len(model.joint_names)))
    m.update_config(report_distance=0.01)
    out = m.step(2.0)
    assert out.contacts == [] and out.min_distance == pytest.approx(0.05)


def test_two_monitors_of_one_model_do_not_interfere(tmp_path):
    """Two Data of one Model (CONTRACT: every per-cycle buffer lives in Data)."""
    from ambf_collision.model import Model

    model = Model.from_files([_spheres(tmp_path, [0.0, 0.25])])
    a = CollisionMonitor(model, MonitorConfig(report_distance=1.0))
    b = CollisionMonitor(model, MonitorConfig(report_distance=1.0))
    out_a = a.step(1.0)
    out_b = b.step(1.0, root_poses=None)
    assert out_a.min_distance == pytest.approx(0.05) == out_b.min_distance
    assert a.data is not b.data


def test_evaluation_rate_counts_the_evaluations_of_the_last_second():
    """2,500 evaluations 1 ms apart (a 1 kHz stream): the window [now - 1 s, now] holds 1,001 of
    them (both ends included), counted by hand from the times; the step's own rate and the
    diagnostics' rate at a later time agree with that count."""
    model, m = make(max_rate=0.0)
    times = [10.0 + i / 1000.0 for i in range(2500)]
    for t in times:
        m.on_joint_state(["a", "b", "c"], [0.1, 0.2, 0.3], t, t)
        out = m.step(t)
    now = times[-1]
    expected = sum(1 for t in times if now - t <= 1.0)
    assert out.evaluation_rate == pytest.approx(expected) and m.evaluation_rate(now) == pytest.approx(expected)
    assert m.evaluation_rate(now + 0.5) == pytest.approx(sum(1 for t in times if now + 0.5 - t <= 1.0))
    assert m.evaluation_rate(now + 2.0) == 0.0
    assert len(m._eval_times) <= expected   # bounded by one window


def test_probes_left_out_of_a_step_are_evaluated_on_demand_for_that_pose_only():
    """``step(probes=False)`` (the node without a ~/probes subscriber) leaves the probes out;
    ``add_probes`` evaluates them later at that step's pose, and does nothing once a newer
    evaluation changed the Data. Expectation from the demo geometry (test_node_full's
    docstring): at the touch pose each of the 16 pad probes presses 0.0035 m into the floor with
    7 N along +z; at home nothing touches."""
    from conftest import DEMO_ARM, DEMO_PROBES

    from ambf_collision.monitor.scene import load_scene

    scene = load_scene([DEMO_ARM], [DEMO_PROBES])
    m = CollisionMonitor(scene.model, MonitorConfig(), probes=scene.probes)
    movable = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
    t1 = -math.acos(0.46)
    m.on_joint_state(movable, [0.0, t1, -math.pi - t1, 0.0], 1.0, 1.0)
    touch = m.step(1.0, probes=False)
    assert touch.evaluated and touch.probes is None
    before = touch.compute_time
    m.add_probes(touch)
    pads = [i for i, n in enumerate(touch.probes.names) if n.startswith("pad/")]
    assert len(pads) == 16 and touch.probes.in_contact[pads].all()
    np.testing.assert_allclose(touch.probes.depth[pads], 0.0035, atol=1e-9)
    np.testing.assert_allclose(touch.probes.force[pads], [[0.0, 0.0, 7.0]] * 16, atol=1e-6)
    assert touch.compute_time > before
    evaluated = touch.probes
    m.add_probes(touch)  # already there: kept
    assert touch.probes is evaluated

    m.on_joint_state(movable, [0.0, t1, -math.pi - t1, 0.0], 1.1, 1.1)
    stale = m.step(1.1, probes=False)
    m.on_joint_state(movable, [0.0] * 4, 1.2, 1.2)
    home = m.step(1.2, probes=False)
    m.add_probes(stale)  # the Data holds the home pose now: not this step's
    assert stale.probes is None
    m.add_probes(home)
    assert not home.probes.in_contact.any()
