"""Public distance API: ``distance(s1, s2) -> Contact`` for every pair of shape types.

Semantics of coal's ``Contact``: ``distance`` is signed (> 0 gap, 0 touching, < 0 penetration
depth, metres), ``point_1`` on shape 1 and ``point_2`` on shape 2 (world, m), ``normal`` the unit
vector from shape 1 to shape 2, ``position`` the midpoint of the witness points. Never NaN.

Sphere/capsule pairs: closed form (:mod:`segment_distance`, fallback normals documented there).
Sphere/capsule with a solid: :mod:`solid_distance` (the solid-first order swaps and flips).
Two solids: coal through :mod:`coal_bridge`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ambf_collision.geometry.segments import capsule_distance
from ambf_collision.geometry.shapes import CAPSULE, SPHERE

__all__ = ["Contact", "distance", "violates_margin"]


@dataclass(frozen=True)
class Contact:
    """Result of :func:`distance` (metres, world coordinates)."""

    distance: float
    point_1: np.ndarray
    point_2: np.ndarray
    normal: np.ndarray
    position: np.ndarray


def _segment(s):
    if s.kind == SPHERE:
        return s.center, s.center, s.radius
    return s.a, s.b, s.radius


def distance(s1, s2) -> Contact:
    """Signed distance, witness points and normal between two shapes (see module docstring)."""
    s1.validate()
    s2.validate()
    round1, round2 = s1.kind <= CAPSULE, s2.kind <= CAPSULE
    if round1 and round2:
        a1, b1, r1 = _segment(s1)
        a2, b2, r2 = _segment(s2)
        d, p1, p2, n, pos = capsule_distance(a1, b1, r1, a2, b2, r2)
        return Contact(float(d[0]), p1[0], p2[0], n[0], pos[0])
    if round2 and not round1:  # one canonical order, so that swapping is exactly symmetric
        c = distance(s2, s1)
        return Contact(c.distance, c.point_2, c.point_1, -c.normal, c.position)
    if round1:
        from ambf_collision.geometry.pairs import PairDistance, WorldShapes
        world = WorldShapes.from_shapes([s1, s2])
        r = PairDistance(world, [[0, 1]]).compute(world)
        return Contact(float(r.distance[0]), r.point_1[0].copy(), r.point_2[0].copy(),
                       r.normal[0].copy(), r.position[0].copy())
    from ambf_collision.geometry.coal_bridge import solid_pair_distance
    d, p1, p2, n = solid_pair_distance(s1, s2)
    p1 = np.asarray(p1, dtype=np.float64).copy()
    p2 = np.asarray(p2, dtype=np.float64).copy()
    return Contact(float(d), p1, p2, np.asarray(n, dtype=np.float64).copy(), 0.5 * (p1 + p2))


def violates_margin(a, b, margin: float) -> bool:
    """True when the signed distance between shapes ``a`` and ``b`` is strictly below
    ``margin`` (m)."""
    return distance(a, b).distance < float(margin)
