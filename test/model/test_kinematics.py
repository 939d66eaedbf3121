"""Kinematics on trees: every example body lands on its own ADF location at q = 0; hand-derived
revolute and prismatic motions; held joints; per-file root poses; joint names; world joint frames;
a per-body reference walk. (Loops and couplings: test_kinematics_loops.py, test_couplings.py.)"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import yaml
from conftest import DEMO_ARM, EXAMPLES

from ambf_collision.geometry.transforms import axis_angle_to_matrix, rpy_to_matrix
from ambf_collision.model.adf import load_adf_files
from ambf_collision.model.kinematics import Kinematics

needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")
NAMES = [
    "ScrewDriverEnv_env.yaml", "blender-kuka-tip-sphere.yaml", "blender-toy-car.yaml",
    "checkered_floor.yaml", "peg_and_base.yaml", "pr2 gripper.yaml", "puzzle2.yaml",
    "gripper4/gripper.yaml",
]


def load(paths, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files(paths, **kw)


def run(kin, q=None, file_poses=None):
    """Fresh buffers, one forward pass: the buffers."""
    F = kin.n_files
    fR = np.broadcast_to(np.eye(3), (F, 3, 3)).copy()
    ft = np.zeros((F, 3))
    for f, (R, t) in (file_poses or {}).items():
        fR[f], ft[f] = R, t
    buf = kin.new_buffers(fR, ft)
    if q is not None:
        buf.q[:] = q
    kin.forward(buf)
    return buf


def poses(kin, q=None, file_poses=None):
    buf = run(kin, q, file_poses)
    return buf.body_R, buf.body_t


def angle_between(R1, R2):
    c = (np.trace(np.swapaxes(R1, -1, -2) @ R2, axis1=-2, axis2=-1) - 1.0) / 2.0
    return np.arccos(np.clip(c, -1.0, 1.0))


def location_of(doc, ident):
    loc = doc[ident]["location"]
    o, p = loc["orientation"], loc["position"]
    return rpy_to_matrix(o["r"], o["p"], o["y"]), np.array([p["x"], p["y"], p["z"]], float)


@needs_examples
@pytest.mark.parametrize("name", NAMES)
def test_zero_position_lands_on_location(name):
    """Posed from the roots through the joints, each body sits on the `location` written in the
    file (read here with plain yaml) within 1 mm and 1 degree."""
    w = load([EXAMPLES / name])
    tree = Kinematics(w)
    R, t = poses(tree)
    doc = yaml.safe_load((EXAMPLES / name).read_text())
    for k, b in enumerate(w.bodies):
        Rl, tl = location_of(doc, b.identifier)
        assert np.linalg.norm(t[k] - tl) < 1e-3, b.name
        assert angle_between(R[k], Rl) < math.radians(1.0), b.name
    # non-trivial: most of these bodies are not roots
    assert tree.n_bodies - len(tree.roots) == len(w.joints)


@needs_examples
def test_zero_position_all_files_together():
    w = load([EXAMPLES / n for n in NAMES])
    tree = Kinematics(w)
    R, t = poses(tree)
    Rl = np.array([b.R for b in w.bodies])
    tl = np.array([b.t for b in w.bodies])
    assert np.max(np.linalg.norm(t - tl, axis=1)) < 1e-3
    assert np.max(angle_between(R, Rl)) < math.radians(1.0)


def _subtree(w, root):
    kids = {root}
    changed = True
    while changed:
        changed = False
        for j in w.joints:
            if j.parent in kids and j.child not in kids:
                kids.add(j.child)
                changed = True
    return kids


@needs_examples
@pytest.mark.parametrize("joint", ["link3-link4", "link1-link2", "link6-link7", "base-link1"])
@pytest.mark.parametrize("q", [0.7, -1.3])
def test_kuka_revolute_rotates_subtree_about_axis_through_pivot(joint, q):
    """A revolute joint at q moves its child's subtree as the rotation by q about the world joint
    axis through the world pivot (both read from the q = 0 pose); everything else stays."""
    w = load([EXAMPLES / "blender-kuka-tip-sphere.yaml"])
    tree = Kinematics(w)
    k = tree.joint_plain_names.index(joint)
    js = w.joints[k]
    R0, t0 = (x.copy() for x in poses(tree))
    qv = np.zeros(tree.n_joints)
    qv[k] = q
    R1, t1 = poses(tree, qv)
    Rp, tp = R0[js.parent], t0[js.parent]
    pivot = Rp @ js.parent_pivot + tp
    axis = Rp @ (js.parent_axis / np.linalg.norm(js.parent_axis))
    G = axis_angle_to_matrix(axis, q)
    moved = _subtree(w, js.child)
    for b in range(tree.n_bodies):
        if b in moved:
            np.testing.assert_allclose(R1[b], G @ R0[b], atol=1e-12)
            np.testing.assert_allclose(t1[b], G @ (t0[b] - pivot) + pivot, atol=1e-12)
        else:
            np.testing.assert_allclose(R1[b], R0[b], atol=0)
            np.testing.assert_allclose(t1[b], t0[b], atol=0)


def _two_body(tmp_path, jtype, axis=(0, 0, 1), pivot=(1.0, 0, 0), offset=0.0, scale=1.0):
    doc = {"bodies": ["BODY A", "BODY B"], "joints": ["JOINT j"]}
    for n, x in (("A", 0.0), ("B", 1.0)):
        doc[f"BODY {n}"] = {"name": n, "location": {"position": {"x": x, "y": 0.0, "z": 0.0},
                                                    "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}}
    doc["BODY A"]["scale"] = scale
    ax = dict(zip("xyz", map(float, axis)))
    doc["JOINT j"] = {"name": "j", "parent": "BODY A", "child": "BODY B", "type": jtype,
                      "parent pivot": dict(zip("xyz", pivot)), "parent axis": ax,
                      "child pivot": {"x": 0.0, "y": 0.0, "z": 0.0}, "child axis": ax, "offset": offset}
    p = tmp_path / "two.yaml"
    p.write_text(yaml.safe_dump(doc))
    return load_adf_files(p)


def test_revolute_by_hand(tmp_path):
    """Child at (1,0,0), hinge about z through (1,0,0): at q = pi/2 the child-frame point (1,0,0)
    is at world (1,1,0) and the child's x axis points along world y."""
    tree = Kinematics(_two_body(tmp_path, "revolute"))
    R, t = poses(tree, np.array([math.pi / 2]))
    np.testing.assert_allclose(R[1] @ [1, 0, 0] + t[1], [1, 1, 0], atol=1e-15)
    np.testing.assert_allclose(R[1][:, 0], [0, 1, 0], atol=1e-15)
    np.testing.assert_allclose(t[0], [0, 0, 0])


