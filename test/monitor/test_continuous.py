"""The monitor's continuous mode (issue 38, ``monitor/continuous.py``): contacts between two
joint states, with their time, on the hand-derived model of ``test/model/adf_models/hand.yaml``
(a 10 mm sphere on a prismatic lift along z through a 1 mm plate at z = 0), and the steps that
are not a motion."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import TEST_DIR
from ambf_collision.geometry.tolerances import MOTION_TIME_TOLERANCE
from ambf_collision.model.contact_rows import contact_columns
from ambf_collision.model.model import Model
from ambf_collision.monitor.config import STATUS_OK, MonitorConfig
from ambf_collision.monitor.monitor import CollisionMonitor

HAND = TEST_DIR / "model" / "adf_models" / "hand.yaml"
PLATE_SPHERE = ("/hand/carriage", "/hand/plate")


@pytest.fixture(scope="module")
def hand():
    return Model.from_files([HAND])


def run(monitor, states):
    """Feeds ``[(stamp s, lift m)]`` one by one (the turn at 1 rad: the swing away from its
    post), each evaluated at its stamp; returns the outputs."""
    outs = []
    for stamp, lift in states:
        accepted, reason = monitor.on_joint_state(["/hand/lift", "/hand/turn"], [lift, 1.0],
                                                  stamp, stamp)
        assert accepted, reason
        outs.append(monitor.step(stamp))
    return outs


def plate_contact(out):
    """``(row, time, swept)`` of the sphere-plate contact of ``out`` (None: not reported)."""
    for who, row, t, swept in zip(out.contact_info, out.contact_rows, out.contact_times,
                                  out.contact_swept):
        if tuple(sorted(who[:2])) == PLATE_SPHERE:
            return row, float(t), bool(swept)
    return None


def test_a_sphere_through_a_plate_between_two_states_is_a_swept_contact_at_its_time(hand):
    """The centre goes from z = +50 mm (stamp 10.0 s) to -50 mm (10.01 s) at constant speed:
    apart at both states; it first touches the plate's top face (z = 0.5 mm) when the centre
    is at 10.5 mm, s = (50 - 10.5) / 100 = 0.395, at 10.00395 s (by hand). Reported once,
    swept, with the row there: distance 0 (to the time tolerance times the 0.1 m step), normal
    along z; the status stays OK and the state's minimum stays the state's."""
    monitor = CollisionMonitor(hand, MonitorConfig(continuous=True, joint_state_timeout=0.0))
    first, second = run(monitor, [(10.0, 0.05), (10.01, -0.05)])
    assert first.step_note == "first evaluation" and plate_contact(first)[2] is False
    assert first.step_start == 10.0 and np.isinf(first.contact_fractions).all()
    assert second.status == STATUS_OK and second.step_note == ""
    row, t, swept = plate_contact(second)
    c = contact_columns(row)
    assert swept and 0.0 <= c.distance <= 0.1 * MOTION_TIME_TOLERANCE
    assert abs(t - 10.00395) <= 0.01 * MOTION_TIME_TOLERANCE + 1e-9 and t <= 10.00395 + 1e-9
    assert abs(abs(c.normal[2]) - 1.0) < 1e-12
    assert sum(1 for who in second.contact_info if tuple(sorted(who[:2])) == PLATE_SPHERE) == 1
    assert second.min_distance == pytest.approx(0.05 - 0.0105, abs=1e-12)
    assert list(second.contact_rows[:, 0]) == sorted(second.contact_rows[:, 0])


def test_without_continuous_the_same_states_show_only_the_state(hand):
    """The same two states evaluated one by one: a near contact at the second state (39.5 mm,
    below the 50 mm report distance), never touched, so no time and not swept."""
    monitor = CollisionMonitor(hand, MonitorConfig(joint_state_timeout=0.0))
    out = run(monitor, [(10.0, 0.05), (10.01, -0.05)])[1]
    row, t, swept = plate_contact(out)
    assert row[0] == pytest.approx(0.0395, abs=1e-12) and t == 0.0 and not swept
    assert out.step_note == ""


def test_touching_contacts_carry_the_time_they_first_touched(hand):
    """Into the plate and staying there: the step from +20 mm to 0 touches at s = (20 -
    10.5) / 20, at 1.0 + 0.475 * 0.1 s; in the next step (still in) it touched at its start
    (t0 = 1.1 s). Without continuous mode a touching contact has the state's stamp."""
    monitor = CollisionMonitor(hand, MonitorConfig(continuous=True, joint_state_timeout=0.0))
    outs = run(monitor, [(1.0, 0.02), (1.1, 0.0), (1.2, -0.001)])
    row, t, swept = plate_contact(outs[1])
    assert row[0] < 0.0 and not swept
    assert abs(t - (1.0 + 0.475 * 0.1)) <= 0.1 * MOTION_TIME_TOLERANCE + 1e-9
    assert plate_contact(outs[2])[1:] == (1.1, False)
    discrete = CollisionMonitor(hand, MonitorConfig(joint_state_timeout=0.0))
    assert plate_contact(run(discrete, [(1.0, 0.02), (1.1, 0.0)])[1])[1:] == (1.1, False)


