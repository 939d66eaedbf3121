"""Distances to triangle meshes (geometry/triangles.py, geometry/mesh_distance.py).

Oracles, independent of the code under test:
- brute force over all triangles (NumPy: the plane distance when the projection falls inside
  by edge-side tests, else the nearest of the three edges), on small meshes;
- coal's BVHModel distance for spheres and capsules apart from the mesh (1e-9 m);
- the generalised winding number (solid angles, written here) for the sign, on points in the
  box and next to vertices, edges and faces;
- hand-derived values: a sphere in a cup's hollow (inside the cup's hull), a capsule threading a
  torus; the hint changes nothing, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from conftest import THOROUGH
from ambf_collision.geometry.mesh_distance import capsule_bound, capsule_mesh, capsules_mesh_batch, point_phi
from ambf_collision.geometry.meshes import read_mesh
from ambf_collision.geometry.triangles import segment_triangle, triangle_triangle
from ambf_collision.geometry.trimesh import TriangleMesh

coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
from ambf_collision.geometry.coal_bridge import coal_distance, coal_mesh, distance_request, to_coal  # noqa: E402
from ambf_collision.geometry.shapes import Capsule  # noqa: E402

MESHES = {"torus": mx.torus, "cup": mx.cup, "bowl": mx.bowl, "l_bracket": mx.l_bracket,
          "trefoil": mx.trefoil, "rings": mx.rings}
_BUILT = {}


def built(name):
    if name not in _BUILT:
        _BUILT[name] = TriangleMesh.build(*MESHES[name]())
    return _BUILT[name]


def brute_distance(V, F, P):
    """Unsigned distance (m) of each point of P (K, 3) to the triangles, by brute force."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    n = np.cross(b - a, c - a)
    n /= np.linalg.norm(n, axis=1)[:, None]
    out = np.empty(len(P))
    for i, p in enumerate(P):
        plane = np.abs(np.einsum("ij,ij->i", p - a, n))
        inside = np.ones(len(F), bool)
        edge = np.full(len(F), np.inf)
        for u, v in ((a, b), (b, c), (c, a)):
            inside &= np.einsum("ij,ij->i", np.cross(v - u, p - u), n) >= 0
            d = v - u
            t = np.clip(np.einsum("ij,ij->i", p - u, d) / np.einsum("ij,ij->i", d, d), 0, 1)
            edge = np.minimum(edge, np.linalg.norm(p - (u + t[:, None] * d), axis=1))
        out[i] = np.where(inside, plane, edge).min()
    return out


def winding(V, F, P, chunk=256):
    """Generalised winding number of each point of P about the (closed) mesh."""
    out = np.empty(len(P))
    for s in range(0, len(P), chunk):
        p = P[s:s + chunk, None, :]
        a, b, c = V[F[:, 0]] - p, V[F[:, 1]] - p, V[F[:, 2]] - p
        la, lb, lc = (np.linalg.norm(x, axis=2) for x in (a, b, c))
        det = np.einsum("pij,pij->pi", a, np.cross(b, c))
        den = la * lb * lc + np.einsum("pij,pij->pi", a, b) * lc + np.einsum("pij,pij->pi", b, c) * la \
            + np.einsum("pij,pij->pi", c, a) * lb
        out[s:s + chunk] = 2 * np.arctan2(det, den).sum(axis=1) / (4 * np.pi)
    return out


def probe_points(m, k, seed):
    """Points in the mesh's box, and next to its vertices, edges and faces (offsets of 1e-3 to
    1e-7 of the mesh size in random directions)."""
    rng = np.random.default_rng(seed)
    V, F = m.vertices, m.faces
    lo, hi = V.min(axis=0), V.max(axis=0)
    size = np.linalg.norm(hi - lo)
    box = lo - 0.1 * size + rng.random((k, 3)) * (hi - lo + 0.2 * size)
    f = F[rng.integers(0, len(F), k)]
    w = rng.random(k)[:, None]
    edge = w * V[f[:, 0]] + (1 - w) * V[f[:, 1]]
    vert = V[rng.integers(0, len(V), k)]
    bary = rng.dirichlet((1, 1, 1), k)
    face = np.einsum("ki,kij->kj", bary, V[f])
    base = np.concatenate([edge, vert, face])
    off = rng.normal(size=base.shape)
    off *= (size * 10.0 ** rng.uniform(-7, -3, len(base)) / np.linalg.norm(off, axis=1))[:, None]
    return np.concatenate([box, base + off])


def phis(m, P, hint=-1):
    return np.array([point_phi(*m.arrays(), int(m.closed), tuple(map(float, p)), hint)[0] for p in P])


