"""Closed-form distances between spheres and capsules (closest points of two segments), batched.

A capsule is segment ``p + s d`` (``s`` in [0, 1], metres) swept by a radius; a sphere is a
zero-length capsule. For each pair the closest points ``c1``, ``c2`` of the two segments are
found by clamped minimisation of ``|c2 - c1|^2`` over the unit square (Ericson's scheme):

1. ``s`` = line-line optimum, written as the projection of ``r = p1 - p2`` and ``d1`` onto the
   plane orthogonal to ``d2`` (``u = d1 - (d1.d2/|d2|^2) d2``, ``s = -(r_perp.u)/(u.u)``), which
   keeps nearly parallel segments accurate; parallel segments (``u = 0``) take ``s = 0``;
2. ``t`` = projection of ``c1`` onto segment 2, clamped to [0, 1];
3. ``s`` = projection of ``c2`` onto segment 1, clamped to [0, 1].

Then ``distance = |c2 - c1| - r1 - r2`` (signed: negative = penetration depth), normal
``n = (c2 - c1)/|c2 - c1|`` (from shape 1 to shape 2), witness points ``c1 + r1 n`` and
``c2 - r2 n``, position their midpoint.

Fallback normal when ``|c2 - c1| < COINCIDENT`` (crossing axes, coincident centres), in order:
the unit vector along ``d1 x d2`` when the segments are not parallel; else a unit vector
perpendicular to ``d1`` (``unit(d1 x e_k)``, ``e_k`` the axis of the smallest ``|d1_k|``, first
on ties) when segment 1 has a length; else minus the same construction for ``d2``; else ``+z``.
The first two cases flip sign when the shapes are swapped; the result is deterministic and
never NaN.

All work arrays are allocated once per batch size in :class:`SegmentPairSolver` and reused.
Coordinates inside the solver are structure-of-arrays: ``(3, P)`` (rows x, y, z).
"""

from __future__ import annotations

import numpy as np

__all__ = ["COINCIDENT", "SegmentPairSolver", "capsule_distance", "segment_closest_points",
           "fallback_normals", "perpendicular_unit"]

COINCIDENT = 1e-12
"""Closest points nearer than this (m) are treated as coincident: the fallback normal is used."""

_TINY_LEN2 = 1e-200  # squared segment lengths below this (m^2) are zero-length segments


def perpendicular_unit(d: np.ndarray) -> np.ndarray:
    """Unit vectors (K, 3) perpendicular to the rows of ``d`` (K, 3): ``unit(d x e_k)`` with
    ``e_k`` the coordinate axis of the smallest ``|d_k|`` (first on ties). ``d = 0`` gives +x
    (``0 x e_k`` is undefined; callers handle zero rows themselves)."""
    d = np.asarray(d, dtype=float)
    k = np.argmin(np.abs(d), axis=1)
    e = np.zeros_like(d)
    e[np.arange(len(d)), k] = 1.0
    p = np.cross(d, e)
    n = np.linalg.norm(p, axis=1, keepdims=True)
    out = np.zeros_like(d)
    out[:, 0] = 1.0
    ok = n[:, 0] > 0.0
    out[ok] = p[ok] / n[ok]
    return out


def fallback_normals(d1: np.ndarray, d2: np.ndarray) -> np.ndarray:
    """The documented fallback normals (K, 3) for segment directions ``d1``, ``d2`` (K, 3)
    (see the module docstring)."""
    d1 = np.asarray(d1, dtype=float)
    d2 = np.asarray(d2, dtype=float)
    l1 = np.linalg.norm(d1, axis=1)
    l2 = np.linalg.norm(d2, axis=1)
    cr = np.cross(d1, d2)
    lc = np.linalg.norm(cr, axis=1)
    out = np.zeros_like(d1)
    out[:, 2] = 1.0
    has1 = l1 * l1 > _TINY_LEN2
    has2 = l2 * l2 > _TINY_LEN2
    if np.any(has2):
        out[has2] = -perpendicular_unit(d2[has2])
    if np.any(has1):
        out[has1] = perpendicular_unit(d1[has1])
    crossing = has1 & has2 & (lc > 1e-12 * l1 * l2)
    if np.any(crossing):
        out[crossing] = cr[crossing] / lc[crossing, None]
    return out


