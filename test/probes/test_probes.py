"""Kinematic tactile probes (issue 5): file format, patch geometry, contact semantics
derived by hand, d_surf against coal, proximity distance, and invariance of the model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from conftest import REPO
from ambf_collision.probes.probe_set import (
    PatchSpec,
    ProbeError,
    ProbeSet,
    ProbeSpec,
    load_probe_file,
    parse_probe_document,
    probe_report_json,
    probe_report_table,
)
from ambf_collision.geometry.pairs import LinkShapes, point_signed_distance
from ambf_collision.geometry.shapes import Box, Capsule, Cone, ConvexHull, Cylinder, Plane, Sphere
from ambf_collision.geometry.transforms import axis_angle_to_matrix


# ----------------------------------------------------------------------------- helpers

class Scene:
    """Bodies with shapes fixed in their frames, posed by (R, t) per body."""

    def __init__(self, bodies):
        self.body_names = [f"/ambf/env/{b}" for b in bodies]
        self.shapes, self.shape_body = [], []
        B = len(bodies)
        self.R = np.repeat(np.eye(3)[None], B, axis=0)
        self.t = np.zeros((B, 3))

    def add(self, body, shape):
        self.shapes.append(shape)
        self.shape_body.append(self.body_names.index(f"/ambf/env/{body}"))

    def pose(self, body, R=None, t=None):
        b = self.body_names.index(f"/ambf/env/{body}")
        if R is not None:
            self.R[b] = R
        if t is not None:
            self.t[b] = t

    def world(self):
        if getattr(self, "_link", None) is None:
            self._link = LinkShapes(self.shapes, self.shape_body)
        return self._link.to_world(self.R, self.t)

    def probe_set(self, specs, **kw):
        return ProbeSet.from_shapes(specs, self.body_names, self.shapes, self.shape_body, **kw)

    def evaluate(self, ps):
        return ps.evaluate(self.R, self.t, self.world())


def probe(name="p", body="/ambf/env/finger", position=(0, 0, 0), normal=(0, 0, -1),
          radius=0.004, stiffness=2000.0, **kw):
    n = np.asarray(normal, float)
    return ProbeSpec(name, body, np.asarray(position, float), n / np.linalg.norm(n), radius,
                     stiffness, **kw)


# ----------------------------------------------------------------------------- hand-derived

def _plane_scene():
    sc = Scene(["finger", "floor"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    return sc


@pytest.mark.parametrize("h", [0.0035, 0.002, 0.0001, 0.0])
def test_probe_above_plane_depth_area_force(h):
    """Height h < r over the plane z = 0: depth r-h, area pi(2r(r-h)-(r-h)^2), force
    k(r-h) along +z; body rotated so the body-frame force is R^T f."""
    r, k = 0.004, 2000.0
    sc = _plane_scene()
    R = axis_angle_to_matrix([1.0, 2.0, 0.5], 0.7)
    # local sensor normal chosen so that the world normal is -z (facing the floor)
    sc.pose("finger", R=R, t=[0.3, -0.2, h])
    ps = sc.probe_set([probe(normal=R.T @ np.array([0, 0, -1.0]), radius=r, stiffness=k)])
    res = sc.evaluate(ps)
    pen = r - h
    assert res.in_contact[0]
    assert res.depth[0] == pytest.approx(pen, abs=1e-15)
    assert res.area[0] == pytest.approx(math.pi * (2 * r * pen - pen**2), rel=1e-12)
    np.testing.assert_allclose(res.force[0], [0, 0, k * pen], atol=1e-12)
    np.testing.assert_allclose(res.force_body[0], R.T @ np.array([0, 0, k * pen]), atol=1e-12)
    np.testing.assert_allclose(res.contact_normal[0], [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(res.normal[0], [0, 0, -1], atol=1e-12)
    np.testing.assert_allclose(res.position[0], [0.3, -0.2, h], atol=1e-15)
    assert res.touching_body[0] == 1 and res.touching_shape[0] == 0
    assert res.distance[0] == pytest.approx(-pen, abs=1e-15)


@pytest.mark.parametrize("normal", [(0, 0, 1), (1, 0, 0), (0.3, 0, 1)])
def test_probe_turned_away_senses_nothing(normal):
    """Same probe, sensor normal not facing the plane (n_c . n_s >= 0): no contact, no
    force, no area, and no proximity either."""
    sc = _plane_scene()
    sc.pose("finger", t=[0, 0, 0.002])
    res = sc.evaluate(sc.probe_set([probe(normal=normal)]))
    assert not res.in_contact[0]
    assert res.depth[0] == 0 and res.area[0] == 0
    assert np.all(res.force[0] == 0) and np.all(res.contact_normal[0] == 0)
    assert res.touching_body[0] == -1 and res.touching_shape[0] == -1
    assert res.distance[0] == math.inf


def test_two_overlapping_shapes_add_force_and_area_take_larger_depth():
    """Floor z = 0 and wall x = 0 (body 'wall'); probe at (0.001, 0, 0.002) facing both:
    d_pen 0.003 (wall) and 0.002 (floor)."""
    r, k = 0.004, 1500.0
    sc = Scene(["finger", "floor", "wall"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    sc.add("wall", Plane([1, 0, 0], 0.0))
    sc.pose("finger", t=[0.001, 0.0, 0.002])
    res = sc.evaluate(sc.probe_set([probe(normal=(-1, 0, -1), radius=r, stiffness=k)]))
    pw, pf = r - 0.001, r - 0.002
    assert res.depth[0] == pytest.approx(pw, abs=1e-15)
    np.testing.assert_allclose(res.force[0], [k * pw, 0, k * pf], atol=1e-12)
    area = math.pi * (2 * r * pw - pw**2) + math.pi * (2 * r * pf - pf**2)
    assert res.area[0] == pytest.approx(area, rel=1e-12)
    np.testing.assert_allclose(res.contact_normal[0], [1, 0, 0])
    assert res.touching_body[0] == 2 and res.touching_shape[0] == 1
    assert res.distance[0] == pytest.approx(-pw, abs=1e-15)


@pytest.mark.parametrize("inside, clamped", [(0.002, False), (0.005, True)])
def test_probe_centre_inside_a_box(inside, clamped):
    """Centre `inside` below the top face of a 0.1 m cube: d_surf = -inside, n_c = +z;
    d_pen = r + inside, clamped to 2r (area then 0)."""
    r, k = 0.004, 1000.0
    sc = Scene(["finger", "block"])
    sc.add("block", Box([0.1, 0.1, 0.1]))
    sc.pose("block", R=axis_angle_to_matrix([0, 0, 1], 0.3), t=[0.5, 0.5, 0.05])
    sc.pose("finger", t=[0.5, 0.5, 0.1 - inside])
    res = sc.evaluate(sc.probe_set([probe(radius=r, stiffness=k)]))
    pen = min(r + inside, 2 * r)
    assert (r + inside > 2 * r) == clamped
    assert res.in_contact[0]
    assert res.depth[0] == pytest.approx(pen, abs=1e-15)
    assert res.area[0] == pytest.approx(math.pi * (2 * r * pen - pen**2), abs=1e-18)
    np.testing.assert_allclose(res.force[0], [0, 0, k * pen], atol=1e-12)
    assert res.distance[0] == pytest.approx(-inside - r, abs=1e-15)


def test_own_body_excluded_unless_asked():
    """A probe on the surface of its own body's sphere senses it only with
    include_own_body."""
    sc = Scene(["finger", "floor"])
    sc.add("finger", Sphere([0, 0, 0], 0.02))
    sc.pose("finger", t=[0, 0, 1.0])  # far above the floor
    spec = dict(position=(0, 0, 0.021), normal=(0, 0, -1))
    res = sc.evaluate(sc.probe_set([probe(**spec)]))
    assert not res.in_contact[0] and res.distance[0] == math.inf
    res = sc.evaluate(sc.probe_set([probe(**spec, include_own_body=True)]))
    assert res.in_contact[0] and res.depth[0] == pytest.approx(0.003, abs=1e-15)


def test_sense_limits_bodies_and_groups():
    """sense by name pattern and by collision group; the other body is not felt."""
    sc = Scene(["finger", "floor", "wall"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    sc.add("wall", Plane([1, 0, 0], 0.0))
    sc.pose("finger", t=[0.001, 0.0, 0.002])
    groups = {"/ambf/env/finger": [0], "/ambf/env/floor": [1], "/ambf/env/wall": [2, 3]}
    specs = [
        probe("floor_only", normal=(-1, 0, -1), sense_bodies=("fl*",)),
        probe("wall_by_group", normal=(-1, 0, -1), sense_groups=(3,)),
        probe("both", normal=(-1, 0, -1)),
    ]
    res = sc.evaluate(sc.probe_set(specs, groups_of=groups.__getitem__))
    assert list(res.touching_body) == [1, 2, 2]
    assert list(res.depth) == pytest.approx([0.002, 0.003, 0.003], abs=1e-15)
    assert res.force[0, 0] == 0 and res.force[1, 2] == 0


def test_proximity_distance_and_range():
    """Free probe: distance = min(d_surf - r) over facing shapes within range, +inf beyond."""
    r = 0.004
    sc = Scene(["finger", "floor", "ball"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    sc.add("ball", Sphere([0, 0, 0], 0.01))
    sc.pose("ball", t=[0.0, 0.0, 0.05])
    sc.pose("finger", t=[0.0, 0.0, 0.02])
    specs = [
        probe("down", normal=(0, 0, -1), radius=r),          # floor at 0.02 -> 0.016
        probe("up", normal=(0, 0, 1), radius=r),             # ball surface at 0.04 -> 0.016
        probe("up_short", normal=(0, 0, 1), radius=r, range=0.01),  # beyond its range
        probe("up_off", position=(0, 0.001, 0.0), normal=(0, 0, 1), radius=r),
    ]
    res = sc.evaluate(sc.probe_set(specs))
    assert not res.in_contact.any()
    assert res.distance[0] == pytest.approx(0.016, abs=1e-15)
    assert res.distance[1] == pytest.approx(0.016, abs=1e-15)
    assert res.distance[2] == math.inf
    expect = math.hypot(0.001, 0.03) - 0.01 - r
    assert res.distance[3] == pytest.approx(expect, abs=1e-15)
    # default range 0.05 m: just inside it is finite, just beyond it +inf (ball moved away)
    sc.pose("ball", t=[1.0, 1.0, 1.0])
    ps = sc.probe_set([probe("down", normal=(0, 0, -1), radius=r)])
    sc.pose("finger", t=[0.0, 0.0, 0.05 + r - 1e-4])
    assert sc.evaluate(ps).distance[0] == pytest.approx(0.0499, abs=1e-15)
    sc.pose("finger", t=[0.0, 0.0, 0.05 + r + 1e-4])
    assert sc.evaluate(ps).distance[0] == math.inf


def _pressed_pad():
    """A 2 x 3 patch (k = 1000 N/m, r = 2 mm) and a single probe on the finger, 1 mm above the
    plane z = 0 and facing it: ``(scene, probe set, result)``."""
    sc = _plane_scene()
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                      np.array([1.0, 0, 0]), 0.003, 0.002, 1000.0, rows=2, cols=3)
    ps = sc.probe_set([patch, probe("single")])
    sc.pose("finger", t=[0, 0, 0.001])
    return sc, ps, sc.evaluate(ps)


def test_patch_totals_and_result_buffers_reset():
    """Patch totals sum the probes; a second evaluation with the body lifted clears them."""
    sc, ps, res = _pressed_pad()
    assert res.patch_names == ["pad"] and res.names[:6] == [f"pad/{i}" for i in range(6)]
    pen = 0.001
    np.testing.assert_allclose(res.patch_force[0], [0, 0, 6 * 1000.0 * pen], atol=1e-12)
    assert res.patch_area[0] == pytest.approx(6 * math.pi * (2 * 0.002 * pen - pen**2))
    assert res.patch_in_contact[0] == 6
    sc.pose("finger", t=[0, 0, 1.0])
    res = sc.evaluate(ps)
    assert res.patch_in_contact[0] == 0 and not res.in_contact.any()
    assert np.all(res.force == 0) and np.all(res.patch_force == 0) and np.all(res.distance == math.inf)


def test_finite_buffers_hold_exactly_the_float_fields():
    """``finite_buffers`` (what the monitor's NaN guard tests) are float arrays made of the
    float fields and nothing else: every element of every buffer belongs to exactly one of
    them, and a value written into a field shows in a buffer."""
    res = _pressed_pad()[2]
    fields = ("position", "normal", "depth", "area", "force", "force_body", "contact_normal",
              "patch_force", "patch_area")
    bufs = res.finite_buffers
    assert bufs and all(b.dtype == np.float64 for b in bufs)
    owner = [np.zeros(b.shape, dtype=int) for b in bufs]
    for name in fields:
        arr = getattr(res, name)
        hits = [k for k, b in enumerate(bufs) if np.shares_memory(arr, b)]
        assert len(hits) == 1, name
        k = hits[0]
        saved = arr.copy()
        arr[...] = np.nan  # marks exactly this field's elements in its buffer
        owner[k] += np.isnan(bufs[k])
        arr[...] = saved
    for k, b in enumerate(bufs):
        assert np.all(owner[k] == 1) and np.isfinite(b).all(), k
    for name in fields:
        getattr(res, name).reshape(-1)[-1] = np.inf
        assert not all(np.isfinite(b).all() for b in bufs), name
        getattr(res, name).reshape(-1)[-1] = 0.0


def test_broadphase_matches_brute_force_on_random_scene():
    """Many probes on several bodies, spheres and boxes and a plane: the broadphase result
    equals a brute-force evaluation over every (probe, shape) pair."""
    rng = np.random.default_rng(7)
    bodies = ["hand", "a", "b", "c", "floor"]
    sc = Scene(bodies)
    for b in "abc":
        for _ in range(4):
            sc.add(b, Sphere(rng.uniform(-0.05, 0.05, 3), rng.uniform(0.005, 0.03)))
            sc.add(b, Box(rng.uniform(0.01, 0.06, 3), rng.uniform(-0.05, 0.05, 3),
                          rng.normal(size=4)))
    sc.add("floor", Plane([0, 0, 1], -0.02))
    for b in "abc":
        sc.pose(b, R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)),
                t=rng.uniform(-0.08, 0.08, 3))
    sc.pose("hand", R=axis_angle_to_matrix([0, 1, 0], 0.4), t=[0, 0, 0.01])
    specs = [probe(f"p{i}", body="/ambf/env/hand", position=rng.uniform(-0.1, 0.1, 3), normal=rng.normal(size=3),
                   radius=rng.uniform(0.002, 0.01), range=0.02) for i in range(600)]
    ps = sc.probe_set(specs, cluster_size=16)
    res = sc.evaluate(ps)
    assert 0 < ps.result.pairs_checked < len(specs) * len(sc.shapes)
    world = sc.world()
    # brute force
    N, S = len(specs), len(sc.shapes)
    pi = np.repeat(np.arange(N), S)
    si = np.tile(np.arange(S), N)
    d, _, nc = point_signed_distance(world, si, res.position[pi])
    d, nc = d.reshape(N, S), nc.reshape(N, S, 3)
    r = ps.radius[:, None]
    facing = np.einsum("nsk,nk->ns", nc, res.normal) < 0
    gap = np.where(facing & (d - r <= ps.range[:, None]), d - r, np.inf)
    touch = facing & (d < r)
    pen = np.where(touch, np.clip(r - d, 0, 2 * r), 0.0)
    np.testing.assert_allclose(res.distance, gap.min(1), atol=1e-15)
    np.testing.assert_allclose(res.depth, np.where(touch.any(1), pen.max(1), 0), atol=1e-15)
    np.testing.assert_allclose(res.force, np.einsum("ns,nsk->nk", ps.stiffness[:, None] * pen, nc), atol=1e-12)
    np.testing.assert_allclose(res.area, (np.pi * (2 * r * pen - pen**2)).sum(1), atol=1e-16)
    assert np.array_equal(res.in_contact, touch.any(1))
    assert res.in_contact.sum() > 20 and np.isfinite(res.distance).sum() > res.in_contact.sum()
    deepest = np.where(touch.any(1), np.argmin(np.where(touch, d, np.inf), axis=1), -1)
    assert np.array_equal(res.touching_shape, deepest)


# ----------------------------------------------------------------------------- against coal

def _random_shape(kind, rng):
    """A random shape (body frame) and its coal twin with the coal transform."""
    coal = pytest.importorskip("coal")
    q = rng.normal(size=4)
    q /= np.linalg.norm(q)
    p = rng.uniform(-0.05, 0.05, 3)
    if kind == "sphere":
        s = Sphere(p, rng.uniform(0.01, 0.05))
        return s, coal.Sphere(s.radius), np.eye(3), s.center
    if kind == "capsule":
        a, b = p, p + rng.uniform(-0.1, 0.1, 3)
        s = Capsule(a, b, rng.uniform(0.01, 0.04))
        axis = b - a
        R = axis_angle_to_matrix(np.cross([0, 0, 1.0], axis), math.acos(axis[2] / np.linalg.norm(axis)))
        return s, coal.Capsule(s.radius, float(np.linalg.norm(axis))), R, 0.5 * (a + b)
    if kind == "box":
        s = Box(rng.uniform(0.02, 0.1, 3), p, q)
        return s, coal.Box(*s.size), s.rotation, s.position
    if kind in ("cylinder", "cone"):
        cls, ccls = (Cylinder, coal.Cylinder) if kind == "cylinder" else (Cone, coal.Cone)
        s = cls(rng.uniform(0.01, 0.05), rng.uniform(0.02, 0.1), p, q)
        return s, ccls(s.radius, s.height), s.rotation, s.position
    if kind == "plane":
        n = rng.normal(size=3)
        s = Plane(n, rng.uniform(-0.02, 0.02))
        return s, coal.Halfspace(s.normal, s.offset), np.eye(3), np.zeros(3)
    raise ValueError(kind)


KINDS = ["sphere", "capsule", "box", "cylinder", "cone", "plane"]


@pytest.mark.parametrize("kind", KINDS)
def test_d_surf_against_coal(kind):
    """Probe d_surf (= distance + radius) equals coal's signed distance between a point-sized
    coal.Sphere and the shape, for random shapes on a moved body and random probe centres
    inside and outside, within 1e-9 m. The probe's reported gap is checked through
    `distance` (range large, sensor normal chosen to face the shape)."""
    coal = pytest.importorskip("coal")
    rng = np.random.default_rng(KINDS.index(kind))
    inside = outside = 0
    for trial in range(12):
        shape, cshape, R_loc, t_loc = _random_shape(kind, rng)
        sc = Scene(["finger", "thing"])
        sc.add("thing", shape)
        Rb = axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, math.pi))
        tb = rng.uniform(-0.1, 0.1, 3)
        sc.pose("thing", R=Rb, t=tb)
        centre = Rb @ t_loc + tb
        centres = np.concatenate([centre + rng.uniform(-0.12, 0.12, (14, 3)),
                                  centre + rng.uniform(-0.006, 0.006, (6, 3))])
        # exact d_surf and outward normal from the package, to orient each probe to face it
        world = sc.world()
        d_pkg, _, n_pkg = point_signed_distance(world, np.zeros(len(centres), int), centres)
        specs = [probe(f"p{i}", position=c, normal=-n, radius=1e-3, range=10.0)
                 for i, (c, n) in enumerate(zip(centres, n_pkg))]
        res = sc.evaluate(sc.probe_set(specs))
        Tc = coal.Transform3s(Rb @ R_loc, Rb @ t_loc + tb)
        req = coal.DistanceRequest()
        req.gjk_tolerance = 1e-13
        req.epa_tolerance = 1e-13
        for i, c in enumerate(centres):
            out = coal.DistanceResult()
            dc = coal.distance(coal.Sphere(0.0), coal.Transform3s(np.eye(3), c), cshape, Tc, req, out)
            if kind == "cylinder" and dc < 0:
                # coal 3.0.3 reports the lateral depth r - rho for a point inside a cylinder even
                # when a cap is nearer (checked: wrong for ~2/3 of random inside points); use
                # the closed form -min(r - rho, h/2 - |z|) in the cylinder frame instead.
                ql = (Rb @ R_loc).T @ (c - (Rb @ t_loc + tb))
                dc = -min(shape.radius - math.hypot(ql[0], ql[1]), shape.height / 2 - abs(ql[2]))
            assert res.distance[i] + 1e-3 == pytest.approx(dc, abs=1e-9), (kind, trial, i)
            assert d_pkg[i] == pytest.approx(dc, abs=1e-9)
            inside += dc < 0
            outside += dc > 0
    assert outside > 20 and inside > 20


# ----------------------------------------------------------------------------- with the model

DEMO = REPO / "examples" / "demo"


@pytest.fixture(scope="module")
def demo():
    from ambf_collision.model import Model

    model = Model.from_files([DEMO / "demo_arm.yaml"])
    specs = load_probe_file(DEMO / "demo_probes.yaml", model.body_names)
    return model, specs


def _snapshot(ev):
    return (ev.distances.copy(), ev.body_R.copy(), ev.body_t.copy(), ev.min_distance,
            [(c.body_1, c.body_2, c.shape_1, c.shape_2, c.distance, c.point_1.tobytes(),
              c.point_2.tobytes(), c.normal.tobytes(), c.position.tobytes()) for c in ev.contacts])


def test_probes_never_change_collision_results(demo):
    """Along the demo trajectory, every model output (distances, contacts, poses) is
    bit-identical with and without a ProbeSet evaluated in the same cycle."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

    model, specs = demo
    ps = ProbeSet.from_model(specs, model)
    d_plain, d_probed = model.create_data(), model.create_data()
    touched = 0
    for t in np.linspace(0.0, 16.0, 33):
        q = demo_joint_array(t)
        model.set_joint_positions(d_plain, JOINT_NAMES, q)
        plain = _snapshot(model.evaluate(d_plain))
        model.set_joint_positions(d_probed, JOINT_NAMES, q)
        ev = model.evaluate(d_probed)
        res = ps.evaluate_model(ev)
        touched += int(res.in_contact.sum())
        after = _snapshot(ev)
        again = _snapshot(model.evaluate(d_probed))
        for snap in (after, again):
            for a, b in zip(plain[:3], snap[:3]):
                assert np.array_equal(a, b)
            assert plain[3] == snap[3] and plain[4] == snap[4]
    assert touched > 0  # the probes really felt something during the run


def test_demo_pad_presses_on_table(demo):
    """Demo probe-touch pose: the fingertip pad (radius 2.5 mm, k 2000 N/m) is pushed into the
    table top at z = 0.15 + 0.3/2 = 0.30 m (the ADF's location and box size): each pad probe's
    depth is r - (z - 0.30), force k*depth along +z; the side probes feel nothing in contact."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

    model, specs = demo
    ps = ProbeSet.from_model(specs, model)
    data = model.create_data()
    model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(12.0))
    res = ps.evaluate_model(model.evaluate(data))
    pad = np.array([n.startswith("pad/") for n in res.names])
    z = res.position[pad, 2]
    depth = 0.0025 - (z - 0.30)
    assert np.all(depth > 0.004)
    np.testing.assert_allclose(res.depth[pad], depth, atol=1e-12)
    np.testing.assert_allclose(res.force[pad], np.outer(2000.0 * depth, [0, 0, 1]), atol=1e-9)
    table = model.body_names.index("/ambf/env/table")
    assert np.all(res.touching_body[pad] == table)
    assert not res.in_contact[~pad].any()
    assert res.patch_in_contact[0] == 16
    np.testing.assert_allclose(res.patch_force[0], res.force[pad].sum(0), atol=1e-12)
    rep = probe_report_json(ps, res, model)
    assert set(rep) == {"probes", "patches"} and len(rep["probes"]) == len(ps)
    p0 = rep["probes"][ps.names.index("pad/0")]
    assert set(p0) == {"name", "body", "in_contact", "depth", "area", "force", "contact_normal",
                       "distance", "touching_body", "position", "normal"}
    assert p0["touching_body"] == "/ambf/env/table" and p0["body"] == "/ambf/env/fingertip"
    assert p0["in_contact"] is True and len(p0["force"]) == 3
    side = rep["probes"][ps.names.index("fingertip_side")]
    assert side["touching_body"] is None and side["in_contact"] is False
    assert rep["patches"]["pad"]["in_contact"] == 16
    json.dumps(rep, allow_nan=False)  # valid JSON, no NaN/inf
    table_txt = probe_report_table(ps, res, model)
    assert "pad/15" in table_txt and "table" in table_txt


def test_model_groups_limit_sensing(demo):
    """`sense: {groups: [1]}` on the pad: the table (group 0 only) is no longer felt."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

    model, _ = demo
    doc = {"patches": [{"name": "pad", "body": "fingertip", "origin": [0, 0, 0.025],
                        "normal": [0, 0, 1], "direction": [1, 0, 0], "spacing": 0.003,
                        "rows": 2, "cols": 2, "radius": 0.0025, "stiffness": 2000.0,
                        "sense": {"groups": [1]}}]}
    ps = ProbeSet.from_model(parse_probe_document(doc, "g.yaml", model.body_names), model)
    data = model.create_data()
    model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(12.0))
    res = ps.evaluate_model(model.evaluate(data))
    assert not res.in_contact.any()
    assert model.body_names.index("/ambf/env/table") not in res.touching_body


