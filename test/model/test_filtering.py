"""AMBF collision filtering (file ignore, groups, joints) and user overrides with precedence."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES
from ambf_collision.model.adf import load_adf_files
from ambf_collision.model.filtering import Overrides, filter_pairs, parse_pair
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")


def load(paths):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files(paths)


def names(w, res):
    checked = {frozenset((w.bodies[i].plain_name, w.bodies[j].plain_name)) for i, j in res.checked}
    ignored = {frozenset((w.bodies[i].plain_name, w.bodies[j].plain_name)): r for i, j, r in res.ignored}
    return checked, ignored


def body(name, groups=None, x=0.0):
    b = {"name": name, "mass": 1.0,
         "location": {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}},
         "collision shape": "SPHERE", "collision geometry": {"radius": 0.1}}
    if groups is not None:
        b["collision groups"] = groups
    return b


def write_file(path, bodies, joints=(), **top):
    doc = {"bodies": [f"BODY {n}" for n, _ in bodies], "joints": [f"JOINT {j['name']}" for j in joints]}
    doc.update(top)
    for n, b in bodies:
        doc[f"BODY {n}"] = b
    for j in joints:
        doc[f"JOINT {j['name']}"] = j
    path.write_text(yaml.safe_dump(doc))
    return path


GROUPS = [("body1", [0]), ("body2", [0, 1]), ("body3", [1, 2]), ("body4", [2])]
EXPECT = {frozenset(p) for p in [("body1", "body2"), ("body2", "body3"), ("body3", "body4")]}


def test_groups_example_one_file(tmp_path):
    p = write_file(tmp_path / "g.yaml", [(n, body(n, g, k)) for k, (n, g) in enumerate(GROUPS)])
    w = load_adf_files(p)
    checked, ignored = names(w, filter_pairs(w))
    assert checked == EXPECT
    assert set(ignored.values()) == {"no shared collision group"} and len(ignored) == 3


def test_groups_example_four_files(tmp_path):
    paths = [write_file(tmp_path / f"{n}.yaml", [(n, body(n, g))]) for n, g in GROUPS]
    w = load_adf_files(paths)
    checked, _ = names(w, filter_pairs(w))
    assert checked == EXPECT


def test_file_ignore_only_within_file_and_groups_never_reenable(tmp_path):
    a = write_file(tmp_path / "a.yaml", [("a1", body("a1", [0])), ("a2", body("a2", [0]))], **{"ignore inter-collision": True})
    b = write_file(tmp_path / "b.yaml", [("b1", body("b1", [0]))], namespace="/b/")
    w = load_adf_files([a, b])
    checked, ignored = names(w, filter_pairs(w))
    assert ignored == {frozenset(("a1", "a2")): "same file ignore inter-collision"}
    assert checked == {frozenset(("a1", "b1")), frozenset(("a2", "b1"))}


def test_joint_ignore_unless_false(tmp_path):
    j1 = {"name": "j1", "parent": "BODY A", "child": "BODY B", "type": "fixed"}
    j2 = {"name": "j2", "parent": "BODY B", "child": "BODY C", "type": "revolute", "ignore inter-collision": False}
    p = write_file(tmp_path / "j.yaml", [(n, body(n)) for n in "ABC"], [j1, j2])
    w = load_adf_files(p)
    checked, ignored = names(w, filter_pairs(w))
    assert ignored == {frozenset("AB"): "joined by joint /ambf/env/j1"}
    assert checked == {frozenset("BC"), frozenset("AC")}


def test_bodies_without_shapes_take_no_part(tmp_path):
    nb = body("N")
    del nb["collision shape"], nb["collision geometry"]
    p = write_file(tmp_path / "n.yaml", [("A", body("A")), ("B", body("B")), ("N", nb)])
    w = load_adf_files(p)
    res = filter_pairs(w)
    assert res.checked.tolist() == [[0, 1]] and res.ignored == []


@needs_examples
def test_kuka_file_ignore_and_floor():
    w = load([EXAMPLES / "blender-kuka-tip-sphere.yaml"])
    res = filter_pairs(w)
    assert res.checked.shape == (0, 2)
    assert len(res.ignored) == 28  # 8 bodies with shapes (link7 has only a missing mesh)
    w = load([EXAMPLES / "blender-kuka-tip-sphere.yaml", EXAMPLES / "checkered_floor.yaml"])
    checked, _ = names(w, filter_pairs(w))
    kuka = {"base", "link1", "link2", "link3", "link4", "link5", "link6", "kuka_tip"}
    assert checked == {frozenset((k, "Plane")) for k in kuka}


@needs_examples
def test_screwdriver_groups_and_joints():
    w = load([EXAMPLES / "ScrewDriverEnv_env.yaml"])
    checked, ignored = names(w, filter_pairs(w))
    assert ignored[frozenset(("SDTip2", "Fin1"))] == "no shared collision group"
    assert ignored[frozenset(("SDTip2", "Fin2"))] == "no shared collision group"
    assert ignored[frozenset(("SDTip1", "SDTip2"))] == "no shared collision group"
    assert frozenset(("SDTip1", "Fin1")) in checked
    assert frozenset(("SDTip2", "Cube_002")) in checked  # [1] vs [0, 1]
    assert ignored[frozenset(("SDShaft", "SDTip1"))] == "joined by joint /ambf/env/ScrewDriverEnv/SDShaft-SDTip1"
    assert frozenset(("SDHandle", "SDTip1")) in checked  # not directly joined
    assert len(checked) + len(ignored) == 12 * 11 // 2


@needs_examples
def test_pr2_and_gripper4_and_car():
    w = load([EXAMPLES / "pr2 gripper.yaml"])
    assert filter_pairs(w).checked.shape == (0, 2)
    w = load([EXAMPLES / "gripper4" / "gripper.yaml"])
    checked, ignored = names(w, filter_pairs(w))
    assert checked == {frozenset(("LeftTip", "RightTip")), frozenset(("LeftTip", "WristVertical")), frozenset(("RightTip", "WristVertical"))}
    w = load([EXAMPLES / "blender-toy-car.yaml"])
    checked, ignored = names(w, filter_pairs(w))  # Chassis has a missing mesh: the 4 wheels only
    assert len(checked) == 6 and not ignored


def test_overrides_precedence(tmp_path):
    j = {"name": "j", "parent": "BODY A", "child": "BODY B", "type": "fixed"}
    p = write_file(tmp_path / "o.yaml", [(n, body(n, [0])) for n in "ABCD"], [j])
    w = load_adf_files(p)
    # user check re-enables a joint-ignored pair; plain and qualified names; either order
    c, i = names(w, filter_pairs(w, Overrides(check=[("B", "/ambf/env/A")])))
    assert frozenset("AB") in c and not i
    # user ignore with a pattern
    c, i = names(w, filter_pairs(w, Overrides(ignore=[("C", "*")])))
    assert {k for k, r in i.items() if r.startswith("user ignore")} == {frozenset("CA"), frozenset("CB"), frozenset("CD")}
    # more exact sides win: check C:D beats ignore C:*
    c, i = names(w, filter_pairs(w, Overrides(ignore=[("C", "*")], check=[("C", "D")])))
    assert frozenset("CD") in c and frozenset("CA") in i
    # and ignore C:D beats check *:*
    c, i = names(w, filter_pairs(w, Overrides(ignore=[("C", "D")], check=[("*", "*")])))
    assert frozenset("CD") in i and frozenset("AB") in c
    # tie between ignore and check: check wins
    c, i = names(w, filter_pairs(w, Overrides(ignore=[("A", "C")], check=[("C", "A")])))
    assert frozenset("AC") in c


def test_parse_pair():
    assert parse_pair(" /ambf/env/A : link* ") == ("/ambf/env/A", "link*")
    for bad in ["A", "A:B:C", ":B", "A:"]:
        with pytest.raises(ValueError, match="pair"):
            parse_pair(bad)


def test_loop_closing_joints_still_filter_their_bodies():
    """The four-bar of kin_models: the loop-closing joint coupler-rocker (not in the spanning
    tree) still makes AMBF ignore the coupler-rocker pair, like the tree joints do their pairs;
    the crank-rocker pair, joined by no joint, is checked (hand-listed from the file)."""
    w = load(Path(__file__).resolve().parent / "kin_models" / "four_bar.yaml")
    checked, ignored = names(w, filter_pairs(w))
    assert ignored == {frozenset(("ground", "crank")): "joined by joint /fourbar/ground-crank",
                       frozenset(("crank", "coupler")): "joined by joint /fourbar/crank-coupler",
                       frozenset(("ground", "rocker")): "joined by joint /fourbar/ground-rocker",
                       frozenset(("coupler", "rocker")): "joined by joint /fourbar/coupler-rocker"}
    assert checked == {frozenset(("ground", "coupler")), frozenset(("crank", "rocker"))}
