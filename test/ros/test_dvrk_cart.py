"""The dVRK patient cart (ambf_collision/ros/dvrk_cart.py, config/dvrk_cart.yaml) in-process.

Expectations: the parameters written out by hand for the chosen arms; the ports named in the
cart file's own comment (each arm's remote centre of motion, its base link, lands on its port);
the same body poses from a real dVRK's CRTK joint names as from AMBF's qualified names; the
couplings' hand-derived positions; bad cart files refused naming file, entry and key.
AMBF's PSM and ECM files are the copies under test/model/adf_models/ambf (SOURCES.md).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from conftest import REPO

from ambf_collision.model import Model
from ambf_collision.monitor.monitor import CollisionMonitor
from ambf_collision.ros.dvrk_cart import (CartError, chosen_arms, coupling_rules, load_cart,
                                          monitor_parameters)

ROBOTS = REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
CART = REPO / "config" / "dvrk_cart.yaml"
# the ports of the cart file's comment (m): where each arm's remote centre of motion is placed
PORTS = {"PSM1": (0.08, 0.0, 0.0), "PSM2": (-0.08, 0.0, 0.0), "PSM3": (0.06, -0.10, 0.0),
         "ECM": (0.0, 0.10, 0.0)}
PSM_CRTK = ["outer_yaw", "outer_pitch", "outer_insertion", "outer_roll", "outer_wrist_pitch",
            "outer_wrist_yaw"]
PSM_AMBF = ["base link-yaw link", "yaw link-pitch back link", "pitch end link-main insertion link",
            "main insertion link-tool roll link", "tool roll link-tool pitch link",
            "tool pitch link-tool gripper1 link"]


def _rz(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


@pytest.fixture(scope="module")
def cart():
    return load_cart(CART)


@pytest.fixture(scope="module")
def cart_model(cart):
    """The whole cart from AMBF's files, placed by the cart file's static placements."""
    params = monitor_parameters(cart, "PSM1,PSM2,PSM3,ECM", str(ROBOTS))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the PSM's open and split meshes (test_mesh_robots.py)
        model = Model.from_files(params["adf_files"], namespaces=params["adf_namespaces"],
                                 couplings=params["couplings"], hull_meshes=["*"])
    poses = []
    for arm in cart.arms.values():
        kind, xyz, rpy = arm.placement
        assert kind == "static" and rpy[:2] == (0.0, 0.0)
        poses.append((_rz(rpy[2]), np.array(xyz)))
    return model, params, poses


def test_parameters_of_three_psms_and_the_ecm(cart):
    p = monitor_parameters(cart, "ECM, PSM2,PSM1", str(ROBOTS))
    # the cart's order, whatever the argument's
    assert p["adf_files"] == [str(ROBOTS / "blender-psm.yaml")] * 2 + [str(ROBOTS / "blender-ecm.yaml")]
    assert p["adf_namespaces"] == ["/PSM1/", "/PSM2/", "/ECM/"]
    assert p["root_frames"] == ["PSM1_base", "PSM2_base", "ECM_base"]
    assert p["joint_state_topics"] == ["/PSM1/measured_js", "/PSM2/measured_js", "/ECM/measured_js"]
    assert p["joint_state_files"] == [0, 1, 2]
    assert p["world_frame"] == "world"
    # the PSM's six and the ECM's two names that differ ('outer_yaw' and 'outer_pitch' once)
    assert len(p["joint_aliases"]) == 8 and len(set(p["joint_aliases"])) == 8
    assert "insertion=pitch end link-main insertion link" in p["joint_aliases"]
    # 4 parallelogram couplings + the second jaw per PSM, 4 for the ECM, each arm's own names
    assert len(p["couplings"]) == 5 + 5 + 4
    assert ("/ECM/pitch bottom link-pitch end link = 1.0 * /ECM/yaw link-pitch back link + 0.0075"
            in p["couplings"])
    assert ("/PSM2/tool pitch link-tool gripper2 link = -1.0 * /PSM2/tool pitch link-tool "
            "gripper1 link" in p["couplings"])


def test_a_negative_offset_is_written_as_a_subtraction():
    rules = coupling_rules(["b = 2 * a - 0.25"], "/X/")
    assert rules == ["/X/b = 2.0 * /X/a - 0.25"]


def test_each_arm_s_remote_centre_of_motion_is_on_its_port(cart_model):
    model, _, poses = cart_model
    data = model.create_data()
    result = model.evaluate(data, root_poses=poses)
    bodies = result.body_poses()
    for arm, port in PORTS.items():
        np.testing.assert_allclose(bodies[f"/{arm}/baselink"][0], port, atol=5e-5)
    # one world: the arms see each other (no pair within one arm: AMBF's files ignore
    # inter-collision), none touching at the zero pose
    arms = {name.split("/")[1] for pair in model.pair_bodies
            for name in (model.body_names[pair[0]], model.body_names[pair[1]])}
    assert arms == set(PORTS)
    assert all(model.body_names[a].split("/")[1] != model.body_names[b].split("/")[1]
               for a, b in model.pair_bodies)
    assert result.min_distance > 0.0


def test_crtk_names_pose_each_arm_as_ambf_s_names_do(cart_model):
    """A real dVRK's /PSM2/measured_js (CRTK names) through the monitor's aliases, against
    the same values set by AMBF's qualified names on the model directly."""
    model, params, poses = cart_model
    q = [0.3, -0.2, 0.12, 0.7, -0.4, 0.25]
    monitor = CollisionMonitor(model, joint_sources=params["joint_state_files"],
                               joint_aliases=params["joint_aliases"])
    merger = monitor.merger
    ok, why = merger.update(PSM_CRTK, q, 1.0, 1.0, source=1)
    assert ok, why
    expected = np.zeros(len(model.joint_names))
    for name, value in zip(PSM_AMBF, q):
        expected[model.joint_names.index("/PSM2/" + name.replace(" ", ""))] = value
    np.testing.assert_array_equal(merger.positions, expected)
    # the couplings: the parallelogram follows the pitch, the second jaw mirrors the first
    data = model.create_data()
    model.set_joint_positions(data, model.joint_names, merger.positions)
    model.evaluate(data, root_poses=poses)
    position = dict(zip(model.joint_names, data.q))
    assert position["/PSM2/yawlink-pitchfrontlink"] == -0.2
    assert position["/PSM2/pitchbacklink-pitchbottomlink"] == 0.2
    assert position["/PSM2/toolpitchlink-toolgripper2link"] == -0.25
    # a name no alias gives (the jaw comes on its own topic, /PSM2/jaw/measured_js): refused
    # by name, nothing changed
    ok, why = merger.update(["outer_yaw", "jaw"], [0.0, 0.1], 1.0, 1.0, source=1)
    assert not ok and "jaw" in why
    np.testing.assert_array_equal(merger.positions, expected)


