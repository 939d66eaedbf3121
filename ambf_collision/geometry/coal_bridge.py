"""coal (optional) as the test and bench oracle: shapes to coal geometries, coal's signed distance.

The package computes every distance itself (``geometry/gjk.py`` and the pair kernels); nothing in
it imports this module at run time, and coal is not a runtime dependency. Tests and benchmarks use
it to compare with coal, with tight tolerances (GJK_TOLERANCE, EPA_TOLERANCE below).

``solid_pair_distance(s1, s2)`` returns ``(distance, point_1, point_2, normal)``: signed distance in
metres (negative = penetration depth), witness points on s1 and s2 (world), unit normal from s1 to
s2, with coal's semantics. A ``ConvexHull`` becomes a ``coal.Convex`` of the package's own qhull
hull (``geometry/hulls.py``); a ``Plane`` a ``coal.Halfspace``. Two planes raise ``ValueError``.
Shapes are the dataclasses of ``ambf_collision.geometry.shapes`` (dispatched on their ``kind``
code); ``coal`` is imported on first use.

coal's EPA does not always converge for curved solids at these tolerances (issue 11): compare
depths with care (the tests check coal's answer against the support function first).
"""

from __future__ import annotations

import numpy as np

from ambf_collision.geometry.shapes import (
    BOX,
    CAPSULE,
    CONE,
    CONVEX,
    CYLINDER,
    MESH,
    PLANE,
    SPHERE,
)
from ambf_collision.geometry.transforms import quat_to_matrix

#: GJK/EPA tolerances used for every coal query made here (metres).
GJK_TOLERANCE = 1e-10
EPA_TOLERANCE = 1e-10

__all__ = [
    "EPA_TOLERANCE",
    "GJK_TOLERANCE",
    "coal_distance",
    "coal_geometry",
    "coal_mesh",
    "distance_request",
    "solid_pair_distance",
    "to_coal",
]

_coal = None


def _get_coal():
    global _coal
    if _coal is None:
        try:
            import coal
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError("coal_bridge needs the 'coal' package (pip install coal) for solid-solid pairs") from exc
        _coal = coal
    return _coal


_NAMES = {SPHERE: "Sphere", CAPSULE: "Capsule", BOX: "Box", CYLINDER: "Cylinder", CONE: "Cone", PLANE: "Plane",
          CONVEX: "ConvexHull", MESH: "Mesh"}


def _kind(shape):
    """Class-like name of a shape from its ``kind`` code (Cone subclasses Cylinder, so not isinstance)."""
    try:
        return _NAMES[shape.kind]
    except (AttributeError, KeyError):
        raise ValueError(f"coal_bridge: not a shape of ambf_collision.geometry.shapes: {shape!r}") from None


def _pose(shape):
    """(R (3,3), t (3,)) world-from-local of a posed shape."""
    R = quat_to_matrix(np.asarray(getattr(shape, "orientation", (0.0, 0.0, 0.0, 1.0)), dtype=float))
    t = np.asarray(getattr(shape, "position", (0.0, 0.0, 0.0)), dtype=float)
    return R, t


def _capsule_frame(a, b):
    """Rotation taking local z to the direction a->b (identity when a == b)."""
    u = b - a
    L = float(np.linalg.norm(u))
    if L == 0.0:
        return np.eye(3), L
    z = u / L
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.stack([x, y, z], axis=1), L


def to_coal(shape):
    """Shape (from shapes.py) -> (coal geometry, coal.Transform3s) in world coordinates."""
    coal = _get_coal()
    k = _kind(shape)
    if k == "Sphere":
        return coal.Sphere(float(shape.radius)), coal.Transform3s(np.eye(3), np.asarray(shape.center, dtype=float))
    if k == "Capsule":
        a = np.asarray(shape.a, dtype=float)
        b = np.asarray(shape.b, dtype=float)
        R, L = _capsule_frame(a, b)
        return coal.Capsule(float(shape.radius), L), coal.Transform3s(R, 0.5 * (a + b))
    if k == "Plane":
        n = np.asarray(shape.normal, dtype=float)
        return coal.Halfspace(n, float(shape.offset)), coal.Transform3s()
    R, t = _pose(shape)
    tf = coal.Transform3s(R, t)
    if k == "Box":
        sx, sy, sz = (float(v) for v in shape.size)
        return coal.Box(sx, sy, sz), tf
    if k == "Cylinder":
        return coal.Cylinder(float(shape.radius), float(shape.height)), tf
    if k == "Cone":
        return coal.Cone(float(shape.radius), float(shape.height)), tf
    if k == "ConvexHull":
        return _coal_convex(np.asarray(shape.vertices, dtype=float)), tf
    if k == "Mesh":   # coal's BVHModel: exact distances when apart (the oracle of mesh pairs)
        return coal_mesh(shape.mesh.vertices, shape.mesh.faces), tf
    raise ValueError(f"to_coal: unsupported shape type {k!r}")