def test_check_extension_adds_probe_report(demo, tmp_path):
    """ProbeCheckExtension: --probes adds the JSON sections and table lines; a bad file raises
    ProbeError naming it; without --probes nothing changes."""
    import argparse

    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array
    from ambf_collision.probes.probe_set import ProbeCheckExtension

    model, _ = demo
    ext = ProbeCheckExtension()
    parser = argparse.ArgumentParser()
    ext.add_arguments(parser)
    data = model.create_data()
    model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(12.0))
    ev = model.evaluate(data)
    report = {"contacts": []}
    assert ext.extend(parser.parse_args([]), model, data, ev, report) == [] and report == {"contacts": []}
    args = parser.parse_args(["--probes", str(REPO / "examples" / "demo_fingertip.probes.yaml")])
    lines = ext.extend(args, model, data, ev, report)
    assert len(report["probes"]) == 2 + 16 + 21 and set(report["patches"]) == {"pad", "palm_disc"}
    assert report["patches"]["pad"]["in_contact"] == 16
    assert any(line.strip().startswith("pad/0 ") for line in lines)
    bad = tmp_path / "bad.probes.yaml"
    bad.write_text("probes:\n  - {name: x, body: nobody, position: [0, 0, 0], normal: [0, 0, 1],"
                   " radius: 0.001, stiffness: 1}\n")
    with pytest.raises(ProbeError, match=r"bad\.probes\.yaml: probes\[0\] 'x': body: no body named 'nobody'"):
        ext.extend(parser.parse_args(["--probes", str(bad)]), model, data, ev, report)


