"""The bundled demo scene (examples/demo/): a valid ADF whose locations obey the joint relation,
and a joint trajectory whose phases really produce the contacts they are meant to."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from ambf_collision.transforms import axis_angle_to_matrix, rotation_between, rpy_to_matrix

DEMO = Path(__file__).resolve().parents[1] / "examples" / "demo"
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
    from ambf_collision.probes import expand_specs, load_probe_file

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
