"""Launch files, the parameter files and the RViz config, read as files.

The files compile, name only config files that exist and executables the package installs,
declare the documented arguments; config/*.yaml are valid ROS 2 parameter files under `/**`
(so that a namespaced node gets them), config/demo.yaml's files exist and load, and the RViz
config shows the markers in the world frame. generate_launch_description() runs with the real
`launch` (a ROS 2 distribution's, or the one `make test` builds from ../shared/ros2-src); the
launch files running a real graph are in test_launch_graph.py.
"""

from __future__ import annotations

import ast
import importlib.util
import py_compile
import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO

pytestmark = pytest.mark.launch

LAUNCH_FILES = sorted((REPO / "launch").glob("*.launch.py"))
DEMO_PARAMS = REPO / "config" / "demo.yaml"


def _installed_programs() -> set:
    text = (REPO / "CMakeLists.txt").read_text()
    m = re.search(r"install\(PROGRAMS([^)]*)DESTINATION lib/\$\{PROJECT_NAME\}\)", text, re.S)
    assert m, "CMakeLists.txt installs no programs into lib/ambf_collision"
    return {Path(p).name for p in m.group(1).split()}


def _calls(tree, name):
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            if (isinstance(f, ast.Name) and f.id == name) or (isinstance(f, ast.Attribute) and f.attr == name):
                yield node


def _kw(call, key):
    for k in call.keywords:
        if k.arg == key and isinstance(k.value, ast.Constant):
            return k.value.value
    return None


def test_both_launch_files_exist():
    names = {p.name for p in LAUNCH_FILES}
    assert {"collision_monitor.launch.py", "demo.launch.py"} <= names


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_launch_file_compiles_and_names_existing_things(path, tmp_path):
    py_compile.compile(str(path), cfile=str(tmp_path / "x.pyc"), doraise=True)
    tree = ast.parse(path.read_text(), filename=str(path))
    assert any(isinstance(n, ast.FunctionDef) and n.name == "generate_launch_description"
               for n in tree.body)
    programs = _installed_programs()
    nodes = list(_calls(tree, "Node"))
    assert nodes, "no Node action"
    for call in nodes:
        if _kw(call, "package") == "ambf_collision":
            exe = _kw(call, "executable")
            assert exe in programs, f"{path.name}: executable {exe!r} is not installed"
            assert (REPO / "scripts" / exe).exists()
    # every os.path.join(share, "config", <file>) names a file of config/
    configs = [c for c in _calls(tree, "join")
               if len(c.args) == 3 and isinstance(c.args[1], ast.Constant) and c.args[1].value == "config"]
    assert configs
    for c in configs:
        assert (REPO / "config" / c.args[2].value).is_file(), c.args[2].value


