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

Near-coincident closest points (``|c2 - c1| < REFINE``) make ``c2 - c1`` a poor direction (its
rounding error is ~1e-16 m against a length of ~1e-12 m), so there the normal is re-derived from
the segment directions, which are exact: ``sign(w . c) c/|c|`` with ``c = d1 x d2`` when both
closest points are interior to non-parallel segments, else ``w`` with its components along
the direction(s) of the segment(s) whose closest point is interior removed.

All work arrays are allocated once per batch size in :class:`SegmentPairSolver` and reused.
Coordinates inside the solver are structure-of-arrays: ``(3, P)`` (rows x, y, z).
"""

from __future__ import annotations

import numpy as np

__all__ = ["COINCIDENT", "SegmentPairSolver", "capsule_distance", "segment_closest_points",
           "fallback_normals", "refined_normals", "perpendicular_unit", "point_segment_normal"]

COINCIDENT = 1e-12
"""Closest points nearer than this (m) are treated as coincident: the fallback normal is used."""

REFINE = 1e-6
"""Closest points nearer than this (m): the normal is re-derived from the segment directions."""

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


def point_segment_normal(p, a, b, normal=None):
    """Points ``p`` (K,3) against segments ``a``-``b`` (K,3), metres: the distance ``L`` (K,)
    to each segment, its closest point ``C`` (K,3) and the unit normal (K,3) from ``C`` to ``p``
    (written into ``normal`` when given). A point on its segment (``L < COINCIDENT``) gets
    :func:`perpendicular_unit` of the segment direction, +z for a zero-length segment."""
    d = b - a
    l2 = np.einsum("ij,ij->i", d, d)
    inv = np.divide(1.0, l2, out=np.zeros_like(l2), where=l2 > _TINY_LEN2)
    t = np.clip(np.einsum("ij,ij->i", p - a, d) * inv, 0.0, 1.0)
    c = a + t[:, None] * d
    w = p - c
    L = np.sqrt(np.einsum("ij,ij->i", w, w))
    n = np.divide(w, np.maximum(L, COINCIDENT)[:, None], out=normal)
    bad = np.flatnonzero(L < COINCIDENT)
    if bad.size:
        fb = np.zeros((bad.size, 3))
        fb[:, 2] = 1.0
        has = l2[bad] > _TINY_LEN2
        if np.any(has):
            fb[has] = perpendicular_unit(d[bad][has])
        n[bad] = fb
    return L, c, n


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


def refined_normals(w, L, d1, d2, s, t):
    """Normals (K, 3) for near-coincident closest points (``L = |w| < REFINE``, ``w = c2 - c1``;
    directions ``d1``, ``d2``; segment parameters ``s``, ``t``), see the module docstring."""
    w = np.asarray(w, dtype=float)
    n = w.copy()
    in1 = (s > 0.0) & (s < 1.0)
    in2 = (t > 0.0) & (t < 1.0)
    for inside, d in ((in1, d1), (in2, d2)):  # remove the components along interior directions
        dd = np.einsum("ki,ki->k", d, d)
        use = inside & (dd > _TINY_LEN2)
        k = np.einsum("ki,ki->k", n, d) / np.where(use, dd, 1.0)
        n -= np.where(use, k, 0.0)[:, None] * d
    c = np.cross(d1, d2)
    cc = np.einsum("ki,ki->k", c, c)
    dd1 = np.einsum("ki,ki->k", d1, d1)
    dd2 = np.einsum("ki,ki->k", d2, d2)
    wc = np.einsum("ki,ki->k", w, c)
    both = in1 & in2 & (cc > 1e-24 * dd1 * dd2) & (wc != 0.0)
    n = np.where(both[:, None], np.sign(wc)[:, None] * c, n)
    ln = np.linalg.norm(n, axis=1)
    ok = (ln > 0.0) & (L >= COINCIDENT)
    out = fallback_normals(d1, d2)
    out[ok] = n[ok] / ln[ok, None]
    return out


_np_core = np._core if hasattr(getattr(np, "_core", None), "umath") else np.core
_um = _np_core.umath
_mul, _add, _sub, _div = _um.multiply, _um.add, _um.subtract, _um.divide
_max, _clip, _sqrt = _um.maximum, _um.clip, _um.sqrt
_less = _um.less
_count_nonzero = _np_core.multiarray.count_nonzero  # without the Python wrapper's axis handling
_ZERO, _ONE, _NEG_ONE, _HALF = (np.array(v) for v in (0.0, 1.0, -1.0, 0.5))
_TINY_A, _COINCIDENT_A, _REFINE_A = np.array(_TINY_LEN2), np.array(COINCIDENT), np.array(REFINE)
_NO_BAD = np.zeros(0, dtype=np.intp)

SMALL_BATCH = 48
"""Batches of at most this many pairs use the small-batch layout (fewer, contiguous NumPy
calls at the price of gathering each input up to six times); larger ones the compact layout."""

# Small-batch gather pattern: for each block (end point b / start point a, left / right factor)
# the 6 vectors whose differences give L6 = [d1, d2, d2, d2, d2, d1] and
# R6 = [d1, d2, d2, d1, r, r] (d = b - a, r = a1 - a2): one product L6 * R6 and two sums give
# all dot products a = d1.d1, e, e = d2.d2, b = d2.d1, f = d2.r, c = d1.r at once.
# Entries: (source: 0 = a, 1 = b, segment: 0 = shape 1, 1 = shape 2).
_SMALL_PATTERN = (
    (((1, 0), (1, 1), (1, 1), (1, 1), (1, 1), (1, 0)),     # B left
     ((1, 0), (1, 1), (1, 1), (1, 0), (0, 0), (0, 0))),    # B right
    (((0, 0), (0, 1), (0, 1), (0, 1), (0, 1), (0, 0)),     # A left
     ((0, 0), (0, 1), (0, 1), (0, 0), (0, 1), (0, 1))),    # A right
)


class SegmentPairSolver:
    """Preallocated work buffers and the vectorised closed form for ``P`` capsule pairs.

    The inputs are gathered in one ``np.take`` from a packed flat array of ``N`` shapes
    (metres): ``[a (N,3) raveled, b (N,3) raveled, radius (N,)]`` (the layout of
    :attr:`ambf_collision.batch.WorldShapes.abr`), at indices fixed once by :meth:`set_pairs`.
    Then :meth:`closest` or :meth:`capsules`. Every step works on stacked buffers so that one
    NumPy call serves both shapes or several dot products. Small batches (``P <=
    SMALL_BATCH``) use a layout in which nearly every call has contiguous operands of one
    shape (NumPy's fast path, ~0.25 us per call instead of ~0.6 us); both layouts perform the
    same floating-point operations in the same order, so their results are bitwise equal.
    """

    def __init__(self, size: int, small: bool | None = None):
        self.size = n = int(size)
        self.small = small = (n <= SMALL_BATCH) if small is None else bool(small)
        e = np.empty
        if small:
            IN = e(80 * n)
            GG = IN[:72 * n].reshape(2, 2, 3, 6, n)
            A12 = IN[72 * n:78 * n].reshape(2, 3, n)          # a1, a2 (vector-major)
            radius = IN[78 * n:].reshape(2, n)
            LR, X, G = e((2, 3, 6, n)), e((3, 6, n)), e((6, n))
            L6, R6 = LR
            D, d1, d2, d1r = L6[:, 0:2], L6[:, 0], L6[:, 1], R6[:, 3:5]
            Q, INV = e((3, n)), e((3, n))
            ae, bf, ie_ie, b, f, c = G[0:3], G[3:5], INV[1:3], G[3], G[4], G[5]
            C = e((2, 3, n))                                  # vector-major: C1, C2
            CT = C.transpose(1, 0, 2)
            self._small_views = (GG[0], GG[1], LR, L6, R6, X, X[0], X[1], X[2], G)
        else:
            IN = e(14 * n)
            A = IN[:6 * n].reshape(3, 2, n)
            B = IN[6 * n:12 * n].reshape(3, 2, n)
            radius = IN[12 * n:].reshape(2, n)
            V, X, G = e((3, 3, n)), e((3, 5, n)), e((5, n))
            D, d1, d2, R, d1r = V[:, 0:2], V[:, 0], V[:, 1], V[:, 2], V[:, 0:3:2]
            Q, INV = e((2, n)), e((2, n))
            ae, bf, b, f, c = G[0:2], G[2:4], G[2], G[3], G[4]
            C = e((3, 2, n))                                  # coordinate-major: C1, C2
            CT = C
            A12 = A
            self._large_views = (A, B, D, R, A[:, 0], A[:, 1], X[:, 0:2], d2[:, None],
                                 d1r, X[:, 2:4], d1, X[:, 4], X[0], X[1], X[2], G)
        self.IN, self.radius, self._D = IN, radius, D
        BF, H, ST = e((2, n)), e((2, n)), e((2, n))
        T, URP, Y = e((3, 2, n)), e((3, 2, n)), e((3, 2, n))
        W, W2, L, IL, T2 = e((3, n)), e((3, n)), e(n), e(n), e((2, 3, n))
        C1, C2 = (C[0], C[1]) if small else (C[:, 0], C[:, 1])
        self.C1, self.C2, self.ST = C1, C2, ST
        self._views = (ae, Q, INV, INV[0], INV[1], ie_ie if small else INV[1], bf, BF,
                       d2[:, None], T, d1r, URP, URP[:, 0:1], Y, Y[0], Y[1], Y[2], H, H[0],
                       H[1], ST, ST[0], ST[1], b, f, c, D, CT, C, A12)
        self._tail_views = (C1, C2, W, W2, W2[0], W2[1], W2[2], L, IL, radius[0], radius[1],
                            radius[:, None], T2, T2[0], T2[1])
        self._index = np.zeros(len(IN), dtype=np.intp)
        self._bad_mask = e(n, dtype=bool)
        self._packed_shape = (0,)

    def set_pairs(self, i1, i2, n_shapes: int):
        """Fix the gather indices: pair ``k`` is shape ``i1[k]`` against shape ``i2[k]`` of a
        packed array of ``n_shapes`` shapes (see the class docstring)."""
        i12 = np.stack([np.asarray(i1, np.intp), np.asarray(i2, np.intp)])   # (2, P)
        N, P = int(n_shapes), self.size
        if i12.shape != (2, P):
            raise ValueError(f"set_pairs: expected {P} pairs, got {i12.shape[1:]}")
        xyz = np.arange(3)
        if self.small:
            idx = np.empty((2, 2, 3, 6, P), np.intp)
            for blk, sides in enumerate(_SMALL_PATTERN):
                for side, row in enumerate(sides):
                    for j, (src, seg) in enumerate(row):
                        idx[blk, side, :, j] = 3 * N * src + 3 * i12[seg] + xyz[:, None]
            parts = [idx.ravel(), (3 * i12[:, None] + xyz[None, :, None]).ravel()]
        else:
            a = 3 * i12[None] + xyz[:, None, None]                              # (3, 2, P)
            parts = [a.ravel(), (a + 3 * N).ravel()]
        parts.append((6 * N + i12).ravel())
        if P and (i12.min() < 0 or i12.max() >= N):
            raise ValueError(f"set_pairs: shape index out of range 0..{N - 1}")
        self._index[:] = np.concatenate(parts)
        self._packed_shape = (7 * N,)

    def gather(self, packed):
        """Load the pairs' end points and radii from the flat ``packed`` array (of the
        ``n_shapes`` given to :meth:`set_pairs`)."""
        if packed.shape != self._packed_shape:
            raise ValueError(f"gather: packed array of shape {packed.shape}, expected "
                             f"{self._packed_shape} (7 values per shape)")
        packed.take(self._index, None, self.IN, "clip")  # indices checked in set_pairs

    def load(self, a1, b1, r1, a2, b2, r2):
        """Load pairs from arrays: end points (P, 3), radii (P,) (m)."""
        P = self.size
        packed = np.concatenate([np.broadcast_to(x, (P, 3)).ravel() for x in (a1, a2, b1, b2)]
                                + [np.broadcast_to(r, (P,)) for r in (r1, r2)])
        k = np.arange(P)
        self.set_pairs(k, P + k, 2 * P)
        self.gather(packed)

    def _dots(self):
        """Direction vectors D, and G = dot products (small: a, e, e, b, f, c; large: a, e,
        b, f, c)."""
        mul, add, sub = _mul, _add, _sub
        if self.small:
            GB, GA, LR, L6, R6, X, X0, X1, X2, G = self._small_views
            sub(GB, GA, LR)                # L6 = [d1, d2, d2, d2, d2, d1], R6 = [d1, d2, d2, d1, r, r]
            mul(L6, R6, X)
        else:
            A, B, D, R, A0, A1, X01, d2, d1r, X23, d1, X4, X0, X1, X2, G = self._large_views
            sub(B, A, D)                   # d1, d2
            sub(A0, A1, R)                 # r = p1 - p2
            mul(D, D, X01)                 # a, e
            mul(d2, d1r, X23)              # b = d2.d1, f = d2.r
            mul(d1, R, X4)                 # c = d1.r
        add(X0, X1, G)
        add(G, X2, G)

    def closest(self):
        """Segment parameters ``s``, ``t`` (``ST (2, P)``) and closest points ``C1``, ``C2``
        (3, P) of the loaded pairs; views of internal buffers (valid until the next call)."""
        self._dots()
        (ae, Q, INV, ia, ie, ie2, bf, BF, d2, T, d1r, URP, U, Y, Y0, Y1, Y2, H, uu, ru, ST,
         s, t, b, f, c, D, CT, C, A12) = self._views
        mul, add, sub = _mul, _add, _sub
        # 1/max(|d|^2, 1e-200): exactly 0 = d.d2 = d.r for a zero-length segment, so 1e200
        # multiplies only zeros there (and segments under 1e-100 m act as points)
        _max(ae, _TINY_A, out=Q)
        _div(_ONE, Q, INV)
        # u = d1 - (b/e) d2 ; r_perp = r - (f/e) d2 (both orthogonal to d2)
        mul(bf, ie2, BF)
        mul(d2, BF, T)
        sub(d1r, T, URP)
        mul(URP, U, Y)                     # u.u, r_perp.u
        add(Y0, Y1, H)
        add(H, Y2, H)
        _max(uu, _TINY_A, out=uu)
        _div(ru, uu, s)
        _clip(s, _NEG_ONE, _ZERO, s)        # s holds -s (the line-line optimum, negated)
        # t = clamp(((p1 + s d1) - p2) . d2 / e)
        mul(b, s, t)
        sub(f, t, t)
        mul(t, ie, t)
        _clip(t, _ZERO, _ONE, t)
        # s = clamp(((p2 + t d2) - p1) . d1 / a)
        mul(b, t, s)
        sub(s, c, s)
        mul(s, ia, s)
        _clip(s, _ZERO, _ONE, s)
        mul(D, ST, CT)                      # C1 = p1 + s d1, C2 = p2 + t d2
        add(C, A12, C)
        return s, t, self.C1, self.C2

    def capsules(self, dist, pt1, pt2, normal, position):
        """Signed distances of the loaded capsule pairs written into the given outputs:
        ``dist`` (P,) and ``pt1``, ``pt2``, ``normal``, ``position`` (3, P) (best as
        transposed views of (P, 3) arrays). Returns the indices of pairs that used the
        fallback normal."""
        s, t, _, _ = self.closest()
        (C1, C2, W, W2, W20, W21, W22, L, IL, r1, r2, r12, T, T0, T1) = self._tail_views
        mul, add, sub = _mul, _add, _sub
        sub(C2, C1, W)
        mul(W, W, W2)
        add(W20, W21, L)
        add(L, W22, L)
        _sqrt(L, L)
        sub(L, r1, dist)
        sub(dist, r2, dist)
        _max(L, _COINCIDENT_A, out=IL)
        _div(W, IL, normal)
        _less(L, _REFINE_A, self._bad_mask)
        if _count_nonzero(self._bad_mask):  # rare: near-coincident closest points
            near = np.flatnonzero(self._bad_mask)
            D = self._D
            normal[:, near] = refined_normals(W[:, near].T, L[near], D[:, 0, near].T,
                                              D[:, 1, near].T, s[near], t[near]).T
            bad = near[L[near] < COINCIDENT]
        else:
            bad = _NO_BAD
        mul(normal, r12, T)                 # r1 n, r2 n
        add(C1, T0, pt1)
        sub(C2, T1, pt2)
        add(pt1, pt2, position)
        mul(position, _HALF, position)
        return bad


def _as_points(*xs):
    xs = [np.atleast_2d(np.asarray(x, dtype=np.float64)) for x in xs]
    return max(len(x) for x in xs), xs


def segment_closest_points(a1, b1, a2, b2):
    """Closest points of segments ``a1-b1`` and ``a2-b2`` (each (P, 3) or (3,), m).

    Returns ``s``, ``t`` (P,) and ``c1 = a1 + s (b1 - a1)``, ``c2 = a2 + t (b2 - a2)`` (P, 3).
    """
    n, (a1, b1, a2, b2) = _as_points(a1, b1, a2, b2)
    solver = SegmentPairSolver(n)
    solver.load(a1, b1, 0.0, a2, b2, 0.0)
    s, t, C1, C2 = solver.closest()
    return s.copy(), t.copy(), C1.T.copy(), C2.T.copy()


def capsule_distance(a1, b1, r1, a2, b2, r2):
    """Signed distances between capsules ``(a1, b1, r1)`` and ``(a2, b2, r2)`` (points (P, 3)
    or (3,), radii (P,) or scalar; m). Returns ``distance`` (P,), ``point_1``, ``point_2``,
    ``normal`` (shape 1 -> shape 2), ``position`` (P, 3), all fresh arrays."""
    n, (a1, b1, a2, b2) = _as_points(a1, b1, a2, b2)
    solver = SegmentPairSolver(n)
    solver.load(a1, b1, r1, a2, b2, r2)
    dist = np.empty(n)
    out = [np.empty((n, 3)) for _ in range(4)]
    solver.capsules(dist, *(o.T for o in out))
    return (dist, *out)


# ===================================================================================== compiled
# Scalar kernels (numba). The NumPy solver above goes once the pair kernels replace it.

import math

from numba import njit

from ambf_collision.geometry import tolerances as _tol

_COINCIDENT = _tol.COINCIDENT
_TINY = _tol.TINY_LENGTH_SQ


@njit(cache=True)
def perpendicular(d0, d1, d2):
    """Unit vector perpendicular to ``d``: ``unit(d x e_k)`` with ``e_k`` the coordinate axis of
    the smallest ``|d_k|`` (the first on ties); +x for ``d = 0``."""
    if abs(d0) <= abs(d1) and abs(d0) <= abs(d2):
        x, y, z = 0.0, d2, -d1          # d x e_x
    elif abs(d1) <= abs(d2):
        x, y, z = -d2, 0.0, d0          # d x e_y
    else:
        x, y, z = d1, -d0, 0.0          # d x e_z
    n = math.sqrt(x * x + y * y + z * z)
    if n == 0.0:
        return 1.0, 0.0, 0.0
    return x / n, y / n, z / n


@njit(cache=True)
def point_segment(p0, p1, p2, a, b):
    """Point ``p`` against segment ``a``-``b`` (arrays (3,), metres): ``(L, c0, c1, c2, n0, n1,
    n2)``, the distance ``L``, the closest point ``c`` and the unit normal ``n`` from ``c``
    towards ``p``. A point on its segment (``L < COINCIDENT``) gets :func:`perpendicular` of
    the segment direction, +z for a zero-length segment."""
    d0, d1, d2 = b[0] - a[0], b[1] - a[1], b[2] - a[2]
    l2 = d0 * d0 + d1 * d1 + d2 * d2
    t = 0.0
    if l2 > _TINY:
        t = ((p0 - a[0]) * d0 + (p1 - a[1]) * d1 + (p2 - a[2]) * d2) / l2
        t = min(max(t, 0.0), 1.0)
    c0, c1, c2 = a[0] + t * d0, a[1] + t * d1, a[2] + t * d2
    w0, w1, w2 = p0 - c0, p1 - c1, p2 - c2
    L = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    if L >= _COINCIDENT:
        return L, c0, c1, c2, w0 / L, w1 / L, w2 / L
    if l2 > _TINY:
        n0, n1, n2 = perpendicular(d0, d1, d2)
        return L, c0, c1, c2, n0, n1, n2
    return L, c0, c1, c2, 0.0, 0.0, 1.0
