"""ROS-free node logic: joint-state merging and validation, status, staleness, rate cap with
coalescing, warning throttle and the never-NaN guarantee.

A small scripted stand-in for the model records exactly which joint positions the monitor handed
to it, so each test checks the monitor's decisions against values written here by hand.
The real demo model is exercised in test_demo_model.py.
"""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ambf_collision.monitor import monitor as mon
from ambf_collision.monitor.monitor import (
    STATUS_BAD_JOINT_STATE,
    STATUS_DISABLED,
    STATUS_NO_JOINT_STATE,
    STATUS_OK,
    STATUS_STALE_JOINT_STATE,
    STATUS_TF_UNAVAILABLE,
    CollisionMonitor,
    JointStateMerger,
    MonitorConfig,
    RateLimiter,
    WarningThrottle,
)


class ScriptedModel:
    """Records the positions it is given; reports one pair whose distance is 1 - q[0] (m)."""

    def __init__(self, joint_names=("a", "b", "c"), contact_overrides=None, min_distance=None):
        self.joint_names = list(joint_names)
        self.calls = []
        self.contact_overrides = contact_overrides or {}
        self.min_distance_override = min_distance

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
        c = dict(body_1="x", body_2="y", shape_1=-1, shape_2=-1, distance=d,
                 point_1=np.zeros(3), point_2=np.array([0.0, 0.0, d]),
                 position=np.array([0.0, 0.0, d / 2]), normal=np.array([0.0, 0.0, 1.0]))
        c.update(self.contact_overrides)
        bad = SimpleNamespace(**{**c, "distance": float("nan")}) if self.contact_overrides.get(
            "_extra_nan") else None
        contacts = [SimpleNamespace(**{k: v for k, v in c.items() if not k.startswith("_")})]
        if bad is not None:
            contacts.append(bad)
        md = d if self.min_distance_override is None else self.min_distance_override
        return SimpleNamespace(min_distance=md, pairs_checked=1, distances=np.array([d]),
                               contacts=contacts)


def make(joints=("a", "b", "c"), **cfg):
    model = ScriptedModel(joints)
    return model, CollisionMonitor(model, MonitorConfig(**cfg))


# ----------------------------------------------------------------------------- merging


def test_partial_states_merge_by_name_and_wait_for_every_joint():
    model, m = make()
    assert m.step(0.0).status == STATUS_NO_JOINT_STATE
    m.on_joint_state(["b", "a"], [0.2, 0.1], stamp=1.0, now=1.0)
    out = m.step(1.0)
    assert out.status == STATUS_NO_JOINT_STATE and "c" in out.reason and not out.evaluated
    assert model.calls == []  # nothing is evaluated with joints never received
    m.on_joint_state(["c"], [0.3], stamp=1.01, now=1.01)
    out = m.step(1.01)
    assert out.status == STATUS_OK and out.evaluated and out.stamp == 1.01
    np.testing.assert_array_equal(model.calls[-1], [0.1, 0.2, 0.3])
    # a later partial message changes only its own joints
    m.on_joint_state(["a"], [-0.5], stamp=1.02, now=1.02)
    m.step(1.02)
    np.testing.assert_array_equal(model.calls[-1], [-0.5, 0.2, 0.3])
    assert math.isclose(out.min_distance, 1.0 - 0.1)


def test_model_without_joints_is_ok_without_any_joint_state():
    model, m = make(joints=())
    out = m.step(5.0)
    assert out.status == STATUS_OK and out.evaluated and out.pairs_checked == 1


def test_required_joints_limit_what_must_arrive():
    model = ScriptedModel()
    m = CollisionMonitor(model, MonitorConfig(), required_joints=["a"])
    m.on_joint_state(["a"], [0.25], 1.0, 1.0)
    out = m.step(1.0)
    assert out.status == STATUS_OK
    np.testing.assert_array_equal(model.calls[-1], [0.25, 0.0, 0.0])


# ----------------------------------------------------------------------------- bad input