def test_degenerate_probe_positions_never_nan():
    """Probe centres on a sphere's centre, on a capsule's axis, on a zero-length capsule and on
    a flat (zero-height) box: finite outputs; depth = clip(r - d_surf, 0, 2r) by hand."""
    r = 0.004
    sc = Scene(["finger", "ball", "rod", "dot", "sheet"])
    sc.add("ball", Sphere([0, 0, 0], 0.003))          # centre at probe 0: d = -0.003
    sc.add("rod", Capsule([1, 0, -0.05], [1, 0, 0.05], 0.002))  # probe 1 on the axis: d = -0.002
    sc.add("dot", Capsule([2, 0, 0], [2, 0, 0], 0.0))  # a point: probe 2 on it, d = 0
    sc.add("sheet", Box([0.1, 0.1, 0.0], [3, 0, 0]))  # zero thickness: probe 3 at 1 mm above
    specs = [probe("p0", position=(0, 0, 0), radius=r), probe("p1", position=(1, 0, 0), radius=r),
             probe("p2", position=(2, 0, 0), radius=r), probe("p3", position=(3, 0, 0.001), radius=r)]
    # sensor normals: face whatever fallback normal the geometry gives (tested: any unit n_c)
    ps = sc.probe_set(specs)
    res = sc.evaluate(ps)
    for arr in (res.position, res.normal, res.depth, res.area, res.force, res.contact_normal, res.force_body):
        assert np.all(np.isfinite(arr))
    d, _, n = point_signed_distance(sc.world(), np.arange(4), res.position)
    assert np.all(np.isfinite(n)) and np.allclose(np.linalg.norm(n, axis=1), 1.0)
    np.testing.assert_allclose(d, [-0.003, -0.002, 0.0, 0.001], atol=1e-15)
    facing = np.einsum("ij,ij->i", n, res.normal) < 0
    expect = np.where(facing, np.clip(r - d, 0, 2 * r), 0.0)
    np.testing.assert_allclose(res.depth, expect, atol=1e-15)
    assert res.depth[3] == pytest.approx(0.003, abs=1e-15)  # the sheet's top faces -z probe


