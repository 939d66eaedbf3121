"""A triangle mesh prepared once for exact distance queries: welded, cleaned, oriented, with its
edge topology, angle-weighted pseudo-normals and bounding-volume hierarchy.

:meth:`TriangleMesh.build` takes vertices ``V`` (N, 3) float64 (metres, the mesh's own frame) and
triangles ``F`` (M, 3) integer rows of vertex indices (as :func:`~ambf_collision.geometry.meshes
.read_mesh` gives them), and does, in order:

1. **weld**: bit-identical vertices (``-0.0`` = ``0.0``) become one; unreferenced vertices go;
2. **drop** triangles of exactly zero area (a repeated vertex, or collinear corners whose cross
   product rounds to zero): they have no normal; counted in a warning;
3. **edges**: half-edge ``k`` of face ``f`` runs from corner ``k`` to corner ``(k + 1) % 3``. An
   edge shared by exactly two faces is *paired*; an edge of one face is *open*; an edge of three
   or more faces is *non-manifold* and treated as open (no neighbour);
4. **orient**: per connected component (faces joined by paired edges), faces are flipped so that
   every paired edge is walked in opposite directions by its two faces (the parity of each face
   against the component's first face, by breadth-first search and pointer doubling); a
   component that cannot be oriented (a Moebius strip) makes the mesh open. Each closed
   component is then turned outward: signed volume > 0, or < 0 for a component nested inside an
   odd number of others (a cavity; decided by its winding number about one of its vertices);
5. **closed** when every edge is paired and orientable: the mesh then has an inside, and signed
   distances (:mod:`~ambf_collision.geometry.mesh_distance`); otherwise distances are unsigned;
6. **hierarchy**: :func:`~ambf_collision.geometry.bvh.build_bvh` orders the faces so that each
   leaf's triangles are consecutive rows of ``faces``;
7. **pseudo-normals** (Baerentzen & Aanaes 2005): a face's is its unit normal; an edge's is the
   sum of its two faces' unit normals (computed in the kernels from ``neighbours``: nothing
   stored); a vertex's is the sum of its faces' unit normals weighted by their angles at it
   (``vertex_normals``, unit length). For a closed, consistently oriented mesh the sign of
   ``(q - c) . pseudo-normal`` at the closest point ``c`` of the closest feature is the side of
   ``q``, also at edges and vertices.

What was done is reported in ``warnings`` (strings without file or body name: the caller adds
them). Memory: ~100 bytes per triangle (:meth:`TriangleMesh.nbytes`).
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, connected_components

from ambf_collision.geometry.bvh import build_bvh

__all__ = ["TriangleMesh", "weld", "edge_topology", "orient", "vertex_pseudo_normals",
           "winding_numbers"]


class TriangleMesh:
    """A prepared triangle mesh (module docstring). Arrays (read-only after build):

    - ``vertices`` (N, 3) float64, m, the mesh frame;
    - ``faces`` (M, 3) int32, rows of vertex indices, counter-clockwise seen from outside (for a
      closed mesh), in the hierarchy's leaf order;
    - ``neighbours`` (M, 3) int32: the face across edge ``k`` (corner k to k + 1), -1 if open;
    - ``vertex_normals`` (N, 3) float64, unit angle-weighted pseudo-normals;
    - ``bvh``: the :class:`~ambf_collision.geometry.bvh.Bvh`;
    - ``closed`` (bool), ``warnings`` (list of str), ``dropped`` (zero-area triangles dropped).
    """

    def __init__(self, vertices, faces, neighbours, vertex_normals, bvh, closed, warnings, dropped):
        self.vertices = vertices
        self.faces = faces
        self.neighbours = neighbours
        self.vertex_normals = vertex_normals
        self.bvh = bvh
        self.closed = closed
        self.warnings = warnings
        self.dropped = dropped
        for a in (vertices, faces, neighbours, vertex_normals):
            a.flags.writeable = False

    @classmethod
    def build(cls, V, F) -> "TriangleMesh":
        """Prepare ``V`` (N, 3) finite float64, ``F`` (M, 3) integer indices in ``[0, N)``.
        Raises ``ValueError`` when no triangle of non-zero area is left."""
        V = np.asarray(V, dtype=np.float64).reshape(-1, 3)
        F = np.asarray(F, dtype=np.int64).reshape(-1, 3)
        warnings = []
        V, F = weld(V, F)
        cross = np.cross(V[F[:, 1]] - V[F[:, 0]], V[F[:, 2]] - V[F[:, 0]])
        keep = np.any(cross != 0.0, axis=1)
        dropped = int(len(F) - keep.sum())
        if dropped:
            warnings.append(f"{dropped} of {len(F)} triangles have zero area and were dropped")
            F = F[keep]
            V, F = weld(V, F)
        if len(F) == 0:
            raise ValueError("no triangle of non-zero area")
        F, closed, notes = orient(V, F)
        warnings += notes
        bvh, order = build_bvh(V, F)
        F = F[order]
        neighbours, _, _ = edge_topology(F, len(V))
        return cls(V, F.astype(np.int32), neighbours.astype(np.int32),
                   vertex_pseudo_normals(V, F), bvh, closed, warnings, dropped)

    def nbytes(self) -> int:
        """Bytes of every array kept (vertices, faces, neighbours, pseudo-normals, hierarchy)."""
        return (self.vertices.nbytes + self.faces.nbytes + self.neighbours.nbytes
                + self.vertex_normals.nbytes + self.bvh.nbytes())

    def arrays(self) -> tuple:
        """The arrays the compiled queries take, in their order: ``(vertices, faces, neighbours,
        vertex_normals, boxes, nodes)`` (:mod:`~ambf_collision.geometry.mesh_distance`)."""
        return (self.vertices, self.faces, self.neighbours, self.vertex_normals,
                self.bvh.boxes, self.bvh.nodes)


_HASH = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))
"""Odd 64-bit multipliers of :func:`weld`'s hash of a vertex's three coordinates' bits."""


