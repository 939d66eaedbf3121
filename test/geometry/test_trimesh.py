"""Triangle-mesh preparation (geometry/trimesh.py) and its hierarchy (geometry/bvh.py): welding,
zero-area triangles, open and non-manifold edges, orientation, pseudo-normals, boxes.

Oracles: meshes generated in ``mesh_examples`` (outward by construction, checked by their
volume), their scrambled copies (faces flipped at random, vertices duplicated per face), volumes
by the divergence theorem, brute-force box containment, hand-built bad meshes."""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.bvh import LEAF_SIZE, build_bvh
from ambf_collision.geometry import trimesh
from ambf_collision.geometry.trimesh import TriangleMesh, vertex_pseudo_normals, weld, winding_numbers

MESHES = {"torus": mx.torus, "cup": mx.cup, "bowl": mx.bowl, "l_bracket": mx.l_bracket,
          "trefoil": mx.trefoil, "rings": mx.rings}


def volume(V, F):
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    return np.einsum("ij,ij->i", a, np.cross(b, c)).sum() / 6.0


def scrambled(V, F, seed=0):
    """Every triangle with its own three vertices (as an STL has them), a third flipped."""
    rng = np.random.default_rng(seed)
    F = F.copy()
    flip = rng.random(len(F)) < 0.3
    F[flip] = F[flip][:, ::-1]
    return V[F].reshape(-1, 3), np.arange(3 * len(F)).reshape(-1, 3), int(flip.sum())