@pytest.mark.parametrize("n_bodies, per_body", [(3, 5), (12, 5), (12, 70)])
def test_probe_frames_per_probe_by_hand_interleaved_bodies(n_bodies, per_body):
    """Probes interleaved over several rotated bodies (per-body matmuls for <= 8 bodies or
    >= 64 probes per body, the per-probe gather otherwise): every probe centre is R_b p + t_b,
    its normal R_b n, and the body-frame force R_b^T f, each computed here probe by probe."""
    rng = np.random.default_rng(n_bodies)
    names = [f"b{k}" for k in range(n_bodies)] + ["floor"]
    sc = Scene(names)
    sc.add("floor", Plane([0, 0, 1], 0.0))
    for k in range(n_bodies):
        sc.pose(f"b{k}", axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)),
                np.array([0.0, 0.0, 0.001]) + rng.uniform(-0.002, 0.002, 3) * [1, 1, 0])
    specs = [probe(f"p{i}", f"/ambf/env/b{i % n_bodies}", rng.uniform(-0.003, 0.003, 3),
                   rng.normal(size=3), radius=0.004) for i in range(per_body * n_bodies)]
    ps = sc.probe_set(specs)
    assert (ps._groups is not None) == (n_bodies <= 8 or per_body >= 64)
    res = sc.evaluate(ps)
    assert res.in_contact.any()  # some probes press into the floor: non-zero forces
    for i, sp in enumerate(specs):
        b = names.index(sp.body.rsplit("/", 1)[-1])
        np.testing.assert_allclose(res.position[i], sc.R[b] @ sp.position + sc.t[b], atol=1e-15)
        np.testing.assert_allclose(res.normal[i], sc.R[b] @ sp.normal, atol=1e-15)
        np.testing.assert_allclose(res.force_body[i], sc.R[b].T @ res.force[i], atol=1e-12)


# ----------------------------------------------------------------------------- exact stage paths

