"""Mesh pairs in a World (geometry/mesh_pairs.py through geometry/pairs.py): a triangle mesh
posed anywhere against spheres, capsules, boxes, cylinders, cones, hulls and planes.

Oracles: coal's BVHModel distance for shapes apart from the mesh (1e-9 m); the mesh's own
vertices for a plane (the lowest vertex along the normal, computed here with NumPy); the
winding number for the sign of a sphere's centre; the kernel's own answer in the mesh's frame
(``capsule_mesh``) moved by the pose, for witnesses and normals; the other order of the pair
(witnesses swapped, normal negated, bit for bit).
"""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.pairs import PairDistance, PairResult
from ambf_collision.geometry.shapes import Box, Capsule, Cone, ConvexHull, Cylinder, Mesh, Plane, Sphere
from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.geometry.trimesh import TriangleMesh, winding_numbers
from ambf_collision.geometry.world_shapes import WorldShapes

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
from ambf_collision.geometry.coal_bridge import coal_distance, distance_request, to_coal  # noqa: E402

_BUILT = {}


def built(name):
    if name not in _BUILT:
        _BUILT[name] = TriangleMesh.build(*getattr(mx, name)())
    return _BUILT[name]


def posed_mesh(name, rng):
    q = rng.normal(size=4)
    return Mesh(built(name), rng.normal(size=3) * 0.3, q / np.linalg.norm(q))


def scattered(mesh_shape, k, rng, margin):
    """``(points (k, 3), size)``: world points uniform in the mesh's box grown by ``margin`` times
    its diagonal ``size`` on each side, in the mesh's frame as posed."""
    m = mesh_shape.mesh
    R = quat_to_matrix(mesh_shape.orientation)
    lo, hi = m.vertices.min(axis=0), m.vertices.max(axis=0)
    size = float(np.linalg.norm(hi - lo))
    local = lo - margin * size + rng.random((k, 3)) * (hi - lo + 2 * margin * size)
    return local @ R.T + mesh_shape.position, size


def round_shapes(mesh_shape, k, rng):
    """Spheres and capsules scattered about the mesh (world frame), some inside, some apart."""
    points, size = scattered(mesh_shape, k, rng, 0.2)
    out = []
    for i, a in enumerate(points):
        r = 0.02 * size * rng.random()
        if i % 2:
            out.append(Sphere(a, r))
        else:
            u = rng.normal(size=3)
            out.append(Capsule(a, a + 0.3 * size * rng.random() * u / np.linalg.norm(u), r))
    return out


def compute(shapes, pairs, near=None):
    w = WorldShapes.from_shapes(shapes)
    return PairDistance(w, pairs).compute(w, near)


@pytest.mark.parametrize("name", ["torus", "cup", "bowl", "l_bracket", "trefoil"])
def test_spheres_and_capsules_apart_match_coal(name):
    rng = np.random.default_rng(len(name))
    ms = posed_mesh(name, rng)
    others = round_shapes(ms, 40, rng)
    r = compute([ms] + others, [(0, k) for k in range(1, len(others) + 1)])
    gm, tm = to_coal(ms)
    req, checked = distance_request(), 0
    for k, s in enumerate(others):
        if r.distance[k] <= 1e-6:
            continue
        g, tf = to_coal(s)
        d = coal_distance(gm, tm, g, tf, req)[0]
        assert r.distance[k] == pytest.approx(d, abs=1e-9)
        checked += 1
    assert checked >= 10
    # witnesses: p2 - p1 = d n, p1 on the mesh (its own frame: a point of some triangle)
    apart = r.distance > 0
    np.testing.assert_allclose(r.point_2[apart] - r.point_1[apart],
                               r.distance[apart, None] * r.normal[apart], atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(r.normal, axis=1), 1.0, atol=1e-12)


def test_the_sign_of_a_sphere_is_the_winding_number_of_its_centre():
    rng = np.random.default_rng(5)
    ms = posed_mesh("torus", rng)
    spheres = [s for s in round_shapes(ms, 400, rng) if s.kind == 0]
    r = compute([ms] + spheres, [(0, k) for k in range(1, len(spheres) + 1)])
    R = quat_to_matrix(ms.orientation)
    local = np.array([R.T @ (s.center - ms.position) for s in spheres])
    w = np.round(winding_numbers(ms.mesh.vertices, ms.mesh.faces, local))
    radius = np.array([s.radius for s in spheres])
    core = r.distance + radius
    assert np.all((core < 0) == (w == 1))
    assert np.sum(w == 1) >= 10


