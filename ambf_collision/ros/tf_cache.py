"""The node's own TF buffer (``tf_backend: fallback``, and wherever ``tf2_ros`` is not
importable): the latest transform per child frame, composed along chains (pure Python + NumPy,
no ROS; tested in test/ros/test_ros_tf.py).

A frame name's leading ``/`` (``/world``, as ROS 1 wrote them) is dropped, as tf2 drops it.
Static links hold at any stamp; a dynamic link is used when its stamp is no older than the
lookup stamp minus the tolerance.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.transforms import quat_to_matrix

__all__ = ["TransformCache"]


class TransformCache:
    """Latest transform per child frame (a tree of frames), composed along chains.

    Each link ``child -> parent`` stores ``(parent, R (3,3), t (3,), stamp s, static)`` with
    ``x_parent = R @ x_child + t``.
    """

    MAX_DEPTH = 64  # chain length guard (also breaks accidental cycles)

    def __init__(self):
        self._links: dict = {}

    def __len__(self):
        return len(self._links)

    def clear_dynamic(self) -> None:
        """Forget every dynamic link (the clock jumped back); static links stay."""
        self._links = {k: v for k, v in self._links.items() if v[4]}

    def frames(self) -> set:
        """Every frame named so far (children and parents)."""
        return set(self._links) | {v[0] for v in self._links.values()}

    def set_transform(self, parent: str, child: str, R, t, stamp: float, static: bool = False):
        """Store the transform of ``child`` in ``parent`` (an older stamp never replaces a newer
        one for dynamic links). Non-finite values or an empty/self frame are ignored; returns
        whether the link was stored."""
        parent, child = parent.lstrip("/"), child.lstrip("/")
        if not parent or not child or parent == child:
            return False
        R = np.asarray(R, dtype=float).reshape(3, 3)
        t = np.asarray(t, dtype=float).reshape(3)
        if not (np.all(np.isfinite(R)) and np.all(np.isfinite(t)) and math.isfinite(stamp)):
            return False
        old = self._links.get(child)
        if old is not None and not static and not old[4] and stamp < old[3]:
            return False
        self._links[child] = (parent, R, t, float(stamp), bool(static))
        return True

    def set_from_quaternion(self, parent, child, q_xyzw, t, stamp, static=False):
        """As :meth:`set_transform` with a quaternion ``[x, y, z, w]`` (normalised here)."""
        q = np.asarray(q_xyzw, dtype=float).reshape(4)
        n = float(np.linalg.norm(q))
        if not math.isfinite(n) or n < 1e-9:
            return False
        return self.set_transform(parent, child, quat_to_matrix(q / n), t, stamp, static)

    def _chain(self, frame: str):
        """``[(frame, R, t, stamp, static) ...]`` from ``frame`` up to its root (exclusive)."""
        chain = []
        cur = frame
        seen = {cur}
        while cur in self._links and len(chain) < self.MAX_DEPTH:
            parent, R, t, stamp, static = self._links[cur]
            chain.append((cur, R, t, stamp, static))
            if parent in seen:
                break
            seen.add(parent)
            cur = parent
        return chain, cur

    def lookup(self, target: str, source: str, stamp: float, tolerance: float):
        """``((R, t), "")`` for ``source`` in ``target``, or ``(None, reason)``.

        A dynamic link is usable when its stamp is ``>= stamp - tolerance`` (s)."""
        target, source = target.lstrip("/"), source.lstrip("/")
        if target == source:
            return (np.eye(3), np.zeros(3)), ""
        up_s, root_s = self._chain(source)
        up_t, root_t = self._chain(target)
        if root_s != root_t:
            known = self.frames()
            missing = [f for f in (source, target) if f not in known]
            if missing:
                return None, f"frame {missing[0]!r} is unknown to TF"
            return None, f"frames {source!r} and {target!r} are not connected"
        # drop the common top part: walk both chains from the root down
        names_t = [c[0] for c in up_t]
        common = set(c[0] for c in up_s) & set(names_t)
        up_s = [c for c in up_s if c[0] not in common]
        up_t = [c for c in up_t if c[0] not in common]
        oldest = stamp - tolerance
        for name, _, _, st, static in up_s + up_t:
            if not static and st < oldest:
                return None, (f"transform of {name!r} is {stamp - st:.3f} s older than needed "
                              f"(tolerance {tolerance:g} s)")
        # T_anc_source and T_anc_target, then T_target_source = inv(T_anc_target) T_anc_source
        Rs, ts = _compose_up(up_s)
        Rt, tt = _compose_up(up_t)
        R = Rt.T @ Rs
        t = Rt.T @ (ts - tt)
        return (R, t), ""


def _compose_up(chain):
    """Pose of the chain's first frame in the last link's parent."""
    R = np.eye(3)
    t = np.zeros(3)
    for _, Rl, tl, _, _ in chain:  # x_parent = Rl x_child + tl, applied outward
        t = Rl @ t + tl
        R = Rl @ R
    return R, t