@pytest.mark.parametrize("name", sorted(MESHES))
def test_point_distance_and_sign_against_brute_force_and_winding_number(name):
    m = built(name)
    P = probe_points(m, 150, seed=len(name))
    got = phis(m, P)
    ref = brute_distance(m.vertices, m.faces, P)
    np.testing.assert_allclose(np.abs(got), ref, rtol=1e-12, atol=1e-15)
    w = winding(m.vertices, m.faces, P)
    assert np.all(np.abs(w - np.round(w)) < 0.01) and set(np.round(w)) <= {0.0, 1.0}
    inside = np.round(w) == 1
    assert np.all(got[inside] < 0) and np.all(got[~inside] > 0)


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MESHES))
def test_sign_on_many_points_per_mesh(name):
    """The sign against the winding number on 100,000 points per mesh under the ci profile,
    10,000 locally (conftest.THOROUGH): a quarter in the mesh's box, the rest within 1e-7 to
    1e-3 of its size from an edge, a vertex or a face."""
    m = built(name)
    P = probe_points(m, 25_000 if THOROUGH else 2_500, seed=7)
    got = phis(m, P)
    w = np.round(winding(m.vertices, m.faces, P))
    assert np.all((got < 0) == (w == 1))


def test_hint_changes_nothing():
    m = built("trefoil")
    P = probe_points(m, 40, seed=3)
    rng = np.random.default_rng(0)
    for p in P:
        y = tuple(map(float, p))
        ref = point_phi(*m.arrays(), 1, y, -1)
        for hint in rng.integers(0, len(m.faces), 3):
            assert point_phi(*m.arrays(), 1, y, int(hint)) == ref
        a, b = y, tuple(map(float, p + rng.normal(size=3) * 0.05))
        ref = capsule_mesh(*m.arrays(), 1, a, b, 0.01, -1)
        assert capsule_mesh(*m.arrays(), 1, a, b, 0.01, int(rng.integers(len(m.faces)))) == ref


def random_capsules(m, k, seed, length=0.3, radius=0.05):
    rng = np.random.default_rng(seed)
    V = m.vertices
    lo, hi = V.min(axis=0), V.max(axis=0)
    size = np.linalg.norm(hi - lo)
    A = lo - 0.2 * size + rng.random((k, 3)) * (hi - lo + 0.4 * size)
    u = rng.normal(size=(k, 3))
    B = A + u / np.linalg.norm(u, axis=1)[:, None] * size * length * rng.random((k, 1))
    B[: k // 4] = A[: k // 4]                             # spheres
    return A, B, size * radius * rng.random(k)


@pytest.mark.parametrize("name", sorted(MESHES))
def test_spheres_and_capsules_apart_against_coal(name):
    m = built(name)
    V, F = MESHES[name]()
    cm = coal_mesh(V, F)
    req, res = distance_request(), coal.DistanceResult()
    A, B, R = random_capsules(m, 120, seed=len(name))
    compared = 0
    for a, b, r in zip(A, B, R):
        d, p1, p2, n, t = capsule_mesh(*m.arrays(), 1, tuple(a), tuple(b), float(r), -1)
        g, tf = to_coal(Capsule(a=a, b=b, radius=float(r)))
        dc, q1, q2, _ = coal_distance(g, tf, cm, coal.Transform3s(), req, res)
        core = capsule_mesh(*m.arrays(), 1, tuple(a), tuple(b), 0.0, -1)[0]
        if dc < 1e-6 or core <= 0:                        # coal: the surface only
            continue
        compared += 1
        assert d == pytest.approx(dc, abs=1e-9)
        # witnesses: p2 on the mesh, p1 on the capsule, p2 - p1 = d n
        np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-12)
        assert abs(np.linalg.norm(n) - 1) < 1e-12
        assert brute_distance(m.vertices, m.faces, np.array([p2]))[0] < 1e-12
    assert compared > 40


@pytest.mark.parametrize("name", ["torus", "cup", "trefoil"])
def test_penetrating_capsules_deepest_core_point(name):
    """The core's signed distance is the minimum of phi along the segment: not above the
    smallest sampled phi (+ tolerance), not below it by more than the Lipschitz gap."""
    m = built(name)
    A, B, R = random_capsules(m, 400, seed=11)
    keep = np.round(winding(m.vertices, m.faces, A)) == 1          # one end inside
    A, B, R = A[keep][:12], B[keep][:12], R[keep][:12]
    checked = 0
    for a, b, r in zip(A, B, R):
        d, p1, p2, n, t = capsule_mesh(*m.arrays(), 1, tuple(a), tuple(b), float(r), -1)
        if d + r > 0:
            continue
        checked += 1
        s = np.linspace(0, 1, 201)
        Y = a + s[:, None] * (b - a)
        w = np.round(winding(m.vertices, m.faces, Y))
        sampled = np.where(w == 1, -1, 1) * brute_distance(m.vertices, m.faces, Y)
        gap = np.linalg.norm(b - a) * (s[1] - s[0]) / 2
        assert sampled.min() - gap - 1e-12 <= d + r <= sampled.min() + 1e-9
        # the normal points into the mesh at p2, and p1 = deepest core point + r n
        np.testing.assert_allclose(np.subtract(p2, p1), d * np.array(n), atol=1e-12)
    assert checked > 5