_um = np._core.umath if hasattr(np, "_core") else np.core.umath
_mul, _add, _sub, _div = _um.multiply, _um.add, _um.subtract, _um.divide
_max, _clip, _sqrt, _gt = _um.maximum, _um.clip, _um.sqrt, _um.greater
_min_reduce = _um.minimum.reduce
_take = np.take
_ZERO, _ONE, _NEG_ONE, _HALF = (np.array(v) for v in (0.0, 1.0, -1.0, 0.5))
_TINY_A, _COINCIDENT_A = np.array(_TINY_LEN2), np.array(COINCIDENT)


class SegmentPairSolver:
    """Preallocated work buffers and the vectorised closed form for ``P`` capsule pairs.

    Inputs live in the solver's own buffers (structure-of-arrays, metres): ``A (3, 2, P)`` the
    segment start points of shape 1 (``A[:, 0]``) and shape 2 (``A[:, 1]``), ``B (3, 2, P)``
    their end points and ``radius (2, P)``. Fill them with :meth:`gather` (from world arrays
    with precomputed indices) or by assignment, then call :meth:`closest` or :meth:`capsules`.
    Every step acts on stacked buffers so that one NumPy call does the work of both shapes or
    of several dot products: about 45 ufunc calls per batch, whatever ``P``.
    """

    def __init__(self, size: int):
        self.size = n = int(size)
        e = np.empty
        self.A, self.B = e((3, 2, n)), e((3, 2, n))
        self.radius = e((2, n))
        V = e((3, 3, n))           # d1, d2, r = p1 - p2
        X = e((3, 5, n))           # coordinate products of a, e, b, f, c
        G = e((5, n))              # a = d1.d1, e = d2.d2, b = d1.d2, f = d2.r, c = d1.r
        M = e((2, n), dtype=bool)
        Q, INV, BF, H, ST = e((2, n)), e((2, n)), e((2, n)), e((2, n)), e((2, n))
        T, URP, Y, C = e((3, 2, n)), e((3, 2, n)), e((3, 2, n)), e((3, 2, n))
        W, W2, L, IL = e((3, n)), e((3, n)), e(n), e(n)
        self.C, self.ST, self.W, self.L = C, ST, W, L
        self._closest_views = (
            self.A, self.B, V[:, 0:2], V[:, 2], self.A[:, 0], self.A[:, 1], X[:, 0:2],
            V[:, 1:2], V[:, 0:3:2], X[:, 2:4], V[:, 0], X[:, 4], X[0], X[1], X[2], G,
            G[0:2], M, Q, INV, INV[0], INV[1], G[2:4], BF, T, URP, URP[:, 0:1], Y, Y[0], Y[1],
            Y[2], H, H[0], H[1], ST, ST[0], ST[1], G[2], G[3], G[4], C)
        self._capsule_views = (C[:, 0], C[:, 1], W, W2, W2[0], W2[1], W2[2], L, IL,
                               self.radius[0], self.radius[1], self.radius, T, T[:, 0], T[:, 1])

    def gather(self, a_flat, b_flat, radius, index3, index):
        """Fill ``A``, ``B`` and ``radius`` from world arrays: ``a_flat``/``b_flat`` the
        raveled (N, 3) end points, ``radius (N,)``; ``index3 (3, 2, P)`` = ``3 * index + xyz``
        and ``index (2, P)`` the shape indices of shapes 1 and 2."""
        _take(a_flat, index3, out=self.A)
        _take(b_flat, index3, out=self.B)
        _take(radius, index, out=self.radius)

    def closest(self):
        """Segment parameters ``s``, ``t`` (``ST (2, P)``) and closest points ``C1``, ``C2``
        (``C (3, 2, P)``) for the loaded segments; views of internal buffers."""
        (A, B, D, R, A0, A1, X01, d2, d1r, X23, d1, X4, X0, X1, X2, G, ae, M, Q, INV, ia, ie,
         bf, BF, T, URP, U, Y, Y0, Y1, Y2, H, uu, ru, ST, s, t, b, f, c, C) = self._closest_views
        mul, add, sub = _mul, _add, _sub
        sub(B, A, out=D)                       # d1, d2
        sub(A0, A1, out=R)                     # r = p1 - p2
        mul(D, D, out=X01)                     # a, e
        mul(d2, d1r, out=X23)                  # b = d2.d1, f = d2.r
        mul(d1, R, out=X4)                     # c = d1.r
        add(X0, X1, out=G)
        add(G, X2, out=G)
        # 1/|d|^2, 0 for zero-length segments
        _gt(ae, _TINY_A, out=M)
        _max(ae, _TINY_A, out=Q)
        _div(M, Q, out=INV)
        # u = d1 - (b/e) d2 ; r_perp = r - (f/e) d2 (both orthogonal to d2)
        mul(bf, ie, out=BF)
        mul(d2, BF, out=T)
        sub(d1r, T, out=URP)
        mul(URP, U, out=Y)                     # u.u, r_perp.u
        add(Y0, Y1, out=H)
        add(H, Y2, out=H)
        _max(uu, _TINY_A, out=uu)
        _div(ru, uu, out=s)
        _clip(s, _NEG_ONE, _ZERO, out=s)        # s holds -s (the line-line optimum, negated)
        # t = clamp(((p1 + s d1) - p2) . d2 / e)
        mul(b, s, out=t)
        sub(f, t, out=t)
        mul(t, ie, out=t)
        _clip(t, _ZERO, _ONE, out=t)
        # s = clamp(((p2 + t d2) - p1) . d1 / a)
        mul(b, t, out=s)
        sub(s, c, out=s)
        mul(s, ia, out=s)
        _clip(s, _ZERO, _ONE, out=s)
        mul(D, ST, out=C)                       # C1 = p1 + s d1, C2 = p2 + t d2
        add(C, A, out=C)
        return ST, C

    def capsules(self, dist, pt1, pt2, normal, position):
        """Signed distances of the loaded capsule pairs written into the given outputs:
        ``dist`` (P,) and ``pt1``, ``pt2``, ``normal``, ``position`` (3, P) (may be transposed
        views of (P, 3) arrays). Returns the indices of pairs that used the fallback normal."""
        self.closest()
        (C1, C2, W, W2, W20, W21, W22, L, IL, r1, r2, r12, T, T0, T1) = self._capsule_views
        mul, add, sub = _mul, _add, _sub
        sub(C2, C1, out=W)
        mul(W, W, out=W2)
        add(W20, W21, out=L)
        add(L, W22, out=L)
        _sqrt(L, out=L)
        sub(L, r1, out=dist)
        sub(dist, r2, out=dist)
        _max(L, _COINCIDENT_A, out=IL)
        _div(_ONE, IL, out=IL)
        mul(W, IL, out=normal)
        if self.size and _min_reduce(L) < COINCIDENT:
            bad = np.flatnonzero(L < COINCIDENT)
            D = self._closest_views[2]
            normal[:, bad] = fallback_normals(D[:, 0, bad].T, D[:, 1, bad].T).T
        else:
            bad = _NO_BAD
        mul(normal[:, None], r12, out=T)
        add(C1, T0, out=pt1)
        sub(C2, T1, out=pt2)
        add(pt1, pt2, out=position)
        mul(position, _HALF, out=position)
        return bad


