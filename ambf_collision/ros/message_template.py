"""A serialized message used as a template: each cycle writes its numbers in place.

For a message whose layout (its strings and sequence lengths) stays the same over many cycles
while its numbers change, such as the RViz markers of one model. Per cycle the numbers are written
with NumPy into the bytes rclpy serialized once, and the bytes are published raw
(``publisher.publish(bytes)``). rclpy's own serializer decides the layout:

* the caller builds the message twice: once with every number it will patch set to 0, and once
  with each set to a distinct sentinel;
* the bytes that differ between the two serializations are the slots, and the sentinel read
  in each slot says which number goes there.

Patched numbers are float64 (points, poses, scales), float32 (colours) and the stamps of headers.
Sentinels: float64 number ``j`` is ``2**40 + r64 + j``, float32 number ``j`` is ``2**23 + r32 +
j``; both are exact and unlike any value in metres, unit quaternions or colours in [0, 1]. A stamp
is ``STAMP_SENTINEL``. The offsets ``r64 < 2**30`` and ``r32 < 2**22`` are drawn at random per
template: rclpy leaves CDR padding unset, so a padding byte can hold a stale sentinel of an
earlier serialization, and a word of real bytes and such padding could otherwise read as a slot
(and be overwritten on fill). A number may fill several slots (one colour for two markers), but every
number must be found, or the template is refused.

Each template is checked once before use, against rclpy itself: filled with random numbers and
read back by ``deserialize_message``, it must equal the message built with the same numbers, field
by field (padding bytes are not compared: the serializer leaves them unset). A template that fails
(a false slot, or a message with a number derived from another) is drawn again with new offsets,
and refused after ``ATTEMPTS`` draws.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message

__all__ = ["MessageTemplate", "STAMP_SENTINEL"]

ATTEMPTS = 3  # draws of the sentinel offsets before a template that does not read back is refused

F64_BASE = 2.0 ** 40
F32_BASE = 2.0 ** 23
STAMP_SENTINEL = (1_515_151_515, 515_151_515)  # (sec, nanosec)


class MessageTemplate:
    """The serialized bytes of ``build(v64, v32, stamp)``, refilled by :meth:`fill`.

    ``build(v64 (n64,), v32 (n32,), (sec, nanosec))`` must return the message with float64
    number ``j`` equal to ``v64[j]``, float32 number ``j`` equal to ``v32[j]``, and every stamp
    to patch equal to ``(sec, nanosec)``; all else the same whatever the arguments. It is called
    three times per draw, here only. ValueError when no draw reads back as ``build`` does.
    """

    def __init__(self, build: Callable, n64: int, n32: int):
        rng = np.random.default_rng()
        for _ in range(ATTEMPTS):
            self._draw(build, n64, n32, rng)
            if self._reads_back(build, n64, n32, rng):
                return
        raise ValueError(f"MessageTemplate: the filled bytes did not read back as the message "
                         f"in {ATTEMPTS} draws (a number derived from another?)")

    def _draw(self, build: Callable, n64: int, n32: int, rng) -> None:
        """The slots found with sentinels drawn at a random offset."""
        base64 = F64_BASE + float(rng.integers(0, 2 ** 30))
        base32 = F32_BASE + float(rng.integers(0, max(2 ** 22 - n32, 1)))
        zero = serialize_message(build(np.zeros(n64), np.zeros(n32), (0, 0)))
        mark = serialize_message(build(base64 + np.arange(n64), base32 + np.arange(n32),
                                       STAMP_SENTINEL))
        if len(zero) != len(mark):
            raise ValueError("MessageTemplate: the layout changed with the numbers")
        self._size = len(mark)
        # raw[8 + x] is body byte x (after the 4-byte encapsulation): a body offset that is a
        # multiple of 8 (CDR's float64 alignment) is then 8-aligned in memory
        self._raw = np.zeros(8 + 8 * (-(-(self._size - 4) // 8)), np.uint8)
        self._raw[4:4 + self._size] = np.frombuffer(mark, np.uint8)
        self._f64 = self._raw[8:].view(np.float64)
        self._f32 = self._raw[8:].view(np.float32)
        self._u32 = self._raw[8:].view(np.uint32)
        before = np.zeros_like(self._raw)
        before[4:4 + self._size] = np.frombuffer(zero, np.uint8)
        changed64 = before[8:].view(np.float64) != self._f64
        changed32 = before[8:].view(np.uint32) != self._u32
        self._at64, self._j64 = _slots(changed64, self._f64, base64, n64, "float64")
        self._at32, self._j32 = _slots(changed32, self._f32, base32, n32, "float32")
        u, (sec, nanosec) = self._u32, STAMP_SENTINEL
        self._isec = np.flatnonzero(changed32[:-1] & (u[:-1] == sec) & (u[1:] == nanosec))

    def _reads_back(self, build: Callable, n64: int, n32: int, rng) -> bool:
        """Whether the template filled with random numbers reads back as the message built with
        them (float32 numbers drawn exact in float32)."""
        v64 = rng.normal(scale=10.0, size=n64)
        v32 = rng.random(n32).astype(np.float32)
        sec, nanosec = int(rng.integers(1, 2 ** 31 - 1)), int(rng.integers(0, 10 ** 9))
        direct = build(v64, v32.astype(np.float64), (sec, nanosec))
        kind = type(direct)
        filled = self.fill(v64, v32, sec, nanosec)
        return deserialize_message(filled, kind) == deserialize_message(
            serialize_message(direct), kind)

    @property
    def stamps(self) -> int:
        """How many stamps each :meth:`fill` writes."""
        return len(self._isec)

    def fill(self, v64, v32, sec: int, nanosec: int) -> bytes:
        """The serialized message with float64 numbers ``v64 (n64,)``, float32 numbers ``v32
        (n32,)`` and every stamp ``(sec, nanosec)`` (sec >= 0)."""
        self._f64[self._at64] = v64[self._j64]
        self._f32[self._at32] = v32[self._j32]
        self._u32[self._isec] = sec
        self._u32[self._isec + 1] = nanosec
        return self._raw[4:4 + self._size].tobytes()


def _slots(changed, values, base: float, n: int, what: str):
    """``(slots, numbers)``: the word indices where a sentinel ``base + j`` was written, and
    each one's ``j``; every ``j`` in ``0..n-1`` must be among them."""
    at = np.flatnonzero(changed & (values >= base) & (values < base + n))
    j = (values[at] - base).astype(np.int64)
    if not np.array_equal(np.unique(j), np.arange(n)):
        raise ValueError(f"MessageTemplate: {len(np.unique(j))} of {n} {what} numbers found")
    return at, j