def test_nothing_is_evaluated_until_every_chosen_arm_has_published(cart_model):
    """The cart's monitor requires each arm's actuated joints: with PSM1, PSM3 and the ECM
    publishing and PSM2 silent, the status is NO_JOINT_STATE naming PSM2's joints (PSM2 at
    its ADF pose would look clear when it is not); PSM2's first message makes it OK."""
    from ambf_collision.monitor.config import STATUS_NO_JOINT_STATE, STATUS_OK

    model, params, poses = cart_model
    aliases = params["joint_aliases"]
    assert len(params["required_joints"]) == 3 * 6 + 4
    assert "/ECM/maininsertionlink-toollink" in params["required_joints"]
    monitor = CollisionMonitor(model, joint_sources=params["joint_state_files"],
                               joint_aliases=aliases, required_joints=params["required_joints"])
    ecm = ["outer_yaw", "outer_pitch", "insertion", "outer_roll"]
    for source, names in ((0, PSM_CRTK), (2, PSM_CRTK), (3, ecm)):
        ok, why = monitor.on_joint_state(names, [0.0] * len(names), 1.0, 1.0, source=source)
        assert ok, why
    out = monitor.step(1.0, root_poses=poses)
    assert out.status == STATUS_NO_JOINT_STATE and not out.evaluated
    assert "/PSM2/baselink-yawlink" in out.reason and "/PSM1/" not in out.reason
    ok, why = monitor.on_joint_state(PSM_CRTK, [0.0] * 6, 1.1, 1.1, source=1)
    assert ok, why
    out = monitor.step(1.1, root_poses=poses)
    assert out.status == STATUS_OK and out.evaluated and out.pairs_checked == len(model.pairs)


@pytest.mark.parametrize("text, words", [
    ("kinds: {PSM: {adf: a.yaml}}\narms: {PSM1: {kind: ECM, measured_js: /x, base_frame: b}}",
     "arms.PSM1: kind: 'ECM' is not one of kinds"),
    ("kinds: {PSM: {adf: a.yaml}}\narms: {PSM1: {kind: PSM, base_frame: b}}",
     "arms.PSM1: measured_js: must be a non-empty string"),
    ("kinds: {PSM: {adf: a.yaml}}\narms: {PSM1: {kind: PSM, measured_js: /x, base_frame: b, "
     "placement: {xyz: [0, 0, .nan]}}}", "arms.PSM1: placement.xyz: must be three finite numbers"),
    ("kinds: {PSM: {adf: a.yaml}}\narms: {PSM1: {kind: PSM, measured_js: /x, base_frame: b, "
     "placement: somewhere}}", "arms.PSM1: placement: must be"),
    ("kinds: {PSM: {adf: a.yaml, aliases: outer_yaw}}\narms: {}", "kinds.PSM: aliases: must be"),
    ("kinds: {PSM: {adf: a.yaml}}\narms: {}", "arms: no arm"),
    ("[1, 2]", "must be a mapping"),
])
def test_bad_cart_files_name_file_entry_and_key(tmp_path, text, words):
    path = tmp_path / "cart.yaml"
    path.write_text(text)
    with pytest.raises(CartError, match="cart.yaml") as err:
        load_cart(path)
    assert words in str(err.value)


def test_unknown_arms_and_missing_files_are_named(cart, tmp_path):
    with pytest.raises(CartError, match="PSM4 not among the cart's arms"):
        chosen_arms(cart, "PSM1,PSM4")
    with pytest.raises(CartError, match="none not among"):
        chosen_arms(cart, " , ")
    with pytest.raises(CartError, match=r"kinds.PSM: adf: 'blender-psm.yaml' not found .*ambf_models"):
        monitor_parameters(cart, "PSM1", str(tmp_path))
    # a psm_file override replaces the kind's file
    p = monitor_parameters(cart, "PSM3", str(tmp_path), {"PSM": str(ROBOTS / "blender-psm.yaml")})
    assert p["adf_files"] == [str(ROBOTS / "blender-psm.yaml")]
