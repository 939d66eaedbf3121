"""AMBF's own dVRK PSM (WPI-AIM/ambf, ``blender-psm.yaml``, test/model/adf_models/ambf) with its
concave collision meshes, as AMBF collides them: every link is a MESH shape (no ``collision mesh
type``), against instruments of every shape kind (a closed torus mesh among them) placed about
its links.

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


SHAPES = [{"collision shape": "SPHERE", "collision geometry": {"radius": 0.004}},
          {"collision shape": "CAPSULE", "collision geometry": {"radius": 0.003, "height": 0.04, "axis": "z"}},
          {"collision shape": "BOX", "collision geometry": {"x": 0.01, "y": 0.02, "z": 0.005}},
          {"collision shape": "CYLINDER", "collision geometry": {"radius": 0.004, "height": 0.02, "axis": "x"}},
          {"collision shape": "CONE", "collision geometry": {"radius": 0.006, "height": 0.015, "axis": "y"}},
          {"mesh": "phantom.obj"}]
"""The instruments' shapes in turn: every kind, the last a closed mesh (a small torus)."""


def torus_obj(path, R=0.012, r=0.004, n=24, m=12):
    """A closed torus (m) as an OBJ file: the phantom."""
    u, v = np.meshgrid(np.arange(n) * 2 * np.pi / n, np.arange(m) * 2 * np.pi / m, indexing="ij")
    P = np.stack([(R + r * np.cos(v)) * np.cos(u), (R + r * np.cos(v)) * np.sin(u), r * np.sin(v)], -1)
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a, b = i * m + j, ((i + 1) % n) * m + j
    c, d = ((i + 1) % n) * m + (j + 1) % m, i * m + (j + 1) % m
    F = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
    lines = [f"v {x} {y} {z}" for x, y, z in P.reshape(-1, 3)] + [f"f {p + 1} {q + 1} {w + 1}" for p, q, w in F]
    path.write_text("\n".join(lines) + "\n")


def instruments(tmp_path, centres, rng):
    """An ADF file of fixed bodies, one of :data:`SHAPES` in turn about each of ``centres``."""
    torus_obj(tmp_path / "phantom.obj")
    names = [f"BODY tool{i}" for i in range(len(centres))]
    doc = {"bodies": names, "ignore inter-collision": True}   # the instruments miss each other
    for i, (name, c) in enumerate(zip(names, centres)):
        c = c + rng.normal(size=3) * 0.03
        body = {"name": f"tool{i}", "mass": 0.0,
                "location": {"position": dict(zip("xyz", map(float, c))),
                             "orientation": dict(zip(("r", "p", "y"), map(float, rng.normal(size=3))))}}
        body.update(SHAPES[i % len(SHAPES)])
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
    centres = data.body_t[rng.integers(0, len(psm.body_names), 24)]
    path = instruments(tmp_path_factory.mktemp("psm"), centres, rng)
    return load([PSM, path]), load([PSM, path], hull_meshes=["*"])


def test_every_psm_link_is_its_concave_mesh():
    psm = load([PSM])
    assert {i.kind for i in psm.shape_info} == {"mesh"}
    # 14 links; 4 of their files hold a second closed shell through the first (mesh_parts.py)
    assert len({i.body for i in psm.shape_info}) == 14 and len(psm.shape_info) == 18
    hulls = load([PSM], hull_meshes=["*"])
    assert [i.kind for i in hulls.shape_info] == ["convex"] * 14   # one hull per file
    one = load([PSM], hull_meshes=["yaw link"])
    assert [i.body.split("/")[-1] for i in one.shape_info if i.kind == "convex"] == ["yawlink"]


def test_a_hull_meshes_pattern_matching_nothing_warns():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Model.from_files([PSM], hull_meshes=["no such body", "yaw link"])
    said = [str(w.message) for w in caught if "hull_meshes" in str(w.message)]
    assert len(said) == 1 and "'no such body' matches no body with a concave mesh" in said[0]


def body_pair_minima(model, distance):
    """{(body 1, body 2): the smallest distance of their shape pairs}: a body's solids as one."""
    out = {}
    for (b1, b2), d in zip(model.pair_bodies, distance):
        key = (model.body_names[b1], model.body_names[b2])
        out[key] = min(out.get(key, np.inf), d)
    return out


def test_psm_against_instruments_matches_coal_and_its_hull_is_never_farther(scene):
    model, hulled = scene
    kinds = {(model.shape_info[a].kind, model.shape_info[b].kind) for a, b in model.pairs}
    assert {b for _, b in kinds} == {"sphere", "capsule", "box", "cylinder", "cone", "mesh"}
    assert {a for a, _ in kinds} == {"mesh"} and len(model.pairs) >= 200
    data, hdata = model.create_data(), hulled.create_data()
    rng = np.random.default_rng(1)
    req, checked = distance_request(), 0
    for q in rng.uniform(-0.6, 0.6, (4, len(model.joint_names))):
        model.set_joint_positions(data, model.joint_names, q)
        hulled.set_joint_positions(hdata, hulled.joint_names, q)
        model.evaluate(data)
        hulled.evaluate(hdata)
        d = data.distance
        near, hull_near = body_pair_minima(model, d), body_pair_minima(hulled, hdata.distance)
        assert near.keys() == hull_near.keys()
        assert all(hull_near[k] <= near[k] + 1e-12 for k in near)
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
