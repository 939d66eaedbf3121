"""TF access for the collision_monitor node, never blocking the executor.

``TfSource(node, tolerance)`` answers ``lookup(target, source, stamp) -> (R, t) | None`` with the
pose of frame ``source`` in frame ``target`` (``x_target = R @ x_source + t``; metres).

Transforms come in through the node's own raw subscriptions to ``/tf`` and ``/tf_static``
(``tf2_msgs/TFMessage``; ``/tf_static`` with transient-local durability, as static broadcasters
publish) and :class:`~ambf_collision.ros.tf_intake.TfIntake`: read in slices of bounded time
(a huge message cannot stall the node), transforms stamped beyond ``future_tolerance`` refused
(a future transform never wins over current ones), non-finite ones refused. They are stored in

- a ``tf2_ros.Buffer`` created with the node (so it runs on the node's clock, sim time included,
  and clears itself when that clock jumps back), when ``tf2_ros`` is importable (a full ROS 2
  install, or the wheel environment, which builds it from source). The transform at ``stamp`` is
  used when the buffer has it; otherwise the latest one, if it is no older than
  ``stamp - tolerance`` (``can_transform`` with zero timeout, no waiting lookups);
- otherwise (or with ``tf_backend: fallback``) :class:`~ambf_collision.ros.tf_cache.TransformCache`:
  the latest transform per child frame, composed along chains, a dynamic link accepted when its
  stamp is no older than ``stamp - tolerance``; static links never expire.

Both backends read frame names the same way: a leading ``/`` (``/world``, as ROS 1 wrote them)
is dropped, as tf2 drops it from the transforms it receives; static transforms hold at any stamp.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry.transforms import quat_to_matrix
from ambf_collision.ros.tf_cache import TransformCache
from ambf_collision.ros.tf_intake import TfIntake

__all__ = ["TransformCache", "TfSource"]

AUTHORITY = "ambf_collision"  # the authority tf2 records for the transforms the node stores


def _stamp_sec(stamp) -> float:
    return float(stamp.sec) + 1e-9 * float(stamp.nanosec)


class TfSource:
    """Non-blocking TF lookups for ``node`` (tf2_ros when importable, else the fallback).

    ``backend`` is ``"tf2_ros"``, ``"fallback"`` or ``"none"`` (no TF message type either: every
    lookup of a frame other than the target fails, with that reason). ``now()``: the node's clock
    (s), against which ``future_tolerance`` is applied. ``intake``: the
    :class:`~ambf_collision.ros.tf_intake.TfIntake` with its counts of refused transforms.
    """

    SLICE_PERIOD = 0.001  # s between two slices of a large TF message (the executor runs others)

    def __init__(self, node, tolerance: float = 0.1, force_fallback: bool = False, now=None,
                 future_tolerance: float = 0.5):
        self.node = node
        self.tolerance = float(tolerance)
        self.cache = None
        self._buffer = None
        self._subs = []
        self._slice_timer = None
        clock = node.get_clock()
        self.intake = TfIntake(self._store, now or (lambda: clock.now().nanoseconds * 1e-9),
                               future_tolerance)
        tf2_ros = None
        if not force_fallback:
            try:
                import tf2_ros  # noqa: F811
            except ImportError:
                tf2_ros = None
        try:
            from tf2_msgs.msg import TFMessage
        except ImportError:
            self.backend = "none"
            return
        if tf2_ros is not None:
            from geometry_msgs.msg import TransformStamped

            self.backend = "tf2_ros"
            self._buffer = tf2_ros.Buffer(node=node)
            self._stamped = TransformStamped
        else:
            self.backend = "fallback"
            self.cache = TransformCache()
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        self._message_type = TFMessage
        dyn = QoSProfile(depth=100)
        static = QoSProfile(depth=100, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                            reliability=ReliabilityPolicy.RELIABLE)
        self._subs = [
            node.create_subscription(TFMessage, "/tf", lambda d: self._on_raw(d, False), dyn,
                                     raw=True),
            node.create_subscription(TFMessage, "/tf_static", lambda d: self._on_raw(d, True),
                                     static, raw=True)]
        self._slice_timer = node.create_timer(self.SLICE_PERIOD, self._on_slice)
        self._slice_timer.cancel()

    # -- intake ------------------------------------------------------------------------------
    def _on_raw(self, data: bytes, static: bool) -> None:
        """A serialized ``TFMessage``: queued, and read at once for one slice."""
        try:
            self.intake.push(data, static)
        except ValueError:  # another encoding, or a damaged header: rclpy reads it
            self._on_tf(self._deserialize(data), static)
            return
        self._on_slice()

    def _deserialize(self, data: bytes):
        from rclpy.serialization import deserialize_message

        try:
            return deserialize_message(data, self._message_type)
        except Exception as err:  # noqa: BLE001 - the node survives any input
            self.intake.counts["invalid"] += 1
            self.intake.last_refusal = f"unreadable TF message ({len(data)} bytes): {err}"
            return self._message_type()

    def _on_tf(self, msg, static: bool) -> None:
        """A ``TFMessage`` object: its transforms go through the same intake."""
        items = [(ts.header.frame_id, ts.child_frame_id,
                  (ts.transform.rotation.x, ts.transform.rotation.y, ts.transform.rotation.z,
                   ts.transform.rotation.w),
                  (ts.transform.translation.x, ts.transform.translation.y,
                   ts.transform.translation.z), _stamp_sec(ts.header.stamp))
                 for ts in msg.transforms]
        self.intake.push_transforms(items, len(items), static)
        self._on_slice()

    def _on_slice(self) -> None:
        """One slice of the queued transforms; the slice timer runs while some are left."""
        more = self.intake.work()
        if self._slice_timer is not None:
            if more:
                if self._slice_timer.is_canceled():
                    self._slice_timer.reset()
            else:
                self._slice_timer.cancel()

    def _store(self, parent, child, q, t, stamp, static) -> None:
        if self.cache is not None:
            self.cache.set_from_quaternion(parent, child, q, t, stamp, static)
            return
        ts = self._stamped()
        ts.header.frame_id, ts.child_frame_id = parent, child
        ns = int(round(stamp * 1e9))
        ts.header.stamp.sec, ts.header.stamp.nanosec = divmod(max(ns, 0), 1_000_000_000)
        r, p = ts.transform.rotation, ts.transform.translation
        r.x, r.y, r.z, r.w = q
        p.x, p.y, p.z = t
        if static:
            self._buffer.set_transform_static(ts, AUTHORITY)
        else:
            self._buffer.set_transform(ts, AUTHORITY)

    def clear(self) -> None:
        """Forget the dynamic transforms received so far and those still queued (the clock
        jumped back)."""
        self.intake.clear()
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
        if self._slice_timer is not None:
            self.node.destroy_timer(self._slice_timer)
            self._slice_timer = None
