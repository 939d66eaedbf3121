"""Scene assembly (monitor/scene.py): the one path from files to a model and its probes, used by
the node and the CLI. Expectations come from the demo files themselves (its bodies, the probe
file's entries) and from hand-written ADF files."""

from __future__ import annotations

import math

import pytest
import yaml
from conftest import DEMO_ARM, DEMO_PROBES

from ambf_collision.monitor.scene import EmptyModel, load_scene


def _sphere_file(path, name="ball", x=0.0, extra=None):
    body = {"name": name, "collision shape": "SPHERE", "collision geometry": {"radius": 0.1},
            "location": {"position": {"x": x, "y": 0.0, "z": 0.0},
                         "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}}
    doc = {"bodies": [f"BODY {name}"], f"BODY {name}": body}
    doc.update(extra or {})
    path.write_text(yaml.safe_dump(doc))
    return path


def test_demo_scene_has_the_model_and_every_probe_of_the_probe_file():
    scene = load_scene([DEMO_ARM], [DEMO_PROBES])
    assert not scene.empty and scene.adf_paths == [str(DEMO_ARM)]
    assert "/ambf/env/fingertip" in scene.model.body_names
    doc = yaml.safe_load(DEMO_PROBES.read_text())
    expected = len(doc.get("probes", [])) + sum(
        p["rows"] * p["cols"] for p in doc.get("patches", []))
    assert scene.probe_count() == expected and scene.probes is not None
    data = scene.model.create_data()
    result = scene.model.evaluate(data)
    probes = scene.probes(scene.model, data, result)
    assert len(probes.depth) == expected


def test_no_adf_file_is_an_empty_scene():
    scene = load_scene([])
    assert scene.empty and isinstance(scene.model, EmptyModel) and scene.probes is None
    result = scene.model.evaluate(scene.model.create_data())
    assert result.pairs_checked == 0 and result.min_distance == math.inf


def test_paths_go_through_resolve(tmp_path):
    f = _sphere_file(tmp_path / "ball.yaml")
    seen = []

    def resolve(p):
        seen.append(p)
        return str(tmp_path / p.replace("pkg://", ""))

    scene = load_scene(["pkg://ball.yaml"], resolve=resolve)
    assert seen == ["pkg://ball.yaml"] and scene.adf_paths == [str(f)]


def test_overrides_reach_the_model(tmp_path):
    a = _sphere_file(tmp_path / "a.yaml", "ball_a", extra={"namespace": "/a/"})
    b = _sphere_file(tmp_path / "b.yaml", "ball_b", x=0.5, extra={"namespace": "/b/"})
    assert len(load_scene([a, b]).model.pairs) == 1
    scene = load_scene([a, b], ignore_pairs=["ball_a:ball_b"])
    assert len(scene.model.pairs) == 0


def test_loading_warnings_are_collected_one_line_each(tmp_path):
    f = _sphere_file(tmp_path / "w.yaml")
    doc = yaml.safe_load(f.read_text())
    doc["bodies"].append("BODY shell")
    doc["BODY shell"] = {"name": "shell", "mesh": "shell.xyz",
                         "location": {"position": {"x": 1.0, "y": 0.0, "z": 0.0},
                                      "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}}
    (tmp_path / "shell.xyz").write_text("x")
    f.write_text(yaml.safe_dump(doc))
    scene = load_scene([f])
    assert len(scene.warnings) == 1
    assert str(f) in scene.warnings[0] and "BODY shell" in scene.warnings[0]
    assert "\n" not in scene.warnings[0]


def test_bad_files_raise_value_errors_naming_the_file(tmp_path):
    bad = _sphere_file(tmp_path / "bad.yaml", "x")
    bad.write_text(bad.read_text().replace("radius: 0.1", "radius: abc"))
    with pytest.raises(ValueError, match="bad.yaml.*BODY x.*radius"):
        load_scene([bad])
    with pytest.raises(ValueError, match="missing_probes.yaml: cannot read"):
        load_scene([DEMO_ARM], [tmp_path / "missing_probes.yaml"])
    with pytest.raises(ValueError, match="namespaces: 2 entries for 1"):
        load_scene([DEMO_ARM], namespaces=["/a/", "/b/"])
    with pytest.raises(ValueError, match="couplings given without any ADF file"):
        load_scene([], couplings=["a = 1.0 * b"])


def test_hull_meshes_reach_the_model_and_warn_without_files():
    """``load_scene(hull_meshes=...)``: the AMBF PSM's yaw link (a concave mesh by AMBF's
    default) becomes a hull; patterns without any ADF file are one warning, not an error."""
    from conftest import TEST_DIR
    from ambf_collision.monitor.scene import load_scene
    psm = (TEST_DIR / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
           / "blender-psm.yaml")
    kinds = {i.body.rsplit("/", 1)[-1]: i.kind
             for i in load_scene([str(psm)], hull_meshes=["yawlink"]).model.shape_info}
    assert kinds["yawlink"] == "convex" and kinds["baselink"] == "mesh"
    empty = load_scene([], hull_meshes=["yawlink"])
    assert empty.empty and len(empty.warnings) == 1 and "yawlink" in empty.warnings[0]