@pytest.mark.parametrize("path", LAUNCH_FILES, ids=lambda p: p.name)
def test_generate_launch_description(path):
    pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
    from ros_harness import require_module

    require_module("launch")
    require_module("launch_ros")
    spec = importlib.util.spec_from_file_location(path.stem.replace(".", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    ld = mod.generate_launch_description()
    assert len(ld.entities) >= 3
    arguments = {a.name for a in ld.get_launch_arguments()}
    if path.name == "collision_monitor.launch.py":
        assert {"namespace", "adf_files", "probe_files", "config", "joint_states", "rviz",
                "use_sim_time"} <= arguments
    else:
        assert "rviz" in arguments
    # RViz (when asked for) shows the package's own view of the markers
    rviz = [n for n in ld.entities if getattr(n, "node_executable", None) == "rviz2"]
    assert len(rviz) == 1
    assert any("collision_monitor.rviz" in getattr(x, "text", "") for a in rviz[0].cmd for x in a)


def test_the_launch_files_rviz_view_is_a_config_file():
    tree = ast.parse((REPO / "ambf_collision" / "ros" / "launch_parts.py").read_text())
    views = [c.args[2].value for c in _calls(tree, "join") if len(c.args) == 3]
    assert views == ["collision_monitor.rviz"] and (REPO / "config" / views[0]).is_file()


def _is_param_value(v) -> bool:
    if isinstance(v, (bool, int, float, str)):
        return True
    if isinstance(v, list):
        return len({type(x) for x in v}) <= 1 and all(isinstance(x, (bool, int, float, str)) for x in v)
    return False


@pytest.mark.parametrize("name", ["demo.yaml", "collision_monitor.yaml", "dvrk.yaml"])
def test_parameter_files_are_valid_and_apply_under_any_namespace(name):
    """`/**` (not `collision_monitor:`): under PushRosNamespace('psm1') the node is
    /psm1/collision_monitor and a `collision_monitor:` key no longer matches (issue 12 #2)."""
    doc = yaml.safe_load((REPO / "config" / name).read_text())
    assert isinstance(doc, dict) and list(doc) == ["/**"]
    for node, entry in doc.items():
        assert set(entry) == {"ros__parameters"}, node
        for key, value in entry["ros__parameters"].items():
            assert _is_param_value(value), f"{node}.{key}: {value!r} is not a ROS 2 parameter value"


def test_launch_default_config_is_the_generic_one_without_probes():
    """The launch file's default config names no probe file, so that it starts for any robot
    (issue 12 #1: demo.yaml's probes name the demo's 'fingertip')."""
    text = (REPO / "launch" / "collision_monitor.launch.py").read_text()
    assert 'os.path.join(share, "config", "collision_monitor.yaml")' in text
    params = yaml.safe_load((REPO / "config" / "collision_monitor.yaml").read_text())
    assert params["/**"]["ros__parameters"]["probe_files"] == [""]
    assert params["/**"]["ros__parameters"]["adf_files"] == [""]


def test_demo_params_is_a_valid_ros2_parameter_file():
    doc = yaml.safe_load(DEMO_PARAMS.read_text())
    params = doc["/**"]["ros__parameters"]
    assert params["world_frame"] == "world"
    assert isinstance(params["report_distance"], float) and params["report_distance"] > 0
    assert params["adf_files"] and params["probe_files"]


def test_demo_params_files_resolve_and_load(tmp_path, monkeypatch):
    from ambf_collision.model import Model
    from ambf_collision.ros.paths import resolve_package_path
    from ambf_collision.probes import load_probe_file

    params = yaml.safe_load(DEMO_PARAMS.read_text())["/**"]["ros__parameters"]
    # as installed: relative to the share folder (here: the repository holds the same tree),
    # from an unrelated current directory
    monkeypatch.chdir(tmp_path)
    adf = [resolve_package_path(p, [tmp_path, REPO], must_exist=True) for p in params["adf_files"]]
    probes = [resolve_package_path(p, [tmp_path, REPO], must_exist=True) for p in params["probe_files"]]
    model = Model.from_files(adf)
    assert "/ambf/env/fingertip" in model.body_names
    specs = [s for p in probes for s in load_probe_file(p, model.body_names)]
    assert specs


def test_resolve_package_path_forms(tmp_path):
    from ambf_collision.ros.paths import resolve_package_path

    (tmp_path / "b").mkdir()
    f = tmp_path / "b" / "x.yaml"
    f.write_text("{}")
    assert resolve_package_path("x.yaml", [tmp_path, tmp_path / "b"]) == str(f)
    assert resolve_package_path(str(f), []) == str(f)
    # missing: the first candidate (so the loader's error names a real path), or a clear error
    assert resolve_package_path("nope.yaml", [tmp_path]) == str(tmp_path / "nope.yaml")
    with pytest.raises(FileNotFoundError, match="nope.yaml.*tried"):
        resolve_package_path("nope.yaml", [tmp_path], must_exist=True)
    with pytest.raises(ValueError):
        resolve_package_path("  ", [tmp_path])
    p = resolve_package_path("package://ambf_collision/examples/demo/demo_arm.yaml")
    assert Path(p).is_file() and Path(p).name == "demo_arm.yaml"


def test_rviz_config_shows_markers_in_world():
    cfg = yaml.safe_load((REPO / "config" / "collision_monitor.rviz").read_text())
    vm = cfg["Visualization Manager"]
    assert vm["Global Options"]["Fixed Frame"] == "world"
    displays = {d["Class"]: d for d in vm["Displays"]}
    assert displays["rviz_default_plugins/MarkerArray"]["Topic"]["Value"] == "/collision_monitor/markers"
    assert "rviz_default_plugins/TF" in displays and "rviz_default_plugins/Grid" in displays


def test_installed_share_and_programs():
    pytest.importorskip("ament_index_python", reason="ament index not importable: run via `make test`")
    from ament_index_python.packages import (PackageNotFoundError, get_package_prefix,
                                             get_package_share_directory)
    try:
        share = Path(get_package_share_directory("ambf_collision"))
        prefix = Path(get_package_prefix("ambf_collision"))
    except PackageNotFoundError:
        pytest.skip("ambf_collision not built/sourced: run via `make test`")
    for rel in ("config/demo.yaml", "config/collision_monitor.rviz", "launch/demo.launch.py",
                "launch/collision_monitor.launch.py", "examples/demo/demo_arm.yaml"):
        assert (share / rel).exists(), f"{rel} not installed into {share}"
    for exe in _installed_programs():
        assert (prefix / "lib" / "ambf_collision" / exe).exists(), exe
