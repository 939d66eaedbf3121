"""References for the support, GJK and EPA tests (NumPy, independent of the kernels under test).

* :func:`world_of`: shape objects -> the ``World`` arrays the kernels read (CONTRACT.md layout) and
  their ``HullSet``.
* :func:`support_values`: closed-form support functions ``h(u) = max_{x in shape} u . x`` of every
  bounded kind, full shapes (radius included), for many directions at once.
* :func:`reference_signed_distance`: ``-min_{|u|=1} (h_1(u) + h_2(-u))``, the signed distance of
  two convex shapes (distance when apart, minus the minimum translation when they overlap), by
  dense sampling of directions and local refinement around the best ones.
* :func:`polytope_signed_distance`: the same for two polytopes (boxes, hulls, points, segments),
  exactly: qhull of the Minkowski difference ``{a_i - b_j}``, the origin's depth below its
  facets or its distance to its triangles.
"""


import numpy as np
from scipy.optimize import minimize
from scipy.spatial import ConvexHull as Qhull

from ambf_collision.geometry.hulls import HullSet
from ambf_collision.geometry.shapes import (
    BOX,
    CAPSULE,
    CONE,
    CONVEX,
    CYLINDER,
    SPHERE,
)
from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.geometry.world_shapes import World, WorldShapes


def world_of(shapes):
    """(World, HullSet) of shape objects: the package's own layout and NamedTuple (a type
    defined in a test module would enter numba's on-disk cache index of the kernels, which
    other processes could then not load)."""
    w = WorldShapes.from_shapes(shapes)
    return World(*w.arrays()), w.hulls if w.hulls is not None else HullSet.from_clouds([])


def _pose(s):
    return quat_to_matrix(s.orientation), np.asarray(s.position, float)


def support_values(s, U):
    """h(u) (N,) of shape s for directions U (N,3) (any length), radius included."""
    U = np.atleast_2d(np.asarray(U, float))
    length = np.linalg.norm(U, axis=1)
    if s.kind == SPHERE:
        return U @ s.center + s.radius * length
    if s.kind == CAPSULE:
        return np.maximum(U @ s.a, U @ s.b) + s.radius * length
    R, t = _pose(s)
    v = U @ R  # local directions (rows): R^T u
    if s.kind == BOX:
        return U @ t + np.abs(v) @ (0.5 * np.asarray(s.size))
    if s.kind == CONVEX:
        return U @ t + (v @ np.asarray(s.vertices).T).max(axis=1)
    rho = np.hypot(v[:, 0], v[:, 1])
    hh = 0.5 * s.height
    if s.kind == CYLINDER:
        return U @ t + s.radius * rho + hh * np.abs(v[:, 2])
    if s.kind == CONE:
        return U @ t + np.maximum(hh * v[:, 2], s.radius * rho - hh * v[:, 2])
    raise ValueError(f"no support function for kind {s.kind}")


