"""The virtual fixture's law and state (``monitor/virtual_fixture.py``, issue 37 §2) against
wrenches worked by hand, and in a closed teleoperation loop with the library's model
(``fixture_loop.py``: a hand on the master, the PSM through the teleop scale, the monitor's
evaluation, the fixture's wrench back).

Hand values use the defaults: k 400 N/m, lam 5000 N s/m^2, d_a 0.02 m, d_s 0.003 m, f_max 5 N,
v_0 0.005 m/s, ramp 10 ms.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from ambf_collision.monitor.virtual_fixture import (FixtureContacts, FixtureParams,
                                                    VirtualFixture, check_registration,
                                                    contact_sides, fixture_force,
                                                    master_wrench, velocity_scale)

P = FixtureParams().checked()
DOWN = (0.0, 0.0, -1.0)


def contacts(*rows):
    """FixtureContacts of ``(d, normal, rate, side, obstacle)`` rows."""
    if not rows:
        return FixtureContacts(np.zeros(0), np.zeros((0, 3)), np.zeros(0),
                               np.zeros(0, np.int64), np.zeros(0, np.int64))
    d, n, r, s, o = zip(*rows)
    return FixtureContacts(np.array(d, float), np.array(n, float), np.array(r, float),
                           np.array(s, np.int64), np.array(o, np.int64))


def force(*rows, p=P):
    f, valid = fixture_force(contacts(*rows), p)
    assert valid
    return f


def test_spring_damper_by_hand_and_the_sign_of_each_side():
    # d 0.01, closing at 0.01 m/s (w = 1): x = 0.01, f = 0.01 (400 + 5000 * 0.01) = 4.5 N.
    # Tool = body_1, normal tool -> organ = -z: the push away is -n = +z.
    assert force((0.01, DOWN, -0.01, -1, 0)) == pytest.approx([0, 0, 4.5], abs=1e-12)
    # the same contact listed with the tool as body_2 (normal organ -> tool, +z): along +n
    assert force((0.01, (0, 0, 1), -0.01, 1, 0)) == pytest.approx([0, 0, 4.5], abs=1e-12)
    # a slow approach inside the band: rate -0.0025 -> w = 0.5: 0.01 (400 + 12.5) 0.5
    assert force((0.01, DOWN, -0.0025, -1, 0))[2] == pytest.approx(2.0625, rel=1e-12)
    # the cap: d 0.005 at -0.1 m/s: 0.015 (400 + 500) = 13.5 N -> 5 N
    assert force((0.005, DOWN, -0.1, -1, 0)) == pytest.approx([0, 0, 5.0], abs=1e-12)
    # at or beyond d_a: nothing, however fast
    assert not force((0.02, DOWN, -1.0, -1, 0)).any()
    assert not force((0.05, DOWN, -1.0, -1, 0)).any()
    # contacts between two tool bodies or two other bodies (side 0) are ignored
    assert not force((0.001, DOWN, -1.0, 0, -1)).any()
    assert not force().any()


def test_moving_away_gets_no_push_outside_d_s_and_the_spring_inside():
    assert not force((0.01, DOWN, 1e-6, -1, 0)).any()
    assert not force((0.0031, DOWN, 0.5, -1, 0)).any()
    assert not force((0.01, DOWN, 0.0, -1, 0)).any()  # at rest outside d_s: w = s = 0
    # inside d_s, moving away: d 0.0015 -> s = 0.5, x = 0.0185: 0.0185 * 400 * 0.5 = 3.7 N
    assert force((0.0015, DOWN, 0.01, -1, 0))[2] == pytest.approx(3.7, rel=1e-12)
    # penetrating (d < 0): s = 1, x = 0.021: 8.4 N -> 5 N, away from the obstacle
    assert force((-0.001, DOWN, 0.01, -1, 0)) == pytest.approx([0, 0, 5.0], abs=1e-12)


def test_continuous_across_d_a_and_rate_zero():
    """No step where d crosses d_a (the damper is proportional to x) nor where the rate
    changes sign (the band)."""
    for d, rate in ((0.02 - 1e-9, -0.2), (0.01, -1e-9), (0.01, 1e-9)):
        assert np.linalg.norm(force((d, DOWN, rate, -1, 0))) < 1e-5


def test_closest_contact_per_obstacle_summed_over_obstacles_and_capped():
    # two contacts with one obstacle (shaft and tip): only the closest (d 0.01) pushes
    one = force((0.015, DOWN, -0.01, -1, 0), (0.01, DOWN, -0.01, -1, 0))
    assert one == pytest.approx([0, 0, 4.5], abs=1e-12)
    # two obstacles: the organ below (4.5 N up) and the rod beside (+x normal: push -x, at
    # d 0.016: 0.004 (400 + 50) = 1.8 N): summed
    two = force((0.01, DOWN, -0.01, -1, 0), (0.016, (1, 0, 0), -0.01, -1, 1))
    assert two == pytest.approx([-1.8, 0, 4.5], abs=1e-12)
    # two obstacles pushing 4.5 N each at right angles: 6.36 N, capped to 5 N in its direction
    capped = force((0.01, DOWN, -0.01, -1, 0), (0.01, (1, 0, 0), -0.01, -1, 1))
    assert capped == pytest.approx(5.0 / math.sqrt(2) * np.array([-1, 0, 1]), abs=1e-12)


def test_registration_maps_the_world_force_into_the_master_frame():
    rz = [[0, -1, 0], [1, 0, 0], [0, 0, 1]]  # M is W turned by +90 deg about z
    f = force((0.01, (-1, 0, 0), -0.01, -1, 0))  # push +x in W: 4.5 N
    assert master_wrench(f, check_registration(rz)) == pytest.approx([0, 4.5, 0, 0, 0, 0],
                                                                      abs=1e-12)
    # written to 4 decimals (cos 30 deg = 0.8660): accepted, made an exact rotation
    c, s = 0.8660, 0.5
    r = check_registration([c, -s, 0, s, c, 0, 0, 0, 1])
    assert r @ r.T == pytest.approx(np.eye(3), abs=1e-15)
    for bad in ([[-1, 0, 0], [0, 1, 0], [0, 0, 1]], 2 * np.eye(3), [1, 0, 0, 0, 1, 0, 0, 0],
                [math.nan] * 9, [[1, 0.1, 0], [0, 1, 0], [0, 0, 1]]):
        with pytest.raises(ValueError, match="registration"):
            check_registration(bad)


def test_non_finite_contacts_give_zero_and_invalid():
    for row in ((math.nan, DOWN, -0.01, -1, 0), (0.01, DOWN, math.inf, -1, 0),
                (0.01, (math.nan, 0, 0), -0.01, -1, 0), (0.01, (0, 0, 0), -0.01, -1, 0)):
        f, valid = fixture_force(contacts((0.01, DOWN, -0.01, -1, 1), row), P)
        assert not valid and not f.any() and np.isfinite(f).all()
    # a non-finite value in a contact the fixture ignores (side 0) does not matter
    f, valid = fixture_force(contacts((0.01, DOWN, -0.01, -1, 0),
                                      (math.nan, DOWN, -0.01, 0, -1)), P)
    assert valid and f[2] == pytest.approx(4.5)
    for bad in (dict(ramp_time=0.02), dict(safety_distance=0.03), dict(stiffness=-1.0),
                dict(rate_band=0.0), dict(max_force=math.nan)):
        with pytest.raises(ValueError):
            FixtureParams(**bad).checked()


def test_contact_sides_tool_on_either_side_by_qualified_or_plain_pattern():
    pairs = [("/PSM1/tip", "/env/organ"), ("/env/rod", "/PSM1/shaft"),
             ("/PSM1/tip", "/PSM1/base"), ("/env/rod", "/env/organ"), ("/PSM1/shaft", "/env/organ")]
    side, obstacle = contact_sides(pairs, ["/PSM1/*"])
    assert side.tolist() == [-1, 1, 0, 0, -1]
    assert obstacle.tolist() == [0, 1, -1, -1, 0]
    side, _ = contact_sides(pairs, ["tip"])  # a plain name
    assert side.tolist() == [-1, 0, -1, 0, 0]


def test_velocity_scale_is_the_damper_rule_on_the_tool_contacts():
    """The velocity damper's hand values (test_velocity_damper.py: d_i 0.08, d_s 0.01, xi 0.3;
    at d 0.045 the bound is -0.15 m/s, so a measured -0.3 m/s is halved); other contacts do
    not count."""
    args = (0.08, 0.01, 0.3)
    c = contacts((0.045, DOWN, -0.3, -1, 0), (0.02, DOWN, -5.0, 0, -1))
    assert velocity_scale(c, *args) == pytest.approx(0.5, rel=1e-14)
    assert velocity_scale(contacts((0.005, DOWN, -0.01, 1, 0)), *args) == 0.0
    assert velocity_scale(contacts((0.05, DOWN, 0.1, 1, 0)), *args) == 1.0
    assert velocity_scale(contacts((math.nan, DOWN, -0.01, 1, 0)), *args) == 0.0


def _feed(fx, t0, t1, c, ok=True, dt=0.001):
    """Outputs (force z, N) at 1 kHz from t0 to t1 (s), contacts ``c`` arriving each step
    (``None``: none arrive)."""
    out = []
    for k in range(int(round((t1 - t0) / dt))):
        t = t0 + k * dt
        if c is not None:
            fx.on_contacts(t, ok, c)
        w = fx.output(t)
        assert np.isfinite(w).all() and not w[3:].any()
        out.append(w[2])
    return np.array(out)


@pytest.mark.parametrize("fault", ["stale", "status", "nan"])
def test_the_wrench_ramps_to_zero_within_10_ms_never_a_step(fault):
    fx = VirtualFixture(P)
    good = contacts((0.01, DOWN, -0.01, -1, 0))  # 4.5 N
    rise = _feed(fx, 0.0, 0.05, good)
    assert rise[-1] == pytest.approx(4.5)  # ramped up from 0 (the gain starts at 0)
    assert np.abs(np.diff(rise)).max() <= 4.5 * 0.001 / 0.01 + 1e-12
    if fault == "stale":  # nothing arrives: stale after max_contact_age (0.05 s)
        fall = _feed(fx, 0.05, 0.2, None)
        start = int(round(P.max_contact_age / 0.001))  # first step after the age is exceeded
    else:
        bad = contacts((math.nan, DOWN, -0.01, -1, 0)) if fault == "nan" else good
        fall = _feed(fx, 0.05, 0.2, bad, ok=fault != "status")
        start = 0
    trace = np.concatenate(([rise[-1]], fall))
    assert np.abs(np.diff(trace)).max() <= 4.5 * 0.001 / 0.01 + 1e-12  # no step: a ramp
    assert fall[start + 10:].max() == 0.0 and fall[start + 8] > 0.0  # zero 10 ms on, not before
    # good contacts again: back up as a ramp
    back = _feed(fx, 0.2, 0.25, good)
    assert back[-1] == pytest.approx(4.5) and np.abs(np.diff(back)).max() <= 0.45 + 1e-12


# --------------------------------------------------------------------------- the closed loop


@pytest.fixture(scope="module")
def scene():
    from fixture_loop import FILES

    from ambf_collision.model import Model

    with warnings.catch_warnings():  # the carriages have no shape (a warning each, meant)
        warnings.simplefilter("ignore")
        model = Model.from_files([str(f) for f in FILES])
    return model, model.create_data()


def _approaches(scene, n, seed):
    from fixture_loop import random_approach, simulate

    model, data = scene
    rng = np.random.default_rng(seed)
    stats = {"min_distance": math.inf, "max_force": 0.0, "pushed_retreating": 0,
             "stopped": 0, "retreated": 0, "rates": []}
    for _ in range(n):
        a = random_approach(rng, P.activation_distance)
        fx = VirtualFixture(FixtureParams(registration=a.registration))
        run = simulate(model, data, fx, a, report_distance=0.05)
        stats["min_distance"] = min(stats["min_distance"], run.distance.min())
        stats["max_force"] = max(stats["max_force"], run.force.max())
        stats["stopped"] += run.distance.min() > 0.0
        away = (run.phase == 1) & (run.rate > 0.0) & (run.distance > P.safety_distance)
        stats["pushed_retreating"] += bool(run.force[away].any())
        # it does retreat, freely: the distance grows all along the retreat's last half
        retreat = run.distance[run.phase == 1]
        stats["retreated"] += bool((np.diff(retreat[len(retreat) // 2:]) > 0.0).all())
        stats["rates"].append(run.rate[run.phase == 0].min())
    return stats


def _check(stats, n):
    print(f"{n} approaches: min distance {stats['min_distance'] * 1e3:.2f} mm, max force "
          f"{stats['max_force']:.2f} N, fastest approach {-min(stats['rates']):.3f} m/s")
    assert stats["stopped"] == n, stats["min_distance"]
    assert stats["pushed_retreating"] == 0
    assert stats["retreated"] == n
    assert stats["max_force"] <= P.max_force + 1e-12
    assert -min(stats["rates"]) > 0.15  # the fastest closed in at nearly 0.2 m/s


def test_approaches_stop_before_contact_50(scene):
    _check(_approaches(scene, 50, seed=37), 50)


@pytest.mark.slow
def test_approaches_stop_before_contact_1000(scene):
    _check(_approaches(scene, 1000, seed=2037), 1000)


def test_a_hand_that_keeps_pushing_settles_inside_d_s_out_of_contact(scene):
    """The firmest hand (3 N s/m) at the fastest speed, straight down onto the organ, pushing
    for 4 s: it creeps to where s k x equals its push b v_i = 3 * 0.2 / 0.2 = 3 N: solving
    (d_s - d) / d_s * 400 (0.02 - d) = 3, d^2 - 0.023 d + 3.75e-5 = 0, gives
    d = (0.023 - sqrt(3.79e-4)) / 2 = 1.766 mm; it stays there, out of contact."""
    from fixture_loop import START_GAP, TIP_RADIUS, Approach, simulate

    model, data = scene
    a = Approach(np.array([0.0, 0.0, 0.2 + TIP_RADIUS + P.activation_distance + START_GAP]),
                 np.array([0.0, 0.0, -1.0]), 0.2, 0.5, 3.0, np.eye(3))
    run = simulate(model, data, VirtualFixture(P), a, report_distance=0.05, hold=4.0)
    held = run.distance[run.phase == 0]
    d = np.roots([1.0, -(0.02 + 0.003), 0.02 * 0.003 - 3.0 * 0.003 / 400.0]).min()
    assert d == pytest.approx(0.001766, abs=1e-6)
    assert held.min() > 0.0
    assert held[-1] == pytest.approx(d, abs=2e-5)
    assert run.force[run.phase == 0][-1] == pytest.approx(3.0, rel=1e-2)