BAD_MESSAGES = [
    # names, positions, stamp offset, code, words in the reason
    (["a", "b"], [0.1], 0.0, "length", "2 names but 1 positions"),
    (["a", "b", "c"], [0.1, float("nan"), 0.3], 0.0, "non_finite", "'b' has a non-finite"),
    (["a", "b", "c"], [0.1, 0.2, float("inf")], 0.0, "non_finite", "'c' has a non-finite"),
    (["a", "zz"], [0.1, 0.2], 0.0, "unknown", "unknown joint name(s) 'zz'"),
    (["a", ""], [0.1, 0.2], 0.0, "empty_name", "joint name #1 is empty"),
    (["a", "a"], [0.1, 0.2], 0.0, "duplicate", "'a' appears twice"),
    (["a"], [0.1], +2.0, "future", "in the future"),
    (["a"], [0.1], -100.0, "past", "in the past"),
    (["a"], [0.1], float("nan"), "bad_stamp", "not finite"),
]


@pytest.mark.parametrize("names,positions,dt,code,words", BAD_MESSAGES)
def test_bad_message_is_rejected_whole_and_last_good_state_kept(names, positions, dt, code, words):
    model, m = make()
    m.on_joint_state(["a", "b", "c"], [0.4, 0.5, 0.6], 10.0, 10.0)
    assert m.step(10.0).status == STATUS_OK
    accepted, reason = m.on_joint_state(names, positions, 10.1 + dt, 10.1)
    assert not accepted and words in reason and m.merger.last_code == code
    out = m.step(10.1)
    assert out.status == STATUS_BAD_JOINT_STATE and words in out.reason
    assert out.evaluated  # the last good state is still evaluated...
    np.testing.assert_array_equal(model.calls[-1], [0.4, 0.5, 0.6])  # ...unchanged
    assert out.stamp == 10.0
    assert any(words in w for w in out.warnings)
    # BAD persists on heartbeats until the next good message, which clears it
    assert m.step(10.15).status == STATUS_BAD_JOINT_STATE
    m.on_joint_state(["a"], [0.7], 10.2, 10.2)
    out = m.step(10.2)
    assert out.status == STATUS_OK and out.reason == ""
    np.testing.assert_array_equal(model.calls[-1], [0.7, 0.5, 0.6])


