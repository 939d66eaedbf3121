"""Joint-state staleness per joint (issue 33): joints that carry no state never make the status
STALE, a joint that stops arriving is named with its age, and the way back to OK.

Everything runs on simulated time (seconds handed to the monitor), with the real models: the
demo arm (four revolute joints and the fixed ``fingertip_mount``), the parallelogram with its
couplings (coupled and loop-closing joints), the slider-crank (prismatic, loop-closing) and
AMBF's toy car (continuous).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import DEMO_ARM, EXAMPLES, REPO

from ambf_collision.model import AdfWarning, Model
from ambf_collision.monitor.config import STATUS_OK, STATUS_STALE_JOINT_STATE, MonitorConfig
from ambf_collision.monitor.monitor import CollisionMonitor

KIN = REPO / "test" / "model" / "kin_models"
MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]


@pytest.fixture(scope="module")
def demo_model():
    return Model.from_files([DEMO_ARM])


@pytest.fixture(scope="module")
def every_kind():
    """One model with every kind of joint, and ``{kind: a joint name of that kind}``."""
    with warnings.catch_warnings():  # the toy car's meshes are not in the examples: no geometry
        warnings.simplefilter("ignore", AdfWarning)
        model = Model.from_files(
            [DEMO_ARM, KIN / "parallelogram.yaml", KIN / "slider_crank.yaml",
             EXAMPLES / "blender-toy-car.yaml"],
            couplings=KIN / "parallelogram_couplings.yaml")
    kin = model.kinematics
    names = model.joint_names

    def first(mask, contains=""):
        return next(names[j] for j in np.flatnonzero(mask) if contains in names[j])

    kinds = {
        "revolute": first(kin.needs_position, "elbow"),
        "prismatic": first(kin.needs_position, "ground-slider"),
        "continuous": first(kin.needs_position, "Wheel"),
        "fixed": first(~kin.movable, "fingertip_mount"),
        "coupled": first(kin.coupled),
        "loop-closing": first(kin.closure & ~kin.coupled),
    }
    return model, kinds


def _states(monitor, names, start, stop, rate=50.0, values=None):
    """Joint states naming ``names`` from ``start`` to ``stop`` (s) at ``rate``; each is
    evaluated at its arrival. Returns the statuses."""
    statuses = []
    for k in range(int(round((stop - start) * rate)) + 1):
        t = start + k / rate
        accepted, reason = monitor.on_joint_state(
            names, values if values is not None else [0.1] * len(names), t, t)
        assert accepted, reason
        statuses.append(monitor.step(t))
    return statuses


def test_the_issue_sequence_a_fixed_joint_named_once_never_makes_the_state_stale(demo_model):
    """Four movable joints (OK), one message that also names the fixed joint (OK), then the
    four again at 50 Hz for 12 s with a 5 s timeout: OK throughout (STALE from 5 s on before)."""
    m = CollisionMonitor(demo_model, MonitorConfig(joint_state_timeout=5.0))
    assert {o.status for o in _states(m, MOVABLE, 0.02, 1.0)} == {STATUS_OK}
    out = _states(m, MOVABLE + ["fingertip_mount"], 1.02, 1.02)[0]
    assert out.status == STATUS_OK and out.reason == ""
    outs = _states(m, MOVABLE, 1.04, 13.0)
    assert {o.status for o in outs} == {STATUS_OK}
    assert max(o.joint_state_age for o in outs) < 1e-9  # every joint counted is fresh


@pytest.mark.parametrize("kind", ["fixed", "coupled", "loop-closing"])
def test_joints_without_state_are_checked_ignored_and_never_stale(every_kind, kind):
    """Named once (with a value that would change the pose if it were used), then never again:
    the pose is the one without it, the status stays OK; a NaN for it still rejects the message."""
    model, kinds = every_kind
    needed = [model.joint_names[j] for j in np.flatnonzero(model.kinematics.needs_position)]
    joint = kinds[kind]
    m = CollisionMonitor(model, MonitorConfig(joint_state_timeout=0.5))
    reference = CollisionMonitor(model, MonitorConfig(joint_state_timeout=0.5))
    values = [0.1] * len(needed)
    out = _states(m, needed + [joint], 0.02, 0.02, values=values + [1.3])[0]
    ref = _states(reference, needed, 0.02, 0.02, values=values)[0]
    assert out.status == STATUS_OK
    np.testing.assert_array_equal(out.result.distances, ref.result.distances)
    assert {o.status for o in _states(m, needed, 0.1, 3.0)} == {STATUS_OK}
    accepted, reason = m.on_joint_state(needed + [joint], values + [math.nan], 3.1, 3.1)
    assert not accepted and joint in reason and "non-finite" in reason


@pytest.mark.parametrize("kind", ["revolute", "prismatic", "continuous"])
def test_a_joint_of_state_that_stops_is_named_until_it_comes_again(every_kind, kind):
    model, kinds = every_kind
    needed = [model.joint_names[j] for j in np.flatnonzero(model.kinematics.needs_position)]
    joint = kinds[kind]
    others = [n for n in needed if n != joint]
    m = CollisionMonitor(model, MonitorConfig(joint_state_timeout=0.5, warning_period=10.0))
    _states(m, needed, 0.02, 1.0)
    outs = _states(m, others, 1.02, 2.0)
    stale = [o for o in outs if o.status == STATUS_STALE_JOINT_STATE]
    # the joint's last stamp is 1.0 s: STALE from the first state after 1.5 s, with its age
    assert stale and stale[0].time == pytest.approx(1.52) and stale[-1] is outs[-1]
    assert [o.status for o in outs if o.time < 1.5 + 1e-9] == [STATUS_OK] * 25
    last = outs[-1]
    assert last.stale_joints == [(joint, pytest.approx(1.0))]
    assert last.reason == f"joint state is 1.000 s old (timeout 0.5 s): {joint} (1.000 s)"
    warned = [w for o in outs for w in o.warnings if joint in w]
    assert len(warned) == 1  # a throttled warning names it once
    back = _states(m, [joint], 2.02, 2.02)[0]
    assert back.status == STATUS_OK and back.reason == "" and back.stale_joints == []


def test_stale_joints_are_listed_oldest_first_with_their_ages(demo_model):
    m = CollisionMonitor(demo_model, MonitorConfig(joint_state_timeout=0.5))
    m.on_joint_state(["elbow"], [0.0], 1.0, 1.0)
    m.on_joint_state(["wrist"], [0.0], 1.25, 1.25)
    m.on_joint_state(["shoulder_yaw", "shoulder_pitch"], [0.0, 0.0], 2.0, 2.0)
    made = []  # the merger's lists: the status makes one, the output and the reason use it
    listed = m.merger.stale_joints
    m.merger.stale_joints = lambda *a: made.append(listed(*a)) or made[-1]
    out = m.step(2.0)
    assert out.status == STATUS_STALE_JOINT_STATE
    assert out.stale_joints == [("/ambf/env/elbow", 1.0), ("/ambf/env/wrist", 0.75)]  # qualified
    assert out.joint_state_age == 1.0
    assert made == [out.stale_joints] and "elbow (1.000 s), /ambf/env/wrist (0.750 s)" in out.reason
    assert m.status(2.0).stale_joints == out.stale_joints and m.status(2.0)[:2] == (
        out.status, out.reason)


def test_a_forgotten_joint_no_longer_makes_the_state_stale_and_is_named_in_ok(demo_model):
    """joint_forget_timeout 2 s: STALE from 0.5 s to 2 s after the joint's last state, then
    OK naming it as forgotten, and OK with nothing to say once it comes again."""
    m = CollisionMonitor(demo_model, MonitorConfig(joint_state_timeout=0.5,
                                                   joint_forget_timeout=2.0))
    _states(m, MOVABLE, 0.02, 1.0)
    outs = {round(o.time, 2): o for o in _states(m, MOVABLE[:3], 1.02, 4.0)}
    assert outs[1.5].status == STATUS_OK
    assert all(outs[t].status == STATUS_STALE_JOINT_STATE for t in (1.52, 2.0, 3.0))
    assert outs[3.02].status == STATUS_OK
    assert outs[3.02].reason == ("stopped arriving (forgotten after 2 s), kept at their last "
                                 "value: /ambf/env/wrist (2.020 s)")
    assert m.forgotten_joints(4.0) == [("/ambf/env/wrist", pytest.approx(3.0))]
    back = _states(m, MOVABLE, 4.02, 4.02)[0]
    assert back.status == STATUS_OK and back.reason == ""


def test_the_forget_timeout_and_its_range_follow_the_configuration(demo_model):
    m = CollisionMonitor(demo_model, MonitorConfig(joint_state_timeout=0.5))
    _states(m, MOVABLE, 0.02, 0.02)
    assert m.step(1000.0).status == STATUS_STALE_JOINT_STATE  # 0: never forgotten
    m.update_config(joint_forget_timeout=100.0)
    assert m.step(1000.0).status == STATUS_OK
    with pytest.raises(ValueError, match="joint_forget_timeout"):
        m.update_config(joint_forget_timeout=-1.0)


def test_required_joints_without_state_are_refused_by_name(demo_model):
    with pytest.raises(ValueError, match="fingertip_mount carry no state"):
        CollisionMonitor(demo_model, MonitorConfig(), required_joints=["elbow", "fingertip_mount"])
