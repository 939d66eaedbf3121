"""Pair lists (PairDistance, evaluate_pairs, contact_order): every pair equals the single-pair
result on the moved shapes, the exact rational reference, coal; ``near`` keeps every contact and
the minimum exactly (random scenes and the demo arm's trajectory) with hand-derived bounds."""

import math

import numpy as np
import pytest
from numba import njit

import exact_reference as ex
from ambf_collision.geometry.distance import distance
from ambf_collision.geometry.mesh_set import no_meshes
from ambf_collision.geometry.pairs import (PairDistance, PairResult, bound_data, bounding_spheres,
                                          contact_order, evaluate_pairs, pair_constants,
                                          pair_results)
from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.shapes import (CAPSULE, CONE, CONVEX, CYLINDER, PLANE, Box, Capsule, Cone,
                                            ConvexHull, Cylinder, Plane, ShapeError, Sphere)
from ambf_collision.geometry.tolerances import BOUND_MARGIN
from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.geometry.world_shapes import (Link, LinkShapes, WorldShapes, hull_arrays,
                                                 make_hulls, to_world, world_of)


def witness_tol(s1, s2, d, closed=1e-9):
    """Witness and normal tolerance (m) when the same pair is computed from two poses equal up to
    rounding: ``closed`` for the closed forms; where GJK/EPA runs (two solids, a hull, a capsule
    core inside a cylinder or cone) None: its witnesses converge only to its tolerance (and a
    flat contact has no unique witness), so the caller checks the result's consistency."""
    kinds = {s1.kind, s2.kind}
    gjk = (min(kinds) > CAPSULE and PLANE not in kinds) or CONVEX in kinds or (
        d < -min(getattr(s, "radius", 0.0) for s in (s1, s2) if s.kind <= CAPSULE) and kinds & {CYLINDER, CONE}
        if min(kinds) <= CAPSULE else False)
    return None if gjk else closed


def assert_same_pair(res, k, c, tol):
    """Row ``k`` of a PairResult against a single-pair Contact (see :func:`witness_tol`)."""
    assert res.distance[k] == pytest.approx(c.distance, abs=1e-9)
    if tol is None:   # GJK/EPA: the witnesses of this row are consistent, the normal close
        np.testing.assert_allclose(res.point_2[k] - res.point_1[k], res.distance[k] * res.normal[k], atol=1e-9)
        np.testing.assert_allclose(res.normal[k], c.normal, atol=1e-4)
        np.testing.assert_allclose(res.position[k], 0.5 * (res.point_1[k] + res.point_2[k]), atol=1e-15)
        return
    for f in ("point_1", "point_2", "normal", "position"):
        np.testing.assert_allclose(getattr(res, f)[k], getattr(c, f), atol=tol, err_msg=f)


def scene(rng, solids):
    shapes = []
    for k in range(24):
        if k % 3 == 0:
            shapes.append(Sphere(rng.uniform(-.5, .5, 3), rng.uniform(0, .1)))
        else:
            a = rng.uniform(-.5, .5, 3)
            shapes.append(Capsule(a, a if k % 7 == 0 else a + rng.uniform(-.3, .3, 3), rng.uniform(0, .1)))
    if solids:
        shapes += [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
                   Plane([0, 0, 1], -0.4)]
    return shapes