def _brute_force(ps, world, res):
    """Expected per-probe outputs from point_signed_distance over every sensed (probe, shape)
    pair (no broadphase), for the probe centres and normals of ``res``."""
    N, S = len(ps), len(ps.shape_body)
    pi = np.repeat(np.arange(N), S)
    si = np.tile(np.arange(S), N)
    d, _, nc = point_signed_distance(world, si, res.position[pi])
    d, nc = d.reshape(N, S), nc.reshape(N, S, 3)
    plain = np.array([ps.body_names[b].rsplit("/", 1)[-1] for b in ps.shape_body])
    sensed = np.zeros((N, S), dtype=bool)
    for i, p in enumerate(ps.specs):  # plain body names in `sense` here
        sensed[i] = np.isin(plain, p.sense_bodies) if p.sense_bodies else True
        if not p.include_own_body:
            sensed[i] &= ps.probe_body[i] != ps.shape_body
    r = ps.radius[:, None]
    facing = sensed & (np.einsum("nsk,nk->ns", nc, res.normal) < 0)
    gap = np.where(facing & (d - r <= ps.range[:, None]), d - r, np.inf)
    touch = facing & (d < r)
    pen = np.where(touch, np.clip(r - d, 0, 2 * r), 0.0)
    deepest = np.where(touch.any(1), np.argmin(np.where(touch, d, np.inf), axis=1), -1)
    return dict(distance=gap.min(1), depth=np.where(touch.any(1), pen.max(1), 0.0),
                force=np.einsum("ns,nsk->nk", ps.stiffness[:, None] * pen, nc),
                area=(np.pi * (2 * r * pen - pen**2)).sum(1), in_contact=touch.any(1),
                touching_shape=deepest,
                contact_normal=np.where(touch.any(1)[:, None], nc[np.arange(N), np.maximum(deepest, 0)], 0.0))


def _assert_brute_force(res, exp):
    """Every per-probe output of ``res`` equals the brute force ``exp``."""
    np.testing.assert_allclose(res.distance, exp["distance"], atol=1e-15)
    np.testing.assert_allclose(res.depth, exp["depth"], atol=1e-15)
    np.testing.assert_allclose(res.force, exp["force"], atol=1e-12)
    np.testing.assert_allclose(res.area, exp["area"], atol=1e-16)
    np.testing.assert_allclose(res.contact_normal, exp["contact_normal"], atol=1e-15)
    assert np.array_equal(res.in_contact, exp["in_contact"])
    assert np.array_equal(res.touching_shape, exp["touching_shape"])


def _all_kinds_scene(rng):
    sc = Scene(["hand", "a", "b", "c", "floor"])
    tet = np.array([[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0], [0, 0, 0.03]], float)
    # kinds deliberately out of kind order (the exact stage groups them by kind)
    sc.add("a", Plane([0, 0, 1], -0.03))
    sc.add("a", ConvexHull(tet, rng.uniform(-0.03, 0.03, 3), rng.normal(size=4)))
    sc.add("b", Cone(0.02, 0.05, rng.uniform(-0.03, 0.03, 3), rng.normal(size=4)))
    sc.add("b", Box(rng.uniform(0.01, 0.05, 3), rng.uniform(-0.03, 0.03, 3), rng.normal(size=4)))
    sc.add("c", Capsule([0, 0, -0.02], [0.01, 0.02, 0.02], 0.012))
    sc.add("c", Cylinder(0.015, 0.04, rng.uniform(-0.03, 0.03, 3), rng.normal(size=4)))
    sc.add("a", Sphere(rng.uniform(-0.03, 0.03, 3), 0.015))
    sc.add("b", Capsule([0.01, 0, 0], [0.01, 0, 0], 0.01))  # zero length: a sphere
    sc.add("floor", Plane([0.1, 0, 1], -0.05))
    sc.add("hand", Sphere([0, 0, 0], 0.01))  # own body: sensed only with include_own_body
    return sc


@pytest.mark.parametrize("layout", ["padded", "padded_ragged", "unpadded"])
@pytest.mark.parametrize("kinds_known", [True, False])
def test_exact_stage_matches_brute_force_all_kinds(layout, kinds_known):
    """Every shape kind (shapes out of kind order, a zero-length capsule, two planes), probes
    on the moving hand in clusters padded to one row, ragged (padded with a mask) or expanded
    by counts, kinds known at compile time or taken from the first world: over several cycles
    (buffers reused and grown) each output equals the brute force over all pairs."""
    rng = np.random.default_rng(11)
    sc = _all_kinds_scene(rng)
    n = 400
    specs = [probe(f"p{i}", body="/ambf/env/hand", position=rng.uniform(-0.06, 0.06, 3),
                   normal=rng.normal(size=3), radius=rng.uniform(0.002, 0.01), range=0.02)
             for i in range(n)]
    # a patch with one sensor normal (own sense key): clusters the facing prune applies to
    specs.append(PatchSpec("pad", "/ambf/env/hand", np.array([0, 0, 0.012]), np.array([0.2, 0.1, 1.0]) / 1.0247,
                           np.array([1.0, 0, -0.2]) / 1.0198, 0.004, 0.003, 800.0, rows=10, cols=10,
                           range=0.02, include_own_body=True))
    size = {"padded": 25, "padded_ragged": 7, "unpadded": 25}[layout]  # 20 x 25 / ~6.5 / 25
    if layout == "unpadded":  # 8 sense keys with a single probe each: clusters of 1 beside 25s
        keys = [("a",), ("b",), ("c",), ("floor",), ("a", "b"), ("b", "c"), ("a", "floor"), ()]
        specs += [probe(f"single{j}", body="/ambf/env/hand", position=rng.uniform(-0.03, 0.03, 3),
                        normal=rng.normal(size=3), radius=0.01, range=0.03, sense_bodies=key,
                        include_own_body=not key) for j, key in enumerate(keys)]
    if kinds_known:
        ps = sc.probe_set(specs, cluster_size=size)
    else:
        from ambf_collision.probes.probe_set import shape_bounding_sphere
        b = [shape_bounding_sphere(s) for s in sc.shapes]
        ps = ProbeSet(specs, sc.body_names, sc.shape_body, [c for c, _ in b], [r for _, r in b],
                      cluster_size=size)
    assert (ps._members is None) == (layout == "unpadded")
    assert (ps._members is not None and ps._member_ok is not None) == (layout == "padded_ragged")
    specs = ps.specs
    touched = seen = 0
    touching = set()
    for cycle in range(4):
        for body in ("a", "b", "c"):
            sc.pose(body, R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)),
                    t=rng.uniform(-0.05, 0.05, 3))
        sc.pose("hand", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)),
                t=rng.uniform(-0.01, 0.01, 3))
        res = sc.evaluate(ps)
        exp = _brute_force(ps, sc.world(), res)
        _assert_brute_force(res, exp)
        assert 0 < res.pairs_checked < len(ps) * len(sc.shapes)
        touched += res.in_contact.sum()
        seen += np.isfinite(res.distance).sum()
        touching.update(res.touching_shape.tolist())
    assert touched > 50 and seen > touched
    assert touching >= set(range(len(sc.shapes) - 1))  # every kind touched some probe


@pytest.mark.parametrize("first", ["plane", "box"])
def test_equal_gaps_across_kinds_lowest_shape_index_wins(first):
    """A plane z = 0 and a unit box whose top face is z = 0 (dyadic numbers: both d_surf are
    exactly h): the deepest contact is the lower shape index whichever kind it is (kinds are
    grouped internally), force and area are the exact sums of both."""
    r, k, h = 2.0**-8, 1024.0, 2.0**-9
    sc = Scene(["finger", "floor", "block"])
    shapes = {"plane": ("floor", Plane([0, 0, 1], 0.0)), "box": ("block", Box([1, 1, 1], [0, 0, -0.5]))}
    order = [first, "box" if first == "plane" else "plane"]
    for name in order:
        sc.add(*shapes[name])
    sc.pose("finger", t=[0.125, 0.25, h])
    res = sc.evaluate(sc.probe_set([probe(radius=r, stiffness=k)]))
    pen = r - h
    assert res.touching_shape[0] == 0 and res.touching_body[0] == (1 if first == "plane" else 2)
    assert res.depth[0] == pen and res.distance[0] == -pen
    assert list(res.force[0]) == [0.0, 0.0, 2 * k * pen]
    assert res.area[0] == 2 * (math.pi * (2 * r * pen - pen * pen))


