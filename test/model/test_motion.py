"""Continuous collision over a joint-state step (``Model.evaluate_motion``, issue 38) against an
independent oracle (``test/motion_oracle.py``: the ordinary evaluation at 10,000 sub-steps per
step and bisection of the first sign change), and against times derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import DEMO_DIR, TEST_DIR
from motion_oracle import Oracle
from ambf_collision.geometry.tolerances import (MOTION_DISTANCE_TOLERANCE, MOTION_MIN_SAMPLES,
                                                MOTION_TIME_TOLERANCE, MOTION_TOUCH_DISTANCE)
from ambf_collision.model.contact_rows import contact_columns
from ambf_collision.model.model import Model

DEMO = DEMO_DIR / "demo_arm.yaml"
THIN = TEST_DIR / "model" / "adf_models" / "thin_blade.yaml"
HAND = TEST_DIR / "model" / "adf_models" / "hand.yaml"   # the cases derived by hand
DENSE = 10_000


@pytest.fixture(scope="module")
def demo():
    return Model.from_files([DEMO])


@pytest.fixture(scope="module")
def thin():
    return Model.from_files([THIN])


def check_against_oracle(model, oracle, q0, q1, n=DENSE, files0=None, files1=None, tally=None):
    """Asserts one step against the oracle; returns ``(contacts, largest s error)``. Every
    contact the oracle sees is found, within ``MOTION_TIME_TOLERANCE`` of its ``s`` (an earlier
    ``s`` only where the distance there is within the tolerance: a touch between the oracle's
    samples); every other contact reported is within the tolerance of touching; the minimum's
    bounds hold the oracle's samples."""
    data = model.create_data()
    if files0 is not None:
        model.set_root_poses(data, files0)
    r = model.evaluate_motion(data, q0, q1, root_poses0=files0, root_poses1=files1,
                              report_distance=0.05)
    first, lowest = oracle.step(q0, q1, n, files0, files1)
    worst, contacts = 0.0, 0
    for p in range(len(model.pairs)):
        s = r.time[p]
        if math.isfinite(first[p]):
            contacts += 1
            assert r.contact[p], (p, first[p], r.rate[p])
            err = abs(s - first[p])
            if s < first[p] - MOTION_TIME_TOLERANCE:   # earlier than the oracle saw: check it
                assert touches_near(oracle, q0, q1, s, p, files0, files1), (p, s, first[p])
                if tally is not None:
                    tally["early"] += 1
            else:
                assert err <= MOTION_TIME_TOLERANCE, (p, s, first[p])
                worst = max(worst, err)
        elif r.contact[p]:   # a contact between the oracle's samples: check it
            assert touches_near(oracle, q0, q1, s, p, files0, files1), (p, s)
            if tally is not None:
                tally["extra"] += 1
        else:   # the step's minimum lies in [min_bound, min_distance]: the oracle's samples
            # are above the bound, and a near pair's interval is within the tolerance
            assert r.min_bound[p] <= lowest[p] + 1e-12
            assert r.min_distance[p] >= r.min_bound[p] - 1e-12
            if r.min_bound[p] < 0.05 and r.samples[p] < MOTION_MIN_SAMPLES - 2:
                assert r.min_distance[p] - r.min_bound[p] <= MOTION_DISTANCE_TOLERANCE + 1e-12
        if r.contact[p]:   # the distance and normal are the evaluation's at s; the witnesses
            # as far apart as the distance (a face-face contact's witnesses are not unique)
            d = oracle.distances(q0, q1, s, files0, files1)[p]
            assert abs(d - r.distance[p]) <= 1e-9
            np.testing.assert_allclose(oracle.data.normal[p], r.normal[p], atol=1e-6)
            gap = np.linalg.norm(r.point_2[p] - r.point_1[p])
            assert abs(gap - abs(r.distance[p])) <= 1e-9
    return contacts, worst


def touches_near(oracle, q0, q1, s, p, files0=None, files1=None) -> bool:
    """Pair ``p`` touches within ``MOTION_TIME_TOLERANCE`` after ``s``: its distance at ``s`` is
    within ``MOTION_TOUCH_DISTANCE``, or <= 0 at ``s + MOTION_TIME_TOLERANCE``."""
    if oracle.distances(q0, q1, s, files0, files1)[p] <= MOTION_TOUCH_DISTANCE:
        return True
    return oracle.distances(q0, q1, min(s + MOTION_TIME_TOLERANCE, 1.0), files0, files1)[p] <= 0.0


