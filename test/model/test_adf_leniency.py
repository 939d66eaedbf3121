"""What AMBF loads leniently loads here too, with one warning per file, key and message:
sensors and actuators listed without a definition, a body listed twice, and the warnings of many
bodies gathered into one line naming them (paths as the user named the file).

Oracles: AMBF's loader and framework (WPI-AIM/ambf 2d674b6: ``adf_loader_1_0.cpp`` loads a
sensor or actuator only ``if (node["type"].IsDefined())``; ``afUtils::getNonCollidingIdx`` gives
a second object with a taken map key the first free suffix "1", "2", ... of its key
``namespace + identifier``; ``afJoint::findConnectingBody`` tries the reference as an exact key
or a unique substring of one, then ``namespace + reference``) and the real example files."""

from __future__ import annotations

import shutil
import warnings

import pytest
import yaml
from conftest import EXAMPLES

from ambf_collision.geometry import shapes as S
from ambf_collision.model.adf import AdfError, AdfWarning, load_adf_files

needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")


def body(x=0.0, **extra):
    b = {"mass": 1.0, "location": {"position": {"x": x, "y": 0.0, "z": 0.0},
                                   "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}},
         "collision shape": "SPHERE", "collision geometry": {"radius": 0.1}}
    b.update(extra)
    return b


def load(path, **kw):
    """(world, [AdfWarning]) of ``load_adf_files(path)``; every warning must be an AdfWarning."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        w = load_adf_files(path, **kw)
    assert all(isinstance(r.message, AdfWarning) for r in rec), [str(r.message) for r in rec]
    return w, [r.message for r in rec]


def write(tmp_path, doc, name="robot.yaml"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False))
    return p


# ------------------------------------------------------------------------ sensors, actuators


def test_unmapped_sensors_and_actuators_skipped_with_one_warning_each(tmp_path):
    doc = {"bodies": ["BODY A"], "BODY A": body(name="A"),
           "sensors": ["SENSOR ray", "SENSOR gone", "SENSOR untyped"],
           "SENSOR ray": {"type": "Proximity", "parent": "BODY A"},
           "SENSOR untyped": {"parent": "BODY A"},  # a mapping without `type`: AMBF skips it too
           "actuators": ["ACTUATOR gone"]}
    p = write(tmp_path, doc)
    w, warned = load(p)
    assert [b.name for b in w.bodies] == ["/ambf/env/A"]
    assert [s["identifier"] for s in w.sensors] == ["SENSOR ray"]
    assert [(m.file, m.entry, m.key) for m in warned] == [
        (str(p), "SENSOR ray", "sensors"),
        (str(p), "SENSOR gone, SENSOR untyped", "sensors"),
        (str(p), "ACTUATOR gone", "actuators")]
    assert "not monitored" in str(warned[0]) and "skipped, as AMBF skips it" in str(warned[1])
    assert "skipped" in str(warned[2])


@needs_examples
def test_real_file_with_an_unmapped_sensor_loads(tmp_path):
    """AMBF's PR2 gripper with one more sensor listed than it defines."""
    text = (EXAMPLES / "pr2 gripper.yaml").read_text()
    assert "sensors: [SENSOR Proximity0]\n" in text
    p = write(tmp_path, text.replace("sensors: [SENSOR Proximity0]\n",
                                     "sensors: [SENSOR Proximity0, SENSOR Proximity9]\n"), "pr2 gripper.yaml")
    w, warned = load(p)
    reference, _ = load(EXAMPLES / "pr2 gripper.yaml")
    assert [b.name for b in w.bodies] == [b.name for b in reference.bodies]
    assert [s["identifier"] for s in w.sensors] == ["SENSOR Proximity0"]
    assert [(m.entry, m.key) for m in warned if m.key == "sensors"] == [
        ("SENSOR Proximity0", "sensors"), ("SENSOR Proximity9", "sensors")]


def test_undefined_body_still_refused(tmp_path):
    """AMBF reads a listed body's mapping unconditionally; an undefined one stays an error."""
    p = write(tmp_path, {"bodies": ["BODY A", "BODY B"], "BODY A": body(name="A")})
    with pytest.raises(AdfError, match="listed in 'bodies' but no such mapping") as ei:
        load_adf_files(p)
    assert (ei.value.file, ei.value.entry) == (str(p), "BODY B")


# ------------------------------------------------------------------------ a body listed twice


def test_body_listed_twice_loads_twice_under_ambfs_name(tmp_path):
    """The copy is AMBF's ``A1``; a joint naming ``BODY A`` joins the first copy (both keys
    contain it, the first is ``namespace + reference`` exactly), one naming ``BODY A1`` the copy
    (the only key containing it)."""
    doc = {"bodies": ["BODY A", "BODY B", "BODY A"], "joints": ["JOINT ab", "JOINT b-copy"],
           "BODY A": body(name="A"), "BODY B": body(1.0, name="B"),
           "JOINT ab": {"parent": "BODY A", "child": "BODY B", "type": "revolute"},
           "JOINT b-copy": {"parent": "BODY B", "child": "BODY A1", "type": "fixed"}}
    p = write(tmp_path, doc)
    w, warned = load(p)
    assert [(b.name, b.plain_name, b.identifier, b.remap) for b in w.bodies] == [
        ("/ambf/env/A", "A", "BODY A", ""), ("/ambf/env/B", "B", "BODY B", ""),
        ("/ambf/env/A1", "A1", "BODY A", "1")]
    assert [(w.bodies[j.parent].name, w.bodies[j.child].name) for j in w.joints] == [
        ("/ambf/env/A", "/ambf/env/B"), ("/ambf/env/B", "/ambf/env/A1")]
    assert w.body_index("A1") == 2 and w.body_index("/ambf/env/A") == 0
    ((m,),) = [warned]
    assert (m.file, m.entry, m.key) == (str(p), "BODY A", "bodies")
    assert "loaded again as /ambf/env/A1" in str(m)
    assert [b.t[0] for b in w.bodies] == [0.0, 1.0, 0.0]  # the copy where the file puts A


def test_copy_suffix_skips_taken_keys_as_ambf(tmp_path):
    """getNonCollidingIdx over the keys taken before: ``BODY A1`` (an entry of its own) holds
    the key ``BODY A1``, so the copies of ``BODY A`` get the suffixes 2 and 3; the entry ``BODY
    A3`` (named X) listed last finds its key taken by the second copy and gets suffix 1 (X1)."""
    doc = {"bodies": ["BODY A", "BODY A1", "BODY A", "BODY A", "BODY A3"],
           "BODY A": body(name="A"), "BODY A1": body(name="A1"), "BODY A3": body(name="X")}
    w, warned = load(write(tmp_path, doc))
    assert [(b.plain_name, b.remap) for b in w.bodies] == [
        ("A", ""), ("A1", ""), ("A2", "2"), ("A3", "3"), ("X1", "1")]
    assert [(m.entry, m.key) for m in warned] == [("BODY A, BODY A3", "bodies")]
    assert "/ambf/env/A2, /ambf/env/A3, /ambf/env/X1" in str(warned[0])


def test_same_body_in_two_files_still_refused(tmp_path):
    """Across files the refusal stays (pass ``namespaces=``): only a repeat within one file is
    renamed."""
    a = write(tmp_path, {"bodies": ["BODY A"], "BODY A": body(name="A")}, "a.yaml")
    b = write(tmp_path, {"bodies": ["BODY A"], "BODY A": body(name="A")}, "b.yaml")
    with pytest.raises(AdfError, match="duplicate body name /ambf/env/A"):
        load_adf_files([a, b])


# ------------------------------------------------------------------------ one line per key


def test_one_open_mesh_of_21_bodies_is_one_warning(tmp_path):
    """21 bodies sharing a one-triangle mesh (explicitly CONCAVE_MESH, AMBF's default): the mesh
    is open (unsigned distances), said once for the file, naming the mesh."""
    (tmp_path / "low").mkdir()
    (tmp_path / "low" / "t.obj").write_text("v 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 2 3\n")
    names = [f"L{k:02d}" for k in range(21)]
    doc = {"bodies": [f"BODY {n}" for n in names], "low resolution path": "low/"}
    for n in names:
        doc[f"BODY {n}"] = {"name": n, "mesh": "t.obj", "collision mesh type": "CONCAVE_MESH"}
    w, warned = load(write(tmp_path, doc))
    assert all(len(b.shapes) == 1 for b in w.bodies)
    ((m,),) = [warned]
    assert (m.entry, m.key) == ("BODY L00, BODY L01, BODY L02, BODY L03 and 17 more", "mesh")
    assert "t.obj" in m.message and "the mesh is open (unsigned distances)" in m.message
    assert all(s.kind == S.MESH and not s.mesh.closed for b in w.bodies for s in b.shapes)


def test_differing_details_of_one_key_make_one_line(tmp_path):
    """Three bodies with three missing meshes: one line, each mesh named."""
    doc = {"bodies": ["BODY a", "BODY b", "BODY c"]}
    for n in "abc":
        doc[f"BODY {n}"] = {"name": n, "mesh": f"{n}.STL"}
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub", doc)
    w, warned = load(tmp_path / "sub" / "robot.yaml")
    assert [b.shapes for b in w.bodies] == [[], [], []]
    ((m,),) = [warned]
    shown = tmp_path / "sub"
    assert (m.entry, m.key) == ("BODY a, BODY b, BODY c", "mesh")
    assert m.message == (f"collision mesh not found: {shown / 'a.STL'}, {shown / 'b.STL'}, "
                         f"{shown / 'c.STL'}: the body has no collision geometry")


@needs_examples
def test_real_file_mesh_warnings_one_line_relative_to_the_path_given(tmp_path, monkeypatch):
    """puzzle2.yaml's four mesh bodies (meshes not shipped): one line, the meshes named through
    the relative path the user gave, never resolved to an absolute path."""
    shutil.copy(EXAMPLES / "puzzle2.yaml", tmp_path / "puzzle2.yaml")
    monkeypatch.chdir(tmp_path)
    _, warned = load("puzzle2.yaml")
    (m,) = [w for w in warned if w.key == "mesh"]
    assert m.file == "puzzle2.yaml"
    assert m.entry == "BODY Mold_A, BODY TopPlate, BODY Triangle_A, BODY Triangle_B"
    assert m.message.startswith("collision mesh not found: ../../../meshes/puzzle2/low_res/Mold_A.STL, ")
    assert str(tmp_path) not in str(m) and "/work" not in str(m)
