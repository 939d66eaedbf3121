"""Probe semantics derived by hand (probes/spec.py): depth, force, area, facing, range,
sense, patches and their wrench, the contact state's thresholds, degenerate positions, and
the Model/Data split of the probes (two ProbeData of one ProbeModel never interfere)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from probe_scene import Scene, probe
from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.shapes import Box, Capsule, Plane, Sphere
from ambf_collision.geometry.transforms import axis_angle_to_matrix
from ambf_collision.probes import PatchSpec


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
    ps = sc.probes([probe(normal=R.T @ np.array([0, 0, -1.0]), radius=r, stiffness=k)])
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
    res = sc.evaluate(sc.probes([probe(normal=normal)]))
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
    res = sc.evaluate(sc.probes([probe(normal=(-1, 0, -1), radius=r, stiffness=k)]))
    pw, pf = r - 0.001, r - 0.002
    assert res.depth[0] == pytest.approx(pw, abs=1e-15)
    np.testing.assert_allclose(res.force[0], [k * pw, 0, k * pf], atol=1e-12)
    area = math.pi * (2 * r * pw - pw**2) + math.pi * (2 * r * pf - pf**2)
    assert res.area[0] == pytest.approx(area, rel=1e-12)
    np.testing.assert_allclose(res.contact_normal[0], [1, 0, 0])
    assert res.touching_body[0] == 2 and res.touching_shape[0] == 1
    assert res.distance[0] == pytest.approx(-pw, abs=1e-15)


@pytest.mark.parametrize("inside, clamped", [(0.002, False), (0.005, True), (0.01, True)])
def test_probe_centre_inside_a_box(inside, clamped):
    """Centre `inside` below the top face of a 0.1 m cube: d_surf = -inside, n_c = +z;
    d_pen = r + inside, clamped to 2r (area then 0), also deeper than 2r inside."""
    r, k = 0.004, 1000.0
    sc = Scene(["finger", "block"])
    sc.add("block", Box([0.1, 0.1, 0.1]))
    sc.pose("block", R=axis_angle_to_matrix([0, 0, 1], 0.3), t=[0.5, 0.5, 0.05])
    sc.pose("finger", t=[0.5, 0.5, 0.1 - inside])
    res = sc.evaluate(sc.probes([probe(radius=r, stiffness=k)]))
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
    res = sc.evaluate(sc.probes([probe(**spec)]))
    assert not res.in_contact[0] and res.distance[0] == math.inf
    res = sc.evaluate(sc.probes([probe(**spec, include_own_body=True)]))
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
    res = sc.evaluate(sc.probes(specs, groups_of=groups.__getitem__))
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
    res = sc.evaluate(sc.probes(specs))
    assert not res.in_contact.any()
    assert res.distance[0] == pytest.approx(0.016, abs=1e-15)
    assert res.distance[1] == pytest.approx(0.016, abs=1e-15)
    assert res.distance[2] == math.inf
    expect = math.hypot(0.001, 0.03) - 0.01 - r
    assert res.distance[3] == pytest.approx(expect, abs=1e-15)
    # default range 0.05 m: just inside it is finite, just beyond it +inf (ball moved away)
    sc.pose("ball", t=[1.0, 1.0, 1.0])
    ps = sc.probes([probe("down", normal=(0, 0, -1), radius=r)])
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
    ps = sc.probes([patch, probe("single")])
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
              "patch_force", "patch_area", "patch_force_body", "patch_torque_body")
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
    ps = sc.probes(specs)
    res = sc.evaluate(ps)
    for arr in (res.position, res.normal, res.depth, res.area, res.force, res.contact_normal, res.force_body):
        assert np.all(np.isfinite(arr))
    d, _, n = point_signed_distance_batch(sc.world(), None, np.arange(4), res.position)
    assert np.all(np.isfinite(n)) and np.allclose(np.linalg.norm(n, axis=1), 1.0)
    np.testing.assert_allclose(d, [-0.003, -0.002, 0.0, 0.001], atol=1e-15)
    facing = np.einsum("ij,ij->i", n, res.normal) < 0
    expect = np.where(facing, np.clip(r - d, 0, 2 * r), 0.0)
    np.testing.assert_allclose(res.depth, expect, atol=1e-15)
    assert res.depth[3] == pytest.approx(0.003, abs=1e-15)  # the sheet's top faces -z probe


@pytest.mark.parametrize("n_bodies, per_body", [(3, 5), (12, 5), (12, 70)])
def test_probe_frames_per_probe_by_hand_interleaved_bodies(n_bodies, per_body):
    """Probes interleaved over several rotated bodies: every probe centre is R_b p + t_b, its
    normal R_b n, and the body-frame force R_b^T f, each computed here probe by probe."""
    rng = np.random.default_rng(n_bodies)
    names = [f"b{k}" for k in range(n_bodies)] + ["floor"]
    sc = Scene(names)
    sc.add("floor", Plane([0, 0, 1], 0.0))
    for k in range(n_bodies):
        sc.pose(f"b{k}", axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)),
                np.array([0.0, 0.0, 0.001]) + rng.uniform(-0.002, 0.002, 3) * [1, 1, 0])
    specs = [probe(f"p{i}", f"/ambf/env/b{i % n_bodies}", rng.uniform(-0.003, 0.003, 3),
                   rng.normal(size=3), radius=0.004) for i in range(per_body * n_bodies)]
    res = sc.evaluate(sc.probes(specs))
    assert res.in_contact.any()  # some probes press into the floor: non-zero forces
    for i, sp in enumerate(specs):
        b = names.index(sp.body.rsplit("/", 1)[-1])
        np.testing.assert_allclose(res.position[i], sc.R[b] @ sp.position + sc.t[b], atol=1e-15)
        np.testing.assert_allclose(res.normal[i], sc.R[b] @ sp.normal, atol=1e-15)
        np.testing.assert_allclose(res.force_body[i], sc.R[b].T @ res.force[i], atol=1e-12)


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
    res = sc.evaluate(sc.probes([probe(radius=r, stiffness=k)]))
    pen = r - h
    assert res.touching_shape[0] == 0 and res.touching_body[0] == (1 if first == "plane" else 2)
    assert res.depth[0] == pen and res.distance[0] == -pen
    assert list(res.force[0]) == [0.0, 0.0, 2 * k * pen]
    assert res.area[0] == 2 * (math.pi * (2 * r * pen - pen * pen))


def test_outputs_reset_after_contact_but_not_rewritten_when_free():
    """A sequence contact, free, free, proximity, contact gives at each step the outputs of a
    fresh probe model evaluated on that step alone (nothing of a cycle leaks into the next)."""
    sc = _plane_scene()
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                      np.array([1.0, 0, 0]), 0.003, 0.002, 1000.0, rows=3, cols=3)
    specs = [patch, probe("single", position=(0.01, 0, 0))]
    ps = sc.probes(specs)
    fields = ("in_contact", "depth", "area", "force", "force_body", "contact_normal",
              "touching_shape", "touching_body", "distance", "patch_force", "patch_area",
              "patch_in_contact", "position", "normal")
    for z in (0.001, 1.0, 2.0, 0.03, 0.0015):
        sc.pose("finger", t=[0, 0, z])
        res = sc.evaluate(ps)
        ref = sc.evaluate(sc.probes(specs))
        for f in fields:
            assert getattr(res, f).tobytes() == getattr(ref, f).tobytes(), (z, f)




# ----------------------------------------------------------------------------- degenerate cases

@pytest.mark.parametrize("where, expect_normal", [
    ("face", (0.0, 0.0, 1.0)),      # on the top face z = 1/2
    ("edge", (1.0, 0.0, 0.0)),      # on the edge x = z = 1/2: tie of x and z, lowest axis wins
    ("corner", (1.0, 0.0, 0.0)),    # on the corner: three-way tie, x
])
def test_probe_exactly_on_a_box_surface(where, expect_normal):
    """A probe centre exactly on the surface of a unit box (dyadic coordinates, no rounding):
    d_surf = 0, so d_pen = r, area = pi r^2, force k r along the surface normal, which on an
    edge or a corner is the face of the lowest axis (the point kernel's documented tie rule)."""
    r, k = 2.0**-8, 1024.0
    sc = Scene(["finger", "block"])
    sc.add("block", Box([1.0, 1.0, 1.0]))
    position = {"face": (0.125, -0.25, 0.5), "edge": (0.5, 0.125, 0.5), "corner": (0.5, 0.5, 0.5)}[where]
    sc.pose("finger", t=position)
    res = sc.evaluate(sc.probes([probe(normal=(-1, -1, -1), radius=r, stiffness=k)]))
    assert res.in_contact[0] and res.depth[0] == r and res.distance[0] == -r
    assert list(res.contact_normal[0]) == list(expect_normal)
    assert list(res.force[0]) == [k * r * c for c in expect_normal]
    assert res.area[0] == math.pi * (2 * r * r - r * r)


def test_zero_range_sees_only_touching_or_grazing_shapes():
    """range 0: a shape is seen only with gap d_surf - r <= 0. At gap exactly 0 (dyadic
    numbers) the distance is 0 and the probe is not in contact (touching needs d_surf < r);
    2^-20 m farther the probe sees nothing; 2^-20 m closer it touches."""
    r = 2.0**-8
    sc = _plane_scene()
    pm = sc.probes([probe(normal=(0, 0, -1), radius=r, range=0.0)])
    for dz, distance, touching in ((0.0, 0.0, False), (2.0**-20, math.inf, False), (-2.0**-20, -2.0**-20, True)):
        sc.pose("finger", t=[0.5, 0.25, r + dz])
        res = sc.evaluate(pm)
        assert res.distance[0] == distance and bool(res.in_contact[0]) == touching
        assert res.depth[0] == (2.0**-20 if touching else 0.0)


def test_probe_deep_inside_a_sphere_and_on_a_capsule_axis():
    """Centres deeper than 2r inside a sphere and on a capsule's axis: d_pen clipped to 2r,
    area pi (2r 2r - 4 r^2) = 0, force 2 k r along the (fallback) outward normal, finite."""
    r, k = 0.002, 500.0
    sc = Scene(["finger", "ball", "rod"])
    sc.add("ball", Sphere([0.0, 0.0, 0.0], 0.01))
    sc.add("rod", Capsule([1.0, 0.0, -0.05], [1.0, 0.0, 0.05], 0.01))
    specs = [probe("in_ball", position=(0.0, 0.0, 0.003), normal=(0, 0, -1), radius=r, stiffness=k,
                   sense_bodies=("ball",)),
             probe("on_axis", position=(1.0, 0.0, 0.0), normal=(0, 0, 1), radius=r, stiffness=k,
                   sense_bodies=("rod",))]
    res = sc.evaluate(sc.probes(specs))
    d, _, n = point_signed_distance_batch(sc.world(), None, np.arange(2), res.position)
    assert d[0] == pytest.approx(-0.007, abs=1e-15) and d[1] == -0.01
    facing = np.einsum("ij,ij->i", n, res.normal) < 0
    assert facing[0]  # the sphere's outward normal at (0, 0, 0.003) is +z
    np.testing.assert_array_equal(res.depth, np.where(facing, 2 * r, 0.0))
    np.testing.assert_allclose(res.area, 0.0, atol=1e-20)
    np.testing.assert_allclose(res.force, np.where(facing[:, None], 2 * k * r * n, 0.0), atol=1e-15)
    assert np.all(np.isfinite(res.force)) and np.all(np.isfinite(res.contact_normal))


# ----------------------------------------------------------------------------- contact state

def test_contact_state_hysteresis_by_hand():
    """contact_threshold 2^-10 m, release_threshold 2^-12 m (dyadic depths r - h, exact): the
    state enters only above 2^-10 and leaves only at or below 2^-12; a probe without
    thresholds is in contact exactly while it touches; patch counts follow the state."""
    r = 2.0**-8
    sc = _plane_scene()
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]), np.array([1.0, 0, 0]),
                    2.0**-6, r, 1000.0, rows=1, cols=2, contact_threshold=2.0**-10,
                    release_threshold=2.0**-12)
    pm = sc.probes([pad, probe("plain", radius=r)])
    steps = [  # depth, expected state of the pad probes, of the plain probe
        (0.0, False, False), (2.0**-11, False, True), (2.0**-9, True, True),
        (2.0**-11, True, True), (2.0**-12, False, True), (2.0**-11, False, True),
        (2.0**-10, False, True), (3 * 2.0**-11, True, True), (0.0, False, False),
    ]
    for depth, pad_state, plain_state in steps:
        sc.pose("finger", t=[0.0, 0.0, r - depth])
        res = sc.evaluate(pm)
        assert list(res.depth) == [depth] * 3
        assert list(res.in_contact) == [pad_state, pad_state, plain_state], depth
        assert res.patch_in_contact[0] == 2 * pad_state
        # the cycle's geometry is reported whatever the state
        assert list(res.force[:, 2]) == [1000.0 * depth] * 2 + [2000.0 * depth]


