"""Model/Data: compiled pairs, evaluate against coal called per pair and hand-derived distances."""

from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import EXAMPLES, REPO

from ambf_collision.geometry import shapes as S
from ambf_collision.geometry.transforms import quat_to_matrix, rpy_to_matrix
from ambf_collision.model import Model
from ambf_collision.model.filtering import Overrides

needs_examples = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")


def model(paths, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Model.from_files(paths, **kw)


# ----------------------------------------------------------------- independent coal reference

coal = pytest.importorskip("coal")


def _coal_geom(shape, R_body, t_body):
    """coal geometry and world transform of a body-frame shape (built here, not via the package)."""
    if shape.kind == S.SPHERE:
        return coal.Sphere(shape.radius), np.eye(3), R_body @ shape.center + t_body
    if shape.kind == S.CAPSULE:
        a, b = R_body @ shape.a + t_body, R_body @ shape.b + t_body
        u = b - a
        L = np.linalg.norm(u)
        z = u / L if L > 0 else np.array([0, 0, 1.0])
        x = np.cross(z, [1.0, 0, 0]) if abs(z[0]) < 0.9 else np.cross(z, [0, 1.0, 0])
        x /= np.linalg.norm(x)
        R = np.column_stack([x, np.cross(z, x), z])
        return coal.Capsule(shape.radius, L), R, 0.5 * (a + b)
    R = R_body @ quat_to_matrix(shape.orientation)
    t = R_body @ shape.position + t_body
    if shape.kind == S.BOX:
        return coal.Box(*shape.size), R, t
    if shape.kind == S.CYLINDER:
        return coal.Cylinder(shape.radius, shape.height), R, t
    if shape.kind == S.CONE:
        return coal.Cone(shape.radius, shape.height), R, t
    raise NotImplementedError(shape.kind)


def coal_distance(s1, P1, s2, P2):
    g1, R1, t1 = _coal_geom(s1, *P1)
    g2, R2, t2 = _coal_geom(s2, *P2)
    req, res = coal.DistanceRequest(), coal.DistanceResult()
    req.enable_signed_distance = True
    req.gjk_tolerance = 1e-10
    return coal.distance(g1, coal.Transform3s(R1, t1), g2, coal.Transform3s(R2, t2), req, res)


@needs_examples
@pytest.mark.parametrize("seed", [0, 1])
def test_evaluate_matches_coal_per_pair(seed):
    """All checked pairs of a multi-file world of primitives (boxes, cylinders, capsules,
    spheres, a cone) at random joint positions and a random root pose, against coal."""
    files = [EXAMPLES / n for n in ("ScrewDriverEnv_env.yaml", "puzzle2.yaml", "gripper4/gripper.yaml",
                                    "blender-toy-car.yaml", "peg_and_base.yaml")]
    m = model(files)
    d = m.create_data()
    rng = np.random.default_rng(seed)
    m.set_joint_positions(d, m.joint_names, rng.uniform(-0.8, 0.8, len(m.joint_names)) * 0.1)
    root = [(rpy_to_matrix(*rng.uniform(-0.3, 0.3, 3)), rng.uniform(-0.5, 0.5, 3)) for _ in files]
    r = m.evaluate(d, root_poses=root, report_distance=0.05)
    assert r.pairs_checked == len(m.pairs) > 150
    errs = []
    for k, (s1, s2) in enumerate(m.pairs):
        b1, b2 = m.pair_bodies[k]
        ref = coal_distance(m.shapes[s1], (r.body_R[b1], r.body_t[b1]), m.shapes[s2], (r.body_R[b2], r.body_t[b2]))
        errs.append(abs(ref - r.distances[k]))
    assert max(errs) < 1e-6
    assert np.all(np.isfinite(r.distances))
    assert r.min_distance == pytest.approx(r.distances.min())
    # contacts: exactly the pairs under the report distance, closest first
    below = np.flatnonzero(r.distances < 0.05)
    assert sorted(r.contact_index.tolist()) == sorted(below.tolist())
    dist = [c.distance for c in r.contacts]
    assert dist == sorted(dist)
    for c in r.contacts:  # witness points consistent with the signed distance and normal
        np.testing.assert_allclose(c.point_2, c.point_1 + c.distance * c.normal, atol=1e-6)
        np.testing.assert_allclose(c.position, 0.5 * (c.point_1 + c.point_2), atol=1e-12)


# ----------------------------------------------------------------- hand-derived


@needs_examples
def test_gripper4_tips_by_hand():
    """LeftTip/RightTip boxes (y extent 0.036) at y = -/+0.075: gap 0.15 - 0.036 = 0.114.
    Both prismatic joints at -0.04 close each tip by 0.04: gap 0.034."""
    m = model([EXAMPLES / "gripper4" / "gripper.yaml"])
    d = m.create_data()
    k = [i for i, (a, b) in enumerate(m.pair_bodies)
         if {m.body_plain_names[a], m.body_plain_names[b]} == {"LeftTip", "RightTip"}]
    assert len(k) == 1
    r = m.evaluate(d)
    assert r.distances[k[0]] == pytest.approx(0.114, abs=1e-4)
    assert m.set_joint_positions(d, ["Wrist-LeftTip", "Wrist-RightTip"], [-0.04, -0.04]) == []
    r = m.evaluate(d, report_distance=0.05)
    assert r.distances[k[0]] == pytest.approx(0.034, abs=1e-4)
    assert {(c.body_1, c.body_2) for c in r.contacts} >= {("/ambf/env/gripper/LeftTip", "/ambf/env/gripper/RightTip")}


@needs_examples
def test_kuka_on_floor_by_hand_and_root_pose():
    """base cylinder: body at z = -1.5, offset z 0.0599, half height 0.0595 -> bottom 0.0004 above
    the floor plane z = -1.5. Lowering the floor file by 0.1 adds 0.1."""
    files = [EXAMPLES / "blender-kuka-tip-sphere.yaml", EXAMPLES / "checkered_floor.yaml"]
    m = model(files)
    d = m.create_data()
    r = m.evaluate(d, report_distance=0.001)
    # 8 body pairs (link7 has no collision: its mesh is not shipped); kuka_tip has 2 shapes
    assert len(m.body_pairs) == 8 and r.pairs_checked == 9
    assert r.min_distance == pytest.approx(0.0004, abs=1e-9)
    (c,) = r.contacts
    assert (c.body_1, c.body_2, c.shape_1, c.shape_2) == ("/ambf/env/base", "/ambf/env/Plane", -1, -1)
    np.testing.assert_allclose(c.normal, [0, 0, -1], atol=1e-12)
    r = m.evaluate(d, root_poses={1: (np.eye(3), [0, 0, -0.1])}, report_distance=0.001)
    assert r.min_distance == pytest.approx(0.1004, abs=1e-9) and r.contacts == []
    # the root pose persists in Data until changed
    assert m.evaluate(d).min_distance == pytest.approx(0.1004, abs=1e-9)


def _compound_spheres_model(tmp_path):
    """Body A: a compound of two spheres r 0.1 at x = 0 and x = 1; body B: a sphere r 0.2 at
    x = 1.5 (pair distances 1.2 and 0.2)."""
    loc = lambda x: {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    doc = {
        "bodies": ["BODY A", "BODY B"],
        "BODY A": {"name": "A", "location": loc(0.0), "compound collision shape": [
            {"shape": "SPHERE", "geometry": {"radius": 0.1}},
            {"shape": "SPHERE", "geometry": {"radius": 0.1}, "offset": {"position": {"x": 1.0, "y": 0.0, "z": 0.0}}}]},
        "BODY B": {"name": "B", "location": loc(1.5), "collision shape": "SPHERE", "collision geometry": {"radius": 0.2}},
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(doc))
    m = Model.from_files([p])
    return m


def test_compound_shape_index_and_sphere_distance(tmp_path):
    """Two bodies: a compound of two spheres (r 0.1 at x = 0 and x = 1) and a sphere r 0.2 at
    x = 1.5. Closest pair is compound shape 1 vs the sphere: 0.5 - 0.3 = 0.2."""
    m = _compound_spheres_model(tmp_path)
    assert [(i.body, i.index, i.kind) for i in m.shape_info] == [
        ("/ambf/env/A", 0, "sphere"), ("/ambf/env/A", 1, "sphere"), ("/ambf/env/B", -1, "sphere")]
    assert m.pairs.tolist() == [[0, 2], [1, 2]]
    r = m.evaluate(m.create_data(), report_distance=1.5)
    np.testing.assert_allclose(r.distances, [1.2, 0.2], atol=1e-15)
    assert [(c.shape_1, c.shape_2) for c in r.contacts] == [(1, -1), (0, -1)]
    np.testing.assert_allclose(r.contacts[0].point_1, [1.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(r.contacts[0].normal, [1, 0, 0], atol=1e-15)


@needs_examples
def test_no_pairs_gives_inf_and_names():
    m = model([EXAMPLES / "blender-kuka-tip-sphere.yaml"])
    r = m.evaluate(m.create_data())
    assert r.pairs_checked == 0 and r.min_distance == math.inf and r.contacts == []
    assert r.closest == -1
    assert len(r.world) == len(m.shapes) == 9  # shapes posed even when no pair is checked
    np.testing.assert_allclose(r.world.a[0], [0.0009, -0.0002, -1.5 + 0.0599], atol=1e-12)
    assert m.joint_names[0] == "/ambf/env/base-link1" and "link1" in m.body_plain_names
    assert m.groups_of("/ambf/env/link3") == (0,) and m.groups_of("link3") == (0,)
    with pytest.raises(KeyError):
        m.groups_of("nope")
    poses = r.body_poses()
    np.testing.assert_allclose(poses["/ambf/env/base"][0], [0, 0, -1.5])


@needs_examples
def test_joint_positions_persist_and_unknown_reported():
    m = model([EXAMPLES / "blender-kuka-tip-sphere.yaml"])
    d = m.create_data()
    assert m.set_joint_positions(d, ["link1-link2", "bogus"], [0.5, 1.0]) == ["bogus"]
    assert m.set_joint_positions(d, ["/ambf/env/link2-link3"], [0.25]) == []
    q = dict(zip(m.joint_plain_names, d.q))
    assert q["link1-link2"] == 0.5 and q["link2-link3"] == 0.25 and q["base-link1"] == 0.0
    with pytest.raises(ValueError, match="link1-link2"):
        m.set_joint_positions(d, ["link1-link2"], [float("nan")])
    assert dict(zip(m.joint_plain_names, d.q))["link1-link2"] == 0.5


@needs_examples
def test_buffers_reused_and_overrides():
    files = [EXAMPLES / "blender-kuka-tip-sphere.yaml", EXAMPLES / "checkered_floor.yaml"]
    m = model(files, overrides=Overrides.from_strings(ignore=["Plane:base"], check=["link1:link5"]))
    names = {(m.body_plain_names[i], m.body_plain_names[j]) for i, j in m.body_pairs}
    assert ("base", "Plane") not in names and ("link1", "link5") in names
    d = m.create_data()
    r1 = m.evaluate(d)
    r2 = m.evaluate(d)
    assert r1.distances is r2.distances is d.distance
    assert r1.body_R is d.body_R


def _two_sphere_file(tmp_path):
    """A hinge about z at the origin carrying sphere B (r 0.1) at x = 1; sphere A (r 0.2) fixed
    at x = 1.5 on a second root: gap 0.5 - 0.3 = 0.2 at q = 0."""
    loc = lambda x: {"position": {"x": x, "y": 0.0, "z": 0.0}, "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}
    doc = {
        "bodies": ["BODY base", "BODY B", "BODY A"],
        "joints": ["JOINT hinge"],
        "BODY base": {"name": "base", "location": loc(0.0)},
        "BODY B": {"name": "B", "location": loc(0.0), "collision shape": "SPHERE",
                   "collision geometry": {"radius": 0.1},
                   "collision offset": {"position": {"x": 1.0, "y": 0.0, "z": 0.0},
                                        "orientation": {"r": 0.0, "p": 0.0, "y": 0.0}}},
        "BODY A": {"name": "A", "location": loc(1.5), "collision shape": "SPHERE",
                   "collision geometry": {"radius": 0.2}},
        "JOINT hinge": {"name": "hinge", "parent": "BODY base", "child": "BODY B", "type": "revolute",
                        "parent pivot": {"x": 0, "y": 0, "z": 0}, "parent axis": {"x": 0, "y": 0, "z": 1},
                        "child pivot": {"x": 0, "y": 0, "z": 0}, "child axis": {"x": 0, "y": 0, "z": 1}},
    }
    p = tmp_path / "hinge.yaml"
    p.write_text(yaml.safe_dump(doc))
    return Model.from_files([p])


def test_set_joint_positions_cached_names_stay_exact(tmp_path):
    """The per-name-list cache: repeated, reordered, partial and unknown name lists each give
    the same answer as the first time; the unknown list is a fresh list every call; a NaN is
    still refused with the joint's name after the names were cached."""
    m = _two_sphere_file(tmp_path)
    d = m.create_data()
    for _ in range(2):
        assert m.set_joint_positions(d, m.joint_names, [0.5]) == []
        assert d.q.tolist() == [0.5]
        assert m.set_joint_positions(d, ("hinge",), np.array([-0.25])) == []
        assert d.q.tolist() == [-0.25]
        unknown = m.set_joint_positions(d, ["nope", "hinge"], [9.0, 0.125])
        assert unknown == ["nope"] and d.q.tolist() == [0.125]
        unknown.append("mutated")  # must not leak into the cache
        with pytest.raises(ValueError, match="'hinge'"):
            m.set_joint_positions(d, ["nope", "hinge"], [1.0, float("inf")])
        with pytest.raises(ValueError, match="2 joint names but 1 positions"):
            m.set_joint_positions(d, ["nope", "hinge"], [1.0])
    assert d.q.tolist() == [0.125]


def test_contacts_and_vectorised_finite_check(tmp_path):
    """Hinge at q = 0: gap 0.2 along +x (hand-derived witness points); at q = pi/2 sphere B sits
    at (0, 1, 0): gap |(1.5,0,0)-(0,1,0)| - 0.3. contacts_finite() sees a NaN written into a
    reported row and nothing else."""
    m = _two_sphere_file(tmp_path)
    d = m.create_data()
    r = m.evaluate(d, report_distance=1.0)
    assert r.contacts_finite()
    (c,) = r.contacts
    assert (c.body_1, c.body_2) == ("/ambf/env/B", "/ambf/env/A") and c.distance == pytest.approx(0.2)
    np.testing.assert_allclose(c.point_1, [1.1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(c.point_2, [1.3, 0, 0], atol=1e-15)
    np.testing.assert_allclose(c.position, [1.2, 0, 0], atol=1e-15)
    np.testing.assert_allclose(c.normal, [1, 0, 0], atol=1e-15)
    m.set_joint_positions(d, ["hinge"], [math.pi / 2])
    r = m.evaluate(d, report_distance=2.0)
    (c,) = r.contacts
    assert c.distance == pytest.approx(math.hypot(1.5, 1.0) - 0.3, abs=1e-12)
    u = np.array([1.5, -1.0, 0.0]) / math.hypot(1.5, 1.0)  # from B's centre towards A's
    np.testing.assert_allclose(c.point_1, np.array([0.0, 1.0, 0.0]) + 0.1 * u, atol=1e-12)
    np.testing.assert_allclose(c.point_2, np.array([1.5, 0.0, 0.0]) - 0.2 * u, atol=1e-12)
    d.normal[r.contact_index[0], 1] = np.nan
    assert not r.contacts_finite()
    r = m.evaluate(d, report_distance=0.1)  # nothing reported: trivially finite
    assert r.contacts == [] and r.contacts_finite()


def test_near_only_publishes_the_same_along_the_demo_script():
    """evaluate(near_only=True), as the node calls it: along the demo joint script the contacts,
    the minimum distance and the closest pair equal those of the all-exact evaluation, the pairs
    it computed are bitwise equal, and the bounded ones are lower bounds."""

    from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array
    root = REPO
    model = Model.from_files([root / "examples" / "demo" / "demo_arm.yaml"])
    full, near = model.create_data(), model.create_data()
    bounded = 0
    for t in np.linspace(0.0, PERIOD, 400):
        q = demo_joint_array(t)
        model.set_joint_positions(full, JOINT_NAMES, q)
        model.set_joint_positions(near, JOINT_NAMES, q)
        a = model.evaluate(full, report_distance=0.05)
        b = model.evaluate(near, report_distance=0.05, near_only=True)
        assert full.exact.all()
        assert (a.min_distance, a.closest) == (b.min_distance, b.closest)
        assert [c.to_json() for c in a.contacts] == [c.to_json() for c in b.contacts]
        ex_ = near.exact
        for f in ("distance", "point_1", "point_2", "normal", "position"):
            assert np.array_equal(getattr(full, f)[ex_], getattr(near, f)[ex_])
        assert np.all(near.distance[~ex_] <= full.distance[~ex_])
        bounded += int((~ex_).sum())
    assert bounded > 0


def test_contact_selection_at_the_report_distance_and_data_rows(tmp_path):
    """Compound spheres (r 0.1 at x = 0 and 1) vs a sphere r 0.2 at x = 1.5: pair distances
    1.2 and 0.2. Contacts are the pairs strictly below the report distance, closest first;
    the closest pair and minimum are the same whether or not anything is reported; Data holds
    every pair's witnesses (hand-derived) after each evaluate."""
    m = _compound_spheres_model(tmp_path)
    d = m.create_data()
    for near_only in (False, True):
        for report, expected in ((0.1, []), (0.2, []), (0.2000001, [1]), (1.5, [1, 0]), (-1.0, [])):
            r = m.evaluate(d, report_distance=report, near_only=near_only)
            assert r.contact_index.tolist() == expected
            assert [c.shape_1 for c in r.contacts] == expected
            assert r.closest == 1 and r.min_distance == pytest.approx(0.2, abs=1e-15)
            assert r.contact_vectors.shape == (len(expected), 4, 3)
            np.testing.assert_allclose(d.distance, [1.2, 0.2], atol=1e-15)
            np.testing.assert_allclose(d.point_1, [[0.1, 0, 0], [1.1, 0, 0]], atol=1e-15)
            np.testing.assert_allclose(d.point_2, [[1.3, 0, 0], [1.3, 0, 0]], atol=1e-15)
            np.testing.assert_allclose(d.position, [[0.7, 0, 0], [1.2, 0, 0]], atol=1e-15)
            np.testing.assert_allclose(d.normal, [[1, 0, 0], [1, 0, 0]], atol=1e-15)


def test_contact_vectors_rows_and_contact_views(tmp_path):
    """contact_vectors row r = point_1, point_2, position, normal of contact r (closest first,
    gathered from Data's rows); each contact's vectors are views of its row; the gathered
    values stay when the next evaluate overwrites Data."""
    m = _compound_spheres_model(tmp_path)
    d = m.create_data()
    r = m.evaluate(d, report_distance=1.5)
    assert r.contact_index.tolist() == [1, 0]
    expect = np.stack([np.stack([d.point_1[k], d.point_2[k], d.position[k], d.normal[k]])
                       for k in (1, 0)])
    assert np.array_equal(r.contact_vectors, expect)
    for c, row in zip(r.contacts, r.contact_vectors):
        for i, v in enumerate((c.point_1, c.point_2, c.position, c.normal)):
            assert np.shares_memory(v, r.contact_vectors) and np.array_equal(v, row[i])
    assert not np.shares_memory(r.contact_vectors, d.buffer)
    d.results["point_1"] = np.nan
    m.evaluate(d, report_distance=1.5)
    assert np.array_equal(r.contact_vectors, expect)


# ----------------------------------------------------------------- Model / Data split, loops

def test_two_data_of_one_model_keep_their_own_results():
    """Two Data of the demo arm at different joint positions, evaluated alternately: after the
    other one is evaluated, each result still holds its own poses, world shapes and distances
    (oracle: a third Data evaluated alone at the same positions, compared bitwise)."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

    m = Model.from_files([REPO / "examples" / "demo" / "demo_arm.yaml"])
    d1, d2, alone = m.create_data(), m.create_data(), m.create_data()
    q1, q2 = demo_joint_array(1.0), demo_joint_array(4.0)
    assert not np.allclose(q1, q2)
    m.set_joint_positions(d1, JOINT_NAMES, q1)
    m.set_joint_positions(d2, JOINT_NAMES, q2)
    expected = {}
    for key, q in (("1", q1), ("2", q2)):
        m.set_joint_positions(alone, JOINT_NAMES, q)
        r = m.evaluate(alone, report_distance=0.5)
        expected[key] = (r.body_t.copy(), r.world.table.copy(), r.distances.copy(),
                         [c.to_json() for c in r.contacts])
    for _ in range(3):
        r1 = m.evaluate(d1, report_distance=0.5)
        r2 = m.evaluate(d2, report_distance=0.5)
        for key, r in (("1", r1), ("2", r2)):
            t, world, dist, contacts = expected[key]
            assert np.array_equal(r.body_t, t) and r.world.table.tobytes() == world.tobytes()
            assert np.array_equal(r.distances, dist)
            assert [c.to_json() for c in r.contacts] == contacts
    assert r1.world is d1.world and r2.world is d2.world and d1.world is not d2.world
    assert not np.shares_memory(d1.body_R, d2.body_R) and not np.shares_memory(d1.q, d2.q)


def test_closure_residuals_and_couplings_in_the_model():
    """The PSM-like parallelogram with its couplings file: only the pitch joint published, the
    result's loop residual is 0 (the closure joint named); an inconsistent state without
    couplings shows the chord 2 * 0.3 * sin(delta / 2), an open loop above LOOP_OPEN_POSITION
    (5 mm: delta = 0.1 gives 30 mm, delta = 0.016 gives 4.8 mm)."""
    models = Path(__file__).resolve().parent / "kin_models"
    m = model([models / "parallelogram.yaml"], couplings=models / "parallelogram_couplings.yaml")
    assert m.closure_joint_names == ["/psm_like/pitchfrontlink-pitchbottomlink"]
    d = m.create_data()
    assert m.set_joint_positions(d, ["yawlink-pitchbacklink"], [0.6]) == []
    r = m.evaluate(d)
    np.testing.assert_allclose(r.closure_residuals, [[0.0, 0.0]], atol=1e-15)
    assert d.q.tolist() == [0.6, 0.6, -0.6, 0.0]
    free = model([models / "parallelogram.yaml"])
    d = free.create_data()
    free.set_joint_positions(d, ["yaw link-pitch back link", "yaw link-pitch front link",
                                 "pitch back link-pitch bottom link"], [0.6, 0.7, -0.6])
    r = free.evaluate(d)
    assert r.closure_residuals[0, 0] == pytest.approx(2 * 0.3 * math.sin(0.05), rel=1e-12)
    assert r.closure_residuals is d.closure_residuals
    assert r.open_loops() == [("/psm_like/pitchfrontlink-pitchbottomlink", r.closure_residuals[0, 0], 0.0)]
    free.set_joint_positions(d, ["yaw link-pitch front link"], [0.6 + 0.016])  # chord 4.8 mm: closed
    assert free.evaluate(d).open_loops() == []


def test_a_data_along_a_trajectory_equals_a_fresh_data_at_every_pose():
    """Pairs of two shapes that did not move keep their exact rows (evaluate_pairs): the demo
    arm's base, floor and table are fixed in the world, so after the first evaluation their
    pairs are kept while the arm moves. Oracle: a new Data per pose (nothing to keep), compared
    bit for bit, with and without near_only; the moved flags by hand (the demo file: base, floor
    and table have no parent joint); a root pose moves every shape."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array

    model = Model.from_files([REPO / "examples" / "demo" / "demo_arm.yaml"])
    fixed = {"base", "floor", "table"}
    fixed_shapes = np.array([model.body_names[b].rsplit("/", 1)[-1] in fixed for b in model.shape_body])
    assert fixed_shapes.sum() == 3
    data = model.create_data()
    fields = ("distance", "point_1", "point_2", "normal", "position", "exact")
    shift = (rpy_to_matrix(0.0, 0.0, 0.3), np.array([0.2, -0.1, 0.05]))
    arm_moved = 0
    for i, t in enumerate(np.linspace(0.0, PERIOD, 60)):
        near_only = i % 3 == 1
        roots = [shift] if i == 40 else None
        model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(t))
        r = model.evaluate(data, root_poses=roots, near_only=near_only)
        fresh = model.create_data()
        if i >= 40:
            model.set_root_poses(fresh, [shift])
        model.set_joint_positions(fresh, JOINT_NAMES, demo_joint_array(t))
        f = model.evaluate(fresh, near_only=near_only)
        exact = data.exact & fresh.exact   # a kept row can be exact where a fresh one is a bound
        for name in fields[:-1]:
            assert getattr(data, name)[exact].tobytes() == getattr(fresh, name)[exact].tobytes(), name
        assert np.all(data.distance[~data.exact] <= fresh.distance[~data.exact])
        assert (r.min_distance, r.closest) == (f.min_distance, f.closest)
        assert [c.to_json() for c in r.contacts] == [c.to_json() for c in f.contacts]
        assert r.jacobians.tobytes() == f.jacobians.tobytes()
        moved = data.shape_moved.astype(bool)
        if i == 40:
            assert moved.all()
        elif i > 0:   # (the first evaluation computes every pair: no row is exact yet)
            assert not moved[fixed_shapes].any()
            arm_moved += bool(moved[~fixed_shapes].any())
    assert arm_moved > 40   # the script holds still now and then


@pytest.mark.slow
def test_the_separate_callees_have_the_types_evaluate_calls_them_with(tmp_path):
    """``Model.separate_callees`` gives each function with arguments of the types evaluate's
    kernel passes it: a version compiled ahead for them (the node: in a second process,
    ``monitor/jit.py``) is the one the kernel then uses. In a fresh process on an empty cache, after
    compiling them for those types, the kernel's first compilation (which types every call down
    to EPA) leaves each with that one version. About a minute: everything compiles."""
    from conftest import run_fresh_python

    code = f"""
from numba import typeof
from ambf_collision.model import Model
m = Model.from_files([{str(REPO / "examples" / "demo" / "demo_arm.yaml")!r}])
data = m.create_data()
calls = m.separate_callees(data)
declared = [tuple(typeof(a) for a in args) for _, args in calls]
for (kernel, _), types in zip(calls, declared):
    kernel.compile(types)
m.evaluate(data)
print([(kernel.py_func.__name__, kernel.signatures == [types])
       for (kernel, _), types in zip(calls, declared)])
"""
    assert run_fresh_python(code, NUMBA_CACHE_DIR=str(tmp_path)) == str([("epa_penetration", True),
                                               ("contact_order", True)])
