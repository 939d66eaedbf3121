"""Distance Jacobians, distance rates and body-frame witnesses of the reported contacts
(issue 13; ``model/jacobians.py``). Oracles: central finite differences of the evaluated
distance (every joint, random configurations), hand-derived derivatives, the body poses."""

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import DEMO_ARM

from ambf_collision.model import Model
from ambf_collision.model.filtering import Overrides

KIN = Path(__file__).resolve().parent / "kin_models"
ALL_PAIRS = Overrides(check=[("*", "*")])
H = 1e-6  # rad or m: central difference step (truncation ~H^2, GJK noise ~1e-15 / H)


def finite_difference(model, data, q, report=10.0):
    """``(contact pairs, J (n,J))`` of the evaluation at ``q`` and the central differences of
    each contact pair's distance over every joint (couplings applied by evaluate)."""
    model.set_joint_positions(data, model.joint_names, q)
    r = model.evaluate(data, report_distance=report)
    pairs, jac = r.contact_index.copy(), r.jacobians.copy()
    fd = np.zeros_like(jac)
    for j in range(len(q)):
        for sign in (1.0, -1.0):
            qq = q.copy()
            qq[j] += sign * H
            model.set_joint_positions(data, model.joint_names, qq)
            d = model.evaluate(data, report_distance=report).distances[pairs]
            fd[:, j] += sign * d / (2 * H)
    model.set_joint_positions(data, model.joint_names, q)
    return pairs, jac, fd


def assert_matches(jac, fd, rel=1e-6):
    scale = np.maximum(1.0, np.abs(jac).max(axis=1, keepdims=True))
    assert np.all(np.isfinite(jac))
    err = np.abs(jac - fd) / scale
    assert err.max() <= rel, (err.max(), np.unravel_index(err.argmax(), err.shape))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_demo_arm_jacobians_match_central_differences(seed):
    """Every checked pair of the demo arm as a contact, random joint positions."""
    m = Model.from_files([DEMO_ARM])
    d = m.create_data()
    q = np.random.default_rng(seed).uniform(-1.2, 1.2, len(m.joint_names))
    pairs, jac, fd = finite_difference(m, d, q)
    assert len(pairs) == len(m.pairs) and jac.shape == (len(pairs), len(m.joint_names))
    assert_matches(jac, fd)
    # a joint on neither body's tree path (walked here from the tree arrays) moves neither:
    # exactly 0 in both
    kin = m.kinematics
    for row, p in enumerate(pairs):
        moving = set()
        for b in m.pair_bodies[p]:
            while kin.tree_parent_joint[b] >= 0:
                moving.add(int(kin.tree_parent_joint[b]))
                b = kin.tree_parent_body[b]
        still = [k for k in range(len(q)) if k not in moving]
        assert np.all(jac[row, still] == 0.0) and np.all(fd[row, still] == 0.0)


@pytest.mark.parametrize("name, seed", [("reversed_chain.yaml", 0), ("slider_crank.yaml", 1),
                                        ("four_bar.yaml", 2), ("parallelogram.yaml", 3)])
def test_loop_and_reversed_models_match_central_differences(name, seed):
    """Loops (over the spanning tree), a reversed tree joint, a prismatic joint: all pairs."""
    m = Model.from_files([KIN / name], overrides=ALL_PAIRS)
    d = m.create_data()
    q = np.random.default_rng(seed).uniform(-0.6, 0.6, len(m.joint_names))
    pairs, jac, fd = finite_difference(m, d, q)
    assert len(pairs) and np.abs(jac).max() > 0.01
    assert_matches(jac, fd)


@pytest.mark.parametrize("q", [0.3, -0.7])
def test_coupled_joints_fold_into_their_source(q):
    """The dVRK-like parallelogram with its couplings (one a chain): the coupled columns are 0
    and the source column is the derivative with the couplings applied (central difference of
    the source alone: evaluate re-applies the couplings)."""
    m = Model.from_files([KIN / "parallelogram.yaml"], overrides=ALL_PAIRS,
                         couplings=str(KIN / "parallelogram_couplings.yaml"))
    d = m.create_data()
    qs = np.zeros(len(m.joint_names))
    qs[0] = q
    pairs, jac, fd = finite_difference(m, d, qs)
    coupled = m.kinematics.coupled
    assert coupled.any() and np.all(jac[:, coupled] == 0.0)
    assert np.abs(jac[:, 0]).max() > 0.01
    assert_matches(jac[:, 0:1], fd[:, 0:1])


