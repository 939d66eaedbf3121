"""Closed triangle meshes for the mesh tests and the mesh bench: ``(V (N, 3) float64, F (M, 3)
int64)``, metres, outward (counter-clockwise seen from outside; checked here by the sign of the
enclosed volume, an oracle independent of the package's orientation code).

- :func:`torus`: major radius ``R`` about z, minor ``r``; ``n`` segments around z, ``m`` around
  the tube (minor angle 0 points away from the axis, so for even ``m`` the inner equator is a
  ring of vertices at radius ``R - r``).
- :func:`revolve`: a profile polyline ``(r, z)`` from the axis to the axis, turned about z
  (poles at its ends); :func:`cup` and :func:`bowl` are two of them.
- :func:`extrude`: a simple polygon (counter-clockwise, star-shaped from its first vertex) from
  ``z = 0`` to ``z = h``; :func:`l_bracket` is one.
- :func:`tube`: a closed curve swept by a circle; :func:`trefoil` is one.
- :func:`rings`: two interlocking tori (two components).
"""

from __future__ import annotations

import numpy as np


def outward(V, F):
    """``F`` with every row reversed if the signed volume is negative."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    vol = np.einsum("ij,ij->i", a, np.cross(b, c)).sum()
    return F[:, ::-1].copy() if vol < 0 else F


def grid(n, m):
    """Triangles of an (n x m) grid of vertices ``i * m + j``, periodic in both directions."""
    i, j = np.meshgrid(np.arange(n), np.arange(m), indexing="ij")
    a = i * m + j
    b = ((i + 1) % n) * m + j
    c = ((i + 1) % n) * m + (j + 1) % m
    d = i * m + (j + 1) % m
    return np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])


def torus(R=1.0, r=0.3, n=48, m=24, center=(0.0, 0.0, 0.0), axis=2, bump=0.0):
    """A torus about the coordinate axis ``axis`` through ``center``; ``bump`` > 0 modulates the
    tube radius by ``1 + bump sin(7 u) sin(5 v)`` (an uneven, anatomy-like surface)."""
    u = 2 * np.pi * np.arange(n) / n
    v = 2 * np.pi * np.arange(m) / m
    U, W = np.meshgrid(u, v, indexing="ij")
    rt = r * (1.0 + bump * np.sin(7 * U) * np.sin(5 * W))
    rho = R + rt * np.cos(W)
    P = np.stack([rho * np.cos(U), rho * np.sin(U), rt * np.sin(W)], -1).reshape(-1, 3)
    P = np.roll(P, axis - 2, axis=1) + np.asarray(center)
    return P, outward(P, grid(n, m).astype(np.int64))


def revolve(profile, n=48):
    """Surface of revolution about z of ``profile`` (K, 2) rows ``(r, z)``, first and last on
    the axis (r = 0)."""
    prof = np.asarray(profile, dtype=float)
    mid = prof[1:-1]
    u = 2 * np.pi * np.arange(n) / n
    ring = np.stack([mid[:, :1] * np.cos(u), mid[:, :1] * np.sin(u),
                     np.repeat(mid[:, 1:], n, axis=1)], -1).reshape(-1, 3)
    K = len(mid)
    V = np.concatenate([ring, [[0, 0, prof[0, 1]], [0, 0, prof[-1, 1]]]])
    s, e = K * n, K * n + 1
    i = np.arange(n)
    tris = [np.stack([np.full(n, s), (i + 1) % n, i], -1)]
    for k in range(K - 1):
        a, b = k * n + i, k * n + (i + 1) % n
        c, d = a + n, b + n
        tris += [np.stack([a, b, d], -1), np.stack([a, d, c], -1)]
    last = (K - 1) * n
    tris.append(np.stack([np.full(n, e), last + i, last + (i + 1) % n], -1))
    return V, outward(V, np.concatenate(tris).astype(np.int64))


def cup(Ro=0.05, Ri=0.04, H=0.06, t=0.01, n=48):
    """A cylindrical cup: outer radius Ro, height H, a hollow of radius Ri above a flat floor of
    thickness t (the floor's top is the plane z = t)."""
    return revolve([(0, 0), (Ro, 0), (Ro, H), (Ri, H), (Ri, t), (0, t)], n)


def bowl(Ro=1.0, Ri=0.8, k=16, n=48):
    """A hemispherical bowl: outer radius Ro, inner Ri, rim at z = 0, opening upwards."""
    a = np.linspace(-np.pi / 2, 0, k)
    outer = np.stack([Ro * np.cos(a), Ro * np.sin(a)], -1)
    inner = np.stack([Ri * np.cos(a), Ri * np.sin(a)], -1)[::-1]
    return revolve(np.concatenate([outer, inner]), n)


def extrude(poly, h):
    """A prism over the simple polygon ``poly`` (K, 2), star-shaped from its first vertex."""
    P = np.asarray(poly, dtype=float)
    K = len(P)
    V = np.concatenate([np.c_[P, np.zeros(K)], np.c_[P, np.full(K, h)]])
    i = np.arange(K)
    j = (i + 1) % K
    fan = np.arange(1, K - 1)
    F = np.concatenate([np.stack([np.zeros(K - 2, int), fan + 1, fan], -1),          # bottom
                        np.stack([np.full(K - 2, K), K + fan, K + fan + 1], -1),     # top
                        np.stack([i, j, K + j], -1), np.stack([i, K + j, K + i], -1)])
    return V, outward(V, F.astype(np.int64))


def l_bracket(a=0.1, b=0.02, h=0.03):
    """An L-shaped prism: legs of length ``a`` and thickness ``b``, height ``h``."""
    return extrude([(b, b), (b, a), (0, a), (0, 0), (a, 0), (a, b)], h)


def tube(curve, radius, m=16):
    """A closed curve (K, 3) swept by a circle of ``radius`` (m points), frames by parallel
    transport (closed up by spreading the final twist along the curve)."""
    C = np.asarray(curve, dtype=float)
    K = len(C)
    T = np.roll(C, -1, 0) - np.roll(C, 1, 0)
    T /= np.linalg.norm(T, axis=1)[:, None]
    N = np.empty_like(C)
    n0 = np.cross(T[0], [0.3, 0.5, 0.81])
    N[0] = n0 / np.linalg.norm(n0)
    for k in range(1, K):
        x = N[k - 1] - T[k] * (N[k - 1] @ T[k])
        N[k] = x / np.linalg.norm(x)
    x = N[-1] - T[0] * (N[-1] @ T[0])
    twist = np.arctan2(np.cross(x, N[0]) @ T[0], x @ N[0])
    B = np.cross(T, N)
    ang = np.arange(K)[:, None] * twist / K + 2 * np.pi * np.arange(m)[None, :] / m
    P = C[:, None, :] + radius * (np.cos(ang)[..., None] * N[:, None, :] + np.sin(ang)[..., None] * B[:, None, :])
    return P.reshape(-1, 3), outward(P.reshape(-1, 3), grid(K, m).astype(np.int64))


def trefoil(scale=0.1, radius=0.03, k=180, m=12):
    """A trefoil knot tube (closed, one component, not self-intersecting)."""
    t = 2 * np.pi * np.arange(k) / k
    c = scale * np.stack([np.sin(t) + 2 * np.sin(2 * t), np.cos(t) - 2 * np.cos(2 * t), -np.sin(3 * t)], -1)
    return tube(c, radius, m)


def rings(R=1.0, r=0.25, n=48, m=16):
    """Two interlocking tori: one about z at the origin, one about y through (R, 0, 0)."""
    V1, F1 = torus(R, r, n, m)
    V2, F2 = torus(R, r, n, m, center=(R, 0.0, 0.0), axis=1)
    return np.concatenate([V1, V2]), np.concatenate([F1, F2 + len(V1)])
