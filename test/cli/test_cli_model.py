"""``ambf-collision pairs`` / ``check``: output formats and clean errors (exit 2, no traceback)."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import EXAMPLES, REPO
from ambf_collision.cli.main import main
needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")
SD = str(EXAMPLES / "ScrewDriverEnv_env.yaml")
G4 = str(EXAMPLES / "gripper4" / "gripper.yaml")
KUKA = str(EXAMPLES / "blender-kuka-tip-sphere.yaml")
FLOOR = str(EXAMPLES / "checkered_floor.yaml")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@needs_examples
def test_pairs_json(capsys):
    code, out, err = run(capsys, "pairs", SD, "--json")
    assert code == 0
    rep = json.loads(out)
    ns = "/ambf/env/ScrewDriverEnv/"
    checked = {frozenset(p) for p in rep["checked"]}
    ignored = {frozenset(x["pair"]): x["reason"] for x in rep["ignored"]}
    assert frozenset((ns + "SDTip1", ns + "Fin1")) in checked
    assert ignored[frozenset((ns + "SDTip2", ns + "Fin1"))] == "no shared collision group"
    assert len(checked) + len(ignored) == 66


@needs_examples
def test_pairs_table_and_overrides(capsys):
    code, out, err = run(capsys, "pairs", G4, "--ignore", "LeftTip:RightTip", "--check", "Wrist:LeftTip")
    assert code == 0
    assert "checked body pairs: 3" in out and "ignored body pairs: 3" in out
    assert "user ignore LeftTip:RightTip" in out and "user check Wrist:LeftTip" in out


@needs_examples
def test_check_json(capsys):
    code, out, err = run(capsys, "check", G4, "--json", "--joint", "Wrist-LeftTip=-0.04",
                         "--joint", "/ambf/env/gripper/Wrist-RightTip=-0.04", "--report-distance", "0.05")
    assert code == 0, err
    rep = json.loads(out)
    assert set(rep) >= {"bodies", "pairs_checked", "min_distance", "contacts"}
    left = rep["bodies"]["/ambf/env/gripper/LeftTip"]
    assert left["position"] == pytest.approx([0.0, -0.035, 0.0], abs=1e-3) and len(left["orientation"]) == 4
    assert rep["pairs_checked"] == 3
    c = rep["contacts"][0]
    assert set(c) == {"body_1", "body_2", "shape_1", "shape_2", "distance", "point_1", "point_2", "position", "normal"}
    assert c["distance"] == pytest.approx(rep["min_distance"])
    (tips,) = [x for x in rep["contacts"] if {x["body_1"], x["body_2"]} == {
        "/ambf/env/gripper/LeftTip", "/ambf/env/gripper/RightTip"}]
    assert tips["distance"] == pytest.approx(0.034, abs=1e-4)
    assert [x["distance"] for x in rep["contacts"]] == sorted(x["distance"] for x in rep["contacts"])


@needs_examples
def test_check_table_warnings_and_null_min(capsys):
    code, out, err = run(capsys, "check", KUKA, "--json")
    assert code == 0 and json.loads(out)["min_distance"] is None
    assert err.count("warning:") == 1 and "link7.STL" in err
    code, out, err = run(capsys, "check", KUKA, FLOOR, "--report-distance", "0.001")
    assert code == 0
    assert "pairs checked: 9" in out and "min distance: 0.000400 m" in out
    assert "contacts below 0.001 m: 1" in out


def _bad_file(tmp_path):
    doc = {"bodies": ["BODY Wrist"], "BODY Wrist": {
        "name": "Wrist", "location": {"position": {"x": 0, "y": 0, "z": 0}, "orientation": {"r": 0, "p": 0, "y": 0}},
        "collision shape": "SPHERE", "collision geometry": {"radius": "abc"}}}
    p = tmp_path / "gripper.yaml"
    p.write_text(yaml.safe_dump(doc))
    return str(p)


@needs_examples
@pytest.mark.parametrize("cmd", ["pairs", "check"])
def test_errors_exit_2_one_line(tmp_path, capsys, cmd):
    bad = _bad_file(tmp_path)
    code, out, err = run(capsys, cmd, bad)
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0
    assert f"{bad}: BODY Wrist: 'collision geometry'.radius: must be a finite number >= 0, got 'abc'" in err
    code, out, err = run(capsys, cmd, G4, "--ignore", "justone")
    assert code == 2 and "--ignore" in err and "justone" in err
    code, out, err = run(capsys, cmd, str(tmp_path / "missing.yaml"))
    assert code == 2 and "missing.yaml" in err


@needs_examples
@pytest.mark.parametrize("arg, text", [("nope=1", "unknown joint 'nope'"), ("Wrist-LeftTip", "NAME=VALUE"),
                                       ("Wrist-LeftTip=abc", "must be a number"), ("Wrist-LeftTip=nan", "finite")])
def test_bad_joint_arguments(capsys, arg, text):
    code, out, err = run(capsys, "check", G4, "--joint", arg)
    assert code == 2 and text in err and out == ""


@needs_examples
def test_ambiguous_joint_hint(tmp_path, capsys):
    other = tmp_path / "g.yaml"
    other.write_text(Path(G4).read_text().replace("/ambf/env/gripper/", "/right/"))
    code, out, err = run(capsys, "check", G4, str(other), "--joint", "Wrist-LeftTip=0.01")
    assert code == 2 and "ambiguous" in err


@pytest.mark.slow
def test_subprocess_no_traceback(tmp_path):
    p = tmp_path / "broken.yaml"
    p.write_text("bodies: [BODY A\n")
    proc = subprocess.run([sys.executable, "-m", "ambf_collision.cli.main", "check", str(p)],
                          capture_output=True, text=True, cwd=REPO)
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and "malformed YAML" in proc.stderr and str(p) in proc.stderr


# ---------------------------------------------------------------- loops and couplings (issue 11 §6)
PARALLELOGRAM = REPO / "test" / "model" / "kin_models" / "parallelogram.yaml"
PARALLELOGRAM_COUPLINGS = REPO / "test" / "model" / "kin_models" / "parallelogram_couplings.yaml"


def test_check_reports_the_loop_residual_by_hand(capsys):
    """Only the pitch joint given (0.4 rad), no couplings: the front link stays at 0, so the
    closure hinge pivots are the chord 2 * 0.3 * sin(0.4 / 2) apart (the front and back links are
    0.3 m long), axes parallel: the loop is reported open, in the table and in JSON."""
    chord = 2 * 0.3 * math.sin(0.4 / 2)
    code, out, err = run(capsys, "check", str(PARALLELOGRAM), "--joint",
                         "yaw link-pitch back link=0.4", "--joint", "pitch back link-pitch bottom link=-0.4",
                         "--json")
    assert code == 0, err
    (loop,) = json.loads(out)["loops"]
    assert loop["joint"] == "/psm_like/pitchfrontlink-pitchbottomlink"
    assert loop["position"] == pytest.approx(chord, rel=1e-12)
    assert loop["angle"] == 0.0 and loop["open"] is True
    code, out, _ = run(capsys, "check", str(PARALLELOGRAM), "--joint", "yaw link-pitch back link=0.4",
                       "--joint", "pitch back link-pitch bottom link=-0.4")
    assert code == 0
    assert "loop-closing joints: 1 (1 open" in out
    assert f"{1e3 * chord:.3f}" in out and "OPEN" in out


@pytest.mark.parametrize("how", ["file", "rule"])
def test_check_with_couplings_closes_the_loop(capsys, how):
    """The same pitch with the parallelogram's couplings (front = pitch, bottom = -front), from
    the YAML file or as rule strings: the loop closes (residual at rounding level)."""
    extra = (["--couplings", str(PARALLELOGRAM_COUPLINGS)] if how == "file" else
             ["--coupling", "yaw link-pitch front link = yaw link-pitch back link",
              "--coupling", "pitch back link-pitch bottom link = -1 * yaw link-pitch front link"])
    code, out, err = run(capsys, "check", str(PARALLELOGRAM), "--joint", "yaw link-pitch back link=0.4",
                         *extra, "--json")
    assert code == 0, err
    (loop,) = json.loads(out)["loops"]
    assert loop["position"] < 1e-15 and loop["angle"] < 1e-15 and loop["open"] is False


def test_check_bad_coupling_is_one_line_exit_2(capsys):
    code, out, err = run(capsys, "check", str(PARALLELOGRAM), "--coupling", "nosuch = 2 * yaw link-pitch back link")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "couplings[0]" in err and "nosuch" in err


def test_the_tool_says_once_when_numba_compiles_and_not_when_nothing_does(capsys, monkeypatch):
    """A cold cache makes the first run wait about a minute: the tool says so once on stderr
    (standard output stays the report). Here the command is swapped for one that compiles two
    versions of a new function (no cache), then for one that calls them again (nothing compiles)."""
    from numba import njit

    from ambf_collision.cli import main as cli_main
    from ambf_collision.cli import model as cli_model

    @njit
    def twice(x):
        return 2 * x

    def compiling(args):
        print(twice(1) + twice(1.5))
        return 0

    monkeypatch.setattr(cli_model, "run_pairs", compiling)
    assert cli_main.main(["pairs", "any.yaml"]) == 0
    out, err = capsys.readouterr()
    assert out == "5.0\n" and err == cli_main.COMPILING + "\n"
    assert cli_main.main(["pairs", "any.yaml"]) == 0
    out, err = capsys.readouterr()
    assert out == "5.0\n" and err == ""


PSM = str(REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
          / "blender-psm.yaml")


def _kinds(model) -> dict:
    return {i.body.rsplit("/", 1)[-1]: i.kind for i in model.shape_info}


@pytest.mark.parametrize("command", ["pairs", "check"])
def test_hull_meshes_option_makes_the_listed_psm_bodies_hulls(command):
    """``--hull-meshes`` (repeatable, on every subcommand that loads ADF files): the PSM bodies
    it names, plain or by pattern, are monitored as hulls (kind ``convex``), the others as
    AMBF's concave meshes (``mesh``); nothing is warned when every pattern matches."""
    from ambf_collision.cli.main import build_parser
    from ambf_collision.cli.model import build_model
    args = build_parser().parse_args([command, PSM, "--hull-meshes", "toolpitchlink",
                                      "--hull-meshes", "/ambf/env/psm/pitch*link"])
    model = build_model(args)
    kinds = _kinds(model)
    assert kinds["toolpitchlink"] == "convex"
    assert {k for k, v in kinds.items() if k.startswith("pitch")} == {
        "pitchbacklink", "pitchbottomlink", "pitchendlink", "pitchfrontlink", "pitchtoplink"}
    assert all(v == "convex" for k, v in kinds.items() if k.startswith("pitch"))
    assert kinds["yawlink"] == kinds["baselink"] == kinds["toolgripper1link"] == "mesh"
    assert _kinds(build_model(build_parser().parse_args([command, PSM])))["toolpitchlink"] == "mesh"


def test_hull_meshes_pattern_matching_nothing_is_warned(capsys):
    """A ``--hull-meshes`` pattern that names no body with a concave mesh: one warning on
    stderr quoting it, the report as without it (exit 0)."""
    code, out, err = run(capsys, "pairs", PSM, "--json", "--hull-meshes", "no_such_link*")
    assert code == 0
    assert "'no_such_link*' matches no body with a concave mesh" in err
    plain_code, plain_out, _ = run(capsys, "pairs", PSM, "--json")
    assert plain_code == 0 and json.loads(out) == json.loads(plain_out)


def test_hull_meshes_in_help(capsys):
    for command in ("pairs", "check"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "--hull-meshes PATTERN" in capsys.readouterr().out