def random_step(rng, model, limits, scale):
    lo, hi = limits
    q0 = rng.uniform(lo, hi)
    q1 = np.clip(q0 + rng.uniform(-scale, scale, size=q0.shape), lo, hi)
    return q0, q1


def _limits(model):
    lo = np.array([j.limits[0] if j.limits else -math.pi for j in model.world.joints], float)
    hi = np.array([j.limits[1] if j.limits else math.pi for j in model.world.joints], float)
    fixed = ~model.kinematics.movable
    lo[fixed] = hi[fixed] = 0.0
    return lo, hi


@pytest.mark.slow
@pytest.mark.parametrize("which, steps", [("demo", 24), ("thin", 24)])
def test_random_steps_match_the_dense_oracle(which, steps, demo, thin):
    """Randomized steps (a third each small, medium, large) of the demo arm and of the thin
    instrument: no contact missed, ``s`` within 1e-6 of the oracle's."""
    model = demo if which == "demo" else thin
    oracle = Oracle(model)
    rng = np.random.default_rng(38)
    limits = _limits(model)
    total, worst = 0, 0.0
    tally = {"early": 0, "extra": 0}
    for i in range(steps):
        q0, q1 = random_step(rng, model, limits, (0.02, 0.4, 3.0)[i % 3])
        c, w = check_against_oracle(model, oracle, q0, q1, tally=tally)
        total, worst = total + c, max(worst, w)
    assert total > 0   # the steps do touch
    assert worst <= MOTION_TIME_TOLERANCE





@pytest.fixture(scope="module")
def hand():
    return Model.from_files([HAND])


def _pair(model, body_1, body_2):
    names = [(model.shape_info[a].body.split("/")[-1], model.shape_info[b].body.split("/")[-1])
             for a, b in model.pairs.tolist()]
    return names.index((body_1, body_2)) if (body_1, body_2) in names else names.index((body_2, body_1))


def test_sphere_through_a_1mm_plate_at_the_time_by_hand(hand):
    """The sphere's centre goes from z = +50 mm to -50 mm at constant speed (apart at both ends:
    it tunnels); it first touches the plate when the centre is at 0.5 + 10 mm:
    s = (50 - 10.5) / 100 = 0.395."""
    data = hand.create_data()
    j = hand.joint_names.index("/hand/lift")
    q0, q1 = np.zeros(2), np.zeros(2)
    q0[j], q1[j] = 0.05, -0.05
    r = hand.evaluate_motion(data, q0, q1)
    p = _pair(hand, "plate", "carriage")
    assert r.discrete.distances[p] > 0.03 and r.contact[p] and r.swept[list(r.contact_index).index(p)]
    assert abs(r.time[p] - 0.395) <= MOTION_TIME_TOLERANCE
    assert r.time[p] <= 0.395 + 1e-12   # never after the true contact
    assert abs(r.point_2[p, 2] - 0.0005) < 1e-9 and abs(r.normal[p, 2] - 1.0) < 1e-9


def test_a_swept_contact_row_by_hand(hand):
    """The row of the tunnelling sphere at its time of contact: distance 0 (within the time
    tolerance times the rate, 0.1 m per step), the witness on the sphere at its bottom (body
    frame: (0, 0, -10 mm)) and on the plate's top face, the distance Jacobian d(d)/d(lift) = +1
    m/m (the sphere lifts straight off the face), 0 for the turn, and the rate J q_dot with the
    lift's velocity of -0.1 m/s."""
    data = hand.create_data()
    j = hand.joint_names.index("/hand/lift")
    hand.set_joint_velocities(data, ["/hand/lift"], [-0.1])
    q0, q1 = np.zeros(2), np.zeros(2)
    q0[j], q1[j] = 0.05, -0.05
    r = hand.evaluate_motion(data, q0, q1)
    p = _pair(hand, "plate", "carriage")
    row = r.swept_rows[list(r.contact_index[r.swept]).index(p)]
    c = contact_columns(row)
    assert 0.0 <= c.distance <= 0.1 * MOTION_TIME_TOLERANCE
    on_sphere = c.point_1_local if hand.shape_body[hand.pairs[p, 0]] == hand.body_index("carriage") \
        else c.point_2_local
    np.testing.assert_allclose(on_sphere, [0.0, 0.0, -0.01], atol=1e-12)
    np.testing.assert_allclose(c.jacobian[[j, 1 - j]], [1.0, 0.0], atol=1e-12)
    assert c.distance_rate == pytest.approx(-0.1, abs=1e-12)
    np.testing.assert_allclose(c.position, 0.5 * (c.point_1 + c.point_2), rtol=0, atol=0)


