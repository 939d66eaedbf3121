"""Transforms from ``/tf`` and ``/tf_static`` taken in slices of bounded time (no ROS import).

The node subscribes to both topics raw (serialized ``tf2_msgs/TFMessage`` bytes) and hands each
message to :class:`TfIntake`, which reads its transforms one by one straight from the bytes and
passes the good ones to a store (the node's :class:`~ambf_collision.ros.tf_cache.TransformCache`
or a ``tf2_ros.Buffer``). A message is never read in one go: :meth:`TfIntake.work` stops after
:attr:`TfIntake.SLICE_SECONDS` and the node calls it again from a timer, so one ``TFMessage``
carrying 10,000 transforms cannot hold up the joint states queued behind it. The newest message
is read first: the current transforms that keep coming while a large message is read are not
held up behind it either (both stores keep transforms by stamp, so the order of reading does not
change what they hold: the fallback cache keeps the newest stamp per frame, tf2 its history).

Refused transforms (counted, and named in throttled warnings by the node):

- ``future``: a dynamic transform stamped more than ``future_tolerance`` seconds after the node's
  clock. Stored, it would stay the newest and hide every current one until its stamp came (a
  future transform never wins over current ones); static transforms hold at any stamp;
- ``invalid``: a non-finite number, a zero quaternion, an empty frame or a frame that is its own
  parent; a message that ends early stops there;
- ``frames``: a child frame beyond :attr:`TfIntake.MAX_FRAMES` distinct ones;
- ``dropped``: dynamic messages still waiting when more than :attr:`TfIntake.MAX_PENDING`
  transforms are queued (the oldest go first; the newer ones hold the same frames' current
  transforms).

Memory: the queued messages' bytes (at most ``MAX_PENDING`` transforms, about 100 bytes each,
plus the message being read) and the set of child frames (``MAX_FRAMES`` names).
"""

from __future__ import annotations

import math
import struct
import time
from collections import deque

__all__ = ["TfIntake", "cdr_transforms"]

_STAMP = struct.Struct("<iI")
_U32 = struct.Struct("<I")
_POSE = struct.Struct("<7d")  # translation x, y, z; rotation x, y, z, w


def cdr_transforms(data):
    """``(count, iterator)`` over the transforms of a serialized ``TFMessage`` (CDR, little
    endian). Each item is ``(parent, child, (qx, qy, qz, qw), (x, y, z), stamp s)``; a
    truncated or malformed message raises ``ValueError`` when the iteration reaches the damage.
    ``ValueError`` at once for another encoding (the caller deserializes those with rclpy)."""
    if bytes(data[:2]) != b"\x00\x01":
        raise ValueError("not CDR little endian")
    body = memoryview(data)[4:]
    try:
        (count,) = _U32.unpack_from(body, 0)
    except struct.error:
        raise ValueError("truncated TFMessage") from None
    return count, _iterate(body, count)


def _string(body, off):
    (n,) = _U32.unpack_from(body, off)
    end = off + 4 + n
    if n == 0 or end > len(body) or body[end - 1] != 0:
        raise ValueError("malformed frame name in TFMessage")
    return str(body[off + 4:end - 1], "utf-8", "replace"), end


def _iterate(body, count):
    off = 4
    try:
        for _ in range(count):
            off += -off % 4
            sec, nanosec = _STAMP.unpack_from(body, off)
            parent, off = _string(body, off + 8)
            off += -off % 4
            child, off = _string(body, off)
            off += -off % 8
            x, y, z, qx, qy, qz, qw = _POSE.unpack_from(body, off)
            off += 56
            yield parent, child, (qx, qy, qz, qw), (x, y, z), sec + 1e-9 * nanosec
    except struct.error:
        raise ValueError("truncated TFMessage") from None