@pytest.mark.slow
@pytest.mark.parametrize("solids", [False, True])
def test_batch_equals_single_pair_in_world(solids):
    rng = np.random.default_rng(3)
    shapes = scene(rng, solids)
    n = len(shapes)
    F = 4
    fi = rng.integers(0, F, n)
    ls = LinkShapes(shapes, fi)
    pairs = np.array([(i, j) for i in range(n) for j in range(n) if i != j and (i + j) % 3])
    pairs = pairs[[not (isinstance(shapes[i], Plane) and isinstance(shapes[j], Plane)) for i, j in pairs]]
    pd = PairDistance(ls, pairs)
    for _trial in range(2):  # buffers reused across calls
        R = quat_to_matrix(rng.normal(size=(F, 4)))
        t = rng.normal(size=(F, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            si = shapes[i].transformed(R[fi[i]], t[fi[i]])
            sj = shapes[j].transformed(R[fi[j]], t[fi[j]])
            c = distance(si, sj)
            assert_same_pair(res, k, c, witness_tol(si, sj, c.distance))
        assert np.all(np.isfinite(res.normal))


def test_capsule_batch_against_exact_reference():
    rng = np.random.default_rng(5)
    shapes = scene(rng, False)
    ls = LinkShapes(shapes, np.zeros(len(shapes), int))
    pairs = np.array([(i, j) for i in range(len(shapes)) for j in range(i + 1, len(shapes))])
    res = PairDistance(ls, pairs).compute(ls.to_world(np.eye(3)[None], np.zeros((1, 3))))
    for k, (i, j) in enumerate(pairs):
        seg = [(s.center, s.center) if isinstance(s, Sphere) else (s.a, s.b) for s in (shapes[i], shapes[j])]
        exact = ex.capsule_distance(*seg[0], shapes[i].radius, *seg[1], shapes[j].radius)
        assert res.distance[k] == pytest.approx(exact, abs=1e-9)


def test_plane_moved_by_frame():
    ls = LinkShapes([Plane([0, 0, 1], 0.5)], [0])
    R = quat_to_matrix([0, np.sin(np.pi / 4), 0, np.cos(np.pi / 4)])  # z -> x
    w = ls.to_world(R[None], np.array([[2.0, 0, 0]]))
    np.testing.assert_allclose(w.normal[0], [1, 0, 0], atol=1e-15)
    assert w.offset[0] == pytest.approx(2.5)


def coal_pair(w, i, j):
    """coal's signed distance between shapes i and j of a world (hulls as coal Convex of the
    HullSet's triangles), tight tolerances."""
    coal = pytest.importorskip("coal")
    from ambf_collision.geometry.coal_bridge import coal_distance, to_coal
    from ambf_collision.geometry.world_shapes import shape_at

    def geom(k):
        s = shape_at(w, None, k)
        if s.kind != ConvexHull.kind:
            return to_coal(s)
        h = int(w.hull_id[k])
        pts = coal.StdVec_Vec3s()
        for v in w.hulls.hull_vertices(h):
            pts.append(v)
        tris = coal.StdVec_Triangle()
        for a, b, c in w.hulls.hull_triangles(h):
            tris.append(coal.Triangle(int(a), int(b), int(c)))
        return coal.Convex(pts, tris), coal.Transform3s(w.rot[k], w.a[k])

    return coal_distance(*geom(i), *geom(j))


def test_solid_pairs_against_coal_across_cycles():
    """Solid - solid pairs (GJK/EPA) equal coal on the posed shapes in every cycle, shapes shared
    by several pairs."""
    shapes = [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
              Cone(.15, .2, [0, 0, .1]), ConvexHull([[0, 0, 0], [.2, 0, 0], [0, .2, 0], [0, 0, .2]]),
              Plane([0, 0, 1], -0.4)]
    ls = LinkShapes(shapes, [0, 1, 2, 3, 0])
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    pd = PairDistance(ls, pairs)
    rng = np.random.default_rng(11)
    for cycle in range(4):
        R = quat_to_matrix(rng.normal(size=(4, 4)))
        t = rng.uniform(-.3, .3, (4, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            if 4 in (i, j):
                continue   # plane pairs: hand-derived tests below
            d, p1, p2, n = coal_pair(w, i, j)
            tol = 1e-9 if d > 0 else 1e-6   # coal's EPA is the loose side when penetrating
            assert res.distance[k] == pytest.approx(d, abs=tol), (cycle, i, j)
            np.testing.assert_allclose(res.position[k], 0.5 * (res.point_1[k] + res.point_2[k]), atol=1e-15)
            np.testing.assert_allclose(res.point_2[k] - res.point_1[k], res.distance[k] * res.normal[k], atol=1e-8)


def test_capsule_solid_groups_recomputed_each_cycle_both_orders():
    """Sphere/capsule - solid pairs of every solid kind, the solid as shape 1 and as shape 2,
    some capsules through a solid (penetration path): every cycle with new poses equals fresh
    single-pair ``distance()`` on the posed shapes (no stale gather, staging or sign)."""
    solids = [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
              Cone(.15, .2, [0, 0, .1]), ConvexHull([[0, 0, 0], [.2, 0, 0], [0, .2, 0], [0, 0, .2]]),
              Plane([0, 0, 1], -0.05)]
    rounds = [Sphere([0.3, 0.1, 0.0], 0.05), Capsule([-.3, 0, 0], [.3, 0, 0], 0.02),  # through the box
              Capsule([0.1, 0.2, -.5], [0.1, 0.2, .5], 0.03), Sphere([0, 0, 0], 0.0),
              Capsule([0.5, 0.5, 0.5], [0.6, 0.4, 0.3], 0.04)]
    shapes = solids + rounds
    S, Q = len(solids), len(rounds)
    fi = [0, 1, 1, 0, 2] + [0, 3, 0, 2, 3]
    ls = LinkShapes(shapes, fi)
    pairs = []
    for i in range(S):
        for j in range(S, S + Q):
            pairs.append((i, j) if (i + j) % 2 else (j, i))
            if i + j < 9:
                pairs.append((j, i) if (i + j) % 2 else (i, j))
    pairs = np.array(pairs)
    pd = PairDistance(ls, pairs)
    rng = np.random.default_rng(21)
    penetrating = 0
    for cycle in range(4):
        if cycle == 0:
            R, t = np.tile(np.eye(3), (4, 1, 1)), np.zeros((4, 3))
        else:
            R = quat_to_matrix(rng.normal(size=(4, 4)))
            t = rng.uniform(-.1, .1, (4, 3))
        res = pd.compute(ls.to_world(R, t))
        for k, (i, j) in enumerate(pairs):
            si, sj = shapes[i].transformed(R[fi[i]], t[fi[i]]), shapes[j].transformed(R[fi[j]], t[fi[j]])
            c = distance(si, sj)
            assert_same_pair(res, k, c, witness_tol(si, sj, c.distance, closed=1e-8))
            penetrating += c.distance < 0
        assert np.all(np.isfinite(res.normal))
    assert penetrating >= 4


# -- near: far pairs bounded instead of computed (what the node asks for) ------------------

def _mixed_scene(rng):
    """Spheres, capsules (some of zero length) and every solid kind, posed at random."""
    q = lambda: rng.normal(size=4)
    shapes = []
    for k in range(10):
        a = rng.uniform(-.6, .6, 3)
        b = a if k % 4 == 0 else a + rng.uniform(-.3, .3, 3)
        shapes.append(Capsule(a, b, rng.uniform(0, .08)) if k % 5 else Sphere(a, rng.uniform(0, .08)))
    shapes += [Box(rng.uniform(.05, .4, 3), rng.uniform(-.5, .5, 3), q()),
               Box([.6, .6, .02], rng.uniform(-.5, .5, 3), q()),          # thin table top
               Cylinder(rng.uniform(.03, .2), rng.uniform(.05, .5), rng.uniform(-.5, .5, 3), q()),
               Cone(rng.uniform(.03, .2), rng.uniform(.05, .5), rng.uniform(-.5, .5, 3), q()),
               Plane([0, 0, 1], -0.7),
               ConvexHull(rng.uniform(-.1, .1, (8, 3)), rng.uniform(-.5, .5, 3), q())]
    return shapes


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("near", [0.0, 0.05, 0.3])
def test_near_keeps_contacts_and_minimum_exact(seed, near):
    """compute(world, near): the pairs it computes are bitwise those of compute(world); every
    pair closer than ``near`` and the closest pair are among them; the others hold a finite
    lower bound above the cutoff, reference witnesses and a unit normal."""
    rng = np.random.default_rng(seed)
    shapes = _mixed_scene(rng)
    n = len(shapes)
    F = 3
    fi = rng.integers(0, F, n)
    ls = LinkShapes(shapes, fi)
    pairs = np.array([(i, j) if (i + j) % 2 else (j, i) for i in range(n) for j in range(i + 1, n)])
    planes = [k for k, s in enumerate(shapes) if isinstance(s, Plane)]
    pairs = pairs[~np.isin(pairs, planes).all(axis=1)]
    full, bounded = PairDistance(ls, pairs), PairDistance(ls, pairs)
    seen_bounded = 0
    for _trial in range(4):  # buffers reused across calls
        R = quat_to_matrix(rng.normal(size=(F, 4)))
        t = rng.normal(scale=0.3, size=(F, 3))
        w = ls.to_world(R, t)
        ref = full.compute(w)
        res = bounded.compute(w, near)
        assert ref.exact.all()
        ex_ = res.exact
        for f in ("distance", "point_1", "point_2", "normal", "position"):
            assert np.array_equal(getattr(ref, f)[ex_], getattr(res, f)[ex_]), f
        assert ex_[ref.distance < near].all()
        assert ex_[np.argmin(ref.distance)]
        assert res.distance.min() == ref.distance.min()
        cut = max(near, ref.distance.min())
        lo = res.distance[~ex_]
        assert np.all(lo > cut) and np.all(lo <= ref.distance[~ex_] + 1e-12)
        for f in ("point_1", "point_2", "normal", "position"):
            assert np.isfinite(getattr(res, f)).all()
        np.testing.assert_allclose(np.linalg.norm(res.normal[~ex_], axis=1), 1.0, atol=1e-12)
        # the exact ones again after a bounded call: the flags are reset
        assert full.compute(w).exact.all() and BOUND_MARGIN > 0
        seen_bounded += int((~ex_).sum())
    assert seen_bounded > 0  # the scenes do exercise the bounded path


def test_near_bounds_hand_derived():
    """Capsule r=0.1 along x at height 1 over a unit box (half 0.5) at the origin: exact
    distance 0.4 (hand-derived), computed (a closed-form pair: never bounded). A cube hull of half
    extent 0.2 at x=3 (a GJK pair): exact distance from the capsule end (1,0,1) to the top edge
    point (2.8,0,0.2), sqrt(1.8^2 + 0.8^2) - 0.1; bounded when another pair is closer, by
    max(slab gap along x 2.8 - 1 - 0.1 = 1.7, centre sphere sqrt(5) - 0.1 - sqrt(3 * 0.2^2) =
    1.790...); computed when it is the closest pair."""
    cube = [[x, y, z] for x in (-.2, .2) for y in (-.2, .2) for z in (-.2, .2)]
    shapes = [Capsule([-1, 0, 1], [1, 0, 1], 0.1), Box([1, 1, 1]), ConvexHull(cube, [3, 0, 0])]
    ls = LinkShapes(shapes, [0, 0, 0])
    pd = PairDistance(ls, [(0, 1), (0, 2)])
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    # the box pair is computed first, so the sphere bound is not needed: the hull pair is bounded
    # by its box-axis gap alone, 1.7 (hand-derived above)
    res = pd.compute(w, 0.05)
    assert res.distance[0] == pytest.approx(0.4, abs=1e-15) and res.exact[0]
    assert not res.exact[1] and res.distance[1] == pytest.approx(1.7, abs=1e-15)
    np.testing.assert_allclose(res.point_1[1], [-1, 0, 1], atol=1e-15)  # capsule's first end
    np.testing.assert_allclose(res.point_2[1], [3, 0, 0], atol=1e-15)   # the hull's centre
    np.testing.assert_allclose(res.normal[1], np.array([4, 0, -1]) / np.sqrt(17), atol=1e-15)
    # with only GJK pairs, nothing is exact before the bounds: they add the centre spheres. A
    # second cube hull at (0, 0, 1.5) is 0.3 - 0.1 = 0.2 from the capsule (computed); the far
    # one is bounded by the centre sphere, sqrt(5) - 0.1 - sqrt(3 * 0.2^2)
    shapes2 = shapes + [ConvexHull(cube, [0, 0, 1.5])]
    ls2 = LinkShapes(shapes2, [0] * 4)
    r2 = PairDistance(ls2, [(0, 2), (0, 3)]).compute(ls2.to_world(np.eye(3)[None], np.zeros((1, 3))), 0.05)
    assert r2.exact.tolist() == [False, True]
    assert r2.distance[0] == pytest.approx(np.sqrt(5) - 0.1 - np.sqrt(0.12), abs=1e-15)
    assert r2.distance[1] == pytest.approx(0.2, abs=1e-15)
    exact = pd.compute(w)
    assert exact.exact.all()
    assert exact.distance[1] == pytest.approx(np.sqrt(1.8 ** 2 + 0.8 ** 2) - 0.1, abs=1e-14)
    # the same hull pair alone: it is the closest pair, so it is computed exactly
    only = PairDistance(ls, [(0, 2)])
    r = only.compute(w, 0.05)
    assert r.exact.all() and r.distance[0] == exact.distance[1]


def test_near_degenerate_capsules_are_exact_when_touching():
    """A zero-length capsule at a box's centre, a capsule through a cylinder's axis and a
    capsule crossing a cone's apex: all penetrate, so all are computed (coal semantics); a far
    capsule-cylinder pair too (closed form: never bounded)."""
    shapes = [Sphere([0, 0, 0], 0.05), Box([.2, .2, .2]),
              Capsule([0, 0, -1], [0, 0, 1], 0.01), Cylinder(0.1, 0.3, [2, 0, 0]),
              Capsule([2, 0, 0], [2, 0, 0], 0.0)]
    ls = LinkShapes(shapes, [0] * len(shapes))
    pairs = [(0, 1), (2, 1), (4, 3), (2, 3)]
    pd, full = PairDistance(ls, pairs), PairDistance(ls, pairs)
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    res, ref = pd.compute(w, 0.0), full.compute(w)
    assert res.exact.all() and res.distance[3] > 0.5
    assert np.array_equal(res.distance, ref.distance)
    assert res.distance[0] == pytest.approx(-0.15, abs=1e-15)   # 0.1 half extent + 0.05
    assert res.distance[2] == pytest.approx(-0.1, abs=1e-15)    # point at the axis, r = 0.1


def test_bound_data_contain_and_are_contained():
    """outer: every corner / rim point / vertex within it of the centre (hand values); inner: the
    ball's extreme points inside (signed distance <= 0); slab: every vertex inside it."""
    shapes = [Box([.2, .4, .6]), Cylinder(0.1, 0.5), Cylinder(0.3, 0.2), Cone(0.2, 0.6),
              ConvexHull([[1, 0, 0], [0, 2, 0], [0, 0, -3], [.5, .5, .5]], [5, 5, 5])]
    w = WorldShapes.from_shapes(shapes)
    centre, outer, inner, slab = bound_data(w, w.hulls)
    np.testing.assert_allclose(outer[:4], [np.sqrt(.01 + .04 + .09), np.hypot(.1, .25), np.hypot(.3, .1),
                                           np.hypot(.2, .3)], rtol=1e-15)
    # cone: the centre's depth, below the slant: R H / sqrt(R^2 + 4 H^2) < H
    np.testing.assert_allclose(inner[:4], [0.1, 0.1, 0.1, 0.2 * 0.3 / np.hypot(0.2, 0.6)], rtol=1e-15)
    V = np.array([[1, 0, 0], [0, 2, 0], [0, 0, -3], [.5, .5, .5]])
    np.testing.assert_allclose(centre[4], V.mean(0), rtol=1e-15)
    assert outer[4] == pytest.approx(np.linalg.norm(V - V.mean(0), axis=1).max(), rel=1e-15)
    np.testing.assert_allclose(slab[4], np.abs(V - V.mean(0)).max(0), rtol=1e-15)
    dirs = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3)) / np.sqrt(3)])
    for k in range(len(shapes)):
        pts = w.a[k] + centre[k] + inner[k] * dirs
        assert np.all(point_signed_distance_batch(w, None, np.full(len(pts), k), pts)[0] <= 1e-15)
        assert inner[k] >= 0.0
    with pytest.raises(ShapeError, match=r"pairs\[1\]: two planes"):
        PairDistance(WorldShapes.from_shapes([Sphere([0, 0, 0], 1), Plane([0, 0, 1], 0), Plane([1, 0, 0], 0)]),
                     [(0, 1), (1, 2)])