def test_plane_broadphase_keeps_probes_exactly_at_range():
    """A 4 x 4 patch facing a plane: with the patch at exactly radius + range above it
    (dyadic numbers) every probe sees the plane at distance == range; 1/1024 m higher the
    plane is pruned for the whole cluster (no exact query at all)."""
    r, rng_ = 2.0**-8, 3 * 2.0**-6
    sc = _plane_scene()
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                      np.array([1.0, 0, 0]), 2.0**-7, r, 1000.0, rows=4, cols=4, range=rng_)
    ps = sc.probe_set([patch])
    sc.pose("finger", t=[0.25, -0.5, r + rng_])
    res = sc.evaluate(ps)
    assert res.pairs_checked == 16 and np.all(res.distance == rng_) and not res.in_contact.any()
    sc.pose("finger", t=[0.25, -0.5, r + rng_ + 2.0**-4])  # beyond the patch's cluster bound
    res = sc.evaluate(ps)
    assert res.pairs_checked == 0 and np.all(res.distance == math.inf)
    pi, si = ps.candidates(sc.R, sc.t)  # without world shapes planes are not pruned
    assert len(pi) == 16
    assert len(ps.candidates(sc.R, sc.t, sc.world())[0]) == 0
    # a single probe is its own cluster (bound = radius + range): kept exactly at range,
    # pruned 2^-20 m beyond it
    ps = sc.probe_set([probe(normal=(0, 0, -1), radius=r, range=rng_)])
    sc.pose("finger", t=[0.25, -0.5, r + rng_])
    res = sc.evaluate(ps)
    assert res.pairs_checked == 1 and res.distance[0] == rng_
    sc.pose("finger", t=[0.25, -0.5, r + rng_ + 2.0**-20])
    res = sc.evaluate(ps)
    assert res.pairs_checked == 0 and res.distance[0] == math.inf


def test_facing_prune_capsule_behind_the_pad():
    """A 4 x 4 pad (normal +z) just above a capsule's top pole: the capsule surface reaches
    the pad plane but its segment lies behind it, so n_c . n_s > 0 for every probe and the
    pair is pruned before the exact stage; with the segment end flush with the pad plane (no
    slack) it is kept and evaluated, and nothing is seen either way (as brute force)."""
    sc = Scene(["finger", "hand"])
    sc.add("hand", Capsule([0, 0, -0.1], [0, 0, 0.0], 0.035))
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, 1.0]),
                      np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=4, cols=4)
    ps = sc.probe_set([patch])
    R = axis_angle_to_matrix([1, 2, 3], 0.8)
    for lift, pruned in ((0.035, True), (1e-6, True), (0.0, False)):
        sc.pose("finger", R=R, t=R @ [0, 0, lift])
        sc.pose("hand", R=R)
        res = sc.evaluate(ps)
        assert (res.pairs_checked == 0) == pruned, lift
        exp = _brute_force(ps, sc.world(), res)
        assert np.all(exp["distance"] == math.inf) and np.all(res.distance == math.inf)
        assert not res.in_contact.any() and np.all(res.force == 0)
    # turned to face the capsule (normal -z): never pruned, the pad touches it
    ps = sc.probe_set([PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                                 np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=4, cols=4)])
    sc.pose("finger", R=R, t=R @ [0, 0, 0.035])
    res = sc.evaluate(ps)
    exp = _brute_force(ps, sc.world(), res)
    assert res.pairs_checked == 16 and res.in_contact.all()
    np.testing.assert_allclose(res.depth, exp["depth"], atol=1e-15)
    np.testing.assert_allclose(res.force, exp["force"], atol=1e-12)


def test_facing_prune_planes_and_mixed_normals():
    """A plane whose normal points along the pad normal is pruned (n_c . n_s > 0) even in
    reach; a cluster whose members have different sensor normals is never pruned."""
    sc = _plane_scene()
    pad_up = PatchSpec("up", "/ambf/env/finger", np.zeros(3), np.array([0, 0, 1.0]),
                       np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=2, cols=2)
    sc.pose("finger", t=[0, 0, 0.001])
    res = sc.evaluate(sc.probe_set([pad_up]))
    assert res.pairs_checked == 0 and not res.in_contact.any()
    mixed = [probe("a", normal=(0, 0, 1)), probe("b", position=(0.001, 0, 0), normal=(0, 0, -1))]
    res = sc.evaluate(sc.probe_set(mixed))
    assert res.pairs_checked == 2 and list(res.in_contact) == [False, True]


def test_box_broadphase_keeps_probe_exactly_at_range():
    """A single probe (its own cluster, bound = radius + range) facing a unit box's +x face
    from exactly radius + range away (dyadic numbers) sees it at distance == range; 2^-20 m
    farther the box is pruned before the exact stage."""
    r, rng_ = 2.0**-8, 3 * 2.0**-6
    sc = Scene(["finger", "block"])
    sc.add("block", Box([1, 1, 1]))
    sc.pose("block", t=[0.25, 0.5, -0.125])
    ps = sc.probe_set([probe(normal=(-1, 0, 0), radius=r, range=rng_)])
    for extra, seen in ((0.0, True), (2.0**-20, False)):
        sc.pose("finger", t=[0.25 + 0.5 + r + rng_ + extra, 0.625, 0.0])
        res = sc.evaluate(ps)
        assert res.pairs_checked == int(seen)
        assert res.distance[0] == (rng_ if seen else math.inf)


@pytest.mark.parametrize("where", ["outside", "inside", "mixed", "two_boxes"])
def test_box_exact_stage_bitwise_equals_point_signed_distance(where):
    """The probes' box SDF (one box broadcast over its candidates, or several boxes gathered;
    all candidates outside, all inside or both, points on faces and edges included) returns
    the same bits as batch.point_signed_distance for the distance and the outward normal."""
    from ambf_collision.probes.probe_set import _box_sdf

    rng = np.random.default_rng(["outside", "inside", "mixed", "two_boxes"].index(where))
    sc = Scene(["finger", "a", "b"])
    sc.add("a", Box([0.04, 0.06, 0.02], [0.01, 0, 0], [0.1, 0.2, 0.3, 0.9]))
    sc.add("b", Box([0.03, 0.03, 0.08], [0, 0.02, 0], [0.0, 0.0, 0.0, 1.0]))
    sc.pose("a", R=axis_angle_to_matrix(rng.normal(size=3), 1.1), t=[0.02, -0.01, 0.03])
    sc.pose("b", R=axis_angle_to_matrix(rng.normal(size=3), 0.4), t=[-0.05, 0.0, 0.01])
    world = sc.world()
    half = np.array([[0.02, 0.03, 0.01], [0.015, 0.015, 0.04]])
    s = np.sort(rng.integers(0, 2, 300)) if where == "two_boxes" else np.zeros(300, dtype=np.intp)
    h = half[s]
    scale = {"outside": (1.2, 3.0), "inside": (0.0, 0.95)}.get(where, (0.0, 2.0))
    local = rng.uniform(-1, 1, (300, 3)) * h * rng.uniform(*scale, (300, 1))
    if where == "outside":  # push one axis beyond its face
        ax = rng.integers(0, 3, 300)
        local[np.arange(300), ax] = np.sign(local[np.arange(300), ax] + 1e-12) * h[np.arange(300), ax] * 1.5
    if where in ("mixed", "two_boxes"):
        local[:20] = np.sign(local[:20]) * h[:20]  # corners
        local[20:40, 0] = h[20:40, 0]  # on a face
    # box frame -> world through the same rotation and centre as the world shapes
    p = np.einsum("kij,kj->ki", world.rot[s], local) + world.a[s]
    d, n = np.empty(300), np.empty((300, 3))
    _box_sdf(None, world, s, p, d, n)
    d_ref, _, n_ref = point_signed_distance(world, s, p)
    inside = d_ref < 0
    assert {"outside": inside.sum() == 0, "inside": inside.all()}.get(where, 0 < inside.sum() < 300)
    assert d.tobytes() == np.asarray(d_ref, float).tobytes()
    assert n.tobytes() == np.asarray(n_ref, float).tobytes()


