"""AMBF's own files load: the eight example files (../shared/adf-examples) and, when
``AMBF_MODELS`` names a copy of AMBF's ``ambf_models/descriptions/multi-bodies`` folder, every ADF
file in it and every file of AMBF's ``launch.yaml`` list, with at most AdfWarnings.

Oracle: each file read again here with plain PyYAML; every body sits on its own ``location``
(position; orientation as Rz(y) Ry(p) Rx(r) written out here), origin when it has none; names
are AMBF's (spaces removed)."""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES

from ambf_collision.model.adf import AdfError, AdfWarning, load_adf_files

AMBF_MODELS = os.environ.get("AMBF_MODELS", "")
_AMBF = Path(AMBF_MODELS) if AMBF_MODELS else None
_SKIP_AMBF = "AMBF_MODELS is not set (path to AMBF's ambf_models/descriptions/multi-bodies)"
AMBF_FILES = sorted(str(p.relative_to(_AMBF)) for p in _AMBF.rglob("*.yaml")) if _AMBF and _AMBF.is_dir() else []
LAUNCH = _AMBF.parent / "launch.yaml" if _AMBF else None
LAUNCH_FILES = (yaml.safe_load(LAUNCH.read_text()).get("multibody configs", [])
                if LAUNCH and LAUNCH.is_file() else [])

# Files of AMBF's folder that are not valid YAML (PyYAML and libyaml refuse them).
NOT_YAML = {
    # a stray '}' at line 84: yaml-cpp 0.7 refuses it too ("end of map not found"), so does AMBF
    "puzzles/compound_example.yaml": "malformed YAML at line 84",
    # a flow mapping at column 0 as a block mapping's value (line 36): invalid YAML that
    # yaml-cpp 0.7 accepts; the file lists no rigid bodies (one vehicle of rover_parts.yaml)
    "robots/rover_car/rover_info.yaml": "malformed YAML at line 37",
}
EXAMPLE_FILES = ["ScrewDriverEnv_env.yaml", "blender-kuka-tip-sphere.yaml", "blender-toy-car.yaml",
                 "checkered_floor.yaml", "peg_and_base.yaml", "pr2 gripper.yaml", "puzzle2.yaml",
                 "gripper4/gripper.yaml"]


def rpy(r, p, y):
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return (np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]]) @ np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
            @ np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]]))


def load_and_check(path: Path):
    """Load one file; every warning is an AdfWarning; every body on the file's own location."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        world = load_adf_files([path])
    others = [str(r.message) for r in rec if not isinstance(r.message, AdfWarning)]
    assert others == []
    doc = yaml.safe_load(path.read_text())
    ids = doc.get("bodies") or []
    assert [b.identifier for b in world.bodies] == ids
    for b in world.bodies:
        node = doc[b.identifier]
        assert b.plain_name == str(node.get("name", b.identifier.replace("BODY ", ""))).replace(" ", "")
        loc = node.get("location") or {}
        pos, ori = loc.get("position") or {}, loc.get("orientation") or {}
        np.testing.assert_array_equal(b.t, [float(pos.get(c, 0.0)) for c in "xyz"])
        np.testing.assert_allclose(b.R, rpy(*(float(ori.get(c, 0.0)) for c in "rpy")), atol=1e-15)
        assert len(b.shapes) == len(b.shape_specs)
    for j in world.joints:
        assert world.bodies[j.parent] is not world.bodies[j.child]
        assert j.name == j.original_name.replace(" ", "")
    return world, [r.message for r in rec]


@pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")
@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_files_sit_on_their_locations(name):
    world, _ = load_and_check(EXAMPLES / name)
    assert world.bodies


@pytest.mark.skipif(not AMBF_FILES, reason=_SKIP_AMBF)
@pytest.mark.parametrize("name", AMBF_FILES or [None])
def test_every_ambf_file_loads(name):
    path = _AMBF / name
    if name in NOT_YAML:
        with pytest.raises(AdfError, match=NOT_YAML[name]):
            load_adf_files([path])
        return
    load_and_check(path)


@pytest.mark.skipif(not LAUNCH_FILES, reason=_SKIP_AMBF + " or has no ../launch.yaml")
@pytest.mark.parametrize("name", LAUNCH_FILES or [None])
def test_every_file_of_ambf_launch_list_loads(name):
    world, _ = load_and_check(LAUNCH.parent / name)
    assert world.bodies