def test_bounding_spheres_hand_derived():
    """Each shape's sphere in the frame the shapes are given in (posed shapes): hand values for
    the primitives, the farthest vertex for the hull, +inf for the plane; the same radius as
    the pairs' ``outer``."""
    q = [0.0, 0.0, math.sin(0.3), math.cos(0.3)]
    V = np.array([[1, 0, 0], [0, 2, 0], [0, 0, -3], [.5, .5, .5]], float)
    shapes = [Sphere([1, 2, 3], 0.5), Capsule([0, 0, 0], [0, 3, 4], 0.25), Box([.2, .4, .6], [1, 0, 0], q),
              Cylinder(0.3, 0.8, [0, 1, 0], q), Cone(0.4, 0.6), ConvexHull(V, [5, 5, 5], q),
              Plane([0, 0, 1], 0.5)]
    w = WorldShapes.from_shapes(shapes)
    centre, radius = bounding_spheres(w, w.hulls)
    R = quat_to_matrix(q)
    np.testing.assert_allclose(centre[:5], [[1, 2, 3], [0, 1.5, 2], [1, 0, 0], [0, 1, 0], [0, 0, 0]],
                               atol=1e-15)
    np.testing.assert_allclose(radius[:5], [0.5, 2.5 + 0.25, math.sqrt(.01 + .04 + .09),
                                            math.hypot(0.3, 0.4), math.hypot(0.4, 0.3)], rtol=1e-15)
    np.testing.assert_allclose(centre[5], R @ V.mean(0) + 5, rtol=1e-15)
    world_vertices = V @ R.T + 5
    assert radius[5] == pytest.approx(np.linalg.norm(world_vertices - centre[5], axis=1).max(), rel=1e-14)
    assert radius[6] == math.inf
    outer = bound_data(w, w.hulls)[1]
    assert np.array_equal(outer[2:6], radius[2:6])