_NO_BAD = np.zeros(0, dtype=np.intp)


def _load(solver, a1, b1, a2, b2, r1=0.0, r2=0.0):
    A, B, R = solver.A, solver.B, solver.radius
    A[:, 0] = a1.T
    A[:, 1] = a2.T
    B[:, 0] = b1.T
    B[:, 1] = b2.T
    R[0] = r1
    R[1] = r2


def _as_points(*xs):
    xs = [np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in xs]
    n = max(len(x) for x in xs)
    return n, [np.broadcast_to(x, (n, 3)) for x in xs]


def segment_closest_points(a1, b1, a2, b2):
    """Closest points of segments ``a1-b1`` and ``a2-b2`` (each (P, 3) or (3,), m).

    Returns ``s``, ``t`` (P,) and ``c1 = a1 + s (b1 - a1)``, ``c2 = a2 + t (b2 - a2)`` (P, 3).
    """
    n, (a1, b1, a2, b2) = _as_points(a1, b1, a2, b2)
    solver = SegmentPairSolver(n)
    _load(solver, a1, b1, a2, b2)
    ST, C = solver.closest()
    return ST[0].copy(), ST[1].copy(), C[:, 0].T.copy(), C[:, 1].T.copy()


def capsule_distance(a1, b1, r1, a2, b2, r2):
    """Signed distances between capsules ``(a1, b1, r1)`` and ``(a2, b2, r2)`` (points (P, 3)
    or (3,), radii (P,) or scalar; m). Returns ``distance`` (P,), ``point_1``, ``point_2``,
    ``normal`` (shape 1 -> shape 2), ``position`` (P, 3), all fresh arrays."""
    n, (a1, b1, a2, b2) = _as_points(a1, b1, a2, b2)
    solver = SegmentPairSolver(n)
    _load(solver, a1, b1, a2, b2, r1, r2)
    dist = np.empty(n)
    out = [np.empty((n, 3)) for _ in range(4)]
    solver.capsules(dist, *(o.T for o in out))
    return (dist, *out)