def test_bad_message_before_any_good_one_is_reported_and_nothing_evaluated():
    model, m = make()
    m.on_joint_state(["a", "b", "c"], [0.0, float("nan"), 0.0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.status == STATUS_BAD_JOINT_STATE and not out.evaluated
    assert out.min_distance == math.inf and out.pairs_checked == 0 and out.contacts == []
    assert model.calls == []


def test_unknown_joints_can_be_ignored_by_option():
    model, m = make(ignore_unknown_joints=True)
    ok, _ = m.on_joint_state(["a", "b", "c", "gripper"], [0.1, 0.2, 0.3, 9.0], 1.0, 1.0)
    assert ok
    m.step(1.0)
    np.testing.assert_array_equal(model.calls[-1], [0.1, 0.2, 0.3])


def test_unstamped_messages_use_arrival_time_or_are_refused():
    _, m = make()
    ok, _ = m.on_joint_state(["a", "b", "c"], [0, 0, 0], 0.0, 50.0)
    assert ok and m.merger.stamp == 50.0
    _, m = make(accept_unstamped=False)
    ok, reason = m.on_joint_state(["a", "b", "c"], [0, 0, 0], 0.0, 50.0)
    assert not ok and "not stamped" in reason


def test_stamp_within_future_tolerance_is_accepted():
    _, m = make(future_tolerance=0.5)
    assert m.on_joint_state(["a", "b", "c"], [0, 0, 0], 10.4, 10.0)[0]
    assert not m.on_joint_state(["a", "b", "c"], [0, 0, 0], 10.6, 10.0)[0]


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
    m.on_joint_state(["c"], [0.0], 0.0 + 1.0, 1.0)
    for k in range(10):
        t = 1.0 + 0.1 * k
        m.on_joint_state(["a", "b"], [0.0, 0.0], t, t)
    out = m.step(1.9)
    assert out.status == STATUS_STALE_JOINT_STATE and math.isclose(out.joint_state_age, 0.9)
    assert out.stamp == pytest.approx(1.9)


def test_disabled_and_tf_unavailable_do_not_evaluate():
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


def test_heartbeat_when_nothing_arrives():
    _, m = make(heartbeat_rate=2.0)
    assert m.poll(0.0).status == STATUS_NO_JOINT_STATE  # first heartbeat at once
    assert m.poll(0.3) is None
    assert m.poll(0.5) is not None
    assert m.poll(0.9) is None


# ----------------------------------------------------------------------------- rate cap


def test_rate_cap_defers_and_coalesces_without_losing_the_latest_state():
    model, m = make(max_rate=100.0)  # at most one evaluation per 10 ms
    outputs = []
    for k in range(10):  # 1 kHz input for 10 ms
        t = 1.0 + 0.001 * k
        m.on_joint_state(["a", "b", "c"], [0.01 * k, 0.0, 0.0], t, t)
        o = m.poll(t)
        if o is not None:
            outputs.append(o)
    assert len(outputs) == 1 and outputs[0].time == 1.0
    assert m.next_wakeup() == pytest.approx(1.01)
    assert m.poll(1.0095) is None
    late = m.poll(1.01)  # the deferred evaluation runs with the newest state
    assert late is not None and late.evaluated
    np.testing.assert_allclose(model.calls[-1], [0.09, 0.0, 0.0])
    assert m.limiter.requests == 10 and m.limiter.deferred == 1 and m.limiter.coalesced == 8
    assert m.next_wakeup() is None and m.poll(1.02) is None  # nothing pending, nothing lost


def test_rate_cap_over_one_second_of_1khz_input():
    model, m = make(max_rate=250.0, heartbeat_rate=0.0)
    n_eval = 0
    for k in range(1000):
        t = 0.001 * k
        m.on_joint_state(["a", "b", "c"], [k * 1e-4, 0, 0], t, t)
        n_eval += m.poll(t) is not None
    n_eval += m.poll(1.0) is not None
    assert n_eval == 251  # every 4 ms, plus the deferred last one flushed at t = 1.0
    np.testing.assert_allclose(model.calls[-1][0], 999e-4)
    assert m.limiter.requests == 1000


def test_no_cap_evaluates_every_message():
    model, m = make(max_rate=0.0)
    for k in range(20):
        m.on_joint_state(["a", "b", "c"], [0, 0, 0], k * 1e-4, k * 1e-4 + 1e-9)
        assert m.poll(k * 1e-4 + 1e-9) is not None


def test_rate_limiter_alone():
    r = RateLimiter(10.0)
    r.request(0.0)
    assert r.due(0.0)
    r.mark(0.0)
    r.request(0.05)
    assert not r.due(0.05) and r.next_time() == pytest.approx(0.1) and r.due(0.1)


# ----------------------------------------------------------------------------- never NaN


def test_non_finite_contact_is_dropped_and_reported():
    model = ScriptedModel(contact_overrides={"normal": np.array([np.nan, 0.0, 1.0])})
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.contacts == [] and out.dropped_contacts == 1
    assert any("non-finite" in w for w in out.warnings)


def test_nan_min_distance_is_recomputed_from_finite_distances():
    model = ScriptedModel(min_distance=float("nan"), contact_overrides={"_extra_nan": True})
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "b", "c"], [0.25, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.min_distance == pytest.approx(0.75)
    assert len(out.contacts) == 1 and out.dropped_contacts == 1
    for c in out.contacts:
        assert all(np.isfinite(getattr(c, k)).all() for k in ("point_1", "point_2", "normal"))


def test_non_finite_probe_values_are_zeroed():
    pr = SimpleNamespace(
        in_contact=np.array([True, True]), depth=np.array([0.001, np.nan]),
        area=np.array([1e-6, 1e-6]), force=np.array([[0, 0, 2.0], [0, np.inf, 0]]),
        force_body=np.zeros((2, 3)), contact_normal=np.array([[0, 0, 1.0], [0, 0, 1.0]]),
        position=np.zeros((2, 3)), normal=np.zeros((2, 3)),
        distance=np.array([-0.001, np.nan]), patch_force=np.array([[0, np.inf, 2.0]]),
        patch_area=np.array([2e-6]))
    model = ScriptedModel()
    m = CollisionMonitor(model, MonitorConfig(), probes=lambda model, data, result: pr)
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.probes is pr
    assert pr.in_contact.tolist() == [True, False] and pr.distance[1] == np.inf
    np.testing.assert_array_equal(pr.force, [[0, 0, 2.0], [0, 0, 0]])
    np.testing.assert_array_equal(pr.patch_force, [[0, 0, 2.0]])
    assert any("probe" in w for w in out.warnings)



def _probe_buffers(n=3):
    return SimpleNamespace(
        in_contact=np.ones(n, bool), depth=np.full(n, 1e-3), area=np.full(n, 1e-6),
        force=np.ones((n, 3)), force_body=np.ones((n, 3)), contact_normal=np.ones((n, 3)),
        position=np.ones((n, 3)), normal=np.ones((n, 3)), distance=np.full(n, -1e-3),
        patch_force=np.ones((1, 3)), patch_area=np.ones(1))


def _probe_views(n=3):
    """Like _probe_buffers, with the float fields as views of two buffers named by
    ``finite_buffers`` (the layout of probes.ProbeResult)."""
    pose, z = np.ones((2 * n, 3)), np.ones(11 * n + 4)
    return SimpleNamespace(
        in_contact=np.ones(n, bool), depth=z[:n], area=z[n:2 * n],
        force=z[2 * n:5 * n].reshape(n, 3), force_body=z[5 * n:8 * n].reshape(n, 3),
        contact_normal=z[8 * n:11 * n].reshape(n, 3), position=pose[:n], normal=pose[n:],
        distance=np.full(n, -1e-3), patch_force=z[11 * n:11 * n + 3].reshape(1, 3),
        patch_area=z[11 * n + 3:], finite_buffers=(pose, z))


@pytest.mark.parametrize("field", ["depth", "area", "force", "force_body", "contact_normal",
                                   "position", "normal", "distance", "patch_force",
                                   "patch_area"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("layout", [_probe_buffers, _probe_views])
def test_one_non_finite_probe_value_is_found(field, bad, layout):
    """The same buffers are finite for some cycles (the fast check's cache is warm), then one
    value of one field turns non-finite: it is zeroed, whichever field and value it is, with
    separate arrays and with fields that are views of ``finite_buffers`` (tested in place)."""
    pr = layout()
    m = CollisionMonitor(ScriptedModel(), MonitorConfig(), probes=lambda model, data, result: pr)
    for k in range(3):
        m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0 + k, 1.0 + k)
        out = m.step(1.0 + k)
        assert not any("probe" in w for w in out.warnings)
    arr = getattr(pr, field)
    arr.reshape(-1)[-1] = bad
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 4.0, 4.0)
    out = m.step(4.0)
    if field == "distance" and bad == np.inf:  # +inf distance: beyond range, legal
        assert not any("probe" in w for w in out.warnings) and pr.in_contact.all()
        return
    assert any("probe" in w for w in out.warnings)
    if field.startswith("patch_"):
        assert arr.reshape(-1)[-1] == 0.0 and pr.in_contact.all()
    else:
        assert pr.in_contact.tolist() == [True, True, False]
        assert pr.distance[2] == np.inf and np.all(pr.force[2] == 0.0)
    for name in ("depth", "area", "force", "force_body", "contact_normal", "position",
                 "normal", "patch_force", "patch_area"):
        assert np.isfinite(getattr(pr, name)).all(), name
    if hasattr(pr, "finite_buffers"):
        assert all(np.isfinite(b).all() for b in pr.finite_buffers)


def test_non_finite_value_in_a_strided_probe_field_is_found_after_finite_cycles():
    """A field that is a non-contiguous view (its flat form would be a copy) is re-read each
    cycle: a NaN written into the underlying storage later is still zeroed."""
    pr = _probe_buffers()
    storage = np.ones((3, 6))
    pr.force = storage[:, ::2]
    m = CollisionMonitor(ScriptedModel(), MonitorConfig(), probes=lambda model, data, result: pr)
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    assert not any("probe" in w for w in m.step(1.0).warnings)
    storage[1, 2] = np.nan  # pr.force[1, 1]
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 2.0, 2.0)
    out = m.step(2.0)
    assert any("probe" in w for w in out.warnings)
    assert pr.in_contact.tolist() == [True, False, True] and np.all(pr.force[1] == 0.0)


def test_huge_finite_probe_values_are_kept():
    """Finite values whose sum overflows are not mistaken for non-finite ones."""
    pr = _probe_buffers()
    pr.force[:] = 1.5e308
    model = ScriptedModel()
    m = CollisionMonitor(model, MonitorConfig(), probes=lambda model, data, result: pr)
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert not any("probe" in w for w in out.warnings)
    assert pr.in_contact.all() and np.all(pr.force == 1.5e308)


# ----------------------------------------------------------------------------- misc


def test_warning_throttle_one_per_reason_per_period():
    w = WarningThrottle(5.0)
    assert w("x", "first", 0.0) == "first"
    assert w("x", "again", 1.0) is None and w("x", "again", 4.9) is None
    assert w("y", "other", 1.0) == "other"
    assert w("x", "later", 5.0) == "later (2 similar suppressed)"


def test_rejected_messages_warn_once_per_period():
    _, m = make(warning_period=1.0)
    for k in range(5):
        m.on_joint_state(["a"], [float("nan")], 1.0 + 0.1 * k, 1.0 + 0.1 * k)
    out = m.step(1.5)
    assert len([w for w in out.warnings if "rejected" in w]) == 1


@pytest.mark.parametrize("key,value", [("joint_state_timeout", -1.0), ("max_rate", float("nan")),
                                       ("report_distance", -0.01), ("max_stamp_age", 0.0)])
def test_invalid_parameter_is_refused_and_config_kept(key, value):
    _, m = make()
    before = dict(m.config.__dict__)
    with pytest.raises(ValueError, match=key):
        m.update_config(**{key: value})
    assert m.config.__dict__ == before


def test_accepted_parameter_change_takes_effect():
    _, m = make()
    m.update_config(max_rate=50.0, report_distance=0.02)
    assert m.limiter.period == pytest.approx(0.02) and m.config.report_distance == 0.02


def test_status_constants_match_the_message_definition():
    assert (mon.STATUS_OK, mon.STATUS_NO_JOINT_STATE, mon.STATUS_STALE_JOINT_STATE,
            mon.STATUS_BAD_JOINT_STATE, mon.STATUS_TF_UNAVAILABLE, mon.STATUS_DISABLED) == tuple(range(6))


def test_merger_age_and_missing():
    j = JointStateMerger(["a", "b"])
    assert j.age(1.0) == math.inf and j.missing() == ["a", "b"]
    j.update(["a", "b"], [0, 0], 1.0, 1.0)
    assert j.age(1.25) == pytest.approx(0.25) and j.missing() == []


def test_merger_age_is_the_oldest_required_stamp():
    """has_state and age look at the required joints only: an unrequired joint never received
    or with an old stamp does not count; no required joint: state present, age 0."""
    j = JointStateMerger(["a", "b", "c"])
    j.required[:] = [True, False, True]
    j.update(["a"], [0.0], 1.0, 1.0)
    assert not j.has_state and j.age(2.0) == math.inf
    j.update(["b"], [0.0], 0.5, 1.0)  # oldest stamp, but b is not required
    j.update(["c"], [0.0], 1.5, 1.5)
    assert j.has_state and j.age(2.0) == 1.0  # 2.0 - a's 1.0
    assert j.age(0.25) == 0.0  # stamps ahead of now: never negative
    j.update(["a"], [0.0], 1.75, 1.75)
    assert j.age(2.0) == 0.5  # now c (1.5) is the oldest required
    j.required[:] = False
    assert j.has_state and j.age(2.0) == 0.0
    j.required[:] = [False, True, False]
    assert j.age(2.0) == 1.5


def test_contact_vectors_match_the_kept_contacts():
    """out.contact_vectors (what the message conversion reads) holds, row by row, point_1,
    point_2, position, normal of exactly the published contacts, also after a contact with a
    non-finite value (or distance) was dropped before and after others."""
    rows = lambda k: [np.array([k, 2.0 * k, 3.0]) + i for i in range(4)]
    cs = []
    for k, bad in enumerate(["", "normal", "", "distance", ""]):
        p1, p2, pos, n = rows(float(k))
        if bad == "normal":
            n[1] = np.inf
        cs.append(SimpleNamespace(body_1="x", body_2="y", shape_1=-1, shape_2=-1,
                                  distance=math.nan if bad == "distance" else 0.01 * k,
                                  point_1=p1, point_2=p2, position=pos, normal=n))
    model = ScriptedModel()
    model.evaluate = lambda *a, **k: SimpleNamespace(min_distance=0.0, pairs_checked=5,
                                                     distances=np.zeros(5), contacts=cs)
    m = CollisionMonitor(model, MonitorConfig())
    m.on_joint_state(["a", "b", "c"], [0, 0, 0], 1.0, 1.0)
    out = m.step(1.0)
    assert out.contacts == [cs[0], cs[2], cs[4]] and out.dropped_contacts == 2
    expect = np.array([rows(0.0), rows(2.0), rows(4.0)])
    np.testing.assert_array_equal(out.contact_vectors, expect)
    cs[1].normal[:] = rows(1.0)[3]
    cs[3].distance = 0.03
    out = m.step(2.0)
    assert out.contacts == cs and out.dropped_contacts == 0
    np.testing.assert_array_equal(out.contact_vectors, [rows(float(k)) for k in range(5)])


# ----------------------------------------------------------------------------- cached checks


def test_name_cache_keeps_every_check_exact_and_in_order():
    """The per-name-list cache must not change any verdict or its order: the same name list
    is good, then non-finite, then future, then good again; a list with an unknown name and a
    future stamp is 'future' (stamp checks come first) both times; switching
    ignore_unknown_joints at run time changes the verdict for a cached list; an unhashable
    name is an empty name; tuples and lists are the same list."""
    model, m = make()
    j = m.merger
    seq = [
        (["a", "b", "c"], [0.1, 0.2, 0.3], 10.0, ""),
        (["a", "b", "c"], [0.1, float("nan"), 0.3], 10.0, "non_finite"),
        (("a", "b", "c"), [0.1, 0.2, 0.3], 20.0, "future"),
        (("a", "b", "c"), [0.4, 0.5, 0.6], 10.0, ""),
        (["a", "zz"], [0.1, 0.2], 20.0, "future"),
        (["a", "zz"], [0.1, 0.2], 20.0, "future"),
        (["a", "zz"], [0.1, 0.2], 10.0, "unknown"),
        (["a", "zz"], [0.1, 0.2], 10.0, "unknown"),
        (["a", "a"], [0.1, float("nan")], 10.0, "duplicate"),
        (["a", "a"], [0.1, float("nan")], 10.0, "duplicate"),
        (["a", ["b"]], [0.1, 0.2], 10.0, "empty_name"),
    ]
    for names, pos, stamp, code in seq:
        j.update(names, pos, stamp, 10.0)
        assert j.last_code == code, (names, pos, stamp)
    assert j.positions.tolist() == [0.4, 0.5, 0.6]
    assert "joint 'b' has a non-finite position (nan)" in j.check(
        ["a", "b", "c"], [0, float("nan"), 0], 10.0, 10.0)[1]
    m.update_config(ignore_unknown_joints=True)
    assert j.update(["a", "zz"], [0.75, 0.2], 10.0, 10.0) == (True, "")
    assert j.positions.tolist() == [0.75, 0.5, 0.6]
    m.update_config(ignore_unknown_joints=False)
    assert j.update(["a", "zz"], [0.1, 0.2], 10.0, 10.0)[0] is False and j.last_code == "unknown"


def test_huge_finite_positions_are_not_non_finite():
    """Huge but finite positions (their sum overflows) are finite: accepted as they are."""
    model, m = make()
    assert m.on_joint_state(["a", "b", "c"], [1e308, 1e308, -0.5], 1.0, 1.0) == (True, "")
    assert m.merger.positions.tolist() == [1e308, 1e308, -0.5]


def test_real_model_non_finite_contact_row_is_dropped(tmp_path):
    """With the real Model the NaN guard first checks all reported rows at once; a NaN
    written into one reported row (as a faulty geometry routine would) drops exactly that
    contact and warns; finite results pass untouched."""
    import yaml

    from ambf_collision.model import Model

    loc = lambda x: {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    sphere = lambda r: {"collision shape": "SPHERE", "collision geometry": {"radius": r}}
    doc = {"bodies": ["BODY A", "BODY B", "BODY C"],
           "BODY A": {"name": "A", "location": loc(0.0), **sphere(0.1)},
           "BODY B": {"name": "B", "location": loc(0.25), **sphere(0.1)},
           "BODY C": {"name": "C", "location": loc(0.6), **sphere(0.1)}}
    p = tmp_path / "three.yaml"
    p.write_text(yaml.safe_dump(doc))
    model = Model.from_files([p])
    m = CollisionMonitor(model, MonitorConfig(report_distance=0.2))
    out = m.step(1.0)
    assert out.status == STATUS_OK and out.dropped_contacts == 0
    assert [(c.body_1[-1], c.body_2[-1], round(c.distance, 12)) for c in out.contacts] == [
        ("A", "B", 0.05), ("B", "C", 0.15)]
    real = model.pair_distance.compute

    def faulty(world, *near):
        r = real(world, *near)
        r.point_2[0, 2] = np.nan  # pair 0 is (A, B)
        return r
    model.pair_distance.compute = faulty
    out = m.step(2.0)
    assert out.dropped_contacts == 1 and [(c.body_1[-1], c.body_2[-1]) for c in out.contacts] == [
        ("B", "C")]
    assert all(np.isfinite(getattr(c, k)).all() for c in out.contacts for k in mon._CONTACT_VECTORS)
    assert any("non-finite" in w for w in out.warnings)


def test_on_contacts_runs_once_per_step_before_the_probes():
    """step(on_contacts=f): f sees the final contact part (status, contacts, min distance) before
    the probes are evaluated; once per step, also when nothing is evaluated (status only)."""
    events = []
    pr = _probe_buffers()
    model = ScriptedModel()

    def probes(model_, data, result):
        events.append("probes")
        return pr

    def on_contacts(out):
        events.append(("contacts", out.status, out.min_distance, len(out.contacts), out.probes))

    m = CollisionMonitor(model, MonitorConfig(), probes=probes)
    out = m.step(0.5, on_contacts=on_contacts)          # no joint state yet: status only
    assert events == [("contacts", STATUS_NO_JOINT_STATE, math.inf, 0, None)]
    assert not out.evaluated
    events.clear()
    m.on_joint_state(["a", "b", "c"], [0.25, 0, 0], 1.0, 1.0)
    out = m.step(1.0, on_contacts=on_contacts)
    assert events == [("contacts", STATUS_OK, 0.75, 1, None), "probes"]   # 1 - q_a (ScriptedModel)
    assert out.probes is pr and out.min_distance == 0.75 and len(out.contacts) == 1
    events.clear()
    assert m.step(2.0).evaluated and events == ["probes"]  # without on_contacts: as before


def test_real_model_no_contact_cycle_builds_no_contact_records(tmp_path):
    """Spheres 0.2 m apart with report distance 0.05 m: no contact, so the monitor publishes
    none and does not ask the result for contact records; moved within reach (through a root
    pose), the contact comes back with the hand-derived distance."""
    import yaml

    from ambf_collision.model import model as model_mod
    from ambf_collision.model import Model

    loc = lambda x: {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    sphere = {"collision shape": "SPHERE", "collision geometry": {"radius": 0.1}}
    doc = {"bodies": ["BODY A", "BODY B"],
           "BODY A": {"name": "A", "location": loc(0.0), **sphere},
           "BODY B": {"name": "B", "location": loc(0.4), **sphere}}
    p = tmp_path / "two.yaml"
    p.write_text(yaml.safe_dump(doc))
    model = Model.from_files([p])
    m = CollisionMonitor(model, MonitorConfig(report_distance=0.05))
    built = []
    real = model_mod.EvaluationResult.contacts

    def counting(self):
        built.append(1)
        return real.fget(self)
    model_mod.EvaluationResult.contacts = property(counting)
    try:
        out = m.step(1.0)
        assert out.evaluated and out.contacts == [] and out.contact_vectors is None
        assert out.min_distance == pytest.approx(0.2) and built == []
        m.update_config(report_distance=0.25)
        out = m.step(2.0)
        assert built == [1] and [(c.body_1[-1], c.body_2[-1]) for c in out.contacts] == [("A", "B")]
        assert out.contacts[0].distance == pytest.approx(0.2)
        assert out.contact_vectors.shape == (1, 4, 3)
    finally:
        model_mod.EvaluationResult.contacts = real


def test_oldest_stamp_tells_has_state_and_age():
    """oldest_stamp: -inf while a required joint is missing, the oldest required stamp once all
    arrived, +inf with nothing required; the step's status and age agree with has_state/age."""
    _, m = make(joint_state_timeout=0.5)
    j = m.merger
    assert j.oldest_stamp() == -math.inf and not j.has_state
    j.update(["a", "c"], [0.0, 0.0], 1.0, 1.0)
    assert j.oldest_stamp() == -math.inf and not j.has_state
    assert m.step(1.0).status == STATUS_NO_JOINT_STATE
    j.update(["b"], [0.0], 1.25, 1.25)
    assert j.oldest_stamp() == 1.0 and j.has_state
    out = m.step(1.25)
    assert out.status == STATUS_OK and out.joint_state_age == 0.25
    out = m.step(1.75)
    assert out.status == STATUS_STALE_JOINT_STATE and out.joint_state_age == 0.75
    j.required[:] = False
    assert j.oldest_stamp() == math.inf and j.has_state
    out = m.step(5.0)
    assert out.status == STATUS_OK and out.joint_state_age == 0.0


def test_rate_limiter_follows_a_changed_max_rate():
    """Setting max_rate (as update_config does) changes the period at once: 10 Hz defers a
    request 50 ms after an evaluation, 0 (no cap) allows it, 4 Hz puts the slot 250 ms on."""
    lim = RateLimiter(10.0)
    assert lim.period == 0.1
    lim.request(1.0)
    assert lim.due(1.0)
    lim.mark(1.0)
    lim.request(1.05)
    assert not lim.due(1.05) and lim.next_time() == pytest.approx(1.1) and lim.deferred == 1
    lim.max_rate = 0.0
    assert lim.max_rate == 0.0 and lim.period == 0.0 and lim.due(1.05)
    lim.mark(1.05)
    lim.max_rate = 4.0
    lim.request(1.1)
    assert lim.period == 0.25 and not lim.due(1.1) and lim.next_time() == pytest.approx(1.3)
    assert lim.due(1.3)


def test_merger_full_message_in_any_order_sets_every_joint():
    """A message naming every joint (here out of model order, one of them by an alias) sets all
    positions, stamps and received flags; a later partial message only its own joints."""
    j = JointStateMerger(["a", "b", "c"], aliases={"cc": 2})
    assert j.update(["cc", "a", "b"], [3.0, 1.0, 2.0], 5.0, 5.0) == (True, "")
    assert j.positions.tolist() == [1.0, 2.0, 3.0] and j.joint_stamps.tolist() == [5.0] * 3
    assert j.received.all()
    assert j.update(["b"], [4.0], 6.0, 6.0) == (True, "")
    assert j.positions.tolist() == [1.0, 4.0, 3.0] and j.joint_stamps.tolist() == [5.0, 6.0, 5.0]