@pytest.mark.parametrize("scale", [0.4, 3.0])
def test_swept_rows_are_the_evaluation_at_the_time_of_contact(demo, scale):
    """Every swept contact's row equals the ordinary evaluation's row of that pair in a fresh
    Data at ``q(s)`` (the Jacobian there, the witnesses in the bodies' frames there, the rate
    with the same joint velocities): random steps of the demo arm."""
    rng = np.random.default_rng(5)
    limits = _limits(demo)
    velocity = rng.normal(size=len(demo.joint_names))
    checked = 0
    for _ in range(40):
        q0, q1 = random_step(rng, demo, limits, scale)
        data = demo.create_data()
        demo.set_joint_velocities(data, demo.joint_names, velocity)
        r = demo.evaluate_motion(data, q0, q1)
        swept = r.contact_index[r.swept]
        for p, s, row in zip(swept.tolist(), r.time[swept].tolist(), r.swept_rows):
            at = demo.create_data()
            demo.set_joint_velocities(at, demo.joint_names, velocity)
            at.q[...] = q0 + s * (q1 - q0)
            e = demo.evaluate(at, report_distance=1.0)
            expected = e.contact_rows[e.contact_index.tolist().index(p)]
            np.testing.assert_allclose(row, expected, rtol=0, atol=1e-9)
            checked += 1
    assert checked > 0


def test_a_turn_through_a_large_angle_by_hand(hand):
    """The arm turns from -3 to +3 rad in one step (a chord or a linear bound would cut the
    circle): the sphere at 0.3 m first touches the plate's face y = -0.5 mm when 0.3 sin(q) =
    -10.5 mm, at s = (3 - asin(0.035)) / 6; a reversed step meets the other face."""
    data = hand.create_data()
    j = hand.joint_names.index("/hand/turn")
    q0, q1 = np.zeros(2), np.zeros(2)
    q0[j], q1[j] = -3.0, 3.0
    p = _pair(hand, "swing", "post")
    r = hand.evaluate_motion(data, q0, q1)
    expected = (3.0 - math.asin(0.0105 / 0.3)) / 6.0
    assert r.contact[p] and expected - MOTION_TIME_TOLERANCE <= r.time[p] <= expected + 1e-12
    r = hand.evaluate_motion(data, q1, q0)
    assert r.contact[p] and expected - MOTION_TIME_TOLERANCE <= r.time[p] <= expected + 1e-12
    on_post = r.point_2[p] if hand.shape_body[hand.pairs[p, 1]] == hand.body_index("post") else r.point_1[p]
    assert abs(on_post[1] - 0.0005) < 1e-9   # the face y = +0.5 mm


@pytest.mark.slow
def test_couplings_apply_along_the_step():
    """The wrist follows the elbow (wrist = -0.8 elbow + 0.3) all along the step: the oracle
    evaluates each sub-step with the coupling too."""
    model = Model.from_files([DEMO], couplings=["wrist = -0.8 * elbow + 0.3"])
    oracle = Oracle(model)
    rng = np.random.default_rng(7)
    limits = _limits(model)
    total = 0
    for i in range(6):
        q0, q1 = random_step(rng, model, limits, (0.4, 3.0)[i % 2])
        total += check_against_oracle(model, oracle, q0, q1, n=4000)[0]
    assert total > 0


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@pytest.mark.slow
def test_a_root_pose_moving_through_a_large_angle():
    """The thin instrument's file moves by a screw (SLERP through 2.5 rad and a translation)
    next to the demo arm: the pairs between the two files follow it, as the oracle's SciPy
    SLERP poses it; the arm's own pairs do not feel it."""
    model = Model.from_files([DEMO, THIN])
    oracle = Oracle(model)
    rng = np.random.default_rng(11)
    limits = _limits(model)
    total = 0
    for i in range(6):
        q0, q1 = random_step(rng, model, limits, 0.5)
        files0 = [(np.eye(3), np.zeros(3)), (_rz(rng.uniform(-3, 3)), np.array([0.5, 0.0, 0.0]))]
        files1 = [(np.eye(3), np.zeros(3)),
                  (files0[1][0] @ _rz(2.5), np.array([0.1, rng.uniform(-0.3, 0.3), 0.2]))]
        total += check_against_oracle(model, oracle, q0, q1, n=4000, files0=files0, files1=files1)[0]
    assert total > 0


