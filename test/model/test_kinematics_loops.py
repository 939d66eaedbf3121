"""Closed loops: the spanning-tree rule, and poses and closure residuals of hand-built linkages
(test/model/kin_models/) against closed forms: a four-bar (circle intersection), a parallelogram
like the PSM's (chord of the mismatch), a slider-crank (a prismatic joint in the loop), a tree
joint walked backwards, and the slider constraint's residual."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from ambf_collision.model.adf import load_adf_files
from ambf_collision.model.kinematics import Kinematics
from ambf_collision.model.spanning_tree import spanning_tree

MODELS = Path(__file__).resolve().parent / "kin_models"


def load(name, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files([MODELS / name], **kw)


def run(kin, positions=None):
    """One forward pass from fresh buffers; ``positions``: {joint name: q}."""
    buf = kin.new_buffers(np.eye(3)[None].repeat(kin.n_files, 0), np.zeros((kin.n_files, 3)))
    for name, q in (positions or {}).items():
        buf.q[kin.joint_index(name)] = q
    kin.forward(buf)
    return buf


def residual(kin, buf, name):
    return buf.closure_residuals[kin.closure_joint_names.index(kin.joint_names[kin.joint_index(name)])]


def point(buf, kin, body, local):
    b = kin.body_names.index(body) if hasattr(kin, "body_names") else body
    return buf.body_R[b] @ np.asarray(local, float) + buf.body_t[b]


def rz(angle):
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


# ----------------------------------------------------------------- the rule (graph only)

def tree_of(n, joints, held=()):
    """spanning_tree of ``n`` bodies and ``joints`` [(parent, child)]; ``held``: joint indices
    that hold a pose (p2p, springs, ...)."""
    p, c = zip(*joints) if joints else ((), ())
    return spanning_tree(n, p, c, [k not in held for k in range(len(joints))])


def test_rule_prefers_relation_joints_then_short_chains():
    """PSM-like: 0 -> 1 -> 2 by hinges and a p2p 0 -> 2 (a chain of one held joint): the hinge
    chain wins; body 3 hangs only from a p2p: that p2p is a tree joint."""
    t = tree_of(4, [(0, 1), (1, 2), (0, 2), (2, 3)], held={2, 3})
    assert t.parent_joint.tolist() == [-1, 0, 1, 3]
    assert t.closure.tolist() == [False, False, True, False]
    assert t.roots.tolist() == [0] and t.order.tolist() == [0, 1, 2, 3]


def test_rule_shortest_chain_and_ties_to_the_joint_listed_first():
    """Body 3 reachable in 2 joints through 1 or 2 (joints 2 and 3) or in 3 through 4: the
    2-joint chain through the joint listed first (2) wins; listing 3 first flips it."""
    joints = [(0, 1), (0, 2), (1, 3), (2, 3), (4, 3), (0, 4)]
    t = tree_of(5, joints)
    assert t.parent_joint[3] == 2 and t.closure.tolist() == [False, False, False, True, True, False]
    swapped = [joints[0], joints[1], joints[3], joints[2], joints[4], joints[5]]
    t = tree_of(5, swapped)
    assert t.parent_joint[3] == 2 and swapped[2] == (2, 3) and t.parent_body[3] == 2


def test_rule_roots_reversed_walks_and_components():
    """Component {0,1,2}: 0 and 1 are no joint's child; 0 (first) is the root, 1 is posed from 2
    through its joint walked backwards. Component {3,4,5} is all loops (3 -> 4 -> 5 -> 3): its
    first body is the root; 5 is reached backwards over 5 -> 3 (one joint), 4 -> 5 closes.
    A lone body is its own root."""
    t = tree_of(7, [(0, 2), (1, 2), (3, 4), (4, 5), (5, 3)])
    assert t.roots.tolist() == [0, 3, 6]
    assert t.parent_joint.tolist() == [-1, 1, 0, -1, 2, 4, -1]
    assert t.parent_body.tolist() == [-1, 2, 0, -1, 3, 3, -1]
    assert t.reversed.tolist() == [False, True, False, False, False, True, False]
    assert t.closure.tolist() == [False, False, False, True, False]
    pos = {b: i for i, b in enumerate(t.order.tolist())}
    assert all(pos[t.parent_body[b]] < pos[b] for b in range(7) if t.parent_body[b] >= 0)


def test_rule_parallel_joints_and_no_joints():
    """Two joints between the same bodies: the first is the tree joint. No joints: every body
    is a root."""
    t = tree_of(2, [(0, 1), (0, 1)])
    assert t.parent_joint.tolist() == [-1, 0] and t.closure.tolist() == [False, True]
    t = tree_of(3, [])
    assert t.roots.tolist() == [0, 1, 2] and t.closure.shape == (0,)


# ----------------------------------------------------------------- four-bar

def four_bar_closed_form(theta):
    """Ground A = (0,0), D = (0.4,0); crank 0.3, coupler sqrt(0.2), rocker 0.5 (four_bar.yaml).
    Crank angle ``theta`` (from +x) -> (B, C) with C on the branch the file is written in."""
    B = 0.3 * np.array([math.cos(theta), math.sin(theta), 0.0])
    D = np.array([0.4, 0.0, 0.0])
    b, c = math.sqrt(0.2), 0.5
    e = np.linalg.norm(D - B)
    u = (D - B) / e
    n = np.array([-u[1], u[0], 0.0])
    along = (e * e + b * b - c * c) / (2.0 * e)
    return B, B + along * u + math.sqrt(b * b - along * along) * n


@pytest.mark.parametrize("theta_deg", [90.0, 60.0, 135.0, 200.0, -30.0])
def test_four_bar_closed_form_closes_the_loop(theta_deg):
    """Joint positions from the closed form (crank angle, coupler and rocker angles of the
    circle intersection): the loop residual is 0 and every body sits where the closed form puts
    it; at q = 0 (theta = 90 deg) the file's locations."""
    kin = Kinematics(load("four_bar.yaml"))
    assert kin.closure_joint_names == ["/fourbar/coupler-rocker"]
    theta = math.radians(theta_deg)
    B, C = four_bar_closed_form(theta)
    q_crank = theta - math.pi / 2
    phi = math.atan2(C[1] - B[1], C[0] - B[0]) - math.atan2(0.2, 0.4)  # coupler turn from the file
    psi = math.atan2(C[1], C[0] - 0.4) - math.pi / 2  # rocker turn from the file
    buf = run(kin, {"ground-crank": q_crank, "crank-coupler": phi - q_crank, "ground-rocker": psi})
    body = {n: i for i, n in enumerate(j.plain_name for j in load("four_bar.yaml").bodies)}
    np.testing.assert_allclose(buf.body_t[body["coupler"]], B, atol=1e-15)
    np.testing.assert_allclose(buf.body_R[body["coupler"]], rz(phi), atol=1e-15)
    np.testing.assert_allclose(buf.body_R[body["rocker"]] @ [0, 0.5, 0] + buf.body_t[body["rocker"]], C, atol=1e-15)
    np.testing.assert_allclose(buf.closure_residuals, [[0.0, 0.0]], atol=1e-15)
    if theta_deg == 90.0:
        assert abs(q_crank) + abs(phi) + abs(psi) < 1e-15