@pytest.mark.parametrize("name", sorted(MESHES))
def test_scrambled_meshes_are_welded_and_reoriented_outward(name):
    V, F = MESHES[name]()
    V2, F2, n_flipped = scrambled(V, F)
    m = TriangleMesh.build(V2, F2)
    assert m.closed and len(m.vertices) == len(np.unique(V, axis=0)) and len(m.faces) == len(F)
    assert m.warnings == [f"{n_flipped} of {len(F)} triangles were flipped to orient the mesh "
                          "consistently (outward)"]
    assert volume(m.vertices, m.faces) == pytest.approx(volume(V, F), rel=1e-12)
    # the same triangles as the generator's, each with the generator's orientation
    key = {tuple(sorted(map(tuple, V[f]))): V[f] for f in F}
    for f in m.faces[:: max(1, len(F) // 200)]:
        tri = m.vertices[f]
        ref = key[tuple(sorted(map(tuple, tri)))]
        shift = [k for k in range(3) if np.array_equal(np.roll(tri, k, axis=0), ref)]
        assert shift, "orientation differs from the generator's"
    assert np.all(m.neighbours >= 0)


def test_cavity_faces_inward():
    """A hollow ball: an outer sphere and an inner one (a cavity). Both given outward; the
    cavity must end up facing the centre (volume outer - inner)."""
    Vo, Fo = mx.revolve([(0, -1)] + [(np.cos(a), np.sin(a)) for a in np.linspace(-1.4, 1.4, 9)] + [(0, 1)])
    Vi = 0.5 * Vo
    V = np.concatenate([Vo, Vi])
    F = np.concatenate([Fo, Fo + len(Vo)])
    m = TriangleMesh.build(V, F)
    assert m.closed
    assert volume(m.vertices, m.faces) == pytest.approx(volume(Vo, Fo) * (1 - 0.125), rel=1e-12)
    assert m.warnings == [f"{len(Fo)} of {2 * len(Fo)} triangles were flipped to orient the mesh "
                          "consistently (outward)"]


def test_zero_area_triangles_are_dropped_and_counted():
    V, F = mx.l_bracket()
    # a repeated vertex, and three collinear vertices (differences exact in binary)
    V2 = np.concatenate([V, [(1.0, 1.0, 1.0), (1.5, 2.0, 2.5), (2.0, 3.0, 4.0)]])
    n = len(V)
    F2 = np.concatenate([F, [[0, 0, 1], [n, n + 1, n + 2]]])
    m = TriangleMesh.build(V2, F2)
    assert m.dropped == 2 and m.closed and len(m.faces) == len(F)
    assert m.warnings[0] == f"2 of {len(F2)} triangles have zero area and were dropped"
    with pytest.raises(ValueError, match="no triangle of non-zero area"):
        TriangleMesh.build(np.zeros((3, 3)), [[0, 1, 2]])


def test_open_and_non_manifold_meshes_are_reported_open():
    V, F = mx.torus(n=12, m=8)
    m = TriangleMesh.build(V, F[1:])               # one triangle missing: 3 open edges
    assert not m.closed
    assert m.warnings == ["3 edges belong to one triangle only: the mesh is open (unsigned distances)"]
    assert (m.neighbours < 0).sum() == 3
    # a fin: a triangle on an existing edge makes that edge non-manifold
    i, j = F[0, 0], F[0, 1]
    V2 = np.concatenate([V, [V[i] + V[j] + 1.0]])
    m = TriangleMesh.build(V2, np.concatenate([F, [[i, j, len(V)]]]))
    assert not m.closed
    assert "1 edges are shared by three or more triangles (non-manifold): treated as open" in m.warnings[1]
    assert (m.neighbours < 0).sum() == 3 + 2       # the fin's 2 open edges + 3 faces at the edge


def test_one_sided_surface_is_open():
    """A Moebius strip (closed edges would pair up in a band, but it has one side)."""
    n = 24
    u = 2 * np.pi * np.arange(n) / n
    V = np.concatenate([np.stack([(1 + s * np.cos(u / 2)) * np.cos(u), (1 + s * np.cos(u / 2)) * np.sin(u),
                                  s * np.sin(u / 2)], -1) for s in (-0.2, 0.2)])
    i = np.arange(n)
    j = (i + 1) % n
    top_j = np.where(j == 0, j, j + n)             # the twist: crossing u = 2 pi swaps the sides
    bot_j = np.where(j == 0, n, j)
    F = np.concatenate([np.stack([i, bot_j, top_j], -1), np.stack([i, top_j, i + n], -1)])
    m = TriangleMesh.build(V, F)
    assert not m.closed
    assert any("cannot be oriented consistently" in w for w in m.warnings)


def test_vertex_pseudo_normals_of_a_cube_corner_point_along_the_diagonal():
    V, F = mx.extrude([(0, 0), (1, 0), (1, 1), (0, 1)], 1.0)
    N = vertex_pseudo_normals(V, F)
    # each corner has three right angles (pi/2 each, whichever way its faces are cut)
    expect = np.sign(V - 0.5) / np.sqrt(3)
    np.testing.assert_allclose(N, expect, atol=1e-15)


def test_winding_numbers_inside_outside():
    V, F = mx.torus()
    w = winding_numbers(V, F, np.array([[1.0, 0, 0], [0, 0, 0], [2, 0, 0], [0, 1.0, 0.1]]))
    np.testing.assert_allclose(w, [1, 0, 0, 1], atol=1e-9)


@pytest.mark.parametrize("M", [1, 2, 5, 37, 1000])
def test_bvh_boxes_contain_their_triangles_exactly(M):
    rng = np.random.default_rng(M)
    V = rng.normal(size=(3 * M, 3))
    F = np.arange(3 * M).reshape(-1, 3)
    bvh, order = build_bvh(V, F)
    assert np.array_equal(np.sort(order), np.arange(M))
    boxes, nodes = bvh.boxes, bvh.nodes
    P = V[F[order]]
    leaves = np.flatnonzero(nodes[:, 1] > 0)
    covered = np.zeros(M, int)
    for i in leaves:
        first, count = nodes[i]
        assert 1 <= count <= LEAF_SIZE
        covered[first:first + count] += 1
        pts = P[first:first + count].reshape(-1, 3)
        np.testing.assert_array_equal(boxes[i, :3], pts.min(axis=0))
        np.testing.assert_array_equal(boxes[i, 3:], pts.max(axis=0))
    assert np.all(covered == 1)
    inner = np.flatnonzero(nodes[:, 1] == 0)
    for i in inner:
        c = nodes[i, 0]
        assert c > i
        np.testing.assert_array_equal(boxes[i, :3], np.minimum(boxes[c, :3], boxes[c + 1, :3]))
        np.testing.assert_array_equal(boxes[i, 3:], np.maximum(boxes[c, 3:], boxes[c + 1, 3:]))
    assert bvh.depth <= int(np.ceil(np.log2(max(M, 1) / LEAF_SIZE))) + 2 if M > LEAF_SIZE else bvh.depth == 1


def test_bvh_splits_at_the_median_of_the_widest_axis():
    # triangles strung along x: the root's children hold the lower and the upper half in x
    M = 64
    x = np.random.default_rng(1).permutation(M).astype(float)
    V = np.concatenate([np.stack([x, np.zeros(M), np.zeros(M)], -1), np.stack([x, 1e-3 + np.zeros(M), np.zeros(M)], -1),
                        np.stack([x, np.zeros(M), 1e-3 + np.zeros(M)], -1)])
    F = np.stack([np.arange(M), np.arange(M) + M, np.arange(M) + 2 * M], -1)
    bvh, order = build_bvh(V, F)
    left = bvh.nodes[0, 0]
    assert bvh.boxes[left, 3] == 31 and bvh.boxes[left + 1, 0] == 32


@pytest.mark.parametrize("collide", [False, True])
def test_weld_merges_bit_identical_vertices(monkeypatch, collide):
    """Oracle: NumPy's unique rows. ``collide`` makes every hash equal (multipliers 0), so the
    lexicographic fallback runs."""
    if collide:
        monkeypatch.setattr(trimesh, "_HASH", (np.uint64(0),) * 3)
    rng = np.random.default_rng(3)
    V = rng.integers(-2, 3, size=(4000, 3)).astype(float)
    V[::9, 1] = -0.0                                   # -0.0 and 0.0 are one value
    F = rng.integers(0, 3000, size=(2500, 3))          # vertices 3000.. unreferenced
    W, G = weld(V, F)
    np.testing.assert_array_equal(W[G], V[F] + 0.0)
    assert len(W) == len(np.unique(V[np.unique(F)] + 0.0, axis=0))
    assert not np.signbit(W).any() or np.all(W[np.signbit(W)] < 0)