def test_no_motion_is_the_discrete_evaluation(demo):
    """q0 = q1: a pair touches only if it touches at q0 (s = 0); nothing is sampled; the Data
    holds exactly what ``evaluate`` gives."""
    data, fresh = demo.create_data(), demo.create_data()
    q = np.array([0.0, 1.9, 1.2, 0.8, 0.0])   # the arm down in the floor and the table
    r = demo.evaluate_motion(data, q, q)
    fresh.q[...] = q
    e = demo.evaluate(fresh)
    np.testing.assert_array_equal(r.discrete.distances, e.distances)
    np.testing.assert_array_equal(r.discrete.contact_rows, e.contact_rows)
    assert (r.samples == 0).all() and (r.rate == 0.0).all()
    touching = np.flatnonzero(e.distances <= 0.0)
    assert touching.size and set(r.contact_index.tolist()) == set(touching.tolist())
    assert (r.time[touching] == 0.0).all() and not r.swept.any()


def test_bad_steps_are_refused(demo):
    data = demo.create_data()
    q = np.zeros(5)
    bad = q.copy()
    bad[2] = np.nan
    with pytest.raises(ValueError, match="elbow"):
        demo.evaluate_motion(data, q, bad)
    with pytest.raises(ValueError, match="5 joints"):
        demo.evaluate_motion(data, q, np.zeros(4))
    with pytest.raises(ValueError, match="tolerance"):
        demo.evaluate_motion(data, q, q, distance_tolerance=0.0)


def test_a_joint_at_its_limit_and_the_next_step_from_the_data(demo):
    """A step ending with the elbow at its limit, then a step from there: the second starts from
    the Data's evaluation (q0 None) and gives what a fresh Data gives."""
    oracle = Oracle(demo)
    q0 = np.array([0.3, 0.5, 0.0, 0.0, 0.0])
    q1 = np.array([0.3, 1.2, 2.7, 1.0, 0.0])   # elbow at its high limit (2.7)
    check_against_oracle(demo, oracle, q0, q1, n=4000)
    data = demo.create_data()
    demo.evaluate_motion(data, q0, q1)
    q2 = np.array([0.3, 1.9, 2.7, -1.0, 0.0])
    a = demo.evaluate_motion(data, None, q2)
    b = demo.evaluate_motion(demo.create_data(), q1, q2)
    for field in ("contact", "time", "distance", "min_bound"):
        np.testing.assert_array_equal(getattr(a, field), getattr(b, field))
    np.testing.assert_array_equal(a.discrete.distances, b.discrete.distances)


def test_an_evaluation_in_between_is_not_taken_for_the_step_start(demo):
    """The Data evaluated elsewhere between two steps: the next step starts from its own q0,
    exactly as on a fresh Data."""
    data = demo.create_data()
    q0, q1, q2 = np.zeros(5), np.array([0.5, 1.0, 1.0, 0.5, 0.0]), np.array([0.6, 1.9, 1.2, 0.8, 0.0])
    demo.evaluate_motion(data, q0, q1)
    data.q[...] = q2
    demo.evaluate(data)   # the Data now holds q2, not q1
    a = demo.evaluate_motion(data, q1, q2)
    b = demo.evaluate_motion(demo.create_data(), q1, q2)
    np.testing.assert_array_equal(a.time, b.time)
    np.testing.assert_array_equal(a.min_bound, b.min_bound)


def test_a_moving_plane_is_checked_at_the_ends_only():
    """The demo file (with its floor plane) turning under the thin instrument: a plane has no
    bounding sphere, so its pairs are not certified and only the ends count; the arm's own
    pairs with the floor (one file: the turn moves both) stay certified."""
    model = Model.from_files([DEMO, THIN])
    data = model.create_data()
    q = np.zeros(len(model.joint_names))
    far = [(np.eye(3), np.zeros(3)), (np.eye(3), np.array([0.0, 0.0, 0.5]))]
    turned = [(_rz(1.0), np.zeros(3)), far[1]]
    r = model.evaluate_motion(data, q, q, root_poses0=far, root_poses1=turned)
    floor = model.body_index("floor")
    plane = (model.shape_body[model.pairs[:, 0]] == floor) | (model.shape_body[model.pairs[:, 1]] == floor)
    file_of = model.kinematics.body_file[model.pair_bodies]
    crosses = file_of[:, 0] != file_of[:, 1]   # the floor against the thin instrument
    assert (~r.certified[plane & crosses]).all() and np.isinf(r.min_bound[plane & crosses]).all()
    assert (plane & crosses).any() and r.certified[~(plane & crosses)].all()
