"""Couplings q[joint] = multiplier * q[source] + offset: the rule grammar, the YAML form, chains
in dependency order, refusals naming file / entry / key, and the parallelogram kept closed by its
couplings with only the pitch joint set (oracle: the loop residual, 0 by the linkage's geometry;
the bottom link's pose by hand)."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ambf_collision.model.adf import AdfError, load_adf_files
from ambf_collision.model.couplings import (
    Coupling,
    CouplingError,
    compile_couplings,
    couplings_from,
    load_couplings,
    parse_rule,
)
from ambf_collision.model.kinematics import Kinematics

MODELS = Path(__file__).resolve().parent / "kin_models"
PARALLELOGRAM = MODELS / "parallelogram.yaml"
PARALLELOGRAM_COUPLINGS = MODELS / "parallelogram_couplings.yaml"


def world(name="parallelogram.yaml"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files([MODELS / name])


def run(kin, positions):
    buf = kin.new_buffers(np.eye(3)[None], np.zeros((1, 3)))
    for name, q in positions.items():
        buf.q[kin.joint_index(name)] = q
    kin.forward(buf)
    return buf


# ----------------------------------------------------------------- grammar

@pytest.mark.parametrize("text,expected", [
    ("b = a", ("b", "a", 1.0, 0.0)),
    ("b=a", ("b", "a", 1.0, 0.0)),
    ("b = -1 * a + 1.5708", ("b", "a", -1.0, 1.5708)),
    ("b = 0.5*a - 0.1", ("b", "a", 0.5, -0.1)),
    ("  b  =  2e-3 *  a  -  .5 ", ("b", "a", 2e-3, -0.5)),
    ("a-b = c-d - 0.5", ("a-b", "c-d", 1.0, -0.5)),
    ("pitch front link-pitch bottom link = yaw link-pitch back link - 0.25",
     ("pitch front link-pitch bottom link", "yaw link-pitch back link", 1.0, -0.25)),
    ("x = link-2", ("x", "link-2", 1.0, 0.0)),  # no spaces around '-': part of the name
    ("x = 3 link", ("x", "3 link", 1.0, 0.0)),  # a number without '*' starts a name
])
def test_rule_grammar(text, expected):
    c = parse_rule(text, "param", "couplings[0]")
    assert (c.joint, c.source, c.multiplier, c.offset) == expected


@pytest.mark.parametrize("text", ["b", "= a", "b =", "b = 2 *", "b = a = c", "b = a + ", "b = a + x", "a - b = c",
                                  "b = a * 2", 7, None])
def test_rule_grammar_refusals_name_the_entry(text):
    with pytest.raises(CouplingError) as err:
        parse_rule(text, "couplings parameter", "couplings[3]")
    assert "couplings parameter: couplings[3]" in str(err.value)


@given(st.floats(-1e3, 1e3), st.floats(0, 1e3), st.sampled_from(["+", "-"]))
def test_rule_numbers_round_trip(m, o, sign):
    """repr of any finite multiplier and offset parses back to the same float."""
    c = parse_rule(f"j1 = {m!r} * j 2 {sign} {o!r}")
    assert c.multiplier == m and c.offset == (o if sign == "+" else -o)
    assert (c.joint, c.source) == ("j1", "j 2")


def test_rule_refuses_non_finite():
    with pytest.raises(CouplingError, match="multiplier"):
        parse_rule("b = 1e999 * a", "p", "couplings[0]")


# ----------------------------------------------------------------- YAML and sources

def test_yaml_file_mappings_and_rules(tmp_path):
    cs = load_couplings(PARALLELOGRAM_COUPLINGS)
    assert [(c.joint, c.source, c.multiplier, c.offset) for c in cs] == [
        ("yaw link-pitch front link", "yaw link-pitch back link", 1.0, 0.0),
        ("pitch back link-pitch bottom link", "yaw link-pitch front link", -1.0, 0.0)]
    assert cs[1].file == str(PARALLELOGRAM_COUPLINGS) and cs[1].entry == "couplings[1]"
    p = tmp_path / "c.yaml"
    p.write_text("couplings:\n  - {joint: b, source: a}\n")
    assert load_couplings(p) == [Coupling("b", "a", 1.0, 0.0, str(p), "couplings[0]")]
    assert couplings_from(None) == [] and couplings_from(str(p)) == couplings_from(p)
    assert couplings_from(["b = 2 * a", {"joint": "c", "source": "b", "offset": 0.5}], "param")[1] == \
        Coupling("c", "b", 1.0, 0.5, "param", "couplings[1]")


@pytest.mark.parametrize("text,key,message", [
    ("couplings: [{joint: b}]", "source", "must be a joint name"),
    ("couplings: [{joint: b, source: a, multiplier: x}]", "multiplier", "finite number"),
    ("couplings: [{joint: b, source: a, offset: .nan}]", "offset", "finite number"),
    ("couplings: [{joint: b, source: a, gain: 2}]", "gain", "unknown key"),
    ("couplings: [{joint: b, source: a, multiplier: true}]", "multiplier", "finite number"),
])
def test_yaml_refusals_name_file_entry_key(tmp_path, text, key, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(CouplingError) as err:
        load_couplings(p)
    e = err.value
    assert (e.file, e.entry, e.key) == (str(p), "couplings[0]", key) and message in str(e)
    assert isinstance(e, AdfError)


@pytest.mark.parametrize("text,message", [
    ("joints: []", "missing"), ("couplings: 3", "must be a list"), ("couplings: [", "malformed YAML"),
])
def test_yaml_file_level_refusals(tmp_path, text, message):
    p = tmp_path / "bad.yaml"
    p.write_text(text)
    with pytest.raises(CouplingError, match=message):
        load_couplings(p)
    with pytest.raises(CouplingError, match="cannot read"):
        load_couplings(tmp_path / "absent.yaml")


# ----------------------------------------------------------------- compilation

NAMES = ["j0", "j1", "j2", "j3", "fixed"]
MOVABLE = np.array([True, True, True, True, False])


def compiled(rules):
    def index(name):
        if name not in NAMES:
            raise KeyError(f"no joint named {name!r}")
        return NAMES.index(name)
    return compile_couplings(couplings_from(rules, "param"), index, NAMES, MOVABLE)


def test_chains_are_applied_after_their_source():
    """j3 = 2 j2, j2 = -j1 + 1, j1 = 0.5 j0 (listed backwards): applied j1, j2, j3; the kernel
    order gives j3 = 2 (-(0.5 q0) + 1)."""
    c = compiled(["j3 = 2 * j2", "j2 = -1 * j1 + 1", "j1 = 0.5 * j0"])
    assert c.joint.tolist() == [1, 2, 3] and c.source.tolist() == [0, 1, 2]
    assert c.coupled.tolist() == [False, True, True, True, False]
    q = np.array([0.8, 0, 0, 0, 0])
    for j, s, m, o in zip(c.joint, c.source, c.multiplier, c.offset):
        q[j] = m * q[s] + o
    assert q.tolist() == [0.8, 0.4, 0.6, 1.2, 0.0]


@pytest.mark.parametrize("rules,key,message", [
    (["j1 = nope"], "source", "no joint named 'nope'"),
    (["nope = j1"], "joint", "no joint named 'nope'"),
    (["fixed = j1"], "joint", "does not move"),
    (["j1 = fixed"], "source", "does not move"),
    (["j1 = j1"], "source", "coupled to itself"),
    (["j1 = j0", "j1 = 2 * j2"], "joint", "already coupled by param: couplings[0]"),
    (["j1 = j2", "j2 = j3", "j3 = j1"], "source", "cycle: j1 <- j2 <- j3 <- j1"),
])
def test_refusals(rules, key, message):
    with pytest.raises(CouplingError) as err:
        compiled(rules)
    assert err.value.key == key and message in str(err.value)
    assert err.value.file == "param" and err.value.entry.startswith("couplings[")


# ----------------------------------------------------------------- in the kinematics

@pytest.mark.slow
@pytest.mark.parametrize("q", [0.0, 0.37, -0.9, 1.5])
def test_parallelogram_couplings_keep_the_loop_closed(q):
    """Only the pitch joint set: the couplings give front = q and bottom = -q (through the
    front joint), the loop residual is 0 and the bottom link is the back link's tip, unrotated;
    a published value of a coupled joint is overwritten (the coupling wins)."""
    kin = Kinematics(world(), PARALLELOGRAM_COUPLINGS)
    assert kin.coupled.tolist() == [False, True, True, False]
    assert kin.needs_position.tolist() == [True, False, False, False]
    buf = run(kin, {"yaw link-pitch back link": q, "yaw link-pitch front link": 5.0})
    assert buf.q.tolist() == [q, q, -q, 0.0]
    np.testing.assert_allclose(buf.closure_residuals, [[0.0, 0.0]], atol=1e-15)
    np.testing.assert_allclose(buf.body_R[3], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(buf.body_t[3], [-0.3 * math.sin(q), 0.3 * math.cos(q), 0.0], atol=1e-15)


def test_wrong_coupling_shows_in_the_residual():
    """The front link coupled with multiplier 1.1 instead of 1: at pitch q it is 0.1 q off, so the
    closure pivots are the chord 2 * 0.3 * sin(0.1 q / 2) apart."""
    kin = Kinematics(world(), ["yaw link-pitch front link = 1.1 * yaw link-pitch back link",
                               "pitch back link-pitch bottom link = -1 * yaw link-pitch back link"])
    buf = run(kin, {"yaw link-pitch back link": 0.5})
    assert buf.closure_residuals[0, 0] == pytest.approx(2 * 0.3 * math.sin(0.05 / 2), rel=1e-9)


def test_names_in_any_accepted_spelling_and_errors_from_the_model():
    """Couplings name joints as written (spaces), stripped, or qualified; an unknown name is
    refused naming the rule's entry and the key."""
    for source in ("yaw link-pitch back link", "yawlink-pitchbacklink", "/psm_like/yawlink-pitchbacklink"):
        kin = Kinematics(world(), [f"pitchfrontlink-pitchbottomlink = {source}"])
        assert kin.couplings[0].source == source and kin.coupled[3]
    with pytest.raises(CouplingError) as err:
        Kinematics(world(), ["pitch front link-pitch bottom link = yaw link-pitch bak link"])
    assert (err.value.entry, err.value.key) == ("couplings[0]", "source")
    assert "did you mean" in str(err.value)