def _coal_convex(cloud):
    """coal.Convex of the qhull hull of a point cloud (M,3) (HullSet: the package's own hull; a
    flat cloud gives its two-sided polygon, a segment or point its vertices without triangles)."""
    from ambf_collision.geometry.hulls import HullSet

    coal = _get_coal()
    hulls = HullSet.from_clouds([cloud])
    pts = coal.StdVec_Vec3s()
    for v in hulls.hull_vertices(0):
        pts.append(v)
    tris = coal.StdVec_Triangle()
    for i, j, m in hulls.hull_triangles(0).tolist():
        tris.append(coal.Triangle(i, j, m))
    return coal.Convex(pts, tris)


def coal_geometry(kind, half, hull=None):
    """coal geometry of a solid in its own local frame (no pose): ``kind`` BOX / CYLINDER / CONE /
    CONVEX, ``half`` (3,) box half extents or cylinder/cone ``(r, r, height/2)`` (metres), ``hull``
    local vertices (M,3) for CONVEX. Same geometry as :func:`to_coal` builds for the posed shape."""
    coal = _get_coal()
    half = np.asarray(half, dtype=float)
    if kind == BOX:
        return coal.Box(*(2.0 * float(v) for v in half))
    if kind == CYLINDER:
        return coal.Cylinder(float(half[0]), 2.0 * float(half[2]))
    if kind == CONE:
        return coal.Cone(float(half[0]), 2.0 * float(half[2]))
    if kind == CONVEX:
        from ambf_collision.geometry.shapes import ConvexHull
        return to_coal(ConvexHull(np.asarray(hull, dtype=float)))[0]
    raise ValueError(f"coal_geometry: unsupported kind {kind!r} (box, cylinder, cone or convex only)")


def distance_request():
    """A coal ``DistanceRequest`` with the signed distance and the tight tolerances used here
    (reusable: coal does not modify it)."""
    coal = _get_coal()
    req = coal.DistanceRequest()
    req.enable_signed_distance = True
    req.gjk_tolerance = GJK_TOLERANCE
    req.epa_tolerance = EPA_TOLERANCE
    req.gjk_max_iterations = 1000
    req.epa_max_iterations = 1000
    return req


def coal_distance(g1, tf1, g2, tf2, req=None, res=None):
    """coal signed distance between two coal geometries with tight tolerances.

    ``req`` (from :func:`distance_request`) and ``res`` (a ``coal.DistanceResult``, cleared here)
    may be passed to reuse them across calls; results are the same as with fresh ones.
    Returns ``(distance, p1, p2, normal)``; the normal (s1 -> s2) falls back to ``(p2 - p1)/|p2 - p1|``
    and then to +z when coal gives none (exact touching).
    """
    coal = _get_coal()
    if req is None:
        req = distance_request()
    if res is None:
        res = coal.DistanceResult()
    else:
        res.clear()
    d = float(coal.distance(g1, tf1, g2, tf2, req, res))
    p1 = np.array(res.getNearestPoint1(), dtype=float)
    p2 = np.array(res.getNearestPoint2(), dtype=float)
    n = np.array(res.normal, dtype=float)
    ln = np.linalg.norm(n) if np.all(np.isfinite(n)) else 0.0
    if ln > 0.0:
        n = n / ln
    else:
        diff = p2 - p1
        ld = np.linalg.norm(diff)
        n = diff / ld if ld > 0.0 else np.array([0.0, 0.0, 1.0])
        if d < 0.0:
            n = -n
    return d, p1, p2, n


def solid_pair_distance(s1, s2):
    """Two shapes (world coordinates) -> ``(distance, point_1, point_2, normal)`` computed by coal
    (half-spaces included: coal's half-space pairs are closed form). Two planes raise
    ``ValueError``."""
    if _kind(s1) == "Plane" and _kind(s2) == "Plane":
        raise ValueError("solid_pair_distance: two planes (half-spaces) have no finite distance")
    g1, tf1 = to_coal(s1)
    g2, tf2 = to_coal(s2)
    return coal_distance(g1, tf1, g2, tf2)


def coal_mesh(V, F):
    """coal ``BVHModelOBBRSS`` of the triangles ``F`` (M, 3) of vertices ``V`` (N, 3) (m, the
    mesh frame): coal's exact mesh distance when apart, the oracle of the mesh queries."""
    coal = _get_coal()
    model = coal.BVHModelOBBRSS()
    model.beginModel(len(F), len(V))
    model.addVertices(np.ascontiguousarray(V, dtype=np.float64))
    model.addTriangles(np.ascontiguousarray(F, dtype=np.int64))
    model.endModel()
    return model