def test_near_bounds_hulls_hand_derived():
    """Hulls: a capsule - hull pair and a box - hull pair far from everything are bounded by the
    slab gaps (hand-derived: the tetrahedron's centre is its local origin, its slab 0.1 per
    axis, its outer radius sqrt(0.03)); the far hull brought next to the capsule is computed,
    the others stay bounded."""
    tet = [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [-0.1, -0.1, -0.1]]
    shapes = [Sphere([0, 0, 0], 0.1), Sphere([0.25, 0, 0], 0.1),          # gap 0.05: the minimum
              Capsule([0, 0, 2], [1, 0, 2], 0.05), ConvexHull(tet, [0.5, 0, 5]),
              Box([.2, .2, .2], [0.5, 3, 5]), ConvexHull(tet, [9, 9, 9])]
    ls = LinkShapes(shapes, [0, 0, 0, 0, 0, 1])
    pairs = [(0, 1), (2, 3), (4, 3), (2, 5)]
    pd = PairDistance(ls, pairs)
    t = np.zeros((2, 3))
    w = ls.to_world(np.tile(np.eye(3), (2, 1, 1)), t)
    res, ref = pd.compute(w, 0.01), pd.compute(w)
    assert res.exact.tolist() == [True, False, False, False]
    assert res.distance[0] == ref.distance[0] == pytest.approx(0.05, abs=1e-15)
    assert res.distance[1] == pytest.approx(3 - 0.1 - 0.05, abs=1e-15)            # z slab gap
    assert res.distance[2] == pytest.approx(3 - 0.1 - np.sqrt(0.03), abs=1e-15)  # y slab gap - outer
    assert np.all(res.distance[1:] <= ref.distance[1:])
    t[1] = np.array([0.5, 0, 2.2]) - 9   # the far hull next to the capsule
    w = ls.to_world(np.tile(np.eye(3), (2, 1, 1)), t)
    res, ref = pd.compute(w, 0.2), pd.compute(w)
    assert res.exact.tolist() == [True, False, False, True]
    for f in ("distance", "point_1", "point_2", "normal", "position"):
        assert np.array_equal(getattr(res, f)[res.exact], getattr(ref, f)[res.exact])