@pytest.mark.parametrize("delta", [1e-6, 0.01, -0.3, math.pi])
def test_four_bar_inconsistent_rocker_gives_the_chord(delta):
    """The rocker turned by delta away from the closing angle: its end C moves on a circle of
    radius 0.5 about D, so the hinge pivots are the chord 2 * 0.5 * |sin(delta / 2)| apart; the
    axes stay parallel (angle 0)."""
    kin = Kinematics(load("four_bar.yaml"))
    theta = math.radians(75.0)
    B, C = four_bar_closed_form(theta)
    phi = math.atan2(C[1] - B[1], C[0] - B[0]) - math.atan2(0.2, 0.4)
    psi = math.atan2(C[1], C[0] - 0.4) - math.pi / 2
    q = theta - math.pi / 2
    buf = run(kin, {"ground-crank": q, "crank-coupler": phi - q, "ground-rocker": psi + delta})
    pos, ang = residual(kin, buf, "coupler-rocker")
    assert pos == pytest.approx(abs(2 * 0.5 * math.sin(delta / 2)), rel=1e-12, abs=1e-15)
    assert ang == 0.0


# ----------------------------------------------------------------- parallelogram (PSM-like)

@pytest.mark.parametrize("q", [0.0, 0.3, -0.9, 1.4])
def test_parallelogram_consistent_states_close(q):
    """Pitch q, front q, bottom -q (the parallelogram's own relation): the bottom link is
    translated by the back link's tip, unrotated, and both hinges at B' coincide."""
    kin = Kinematics(load("parallelogram.yaml"))
    assert kin.closure_joint_names == ["/psm_like/pitchfrontlink-pitchbottomlink"]
    buf = run(kin, {"yaw link-pitch back link": q, "yaw link-pitch front link": q,
                    "pitch back link-pitch bottom link": -q})
    bottom = 3
    np.testing.assert_allclose(buf.body_R[bottom], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(buf.body_t[bottom], rz(q) @ [0, 0.3, 0], atol=1e-15)
    np.testing.assert_allclose(buf.closure_residuals, [[0.0, 0.0]], atol=1e-15)


@pytest.mark.parametrize("delta", [1e-9, 1e-3, 0.2, -1.0])
def test_parallelogram_inconsistent_front_gives_the_chord(delta):
    """Front link at q + delta: its tip leaves B' along a circle of radius 0.3: the hinge
    pivots are 2 * 0.3 * |sin(delta / 2)| apart, axes parallel."""
    kin = Kinematics(load("parallelogram.yaml"))
    q = 0.4
    buf = run(kin, {"yaw link-pitch back link": q, "yaw link-pitch front link": q + delta,
                    "pitch back link-pitch bottom link": -q})
    pos, ang = buf.closure_residuals[0]
    assert pos == pytest.approx(abs(2 * 0.3 * math.sin(delta / 2)), rel=1e-9, abs=1e-16)
    assert ang == 0.0


def test_parallelogram_tilted_hinge_gives_the_axis_angle(tmp_path):
    """The same parallelogram with the front link's hinge axis tilted by 0.1 rad about x on the
    front link only (child side of the closure): the closure's axis mismatch is 0.1 rad."""
    doc = yaml.safe_load((MODELS / "parallelogram.yaml").read_text())
    a = 0.1
    doc["JOINT pitch front link-pitch bottom link"]["parent axis"] = {"x": 0.0, "y": -math.sin(a), "z": math.cos(a)}
    path = tmp_path / "tilted.yaml"
    path.write_text(yaml.safe_dump(doc))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kin = Kinematics(load_adf_files([path]))
    buf = run(kin)
    assert buf.closure_residuals[0, 1] == pytest.approx(a, rel=1e-12)


# ----------------------------------------------------------------- slider-crank

@pytest.mark.parametrize("theta_deg", [90.0, 30.0, 180.0, 250.0])
def test_slider_crank_closed_form(theta_deg):
    """Crank 0.1, rod 0.26, slider on the x axis: x_C = B_x + sqrt(0.26^2 - B_y^2); joint
    positions from it close the loop exactly; a slider off by delta leaves the rod-slider hinge
    |delta| apart along x."""
    kin = Kinematics(load("slider_crank.yaml"))
    assert kin.closure_joint_names == ["/slider/rod-slider"]
    assert kin.joint_types[kin.joint_index("ground-slider")] == "prismatic"
    theta = math.radians(theta_deg)
    B = 0.1 * np.array([math.cos(theta), math.sin(theta)])
    xc = B[0] + math.sqrt(0.26 ** 2 - B[1] ** 2)
    rod = math.atan2(-B[1], xc - B[0]) - math.atan2(-0.1, 0.24)
    q = theta - math.pi / 2
    state = {"ground-crank": q, "crank-rod": rod - q, "ground-slider": xc - 0.24}
    buf = run(kin, state)
    np.testing.assert_allclose(buf.body_t[3], [xc, 0, 0], atol=1e-15)
    np.testing.assert_allclose(buf.closure_residuals, [[0.0, 0.0]], atol=2e-16)
    for delta in (1e-7, -0.05):
        buf = run(kin, dict(state, **{"ground-slider": xc - 0.24 + delta}))
        assert buf.closure_residuals[0, 0] == pytest.approx(abs(delta), rel=1e-8)
        assert buf.closure_residuals[0, 1] == 0.0


def test_slider_constraint_residual_by_hand(tmp_path):
    """Bodies G (origin) and S (at (1,0,0)) joined by hinge j0 about z through (1,0,0) (the tree
    joint, listed first) and slider j1 along x (pivot: G's origin, S's (-1,0,0)). Turning j0 by
    a: S's pivot goes to (1 - cos a, -sin a, 0): sin a off the x line; rotation locked: angle a.
    Sliding is free: j0 at 0, S moved along x by the file keeps the residual 0."""
    loc = lambda x: {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    v = lambda x, y, z: {"x": x, "y": y, "z": z}
    doc = {"bodies": ["BODY G", "BODY S"], "joints": ["JOINT j0", "JOINT j1"],
           "BODY G": {"name": "G", "location": loc(0.0), "collision shape": "SPHERE", "collision geometry": {"radius": 0.1}},
           "BODY S": {"name": "S", "location": loc(1.0), "collision shape": "SPHERE", "collision geometry": {"radius": 0.1}},
           "JOINT j0": {"name": "j0", "parent": "BODY G", "child": "BODY S", "type": "revolute",
                        "parent pivot": v(1.0, 0, 0), "parent axis": v(0, 0, 1.0),
                        "child pivot": v(0, 0, 0), "child axis": v(0, 0, 1.0)},
           "JOINT j1": {"name": "j1", "parent": "BODY G", "child": "BODY S", "type": "prismatic",
                        "parent pivot": v(0, 0, 0), "parent axis": v(1.0, 0, 0),
                        "child pivot": v(-1.0, 0, 0), "child axis": v(1.0, 0, 0)}}
    path = tmp_path / "slider.yaml"
    path.write_text(yaml.safe_dump(doc))
    kin = Kinematics(load_adf_files([path]))
    for a in (0.0, 0.25, -2.0):
        buf = run(kin, {"j0": a})
        assert buf.closure_residuals[0, 0] == pytest.approx(abs(math.sin(a)), abs=1e-16)
        assert buf.closure_residuals[0, 1] == pytest.approx(abs(a), abs=1e-15)


# ----------------------------------------------------------------- reversed tree joint

@pytest.mark.parametrize("alpha,beta", [(0.0, 0.0), (0.5, 0.0), (0.5, 1.25), (-2.0, 0.7)])
def test_reversed_joint_poses_the_parent_side(alpha, beta):
    """reversed_chain.yaml: C turns about (1,0,0) by alpha (A-C); B is B-C's parent, posed from
    C through B-C backwards: orientation Rz(alpha - beta), position C + Rz(alpha - beta)
    (1,0,0); no closure joint."""
    kin = Kinematics(load("reversed_chain.yaml"))
    assert kin.closure_joint_names == [] and kin.tree_reversed.tolist() == [False, True, False]
    buf = run(kin, {"A-C": alpha, "B-C": beta})
    np.testing.assert_allclose(buf.body_t[2], [1.0, 0.0, 0.0], atol=1e-15)
    np.testing.assert_allclose(buf.body_R[1], rz(alpha - beta), atol=1e-15)
    np.testing.assert_allclose(buf.body_t[1], [1 + math.cos(alpha - beta), math.sin(alpha - beta), 0], atol=1e-15)


def test_rule_equal_chains_prefer_a_joint_walked_forwards():
    """MTM-like: 0 -> 1 -> {2, 3}; body 4 is the child of 2 (joint 4) and the parent of 3
    (joint 2, listed first): both reach 4 in 3 joints; the forward joint 4 wins over walking
    joint 2 backwards, and joint 2 closes the loop."""
    t = tree_of(5, [(0, 1), (1, 2), (4, 3), (1, 3), (2, 4)])
    assert t.parent_joint[4] == 4 and not t.reversed.any()
    assert t.closure.tolist() == [False, False, True, False, False]