def test_pivot_scaled_by_parent_scale(tmp_path):
    """Parent scale 2, pivot (0.5,0,0): the joint sits at (1,0,0) in the parent frame."""
    tree = Kinematics(_two_body(tmp_path, "revolute", pivot=(0.5, 0, 0), scale=2.0))
    R, t = poses(tree, np.array([math.pi / 2]))
    np.testing.assert_allclose(t[1], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(R[1] @ [1, 0, 0] + t[1], [1, 1, 0], atol=1e-15)


def test_revolute_offset_and_antiparallel_axes(tmp_path):
    """Child axis -z against parent axis +z: R(b->a) is a rotation by pi about b x x-hat (= y),
    so at q = 0 the child's z points down; offset pi/2 then turns it about the parent z."""
    doc_w = _two_body(tmp_path, "revolute", offset=math.pi / 2)
    doc_w.joints[0].child_axis = np.array([0.0, 0.0, -1.0])
    tree = Kinematics(doc_w)
    R, t = poses(tree, np.array([0.0]))
    expect = rpy_to_matrix(0, 0, math.pi / 2) @ axis_angle_to_matrix([0, 1.0, 0], math.pi)
    np.testing.assert_allclose(R[1], expect, atol=1e-15)
    np.testing.assert_allclose(R[1][:, 2], [0, 0, -1], atol=1e-15)


def test_prismatic_by_hand(tmp_path):
    tree = Kinematics(_two_body(tmp_path, "prismatic", axis=(0, 1, 0)))
    R, t = poses(tree, np.array([0.25]))
    np.testing.assert_allclose(t[1], [1.0, 0.25, 0.0], atol=1e-15)
    np.testing.assert_allclose(R[1], np.eye(3), atol=1e-15)


@needs_examples
def test_gripper4_prismatic_slides_along_axis():
    """Wrist-LeftTip: parent axis (0,-1,0), Wrist unrotated: LeftTip at (0,-0.075,0) slides to
    (0,-0.125,0) at q = 0.05, orientation unchanged; RightTip (axis +y) to (0,0.125,0)."""
    w = load([EXAMPLES / "gripper4" / "gripper.yaml"])
    tree = Kinematics(w)
    R0, _ = (x.copy() for x in poses(tree))
    q = np.zeros(tree.n_joints)
    q[tree.joint_plain_names.index("Wrist-LeftTip")] = 0.05
    q[tree.joint_plain_names.index("Wrist-RightTip")] = 0.05
    R, t = poses(tree, q)
    names = [b.plain_name for b in w.bodies]
    np.testing.assert_allclose(t[names.index("LeftTip")], [0, -0.125, 0], atol=1e-3)
    np.testing.assert_allclose(t[names.index("RightTip")], [0, 0.125, 0], atol=1e-3)
    np.testing.assert_allclose(R, R0, atol=1e-12)


@needs_examples
def test_p2p_holds_relative_pose_under_root_pose():
    """puzzle2's p2p chain holds the ADF relative pose: moving the file's root pose moves every
    body rigidly, T_world = T_file * T_location."""
    w = load([EXAMPLES / "puzzle2.yaml"])
    tree = Kinematics(w)
    Rf, tf = rpy_to_matrix(0.3, -0.2, 1.1), np.array([0.5, -2.0, 0.25])
    R, t = poses(tree, np.full(tree.n_joints, 0.0), {0: (Rf, tf)})
    for k, b in enumerate(w.bodies):
        np.testing.assert_allclose(t[k], Rf @ b.t + tf, atol=1e-3)
        assert angle_between(R[k], Rf @ b.R) < math.radians(1.0)
    assert "p2p" in tree.joint_types


def test_held_joint_ignores_position(tmp_path):
    tree = Kinematics(_two_body(tmp_path, "cone twist"))
    R, t = poses(tree, np.array([1.0]))
    np.testing.assert_allclose(t[1], [1, 0, 0]) and np.testing.assert_allclose(R[1], np.eye(3))
    assert not tree.movable[0]


@needs_examples
def test_root_pose_per_file_only_moves_that_file():
    w = load([EXAMPLES / "pr2 gripper.yaml", EXAMPLES / "gripper4" / "gripper.yaml"])
    tree = Kinematics(w)
    Rf, tf = rpy_to_matrix(0, 0, math.pi / 2), np.array([0.0, 0.0, 1.0])
    R, t = poses(tree, None, {1: (Rf, tf)})
    for k, b in enumerate(w.bodies):
        expect = Rf @ b.t + tf if b.file_index == 1 else b.t
        np.testing.assert_allclose(t[k], expect, atol=1e-3)


@needs_examples
def test_joint_names_plain_qualified_ambiguous(tmp_path):
    src = (EXAMPLES / "gripper4" / "gripper.yaml").read_text()
    other = tmp_path / "gripper.yaml"
    other.write_text(src.replace("namespace: /ambf/env/gripper/", "namespace: /right/"))
    w = load([EXAMPLES / "gripper4" / "gripper.yaml", other])
    tree = Kinematics(w)
    idx, keep, unknown = tree.joint_indices(["Wrist-LeftTip", "/right/Wrist-LeftTip", "/ambf/env/gripper/Wrist-LeftTip", "nope"])
    assert unknown == ["Wrist-LeftTip", "nope"]
    assert list(keep) == [1, 2]
    assert [tree.joint_names[i] for i in idx] == ["/right/Wrist-LeftTip", "/ambf/env/gripper/Wrist-LeftTip"]
    assert "Wrist-LeftTip" in tree.ambiguous
    w1 = load([EXAMPLES / "gripper4" / "gripper.yaml"])
    idx, _, unknown = Kinematics(w1).joint_indices(["Wrist-LeftTip"])
    assert unknown == [] and len(idx) == 1


def _reference_poses(world, q, file_poses):
    """Independent reference: walk each body up to its root with 3x3 matrices built from the
    joint relation of the module docstring (transforms.py only, no compiled arrays)."""
    from ambf_collision.geometry.transforms import rotation_between

    bodies, joints = world.bodies, world.joints
    parent_joint = {j.child: k for k, j in enumerate(joints)}
    memo = {}

    def pose(b):
        if b in memo:
            return memo[b]
        body = bodies[b]
        k = parent_joint.get(b)
        if k is None:
            Rf, tf = file_poses[body.file_index]
            memo[b] = (Rf @ body.R, Rf @ body.t + tf)
            return memo[b]
        j = joints[k]
        Rp, tp = pose(j.parent)
        pb = bodies[j.parent]
        if j.type in ("revolute", "prismatic", "fixed"):
            a = j.parent_axis / np.linalg.norm(j.parent_axis)
            qk = q[k] if j.type != "fixed" else 0.0
            ang = j.offset + (qk if j.type == "revolute" else 0.0)
            lin = qk if j.type == "prismatic" else 0.0
            Rj = axis_angle_to_matrix(a, ang) @ rotation_between(j.child_axis, j.parent_axis)
            tj = pb.scale * j.parent_pivot + lin * a - Rj @ (body.scale * j.child_pivot)
        else:
            Rj = pb.R.T @ body.R
            tj = pb.R.T @ (body.t - pb.t)
        memo[b] = (Rp @ Rj, Rp @ tj + tp)
        return memo[b]

    return [pose(b) for b in range(len(bodies))]


@needs_examples
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("which", ["examples", "demo"])
def test_forward_matches_per_body_reference_all_examples(which, seed):
    """All example files together (wide levels) and the demo arm (a chain of one-joint levels),
    random joint positions (also on held joints, which must ignore them) and random per-file
    root poses: every body pose equals the independent per-body walk to 1e-12, and
    joint_transforms composes to the same poses."""
    w = load([EXAMPLES / n for n in NAMES] if which == "examples" else [DEMO_ARM])
    tree = Kinematics(w)
    rng = np.random.default_rng(seed)
    q = rng.uniform(-2.0, 2.0, tree.n_joints)
    fp = {f: (rpy_to_matrix(*rng.uniform(-3, 3, 3)), rng.uniform(-1, 1, 3))
          for f in range(tree.n_files)}
    R, t = poses(tree, q, fp)
    ref = _reference_poses(w, q, fp)
    for k, (Rr, tr) in enumerate(ref):
        np.testing.assert_allclose(R[k], Rr, atol=1e-12, err_msg=w.bodies[k].name)
        np.testing.assert_allclose(t[k], tr, atol=1e-12, err_msg=w.bodies[k].name)
    buf = run(tree, q, fp)
    jR, jt = buf.joint_R, buf.joint_t
    for k, j in enumerate(w.joints):
        Rp, tp = ref[j.parent]
        np.testing.assert_allclose(Rp @ jR[k], R[j.child], atol=1e-12)
        np.testing.assert_allclose(Rp @ jt[k] + tp, t[j.child], atol=1e-12)


def test_forward_reuses_buffers_and_repeats_exactly(tmp_path):
    """Two calls with different q then the first q again give bit-identical poses (no state
    leaks between cycles through the reused buffers)."""
    tree = Kinematics(_two_body(tmp_path, "revolute"))
    buf = run(tree, np.array([0.7]))
    a = [buf.body_R.copy(), buf.body_t.copy()]
    buf.q[:] = -1.3
    tree.forward(buf)
    buf.q[:] = 0.7
    tree.forward(buf)
    assert np.array_equal(a[0], buf.body_R) and np.array_equal(a[1], buf.body_t)


@needs_examples
@pytest.mark.parametrize("which", ["examples", "demo"])
def test_root_poses_follow_file_pose_changes_in_place_and_back(which):
    """One set of buffers fed file poses that change between calls (new values in the same
    arrays, a change back, a change of one element only) gives every time exactly (bitwise) what
    fresh buffers give, and matches the per-body reference: no root pose is ever stale."""
    w = load([EXAMPLES / n for n in NAMES] if which == "examples" else [DEMO_ARM])
    tree = Kinematics(w)
    F = tree.n_files
    rng = np.random.default_rng(5)
    q = rng.uniform(-2.0, 2.0, tree.n_joints)
    buf = tree.new_buffers(np.broadcast_to(np.eye(3), (F, 3, 3)), np.zeros((F, 3)))
    buf.q[:] = q
    first = rpy_to_matrix(*rng.uniform(-3, 3, 3)), rng.uniform(-1, 1, 3)
    steps = [None, first, None, "t only", first]
    for step in steps:
        if step is None:
            buf.file_R[:], buf.file_t[:] = np.eye(3), 0.0
        elif step == "t only":
            buf.file_t[F - 1, 2] += 0.25
        else:
            buf.file_R[F - 1], buf.file_t[F - 1] = step
        tree.forward(buf)
        fresh = run(Kinematics(w), q, {f: (buf.file_R[f], buf.file_t[f]) for f in range(F)})
        assert buf.body_R.tobytes() == fresh.body_R.tobytes(), step
        assert buf.body_t.tobytes() == fresh.body_t.tobytes(), step
        ref = _reference_poses(w, q, {f: (buf.file_R[f], buf.file_t[f]) for f in range(F)})
        np.testing.assert_allclose(buf.body_t, [tr for _, tr in ref], atol=1e-12)


@needs_examples
def test_world_joint_frames_are_the_parent_side_axis_and_pivot():
    """Every joint's world axis and origin (for distance Jacobians, issue 13) are its parent
    axis (normalised) and scaled parent pivot carried by the parent body's pose (from the
    per-body reference); a revolute joint turns its child about exactly that line: the child
    pivot stays on the origin and the child's copy of the axis stays on the world axis."""
    w = load([EXAMPLES / n for n in NAMES])
    kin = Kinematics(w)
    rng = np.random.default_rng(3)
    q = rng.uniform(-2.0, 2.0, kin.n_joints)
    fp = {f: (rpy_to_matrix(*rng.uniform(-3, 3, 3)), rng.uniform(-1, 1, 3)) for f in range(kin.n_files)}
    buf = run(kin, q, fp)
    ref = _reference_poses(w, q, fp)
    for k, j in enumerate(w.joints):
        Rp, tp = ref[j.parent]
        scale = w.bodies[j.parent].scale
        np.testing.assert_allclose(buf.joint_axis[k], Rp @ (j.parent_axis / np.linalg.norm(j.parent_axis)), atol=1e-12)
        np.testing.assert_allclose(buf.joint_origin[k], Rp @ (scale * j.parent_pivot) + tp, atol=1e-12)
        assert abs(np.linalg.norm(buf.joint_axis[k]) - 1.0) < 1e-12
        if j.type == "revolute":
            Rc, tc = ref[j.child]
            child_pivot = Rc @ (w.bodies[j.child].scale * j.child_pivot) + tc
            np.testing.assert_allclose(child_pivot, buf.joint_origin[k], atol=1e-12)