@pytest.mark.parametrize("case", ["capsules", "spheres_and_capsules", "on_segment"])
def test_round_exact_stage_bitwise_equals_point_segment_normal(case):
    """The probes' sphere/capsule SDF (segment terms once per shape, gathered per candidate)
    returns the same bits as segment_distance.point_segment_normal minus the radius, points
    on a segment (fallback normals) and zero-length segments (spheres) included."""
    from ambf_collision.probes.probe_set import _round_sdf
    from ambf_collision.geometry.segments import point_segment_normal

    rng = np.random.default_rng(["capsules", "spheres_and_capsules", "on_segment"].index(case))
    sc = Scene(["finger", "a", "b"])
    sc.add("a", Capsule([0.0, 0, 0], [0.05, 0.01, 0], 0.01))
    sc.add("b", Capsule([0.0, 0.02, 0], [0.0, 0.02, 0.06], 0.02))
    sc.add("b", Sphere([0.03, 0, 0.01], 0.015))
    sc.pose("a", R=axis_angle_to_matrix(rng.normal(size=3), 1.1), t=[0.02, -0.01, 0.03])
    sc.pose("b", R=axis_angle_to_matrix(rng.normal(size=3), 0.4), t=[-0.05, 0.0, 0.01])
    world = sc.world()
    s = np.sort(rng.integers(0, 3 if case != "capsules" else 2, 400))
    u = rng.uniform(-0.2, 1.2, (400, 1))
    p = world.a[s] + u * (world.b[s] - world.a[s]) + rng.normal(size=(400, 3)) * 0.02
    if case == "on_segment":
        p[:30] = world.a[s[:30]] + 0.5 * (world.b[s[:30]] - world.a[s[:30]])
    d, n = np.empty(400), np.empty((400, 3))
    _round_sdf(None, world, s, p, d, n)
    L, _, n_ref = point_segment_normal(p, world.a[s], world.b[s])
    assert d.tobytes() == (L - world.radius[s]).tobytes()
    assert n.tobytes() == n_ref.tobytes()


def test_outputs_reset_after_contact_but_not_rewritten_when_free():
    """A sequence contact, free, free, proximity, contact gives at each step the outputs of a
    fresh probe set evaluated on that step alone (the resets skipped after a free cycle lose
    nothing)."""
    sc = _plane_scene()
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                      np.array([1.0, 0, 0]), 0.003, 0.002, 1000.0, rows=3, cols=3)
    specs = [patch, probe("single", position=(0.01, 0, 0))]
    ps = sc.probe_set(specs)
    fields = ("in_contact", "depth", "area", "force", "force_body", "contact_normal",
              "touching_shape", "touching_body", "distance", "patch_force", "patch_area",
              "patch_in_contact", "position", "normal")
    for z in (0.001, 1.0, 2.0, 0.03, 0.0015):
        sc.pose("finger", t=[0, 0, z])
        res = sc.evaluate(ps)
        ref = sc.evaluate(sc.probe_set(specs))
        for f in fields:
            assert getattr(res, f).tobytes() == getattr(ref, f).tobytes(), (z, f)


def test_nearest_pair_per_probe_equals_the_sorted_rule():
    """ProbeSet._nearest picks per probe the pair of smallest gap, the first one on ties
    (+0/-0 included), as sorting by (probe, gap) stably and keeping each probe's first."""
    rng = np.random.default_rng(5)
    ps = Scene(["finger", "floor"]).probe_set([probe(f"p{i}") for i in range(40)])
    for trial in range(300):
        K = int(rng.integers(1, 200))
        pi = np.sort(rng.integers(0, 40, K), kind="stable") if trial % 2 else rng.integers(0, 40, K)
        gap = rng.choice([-0.0, 0.0, 0.5, -0.25, 1.0], K) if trial % 3 == 0 else rng.normal(size=K)
        order = np.lexsort((gap, pi))
        first = np.ones(K, dtype=bool)
        first[1:] = pi[order][1:] != pi[order][:-1]
        expect = order[first]
        got = ps._nearest(pi, gap)
        assert sorted(got.tolist()) == sorted(expect.tolist())


def test_slice_if_contiguous_gathers_the_same_rows():
    """Contiguous ascending indices become a slice (a view), anything else stays an index
    array; both select the same rows."""
    from ambf_collision.probes.probe_set import _slice_if_contiguous

    a = np.arange(24.0).reshape(8, 3)
    for idx, is_slice in (([6], True), ([2, 3, 4], True), ([5, 1, 2], False), ([1, 3], False),
                          ([4, 3], False), ([], False)):
        idx = np.array(idx, dtype=np.intp)
        sel = _slice_if_contiguous(idx)
        assert isinstance(sel, slice) == is_slice
        assert np.array_equal(a[sel], a[idx])


def test_candidates_equal_brute_force_bounding_sphere_pairs_with_and_without_fine_test():
    """Clusters wholly within a shape's reach skip the per-probe fine test (every member would
    pass it), the others are tested per probe: either way the candidates are exactly the
    (probe, sphere) pairs with |probe centre - sphere centre| <= radius + range + sphere
    radius (brute force; probe normals all differ, so no facing test drops a pair). Poses are
    chosen so that both cases occur, alone and in the same evaluation, including a cluster
    whose centre is within reach of a sphere while some of its members are not."""
    rng = np.random.default_rng(11)
    sc = Scene(["finger", "a", "b"])
    sc.add("a", Sphere([0.0, 0.0, 0.0], 0.06))  # holds the whole pad when near
    for _ in range(5):
        sc.add("b", Sphere(rng.uniform(-0.02, 0.02, 3), rng.uniform(0.003, 0.02)))
    spread = [probe(f"p{i}", position=rng.uniform(-0.01, 0.01, 3), normal=rng.normal(size=3),
                    radius=rng.uniform(0.001, 0.003), range=rng.uniform(0.005, 0.03)) for i in range(200)]
    compact = [probe(f"q{i}", position=rng.uniform(-0.004, 0.004, 3), normal=rng.normal(size=3),
                     radius=0.002, range=0.01) for i in range(16)]  # one cluster, one reach
    local = np.array([s.center for s in sc.shapes])
    rad = np.array([s.radius for s in sc.shapes])
    for specs in (spread, compact):
        ps = sc.probe_set(specs, cluster_size=16)
        kinds = set()
        for trial in range(90):
            u = rng.normal(size=(2, 3))
            u /= np.linalg.norm(u, axis=1, keepdims=True)
            if trial % 3 == 0:  # the big sphere's reach cuts through the pad, the small ones far
                ta, tb = u[0] * (0.072 + rng.uniform(-0.012, 0.006)), u[1]
            elif trial % 3 == 1:  # the big sphere holds the whole pad, the small ones far
                ta, tb = u[0] * 0.005, u[1]
            else:
                ta, tb = u * rng.choice([0.005, 0.02, 0.05, 1.0], size=(2, 1))
            sc.pose("a", t=ta)
            sc.pose("b", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=tb)
            sc.pose("finger", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)))
            res = sc.evaluate(ps)  # probe centres of this pose (candidates() reads them)
            pi, si = ps.candidates(sc.R, sc.t, sc.world())
            assert len(pi) == res.pairs_checked
            centre = np.einsum("sij,sj->si", sc.R[sc.shape_body], local) + sc.t[sc.shape_body]
            dist = np.linalg.norm(res.position[:, None, :] - centre[None, :, :], axis=2)
            want = dist <= (ps.radius + ps.range)[:, None] + rad[None, :]
            got = np.zeros_like(want)
            got[pi, si] = True
            assert len(pi) == int(got.sum())  # no pair twice
            assert np.array_equal(got, want), trial
            if len(pi):
                kinds.add(bool(ps._beyond.any()))  # True: some clusters went through the fine test
        assert kinds == {True, False}


