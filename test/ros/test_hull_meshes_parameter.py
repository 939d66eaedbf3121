"""The node's ``hull_meshes`` parameter (in process): read-only and described like the file
parameters; the AMBF PSM bodies it names are monitored as hulls, the others as their concave
meshes; a pattern that matches no body is one warning through the ROS log, the node runs on."""

from __future__ import annotations

import pytest

pytest.importorskip("rclpy", reason="ROS 2 not importable: run via `make test`")
from conftest import REPO  # noqa: E402
from ros_harness import NodeInProcess, domain, peer  # noqa: E402,F401  (fixtures)

from ambf_collision.ros.node_parameters import PARAMETERS  # noqa: E402

PSM = str(REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
          / "blender-psm.yaml")


def _kinds(model) -> dict:
    return {i.body.rsplit("/", 1)[-1]: i.kind for i in model.shape_info}


def test_hull_meshes_makes_the_listed_psm_bodies_hulls_and_is_read_only(peer):
    node = NodeInProcess(peer, {"adf_files": [PSM],
                                "hull_meshes": ["toolpitchlink", "/ambf/env/psm/yaw*"]})
    try:
        kinds = _kinds(node.node.model)
        assert kinds["toolpitchlink"] == kinds["yawlink"] == "convex"
        assert {v for k, v in kinds.items() if k not in ("toolpitchlink", "yawlink")} == {"mesh"}
        d = node.node.describe_parameter("hull_meshes")
        assert d.read_only and d.description == PARAMETERS["hull_meshes"].describe()
        from rclpy.parameter import Parameter
        result = node.node.set_parameters([Parameter("hull_meshes", value=["baselink"])])[0]
        assert not result.successful
        assert node.node.get_parameter("hull_meshes").value == ["toolpitchlink", "/ambf/env/psm/yaw*"]
    finally:
        node.stop()


def test_hull_meshes_default_keeps_every_psm_mesh_concave(peer):
    node = NodeInProcess(peer, {"adf_files": [PSM]})
    try:
        assert set(_kinds(node.node.model).values()) == {"mesh"}
    finally:
        node.stop()


def test_hull_meshes_pattern_matching_nothing_is_warned_through_the_ros_log(peer, capfd):
    node = NodeInProcess(peer, {"adf_files": [PSM], "hull_meshes": ["no_such_link"]}, capfd=capfd)
    try:
        assert set(_kinds(node.node.model).values()) == {"mesh"}
    finally:
        code, out, err = node.stop()
    lines = [x for x in (out + err).splitlines() if "'no_such_link' matches no body" in x]
    assert len(lines) == 1 and lines[0].startswith("[WARN]"), out + err