def weld(V: np.ndarray, F: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Merge bit-identical vertices (``-0.0`` = ``0.0``) and drop unreferenced ones: ``(V',
    F')`` with ``F'`` indexing ``V'``. Rows are grouped by sorting a 64-bit hash of their bits
    (one sort instead of three); a hash shared by different rows (checked) falls back to a
    lexicographic sort."""
    mark = np.zeros(len(V), dtype=bool)
    mark[F.ravel()] = True
    used = np.flatnonzero(mark)
    W = np.ascontiguousarray(V[used] + 0.0)          # + 0.0 turns -0.0 into 0.0
    bits = W.view(np.uint64)
    h = (bits[:, 0] * _HASH[0]) ^ (bits[:, 1] * _HASH[1]) ^ (bits[:, 2] * _HASH[2])
    order = np.argsort(h)
    s = W[order]
    differ = np.any(s[1:] != s[:-1], axis=1)
    hs = h[order]
    if np.any(differ & (hs[1:] == hs[:-1])):       # a collision: group by the values themselves
        order = np.lexsort((W[:, 2], W[:, 1], W[:, 0]))
        s = W[order]
        differ = np.any(s[1:] != s[:-1], axis=1)
    new = np.r_[True, differ][:len(s)]
    rank = np.empty(len(W), dtype=np.int64)
    rank[order] = np.cumsum(new) - 1
    remap = np.full(len(V), -1, dtype=np.int64)
    remap[used] = rank
    return s[new], remap[F]


def edge_topology(F: np.ndarray, n_vertices: int):
    """``(neighbours, pairs, counts)`` of faces ``F`` (M, 3): ``neighbours`` (M, 3) int64, the
    face across each half-edge, -1 for open and non-manifold edges; ``pairs`` (P, 3) int64 rows
    ``(half-edge h1, half-edge h2, same)`` of the paired edges (``h = 3 f + k``; ``same`` 1 when
    both faces walk the edge in the same direction); ``counts`` = (open, non-manifold) edges."""
    a = F.ravel()
    b = F[:, [1, 2, 0]].ravel()
    key = np.minimum(a, b) * np.int64(n_vertices) + np.maximum(a, b)
    order = np.argsort(key, kind="stable")
    ks = key[order]
    start = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    size = np.diff(np.r_[start, len(ks)])
    two = start[size == 2]
    h1, h2 = order[two], order[two + 1]
    neighbours = np.full(len(a), -1, dtype=np.int64)
    neighbours[h1] = h2 // 3
    neighbours[h2] = h1 // 3
    pairs = np.stack([h1, h2, (a[h1] == a[h2]).astype(np.int64)], axis=1)
    return neighbours.reshape(-1, 3), pairs, (int((size == 1).sum()), int((size > 2).sum()))


def orient(V: np.ndarray, F: np.ndarray):
    """Consistently oriented, outward faces (module docstring, step 4): ``(F', closed, notes)``."""
    M = len(F)
    _, pairs, (n_open, n_nonmanifold) = edge_topology(F, len(V))
    notes = []
    if n_open:
        notes.append(f"{n_open} edges belong to one triangle only: the mesh is open (unsigned "
                     "distances)")
    if n_nonmanifold:
        notes.append(f"{n_nonmanifold} edges are shared by three or more triangles (non-manifold):"
                     " treated as open (unsigned distances)")
    flip, label, n_comp, consistent = _parities(pairs, M)
    closed = not (n_open or n_nonmanifold)
    if not consistent:
        notes.append("the triangles cannot be oriented consistently (a one-sided surface): "
                     "treated as open (unsigned distances)")
        closed = False
    # fewest flips: each component keeps the orientation of most of its faces ...
    turn = np.bincount(label, weights=flip, minlength=n_comp) > 0.5 * np.bincount(label, minlength=n_comp)
    flip ^= turn[label]
    F = F.copy()
    F[flip] = F[flip][:, [0, 2, 1]]
    if closed:   # ... and a closed mesh's components face outward (cavities inward)
        volume = _signed_volumes(V, F, label, n_comp)
        turn = np.sign(volume) != _required_signs(V, F, label, n_comp, volume)
        F[turn[label]] = F[turn[label]][:, [0, 2, 1]]
        flip ^= turn[label]
    flipped = int(flip.sum())
    if flipped:
        notes.append(f"{flipped} of {M} triangles were flipped to orient the mesh consistently"
                     + (" (outward)" if closed else ""))
    return F, closed, notes


def _parities(pairs: np.ndarray, M: int):
    """Per face, whether it must flip to agree with its component's first face (breadth-first
    tree of the paired edges, parities to the root by pointer doubling): ``(flip (M,) bool,
    label (M,) component, n_comp, consistent)``; ``consistent`` False when some paired edge is
    still walked the same way by both faces after the flips (a one-sided surface)."""
    f1, f2, same = pairs[:, 0] // 3, pairs[:, 1] // 3, pairs[:, 2]
    g1, g2 = np.minimum(f1, f2), np.maximum(f1, f2)
    ids = np.arange(1, len(pairs) + 1)                               # pair index + 1 (0 = no edge)
    graph = csr_matrix((ids, (g1, g2)), shape=(M, M))
    if graph.nnz < len(ids):                 # two faces sharing two edges: keep one entry
        first = np.unique(g1 * np.int64(M) + g2, return_index=True)[1]
        g1, g2, ids = g1[first], g2[first], ids[first]
        graph = csr_matrix((ids, (g1, g2)), shape=(M, M))
    n_comp, label = connected_components(graph, directed=False)
    firsts = _first_of_each(label, n_comp)
    # one breadth-first search from a virtual root M with an edge to each component's first face
    root_edge = len(pairs) + 1
    graph = csr_matrix((np.r_[ids, ids, np.full(n_comp, root_edge)],
                        (np.r_[g1, g2, np.full(n_comp, M)], np.r_[g2, g1, firsts])), shape=(M + 1, M + 1))
    _, pred = breadth_first_order(graph, M, directed=True, return_predecessors=True)
    parent = pred.astype(np.int64)
    parent[M] = M
    edge = np.asarray(graph[np.arange(M), parent[:M]]).ravel().astype(np.int64)  # 0 for the root's
    parity = np.zeros(M + 1, dtype=np.int64)
    tree = (edge > 0) & (edge < root_edge)
    parity[:M][tree] = same[edge[tree] - 1]
    anc = parent
    while np.any(anc != M):                 # parity to the root: XOR along the path, by doubling
        parity = parity ^ parity[anc]
        anc = anc[anc]
    flip = parity[:M].astype(bool)
    consistent = not np.any(same.astype(bool) ^ flip[f1] ^ flip[f2])
    return flip, label, n_comp, consistent


def _first_of_each(label: np.ndarray, n: int) -> np.ndarray:
    """The first index of each value ``0 .. n - 1`` in ``label``."""
    first = np.full(n, len(label), dtype=np.int64)
    np.minimum.at(first, label, np.arange(len(label)))
    return first


def _signed_volumes(V, F, label, n_comp):
    """Signed volume (m^3) enclosed by each component (divergence theorem)."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    det = np.einsum("ij,ij->i", a, np.cross(b, c)) / 6.0
    return np.bincount(label, weights=det, minlength=n_comp)


def _required_signs(V, F, label, n_comp, volume, max_work=50_000_000):
    """+1 for each closed component nested in an even number of others, -1 for an odd number.
    Only components whose box lies in another's box are tested (winding number of their first
    vertex about the other); above ``max_work`` triangle evaluations the rest count as outer."""
    need = np.ones(n_comp)
    if n_comp == 1:
        return need
    lo = np.full((n_comp, 3), np.inf)
    hi = np.full((n_comp, 3), -np.inf)
    pts = V[F[:, 0]]
    for k in range(3):
        np.minimum.at(lo[:, k], label, pts[:, k])
        np.maximum.at(hi[:, k], label, pts[:, k])
    sizes = np.bincount(label, minlength=n_comp)
    firsts = _first_of_each(label, n_comp)
    work = 0
    for i in range(n_comp):
        inside = np.all(lo[i] >= lo, axis=1) & np.all(hi[i] <= hi, axis=1) & (volume != 0.0)
        inside[i] = False
        depth = 0
        for j in np.flatnonzero(inside):
            work += sizes[j]
            if work > max_work:
                break
            w = winding_numbers(V, F[label == j], V[F[firsts[i], 0]][None, :])[0]
            depth += abs(w) > 0.5
        need[i] = -1.0 if depth % 2 else 1.0
    return need


def winding_numbers(V: np.ndarray, F: np.ndarray, points: np.ndarray) -> np.ndarray:
    """Generalised winding numbers (Jacobson et al. 2013) of ``points`` (P, 3) about the
    triangles ``F`` of ``V``: the sum of their signed solid angles / 4 pi (Van Oosterom and
    Strackee's formula); 1 inside a closed outward mesh, 0 outside. O(P M) NumPy."""
    out = np.empty(len(points))
    for i, p in enumerate(points):
        a, b, c = V[F[:, 0]] - p, V[F[:, 1]] - p, V[F[:, 2]] - p
        la, lb, lc = (np.linalg.norm(x, axis=1) for x in (a, b, c))
        num = np.einsum("ij,ij->i", a, np.cross(b, c))
        den = (la * lb * lc + np.einsum("ij,ij->i", a, b) * lc + np.einsum("ij,ij->i", b, c) * la
               + np.einsum("ij,ij->i", c, a) * lb)
        out[i] = np.arctan2(num, den).sum() / (2.0 * np.pi)
    return out


def vertex_pseudo_normals(V: np.ndarray, F: np.ndarray) -> np.ndarray:
    """Angle-weighted vertex pseudo-normals (N, 3), unit length (+z for a vertex of no face)."""
    e = [V[F[:, (k + 1) % 3]] - V[F[:, k]] for k in range(3)]       # edge k: corner k -> k + 1
    n = np.cross(e[0], -e[2])
    n /= np.linalg.norm(n, axis=1)[:, None]
    out = np.zeros((len(V), 3))
    for k in range(3):
        u, w = e[k], -e[(k + 2) % 3]                                  # the two edges out of corner k
        angle = np.arctan2(np.linalg.norm(np.cross(u, w), axis=1), np.einsum("ij,ij->i", u, w))
        for j in range(3):
            out[:, j] += np.bincount(F[:, k], weights=angle * n[:, j], minlength=len(V))
    length = np.linalg.norm(out, axis=1)
    out[length == 0.0] = (0.0, 0.0, 1.0)
    length[length == 0.0] = 1.0
    return out / length[:, None]
