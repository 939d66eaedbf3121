"""ADF loader: the eight AMBF example files, shape mapping, meshes, and every kind of bad input."""

from __future__ import annotations

import math
import shutil
import struct
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES

from ambf_collision.geometry import shapes as S
from ambf_collision.geometry.transforms import quat_to_matrix, rpy_to_matrix
from ambf_collision.model.adf import MAX_FILE_BYTES, AdfError, AdfWarning, load_adf_files

needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")

FILES = {
    "ScrewDriverEnv_env.yaml": (12, 10),
    "blender-kuka-tip-sphere.yaml": (9, 8),
    "blender-toy-car.yaml": (5, 4),
    "checkered_floor.yaml": (1, 0),
    "peg_and_base.yaml": (2, 0),
    "pr2 gripper.yaml": (5, 4),
    "puzzle2.yaml": (19, 9),
    "gripper4/gripper.yaml": (4, 3),
}


def load(paths, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files(paths, **kw)


def body(world, plain):
    (b,) = [b for b in world.bodies if b.plain_name == plain]
    return b


# ------------------------------------------------------------------ real files


@needs_examples
@pytest.mark.parametrize("name", sorted(FILES))
def test_example_file_loads(name):
    w = load([EXAMPLES / name])
    assert (len(w.bodies), len(w.joints)) == FILES[name]
    for b in w.bodies:
        assert b.name == b.namespace + b.plain_name
        assert len(b.shapes) == len(b.shape_specs)


@needs_examples
def test_all_files_in_one_world():
    w = load([EXAMPLES / n for n in sorted(FILES)])
    assert len(w.bodies) == sum(v[0] for v in FILES.values())
    assert len(w.joints) == sum(v[1] for v in FILES.values())
    names = {b.name for b in w.bodies}
    assert "/ambf/env/ScrewDriverEnv/SDTip1" in names and "/ambf/env/gripper/Wrist" in names
    assert "/ambf/env/link3" in names
    # the PR2 gripper's sensors are kept raw
    sens = [s for s in w.sensors if s["identifier"] == "SENSOR Proximity0"]
    assert sens and sens[0]["data"]["range"] == 0.105


@needs_examples
def test_kuka_shapes_match_file():
    """Capsule height is tip to tip; axis Y maps local z to body y; collision offset is used."""
    w = load([EXAMPLES / "blender-kuka-tip-sphere.yaml"])
    (c1,) = body(w, "link1").shapes
    assert isinstance(c1, S.Capsule) and c1.radius == pytest.approx(0.0559)
    half = 0.2475 / 2 - 0.0559
    off = np.array([0.0, -0.0169, 0.1342])
    ends = sorted([tuple(c1.a), tuple(c1.b)], key=lambda p: p[2])
    np.testing.assert_allclose(ends, [off - [0, 0, half], off + [0, 0, half]], atol=1e-12)
    (c2,) = body(w, "link2").shapes  # axis Y
    half2 = 0.2506 / 2 - 0.0589
    np.testing.assert_allclose(sorted([c2.a[1], c2.b[1]]), [-0.0742 - half2, -0.0742 + half2], atol=1e-12)
    np.testing.assert_allclose([c2.a[0], c2.a[2]], [0.0002, 0.0095], atol=1e-12)
    (sph,) = body(w, "link6").shapes
    assert isinstance(sph, S.Sphere) and sph.radius == 0.0711
    np.testing.assert_allclose(sph.center, [-0.0001, 0.0071, 0.0676])
    tip = body(w, "kuka_tip").shapes
    assert [type(s) for s in tip] == [S.Cylinder, S.Cylinder]
    assert (tip[0].radius, tip[0].height) == (0.0137, 0.2437)
    np.testing.assert_allclose(tip[1].position, [0.0, -0.04500000178813934, 0.0])
    for s in tip:  # axis Y: the cylinder's local z is body y
        np.testing.assert_allclose(s.rotation[:, 2], [0, 1, 0], atol=1e-12)
    assert body(w, "link7").shapes == []  # mesh collision, mesh not shipped
    base = body(w, "base")
    assert base.groups == (0,) and base.mass == 0.0 and base.margin == 0.001
    assert w.file_ignore_inter_collision == [True]


@needs_examples
def test_pr2_legacy_inertial_offset_and_floor_plane():
    w = load([EXAMPLES / "pr2 gripper.yaml", EXAMPLES / "checkered_floor.yaml"])
    (cyl,) = body(w, "r_gripper_palm_link").shapes
    np.testing.assert_allclose(cyl.position, [-0.143, 0.0, 0.0])  # the inertial offset
    (box,) = body(w, "r_gripper_l_finger_link").shapes
    np.testing.assert_allclose(box.size, [0.17, 0.08, 0.104])
    np.testing.assert_allclose(box.position, [0.08, 0.034, 0.0])
    (plane,) = body(w, "Plane").shapes
    assert isinstance(plane, S.Plane)
    np.testing.assert_allclose(plane.normal, [0, 0, 1]) and plane.offset == 0.0
    assert body(w, "Plane").groups == ()


@needs_examples
def test_cone_apex_along_axis_and_screwdriver_groups():
    w = load([EXAMPLES / "puzzle2.yaml"])
    (cone,) = body(w, "LightCone").shapes
    assert isinstance(cone, S.Cone) and (cone.radius, cone.height) == (0.1415, 0.283)
    np.testing.assert_allclose(cone.rotation, np.eye(3), atol=1e-12)
    w = load([EXAMPLES / "ScrewDriverEnv_env.yaml"])
    assert body(w, "Cube_002").groups == (0, 1)
    assert body(w, "SDTip2").groups == (1,)


# ------------------------------------------------------------------ synthetic files


def adf(bodies=None, joints=None, **top):
    """A minimal valid ADF document (dict)."""
    bodies = bodies if bodies is not None else {"A": {}, "B": {"location": {"position": {"x": 1, "y": 0, "z": 0}, "orientation": {"r": 0, "p": 0, "y": 0}}}}
    doc = {"bodies": [f"BODY {n}" for n in bodies], "joints": [f"JOINT {n}" for n in (joints or {})]}
    doc.update(top)
    for n, extra in bodies.items():
        b = {
            "name": n,
            "mass": 1.0,
            "location": {"position": {"x": 0.0, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}},
            "collision shape": "SPHERE",
            "collision geometry": {"radius": 0.1},
        }
        b.update(extra)
        doc[f"BODY {n}"] = b
    for n, extra in (joints or {}).items():
        j = {
            "name": n,
            "parent": "BODY A",
            "child": "BODY B",
            "parent pivot": {"x": 1.0, "y": 0.0, "z": 0.0},
            "parent axis": {"x": 0.0, "y": 0.0, "z": 1.0},
            "child pivot": {"x": 0.0, "y": 0.0, "z": 0.0},
            "child axis": {"x": 0.0, "y": 0.0, "z": 1.0},
            "type": "revolute",
        }
        j.update(extra)
        doc[f"JOINT {n}"] = j
    return doc


def write(tmp_path, doc, name="robot.yaml"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return p


def test_flow_yaml_anchors_spaces_and_shape_case(tmp_path):
    text = """
bodies: [BODY my arm, BODY b2]
joints: [JOINT j 1]
namespace: robot
geom: &g {x: 0.1, y: 0.2, z: 0.3}
BODY my arm:
  name: my arm
  location: {position: {x: 0, y: 0, z: 0}, orientation: {r: 0, p: 0, y: 0}}
  collision shape: Box
  collision geometry: *g
BODY b2:
  name: b2
  location: {position: {x: 1, y: 0, z: 0}, orientation: {r: 0, p: 0, y: 0}}
  compound collision shape:
  - {shape: box, geometry: *g}
  - {shape: BOX, geometry: {x: 1, y: 1, z: 1}, offset: {position: {x: 0, y: 0, z: 2}}}
JOINT j 1: {parent: BODY my arm, child: BODY b2, type: hinge,
  parent pivot: {x: 1, y: 0, z: 0}, parent axis: {x: 0, y: 0, z: 1},
  child pivot: {x: 0, y: 0, z: 0}, child axis: {x: 0, y: 0, z: 1}}
"""
    w = load_adf_files(write(tmp_path, text))
    assert [b.name for b in w.bodies] == ["/robot/myarm", "/robot/b2"]
    # AMBF removes spaces from joint names too (adf_loader_1_0.cpp); the spelling is kept
    assert w.joints[0].qualified_name == "/robot/j1" and w.joints[0].type == "revolute"
    assert (w.joints[0].name, w.joints[0].original_name) == ("j1", "j 1")
    np.testing.assert_allclose(w.bodies[0].shapes[0].size, [0.1, 0.2, 0.3])
    s = w.bodies[1].shapes
    assert len(s) == 2 and all(isinstance(x, S.Box) for x in s)
    np.testing.assert_allclose(s[1].position, [0, 0, 2])


def test_collision_offset_rotation_and_axis_x(tmp_path):
    doc = adf({"A": {"collision shape": "CYLINDER", "collision geometry": {"radius": 0.1, "height": 0.5, "axis": "x"},
                     "collision offset": {"position": {"x": 0, "y": 0, "z": 1}, "orientation": {"r": 0, "p": 0, "y": math.pi / 2}}}})
    w = load_adf_files(write(tmp_path, doc))
    (cyl,) = w.bodies[0].shapes
    # local axis x, then yawed by 90 deg: the cylinder axis lies along body y
    np.testing.assert_allclose(abs(cyl.rotation[:, 2]), [0, 1, 0], atol=1e-12)
    np.testing.assert_allclose(cyl.position, [0, 0, 1])


@pytest.mark.parametrize("axis, direction", [("X", [1, 0, 0]), ("y", [0, 1, 0]), ("Z", [0, 0, 1])])
def test_cone_apex_follows_axis(tmp_path, axis, direction):
    """Bullet's btConeShapeX/Y/Z: apex towards +axis; the geometry core's cone apex is local +z."""
    doc = adf({"A": {"collision shape": "CONE", "collision geometry": {"radius": 0.1, "height": 0.4, "axis": axis}}})
    (cone,) = load_adf_files(write(tmp_path, doc)).bodies[0].shapes
    np.testing.assert_allclose(cone.rotation[:, 2], direction, atol=1e-15)


def _stl_binary_vertices(path):
    """Independent reader with struct: all triangle vertices."""
    data = Path(path).read_bytes()
    (n,) = struct.unpack_from("<I", data, 80)
    out = []
    for k in range(n):
        vals = struct.unpack_from("<12f", data, 84 + 50 * k)
        out += [vals[3:6], vals[6:9], vals[9:12]]
    return np.array(out)


@needs_examples
def test_mesh_collision_binary_stl_scaled(tmp_path):
    (tmp_path / "meshes").mkdir()
    shutil.copy(EXAMPLES / "gripper4" / "low_res" / "Wrist.STL", tmp_path / "meshes" / "Wrist.STL")
    doc = adf({"A": {"mesh": "Wrist.STL", "scale": 2.0}}, **{"low resolution path": "./meshes/"})
    del doc["BODY A"]["collision shape"], doc["BODY A"]["collision geometry"]
    w = load_adf_files(write(tmp_path, doc))
    (mesh,) = w.bodies[0].shapes   # no `collision mesh type`: AMBF's concave mesh
    assert isinstance(mesh, S.Mesh) and mesh.scale == 2.0
    expect = np.unique(_stl_binary_vertices(tmp_path / "meshes" / "Wrist.STL") * 2.0, axis=0)
    np.testing.assert_allclose(np.unique(mesh.vertices, axis=0), expect, rtol=1e-6)


def test_mesh_collision_ascii_stl_and_obj(tmp_path):
    tri = "solid t\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\nvertex 0 1 0\nendloop\nendfacet\n" \
          "facet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 0 1 0\nvertex 0 0 1\nendloop\nendfacet\nendsolid t\n"
    (tmp_path / "t.stl").write_text(tri)
    (tmp_path / "t.obj").write_text("# obj\nv 0 0 0\nv 2 0 0\nv 0 2 0\nv 0 0 2\nf 1 2 3\n")
    doc = adf({"A": {"collision mesh": "t.stl", "mesh": "visual.obj"}, "B": {"mesh": "t.obj"}})
    for n in "AB":
        del doc[f"BODY {n}"]["collision shape"], doc[f"BODY {n}"]["collision geometry"]
    w = load_adf_files(write(tmp_path, doc))
    np.testing.assert_allclose(np.unique(w.bodies[0].shapes[0].vertices, axis=0),
                               [[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]])
    # the triangle mesh keeps the vertices its one face uses (v 0 0 2 is in no face)
    np.testing.assert_allclose(np.unique(w.bodies[1].shapes[0].vertices, axis=0),
                               [[0, 0, 0], [0, 2, 0], [2, 0, 0]])


def test_single_plane_sits_at_the_inertial_offset(tmp_path):
    """AMBF hands a single PLANE to Bullet without the collision offset, in the body's inertial
    frame: normal z, offset 0.5 there, inertial offset z = 1 -> solid where z < 1.5 in the body."""
    plane = {"collision shape": "PLANE", "collision geometry": {"normal": {"x": 0, "y": 0, "z": 2}, "offset": 0.5},
             "collision offset": {"position": {"x": 0, "y": 0, "z": 7}}}
    doc = adf({"A": dict(plane, **{"inertial offset": {"position": {"x": 0, "y": 0, "z": 1}}}), "B": plane})
    a, b = (body.shapes[0] for body in load(write(tmp_path, doc)).bodies)
    np.testing.assert_array_equal([a.normal, b.normal], [[0, 0, 1], [0, 0, 1]])
    assert (a.offset, b.offset) == (1.5, 0.5)


def test_mesh_folder_is_file_path_then_body_path(tmp_path):
    """AMBF: <ADF folder>/<file low resolution path>/<body low (else high) resolution path>/mesh;
    an absolute part replaces what precedes it."""
    for folder, x in (("meshes/sub", 1), ("elsewhere", 2), ("meshes/hi", 3)):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.obj").write_text(f"v 0 0 0\nv {x} 0 0\nv 0 1 0\nf 1 2 3\n")
    bodies = {"A": {"mesh": "m.obj", "low resolution path": "sub/"},
              "B": {"mesh": "m.obj", "low resolution path": str(tmp_path / "elsewhere")},
              "C": {"mesh": "m.obj", "high resolution path": "hi"}}
    doc = adf(bodies, **{"low resolution path": "./meshes/", "high resolution path": "./ignored/"})
    for n in bodies:
        del doc[f"BODY {n}"]["collision shape"], doc[f"BODY {n}"]["collision geometry"]
    w = load(write(tmp_path, doc))
    assert [b.shapes[0].vertices[:, 0].max() for b in w.bodies] == [1, 2, 3]


def test_missing_mesh_one_warning(tmp_path):
    doc = adf({"A": {"mesh": "nothere.STL"}, "B": {}})
    del doc["BODY A"]["collision shape"], doc["BODY A"]["collision geometry"]
    p = write(tmp_path, doc)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        w = load_adf_files(p)
    assert len(rec) == 1
    msg = str(rec[0].message)
    assert "robot.yaml" in msg and "BODY A" in msg and "nothere.STL" in msg
    assert w.bodies[0].shapes == [] and len(w.bodies[1].shapes) == 1


# ------------------------------------------------------------------ bad input


def _mut(fn):
    doc = adf(joints={"j": {}})
    fn(doc)
    return doc


BAD = {
    "missing_position_x": (_mut(lambda d: d["BODY A"]["location"]["position"].pop("x")), "BODY A", "location.position.x"),
    "unknown_shape": (_mut(lambda d: d["BODY A"].update({"collision shape": "TORUS"})), "BODY A", "'collision shape'"),
    "nan_radius": (_mut(lambda d: d["BODY A"]["collision geometry"].update({"radius": float("nan")})), "BODY A", "'collision geometry'.radius"),
    "inf_position": (_mut(lambda d: d["BODY A"]["location"]["position"].update({"y": float("inf")})), "BODY A", "location.position.y"),
    "negative_radius": (_mut(lambda d: d["BODY A"]["collision geometry"].update({"radius": -0.1})), "BODY A", "'collision geometry'.radius"),
    "negative_box": (_mut(lambda d: d["BODY A"].update({"collision shape": "BOX", "collision geometry": {"x": 1, "y": -1, "z": 1}})), "BODY A", "'collision geometry'.y"),
    "short_capsule": (_mut(lambda d: d["BODY A"].update({"collision shape": "CAPSULE", "collision geometry": {"radius": 0.2, "height": 0.3}})), "BODY A", "'collision geometry'.height"),
    "string_number": (_mut(lambda d: d["BODY B"].update({"mass": "heavy"})), "BODY B", "mass"),
    "zero_axis": (_mut(lambda d: d["JOINT j"].update({"parent axis": {"x": 0, "y": 0, "z": 0}})), "JOINT j", "'parent axis'"),
    "bad_bool": (_mut(lambda d: d["JOINT j"].update({"ignore inter-collision": "maybe"})), "JOINT j", "'ignore inter-collision'"),
    "listed_not_defined": (_mut(lambda d: d["bodies"].append("BODY C")), "BODY C", ""),
    "duplicate_body_name": (_mut(lambda d: d["BODY B"].update({"name": "A"})), "BODY B", "name"),
    "duplicate_after_stripping": (_mut(lambda d: d["BODY B"].update({"name": " A "})), "BODY B", "name"),
    "missing_joint_type": (_mut(lambda d: d["JOINT j"].pop("type")), "JOINT j", "type"),
    "missing_radius": (_mut(lambda d: d["BODY A"]["collision geometry"].pop("radius")), "BODY A", "'collision geometry'.radius"),
    "fractional_group": (_mut(lambda d: d["BODY A"].update({"collision groups": [0, 1.5]})), "BODY A", "'collision groups'[1]"),
    "zero_scale": (_mut(lambda d: d["BODY A"].update({"scale": 0})), "BODY A", "scale"),
    "compound_not_list": (_mut(lambda d: d["BODY A"].update({"compound collision shape": {"shape": "BOX"}}) or d["BODY A"].pop("collision shape")), "BODY A", "'compound collision shape'"),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_input_names_file_entry_key(tmp_path, case):
    doc, entry, key = BAD[case]
    p = write(tmp_path, doc)
    with pytest.raises(AdfError) as ei:
        load_adf_files(p)
    e = ei.value
    assert e.file == str(p) and e.entry == entry and e.key == key
    msg = str(e)
    assert str(p) in msg and entry in msg and key in msg and "\n" not in msg


# AMBF loads these (adf_loader_1_0.cpp, afFramework.cpp): one AdfWarning naming file, entry and
# key, and the effect AMBF gives them.
WARN = {
    "missing_location": (_mut(lambda d: d["BODY B"].pop("location")), "BODY B", None,
                         lambda w: np.array_equal(w.bodies[1].t, [0, 0, 0]) and len(w.joints) == 1),
    "unknown_joint_type": (_mut(lambda d: d["JOINT j"].update({"type": "ball"})), "JOINT j", "type",
                           lambda w: w.joints == []),
    "unknown_body": (_mut(lambda d: d["JOINT j"].update({"child": "BODY Nope"})), "JOINT j", "child",
                     lambda w: w.joints == [] and len(w.bodies) == 2),
    "missing_parent": (_mut(lambda d: d["JOINT j"].pop("parent")), "JOINT j", "parent", lambda w: w.joints == []),
    "self_joint": (_mut(lambda d: d["JOINT j"].update({"child": "BODY A"})), "JOINT j", "child", lambda w: w.joints == []),
    "group_out_of_range": (_mut(lambda d: d["BODY A"].update({"collision groups": [0, 1000]})), "BODY A",
                           "'collision groups'[1]", lambda w: w.bodies[0].groups == (0,)),
    "inverted_limits": (_mut(lambda d: d["JOINT j"].update({"joint limits": {"low": 1, "high": 0}})), "JOINT j",
                        "'joint limits'", lambda w: w.joints[0].limits is None),
    "axis_letter": (_mut(lambda d: d["BODY A"].update({"collision shape": "CONE", "collision geometry": {"radius": 0.1, "height": 0.2, "axis": "w"}})),
                    "BODY A", "'collision geometry'.axis",
                    lambda w: np.allclose(w.bodies[0].shapes[0].rotation, np.eye(3))),
    "string_boolean": (_mut(lambda d: d["JOINT j"].update({"ignore inter-collision": "False"})), "JOINT j",
                       "'ignore inter-collision'", lambda w: w.joints[0].ignore_inter_collision is False),
    "quoted_number": (_mut(lambda d: d["BODY B"].update({"mass": "2.5"})), "BODY B", "mass",
                      lambda w: w.bodies[1].mass == 2.5),
    "no_collision": (_mut(lambda d: [d["BODY A"].pop(k) for k in ("collision shape", "collision geometry")]),
                     "BODY A", "'collision shape'", lambda w: w.bodies[0].shapes == []),
    "sensors_listed": (_mut(lambda d: d.update({"sensors": ["SENSOR s"], "SENSOR s": {"type": "Proximity"}})),
                       "SENSOR s", "sensors", lambda w: w.sensors[0]["identifier"] == "SENSOR s"),
}


@pytest.mark.parametrize("case", sorted(WARN))
def test_accepted_as_ambf_with_one_warning(tmp_path, case):
    doc, entry, key, effect = WARN[case]
    p = write(tmp_path, doc)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        w = load_adf_files(p)
    assert effect(w)
    if key is None:  # AMBF's rule, nothing to warn about
        assert rec == []
        return
    assert len(rec) == 1, [str(r.message) for r in rec]
    wn = rec[0].message
    assert isinstance(wn, AdfWarning) and (wn.file, wn.entry, wn.key) == (str(p), entry, key)
    assert str(wn).startswith(f"{p}: {entry}: {key}: ") and "\n" not in str(wn)


def test_error_message_format(tmp_path):
    doc = adf({"Wrist": {"collision geometry": {"radius": "abc"}}})
    p = write(tmp_path, doc, "gripper.yaml")
    with pytest.raises(AdfError) as ei:
        load_adf_files(p)
    assert str(ei.value) == f"{p}: BODY Wrist: 'collision geometry'.radius: must be a finite number >= 0, got 'abc'"


def test_loops_load_duplicate_joint_refused(tmp_path):
    """A body with two parent joints and a cycle of joints are valid ADF (AMBF's joints are
    constraints): both load with every joint kept. A repeated joint name is still refused."""
    two = adf({"A": {}, "B": {}, "C": {}}, joints={"j1": {}, "j2": {"parent": "BODY C"}})
    w = load_adf_files(write(tmp_path, two))
    assert [(j.parent, j.child) for j in w.joints] == [(0, 1), (2, 1)]
    cyc = adf({"A": {}, "B": {}}, joints={"j1": {}, "j2": {"parent": "BODY B", "child": "BODY A"}})
    w = load_adf_files(write(tmp_path, cyc))
    assert [(j.parent, j.child) for j in w.joints] == [(0, 1), (1, 0)]
    dup = adf({"A": {}, "B": {}, "C": {}}, joints={"j1": {}, "j2": {"name": "j1", "child": "BODY C"}})
    with pytest.raises(AdfError, match="duplicate joint name") as ei:
        load_adf_files(write(tmp_path, dup))
    assert ei.value.entry == "JOINT j2"


def test_duplicate_body_across_files(tmp_path):
    a = write(tmp_path, adf(), "a.yaml")
    b = write(tmp_path, adf(), "b.yaml")
    with pytest.raises(AdfError, match="duplicate body name /ambf/env/A") as ei:
        load_adf_files([a, b])
    assert ei.value.file == str(b)
    # different namespaces: fine
    c = write(tmp_path, adf(namespace="/other/"), "c.yaml")
    assert len(load_adf_files([a, c]).bodies) == 4


def test_joint_across_files_by_qualified_name(tmp_path):
    a = write(tmp_path, adf({"A": {}}), "a.yaml")
    doc = adf({"B": {}}, joints={"j": {"parent": "/ambf/env/BODY A", "child": "BODY B"}}, namespace="/tool/")
    b = write(tmp_path, doc, "b.yaml")
    w = load_adf_files([a, b])
    assert w.bodies[w.joints[0].parent].name == "/ambf/env/A"
    assert w.bodies[w.joints[0].child].name == "/tool/B"


@pytest.mark.parametrize(
    "text, what",
    [
        ("bodies: [BODY A\nBODY A: {", "malformed YAML"),
        ("- just\n- a list\n", "top level must be a mapping"),
        ("name: robot\nmass: 1\n", "bodies: missing: not an ADF file"),
        ("bodies: [BODY A]\nBODY A: &x\n  name: A\n  loop: [*x]\n", "alias"),
    ],
)
def test_malformed_files(tmp_path, text, what):
    p = write(tmp_path, text)
    with pytest.raises(AdfError, match=what) as ei:
        load_adf_files(p)
    assert ei.value.file == str(p)


def test_billion_laughs_rejected_quickly(tmp_path):
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for k in range(1, 10):
        prev = f"*a{k - 1}"
        lines.append(f"a{k}: &a{k} [{', '.join([prev] * 9)}]")
    lines.append("bodies: [BODY A]\nBODY A: {name: A, stuff: *a9}")
    p = write(tmp_path, "\n".join(lines) + "\n")
    with pytest.raises(AdfError, match="alias bomb"):
        load_adf_files(p)


def test_file_limits_and_missing_file(tmp_path):
    with pytest.raises(AdfError, match="cannot read file"):
        load_adf_files(tmp_path / "nope.yaml")
    big = tmp_path / "big.yaml"
    big.write_text("# " + "x" * MAX_FILE_BYTES)
    with pytest.raises(AdfError, match="limit"):
        load_adf_files(big)
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00bodies")
    with pytest.raises(AdfError, match="UTF-8"):
        load_adf_files(binary)


def test_root_poses_validated(tmp_path):
    p = write(tmp_path, adf())
    with pytest.raises(AdfError, match="root pose"):
        load_adf_files([p], root_poses=[(np.eye(3), [0, np.nan, 0])])
    w = load_adf_files([p], root_poses={str(p): (rpy_to_matrix(0, 0, 1.0), [1, 2, 3])})
    np.testing.assert_allclose(w.file_poses[0][1], [1, 2, 3])
    assert quat_to_matrix([0, 0, 0, 1]).shape == (3, 3)
