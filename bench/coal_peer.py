"""coal as a bench peer of a compiled ``Model``: geometries built once, poses from the model's FK.

``CoalPeer(model)`` builds one coal geometry per paired shape in its body frame (``coal_bridge``:
hulls as ``coal.Convex`` of the package's own qhull hull, the oracle's tight tolerances 1e-10) and
keeps each geometry's pose in its body (``local_R (S,3,3)``, ``local_t (S,3)``). Per evaluation:

- ``set_poses(body_R, body_t)``: the world transforms of every paired shape from the body poses
  (``Data.body_R``, ``Data.body_t``, the project's own forward kinematics), composed in one
  vectorised NumPy step (``R = body_R local_R``, ``t = body_R local_t + body_t``), then written
  into the shapes' ``coal.Transform3s`` (one ``setRotation`` / ``setTranslation`` per shape: what
  a coal user does);
- ``distances(out)``: one ``coal.distance`` per pair into ``out (P',)`` (the pairs without a
  plane: coal's Halfspace has no signed distance to every shape; ``keep`` lists their indices in
  ``model.pairs``).

The two are timed apart by the benches: "coal loop" is ``distances`` alone, "coal + poses" both.
No pose is computed per shape in Python (the earlier reference loop did, ``quat_to_matrix`` per
shape, and measured mostly that).
"""

from __future__ import annotations

import numpy as np

from ambf_collision.geometry import coal_bridge
from ambf_collision.geometry.shapes import PLANE

__all__ = ["CoalPeer"]


class CoalPeer:
    """coal geometries of ``model``'s paired shapes (no plane pairs), built once. ``pairs``
    (Q,2) shape indices: another pair list than ``model.pairs`` (``keep`` then indexes it)."""

    def __init__(self, model, pairs=None):
        import coal

        self.coal = coal
        pairs = np.asarray(model.pairs if pairs is None else pairs, dtype=np.intp).reshape(-1, 2)
        self.keep = np.array([k for k, (s1, s2) in enumerate(pairs.tolist())
                              if PLANE not in (model.shapes[s1].kind, model.shapes[s2].kind)],
                             dtype=np.intp)
        pairs = pairs[self.keep]
        self.shape_ids = np.unique(pairs)
        slot = {int(s): i for i, s in enumerate(self.shape_ids.tolist())}
        self.pairs = [(slot[a], slot[b]) for a, b in pairs.tolist()]
        self.geoms, self.tfs = [], []
        local_R, local_t = [], []
        for s in self.shape_ids.tolist():
            geom, tf = coal_bridge.to_coal(model.shapes[s])  # body frame: tf is the local pose
            self.geoms.append(geom)
            self.tfs.append(tf)
            local_R.append(np.array(tf.getRotation(), dtype=float))
            local_t.append(np.array(tf.getTranslation(), dtype=float))
        self.local_R = np.array(local_R).reshape(-1, 3, 3)
        self.local_t = np.array(local_t).reshape(-1, 3)
        self.body = np.asarray(model.shape_body)[self.shape_ids]
        self.request = coal_bridge.distance_request()
        self.result = coal.DistanceResult()
        self.calls = [(self.geoms[a], self.tfs[a], self.geoms[b], self.tfs[b]) for a, b in self.pairs]

    def set_poses(self, body_R, body_t) -> None:
        """Every paired shape's world transform from the body poses ``(B,3,3)``, ``(B,3)``."""
        Rb = body_R[self.body]
        R = np.matmul(Rb, self.local_R)
        t = np.einsum("sij,sj->si", Rb, self.local_t) + body_t[self.body]
        for tf, Rs, ts in zip(self.tfs, R, t):
            tf.setRotation(Rs)
            tf.setTranslation(ts)

    def distances(self, out) -> None:
        """coal's signed distance of every kept pair into ``out (len(keep),)`` (m); coal always
        computes the nearest points as well (``self.result`` holds the last pair's)."""
        distance, req, res = self.coal.distance, self.request, self.result
        for k, (g1, t1, g2, t2) in enumerate(self.calls):
            res.clear()
            out[k] = distance(g1, t1, g2, t2, req, res)