def fibonacci_directions(n):
    """n unit vectors (n,3) spread evenly over the sphere."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    phi = np.pi * (1.0 + 5**0.5) * i
    r = np.sqrt(1.0 - z * z)
    return np.stack([r * np.cos(phi), r * np.sin(phi), z], axis=1)


def _tangent_basis(u):
    e1 = np.cross(u, np.eye(3)[int(np.argmin(np.abs(u)))])
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(u, e1)


def _segment_distance_2d(p, a, b):
    """Distance (m) from the 2-D point p to the segment [a, b]."""
    ab, ap = b - a, p - a
    t = min(max(float(ap @ ab) / float(ab @ ab), 0.0), 1.0)
    return float(np.hypot(*(ap - t * ab)))


def point_signed_distance(s, x):
    """Signed distance (m, < 0 inside) from the world point x to a sphere, box, cylinder or cone,
    by its closed form: the box's, or for the two solids of revolution the distance in the
    (rho, z) half-plane to the profile's surface edges (the segment on the axis is not surface),
    negative inside the profile. None for other kinds."""
    x = np.asarray(x, float)
    if s.kind == SPHERE:
        return float(np.linalg.norm(x - s.center)) - s.radius
    if s.kind not in (BOX, CYLINDER, CONE):
        return None
    R, t = _pose(s)
    q = R.T @ (x - t)
    if s.kind == BOX:
        e = np.abs(q) - 0.5 * np.asarray(s.size, float)
        return float(np.linalg.norm(np.maximum(e, 0.0))) + min(float(e.max()), 0.0)
    p = np.array([np.hypot(q[0], q[1]), q[2]])
    r, hh = s.radius, 0.5 * s.height
    if s.kind == CYLINDER:
        corners = [np.array(c) for c in ((0.0, hh), (r, hh), (r, -hh), (0.0, -hh))]
        inside = p[0] <= r and abs(p[1]) <= hh
    else:  # apex (0, hh), base rim (r, -hh)
        corners = [np.array(c) for c in ((0.0, hh), (r, -hh), (0.0, -hh))]
        inside = p[1] >= -hh and p[0] * 2.0 * hh <= r * (hh - p[1])
    d = min(_segment_distance_2d(p, a, b) for a, b in zip(corners, corners[1:]))
    return -d if inside else d


def reference_signed_distance(s1, s2, samples=20000, starts=8, grid=7, rounds=400, seed=0):
    """(-min_u f(u), u*) with f(u) = h_1(u) + h_2(-u) over unit u: dense sampling, then from the
    ``starts`` best samples a shrinking pattern search in the tangent plane: a grid of directions
    about the current one, its axes turned by a random angle every round (so that a ridge of the
    non-smooth f cannot stall it along fixed axes); the step shrinks by 0.7 when no grid point is
    better, until it is below 1e-12 rad; then Nelder-Mead from there (_polish).

    A sphere against a sphere, box, cylinder or cone has a closed form instead: the point signed
    distance of its centre minus its radius (:func:`point_signed_distance`), returned with the
    direction None. The search above can end 1e-8 to 2e-7 m short of it there (a sphere near a
    cone's centre)."""
    for a, b in ((s1, s2), (s2, s1)):
        if a.kind == SPHERE:
            d = point_signed_distance(b, a.center)
            if d is not None:
                return d - a.radius, None

    def f(U):
        return support_values(s1, U) + support_values(s2, -U)

    rng = np.random.default_rng(seed)
    U = fibonacci_directions(samples)
    values = f(U)
    best_value, best_u = np.inf, None
    g = np.linspace(-1.0, 1.0, grid)
    gx, gy = (m.ravel() for m in np.meshgrid(g, g))
    for u in U[np.argsort(values)[:starts]]:
        step, value = 0.05, float(f(u[None])[0])
        for _ in range(rounds):
            e1, e2 = _tangent_basis(u)
            turn = rng.uniform(0.0, np.pi)
            e1, e2 = np.cos(turn) * e1 + np.sin(turn) * e2, -np.sin(turn) * e1 + np.cos(turn) * e2
            cand = u + step * (gx[:, None] * e1 + gy[:, None] * e2)
            cand /= np.linalg.norm(cand, axis=1, keepdims=True)
            cv = f(cand)
            j = int(np.argmin(cv))
            if cv[j] < value:
                u, value = cand[j], float(cv[j])
            else:
                step *= 0.7
                if step < 1e-12:
                    break
        u, value = _polish(f, u, value)
        if value < best_value:
            best_value, best_u = value, u
    return -best_value, best_u


def _polish(f, u, value):
    """Nelder-Mead in the tangent plane at u, from a 1e-4 rad simplex: it follows the narrow
    valleys (a ridge of f along which f still decreases) where the pattern search stalls."""
    e1, e2 = _tangent_basis(u)

    def g(x):
        v = u + x[0] * e1 + x[1] * e2
        return float(f((v / np.linalg.norm(v))[None])[0])

    r = minimize(g, [0.0, 0.0], method="Nelder-Mead",
                 options={"xatol": 1e-14, "fatol": 1e-17, "maxiter": 4000,
                          "initial_simplex": [[0, 0], [1e-4, 0], [0, 1e-4]]})
    if r.fun < value:
        v = u + r.x[0] * e1 + r.x[1] * e2
        return v / np.linalg.norm(v), float(r.fun)
    return u, value


def vertices_of(s):
    """World vertices (n,3) of a polytope shape (box, hull; a capsule of radius 0: its two ends)."""
    if s.kind == CAPSULE and s.radius == 0.0:
        return np.array([s.a, s.b])
    if s.kind == SPHERE and s.radius == 0.0:
        return np.array([s.center])
    R, t = _pose(s)
    if s.kind == BOX:
        h = 0.5 * np.asarray(s.size)
        local = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * h
    elif s.kind == CONVEX:
        local = np.asarray(s.vertices)
    else:
        raise ValueError(f"kind {s.kind} is not a polytope")
    return local @ R.T + t


def polytope_signed_distance(s1, s2):
    """Exact signed distance of two polytopes: Minkowski difference M = {a - b} by qhull; origin
    inside: minus its smallest depth below a facet; outside: its distance to M's triangles.
    Needs a full-dimensional M (use for shapes with volume, or pairs that span 3-D)."""
    A, B = vertices_of(s1), vertices_of(s2)
    M = (A[:, None, :] - B[None, :, :]).reshape(-1, 3)
    q = Qhull(M)
    e = q.equations[:, 3]  # n . x + e <= 0 inside: at the origin e
    if np.all(e <= 0.0):
        return float(e.max())  # minus the smallest depth
    T = M[q.simplices]
    return float(np.sqrt(_origin_triangle_d2(T[:, 0], T[:, 1], T[:, 2]).min()))


def _origin_triangle_d2(A, B, C):
    """Squared distances (T,) from the origin to triangles A, B, C (T,3): the smaller of the
    interior projection (when inside) and the three edges."""
    def seg(P, Q):
        d = Q - P
        t = np.clip(-np.einsum("ij,ij->i", P, d) / np.maximum(np.einsum("ij,ij->i", d, d), 1e-300), 0, 1)
        x = P + t[:, None] * d
        return np.einsum("ij,ij->i", x, x)

    best = np.minimum(np.minimum(seg(A, B), seg(B, C)), seg(C, A))
    n = np.cross(B - A, C - A)
    nn = np.einsum("ij,ij->i", n, n)
    h = np.einsum("ij,ij->i", A, n)
    x = (h / np.maximum(nn, 1e-300))[:, None] * n  # the origin projected on the plane
    inside = ((np.einsum("ij,ij->i", np.cross(B - x, C - x), n) >= 0)
              & (np.einsum("ij,ij->i", np.cross(C - x, A - x), n) >= 0)
              & (np.einsum("ij,ij->i", np.cross(A - x, B - x), n) >= 0) & (nn > 0))
    return np.where(inside, np.minimum(best, h * h / np.maximum(nn, 1e-300)), best)