@pytest.mark.parametrize("states, config, note", [
    ([(5.0, 0.05), (4.99, -0.05)], {}, "stamp went back by 0.010000 s"),
    ([(5.0, 0.05), (6.0, -0.05)], {"joint_state_timeout": 0.5},
     "1.000 s since the previous state (joint_state_timeout 0.5 s)"),
    ([(5.0, 0.05), (5.01, -0.05)], {"continuous_max_step": 0.05},
     "/hand/lift moved 0.1 in one step (continuous_max_step 0.05)"),
])
def test_a_step_that_is_not_a_motion_is_evaluated_at_the_state_with_the_reason(
        hand, states, config, note):
    """A stamp that went back, a gap longer than ``joint_state_timeout``, a jump larger than
    ``continuous_max_step``: the state alone (the plate contact near, not swept), the reason in
    ``step_note``; the next regular step is a motion again."""
    cfg = {"continuous": True, "joint_state_timeout": 0.0, "max_stamp_age": 100.0, **config}
    monitor = CollisionMonitor(hand, MonitorConfig(**cfg))
    out = run(monitor, states)[1]
    assert note in out.step_note
    assert plate_contact(out)[1:] == (0.0, False)
    t = states[1][0]
    back = run(monitor, [(t + 0.001, -0.02), (t + 0.002, 0.02)])
    assert back[0].step_note == "" and plate_contact(back[1])[2]


def test_a_clock_jump_back_restarts_the_steps(hand):
    """After the clock jumped back (a bag loop), the first evaluation is not a motion from the
    state before the jump."""
    monitor = CollisionMonitor(hand, MonitorConfig(continuous=True, joint_state_timeout=0.0))
    run(monitor, [(10.0, 0.05)])
    monitor.on_clock_jump_back(1.0)
    out = run(monitor, [(1.0, -0.05)])[0]
    assert out.step_note == "first evaluation after the clock jumped back"
    assert plate_contact(out)[1:] == (0.0, False)


def test_a_repeated_state_is_a_zero_step_with_nothing_swept(hand):
    """Heartbeat evaluations of the same state: the step from it to itself sweeps nothing; the
    contact, touching at the step's start, has that start's stamp (1.1 s) and the same row."""
    monitor = CollisionMonitor(hand, MonitorConfig(continuous=True, joint_state_timeout=0.0,
                                                   heartbeat_rate=10.0))
    touched = plate_contact(run(monitor, [(1.0, 0.02), (1.1, 0.0)])[1])
    for now in (1.2, 1.5):
        again = plate_contact(monitor.step(now))
        assert again[1:] == (1.1, False)
        np.testing.assert_array_equal(again[0], touched[0])
