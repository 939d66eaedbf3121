"""`ambf-collision distance FILE.json`: output and bad-input handling (exit 2, named field)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from ambf_collision.monitor.jit import package_root

pytestmark = pytest.mark.slow  # a fresh interpreter per test: ~4 s each under load

ROOT = REPO


def run(tmp_path, doc):
    """The CLI in a fresh process on the package this one imported (the installed one under
    `make test`, whose kernels the install step compiled), from ``tmp_path``: from the source
    folder, ``-m`` would import the sources, whose cache a fresh clone has not compiled."""
    f = tmp_path / "req.json"
    f.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    if (ROOT / "ambf_collision" / "cli" / "model.py").exists():
        cmd = [sys.executable, "-m", "ambf_collision.cli.main", "distance", str(f)]
    else:  # cli.py imports cli_model, not there yet: drive the subcommand's own parser
        code = ("import argparse,sys;from ambf_collision.cli import distance as c;"
                "p=argparse.ArgumentParser();c.register(p.add_subparsers());"
                "a=p.parse_args(sys.argv[1:]);sys.exit(a.func(a))")
        cmd = [sys.executable, "-c", code, "distance", str(f)]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [package_root(),
                                                                    os.environ.get("PYTHONPATH")])))
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_all_pairs_by_default(tmp_path):
    r = run(tmp_path, {"shapes": [{"sphere": {"center": [0, 0, 0], "radius": 0.5}},
                                  {"capsule": {"a": [2, 0, 0], "b": [2, 1, 0], "radius": 0.25}},
                                  {"plane": {"normal": [0, 0, 1], "offset": -1}}]})
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [(o["i"], o["j"]) for o in out] == [(0, 1), (0, 2), (1, 2)]
    assert out[0]["distance"] == pytest.approx(1.25)
    assert out[0]["normal"] == pytest.approx([1, 0, 0])
    assert out[1]["distance"] == pytest.approx(0.5)      # sphere bottom z=-0.5, plane z=-1
    assert out[2]["point_2"][2] == pytest.approx(-1.0)
    assert set(out[0]) == {"i", "j", "distance", "point_1", "point_2", "normal", "position"}


def test_explicit_pairs(tmp_path):
    r = run(tmp_path, {"shapes": [{"sphere": {"center": [0, 0, 0], "radius": 1}},
                                  {"sphere": {"center": [0, 3, 0], "radius": 1}}], "pairs": [[1, 0]]})
    out = json.loads(r.stdout)
    assert len(out) == 1 and out[0]["i"] == 1 and out[0]["normal"] == pytest.approx([0, -1, 0])


@pytest.mark.parametrize("doc, message", [
    ({"shapes": [{"sphere": {"center": [0, 0, 0], "radius": 1}},
                 {"capsule": {"a": [0, 0, 0], "b": [1, 1, 1], "radius": -1}}]},
     "shapes[1].capsule.radius: must be >= 0, got -1.0"),
    ({"shapes": [{"sphere": {"center": [0, 0], "radius": 1}}]}, "shapes[0].sphere.center"),
    ({"shapes": [{"sphere": {"center": [0, 0, 0], "radius": 1}}], "pairs": [[0, 4]]}, "pairs[0]"),
    ("{not json", "invalid JSON"),
])
def test_bad_input_exit_2_no_traceback(tmp_path, doc, message):
    r = run(tmp_path, doc)
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr
