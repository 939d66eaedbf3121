"""The bundled demo scene (examples/demo/): a valid ADF whose locations obey the joint relation,
and a joint trajectory whose phases really produce the contacts they are meant to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from conftest import DEMO_DIR
from ambf_collision.geometry.transforms import axis_angle_to_matrix, rotation_between, rpy_to_matrix

DEMO = DEMO_DIR
ADF = DEMO / "demo_arm.yaml"
PROBES = DEMO / "demo_probes.yaml"
PROBES_256 = DEMO / "demo_probes_256.yaml"


def _vec(d):
    return np.array([float(d["x"]), float(d["y"]), float(d["z"])])


def _location(body):
    loc = body["location"]
    o = loc["orientation"]
    return rpy_to_matrix(o["r"], o["p"], o["y"]), _vec(loc["position"])


@pytest.fixture(scope="module")
def adf():
    with open(ADF) as f:
        return yaml.safe_load(f)


def test_file_lists_match_entries(adf):
    """Every listed body/joint has its entry and the file-level keys are as intended."""
    assert adf["namespace"] == "/ambf/env/"
    assert adf["ignore inter-collision"] is False
    for ident in adf["bodies"] + adf["joints"]:
        assert ident in adf, ident
    shapes = {adf[b]["name"]: adf[b]["collision shape"] for b in adf["bodies"]}
    assert shapes["floor"] == "PLANE" and shapes["table"] == "BOX"
    assert shapes["fingertip"] in ("SPHERE", "CAPSULE")
    assert [shapes[n] for n in ("turret", "upper_arm", "forearm", "hand")] == ["CAPSULE"] * 4
    statics = {adf[b]["name"] for b in adf["bodies"] if adf[b]["mass"] == 0}
    assert statics == {"base", "floor", "table"}


def test_locations_follow_joint_relation_at_zero(adf):
    """Each child's `location` equals T_parent . Trans(pivot_p) . Rot(a, offset) . R(b->a) .
    Trans(-pivot_c) at q = 0 (the relation of the ADF notes), to 1e-12."""
    checked = 0
    for jid in adf["joints"]:
        j = adf[jid]
        Rp, tp = _location(adf[j["parent"]])
        Rc, tc = _location(adf[j["child"]])
        a = _vec(j["parent axis"]) / np.linalg.norm(_vec(j["parent axis"]))
        b = _vec(j["child axis"])
        R_rel = axis_angle_to_matrix(a, float(j.get("offset", 0.0))) @ rotation_between(b, a)
        t_rel = _vec(j["parent pivot"]) - R_rel @ _vec(j["child pivot"])
        R_exp, t_exp = Rp @ R_rel, Rp @ t_rel + tp
        np.testing.assert_allclose(Rc, R_exp, atol=1e-12, err_msg=jid)
        np.testing.assert_allclose(tc, t_exp, atol=1e-12, err_msg=jid)
        checked += 1
    assert checked == 5


def test_capsule_links_have_the_intended_sizes(adf):
    """Links are 0.25-0.4 m capsules of radius ~0.04 m, tip to tip equal to the pivot spacing,
    so that the capsule ends sit on the joints."""
    pivots = {adf[j]["parent"]: _vec(adf[j]["parent pivot"]) for j in adf["joints"]}
    for name in ("turret", "upper_arm", "forearm"):
        body = adf[f"BODY {name}"]
        g = body["collision geometry"]
        assert 0.25 <= g["height"] <= 0.4 and 0.035 <= g["radius"] <= 0.05
        if name != "turret":
            assert np.isclose(np.linalg.norm(pivots[f"BODY {name}"]), g["height"])


def test_probe_files_parse():
    """The probe files give 4x4 + 2 and 16x16 probes on the fingertip's front face."""
    from ambf_collision.probes.probe_set import expand_specs, load_probe_file

    names = ["/ambf/env/" + n for n in
             ("base", "turret", "upper_arm", "forearm", "hand", "fingertip", "floor", "table")]
    small = load_probe_file(PROBES, names)
    big = load_probe_file(PROBES_256, names)
    small, big = expand_specs(small), expand_specs(big)
    assert len(small) == 18 and len(big) == 256
    assert {p.body for p in small} == {"/ambf/env/fingertip", "/ambf/env/hand"}
    pad = [p for p in small if p.patch == "pad"]
    # the 4x4 pad is centred on the sphere's front pole: 3 mm pitch, corners at +-4.5 mm
    xy = np.array([p.position[:2] for p in pad])
    np.testing.assert_allclose(np.sort(np.unique(xy[:, 0])), [-0.0045, -0.0015, 0.0015, 0.0045])
    assert all(np.isclose(p.position[2], 0.025) for p in pad)


