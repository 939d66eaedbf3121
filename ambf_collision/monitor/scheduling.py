"""When the monitor evaluates and what it logs: the rate cap and the warning throttle (no ROS).

All times are plain floats in seconds on one clock (the node's: ROS time, or sim time). After the
clock jumped back (a bag loop, a simulator reset) both are :meth:`reset`, since every time they
remember lies in the new clock's future.
"""

from __future__ import annotations

import math

__all__ = ["RateLimiter", "WarningThrottle"]


class RateLimiter:
    """At most ``max_rate`` evaluations per second on average.

    Evaluations are given slots ``1 / max_rate`` s apart; a slot used late (by less than one
    period) does not push the next slot back, so clock jitter of the input does not lower the rate.
    ``request()`` marks an evaluation as wanted; ``due(now)`` tells whether it may run now;
    ``next_time()`` when a deferred one may run. Requests made while one is pending coalesce into
    it (counted in ``coalesced``); none is dropped.
    """

    TOLERANCE = 1e-6  # s: clock rounding allowed when comparing with a slot

    def __init__(self, max_rate: float = 0.0):
        self.max_rate = float(max_rate)
        self.pending = False
        self.last = -math.inf
        self.requests = 0
        self.coalesced = 0
        self.deferred = 0

    @property
    def max_rate(self) -> float:
        """Cap on evaluations per second (Hz); 0 means no cap."""
        return self._max_rate

    @max_rate.setter
    def max_rate(self, value: float) -> None:
        self._max_rate = float(value)
        self._period = 1.0 / self._max_rate if self._max_rate > 0.0 else 0.0

    @property
    def period(self) -> float:
        """Minimum spacing between evaluations (s); 0 without a cap."""
        return self._period

    def request(self, now: float) -> None:
        """Ask for an evaluation at ``now`` (coalesces with one already pending)."""
        self.requests += 1
        if self.pending:
            self.coalesced += 1
        elif now < self.last + self._period - self.TOLERANCE:
            self.deferred += 1
        self.pending = True

    def due(self, now: float) -> bool:
        """True when an evaluation is pending and allowed at ``now``."""
        return self.pending and now >= self.last + self._period - self.TOLERANCE

    def next_time(self) -> float | None:
        """When the pending evaluation may run (s), or None when nothing is pending."""
        return self.last + self._period if self.pending else None

    def mark(self, now: float) -> None:
        """Record an evaluation at ``now``; clears the pending request."""
        self.pending = False
        period = self._period
        slot = self.last + period
        on_time = period > 0.0 and slot - self.TOLERANCE <= now < slot + period
        self.last = slot if on_time else float(now)

    def reset(self) -> None:
        """Forget the last evaluation time (the clock jumped back); a pending request stays."""
        self.last = -math.inf


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
