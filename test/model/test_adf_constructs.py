"""Each construct AMBF accepts, on this project's own small models (test/model/adf_models/):
loops, string booleans, limits, spaced names, tools without location, dangling joints, bodies
without collision, numbers with exponents, two copies of one robot (``namespaces=``).
Expectations are the values written in the model files, worked out by hand."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest

from ambf_collision.geometry import shapes as S
from ambf_collision.model.adf import AdfError, AdfWarning, load_adf_files

MODELS = Path(__file__).resolve().parent / "adf_models"


def load(name, **kw):
    """(world, [AdfWarning]) of one model file."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        w = load_adf_files([MODELS / name] if isinstance(name, str) else [MODELS / n for n in name], **kw)
    assert all(isinstance(r.message, AdfWarning) for r in rec), [str(r.message) for r in rec]
    return w, [r.message for r in rec]


def rpy(r, p, y):
    """Rz(y) Ry(p) Rx(r), written out (AMBF's fixed-axis XYZ)."""
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    Rx = np.array([[1, 0, 0], [0, cr, -sr], [0, sr, cr]])
    Ry = np.array([[cp, 0, sp], [0, 1, 0], [-sp, 0, cp]])
    Rz = np.array([[cy, -sy, 0], [sy, cy, 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def test_parallelogram_loop_keeps_every_joint():
    w, warned = load("loop_parallelogram.yaml")
    assert warned == []
    names = [b.name for b in w.bodies]
    assert names == ["/loop/ground", "/loop/crank", "/loop/rocker", "/loop/coupler"]
    ends = {j.name: (names[j.parent], names[j.child]) for j in w.joints}
    assert ends == {"ground-crank": ("/loop/ground", "/loop/crank"),
                    "crank-coupler": ("/loop/crank", "/loop/coupler"),
                    "ground-rocker": ("/loop/ground", "/loop/rocker"),
                    "rocker-coupler": ("/loop/rocker", "/loop/coupler")}
    assert sum(j.child == 3 for j in w.joints) == 2  # the coupler has two parents
    np.testing.assert_array_equal([b.t for b in w.bodies], [[0, 0, 0], [0, 0, 0], [2, 0, 0], [0, 1, 0]])
    (cap,) = w.bodies[3].shapes  # coupler: capsule along x from B to C (tip to tip 2.1, r 0.05)
    assert isinstance(cap, S.Capsule) and cap.radius == 0.05
    np.testing.assert_allclose(sorted([cap.a[0], cap.b[0]]), [0.0, 2.0], atol=1e-15)
    np.testing.assert_allclose([cap.a[1:], cap.b[1:]], np.zeros((2, 2)), atol=1e-15)
    assert w.file_ignore_inter_collision == [False]


def test_string_booleans_read_as_yaml_cpp():
    w, warned = load("string_booleans.yaml")
    assert w.file_ignore_inter_collision == [True]  # 'True'
    assert [j.ignore_inter_collision for j in w.joints] == [False, True, False, False]  # 'false', "ON", n, No
    # one warning for the key, naming each string (the top level's 'True', then ab, bc, cd; `No`
    # is a YAML boolean) and what it reads as
    assert [(m.entry, m.key) for m in warned] == [
        ("top level, JOINT ab, JOINT bc, JOINT cd", "'ignore inter-collision'")]
    assert str(warned[0]).endswith(": boolean written as a string: 'True' read as true, 'false' "
                                   "read as false, 'ON' read as true, 'n' read as false, as AMBF does")


def test_joint_limits_as_ambf_and_bullet():
    w, warned = load("inverted_limits.yaml")
    assert {j.name: j.limits for j in w.joints} == {
        "normal": (-1.5, 1.5), "inverted": None, "only-low": None, "equal": (0.02, 0.02), "twist": None}
    assert [(m.entry, m.key) for m in warned] == [("JOINT inverted", "'joint limits'")]
    assert "low (0.25) > high (-0.2)" in str(warned[0]) and "unlimited" in str(warned[0])
    assert [j.type for j in w.joints] == ["revolute", "revolute", "prismatic", "prismatic", "cone twist"]


def test_spaced_names_stripped_and_found_by_either_spelling():
    w, warned = load("spaced_names.yaml")
    assert warned == []
    assert [b.name for b in w.bodies] == ["/suj/baselink", "/suj/sujecmL0", "/suj/tooltip"]
    assert [b.original_name for b in w.bodies] == ["base link", "suj ecm L0", "tool tip"]
    assert [j.qualified_name for j in w.joints] == ["/suj/baselink-sujecmL0", "/suj/sujecmL0-tooltip"]
    assert [(j.parent, j.child) for j in w.joints] == [(0, 1), (1, 2)]
    for spelling in ("suj ecm L0", "sujecmL0", "/suj/sujecmL0", "/suj/suj ecm L0", "suj/sujecmL0"):
        assert w.body_index(spelling) == 1
    for spelling in ("base link-suj ecm L0", "baselink-sujecmL0", "/suj/baselink-sujecmL0"):
        assert w.joint_index(spelling) == 0
    with pytest.raises(KeyError, match="no joint named"):
        w.joint_index("base link-tool tip")


def test_tool_without_location_or_namespace():
    w, warned = load("tool_no_location.yaml")
    assert warned == []
    (b,) = w.bodies
    assert (b.name, b.identifier, b.original_name) == ("/ambf/env/probestick", "tool", "probe stick")
    np.testing.assert_array_equal(b.R, np.eye(3))
    np.testing.assert_array_equal(b.t, np.zeros(3))
    assert isinstance(b.shapes[0], S.Cylinder) and b.shapes[0].height == 0.3


def test_dangling_joints_skipped_with_one_warning_each():
    w, warned = load("dangling_joints.yaml")
    assert [j.name for j in w.joints] == ["kept"] and w.joints[0].type == "revolute"
    assert [(m.entry, m.key) for m in warned] == [
        ("JOINT to nowhere", "child"), ("JOINT no child", "child"), ("JOINT self", "child"),
        ("JOINT ball", "type")]
    assert "no body 'BODY gripper' is loaded" in str(warned[0])
    assert all("skipped" in str(m) for m in warned)


def test_bodies_without_collision_warn_once_each():
    w, warned = load("no_collision.yaml")
    shapes = {b.plain_name: b.shapes for b in w.bodies}
    assert [n for n, s in shapes.items() if not s] == ["world", "bare", "lost", "hollow"]
    assert [(m.entry, m.key) for m in warned] == [
        ("BODY world", "mesh"), ("BODY bare", "'collision shape'"), ("BODY lost", "mesh"),
        ("BODY hollow", "'compound collision shape'")]
    assert "empty mesh name" in str(warned[0]) and "not found" not in str(warned[0])
    assert "not_there.STL" in str(warned[2]) and "not found" in str(warned[2])
    (hull,) = shapes["hull"]  # collision mesh (not `mesh`), scale 2, CONVEX_HULL: no warning
    assert hull.kind == S.CONVEX
    np.testing.assert_array_equal(hull.vertices, [[0, 0, 0], [0, 0, 2], [0, 2, 0], [2, 0, 0]])
    (concave,) = shapes["concave"]  # no type: AMBF's concave default, the mesh itself, no warning
    assert concave.kind == S.MESH and concave.mesh.closed
    np.testing.assert_array_equal(np.sort(concave.mesh.vertices, axis=0),
                                  np.sort([[0, 0, 0], [0, 0, 0.5], [0, 0.5, 0], [0.5, 0, 0]], axis=0))


def test_exponent_numbers_without_a_point():
    w, warned = load("exponent_numbers.yaml")
    assert warned == []
    a, b = w.bodies
    assert a.mass == 0.001 and b.t.tolist() == [1.0, 0.0, 0.0]
    np.testing.assert_array_equal(a.t, [0.001, 150.0, -0.2])
    np.testing.assert_allclose(a.R, rpy(0.5, -0.25, 3.0), atol=1e-15)
    assert a.shapes[0].radius == 0.025
    np.testing.assert_array_equal(b.shapes[0].size, [0.1, 0.2, 0.3])
    (j,) = w.joints
    assert j.limits == (-1.0, 1.0) and j.offset == 0.5


def test_two_copies_side_by_side_with_namespaces():
    with pytest.raises(AdfError, match="duplicate body name /loop/ground"):
        load(["loop_parallelogram.yaml"] * 2)
    w, _ = load(["loop_parallelogram.yaml"] * 2, namespaces=["/PSM1/", "PSM2"])
    assert [b.name for b in w.bodies] == [f"/PSM{k}/{n}" for k in (1, 2)
                                          for n in ("ground", "crank", "rocker", "coupler")]
    assert [j.qualified_name for j in w.joints][4] == "/PSM2/ground-crank"
    for j in w.joints:  # each copy's joints join that copy's bodies
        assert w.bodies[j.parent].file_index == w.bodies[j.child].file_index == j.file_index
    assert w.body_index("PSM2/coupler") == 7
    with pytest.raises(KeyError, match="ambiguous"):
        w.body_index("coupler")
    # a dict keyed by path; None keeps the file's namespace
    w, _ = load(["loop_parallelogram.yaml", "spaced_names.yaml"],
                namespaces={str(MODELS / "spaced_names.yaml"): "/arm/"})
    assert w.bodies[0].name == "/loop/ground" and w.bodies[4].name == "/arm/baselink"


@pytest.mark.parametrize("bad", [["/a/"], ["/a b/", "/c/"], [3, None], "/a/"])
def test_bad_namespaces_argument(bad):
    with pytest.raises(AdfError, match="namespaces"):
        load(["loop_parallelogram.yaml", "spaced_names.yaml"], namespaces=bad)