# ----------------------------------------------------------------------------- with the real model

def _model():
    try:
        from ambf_collision.model import Model
    except ImportError as e:  # pragma: no cover - only while model.py is not there
        pytest.skip(f"ambf_collision.model.model not importable yet: {e}")
    return Model.from_files([str(ADF)])


@pytest.fixture(scope="module")
def model():
    return _model()


def _at(model, data, t):
    from ambf_collision.demo.trajectory import demo_joint_positions

    q = demo_joint_positions(t)
    assert model.set_joint_positions(data, list(q), list(q.values())) == []
    return model.evaluate(data, report_distance=0.05)


def _pairs(result, below=0.0):
    return {frozenset((c.body_1.rsplit("/", 1)[-1], c.body_2.rsplit("/", 1)[-1]))
            for c in result.contacts if c.distance < below}


def _contact(result, a, b):
    for c in result.contacts:
        if {c.body_1.rsplit("/", 1)[-1], c.body_2.rsplit("/", 1)[-1]} == {a, b}:
            return c
    raise AssertionError(f"no contact {a}-{b} in {[(c.body_1, c.body_2) for c in result.contacts]}")


EXPECTED = {
    "self_contact": frozenset(("upper_arm", "fingertip")),
    "floor_contact": frozenset(("fingertip", "floor")),
    "probe_touch": frozenset(("fingertip", "table")),
}


def test_zero_pose_is_free(model):
    data = model.create_data()
    r = model.evaluate(data)
    assert r.min_distance > 0.05 and r.contacts == [] and r.pairs_checked == 21


@pytest.mark.parametrize("phase", sorted(EXPECTED))
def test_each_phase_produces_its_contact(model, phase):
    from ambf_collision.demo.trajectory import PHASES

    data = model.create_data()
    a, b = PHASES[phase]
    fingertip = model.body_index("fingertip")
    for t in np.linspace(a, b, 5):
        r = _at(model, data, t)
        assert _pairs(r) == {EXPECTED[phase]}, (phase, t)
        c = _contact(r, *EXPECTED[phase])
        assert -0.006 < c.distance < 0.0
        z = r.body_t[fingertip][2]  # fingertip sphere centre (radius 0.025 m)
        if phase == "floor_contact":  # sphere vs plane z = 0: hand-derived signed distance
            assert c.distance == pytest.approx(z - 0.025, abs=1e-12)
            assert c.distance == pytest.approx(-0.004, abs=2e-4)
            np.testing.assert_allclose(np.abs(c.normal), [0, 0, 1], atol=1e-9)
        if phase == "probe_touch":  # sphere vs the table's top face z = 0.30
            assert c.distance == pytest.approx(z - 0.025 - 0.30, abs=1e-12)
            assert c.distance == pytest.approx(-0.002, abs=2e-4)


def test_no_penetration_outside_the_contact_phases(model):
    """Sweep one period at 50 ms: any penetrating pair is the one of the phase whose hold
    (widened by 0.2 s for the approach) contains t; free and moving poses penetrate nothing."""
    from ambf_collision.demo.trajectory import PERIOD, PHASES

    data = model.create_data()
    seen = set()
    for t in np.arange(0.0, PERIOD, 0.05):
        hits = _pairs(_at(model, data, t))
        allowed = {EXPECTED[p] for p in EXPECTED if PHASES[p][0] - 0.2 <= t <= PHASES[p][1] + 0.2}
        assert hits <= allowed, (t, hits)
        seen |= hits
    assert seen == set(EXPECTED.values())
    for t in (0.0, 1.0, 2.0, 6.5, 10.5, 14.5):
        assert _at(model, data, t).min_distance > 0.0, t


