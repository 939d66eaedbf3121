"""Geometry of the RViz markers, in NumPy: the shortest-arc orientation of an axis, and the
triangles that draw a cone (``TRIANGLE_LIST`` points in its frame). A convex hull is drawn with
its ``HullSet`` triangles."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["axis_quaternions", "cone_triangles"]


def axis_quaternions(u) -> np.ndarray:
    """Quaternions (N,4) [x,y,z,w] rotating local +z onto the directions ``u (N,3)`` (any length;
    zero -> identity; -z -> half turn about x). Shortest-arc rotation."""
    u = np.asarray(u, dtype=float).reshape(-1, 3)
    n = np.linalg.norm(u, axis=1)
    safe = np.where(n > 1e-15, n, 1.0)
    v = np.where((n > 1e-15)[:, None], u / safe[:, None], (0.0, 0.0, 1.0))
    q = np.stack([-v[:, 1], v[:, 0], np.zeros(len(v)), 1.0 + v[:, 2]], axis=1)
    qn = np.linalg.norm(q, axis=1)
    flip = qn < 1e-9  # v == -z
    q = np.where(flip[:, None], (1.0, 0.0, 0.0, 0.0), q / np.where(flip, 1.0, qn)[:, None])
    return q


def cone_triangles(radius: float, height: float, sides: int = 24) -> np.ndarray:
    """Triangles (3*T, 3) of a cone in its local frame: base disc at z=-h/2, apex at +h/2."""
    a = np.linspace(0.0, 2.0 * math.pi, sides + 1)
    rim = np.stack([radius * np.cos(a), radius * np.sin(a), np.full_like(a, -0.5 * height)], 1)
    apex = np.array([0.0, 0.0, 0.5 * height])
    base = np.array([0.0, 0.0, -0.5 * height])
    tris = []
    for i in range(sides):
        tris += [rim[i], rim[i + 1], apex, rim[i + 1], rim[i], base]
    return np.array(tris)