def test_sphere_in_a_cups_hollow_which_its_hull_swallows():
    Ro, Ri, H, t = 0.05, 0.04, 0.06, 0.01
    m = TriangleMesh.build(*mx.cup(Ro, Ri, H, t, n=48))
    r, gap = 0.01, 0.003
    c = (0.0, 0.0, t + gap + r)             # on the axis, above the flat floor z = t
    d, p1, p2, n, _ = capsule_mesh(*m.arrays(), 1, c, c, r, -1)
    assert d == pytest.approx(gap, abs=1e-15)
    np.testing.assert_allclose(n, (0, 0, -1), atol=1e-15)
    np.testing.assert_allclose(p2, (0, 0, t), atol=1e-15)
    # the cup's convex hull (what a hull monitor sees) holds the whole sphere: every facet
    # plane (qhull's outward equations) is at least r beyond its centre
    from scipy.spatial import ConvexHull
    eq = ConvexHull(m.vertices).equations
    assert np.max(eq[:, :3] @ np.array(c) + eq[:, 3]) < -r


def test_capsule_threading_a_torus():
    R, r, n = 1.0, 0.3, 48
    m = TriangleMesh.build(*mx.torus(R, r, n=n, m=24))
    rho = 0.1
    d, p1, p2, nrm, _ = capsule_mesh(*m.arrays(), 1, (0.0, 0.0, -1.0), (0.0, 0.0, 1.0), rho, -1)
    # the inner equator is a regular 48-gon of circumradius R - r; its chords are nearest
    assert d == pytest.approx((R - r) * np.cos(np.pi / n) - rho, abs=1e-15)
    assert abs(p2[2]) < 1e-15 and abs(np.hypot(p2[0], p2[1]) - (R - r) * np.cos(np.pi / n)) < 1e-15


def test_open_mesh_distances_are_unsigned():
    V, F = mx.torus()
    m = TriangleMesh.build(V, F[1:])
    assert not m.closed
    y = (1.0, 0.0, 0.0)                      # the centre of the tube
    phi = point_phi(*m.arrays(), int(m.closed), y, -1)[0]
    assert phi > 0 and phi == pytest.approx(brute_distance(m.vertices, m.faces, np.array([y]))[0], abs=1e-15)
    d = capsule_mesh(*m.arrays(), int(m.closed), (0.9, 0.0, 0.0), (1.1, 0.0, 0.0), 0.01, -1)[0]
    assert d > 0


def test_segment_triangle_against_coal_single_triangles():
    rng = np.random.default_rng(5)
    req, res = distance_request(), coal.DistanceResult()
    for _ in range(300):
        T = rng.normal(size=(3, 3))
        a, b = rng.normal(size=3), rng.normal(size=3)
        if rng.random() < 0.3:                               # near-parallel, near the plane
            nrm = np.cross(T[1] - T[0], T[2] - T[0])
            b = a + np.cross(nrm, rng.normal(size=3)) * 0.5
        d2, s, x, f = segment_triangle(tuple(a), tuple(b), *map(tuple, T))
        cm = coal_mesh(T, np.array([[0, 1, 2]]))
        g, tf = to_coal(Capsule(a=a, b=b, radius=0.0))
        dc = coal_distance(g, tf, cm, coal.Transform3s(), req, res)[0]
        assert np.sqrt(d2) == pytest.approx(max(dc, 0.0), abs=1e-9)
        y = a + s * (b - a)
        assert np.linalg.norm(y - np.array(x)) == pytest.approx(np.sqrt(d2), abs=1e-12)


def test_batch_matches_single_calls_and_updates_hints():
    m = built("bowl")
    A, B, R = random_capsules(m, 20, seed=2)
    hints = np.full(20, -1, dtype=np.int64)
    out = np.empty((20, 10))
    capsules_mesh_batch(*m.arrays(), 1, A, B, R, hints, out)
    for i in range(20):
        d, p1, p2, n, t = capsule_mesh(*m.arrays(), 1, tuple(A[i]), tuple(B[i]), float(R[i]), -1)
        np.testing.assert_array_equal(out[i], [d, *p1, *p2, *n])
        assert hints[i] == t


