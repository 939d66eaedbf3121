"""Batched LinkShapes/PairDistance/point_signed_distance equal the single-pair results."""

import numpy as np
import pytest

import exact_reference as ex
from ambf_collision.geometry.pairs import LinkShapes, PairDistance, point_signed_distance
from ambf_collision.geometry.distance import distance
from ambf_collision.geometry.shapes import Box, Capsule, Cylinder, Plane, Sphere
from ambf_collision.geometry.transforms import quat_to_matrix


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
    for trial in range(2):  # buffers reused across calls
        R = quat_to_matrix(rng.normal(size=(F, 4)))
        t = rng.normal(size=(F, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            si = shapes[i].transformed(R[fi[i]], t[fi[i]])
            sj = shapes[j].transformed(R[fi[j]], t[fi[j]])
            c = distance(si, sj)
            assert res.distance[k] == pytest.approx(c.distance, abs=1e-9)
            np.testing.assert_allclose(res.point_1[k], c.point_1, atol=1e-9)
            np.testing.assert_allclose(res.point_2[k], c.point_2, atol=1e-9)
            np.testing.assert_allclose(res.normal[k], c.normal, atol=1e-9)
            np.testing.assert_allclose(res.position[k], c.position, atol=1e-9)
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


def test_point_signed_distance_sphere_capsule_and_box():
    shapes = [Sphere([0, 0, 0], 1.0), Capsule([0, 0, 0], [0, 0, 2], 0.5), Box([2, 2, 2])]
    ls = LinkShapes(shapes, [0, 0, 0])
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    pts = np.array([[3.0, 0, 0], [0, 0, 0], [0.2, 0, 1.0], [0, 0, 1.0], [0.5, 0, 0]])
    d, x, n = point_signed_distance(w, [0, 0, 1, 1, 2], pts)
    np.testing.assert_allclose(d, [2.0, -1.0, -0.3, -0.5, -0.5])
    np.testing.assert_allclose(x[0], [1, 0, 0])
    np.testing.assert_array_equal(n[1], [0, 0, 1])           # centre: +z fallback
    np.testing.assert_allclose(x[2], [0.5, 0, 1.0])
    assert abs(n[3][2]) < 1e-15 and np.linalg.norm(n[3]) == pytest.approx(1)  # on axis
    np.testing.assert_allclose(x[4], [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(pts - x, d[:, None] * n, atol=1e-12)


def test_solid_pairs_reuse_coal_geometry_across_cycles():
    """Solid-solid pairs (coal geometries built once, poses refilled per cycle) equal coal on
    freshly built posed shapes in every cycle, with shapes shared by several pairs and a plane."""
    from ambf_collision.geometry.pairs import shape_at
    from ambf_collision.geometry.coal_bridge import solid_pair_distance
    from ambf_collision.geometry.shapes import Cone, ConvexHull
    shapes = [Box([.2, .1, .3], [0.1, 0, 0], [0, 0, .6, .8]), Cylinder(.1, .3, [0, .2, 0]),
              Cone(.15, .2, [0, 0, .1]), ConvexHull([[0, 0, 0], [.2, 0, 0], [0, .2, 0], [0, 0, .2]]),
              Plane([0, 0, 1], -0.4)]
    ls = LinkShapes(shapes, [0, 1, 2, 3, 0])
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    pd = PairDistance(ls, pairs)
    rng = np.random.default_rng(11)
    for cycle in range(4):
        q = rng.normal(size=(4, 4))
        R = np.stack([quat_to_matrix(v / np.linalg.norm(v)) for v in q])
        t = rng.uniform(-.3, .3, (4, 3))
        w = ls.to_world(R, t)
        res = pd.compute(w)
        for k, (i, j) in enumerate(pairs):
            d, p1, p2, n = solid_pair_distance(shape_at(w, i), shape_at(w, j))
            assert res.distance[k] == pytest.approx(d, abs=1e-9), (cycle, i, j)
            np.testing.assert_allclose(res.point_1[k], p1, atol=1e-8)
            np.testing.assert_allclose(res.point_2[k], p2, atol=1e-8)
            np.testing.assert_allclose(res.normal[k], n, atol=1e-7)
            np.testing.assert_allclose(res.position[k], 0.5 * (p1 + p2), atol=1e-8)


def test_capsule_solid_groups_recomputed_each_cycle_both_orders():
    """Sphere/capsule - solid pairs of every solid kind, the solid as shape 1 and as shape 2,
    some capsules through a solid (penetration path): every cycle with new poses equals fresh
    single-pair ``distance()`` on the posed shapes (no stale gather, staging or sign)."""
    from ambf_collision.geometry.shapes import Cone, ConvexHull
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
    np.testing.assert_array_equal(pd.result.points[:len(pairs)], pd.result.point_1)
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
            c = distance(shapes[i].transformed(R[fi[i]], t[fi[i]]), shapes[j].transformed(R[fi[j]], t[fi[j]]))
            assert res.distance[k] == pytest.approx(c.distance, abs=1e-9), (cycle, i, j)
            np.testing.assert_allclose(res.point_1[k], c.point_1, atol=1e-8)
            np.testing.assert_allclose(res.point_2[k], c.point_2, atol=1e-8)
            np.testing.assert_allclose(res.normal[k], c.normal, atol=1e-7)
            np.testing.assert_allclose(res.position[k], c.position, atol=1e-8)
            penetrating += c.distance < 0
        assert np.all(np.isfinite(res.normal))
    assert penetrating >= 4


# -- near: far pairs bounded instead of computed (what the node asks for) ------------------

def _mixed_scene(rng):
    """Spheres, capsules (some of zero length) and every solid kind, posed at random."""
    from ambf_collision.geometry.shapes import Cone, ConvexHull
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
    lower bound above the cutoff, centre witnesses and a unit normal."""
    from ambf_collision.geometry.pairs import BOUND_MARGIN
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
    for trial in range(4):  # buffers reused across calls
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
    distance 0.4 (hand-derived), computed. A cylinder r=0.2, h=0.4 at x=3: exact distance
    from the capsule end (1,0,1) to the top rim point (2.8,0,0.2), sqrt(1.8^2 + 0.8^2) - 0.1;
    bounded when another pair is closer, by max(slab gap along x 2.8 - 1 - 0.1 = 1.7,
    centre sphere sqrt(5) - 0.1 - sqrt(0.2^2 + 0.2^2) = 1.853...); computed when it is the
    closest pair."""
    shapes = [Capsule([-1, 0, 1], [1, 0, 1], 0.1), Box([1, 1, 1]), Cylinder(0.2, 0.4, [3, 0, 0])]
    ls = LinkShapes(shapes, [0, 0, 0])
    pd = PairDistance(ls, [(0, 1), (0, 2)])
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    res = pd.compute(w, 0.05)
    assert res.distance[0] == pytest.approx(0.4, abs=1e-15) and res.exact[0]
    assert not res.exact[1]
    assert res.distance[1] == pytest.approx(np.sqrt(5) - 0.1 - np.sqrt(0.08), abs=1e-15)
    np.testing.assert_allclose(res.point_1[1], [-1, 0, 1], atol=1e-15)  # capsule's first end
    np.testing.assert_allclose(res.point_2[1], [3, 0, 0], atol=1e-15)   # cylinder centre
    np.testing.assert_allclose(res.normal[1], np.array([4, 0, -1]) / np.sqrt(17), atol=1e-15)
    # with an exact pair in the list (a sphere pair at 0.5 m), the sphere bound is not needed:
    # the cylinder pair is bounded by its box-axis gap alone, 1.7 (hand-derived above)
    shapes2 = shapes + [Sphere([0, 5, 0], 0.1), Sphere([0, 5.7, 0], 0.1)]
    ls2 = LinkShapes(shapes2, [0] * 5)
    r2 = PairDistance(ls2, [(0, 1), (0, 2), (3, 4)]).compute(ls2.to_world(np.eye(3)[None], np.zeros((1, 3))), 0.05)
    assert r2.exact.tolist() == [True, False, True]
    assert r2.distance[1] == pytest.approx(1.7, abs=1e-15) and r2.distance[2] == pytest.approx(0.5, abs=1e-15)
    exact = pd.compute(w)
    assert exact.exact.all()
    assert exact.distance[1] == pytest.approx(np.sqrt(1.8 ** 2 + 0.8 ** 2) - 0.1, abs=1e-14)
    # the same cylinder pair alone: it is the closest pair, so it is computed exactly
    only = PairDistance(ls, [(0, 2)])
    r = only.compute(w, 0.05)
    assert r.exact.all() and r.distance[0] == exact.distance[1]


def test_near_degenerate_capsules_are_exact_when_touching():
    """A zero-length capsule at a box's centre, a capsule through a cylinder's axis and a
    capsule crossing a cone's apex: all penetrate, so all are computed (coal semantics)."""
    from ambf_collision.geometry.shapes import Cone
    shapes = [Sphere([0, 0, 0], 0.05), Box([.2, .2, .2]),
              Capsule([0, 0, -1], [0, 0, 1], 0.01), Cylinder(0.1, 0.3, [2, 0, 0]),
              Capsule([2, 0, 0], [2, 0, 0], 0.0)]
    ls = LinkShapes(shapes, [0] * len(shapes))
    pairs = [(0, 1), (2, 1), (4, 3), (2, 3)]
    pd, full = PairDistance(ls, pairs), PairDistance(ls, pairs)
    w = ls.to_world(np.eye(3)[None], np.zeros((1, 3)))
    res, ref = pd.compute(w, 0.0), full.compute(w)
    assert res.exact[:3].all() and not res.exact[3]
    assert np.array_equal(res.distance[:3], ref.distance[:3])
    assert res.distance[0] == pytest.approx(-0.15, abs=1e-15)   # 0.1 half extent + 0.05
    assert res.distance[2] == pytest.approx(-0.1, abs=1e-15)    # point at the axis, r = 0.1


def test_centre_radii_contain_and_are_contained():
    """outer: every vertex / rim point within it; inner: the ball's extreme points inside (SDF <= 0)."""
    from ambf_collision.geometry.pairs import WorldShapes, centre_radii
    from ambf_collision.geometry.shapes import Cone
    shapes = [Box([.2, .4, .6]), Cylinder(0.1, 0.5), Cylinder(0.3, 0.2), Cone(0.2, 0.6)]
    w = WorldShapes.from_shapes(shapes)
    outer, inner = centre_radii(w.kind, w.half)
    np.testing.assert_allclose(outer, [np.sqrt(.01 + .04 + .09), np.hypot(.1, .25), np.hypot(.3, .1),
                                       np.hypot(.2, .3)], rtol=1e-15)
    np.testing.assert_allclose(inner, [0.1, 0.1, 0.1, 0.0], rtol=1e-15)
    dirs = np.vstack([np.eye(3), -np.eye(3), np.ones((1, 3)) / np.sqrt(3)])
    from ambf_collision.geometry.shapes import ConvexHull
    hull = WorldShapes.from_shapes([ConvexHull([[1, 0, 0], [0, 2, 0], [0, 0, -3], [.5, .5, .5]], [5, 5, 5])])
    h_outer, h_inner = centre_radii(hull.kind, hull.half, hull.hull)
    assert (h_outer[0], h_inner[0]) == (3.0, -np.inf)  # farthest vertex; centre need not be inside
    for k in range(len(shapes)):
        pts = inner[k] * dirs
        assert np.all(point_signed_distance(w, np.full(len(pts), k), pts)[0] <= 1e-15)


def test_near_bounds_hulls_whole_group():
    """Hulls: a capsule - hull row and a box - hull pair (through coal) far from everything are
    bounded by the hull's farthest vertex (hand-derived); when one capsule comes near one hull,
    the hull group is computed whole and equals the all-exact result."""
    from ambf_collision.geometry.shapes import ConvexHull
    tet = [[0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1], [-0.1, -0.1, -0.1]]   # outer radius sqrt(0.03)
    shapes = [Sphere([0, 0, 0], 0.1), Sphere([0.25, 0, 0], 0.1),          # gap 0.05: the minimum
              Capsule([0, 0, 2], [1, 0, 2], 0.05), ConvexHull(tet, [0.5, 0, 5]),
              Box([.2, .2, .2], [0.5, 3, 5]), ConvexHull(tet, [9, 9, 9])]
    ls = LinkShapes(shapes, [0, 0, 0, 0, 0, 1])
    pairs = [(0, 1), (2, 3), (4, 3), (2, 5)]
    pd, full = PairDistance(ls, pairs), PairDistance(ls, pairs)
    t = np.zeros((2, 3))
    w = ls.to_world(np.tile(np.eye(3), (2, 1, 1)), t)
    res, ref = pd.compute(w, 0.01), full.compute(w)
    assert res.exact.tolist() == [True, False, False, False]
    assert res.distance[0] == ref.distance[0] == pytest.approx(0.05, abs=1e-15)
    assert res.distance[1] == pytest.approx(3 - 0.05 - np.sqrt(0.03), abs=1e-15)
    assert res.distance[2] == pytest.approx(3 - np.sqrt(0.03) - np.sqrt(0.03), abs=1e-15)
    assert np.all(res.distance[1:] <= ref.distance[1:])
    # the far hull (frame 1) brought next to the capsule: its group is computed whole
    t[1] = np.array([0.5, 0, 2.2]) - 9
    w = ls.to_world(np.tile(np.eye(3), (2, 1, 1)), t)
    res, ref = pd.compute(w, 0.2), full.compute(w)
    assert res.exact.tolist() == [True, True, False, True]
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


def test_world_with_replaced_arrays_and_wrong_size():
    """A WorldShapes whose arrays were replaced (no longer views of ``flat``) gives the same
    result as the original; a world of another shape count is refused."""
    from ambf_collision.geometry.pairs import WorldShapes
    rng = np.random.default_rng(8)
    shapes = scene(rng, True)
    n = len(shapes)
    ls = LinkShapes(shapes, np.arange(n) % 3)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    pd = PairDistance(ls, pairs)
    w = ls.to_world(quat_to_matrix(rng.normal(size=(3, 4))), rng.normal(size=(3, 3)))
    ref = {f: getattr(pd.compute(w, 0.05), f).copy() for f in ("distance", "points", "normal")}
    c = WorldShapes(n)
    c.kind[:], c.hull = w.kind, list(w.hull)
    for f in ("a", "b", "radius", "rot", "half", "normal", "offset"):
        setattr(c, f, getattr(w, f).copy())
    res = pd.compute(c, 0.05)
    for f, v in ref.items():
        np.testing.assert_array_equal(getattr(res, f), v)
    with pytest.raises(ValueError, match="compiled for"):
        pd.compute(WorldShapes(n - 1))