@pytest.mark.parametrize("seed", range(5))
def test_solid_on_plane_parallel_faces_give_face_centres(seed):
    """A box, a cylinder on its cap, a cylinder on its side and a cone on its base, each resting
    0.1 m above the plane z = 0 in one frame, the frame posed at random (parallel up to rounding):
    the witness on the solid is the centre of the parallel face / side line (hand-derived), the
    distance 0.1 m, in the vectorised plane pairs and in the single-pair path alike."""
    from ambf_collision.geometry.shapes import Cone
    rng = np.random.default_rng(seed)
    side = np.array([np.sqrt(0.5), 0.0, 0.0, np.sqrt(0.5)])        # axis along y
    shapes = [Plane([0, 0, 1], 0.0), Box([.2, .1, .3], [0, 0, .25]),
              Cylinder(.05, .2, [1, 0, .2]), Cylinder(.05, .2, [2, 0, .15], side),
              Cone(.05, .2, [3, 0, .2])]
    faces = np.array([[0, 0, .1], [1, 0, .1], [2, 0, .1], [3, 0, .1]])  # local, hand-derived
    ls = LinkShapes(shapes, [0] * 5)
    pairs = [(0, 1), (2, 0), (0, 3), (4, 0)]
    R = quat_to_matrix(rng.normal(size=4))[None]
    t = rng.normal(size=(1, 3))
    res = PairDistance(ls, pairs).compute(ls.to_world(R, t))
    on_solid = np.array([res.point_2[0], res.point_1[1], res.point_2[2], res.point_1[3]])
    np.testing.assert_allclose(on_solid, faces @ R[0].T + t, atol=1e-14)
    np.testing.assert_allclose(res.distance, 0.1, atol=1e-14)
    for k, (i, j) in enumerate(pairs):
        c = distance(shapes[i].transformed(R[0], t[0]), shapes[j].transformed(R[0], t[0]))
        np.testing.assert_allclose([c.distance, *c.point_1, *c.point_2],
                                   [res.distance[k], *res.point_1[k], *res.point_2[k]], atol=1e-14)