def test_triangle_triangle_against_coal():
    """Random pairs, pairs in parallel planes, coplanar pairs (overlapping or not), and
    piercing pairs; coal's BVH distance of two one-triangle models when apart, 0 when they
    intersect (coal reports a collision: distance <= 0)."""
    rng = np.random.default_rng(9)
    req, res = distance_request(), coal.DistanceResult()
    one = np.array([[0, 1, 2]])
    for k in range(400):
        T1 = rng.normal(size=(3, 3))
        T2 = rng.normal(size=(3, 3)) * rng.choice([0.3, 1.0, 2.0])
        if k % 4 == 1:                                  # parallel planes
            T2 = T1[[2, 0, 1]] * 0.7 + rng.normal(size=3) * [0.2, 0.2, 0] + np.cross(T1[1] - T1[0], T1[2] - T1[0]) * 0.1
        elif k % 4 == 2:                                # coplanar
            w = rng.dirichlet((1, 1, 1), 3) * 2.0 - 0.5
            T2 = w @ T1
        d2, x1, x2 = triangle_triangle(*map(tuple, T1), *map(tuple, T2))
        res.clear()
        dc = coal.distance(coal_mesh(T1, one), coal.Transform3s(), coal_mesh(T2, one), coal.Transform3s(), req, res)
        assert np.sqrt(d2) == pytest.approx(max(dc, 0.0), abs=1e-9)
        assert np.linalg.norm(np.subtract(x1, x2)) == pytest.approx(np.sqrt(d2), abs=1e-12)
        for x, T in ((x1, T1), (x2, T2)):                 # the witnesses lie on their triangles
            assert brute_distance(T, one, np.array([x]))[0] < 1e-12


def test_from_a_binary_stl_file_to_a_signed_distance(tmp_path):
    """The cup written as a binary STL (three vertices per facet, as exporters write them, a
    third of the facets flipped), read, welded, re-oriented: the hand value of the sphere in its
    hollow, and a point in its wall inside (negative, the wall's half thickness)."""
    V, F = mx.cup(0.05, 0.04, 0.06, 0.01, n=48)
    F = F.copy()
    F[::3] = F[::3, ::-1]
    rec = np.zeros(len(F), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = V[F]
    path = tmp_path / "cup.stl"
    path.write_bytes(b"cup".ljust(80) + np.uint32(len(F)).tobytes() + rec.tobytes())
    m = TriangleMesh.build(*read_mesh(path))
    assert m.closed and len(m.vertices) == len(V)
    Vf = V.astype(np.float32).astype(np.float64)         # the file's float32 coordinates
    t = Vf[:, 2][np.abs(Vf[:, 2] - 0.01) < 1e-6][0]      # the floor's top, as stored
    c = (0.0, 0.0, float(t) + 0.013)
    assert capsule_mesh(*m.arrays(), 1, c, c, 0.01, -1)[0] == pytest.approx(0.003, abs=1e-15)
    phi = point_phi(*m.arrays(), 1, (0.0, 0.0, 0.005), -1)[0]          # in the floor
    assert phi == pytest.approx(-0.005, abs=1e-9)


def test_root_box_bound_for_near_only():
    """Capsules around the L-bracket: the bound is at most the distance unless the core
    reaches the box (then it is -r); a hand value beside the box's corner edge x = y = 0.1
    (the bracket's box is [0, 0.1] x [0, 0.1] x [0, 0.03]; that corner is outside the L, so
    the mesh itself is farther than the box)."""
    m = built("l_bracket")
    A, B, R = random_capsules(m, 200, seed=4, length=1.0)
    for a, b, r in zip(A, B, R):
        lb = capsule_bound(m.bvh.boxes, tuple(a), tuple(b), float(r))
        d = capsule_mesh(*m.arrays(), 1, tuple(a), tuple(b), float(r), -1)[0]
        assert lb <= d + 1e-15 or lb == -r
    # a sphere of radius 0.01 centred 0.05 beyond the box's corner (0.1, 0.1, z) in x and y
    c = (0.15, 0.15, 0.015)
    assert capsule_bound(m.bvh.boxes, c, c, 0.01) == pytest.approx(0.05 * np.sqrt(2) - 0.01, abs=1e-15)
    assert capsule_mesh(*m.arrays(), 1, c, c, 0.01, -1)[0] > 0.05 * np.sqrt(2)   # the L's arms are farther
