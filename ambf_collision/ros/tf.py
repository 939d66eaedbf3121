"""TF access for the collision_monitor node, never blocking the executor.

``TfSource(node, tolerance)`` answers ``lookup(target, source, stamp) -> (R, t) | None`` with the
pose of frame ``source`` in frame ``target`` (``x_target = R @ x_source + t``; metres).

- With ``tf2_ros`` importable (a full ROS 2 install, or the wheel environment, which builds it
  from source): a ``tf2_ros.Buffer`` created with the node (so it runs on the node's clock, sim
  time included, and clears itself when that clock jumps back) fed by a ``TransformListener``.
  The transform at ``stamp`` is used when the buffer has it; otherwise the latest one, if it is
  no older than ``stamp - tolerance`` (``can_transform`` with zero timeout, no waiting lookups).
- Without it (the PyPI wheel environment): :class:`TransformCache`, a small buffer fed by
  subscriptions to ``/tf`` and ``/tf_static`` (``tf2_msgs/TFMessage``; ``/tf_static`` with
  transient-local durability, as static broadcasters publish). It keeps the latest transform per
  child frame, composes chains through the tree, and accepts a dynamic link when its stamp is no
  older than ``stamp - tolerance``; static links never expire.

Both backends read frame names the same way: a leading ``/`` (``/world``, as ROS 1 wrote them)
is dropped, as tf2 drops it from the transforms it receives; static transforms hold at any stamp.
``TransformCache`` is pure Python + NumPy and is tested without ROS (test/ros/test_ros_tf.py).
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.transforms import quat_to_matrix

__all__ = ["TransformCache", "TfSource"]


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


def _stamp_sec(stamp) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


class TfSource:
    """Non-blocking TF lookups for ``node`` (tf2_ros when importable, else the fallback).

    ``backend`` is ``"tf2_ros"``, ``"fallback"`` or ``"none"`` (no TF message type either: every
    lookup of a frame other than the target fails, with that reason).
    """

    def __init__(self, node, tolerance: float = 0.1, force_fallback: bool = False):
        self.node = node
        self.tolerance = float(tolerance)
        self.cache = None
        self._buffer = None
        self._subs = []
        tf2_ros = None
        if not force_fallback:
            try:
                import tf2_ros  # noqa: F811
            except ImportError:
                tf2_ros = None
        if tf2_ros is not None:
            self.backend = "tf2_ros"
            self._tf2 = tf2_ros
            self._buffer = tf2_ros.Buffer(node=node)
            self._listener = tf2_ros.TransformListener(self._buffer, node, spin_thread=False)
            return
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            self.backend = "none"
            return
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        self.backend = "fallback"
        self.cache = TransformCache()
        dyn = QoSProfile(depth=100)
        static = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                            reliability=ReliabilityPolicy.RELIABLE)
        self._subs = [
            node.create_subscription(TFMessage, "/tf", lambda m: self._on_tf(m, False), dyn),
            node.create_subscription(TFMessage, "/tf_static", lambda m: self._on_tf(m, True), static),
        ]

    def _on_tf(self, msg, static: bool):
        for ts in msg.transforms:
            r, p = ts.transform.rotation, ts.transform.translation
            self.cache.set_from_quaternion(ts.header.frame_id, ts.child_frame_id,
                                           (r.x, r.y, r.z, r.w), (p.x, p.y, p.z),
                                           _stamp_sec(ts.header.stamp), static)

    def clear(self) -> None:
        """Forget the dynamic transforms received so far (the clock jumped back)."""
        if self.cache is not None:
            self.cache.clear_dynamic()
        elif self._buffer is not None:
            self._buffer.clear()

    def lookup(self, target: str, source: str, stamp: float):
        """``((R, t), "")`` for ``source`` in ``target`` at ``stamp`` (s), or ``(None, reason)``."""
        target, source = target.lstrip("/"), source.lstrip("/")
        if target == source:
            return (np.eye(3), np.zeros(3)), ""
        if self.backend == "fallback":
            return self.cache.lookup(target, source, stamp, self.tolerance)
        if self.backend == "none":
            return None, "no TF available (neither tf2_ros nor tf2_msgs importable)"
        return self._lookup_tf2(target, source, stamp)

    def _lookup_tf2(self, target, source, stamp):
        from rclpy.duration import Duration
        from rclpy.time import Time

        buf = self._buffer
        zero = Duration()
        when = Time(nanoseconds=int(max(stamp, 0.0) * 1e9))
        try:
            if buf.can_transform(target, source, when, zero):
                ts = buf.lookup_transform(target, source, when)
            elif buf.can_transform(target, source, Time(), zero):
                ts = buf.lookup_transform(target, source, Time())
                age = stamp - _stamp_sec(ts.header.stamp)
                if ts.header.stamp.sec or ts.header.stamp.nanosec:  # 0: static chain
                    if age > self.tolerance:
                        return None, (f"latest transform {target!r} <- {source!r} is {age:.3f} s "
                                      f"older than needed (tolerance {self.tolerance:g} s)")
            else:
                return None, f"no transform {target!r} <- {source!r}"
        except Exception as err:  # tf2 LookupException / ExtrapolationException / ...
            return None, f"transform {target!r} <- {source!r}: {err}"
        r, p = ts.transform.rotation, ts.transform.translation
        q = np.array([r.x, r.y, r.z, r.w])
        n = float(np.linalg.norm(q))
        if not (math.isfinite(n) and n > 1e-9):
            return None, f"transform {target!r} <- {source!r} has an invalid rotation"
        t = np.array([p.x, p.y, p.z])
        if not np.all(np.isfinite(t)):
            return None, f"transform {target!r} <- {source!r} is not finite"
        return (quat_to_matrix(q / n), t), ""

    def destroy(self):
        for s in self._subs:
            self.node.destroy_subscription(s)
        self._subs = []