class TfIntake:
    """Queue and slice-wise reading of TF messages into ``store``.

    ``store(parent, child, q_xyzw, t_xyz, stamp, static) -> None`` receives every accepted
    transform (frame names without a leading ``/``); ``now()`` is the node's clock (s);
    ``future_tolerance`` (s) as the node's parameter of that name (may be changed).
    """

    SLICE_SECONDS = 0.0005  # s of reading per call of work(): what a joint state may wait
    MAX_PENDING = 100_000  # transforms queued before the oldest dynamic messages are dropped
    MAX_FRAMES = 2_000  # distinct child frames kept

    def __init__(self, store, now, future_tolerance: float = 0.5):
        self.store = store
        self.now = now
        self.future_tolerance = float(future_tolerance)
        self._queue: deque = deque()  # [iterator, transforms left, static]
        self._pending = 0
        self._frames: set = set()
        self.counts = {"stored": 0, "future": 0, "invalid": 0, "frames": 0, "dropped": 0}
        self.last_refusal = ""  # why the latest transform was refused (for a warning)
        self.longest_slice = 0.0  # s of this thread's CPU time in the longest work() call

    @property
    def pending(self) -> int:
        """Transforms queued and not read yet."""
        return self._pending

    def push(self, data, static: bool) -> None:
        """Queue one serialized ``TFMessage`` (CDR little endian; ``ValueError`` otherwise)."""
        count, items = cdr_transforms(data)
        self.push_transforms(items, count, static)

    def push_transforms(self, items, count: int, static: bool) -> None:
        """Queue ``count`` transforms from the iterable ``items`` (tuples as
        :func:`cdr_transforms` gives them; the node's path for other encodings)."""
        if count <= 0:
            return
        self._queue.appendleft([iter(items), int(count), bool(static)])
        self._pending += int(count)
        while self._pending > self.MAX_PENDING:
            victim = next((e for e in reversed(self._queue) if not e[2] and e is not self._queue[0]),
                          None)
            if victim is None:
                break
            self._queue.remove(victim)
            self._pending -= victim[1]
            self.counts["dropped"] += victim[1]
            self.last_refusal = (f"{victim[1]} queued transform(s) dropped: more than "
                                 f"{self.MAX_PENDING} waiting")

    def work(self, seconds: float | None = None) -> bool:
        """Read queued transforms for up to ``seconds`` (default :attr:`SLICE_SECONDS`; at
        least one); returns True while some are left. Its CPU time (that of the calling thread:
        what it kept from other callbacks, without the time other processes took) counts in
        :attr:`longest_slice`."""
        if not self._queue:
            return False
        cpu = time.thread_time()
        end = time.perf_counter() + (self.SLICE_SECONDS if seconds is None else seconds)
        now = self.now()
        while self._queue:
            entry = self._queue[0]
            try:
                item = next(entry[0])
            except StopIteration:
                item = None
            except ValueError as err:
                self.counts["invalid"] += 1
                self.last_refusal = str(err)
                item = None
            if item is None:  # the message is done (or broken): the rest of it is skipped
                self._pending -= entry[1]
                self._queue.popleft()
                continue
            entry[1] -= 1
            self._pending -= 1
            self._take(item, entry[2], now)
            if time.perf_counter() >= end:
                break
        self.longest_slice = max(self.longest_slice, time.thread_time() - cpu)
        return bool(self._queue)

    def _take(self, item, static: bool, now: float) -> None:
        parent, child, q, t, stamp = item
        parent, child = parent.lstrip("/"), child.lstrip("/")
        why = _invalid(parent, child, q, t, stamp)
        if why:
            self.counts["invalid"] += 1
            self.last_refusal = f"transform {parent!r} <- {child!r}: {why}"
            return
        if not static and stamp > now + self.future_tolerance:
            self.counts["future"] += 1
            self.last_refusal = (f"transform {parent!r} <- {child!r} is stamped {stamp - now:.3f} s "
                                 f"in the future (tolerance {self.future_tolerance:g} s)")
            return
        if child not in self._frames:
            if len(self._frames) >= self.MAX_FRAMES:
                self.counts["frames"] += 1
                self.last_refusal = (f"transform {parent!r} <- {child!r}: more than "
                                     f"{self.MAX_FRAMES} frames")
                return
            self._frames.add(child)
        self.store(parent, child, q, t, stamp, static)
        self.counts["stored"] += 1

    def clear(self) -> None:
        """Forget the queued transforms (the clock jumped back: their stamps lie ahead)."""
        self._queue.clear()
        self._pending = 0


def _invalid(parent: str, child: str, q, t, stamp: float) -> str:
    """Why a transform cannot be stored ('' when it can)."""
    if not parent or not child:
        return "empty frame name"
    if parent == child:
        return "a frame cannot be its own parent"
    if not all(math.isfinite(v) for v in (*q, *t, stamp)):
        return "non-finite value"
    if q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3] < 1e-18:
        return "zero quaternion"
    return ""