def test_two_probe_data_of_one_model_never_interfere():
    """Two ProbeData of one ProbeModel evaluated at different poses keep their own results
    and their own contact state."""
    r = 2.0**-8
    sc = _plane_scene()
    spec = probe(radius=r, contact_threshold=2.0**-10, release_threshold=2.0**-12)
    pm, a = sc.probes([spec])
    b = pm.create_data()
    sc.pose("finger", t=[0.0, 0.0, r - 2.0**-9])
    res_a = pm.evaluate(a, sc.R, sc.t, sc.world())
    kept = (res_a.depth.copy(), res_a.force.copy(), res_a.in_contact.copy())
    sc.pose("finger", t=[0.0, 0.0, r - 2.0**-11])
    res_b = pm.evaluate(b, sc.R, sc.t, sc.world())
    assert res_a is not res_b
    assert res_a.depth[0] == kept[0][0] == 2.0**-9 and res_a.in_contact[0]
    assert np.array_equal(res_a.force, kept[1])
    assert res_b.depth[0] == 2.0**-11 and not res_b.in_contact[0]  # b never entered
    res_a = pm.evaluate(a, sc.R, sc.t, sc.world())  # same shallow depth: a stays in contact
    assert res_a.in_contact[0] and not res_b.in_contact[0]
    a.reset_contact_state()
    assert not pm.evaluate(a, sc.R, sc.t, sc.world()).in_contact[0]