def test_both_orders_agree_bit_for_bit():
    rng = np.random.default_rng(2)
    ms = posed_mesh("cup", rng)
    others = round_shapes(ms, 30, rng)
    n = len(others)
    r = compute([ms] + others, [(0, k) for k in range(1, n + 1)] + [(k, 0) for k in range(1, n + 1)])
    np.testing.assert_array_equal(r.distance[:n], r.distance[n:])
    np.testing.assert_array_equal(r.point_1[:n], r.point_2[n:])
    np.testing.assert_array_equal(r.point_2[:n], r.point_1[n:])
    np.testing.assert_array_equal(r.normal[:n], -r.normal[n:])
    np.testing.assert_array_equal(r.triangle[:n, 0], r.triangle[n:, 1])
    assert np.all(r.triangle[:n, 1] == -1) and np.all(r.triangle[:n, 0] >= 0)


def test_the_previous_triangles_as_hints_change_nothing():
    """A result table computed again (its triangles the hints) equals a fresh one, bit for bit,
    also after the shapes moved."""
    rng = np.random.default_rng(9)
    ms = posed_mesh("trefoil", rng)
    others = round_shapes(ms, 20, rng)
    pairs = [(0, k) for k in range(1, len(others) + 1)]
    w = WorldShapes.from_shapes([ms] + others)
    pd = PairDistance(w, pairs)
    kept = pd.compute(w)
    w.a[1:] += 0.01
    w.b[1:] += 0.01
    again = pd.compute(w, out=kept)
    fresh = pd.compute(w, out=PairResult(len(pairs)))
    np.testing.assert_array_equal(again.table, fresh.table)


def test_a_plane_meets_the_mesh_at_its_lowest_vertex():
    rng = np.random.default_rng(4)
    for _ in range(5):
        ms = posed_mesh("l_bracket", rng)
        n = rng.normal(size=3)
        plane = Plane(n, float(rng.normal()) * 0.05)
        r = compute([ms, plane], [(0, 1)])
        R = quat_to_matrix(ms.orientation)
        world = ms.mesh.vertices @ R.T + ms.position
        lowest = world[np.argmin(world @ plane.normal)]
        assert r.distance[0] == pytest.approx(lowest @ plane.normal - plane.offset, abs=1e-14)
        np.testing.assert_allclose(r.normal[0], -plane.normal, atol=1e-15)   # into its solid side


def test_a_sphere_in_the_hollow_of_a_bowl_is_apart_where_the_hull_swallows_it():
    ms = Mesh(built("bowl"))     # outer radius 1, inner 0.8, rim at z = 0, open upwards
    sphere = Sphere([0.0, 0.0, -0.5], 0.1)   # in the hollow: ~0.2 m from the inner surface
    r = compute([ms, sphere], [(0, 1)])
    from ambf_collision.geometry.shapes import ConvexHull
    hull = compute([ConvexHull(ms.mesh.vertices), sphere], [(0, 1)])
    assert hull.distance[0] < 0 < r.distance[0]
    assert r.distance[0] == pytest.approx(0.2, abs=0.01)   # the inner sphere, as faceted
    g, tf = to_coal(sphere)
    assert r.distance[0] == pytest.approx(coal_distance(*to_coal(ms), g, tf)[0], abs=1e-9)


def test_near_only_bounds_mesh_pairs_from_below():
    rng = np.random.default_rng(11)
    ms = posed_mesh("torus", rng)
    others = round_shapes(ms, 30, rng)
    pairs = [(0, k) for k in range(1, len(others) + 1)]
    exact = compute([ms] + others, pairs)
    near = compute([ms] + others, pairs, near=0.05)
    bounded = ~near.exact
    assert np.all(near.distance[bounded] <= exact.distance[bounded] + 1e-12)
    np.testing.assert_array_equal(near.distance[~bounded], exact.distance[~bounded])
    assert near.distance.min() == exact.distance.min()