def test_wrong_world_and_near_are_refused():
    rng = np.random.default_rng(8)
    shapes = scene(rng, True)
    n = len(shapes)
    pd = PairDistance(LinkShapes(shapes, np.arange(n) % 3), [(0, 1)])
    with pytest.raises(ValueError, match="compiled for"):
        pd.compute(WorldShapes(n - 1))
    with pytest.raises(ValueError, match="near must be a number"):
        pd.compute(WorldShapes.from_shapes(shapes), float("nan"))
    with pytest.raises(ShapeError, match=r"pairs\[0\]: shape index out of range"):
        PairDistance(WorldShapes.from_shapes(shapes), [(0, n)])


def self_pairs(n):
    """contact_order's per-pair flag: every pair a self pair (one report distance)."""
    return np.zeros(n, dtype=np.int64)


@pytest.mark.slow
def test_contact_order_is_closest_first_and_stable():
    d = np.array([0.3, -0.1, 0.2, 0.05, 0.2, 1.0, -0.1])
    out = np.empty(len(d), dtype=np.int64)
    n = contact_order(d, 0.25, 0.25, self_pairs(len(d)), out)
    assert out[:n].tolist() == [1, 6, 3, 2, 4]       # equal distances keep the pair order
    assert contact_order(d, -0.1, -0.1, self_pairs(len(d)), out) == 0          # strictly below
    rng = np.random.default_rng(4)
    big = np.round(rng.uniform(-1, 1, 500), 1)       # many ties, the merge-sort path
    out = np.empty(500, dtype=np.int64)
    n = contact_order(big, 0.5, 0.5, self_pairs(500), out)
    ref = np.flatnonzero(big < 0.5)
    ref = ref[np.argsort(big[ref], kind="stable")]
    assert n == len(ref) > 32 and out[:n].tolist() == ref.tolist()