# ----------------------------------------------------------------------------- patch wrench

def test_patch_wrench_of_a_tilted_pad_by_hand():
    """A 1 x 2 pad (pitch s, k, r) tilted by theta about y and pressed into the plane z = 0:
    its probes at x = -+s/2 (probe 0 first) sit at z = t +- (s/2) sin(theta), depths r - z; each force is
    k depth along +z, i.e. k depth (-sin, 0, cos) in the body frame. About the patch origin:
    torque_y = -(s/2) k (depth_+ - depth_-) cos = -k s^2 sin cos / 2; force_body =
    k (2r - 2t) (-sin, 0, cos); torque_x = torque_z = 0."""
    s, k, r, t, theta = 0.004, 1000.0, 0.002, 0.001, 0.2
    sc = _plane_scene()
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]), np.array([1.0, 0, 0]),
                    s, r, k, rows=1, cols=2)
    pm = sc.probes([pad])
    sc.pose("finger", R=axis_angle_to_matrix([0, 1, 0], theta), t=[0.0, 0.0, t])
    res = sc.evaluate(pm)
    sn, cs = math.sin(theta), math.cos(theta)
    assert res.in_contact.all()
    np.testing.assert_allclose(res.depth, [r - t - s / 2 * sn, r - t + s / 2 * sn], rtol=1e-13)  # x = -s/2, +s/2
    np.testing.assert_allclose(res.patch_force[0], [0.0, 0.0, k * (2 * r - 2 * t)], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(res.patch_force_body[0], k * (2 * r - 2 * t) * np.array([-sn, 0, cs]),
                               rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(res.patch_torque_body[0], [0.0, -k * s * s * sn * cs / 2, 0.0],
                               rtol=1e-12, atol=1e-17)
    assert res.patch_area[0] == pytest.approx(res.area.sum(), rel=1e-15)


def test_empty_probe_sets_and_scenes():
    """No probes, or probes without any shape: evaluations return empty or free results."""
    sc = _plane_scene()
    res = sc.evaluate(sc.probes([]))
    assert res.names == [] and res.position.shape == (0, 3) and res.pairs_checked == 0
    bare = Scene(["finger"])
    res = bare.evaluate(bare.probes([probe(body="finger"), probe("q", body="finger")]))
    assert res.pairs_checked == 0 and np.all(res.distance == math.inf) and not res.in_contact.any()


def test_probe_bodies_resolved_without_touching_the_specs():
    """Specs naming bodies by their plain names are resolved against the model's qualified
    names; the spec objects given are left as they were."""
    sc = _plane_scene()
    spec = probe(body="finger")
    pm, _ = sc.probes([spec])
    assert pm.bodies == ["/ambf/env/finger"] and spec.body == "finger"
    with pytest.raises(ValueError, match="probe 'x': no body named 'thumb'"):
        sc.probes([probe("x", body="thumb")])


def test_patch_probes_given_apart_are_refused():
    """Expanded patch probes interleaved with other probes cannot be summed as one patch: the
    compiled model names the patch instead of summing a wrong range."""
    sc = _plane_scene()
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]), np.array([1.0, 0, 0]),
                    0.003, 0.002, 1000.0, rows=1, cols=2)
    a, b = pad.probes()
    with pytest.raises(ValueError, match="patch 'pad': its probes must be consecutive"):
        sc.probes([a, probe("between"), b])
    pm, _ = sc.probes([probe("before"), a, b])  # consecutive: fine, origin = their centroid
    assert pm.patch_names == ["pad"] and list(pm.patch_first) == [1] and list(pm.patch_end) == [3]
