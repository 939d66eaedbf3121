"""A closed mesh of several shells split into solids whose insides a closest feature can decide.

A mesh's sign is decided at its closest feature (:mod:`~ambf_collision.geometry.mesh_distance`),
which is right for one closed shell, for shells apart and for cavities nested in a shell. It is
wrong where two closed shells interpenetrate, as CAD exports of assemblies often do (a pin through
a link: AMBF's dVRK PSM ``tool pitch link``): a point inside the pin may have a face of the link
running inside the pin as its closest feature, whose side says "outside". The solid such a file
describes is the union of its shells, and a union's sign is right when each shell is its own
shape: the body is then a compound of solids, as a ``compound collision shape`` is.

:func:`solid_parts` does that split, and only where it is needed:

1. an open mesh, or a closed mesh of one connected component (faces joined by paired edges), is
   left as it is;
2. a component whose box lies in another's box and whose vertices all lie inside it (generalised
   winding number > 0.5) is a *cavity* of the smallest such component (as
   :func:`~ambf_collision.geometry.trimesh.orient` faces it inward) and goes with it;
3. every other component is a solid. Solids whose boxes overlap no other solid's stay together
   in one part; each solid whose box overlaps another solid's becomes a part of its own, with its
   cavities.

Each part is a new :class:`~ambf_collision.geometry.trimesh.TriangleMesh` (its own hierarchy).
The winding numbers of step 2 cost the product of the vertices and triangles tested; above
``MAX_NESTING_WORK`` a component counts as nested when its first vertex is inside (as ``orient``
decides) and the split says so.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from ambf_collision.geometry.trimesh import TriangleMesh, winding_numbers

__all__ = ["solid_parts", "components", "MAX_NESTING_WORK"]

MAX_NESTING_WORK = 20_000_000
"""Vertex-triangle products (winding-number terms) the cavity test may spend per mesh; NumPy does
~5e7 per second, so at most ~0.4 s."""


def components(mesh: TriangleMesh) -> tuple[np.ndarray, int]:
    """``(label (M,), count)``: the connected component of each face (faces joined by paired
    edges, the mesh's ``neighbours``)."""
    M = len(mesh.faces)
    rows = np.repeat(np.arange(M), 3)
    cols = mesh.neighbours.ravel().astype(np.int64)
    keep = cols >= 0
    graph = csr_matrix((np.ones(int(keep.sum())), (rows[keep], cols[keep])), shape=(M, M))
    count, label = connected_components(graph, directed=False)
    return label, int(count)


def _boxes(V, F, label, n):
    lo = np.full((n, 3), np.inf)
    hi = np.full((n, 3), -np.inf)
    for k in range(3):
        corner = V[F, k]                                   # (M, 3)
        np.minimum.at(lo[:, k], label, corner.min(axis=1))
        np.maximum.at(hi[:, k], label, corner.max(axis=1))
    return lo, hi


def solid_parts(mesh: TriangleMesh) -> tuple[list, str]:
    """``(parts, note)``: the mesh as one or several meshes (module docstring), and a note for
    the load warning ("" when it is left whole)."""
    if not mesh.closed:
        return [mesh], ""
    label, n = components(mesh)
    if n == 1:
        return [mesh], ""
    V, F = mesh.vertices, mesh.faces
    lo, hi = _boxes(V, F, label, n)
    overlap = np.all(lo[:, None, :] <= hi[None, :, :], axis=2) & np.all(lo[None, :, :] <= hi[:, None, :], axis=2)
    np.fill_diagonal(overlap, False)
    if not overlap.any():
        return [mesh], ""
    inside = np.all(lo[:, None, :] >= lo[None, :, :], axis=2) & np.all(hi[:, None, :] <= hi[None, :, :], axis=2)
    np.fill_diagonal(inside, False)                        # inside[a, b]: a's box in b's box
    faces_of = [F[label == c] for c in range(n)]
    size = np.array([len(f) for f in faces_of])
    cavity_of = np.full(n, -1)
    work, estimated = 0, False
    for a in range(n):
        hosts = [b for b in np.flatnonzero(inside[a]) if size[b] > size[a] or not inside[b, a]]
        for b in sorted(hosts, key=lambda b: size[b]):      # the smallest host first
            verts = np.unique(faces_of[a])
            if work + len(verts) * size[b] > MAX_NESTING_WORK:
                verts, estimated = verts[:1], True
            work += len(verts) * size[b]
            if np.all(winding_numbers(V, faces_of[b], V[verts]) > 0.5):
                cavity_of[a] = b
                break
    solid = cavity_of < 0
    crowded = solid & (overlap & solid[None, :]).any(axis=1)
    groups = [[c] for c in np.flatnonzero(crowded)]
    rest = [c for c in np.flatnonzero(solid & ~crowded)]
    if rest:
        groups.append(rest)
    if len(groups) == 1:
        return [mesh], ""
    where = {c: i for i, g in enumerate(groups) for c in g}
    for a in np.flatnonzero(~solid):                       # a cavity goes with its host's part
        host = cavity_of[a]
        while cavity_of[host] >= 0:
            host = cavity_of[host]
        groups[where[host]].append(a)
    parts = [TriangleMesh.build(V, np.concatenate([faces_of[c] for c in g])) for g in groups]
    note = (f"{int(crowded.sum())} of its {n} closed shells interpenetrate: monitored as "
            f"{len(parts)} solids (their union), each shell's inside its own")
    if estimated:
        note += " (cavities told by one vertex each: the mesh is too large to test every vertex)"
    return parts, note
