"""The continuous-collision tests' oracle (issue 38): dense sampling plus bisection.

Independent of the code under test (``model/motion*.py``): it poses the model with the ordinary
``Model.evaluate`` at ``n + 1`` evenly spaced ``s`` of the step (joints on the straight line,
root poses by SciPy's quaternion SLERP and a linear translation) and, for every pair, bisects
its first sign change (``d > 0`` then ``d <= 0``) down to ``1e-12`` of the step. A contact
shorter than ``1 / n`` of the step can slip between its samples: :func:`sample_count` chooses
``n`` so that no shape moves more than a given margin between two samples (measured, from the
body poses themselves), which bounds how deep such a contact can be.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.transform import Rotation, Slerp

from ambf_collision.geometry.shapes import BOX, CONE, CYLINDER, PLANE


class Oracle:
    """Dense sampler of one model (its own Data)."""

    def __init__(self, model):
        self.model, self.data = model, model.create_data()
        self.P = len(model.pairs)

    def _pose(self, q0, q1, files0, files1, s):
        data = self.data
        data.q[...] = q0 + s * (q1 - q0)
        if files0 is not None:
            for f, ((R0, t0), (R1, t1)) in enumerate(zip(files0, files1)):
                rot = Slerp([0.0, 1.0], Rotation.from_matrix(np.stack([R0, R1])))(s)
                data.file_R[f] = rot.as_matrix()
                data.file_t[f] = np.asarray(t0) + s * (np.asarray(t1) - np.asarray(t0))

    def distances(self, q0, q1, s, files0=None, files1=None) -> np.ndarray:
        """``(P,)`` every pair's exact distance at ``s`` (m)."""
        self._pose(q0, q1, files0, files1, s)
        self.model.evaluate(self.data, report_distance=-np.inf)
        return self.data.distance.copy()

    def step(self, q0, q1, n: int = 10_000, files0=None, files1=None):
        """``(first (P,), minimum (P,))``: each pair's first contact ``s`` (+inf: none seen) and
        its smallest sampled distance (m), from ``n + 1`` samples and bisection."""
        d = np.empty((n + 1, self.P))
        for i in range(n + 1):
            d[i] = self.distances(q0, q1, i / n, files0, files1)
        first = np.full(self.P, np.inf)
        for p in range(self.P):
            hit = np.flatnonzero(d[:, p] <= 0.0)
            if not hit.size:
                continue
            i = int(hit[0])
            if i == 0:
                first[p] = 0.0
                continue
            lo, hi = (i - 1) / n, i / n
            while hi - lo > 1e-12:
                mid = 0.5 * (lo + hi)
                if self.distances(q0, q1, mid, files0, files1)[p] <= 0.0:
                    hi = mid
                else:
                    lo = mid
            first[p] = hi
        return first, d.min(axis=0)

    def largest_move(self, q0, q1, files0=None, files1=None, probes: int = 64) -> float:
        """m: the largest Hausdorff move of any shape between ``probes`` evenly spaced ``s``,
        measured from the posed shapes: a sphere or capsule by its ends ``a``, ``b``; a box,
        cylinder or cone also by its rotation's change (Frobenius norm) times its corner
        radius. Planes are not counted (the tests' planes do not move)."""
        w = self.data.world
        solid = np.isin(w.kind, (BOX, CYLINDER, CONE))
        half = np.asarray(w.half)
        corner = np.where(np.asarray(w.kind) == BOX, np.linalg.norm(half, axis=1),
                          np.hypot(half[:, 0], half[:, 2]))
        moving = np.asarray(w.kind) != PLANE
        prev, worst = None, 0.0
        for i in range(probes + 1):
            self._pose(q0, q1, files0, files1, i / probes)
            self.model.evaluate(self.data, report_distance=-np.inf)
            now = (np.array(w.a), np.array(w.b), np.array(w.rot))
            if prev is not None:
                move = np.maximum(np.linalg.norm(now[0] - prev[0], axis=1),
                                  np.linalg.norm(now[1] - prev[1], axis=1))
                move += np.where(solid, np.linalg.norm(now[2] - prev[2], axis=(1, 2)) * corner, 0.0)
                worst = max(worst, float(move[moving].max(initial=0.0)))
            prev = now
        return worst


def sample_count(move: float, probes: int, margin: float, least: int = 100) -> int:
    """Samples for :meth:`Oracle.step` such that a shape moving ``move`` m per ``1 / probes`` of
    the step moves less than ``margin`` m between two samples."""
    return max(least, int(np.ceil(move * probes / margin)))
