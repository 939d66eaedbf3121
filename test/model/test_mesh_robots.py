"""AMBF's own dVRK PSM (WPI-AIM/ambf, ``blender-psm.yaml``, test/model/adf_models/ambf) with its
concave collision meshes, as AMBF collides them: every link is a MESH shape (no ``collision mesh
type``), against instruments of spheres and capsules placed about its tool.

Oracles: coal's BVHModel distance, posed here from the model's body poses, for every pair apart
(1e-9 m); the convex hull of the same mesh (``hull_meshes``), which holds the mesh and so is
never farther from anything; near_only against computing every pair.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import yaml

from ambf_collision.model.model import Model

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
from ambf_collision.geometry.coal_bridge import coal_distance, distance_request, to_coal  # noqa: E402

PSM = "test/model/adf_models/ambf/descriptions/multi-bodies/robots/blender-psm.yaml"


def instruments(tmp_path, centres, rng):
    """An ADF file of fixed bodies: a sphere or a capsule about each of ``centres`` (world)."""
    names = [f"BODY tool{i}" for i in range(len(centres))]
    doc = {"bodies": names, "ignore inter-collision": True}   # the instruments miss each other
    for i, (name, c) in enumerate(zip(names, centres)):
        c = c + rng.normal(size=3) * 0.03
        body = {"name": f"tool{i}", "mass": 0.0,
                "location": {"position": dict(zip("xyz", map(float, c))),
                             "orientation": dict(zip(("r", "p", "y"), map(float, rng.normal(size=3))))}}
        if i % 2:
            body.update({"collision shape": "SPHERE", "collision geometry": {"radius": 0.004}})
        else:
            body.update({"collision shape": "CAPSULE",
                         "collision geometry": {"radius": 0.003, "height": 0.04, "axis": "z"}})
        doc[name] = body
    path = tmp_path / "instruments.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def load(paths, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Model.from_files(paths, **kw)


@pytest.fixture(scope="module")
def scene(tmp_path_factory):
    rng = np.random.default_rng(0)
    psm = load([PSM])
    data = psm.create_data()
    psm.evaluate(data)
    centres = data.body_t[rng.integers(0, len(psm.body_names), 16)]
    path = instruments(tmp_path_factory.mktemp("psm"), centres, rng)
    return load([PSM, path]), load([PSM, path], hull_meshes=["*"])


def test_every_psm_link_is_its_concave_mesh():
    psm = load([PSM])
    assert {i.kind for i in psm.shape_info} == {"mesh"}
    assert len(psm.meshes) == len(psm.shape_info) == 14
    hulls = load([PSM], hull_meshes=["*"])
    assert {i.kind for i in hulls.shape_info} == {"convex"}
    one = load([PSM], hull_meshes=["yaw link"])
    assert [i.body.split("/")[-1] for i in one.shape_info if i.kind == "convex"] == ["yawlink"]


def test_a_hull_meshes_pattern_matching_nothing_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Model.from_files([PSM], hull_meshes=["no such body", "yaw link"])
    said = [str(w.message) for w in caught if "hull_meshes" in str(w.message)]
    assert len(said) == 1 and "'no such body' matches no body with a concave mesh" in said[0]


def test_psm_against_instruments_matches_coal_and_its_hull_is_never_farther(scene):
    model, hulled = scene
    kinds = {(model.shape_info[a].kind, model.shape_info[b].kind) for a, b in model.pairs}
    assert kinds <= {("mesh", "sphere"), ("mesh", "capsule")} and len(model.pairs) >= 100
    data, hdata = model.create_data(), hulled.create_data()
    rng = np.random.default_rng(1)
    req, checked = distance_request(), 0
    for q in rng.uniform(-0.6, 0.6, (4, len(model.joint_names))):
        model.set_joint_positions(data, model.joint_names, q)
        hulled.set_joint_positions(hdata, hulled.joint_names, q)
        model.evaluate(data)
        hulled.evaluate(hdata)
        d, dh = data.distance, hdata.distance
        assert np.all(dh <= d + 1e-12)
        for p, (a, b) in enumerate(model.pairs):
            if d[p] <= 1e-6 or d[p] > 0.1:
                continue
            ga, ta = to_coal(model.shapes[a].transformed(data.body_R[model.shape_body[a]],
                                                        data.body_t[model.shape_body[a]]))
            gb, tb = to_coal(model.shapes[b].transformed(data.body_R[model.shape_body[b]],
                                                        data.body_t[model.shape_body[b]]))
            assert d[p] == pytest.approx(coal_distance(ga, ta, gb, tb, req)[0], abs=1e-9)
            checked += 1
    assert checked >= 50


def test_near_only_gives_the_same_contacts(scene):
    model, _ = scene
    rng = np.random.default_rng(2)
    a, b = model.create_data(), model.create_data()
    for q in rng.uniform(-0.6, 0.6, (4, len(model.joint_names))):
        model.set_joint_positions(a, model.joint_names, q)
        model.set_joint_positions(b, model.joint_names, q)
        ra = model.evaluate(a, report_distance=0.02)
        rb = model.evaluate(b, report_distance=0.02, near_only=True)
        assert len(ra.contact_index) > 0
        np.testing.assert_array_equal(ra.contact_rows, rb.contact_rows)