def _hinge(tmp_path, joint_type="revolute", axis=None):
    """Sphere B (r 0.1) at x = 1 on a joint at the origin; sphere A (r 0.2) fixed at x = 1.5."""
    def loc(x):
        return {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    axis = axis or {"x": 0, "y": 0, "z": 1}
    doc = {
        "bodies": ["BODY base", "BODY B", "BODY A"], "joints": ["JOINT j"],
        "BODY base": {"name": "base", "location": loc(0.0)},
        "BODY B": {"name": "B", "location": loc(0.0), "collision shape": "SPHERE",
                   "collision geometry": {"radius": 0.1},
                   "collision offset": {"position": {"x": 1.0, "y": 0.0, "z": 0.0},
                                        "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}},
        "BODY A": {"name": "A", "location": loc(1.5), "collision shape": "SPHERE",
                   "collision geometry": {"radius": 0.2}},
        "JOINT j": {"name": "j", "parent": "BODY base", "child": "BODY B", "type": joint_type,
                    "parent pivot": {"x": 0, "y": 0, "z": 0}, "parent axis": axis,
                    "child pivot": {"x": 0, "y": 0, "z": 0}, "child axis": axis},
    }
    p = tmp_path / "j.yaml"
    p.write_text(yaml.safe_dump(doc))
    return Model.from_files([p])


@pytest.mark.parametrize("q", [0.0, 0.4, math.pi / 2, -2.5])
def test_revolute_hand_derived(tmp_path, q):
    """d(q) = |(1.5, 0) - (cos q, sin q)| - 0.3 = sqrt(3.25 - 3 cos q) - 0.3, so
    dd/dq = 1.5 sin q / sqrt(3.25 - 3 cos q) (B is body_1); rate = that times q_dot."""
    m = _hinge(tmp_path)
    d = m.create_data()
    m.set_joint_positions(d, ["j"], [q])
    r = m.evaluate(d, report_distance=5.0)
    assert not r.rates_valid and r.distance_rates.tolist() == [0.0]
    (c,) = r.contacts
    assert (c.body_1, c.body_2) == ("/ambf/env/B", "/ambf/env/A")
    expect = 1.5 * math.sin(q) / math.sqrt(3.25 - 3.0 * math.cos(q))
    assert c.jacobian[0] == pytest.approx(expect, abs=1e-14)
    m.set_joint_velocities(d, ["j"], [-0.5])
    r = m.evaluate(d, report_distance=5.0)
    assert r.rates_valid and r.contacts[0].distance_rate == pytest.approx(-0.5 * expect, abs=1e-14)
    # witnesses in body frames: B's centre is its body's (1, 0, 0), radius 0.1 towards A
    u = np.array([1.5 - math.cos(q), -math.sin(q), 0.0]) / math.sqrt(3.25 - 3.0 * math.cos(q))
    c = r.contacts[0]
    np.testing.assert_allclose(c.point_1_local, np.array([1.0, 0, 0])
                               + 0.1 * np.array([[math.cos(q), math.sin(q), 0],
                                                 [-math.sin(q), math.cos(q), 0], [0, 0, 1]]) @ u,
                               atol=1e-14)
    np.testing.assert_allclose(c.point_2_local, -0.2 * u, atol=1e-14)   # A's frame at (1.5,0,0)


def test_prismatic_hand_derived(tmp_path):
    """Slider along +x: B's centre at (1 + q, 0, 0), d = 0.2 - q, dd/dq = -1."""
    m = _hinge(tmp_path, "prismatic", {"x": 1, "y": 0, "z": 0})
    d = m.create_data()
    m.set_joint_positions(d, ["j"], [0.05])
    m.set_joint_velocities(d, ["j"], [2.0])
    (c,) = m.evaluate(d, report_distance=5.0).contacts
    assert c.distance == pytest.approx(0.15, abs=1e-15)
    assert c.jacobian.tolist() == [-1.0] and c.distance_rate == -2.0


def test_degenerate_concentric_spheres_give_finite_rows(tmp_path):
    """B's centre on A's (q such that they coincide is impossible on the hinge; a slider puts
    B's centre at A's): the fallback normal is used, the row stays finite and unit-bounded."""
    m = _hinge(tmp_path, "prismatic", {"x": 1, "y": 0, "z": 0})
    d = m.create_data()
    m.set_joint_positions(d, ["j"], [0.5])
    (c,) = m.evaluate(d, report_distance=5.0).contacts
    assert c.distance == pytest.approx(-0.3, abs=1e-15)
    assert np.all(np.isfinite(c.jacobian)) and abs(c.jacobian[0]) <= 1.0


def test_rates_are_jacobian_times_velocities_and_coupled_velocities_are_ignored():
    """distance_rates = jacobians @ q_dot on the parallelogram with couplings; a velocity given
    for a coupled joint changes nothing; the rate equals the central difference along q_dot."""
    m = Model.from_files([KIN / "parallelogram.yaml"], overrides=ALL_PAIRS,
                         couplings=str(KIN / "parallelogram_couplings.yaml"))
    d = m.create_data()
    q = np.array([0.4, 0.0, 0.0, 0.0])
    v = np.array([0.7, 0.0, 0.0, 0.0])
    m.set_joint_positions(d, m.joint_names, q)
    m.set_joint_velocities(d, m.joint_names, v + np.array([0.0, 9.0, -3.0, 1.0]))
    r = m.evaluate(d, report_distance=10.0)
    idx, rates = r.contact_index.copy(), r.distance_rates.copy()
    np.testing.assert_allclose(rates, r.jacobians @ v, rtol=0, atol=1e-15)
    dist = []
    for s in (1.0, -1.0):
        m.set_joint_positions(d, m.joint_names, q + s * H * v)
        dist.append(m.evaluate(d, report_distance=10.0).distances[idx])
    np.testing.assert_allclose(rates, (dist[0] - dist[1]) / (2 * H), rtol=0, atol=1e-7)
