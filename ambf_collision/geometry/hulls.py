"""Convex hulls of point clouds, built once with qhull and stored as flat arrays for the kernels.

A :class:`HullSet` holds H hulls, each in its own local frame (metres). Hull ``h`` owns the rows
``vertex_start[h]:vertex_start[h+1]`` of ``vertices`` (its hull vertices only, every one a point of
the cloud it was built from), the rows ``face_start[h]:face_start[h+1]`` of the face planes and the
rows ``triangle_start[h]:triangle_start[h+1]`` of ``triangles``.

Representation, the same for every dimension of the cloud:

* **Face planes** are an exact half-space description: the hull is ``{x : face_normal . x <=
  face_offset}`` over its faces (outward unit normals). For a solid (3-D) hull they are qhull's
  facets, coplanar triangles merged into one face. A cloud with fewer dimensions gets planes that
  squeeze the half-space description flat:

  - **polygon** (coplanar cloud): its two sides ``+n`` and ``-n``, then one in-plane plane per
    polygon edge (outward, perpendicular to ``n``);
  - **segment** (collinear cloud): its two ends ``+u`` and ``-u`` along the segment, then ``+e1,
    -e1, +e2, -e2`` through it (``e1, e2`` perpendicular to ``u`` and to each other);
  - **point** (one distinct point): the six planes ``+x, -x, +y, -y, +z, -z`` through it.

  For a point inside a solid hull, ``max(face_normal . x - face_offset)`` is minus its depth; for
  the flat kinds it is a lower bound of the distance, exact where the nearest point is on a side.
* **Triangles** (indices into ``vertices``) are the hull's surface, outward counter-clockwise,
  closed (every edge in two triangles, once in each direction). A polygon is drawn on both sides
  (a fan from its first vertex on ``+n``, one from its second on ``-n``, so that no edge is in
  more than two triangles); a segment and a point have no triangles.
* ``centre`` is the mean of the hull vertices (in the relative interior), ``bound_radius`` the
  largest vertex distance from it; ``dimension`` is 3, 2, 1 or 0.
* ``neighbor_start``/``neighbors``: each vertex's neighbours along hull edges (adjacency lists
  over all rows of ``vertices``), for the support function's hill climb.

Clouds are deduplicated by content before qhull runs: a mesh shared by several shapes (two copies
of one robot) is hulled once. The njit kernels read the arrays through the :class:`Hulls` tuple
(:meth:`HullSet.arrays`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ambf_collision.geometry.tolerances import HULL_CHECK_RELATIVE

__all__ = ["HullError", "HullSet", "Hulls"]


class Hulls(NamedTuple):
    """The arrays of a :class:`HullSet` that the njit kernels read (see the module docstring)."""

    vertices: np.ndarray  # (V, 3) float64, local frames
    vertex_start: np.ndarray  # (H + 1,) int64
    face_normal: np.ndarray  # (F, 3) float64, outward unit
    face_offset: np.ndarray  # (F,) float64, inside: face_normal . x <= face_offset
    face_start: np.ndarray  # (H + 1,) int64
    centre: np.ndarray  # (H, 3) float64
    bound_radius: np.ndarray  # (H,) float64
    neighbor_start: np.ndarray  # (V + 1,) int64
    neighbors: np.ndarray  # (A,) int64: vertices joined to vertex i by a hull edge, rows of ``vertices``


class HullError(ValueError):
    """A point cloud that cannot be hulled (not a finite (M, 3) array), or a HullSet that fails
    :meth:`HullSet.validate`; the message names the hull."""


class _Hull(NamedTuple):
    """One hull in local coordinates: vertices (n,3), planes (f,3)/(f,), triangles (t,3) local."""

    vertices: np.ndarray
    normal: np.ndarray
    offset: np.ndarray
    triangles: np.ndarray
    triangle_face: np.ndarray
    dimension: int


class HullSet:
    """H convex hulls as flat arrays (module docstring). Constant once built; build it with
    :meth:`from_clouds`."""

    def __init__(self, hulls: list[_Hull]):
        def starts(counts):
            return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)

        self.vertex_start = starts([len(h.vertices) for h in hulls])
        self.face_start = starts([len(h.offset) for h in hulls])
        self.triangle_start = starts([len(h.triangles) for h in hulls])

        def stacked(parts, shape, dtype=np.float64):
            return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(shape), dtype=dtype)

        self.vertices = stacked([h.vertices for h in hulls], (0, 3))
        self.face_normal = stacked([h.normal for h in hulls], (0, 3))
        self.face_offset = stacked([h.offset for h in hulls], (0,))
        self.triangles = stacked([h.triangles + s for h, s in zip(hulls, self.vertex_start)], (0, 3), np.int64)
        self.triangle_face = stacked([h.triangle_face + s for h, s in zip(hulls, self.face_start)], (0,), np.int64)
        self.dimension = np.array([h.dimension for h in hulls], dtype=np.int64)
        self.centre = stacked([h.vertices.mean(axis=0, keepdims=True) for h in hulls], (0, 3))
        self.bound_radius = np.array(
            [np.sqrt(((h.vertices - c) ** 2).sum(axis=1)).max() for h, c in zip(hulls, self.centre)])
        self.neighbor_start, self.neighbors = _vertex_graph(self.triangles, self.dimension, self.vertex_start)
        for a in (self.vertices, self.face_normal, self.face_offset, self.triangles, self.triangle_face, self.centre,
                  self.bound_radius, self.vertex_start, self.face_start, self.triangle_start, self.dimension,
                  self.neighbor_start, self.neighbors):
            a.setflags(write=False)

    @classmethod
    def from_clouds(cls, clouds) -> HullSet:
        """Hull ``h`` of the returned set is the convex hull of ``clouds[h]`` (an (M,3) array of
        local points, metres, M >= 1). Raises :class:`HullError` naming the cloud when one is not a
        finite (M,3) array."""
        built = {}
        hulls = []
        for h, cloud in enumerate(clouds):
            try:
                P = np.array(cloud, dtype=np.float64)
            except (TypeError, ValueError):
                raise HullError(f"hull {h}: the point cloud is not an array of numbers") from None
            if P.ndim != 2 or P.shape[1] != 3 or P.shape[0] < 1:
                raise HullError(f"hull {h}: the point cloud must have shape (M, 3) with M >= 1, got {P.shape}")
            if not np.all(np.isfinite(P)):
                raise HullError(f"hull {h}: the point cloud has non-finite coordinates")
            key = (P.shape, P.tobytes())
            if key not in built:
                built[key] = _hull_of(P)
            hulls.append(built[key])
        return cls(hulls)

    @property
    def count(self) -> int:
        """Number of hulls H."""
        return len(self.dimension)

    def arrays(self) -> Hulls:
        """The :class:`Hulls` tuple the njit kernels take (views, no copies)."""
        return Hulls(self.vertices, self.vertex_start, self.face_normal, self.face_offset, self.face_start,
                     self.centre, self.bound_radius, self.neighbor_start, self.neighbors)

    def hull_vertices(self, h: int) -> np.ndarray:
        """Vertices (n, 3) of hull h (local frame, metres)."""
        return self.vertices[self.vertex_start[h]:self.vertex_start[h + 1]]

    def hull_faces(self, h: int) -> tuple[np.ndarray, np.ndarray]:
        """Face planes of hull h: outward unit normals (f, 3) and offsets (f,)."""
        s = slice(self.face_start[h], self.face_start[h + 1])
        return self.face_normal[s], self.face_offset[s]

    def hull_triangles(self, h: int) -> np.ndarray:
        """Triangles (t, 3) of hull h as indices into :meth:`hull_vertices` (h)."""
        return self.triangles[self.triangle_start[h]:self.triangle_start[h + 1]] - self.vertex_start[h]

    def hull_triangle_faces(self, h: int) -> np.ndarray:
        """The face (index into :meth:`hull_faces` (h)) each triangle of hull h lies in."""
        return self.triangle_face[self.triangle_start[h]:self.triangle_start[h + 1]] - self.face_start[h]

    def validate(self) -> HullSet:
        """Check every hull: closed (each directed triangle edge once, its reverse once), outward
        (triangle normals along a face normal, positive volume), convex (every vertex inside every
        face plane and every triangle's plane, each face plane touching the hull), unit normals, and
        the representation of its dimension. Tolerance: ``HULL_CHECK_RELATIVE`` times the hull's
        bound radius. Raises :class:`HullError` naming the hull and the failed check."""
        for h in range(self.count):
            problem = _check_hull(self.hull_vertices(h), *self.hull_faces(h), self.hull_triangles(h),
                                  self.hull_triangle_faces(h), int(self.dimension[h]), float(self.bound_radius[h]))
            if problem:
                raise HullError(f"hull {h} (dimension {self.dimension[h]}): {problem}")
        return self


def _vertex_graph(triangles, dimension, vertex_start):
    """Hull edges as adjacency lists over all vertices: (neighbor_start (V+1,), neighbors (A,)).
    The triangles' edges (a merged face's diagonals too: harmless for hill climbing); a segment's
    two ends; nothing for a point."""
    ends = [triangles[:, [0, 1]], triangles[:, [1, 2]], triangles[:, [2, 0]]]
    for h in np.flatnonzero(dimension == 1):
        ends.append(np.array([[vertex_start[h], vertex_start[h] + 1]]))
    edges = np.concatenate(ends) if ends else np.zeros((0, 2), np.int64)
    both = np.unique(np.concatenate([edges, edges[:, ::-1]]), axis=0)  # sorted by vertex, then neighbour
    count = np.bincount(both[:, 0], minlength=int(vertex_start[-1]))
    start = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
    return start, np.ascontiguousarray(both[:, 1], dtype=np.int64)


# ------------------------------------------------------------------------------------------------
# building one hull


def _hull_of(P: np.ndarray) -> _Hull:
    """Hull of the points P (M,3): qhull in 3-D, the flat representations when qhull finds the
    cloud flat (or M < 4)."""
    # imported here, not at the top: scipy.spatial takes ~0.4 s to import (of the node's
    # 2-3 s warm start), and only a mesh's hull needs it
    from scipy.spatial import ConvexHull, QhullError

    if len(P) >= 4:
        try:
            return _solid_hull(P, ConvexHull(P))
        except QhullError:
            pass  # flat: coplanar or collinear (qhull's own precision decides)
    if np.all(P == P[0]):
        return _point_hull(P[0])
    centre = P.mean(axis=0)
    _, _, axes = np.linalg.svd(P - centre)  # rows: principal directions, largest spread first
    if len(P) >= 3:
        try:
            return _polygon_hull(P, axes)
        except QhullError:
            pass  # collinear
    return _segment_hull(P, axes)


def _solid_hull(P: np.ndarray, qh) -> _Hull:
    """qhull's facets as faces. A facet that is one triangle keeps it, turned counter-clockwise
    about the facet normal; a facet that qhull merged from several (they share its hyperplane
    exactly) is triangulated again from its outline (:func:`_face_triangles`)."""
    keep = np.sort(qh.vertices)
    local = np.full(len(P), -1, dtype=np.int64)
    local[keep] = np.arange(len(keep))
    V = P[keep]
    planes, face_of = np.unique(qh.equations, axis=0, return_inverse=True)
    face_of = face_of.ravel()
    normal = planes[:, :3]
    tri = local[qh.simplices]
    order = np.argsort(face_of, kind="stable")
    bounds = np.searchsorted(face_of[order], np.arange(len(planes) + 1))
    single = np.diff(bounds) == 1
    one = order[bounds[:-1][single]]  # the triangle of each single-triangle face
    tri_1, face_1 = tri[one], face_of[one]
    area = np.cross(V[tri_1[:, 1]] - V[tri_1[:, 0]], V[tri_1[:, 2]] - V[tri_1[:, 0]])
    clockwise = np.einsum("ij,ij->i", area, normal[face_1]) < 0.0
    parts, part_faces = [np.where(clockwise[:, None], tri_1[:, [0, 2, 1]], tri_1)], [face_1]
    for f in np.flatnonzero(~single):
        mine = _face_triangles(tri[order[bounds[f]:bounds[f + 1]]], V, normal[f])
        parts.append(mine)
        part_faces.append(np.full(len(mine), f, dtype=np.int64))
    return _Hull(V, normal.copy(), -planes[:, 3], np.concatenate(parts), np.concatenate(part_faces), 3)


def _face_triangles(tri, V, n):
    """Triangles of one merged face, counter-clockwise about its normal n, from its outline.

    qhull fans a merged facet from one vertex, in either order. The outline (the edges in one
    triangle of the face only) is what the neighbouring faces share, so it is kept; it is turned
    counter-clockwise by its signed area and cut into a fan when convex, by ear clipping otherwise
    (rounding can make a merged facet's outline non-convex; qhull's fan then folds over itself).
    Plain Python floats: outlines are short (4 vertices typically) and many."""
    ring = _outline(tri.tolist())
    e1, e2 = _plane_basis(n.tolist())
    xy = [(sum(p * q for p, q in zip(v, e1)), sum(p * q for p, q in zip(v, e2))) for v in V[ring].tolist()]
    m = len(ring)
    if sum(xy[i - 1][0] * xy[i][1] - xy[i][0] * xy[i - 1][1] for i in range(m)) < 0.0:
        ring, xy = ring[::-1], xy[::-1]
    if all(_turn(xy[i - 1], xy[i], xy[(i + 1) % m]) > 0.0 for i in range(m)):
        return np.array([(ring[0], ring[i], ring[i + 1]) for i in range(1, m - 1)], dtype=np.int64)
    return _ear_clip(list(ring), xy)


def _plane_basis(n):
    """Unit e1, e2 (3-lists) with (e1, e2, n) right-handed orthonormal, for a unit 3-list n."""
    k = min(range(3), key=lambda i: abs(n[i]))
    helper = [float(i == k) for i in range(3)]
    e1 = _cross(n, helper)
    length = sum(x * x for x in e1) ** 0.5
    e1 = [x / length for x in e1]
    return e1, _cross(n, e1)


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _outline(tri: list) -> np.ndarray:
    """Vertex ring (in walking order, either direction) of the edges that are in one of the
    triangles (k lists of 3) only: the outline of a triangulated disc."""
    count = {}
    for a, b, c in tri:
        for e in ((a, b), (b, c), (c, a)):
            e = (e[0], e[1]) if e[0] < e[1] else (e[1], e[0])
            count[e] = count.get(e, 0) + 1
    links = {}
    for (a, b), k in count.items():
        if k == 1:
            links.setdefault(a, []).append(b)
            links.setdefault(b, []).append(a)
    if any(len(v) != 2 for v in links.values()):
        raise HullError("qhull returned a merged facet whose outline is not one ring")
    ring = [next(iter(links))]
    prev = None
    while True:
        a, b = links[ring[-1]]
        prev, step = ring[-1], (b if a == prev else a)
        if step == ring[0]:
            break
        ring.append(step)
    if len(ring) != len(links):
        raise HullError("qhull returned a merged facet whose outline is not one ring")
    return np.array(ring, dtype=np.int64)


def _turn(a, b, c) -> float:
    """Cross product (b - a) x (c - a) of 2-D points: > 0 for a left turn a -> b -> c."""
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _ear_clip(ring: list, xy: list):
    """Triangles (m - 2, 3) of a counter-clockwise polygon ring (m vertex indices) with 2-D points
    xy. An ear (a left-turning corner whose triangle holds no other ring point, its boundary
    included) is cut off until one triangle remains; when no corner qualifies (an outline that
    rounding made self-touching), the corner of largest turn goes."""
    out = []
    while len(ring) > 3:
        m = len(ring)
        turns = [_turn(xy[i - 1], xy[i], xy[(i + 1) % m]) for i in range(m)]
        pick = max(range(m), key=turns.__getitem__)
        for i in range(m):
            a, b, c = xy[i - 1], xy[i], xy[(i + 1) % m]
            if turns[i] > 0.0 and not any(
                    _turn(a, b, p) >= 0.0 and _turn(b, c, p) >= 0.0 and _turn(c, a, p) >= 0.0
                    for j, p in enumerate(xy) if j not in ((i - 1) % m, i, (i + 1) % m)):
                pick = i
                break
        out.append((ring[pick - 1], ring[pick], ring[(pick + 1) % m]))
        del ring[pick], xy[pick]
    out.append(tuple(ring))
    return np.array(out, dtype=np.int64)


def _polygon_hull(P: np.ndarray, axes: np.ndarray) -> _Hull:
    """Coplanar cloud: 2-D qhull in the plane of the two principal directions."""
    from scipy.spatial import ConvexHull  # see _hull_of

    e1, e2 = axes[0], axes[1]
    n = np.cross(e1, e2)
    ring = ConvexHull(np.stack([P @ e1, P @ e2], axis=1)).vertices  # counter-clockwise about n
    V = P[ring]
    edge_normal = np.cross(np.roll(V, -1, axis=0) - V, n)
    edge_normal /= np.linalg.norm(edge_normal, axis=1, keepdims=True)
    normal = np.vstack([n, -n, edge_normal])
    m = len(V)
    i = np.arange(2, m)
    top = np.stack([np.zeros(m - 2, np.int64), i - 1, i], axis=1)  # fan from vertex 0, about +n
    bottom = np.stack([np.ones(m - 2, np.int64), (i + 1) % m, i], axis=1)  # from vertex 1, about -n
    faces = np.repeat(np.arange(2, dtype=np.int64), m - 2)
    return _Hull(V, normal, (normal @ V.T).max(axis=1), np.vstack([top, bottom]), faces, 2)


def _segment_hull(P: np.ndarray, axes: np.ndarray) -> _Hull:
    """Collinear cloud: the two extreme points along the principal direction."""
    u = axes[0]
    along = P @ u
    V = P[[int(np.argmin(along)), int(np.argmax(along))]]
    normal = np.vstack([u, -u, axes[1], -axes[1], axes[2], -axes[2]])
    return _Hull(V, normal, (normal @ V.T).max(axis=1), *_NO_TRIANGLES, 1)


def _point_hull(p: np.ndarray) -> _Hull:
    normal = np.vstack([np.eye(3), -np.eye(3)])[[0, 3, 1, 4, 2, 5]]
    return _Hull(p[None].copy(), normal, normal @ p, *_NO_TRIANGLES, 0)


_NO_TRIANGLES = (np.zeros((0, 3), np.int64), np.zeros(0, np.int64))


# ------------------------------------------------------------------------------------------------
# checks


def _check_hull(V, normal, offset, tri, tri_face, dimension, radius) -> str:
    """The first failed check of one hull as a message, '' when it is valid. ``tri`` indexes V,
    ``tri_face`` the planes."""
    tol = HULL_CHECK_RELATIVE * max(radius, float(np.abs(V).max()))
    faces, triangles = {0: (6, 0), 1: (6, 0), 2: (2 + len(V), 2 * (len(V) - 2))}.get(dimension, (None, None))
    if faces is not None and (len(offset), len(tri)) != (faces, triangles):
        return f"{len(offset)} planes and {len(tri)} triangles for dimension {dimension} with {len(V)} vertices"
    if dimension == 3 and (len(V) < 4 or len(tri) < 4):
        return f"a solid hull with {len(V)} vertices and {len(tri)} triangles"
    if np.any(np.abs(np.linalg.norm(normal, axis=1) - 1.0) > 1e-12):
        return "a face normal is not unit"
    gap = normal @ V.T - offset[:, None]  # (F, n): <= 0 inside
    if gap.max() > tol:
        return f"not convex: a vertex lies {gap.max():.3g} m outside a face plane"
    if np.any(gap.max(axis=1) < -tol):
        return "a face plane does not touch the hull"
    if len(tri) == 0:
        return ""
    edges = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [2, 0]]])
    directed = {tuple(e) for e in edges.tolist()}
    if len(directed) != len(edges) or any((b, a) not in directed for a, b in directed):
        return "not closed: an edge is not in exactly two triangles running it in opposite directions"
    if len(np.unique(tri)) != len(V) or len(V) - len(edges) // 2 + len(tri) != 2:
        return "the triangles are not one sphere-like surface over every vertex (Euler characteristic)"
    if np.abs(gap[tri_face[:, None], tri]).max() > tol:
        return "a triangle does not lie in its face plane"
    area = np.cross(V[tri[:, 1]] - V[tri[:, 0]], V[tri[:, 2]] - V[tri[:, 0]])
    along = np.einsum("ij,ij->i", area, normal[tri_face])
    if along.min() < -tol * np.linalg.norm(area, axis=1).max():
        return "not outward: a triangle runs clockwise about its face normal"
    return ""
