"""Public distance API: ``distance(s1, s2) -> Contact`` for every pair of shape types.

Semantics of coal's ``Contact``: ``distance`` is signed (> 0 gap, 0 touching, < 0 penetration
depth: the minimum translation, metres), ``point_1`` on shape 1 and ``point_2`` on shape 2
(world, m), ``normal`` the unit vector from shape 1 to shape 2, ``position`` the midpoint of the
witness points. Never NaN. The kernels are those of every pair list
(:mod:`~ambf_collision.geometry.pair_kernels`); two planes raise a ``ShapeError``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ambf_collision.geometry.pairs import PairDistance
from ambf_collision.geometry.world_shapes import WorldShapes

__all__ = ["Contact", "distance", "violates_margin"]


@dataclass(frozen=True)
class Contact:
    """Result of :func:`distance` (metres, world coordinates)."""

    distance: float
    point_1: np.ndarray
    point_2: np.ndarray
    normal: np.ndarray
    position: np.ndarray


def distance(s1, s2) -> Contact:
    """Signed distance, witness points and normal between two shapes (see the module)."""
    world = WorldShapes.from_shapes([s1, s2])
    r = PairDistance(world, [[0, 1]]).compute(world)
    return Contact(float(r.distance[0]), r.point_1[0].copy(), r.point_2[0].copy(),
                   r.normal[0].copy(), r.position[0].copy())


def violates_margin(a, b, margin: float) -> bool:
    """True when the signed distance between shapes ``a`` and ``b`` is strictly below
    ``margin`` (m)."""
    return distance(a, b).distance < float(margin)