def test_contact_order_two_report_distances():
    """Self pairs reported below 0.1 m, environment pairs (flag 1) below 0.3 m."""
    d = np.array([0.2, 0.2, 0.05, 0.25, 0.35, 0.05])
    env = np.array([0, 1, 0, 1, 1, 1], dtype=np.int64)
    out = np.empty(len(d), dtype=np.int64)
    n = contact_order(d, 0.1, 0.3, env, out)
    assert out[:n].tolist() == [2, 5, 1, 3]


def test_near_along_the_demo_trajectory():
    """The demo arm's 21 pairs along its joint script: with ``near`` the contacts (closest
    first) and the minimum are those of every pair exact, the computed pairs bitwise."""
    from conftest import DEMO_ARM

    from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array
    from ambf_collision.model import Model
    model = Model.from_files([DEMO_ARM])
    data = model.create_data()
    pd = PairDistance(model.link_shapes, model.pairs)
    P = len(model.pairs)
    idx_a, idx_b = np.empty(P, np.int64), np.empty(P, np.int64)
    bounded = contacts = 0
    for t in np.linspace(0.0, PERIOD, 200):
        model.set_joint_positions(data, JOINT_NAMES, demo_joint_array(t))
        r = model.evaluate(data)
        w = model.link_shapes.to_world(r.body_R, r.body_t)
        full, near = pd.compute(w), pd.compute(w, 0.05)
        assert full.exact.all()
        na = contact_order(full.distance, 0.05, 0.05, self_pairs(P), idx_a)
        nb = contact_order(near.distance, 0.05, 0.05, self_pairs(P), idx_b)
        assert idx_a[:na].tolist() == idx_b[:nb].tolist()
        assert full.distance.min() == near.distance.min()
        ex_ = near.exact
        for f in ("distance", "point_1", "point_2", "normal", "position"):
            assert np.array_equal(getattr(full, f)[ex_], getattr(near, f)[ex_])
        assert np.all(near.distance[~ex_] <= full.distance[~ex_])
        bounded += int((~ex_).sum())
        contacts += na
    assert bounded > 0 and contacts > 0