def test_a_far_pair_inside_a_thin_mesh_s_box_is_bounded_by_its_hull():
    """A thin rod meshed along the diagonal of its frame's xy square: its box and bounding
    sphere hold a sphere 0.35 m from the rod, which the rod's hull does not. With near = 0.05
    that pair stays bounded (not computed), by a bound above the cutoff and below the hull's
    distance (GJK on a ConvexHull of the same vertices: hand-checkable, 0.5 / sqrt(2) - 0.005 -
    0.01 m), itself never above the exact one,
    once an exact distance is known: a pair computed in the first pass (two spheres), or a
    mesh pair computed before it in the last pass (each lowers the cutoff for the pairs after)."""
    c, s = np.cos(np.pi / 4), np.sin(np.pi / 4)
    box = np.array([[x, y, z] for x in (0, 1) for y in (-0.005, 0.005) for z in (-0.005, 0.005)])
    V = box @ np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])   # +x turned to (1, 1)/sqrt(2)
    F = np.array([[0, 1, 3], [0, 3, 2], [4, 6, 7], [4, 7, 5], [0, 4, 5], [0, 5, 1],
                  [2, 3, 7], [2, 7, 6], [0, 2, 6], [0, 6, 4], [1, 5, 7], [1, 7, 3]])
    rod = Mesh(TriangleMesh.build(V, F))
    far = Sphere([0.6, 0.1, 0.0], 0.01)       # inside the rod's box and bounding sphere
    close = Sphere([0.2, 0.2, 0.03], 0.01)    # 0.015 m above the rod
    ball = Sphere([0.2, 0.2, 0.055], 0.01)    # 0.005 m above `close`
    hull = compute([ConvexHull(V), far], [(0, 1)])
    assert hull.distance[0] == pytest.approx(0.5 / np.sqrt(2) - 0.005 - 0.01, abs=1e-12)
    for pairs in ([(0, 1), (2, 3)], [(2, 3), (0, 1)], [(0, 2), (0, 1)]):
        f = pairs.index((0, 1))
        exact = compute([rod, far, close, ball], pairs)
        near = compute([rod, far, close, ball], pairs, near=0.05)
        assert not near.exact[f] and near.exact[1 - f]
        # GJK stops at a separating plane beyond the cutoff: a bound between it and the hulls'
        assert 0.05 < near.distance[f] <= hull.distance[0] + 1e-12
        assert hull.distance[0] <= exact.distance[f] + 1e-12   # the rod is convex: equal
        assert near.distance[1 - f] == exact.distance[1 - f]
        assert exact.distance[1 - f] == pytest.approx(0.005 if (2, 3) in pairs else 0.015, abs=1e-12)


def solids(mesh_shape, k, rng):
    """Boxes, cylinders, cones and hulls posed about the mesh (world frame)."""
    points, size = scattered(mesh_shape, k, rng, 0.3)
    out = []
    for i, c in enumerate(points):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        e = 0.05 * size * (0.2 + rng.random(3))
        out.append([Box(2 * e, c, q), Cylinder(e[0], 2 * e[1], c, q), Cone(e[0], 2 * e[1], c, q),
                    ConvexHull(rng.normal(size=(8, 3)) * e, c, q)][i % 4])
    return out


@pytest.mark.parametrize("name", ["torus", "bowl", "l_bracket"])
def test_solids_apart_match_coal_in_both_orders(name):
    rng = np.random.default_rng(20 + len(name))
    ms = posed_mesh(name, rng)
    others = solids(ms, 24, rng)
    n = len(others)
    r = compute([ms] + others, [(0, k) for k in range(1, n + 1)] + [(k, 0) for k in range(1, n + 1)])
    np.testing.assert_array_equal(r.distance[:n], r.distance[n:])
    np.testing.assert_array_equal(r.normal[:n], -r.normal[n:])
    gm, tm = to_coal(ms)
    req, checked = distance_request(), 0
    for k, s in enumerate(others):
        if r.distance[k] <= 1e-6:
            continue
        d = coal_distance(gm, tm, *to_coal(s), req)[0]
        assert r.distance[k] == pytest.approx(d, abs=1e-9)
        checked += 1
    assert checked >= 8
    apart = r.distance[:n] > 0
    np.testing.assert_allclose(r.point_2[:n][apart] - r.point_1[:n][apart],
                               r.distance[:n][apart, None] * r.normal[:n][apart], atol=1e-12)


@pytest.mark.parametrize("names", [("torus", "l_bracket"), ("cup", "cup"), ("trefoil", "bowl")])
def test_two_posed_meshes_apart_match_coal_in_both_orders(names):
    rng = np.random.default_rng(sum(map(len, names)))
    a = posed_mesh(names[0], rng)
    scale = float(np.ptp(a.mesh.vertices, axis=0).max())
    found = 0
    for _ in range(12):
        b = posed_mesh(names[1], rng)
        b.position = a.position + rng.normal(size=3) * scale
        r = compute([a, b], [(0, 1), (1, 0)])
        assert r.distance[0] == r.distance[1]
        np.testing.assert_array_equal(r.point_1[0], r.point_2[1])
        np.testing.assert_array_equal(r.normal[0], -r.normal[1])
        if r.distance[0] > 1e-6:
            d = coal_distance(*to_coal(a), *to_coal(b))[0]
            assert r.distance[0] == pytest.approx(d, abs=1e-9)
            np.testing.assert_allclose(r.point_2[0] - r.point_1[0], r.distance[0] * r.normal[0],
                                       atol=1e-12)
            found += 1
    assert found >= 4
