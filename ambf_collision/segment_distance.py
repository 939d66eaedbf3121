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


class SegmentPairSolver:
    """Preallocated work buffers and the vectorised closed form for ``P`` capsule pairs."""

    def __init__(self, size: int):
        self.size = n = int(size)
        f3 = lambda: np.empty((3, n))  # noqa: E731
        f1 = lambda: np.empty(n)  # noqa: E731
        self.R, self.U, self.RP, self.T3, self.C1, self.C2, self.W = (f3() for _ in range(7))
        self.b, self.c, self.f, self.be, self.fe, self.uu, self.ru = (f1() for _ in range(7))
        self.s, self.t, self.L, self.invL, self.tmp = (f1() for _ in range(5))
        self.N = f3()

    def _dot(self, x, y, out):
        T = self.T3
        np.multiply(x, y, out=T)
        np.add(T[0], T[1], out=out)
        np.add(out, T[2], out=out)
        return out

    def closest(self, p1, d1, ia, p2, d2, ie):
        """Segment parameters ``s``, ``t`` (P,) and closest points ``C1``, ``C2`` (3, P).

        ``p``/``d`` (3, P): start points and direction vectors (end - start);
        ``ia``/``ie`` (P,): ``1/|d|^2`` for each segment, 0 for zero-length segments.
        Returns views of internal buffers (valid until the next call).
        """
        R, U, RP, T3 = self.R, self.U, self.RP, self.T3
        b, c, f, be, fe, uu, ru, s, t = (self.b, self.c, self.f, self.be, self.fe,
                                         self.uu, self.ru, self.s, self.t)
        np.subtract(p1, p2, out=R)
        self._dot(d1, d2, b)
        self._dot(d1, R, c)
        self._dot(d2, R, f)
        np.multiply(b, ie, out=be)
        np.multiply(f, ie, out=fe)
        # u = d1 - (b/e) d2 ; r_perp = r - (f/e) d2 (both orthogonal to d2)
        np.multiply(d2, be, out=T3)
        np.subtract(d1, T3, out=U)
        np.multiply(d2, fe, out=T3)
        np.subtract(R, T3, out=RP)
        self._dot(U, U, uu)
        self._dot(RP, U, ru)
        np.maximum(uu, _TINY_LEN2, out=uu)
        np.divide(ru, uu, out=s)
        np.negative(s, out=s)
        np.clip(s, 0.0, 1.0, out=s)
        # t = clamp(((p1 + s d1) - p2) . d2 / e)
        np.multiply(b, s, out=t)
        np.add(t, f, out=t)
        np.multiply(t, ie, out=t)
        np.clip(t, 0.0, 1.0, out=t)
        # s = clamp(((p2 + t d2) - p1) . d1 / a)
        np.multiply(b, t, out=s)
        np.subtract(s, c, out=s)
        np.multiply(s, ia, out=s)
        np.clip(s, 0.0, 1.0, out=s)
        C1, C2 = self.C1, self.C2
        np.multiply(d1, s, out=C1)
        np.add(C1, p1, out=C1)
        np.multiply(d2, t, out=C2)
        np.add(C2, p2, out=C2)
        return s, t, C1, C2

    def capsules(self, p1, d1, ia, r1, p2, d2, ie, r2, dist, pt1, pt2, normal, position):
        """Signed distances of P capsule pairs written into the given outputs.

        Inputs as :meth:`closest` plus radii ``r1``, ``r2`` (P,). Outputs: ``dist`` (P,) and
        ``pt1``, ``pt2``, ``normal``, ``position`` (3, P) (may be transposed views of (P, 3)
        arrays). Returns the indices of pairs that used the fallback normal.
        """
        s, t, C1, C2 = self.closest(p1, d1, ia, p2, d2, ie)
        W, L, invL, N = self.W, self.L, self.invL, normal
        np.subtract(C2, C1, out=W)
        self._dot(W, W, L)
        np.sqrt(L, out=L)
        np.subtract(L, r1, out=dist)
        np.subtract(dist, r2, out=dist)
        np.maximum(L, COINCIDENT, out=invL)
        np.divide(1.0, invL, out=invL)
        np.multiply(W, invL, out=N)
        bad = np.flatnonzero(L < COINCIDENT)
        if bad.size:
            N[:, bad] = fallback_normals(d1[:, bad].T, d2[:, bad].T).T
        T3 = self.T3
        np.multiply(N, r1, out=T3)
        np.add(C1, T3, out=pt1)
        np.multiply(N, r2, out=T3)
        np.subtract(C2, T3, out=pt2)
        np.add(pt1, pt2, out=position)
        np.multiply(position, 0.5, out=position)
        return bad


def _soa(a1, b1, a2, b2):
    a1, b1, a2, b2 = (np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in (a1, b1, a2, b2))
    p1 = np.ascontiguousarray(a1.T)
    p2 = np.ascontiguousarray(a2.T)
    d1 = np.ascontiguousarray((b1 - a1).T)
    d2 = np.ascontiguousarray((b2 - a2).T)
    return p1, d1, _inv_len2(d1), p2, d2, _inv_len2(d2)


def _inv_len2(d):
    l2 = np.einsum("ij,ij->j", d, d)
    return np.divide(1.0, l2, out=np.zeros_like(l2), where=l2 > _TINY_LEN2)


def segment_closest_points(a1, b1, a2, b2):
    """Closest points of segments ``a1-b1`` and ``a2-b2`` (each (P, 3) or (3,), m).

    Returns ``s``, ``t`` (P,) and ``c1 = a1 + s (b1 - a1)``, ``c2 = a2 + t (b2 - a2)`` (P, 3).
    """
    p1, d1, ia, p2, d2, ie = _soa(a1, b1, a2, b2)
    solver = SegmentPairSolver(p1.shape[1])
    s, t, C1, C2 = solver.closest(p1, d1, ia, p2, d2, ie)
    return s.copy(), t.copy(), C1.T.copy(), C2.T.copy()


def capsule_distance(a1, b1, r1, a2, b2, r2):
    """Signed distances between capsules ``(a1, b1, r1)`` and ``(a2, b2, r2)`` (points (P, 3)
    or (3,), radii (P,) or scalar; m). Returns ``distance`` (P,), ``point_1``, ``point_2``,
    ``normal`` (shape 1 -> shape 2), ``position`` (P, 3), all fresh arrays."""
    p1, d1, ia, p2, d2, ie = _soa(a1, b1, a2, b2)
    n = p1.shape[1]
    r1 = np.broadcast_to(np.asarray(r1, dtype=np.float64), (n,))
    r2 = np.broadcast_to(np.asarray(r2, dtype=np.float64), (n,))
    solver = SegmentPairSolver(n)
    dist = np.empty(n)
    out = [np.empty((n, 3)) for _ in range(4)]
    solver.capsules(p1, d1, ia, r1, p2, d2, ie, r2, dist, *(o.T for o in out))
    return (dist, *out)