def test_plane_and_capsule_pairs_with_hulls_hand_derived():
    """A tetrahedron hull (corners (0,0,0), (1,0,0), (0,1,0), (0,0,1)) lifted by 0.5 above the
    plane z = 0: its lowest vertex is the support point, distance 0.5 (hand-derived), in both
    orders; a capsule along x at height 2 over it: distance to the apex (0,0,1.5) minus r, and a
    capsule through it: the exact polytope reference (its core is a segment)."""
    from gjk_reference import polytope_signed_distance
    tet = ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], [0, 0, 0.5])
    plane = Plane([0, 0, 1], 0.0)
    c = distance(tet, plane)
    assert c.distance == pytest.approx(0.5, abs=1e-15)
    np.testing.assert_allclose(c.point_1, [0, 0, 0.5], atol=1e-15)
    np.testing.assert_allclose(c.point_2, [0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(c.normal, [0, 0, -1], atol=1e-15)
    w = distance(plane, tet)
    assert w.distance == c.distance and np.array_equal(w.normal, -c.normal)
    cap = Capsule([-1, 0, 2], [1, 0, 2], 0.1)
    assert distance(cap, tet).distance == pytest.approx(0.5 - 0.1, abs=1e-12)
    core = Capsule([-1, 0.2, 0.7], [1, 0.2, 0.7], 0.0)   # through the hull: depth of the segment
    d = distance(core, tet).distance
    assert d < 0 and d == pytest.approx(polytope_signed_distance(core, tet), abs=1e-12)


@njit(cache=True)
def _compiled_caller(local, frame_index, hull, meshes, pairs, bound, R, t, out_world, near, results,
                     order, env, moved):
    """The compiled path a model kernel takes: to_world on the Link, evaluate_pairs on the
    PairConstants, contact_order; ``(smallest distance, number of contacts)`` (kept in numba's
    cache: compiled once, not on every run)."""
    W = world_of(out_world)
    to_world(Link(world_of(local), frame_index), R, t, W, moved)
    smallest = evaluate_pairs(W, make_hulls(*hull), meshes, pair_constants(pairs, bound), near,
                              pair_results(results), moved)
    return smallest, contact_order(results.distance, 0.1, 0.1, env, order)


@pytest.mark.slow
def test_evaluate_pairs_and_to_world_inside_a_compiled_caller():
    """The compiled path a model kernel takes (to_world on the Link, evaluate_pairs on the
    PairConstants, contact_order) equals LinkShapes.to_world + PairDistance.compute."""
    rng = np.random.default_rng(7)
    shapes = _mixed_scene(rng)
    F = 3
    ls = LinkShapes(shapes, rng.integers(0, F, len(shapes)))
    pairs = [(i, j) for i in range(len(shapes)) for j in range(i + 1, len(shapes))
             if not (isinstance(shapes[i], Plane) and isinstance(shapes[j], Plane))]
    pd = PairDistance(ls, pairs)
    R, t = quat_to_matrix(rng.normal(size=(F, 4))), rng.normal(scale=0.2, size=(F, 3))
    ref = pd.compute(ls.to_world(R, t), 0.05)
    out = ls.new_world()
    res = PairResult(len(pairs))
    order = np.empty(len(pairs), np.int64)
    smallest, n_contacts = _compiled_caller(
        ls.local.table, ls.frame_index, tuple(hull_arrays(ls.hulls)), no_meshes(), pd.pair_table,
        pd.bound_table, R, t, out.table, 0.05, res.table, order, self_pairs(len(pairs)),
        np.ones(len(shapes), np.int64))
    for f in ("distance", "point_1", "point_2", "normal", "position", "exact"):
        assert np.array_equal(getattr(res, f), getattr(ref, f)), f
    assert smallest == ref.distance[ref.exact].min()
    close = np.flatnonzero(ref.distance < 0.1)
    assert order[:n_contacts].tolist() == close[np.argsort(ref.distance[close], kind="stable")].tolist()


@pytest.mark.slow
def test_pairs_of_unmoved_shapes_keep_their_exact_rows_bit_for_bit():
    """evaluate_pairs keeps the row of a pair whose two shapes did not move (to_world's flags)
    and computes the others. Oracle: PairDistance.compute on the same world, which computes every
    pair; the flags: the shapes of the frame moved, by hand from frame_index. Near-only rows
    (bounds) are recomputed, never kept."""
    def kernel(*args):
        order, env = np.empty(len(pairs), np.int64), self_pairs(len(pairs))
        return _compiled_caller(*args[:-1], order, env, args[-1])[0]

    rng = np.random.default_rng(11)
    shapes = _mixed_scene(rng)
    F = 3
    frame_index = rng.integers(0, F, len(shapes))
    ls = LinkShapes(shapes, frame_index)
    pairs = [(i, j) for i in range(len(shapes)) for j in range(i + 1, len(shapes))
             if not (isinstance(shapes[i], Plane) and isinstance(shapes[j], Plane))]
    pd = PairDistance(ls, pairs)
    hull = tuple(hull_arrays(ls.hulls))
    out, res = ls.new_world(), PairResult(len(pairs))
    moved = np.ones(len(shapes), np.int64)
    R, t = quat_to_matrix(rng.normal(size=(F, 4))), rng.normal(scale=0.2, size=(F, 3))
    for near in (math.inf, 0.05):
        kernel(ls.local.table, ls.frame_index, hull, no_meshes(), pd.pair_table, pd.bound_table, R, t,
               out.table, near, res.table, moved)
    for step in range(3):
        R2, t2 = R.copy(), t.copy()
        if step:   # frame `step` moves; step 0: nothing moves
            R2[step] = quat_to_matrix(rng.normal(size=4))
            t2[step] += rng.normal(scale=0.1, size=3)
        for i, near in enumerate((math.inf, 0.05, math.inf)):   # moved on the first call only
            before = res.table.copy()
            kernel(ls.local.table, ls.frame_index, hull, no_meshes(), pd.pair_table, pd.bound_table, R2, t2,
                   out.table, near, res.table, moved)
            assert np.array_equal(moved, (frame_index == step) & (step > 0) & (i == 0))
            ref = pd.compute(ls.to_world(R2, t2))   # every pair exact
            for f in ("distance", "point_1", "point_2", "normal", "position"):   # exact rows
                assert np.array_equal(getattr(res, f)[res.exact], getattr(ref, f)[res.exact]), f
            assert res.exact.all() or near < math.inf
            assert np.all(res.distance[~res.exact] <= ref.distance[~res.exact])   # bounds
            p1, p2 = np.array(pairs).T
            kept = before["exact"] & ~moved[p1].astype(bool) & ~moved[p2].astype(bool)
            for f in ("distance", "point_1", "point_2", "normal", "position", "exact"):
                assert getattr(res, f)[kept].tobytes() == before[f][kept].tobytes(), f
        R, t = R2, t2
