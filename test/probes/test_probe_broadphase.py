"""The probe broadphase drops only pairs the exact rules reject: every output equals the brute
force over all sensed (probe, shape) pairs (probe_scene.brute_force) on random scenes of every
shape kind, clusters of every size, pairs exactly at range, and shapes behind the sensor
plane; a Hypothesis property over random scenes."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from conftest import examples
from hypothesis import strategies as st

from probe_scene import Scene, assert_brute_force, brute_force, probe
from ambf_collision.geometry.shapes import Box, Capsule, Cone, ConvexHull, Cylinder, Plane, Sphere
from ambf_collision.geometry.transforms import axis_angle_to_matrix
from ambf_collision.probes import PatchSpec


def _plane_scene():
    sc = Scene(["finger", "floor"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    return sc


@pytest.mark.slow
def test_broadphase_matches_brute_force_on_random_scene():
    """Many probes on several bodies, spheres and boxes and a plane: the outputs equal a
    brute-force evaluation over every (probe, shape) pair, with far fewer exact queries."""
    rng = np.random.default_rng(7)
    sc = Scene(["hand", "a", "b", "c", "floor"])
    for b in "abc":
        for _ in range(4):
            sc.add(b, Sphere(rng.uniform(-0.05, 0.05, 3), rng.uniform(0.005, 0.03)))
            sc.add(b, Box(rng.uniform(0.01, 0.06, 3), rng.uniform(-0.05, 0.05, 3), rng.normal(size=4)))
    sc.add("floor", Plane([0, 0, 1], -0.02))
    for b in "abc":
        sc.pose(b, R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=rng.uniform(-0.08, 0.08, 3))
    sc.pose("hand", R=axis_angle_to_matrix([0, 1, 0], 0.4), t=[0, 0, 0.01])
    specs = [probe(f"p{i}", body="/ambf/env/hand", position=rng.uniform(-0.1, 0.1, 3), normal=rng.normal(size=3),
                   radius=rng.uniform(0.002, 0.01), range=0.02) for i in range(600)]
    pm = sc.probes(specs, cluster_size=16)
    res = sc.evaluate(pm)
    assert 0 < res.pairs_checked < 0.2 * len(specs) * len(sc.shapes)
    exp = brute_force(pm[0], sc.world(), res)
    assert_brute_force(res, exp)
    assert res.in_contact.sum() > 20 and np.isfinite(res.distance).sum() > res.in_contact.sum()


def _all_kinds_scene(rng):
    sc = Scene(["hand", "a", "b", "c", "floor"])
    tet = np.array([[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0], [0, 0, 0.03]], float)
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


@pytest.mark.parametrize("cluster_size", [1, 7, 25, 1000])
def test_exact_stage_matches_brute_force_all_kinds(cluster_size):
    """Every shape kind (a zero-length capsule, two planes, a hull), random probes and a patch
    (one sensor normal, own body sensed) and single probes with their own sense lists on the
    moving hand, clusters from 1 probe to all: over several cycles each output equals the brute
    force over all pairs, and every shape is touched by some probe."""
    rng = np.random.default_rng(11)
    sc = _all_kinds_scene(rng)
    specs = [probe(f"p{i}", body="/ambf/env/hand", position=rng.uniform(-0.06, 0.06, 3),
                   normal=rng.normal(size=3), radius=rng.uniform(0.002, 0.01), range=0.02)
             for i in range(400)]
    specs.append(PatchSpec("pad", "/ambf/env/hand", np.array([0, 0, 0.012]), np.array([0.2, 0.1, 1.0]) / 1.0247,
                           np.array([1.0, 0, -0.2]) / 1.0198, 0.004, 0.003, 800.0, rows=10, cols=10,
                           range=0.02, include_own_body=True))
    keys = [("a",), ("b",), ("c",), ("floor",), ("a", "b"), ("b", "c"), ("a", "floor"), ()]
    specs += [probe(f"single{j}", body="/ambf/env/hand", position=rng.uniform(-0.03, 0.03, 3),
                    normal=rng.normal(size=3), radius=0.01, range=0.03, sense_bodies=key,
                    include_own_body=not key) for j, key in enumerate(keys)]
    pm = sc.probes(specs, cluster_size=cluster_size)
    touched = seen = 0
    touching = set()
    for cycle in range(4):
        for body in ("a", "b", "c"):
            sc.pose(body, R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=rng.uniform(-0.05, 0.05, 3))
        sc.pose("hand", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=rng.uniform(-0.01, 0.01, 3))
        res = sc.evaluate(pm)
        assert_brute_force(res, brute_force(pm[0], sc.world(), res))
        assert 0 < res.pairs_checked < len(pm[0]) * len(sc.shapes)
        touched += res.in_contact.sum()
        seen += np.isfinite(res.distance).sum()
        touching.update(res.touching_shape.tolist())
    assert touched > 50 and seen > touched
    assert touching >= set(range(len(sc.shapes) - 1))  # every kind touched some probe


def test_plane_broadphase_keeps_probes_exactly_at_range():
    """A 4 x 4 patch facing a plane: with the patch at exactly radius + range above it
    (dyadic numbers) every probe sees the plane at distance == range; 1/16 m higher nothing
    is queried at all. A single probe is kept exactly at range and dropped 2^-20 m beyond."""
    r, rng_ = 2.0**-8, 3 * 2.0**-6
    sc = _plane_scene()
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                      np.array([1.0, 0, 0]), 2.0**-7, r, 1000.0, rows=4, cols=4, range=rng_)
    pm = sc.probes([patch])
    sc.pose("finger", t=[0.25, -0.5, r + rng_])
    res = sc.evaluate(pm)
    assert res.pairs_checked == 16 and np.all(res.distance == rng_) and not res.in_contact.any()
    sc.pose("finger", t=[0.25, -0.5, r + rng_ + 2.0**-4])
    res = sc.evaluate(pm)
    assert res.pairs_checked == 0 and np.all(res.distance == math.inf)
    pm = sc.probes([probe(normal=(0, 0, -1), radius=r, range=rng_)])
    sc.pose("finger", t=[0.25, -0.5, r + rng_])
    res = sc.evaluate(pm)
    assert res.pairs_checked == 1 and res.distance[0] == rng_
    sc.pose("finger", t=[0.25, -0.5, r + rng_ + 2.0**-20])
    res = sc.evaluate(pm)
    assert res.distance[0] == math.inf


def test_box_broadphase_keeps_probe_exactly_at_range():
    """A single probe facing a unit box's +x face from exactly radius + range away (dyadic
    numbers) sees it at distance == range; 2^-20 m farther it sees nothing and 2^-4 m farther
    the box is not even queried."""
    r, rng_ = 2.0**-8, 3 * 2.0**-6
    sc = Scene(["finger", "block"])
    sc.add("block", Box([1, 1, 1]))
    sc.pose("block", t=[0.25, 0.5, -0.125])
    pm = sc.probes([probe(normal=(-1, 0, 0), radius=r, range=rng_)])
    for extra, distance in ((0.0, rng_), (2.0**-20, math.inf), (2.0**-4, math.inf)):
        sc.pose("finger", t=[0.25 + 0.5 + r + rng_ + extra, 0.625, 0.0])
        res = sc.evaluate(pm)
        assert res.distance[0] == distance
    assert res.pairs_checked == 0


def test_facing_prune_capsule_behind_the_pad():
    """A 4 x 4 pad (normal +z) just above a capsule's top pole on another body: the capsule lies
    wholly behind the pad's sensor plane (its support along +z is below every probe), so it is
    not queried at all, down to a lift of 1e-6 m, and nothing is seen, as the brute force says;
    flush with the pad (lift 0, no slack left) it is queried. Turned to face the
    capsule (normal -z) the pad touches it."""
    sc = Scene(["finger", "hand"])
    sc.add("hand", Capsule([0, 0, -0.1], [0, 0, 0.0], 0.035))
    patch = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, 1.0]),
                      np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=4, cols=4)
    pm = sc.probes([patch])
    R = axis_angle_to_matrix([1, 2, 3], 0.8)
    for lift in (0.035, 1e-6):
        sc.pose("finger", R=R, t=R @ [0, 0, lift])
        sc.pose("hand", R=R)
        res = sc.evaluate(pm)
        assert_brute_force(res, brute_force(pm[0], sc.world(), res))
        assert np.all(res.distance == math.inf) and res.pairs_checked == 0
    sc.pose("finger", R=R, t=R @ [0, 0, 0.0])  # n_c . n_s is rounding there: only "queried"
    assert sc.evaluate(pm).pairs_checked == 16
    pm = sc.probes([PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]),
                              np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=4, cols=4)])
    sc.pose("finger", R=R, t=R @ [0, 0, 0.035])
    res = sc.evaluate(pm)
    assert res.pairs_checked == 16 and res.in_contact.all()
    assert_brute_force(res, brute_force(pm[0], sc.world(), res))


def test_facing_prune_planes_and_mixed_normals():
    """A plane whose normal points along the pad normal is dropped for the whole pad without a
    query (n_c . n_s > 0 for every probe) even in reach; a cluster whose members have
    different sensor normals is always queried."""
    sc = _plane_scene()
    pad_up = PatchSpec("up", "/ambf/env/finger", np.zeros(3), np.array([0, 0, 1.0]),
                       np.array([1.0, 0, 0]), 0.002, 0.002, 1000.0, rows=2, cols=2)
    sc.pose("finger", t=[0, 0, 0.001])
    res = sc.evaluate(sc.probes([pad_up]))
    assert res.pairs_checked == 0 and not res.in_contact.any()
    mixed = [probe("a", normal=(0, 0, 1)), probe("b", position=(0.001, 0, 0), normal=(0, 0, -1))]
    res = sc.evaluate(sc.probes(mixed))
    assert res.pairs_checked == 2 and list(res.in_contact) == [False, True]


@pytest.mark.parametrize("floor", ["plane", "box", "plane_and_box"])
def test_shape_under_every_cluster_matches_brute_force(floor):
    """A tilted pad of 36 probes (5 clusters) pressed into a floor that every cluster reaches:
    some probes touch, some only sense, some are free, and each output equals the brute force
    over all pairs; patch totals are the sums of their probes."""
    sc = Scene(["finger", "floor"])
    if floor != "box":
        sc.add("floor", Plane([0, 0, 1], 0.0))
    if floor != "plane":
        sc.add("floor", Box([0.4, 0.4, 0.1], [0.0, 0.0, -0.0505], [0, 0, 0, 1]))
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0.0, 0.0, -1.0]),
                    np.array([1.0, 0.0, 0.0]), 0.004, 0.002, 1500.0, rows=6, cols=6, range=0.01)
    pm = sc.probes([pad], cluster_size=8)
    N = len(pm[0])
    counts = []
    for tilt, height in ((0.3, 0.001), (0.2, -0.0005), (0.8, 0.006)):
        sc.pose("finger", R=axis_angle_to_matrix([0.0, 1.0, 0.0], tilt), t=[0.0, 0.0, height])
        res = sc.evaluate(pm)
        exp = brute_force(pm[0], sc.world(), res)
        assert_brute_force(res, exp)
        n_touch = int(res.in_contact.sum())
        counts.append((n_touch, int(np.isfinite(res.distance).sum())))
        np.testing.assert_allclose(res.patch_force[0], exp["force"].sum(0), atol=1e-12)
        assert res.patch_in_contact[0] == n_touch
    assert counts[1] == (N, N)  # all touch
    assert 0 < counts[0][0] < counts[0][1] and 0 < counts[2][0] < counts[2][1] < N, counts


@pytest.mark.parametrize("behind", [False, True])
def test_free_cycle_after_contact_resets_outputs_and_moves_probes(behind):
    """A pad pressed into a floor, then lifted beyond reach (with a box riding just behind the
    pad, within the bounding-sphere reach but wholly behind the sensor plane): in the free
    poses nothing is queried, every contact output is back to its free value, and the probe
    centres and normals are still R p + t and R n, probe by probe."""
    sc = Scene(["finger", "floor", "lid"])
    sc.add("floor", Plane([0, 0, 1], 0.0))
    if behind:
        sc.add("lid", Box([0.02, 0.02, 0.004], [0.0, 0.0, 0.008], [0, 0, 0, 1]))
    pad = PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0.0, 0.0, -1.0]),
                    np.array([1.0, 0.0, 0.0]), 0.004, 0.002, 1500.0, rows=6, cols=6, range=0.01)
    pm = sc.probes([pad], cluster_size=8)
    specs = pad.probes()
    for tilt, height, free in ((0.2, 0.0005, False), (0.1, 0.05, True), (0.3, 0.0005, False),
                               (-0.2, 0.03, True), (0.0, 0.04, True)):
        R = axis_angle_to_matrix([0.0, 1.0, 0.0], tilt)
        sc.pose("finger", R=R, t=[0.0, 0.0, height])
        sc.pose("lid", t=[0.0, 0.0, height])
        res = sc.evaluate(pm)
        for i, sp in enumerate(specs):
            np.testing.assert_allclose(res.position[i], R @ sp.position + [0.0, 0.0, height], atol=1e-15)
            np.testing.assert_allclose(res.normal[i], R @ sp.normal, atol=1e-15)
        assert_brute_force(res, brute_force(pm[0], sc.world(), res))
        if free:
            assert res.pairs_checked == 0
            assert np.all(np.isinf(res.distance)) and not res.in_contact.any()
            for name in ("depth", "area", "force", "force_body", "contact_normal", "patch_force",
                         "patch_area", "patch_in_contact", "patch_force_body", "patch_torque_body"):
                assert not np.any(getattr(res, name)), name
            assert np.all(res.touching_shape == -1) and np.all(res.touching_body == -1)
        else:
            assert res.in_contact.any() and res.pairs_checked > 0


def test_cluster_partly_within_reach_of_a_sphere():
    """A large sphere whose reach cuts through a pad of spread probes (some members within
    reach, some not), small spheres near and far: over many poses the outputs equal the brute
    force, with clusters wholly in reach, partly in reach and out of reach."""
    rng = np.random.default_rng(11)
    sc = Scene(["finger", "a", "b"])
    sc.add("a", Sphere([0.0, 0.0, 0.0], 0.06))
    for _ in range(5):
        sc.add("b", Sphere(rng.uniform(-0.02, 0.02, 3), rng.uniform(0.003, 0.02)))
    specs = [probe(f"p{i}", position=rng.uniform(-0.01, 0.01, 3), normal=rng.normal(size=3),
                   radius=rng.uniform(0.001, 0.003), range=rng.uniform(0.005, 0.03)) for i in range(200)]
    pm = sc.probes(specs, cluster_size=16)
    checked = []
    for trial in range(60):
        u = rng.normal(size=(2, 3))
        u /= np.linalg.norm(u, axis=1, keepdims=True)
        if trial % 3 == 0:
            ta, tb = u[0] * (0.072 + rng.uniform(-0.012, 0.006)), u[1]
        elif trial % 3 == 1:
            ta, tb = u[0] * 0.005, u[1]
        else:
            ta, tb = u * rng.choice([0.005, 0.02, 0.05, 1.0], size=(2, 1))
        sc.pose("a", t=ta)
        sc.pose("b", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=tb)
        sc.pose("finger", R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)))
        res = sc.evaluate(pm)
        assert_brute_force(res, brute_force(pm[0], sc.world(), res))
        checked.append(res.pairs_checked)
    assert 0 < min(checked) < max(checked) < len(specs) * len(sc.shapes)


_KINDS = st.sampled_from(["sphere", "capsule", "box", "cylinder", "cone", "plane", "hull"])


def _shape(kind, rng):
    p = rng.uniform(-0.03, 0.03, 3)
    q = rng.normal(size=4)
    if kind == "sphere":
        return Sphere(p, rng.uniform(0.0, 0.02))
    if kind == "capsule":
        return Capsule(p, p + rng.uniform(-0.03, 0.03, 3) * rng.integers(0, 2), rng.uniform(0.0, 0.02))
    if kind == "box":
        return Box(rng.uniform(0.0, 0.05, 3) * (rng.uniform(size=3) > 0.2), p, q)
    if kind in ("cylinder", "cone"):
        return (Cylinder if kind == "cylinder" else Cone)(rng.uniform(0.001, 0.03), rng.uniform(0.001, 0.05), p, q)
    if kind == "plane":
        return Plane(rng.normal(size=3), rng.uniform(-0.03, 0.0))
    return ConvexHull(rng.uniform(-0.02, 0.02, (int(rng.integers(4, 12)), 3)), p, q)


@settings(max_examples=examples(25), deadline=None)
@given(kinds=st.lists(_KINDS, min_size=1, max_size=6), seed=st.integers(0, 2**31 - 1),
       cluster_size=st.sampled_from([1, 4, 32]))
def test_property_outputs_equal_brute_force(kinds, seed, cluster_size):
    """Random shapes of random kinds (flat boxes, zero-length capsules, zero radii included) on
    two bodies, a patch and random probes on a third: every output equals the brute force."""
    rng = np.random.default_rng(seed)
    sc = Scene(["finger", "a", "b"])
    for j, kind in enumerate(kinds):
        sc.add("ab"[j % 2], _shape(kind, rng))
    specs = [probe(f"p{i}", position=rng.uniform(-0.03, 0.03, 3), normal=rng.normal(size=3),
                   radius=rng.uniform(0.001, 0.01), range=rng.choice([0.0, 0.01, 0.05])) for i in range(30)]
    specs.append(PatchSpec("pad", "/ambf/env/finger", np.zeros(3), np.array([0, 0, -1.0]), np.array([1.0, 0, 0]),
                           0.004, 0.003, 900.0, rows=5, cols=4, range=0.01))
    pm = sc.probes(specs, cluster_size=cluster_size)
    for _ in range(2):
        for body in ("a", "b", "finger"):
            sc.pose(body, R=axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, 3)), t=rng.uniform(-0.02, 0.02, 3))
        res = sc.evaluate(pm)
        assert_brute_force(res, brute_force(pm[0], sc.world(), res))
