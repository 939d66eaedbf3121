"""When the monitor evaluates and what it logs: the rate cap and the warning throttle (no ROS).

All times are plain floats in seconds on one clock (the node's: ROS time, or sim time). After the
clock jumped back (a bag loop, a simulator reset) both are :meth:`reset`, since every time they
remember lies in the new clock's future.
"""

from __future__ import annotations

import math

__all__ = ["RateLimiter", "WarningThrottle"]


class RateLimiter:
    """At most ``max_rate`` evaluations per second on average, and never more than
    :attr:`MAX_BUSY_FRACTION` of the time spent evaluating.

    A token bucket: tokens accrue at ``max_rate`` per second up to :attr:`burst`; an
    evaluation takes one. So input that is on average within the cap is answered message by
    message even when it arrives bunched (a publisher or the network catching up after a stall),
    while faster input is held to ``max_rate``. ``request()`` marks an evaluation as wanted;
    ``due(now)`` tells whether it may run now; ``next_time()`` when a deferred one may run.
    Requests made while one is pending coalesce into it (counted in ``coalesced``: those joint
    states get no output of their own; the newest is always evaluated); none is dropped.

    ``account(seconds)``: the caller reports how long the cycle marked last took (evaluation and
    publishing). A second bucket holds busy time: it fills at :attr:`MAX_BUSY_FRACTION` seconds
    per second up to :attr:`busy_capacity` (that share of :attr:`BUSY_WINDOW`) and each cycle
    takes its duration from it; a cycle may begin while the bucket is not in debt. So a burst
    after a stall (joint states that queued while the node or the machine was busy elsewhere) is
    answered message by message for up to ``busy_capacity / (1 - MAX_BUSY_FRACTION)`` seconds of
    back-to-back work, while over any longer time the share spent evaluating stays under
    ``MAX_BUSY_FRACTION`` (plus one bucket and one cycle). When evaluations cost more than the
    input's period allows (a slow or loaded machine), joint states then coalesce instead of
    queueing without bound in front of the evaluation, and the rest of the time stays free for
    joint-state intake, timers and services.
    """

    TOLERANCE = 1e-6  # s: clock rounding allowed when comparing with a slot
    BURST_WINDOW = 0.01  # s of evaluations at max_rate that may run back to back (>= 2)
    MAX_BUSY_FRACTION = 0.8  # largest share of the time spent in evaluation cycles
    BUSY_WINDOW = 0.05  # s: the busy bucket holds MAX_BUSY_FRACTION of this (40 ms of cycles)

    def __init__(self, max_rate: float = 0.0):
        self.pending = False
        self.requests = 0
        self.coalesced = 0
        self.deferred = 0
        self.max_rate = max_rate
        self.reset()

    @property
    def max_rate(self) -> float:
        """Cap on evaluations per second (Hz); 0 means no cap."""
        return self._max_rate

    @max_rate.setter
    def max_rate(self, value: float) -> None:
        self._max_rate = float(value)
        self._period = 1.0 / self._max_rate if self._max_rate > 0.0 else 0.0
        self.burst = max(2.0, math.ceil(self._max_rate * self.BURST_WINDOW))

    @property
    def period(self) -> float:
        """Spacing of evaluations at the cap (s); 0 without a cap."""
        return self._period

    def _tokens(self, now: float) -> float:
        if self._period == 0.0:
            return math.inf
        return min(self.burst, self._tokens_at + (now - self._tokens_time) / self._period)

    def _earliest(self) -> float:
        """When the next evaluation is allowed (s): a whole token and the busy budget."""
        token_time = (self._tokens_time + (1.0 - self._tokens_at) * self._period
                      if self._period and self._tokens_at < 1.0 else -math.inf)
        busy_time = (self._busy_time - self._busy_at / self.MAX_BUSY_FRACTION
                     if self._busy_at < 0.0 else -math.inf)
        return max(token_time, busy_time)

    @property
    def busy_capacity(self) -> float:
        """Seconds of cycles the busy bucket holds when full."""
        return self.MAX_BUSY_FRACTION * self.BUSY_WINDOW

    def busy_credit(self, now: float) -> float:
        """Seconds of cycles the busy bucket holds at ``now`` (negative: in debt, no cycle may
        begin)."""
        return min(self.busy_capacity,
                   self._busy_at + (now - self._busy_time) * self.MAX_BUSY_FRACTION)

    def request(self, now: float) -> None:
        """Ask for an evaluation at ``now`` (coalesces with one already pending)."""
        self.requests += 1
        if self.pending:
            self.coalesced += 1
        elif now < self._earliest() - self.TOLERANCE:
            self.deferred += 1
        self.pending = True

    def due(self, now: float) -> bool:
        """True when an evaluation is pending and allowed at ``now``."""
        return self.pending and now >= self._earliest() - self.TOLERANCE

    def next_time(self) -> float | None:
        """When the pending evaluation may run (s), or None when nothing is pending."""
        return max(self._earliest(), self._last) if self.pending else None

    def mark(self, now: float) -> None:
        """Record an evaluation cycle beginning at ``now``; clears the pending request."""
        self.pending = False
        tokens = self._tokens(now)
        if math.isfinite(tokens):
            self._tokens_at = max(tokens, 1.0) - 1.0
            self._tokens_time = float(now)
        if now > self._busy_time:
            self._busy_at = self.busy_credit(now)
            self._busy_time = float(now)
        self._last = float(now)

    def account(self, seconds: float) -> None:
        """The cycle marked last took ``seconds`` (wall time of evaluation and publishing)."""
        if seconds > 0.0 and math.isfinite(seconds):
            self._busy_at -= seconds

    def reset(self) -> None:
        """Forget the past evaluations (the clock jumped back): full buckets; a pending
        request stays."""
        self._tokens_at = self.burst
        self._tokens_time = -math.inf
        self._busy_at = self.busy_capacity
        self._busy_time = -math.inf
        self._last = -math.inf


class WarningThrottle:
    """Lets one message per reason through every ``period`` seconds and counts the rest."""

    def __init__(self, period: float = 5.0):
        self.period = float(period)
        self._last: dict = {}
        self._suppressed: dict = {}

    def __call__(self, key: str, message: str, now: float) -> str | None:
        """The message to log now (with the count of suppressed repeats), or None."""
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return None
        self._last[key] = float(now)
        n = self._suppressed.pop(key, 0)
        return message if n == 0 else f"{message} ({n} similar suppressed)"

    def reset(self) -> None:
        """Forget when each reason was last logged (the clock jumped back)."""
        self._last.clear()