def test_rigid_roots_of_the_demo_model():
    """The demo's fingertip hangs on the hand by a fixed joint (fingertip_mount); every other
    joint is revolute and the floor and table are roots of their own."""
    from ambf_collision.model import Model
    from ambf_collision.probes.probe_set import rigid_roots

    model = Model.from_files([DEMO / "demo_arm.yaml"])
    names = [n.rsplit("/", 1)[-1] for n in model.body_names]
    root = rigid_roots(model)
    expect = {n: n for n in names}
    expect["fingertip"] = "hand"
    assert [names[r] for r in root] == [expect[n] for n in names]


def test_rigid_shapes_behind_the_pad_are_dropped_once_and_results_unchanged():
    """A pad on a finger fixed to a hand: a capsule, a box and a cylinder of the hand lie
    behind the pad's sensor plane (within the probes' reach), a sphere of the hand in front of
    it, and a capsule on a free body moves around. Given the rigid roots, the set drops the
    three shapes behind the pad at its first evaluation, never the sphere; over random poses
    (hand and finger moved together) every output and pairs_checked equal, bit for bit, those of
    the set without rigid roots (which keeps the facing test per cycle)."""
    rng = np.random.default_rng(5)
    sc = Scene(["finger", "hand", "free"])
    sc.add("hand", Capsule([-0.01, 0, -0.012], [0.01, 0, -0.012], 0.004))
    sc.add("hand", Box([0.02, 0.02, 0.004], [0, 0.0, -0.02]))
    sc.add("hand", Cylinder(0.006, 0.004, [0.0, 0.012, -0.015]))
    sc.add("hand", Sphere([0.0, 0.0, 0.012], 0.003))  # in front of the pad
    sc.add("free", Capsule([-0.02, 0, 0], [0.02, 0, 0], 0.005))
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, 1.0]),
                    np.array([1.0, 0, 0]), 0.002, 0.001, 1000.0, rows=6, cols=6, range=0.01)
    plain = sc.probe_set([pad], cluster_size=9)
    rigid = sc.probe_set([pad], cluster_size=9, rigid_root=[0, 0, 2])
    behind, front = np.array([0, 1, 2]), 3
    for trial in range(40):
        R = axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, math.pi))
        t = rng.uniform(-0.05, 0.05, 3)
        sc.pose("hand", R=R, t=t)
        sc.pose("finger", R=R, t=t + R @ np.array([0.0, 0.0, 0.001]))  # fixed to the hand
        u = rng.normal(size=3)
        sc.pose("free", R=axis_angle_to_matrix(rng.normal(size=3), 1.0),
                t=t + R @ np.array([0, 0, 0.01]) + 0.02 * u / np.linalg.norm(u))
        a = {k: np.copy(v) for k, v in vars(sc.evaluate(plain)).items() if isinstance(v, np.ndarray)}
        a["pairs"] = plain.result.pairs_checked
        b = {k: np.copy(v) for k, v in vars(sc.evaluate(rigid)).items() if isinstance(v, np.ndarray)}
        b["pairs"] = rigid.result.pairs_checked
        assert a.keys() == b.keys()
        for k in a:
            assert np.asarray(a[k]).tobytes() == np.asarray(b[k]).tobytes(), (trial, k)
        assert a["pairs"] > 0 and np.isfinite(a["distance"]).any()
    dropped = (rigid._bound_world < 0) & (rigid._bound >= 0)  # (sorted shape, cluster)
    shape_of_row = rigid._sorder
    assert set(shape_of_row[np.flatnonzero(dropped.all(axis=1))].tolist()) == set(behind.tolist())
    assert not dropped[np.flatnonzero(shape_of_row == front)].any()


@pytest.mark.parametrize("floor", ["plane", "box", "plane_and_box"])
def test_shape_under_every_cluster_matches_brute_force(floor):
    """A tilted pad of 36 probes (5 clusters) pressed into a floor that every cluster reaches:
    the candidates are every probe, in probe order, once per floor shape; some probes touch,
    some only sense, some are free, and each output equals the brute force over all pairs."""
    sc = Scene(["finger", "floor"])
    if floor != "box":
        sc.add("floor", Plane([0, 0, 1], 0.0))
    if floor != "plane":
        sc.add("floor", Box([0.4, 0.4, 0.1], [0.0, 0.0, -0.0505], [0, 0, 0, 1]))
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0.0, 0.0, -1.0]),
                    np.array([1.0, 0.0, 0.0]), 0.004, 0.002, 1500.0, rows=6, cols=6, range=0.01)
    ps = sc.probe_set([pad], cluster_size=8)
    N = len(ps)
    counts = []  # (touching, sensing) per pose
    for tilt, height in ((0.3, 0.001), (0.2, -0.0005), (0.8, 0.006)):
        sc.pose("finger", R=axis_angle_to_matrix([0.0, 1.0, 0.0], tilt), t=[0.0, 0.0, height])
        res = sc.evaluate(ps)
        pi, si = ps.candidates(sc.R, sc.t, sc.world())
        S = len(sc.shapes)
        assert np.array_equal(pi, np.tile(np.arange(N), S))
        assert sorted(si[::N].tolist()) == list(range(S)) and np.array_equal(si, np.repeat(si[::N], N))
        exp = _brute_force(ps, sc.world(), res)
        _assert_brute_force(res, exp)
        assert np.array_equal(res.touching_body, np.where(exp["in_contact"], 1, -1))
        n_touch = int(res.in_contact.sum())
        counts.append((n_touch, int(np.isfinite(res.distance).sum())))
        np.testing.assert_allclose(res.patch_force[0], exp["force"].sum(0), atol=1e-12)
        assert res.patch_in_contact[0] == n_touch
    assert counts[1] == (N, N)  # all touch
    assert 0 < counts[0][0] < counts[0][1] and 0 < counts[2][0] < counts[2][1] < N, counts


@pytest.mark.parametrize("behind", [False, True])
def test_free_cycle_after_contact_resets_outputs_and_moves_probes(behind):
    """A pad pressed into a floor, then lifted beyond reach (with a box just behind the pad,
    within the bounding-sphere reach but wholly behind the sensor plane): in the free poses
    no pair is left (no candidates, no exact query), every contact output is back to its
    reset value, and the probe centres and normals are still R p + t and R n, probe by
    probe; the brute force over all pairs agrees."""
    sc = Scene(["finger", "floor", "lid"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    if behind:
        sc.add("lid", Box([0.02, 0.02, 0.004], [0.0, 0.0, 0.008], [0, 0, 0, 1]))
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0.0, 0.0, -1.0]),
                    np.array([1.0, 0.0, 0.0]), 0.004, 0.002, 1500.0, rows=6, cols=6, range=0.01)
    ps = sc.probe_set([pad], cluster_size=8)
    specs = pad.probes()
    for tilt, height, free in ((0.2, 0.0005, False), (0.1, 0.05, True), (0.3, 0.0005, False),
                               (-0.2, 0.03, True), (0.0, 0.04, True)):
        R = axis_angle_to_matrix([0.0, 1.0, 0.0], tilt)
        sc.pose("finger", R=R, t=[0.0, 0.0, height])
        sc.pose("lid", t=[0.0, 0.0, height])  # rides just above the pad
        res = sc.evaluate(ps)
        exp = _brute_force(ps, sc.world(), res)
        for i, sp in enumerate(specs):
            np.testing.assert_allclose(res.position[i], R @ sp.position + [0.0, 0.0, height], atol=1e-15)
            np.testing.assert_allclose(res.normal[i], R @ sp.normal, atol=1e-15)
        _assert_brute_force(res, exp)
        pi, _ = ps.candidates(sc.R, sc.t, sc.world())
        if free:
            assert pi.size == 0 and res.pairs_checked == 0
            assert np.all(np.isinf(res.distance)) and not res.in_contact.any()
            for name in ("depth", "area", "force", "force_body", "contact_normal",
                         "patch_force", "patch_area", "patch_in_contact"):
                assert not np.any(getattr(res, name)), name
            assert np.all(res.touching_shape == -1) and np.all(res.touching_body == -1)
        else:
            assert res.in_contact.any() and res.pairs_checked > 0