def test_trajectory_is_smooth_and_periodic():
    from ambf_collision.demo.trajectory import PERIOD, demo_joint_array

    np.testing.assert_allclose(demo_joint_array(0.0), demo_joint_array(PERIOD), atol=1e-12)
    np.testing.assert_allclose(demo_joint_array(1.234), demo_joint_array(1.234 + 3 * PERIOD), atol=1e-9)
    ts = np.arange(0.0, PERIOD, 1e-3)
    q = np.array([demo_joint_array(t) for t in ts])
    v = np.diff(q, axis=0) / 1e-3
    assert np.abs(v).max() < 3.0  # rad/s
    assert np.abs(np.diff(v, axis=0)).max() < 0.02  # no velocity jumps (C1): < 20 rad/s^2 * 1 ms
    with pytest.raises(ValueError):
        demo_joint_array(float("nan"))


def test_probe_touch_gives_hand_derived_forces_along_the_table_normal(model):
    """Pad probes (radius 2.5 mm, k = 2000 N/m) sit on the fingertip's pole plane; pressing on the
    top face z = 0.30 they feel d_pen = r - (z_probe - 0.30) each, force k d_pen along +z."""
    from ambf_collision.monitor.scene import probe_evaluator
    from ambf_collision.probes.probe_set import load_probe_file

    specs = load_probe_file(PROBES, model.body_names)
    run, probe_set = probe_evaluator(model, specs)
    data = model.create_data()
    table = model.body_index("table")

    r = _at(model, data, 0.0)
    pr = run(model, data, r)
    assert not pr.in_contact.any() and np.all(pr.force == 0.0)

    r = _at(model, data, 12.0)
    pr = run(model, data, r)
    pad = np.array([n.startswith("pad/") for n in pr.names])
    assert pr.in_contact[pad].all() and not pr.in_contact[~pad].any()
    z = pr.position[pad, 2]
    d_pen = np.clip(0.0025 - (z - 0.30), 0.0, 0.005)
    np.testing.assert_allclose(pr.depth[pad], d_pen, atol=1e-12)
    np.testing.assert_allclose(pr.force[pad, 2], 2000.0 * d_pen, atol=1e-9)
    np.testing.assert_allclose(pr.force[pad, :2], 0.0, atol=1e-9)
    np.testing.assert_allclose(pr.contact_normal[pad], np.tile([0, 0, 1.0], (16, 1)), atol=1e-12)
    assert set(pr.touching_body[pad]) == {table}
    np.testing.assert_allclose(pr.patch_force[0], [0, 0, 2000.0 * d_pen.sum()], atol=1e-9)
    assert pr.patch_in_contact[0] == 16


def test_monitor_runs_the_demo_script(model):
    """The monitor fed by the joint player at 100 Hz over one period: OK status throughout, each
    contact appears during its phase and vanishes after, probes touch only in the probe phase."""
    from ambf_collision.demo.trajectory import PERIOD, demo_joint_positions, demo_phase
    from ambf_collision.monitor.monitor import STATUS_OK, CollisionMonitor, MonitorConfig
    from ambf_collision.monitor.scene import probe_evaluator
    from ambf_collision.probes.probe_set import load_probe_file

    run, _ = probe_evaluator(model, load_probe_file(PROBES, model.body_names))
    mon = CollisionMonitor(model, MonitorConfig(max_rate=0.0), probes=run)
    first_seen, touching = {}, set()
    for k in range(int(PERIOD * 100)):
        t = 100.0 + k * 0.01
        q = demo_joint_positions(t)
        mon.on_joint_state(list(q), list(q.values()), stamp=t, now=t)
        out = mon.poll(t)
        assert out is not None and out.status == STATUS_OK and out.evaluated
        assert np.isfinite(out.min_distance)
        for p in _pairs(SimpleResult(out.contacts)):
            first_seen.setdefault(p, demo_phase(t))
        if out.probes.in_contact.any():
            touching.add(demo_phase(t))
    assert {p: first_seen[p] for p in first_seen} .keys() == set(EXPECTED.values())
    assert "probe_touch" in touching and "free" not in touching and "back" not in touching
    assert mon.evaluations == int(PERIOD * 100)


class SimpleResult:
    def __init__(self, contacts):
        self.contacts = contacts
