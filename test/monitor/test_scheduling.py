"""Rate cap and warning throttle (monitor/scheduling.py), against hand-written schedules."""

from __future__ import annotations

import pytest

from ambf_collision.monitor.scheduling import RateLimiter, WarningThrottle


def test_rate_limiter_alone():
    r = RateLimiter(10.0)
    r.request(0.0)
    assert r.due(0.0)
    r.mark(0.0)
    r.request(0.05)
    assert not r.due(0.05) and r.next_time() == pytest.approx(0.1) and r.due(0.1)


def test_rate_limiter_follows_a_changed_max_rate():
    """10 Hz defers a request 50 ms after an evaluation, 0 (no cap) allows it, 4 Hz puts the
    slot 250 ms on."""
    lim = RateLimiter(10.0)
    assert lim.period == 0.1
    lim.request(1.0)
    lim.mark(1.0)
    lim.request(1.05)
    assert not lim.due(1.05) and lim.next_time() == pytest.approx(1.1) and lim.deferred == 1
    lim.max_rate = 0.0
    assert lim.period == 0.0 and lim.due(1.05)
    lim.mark(1.05)
    lim.max_rate = 4.0
    lim.request(1.1)
    assert lim.period == 0.25 and not lim.due(1.1) and lim.next_time() == pytest.approx(1.3)


def test_late_slot_does_not_push_the_next_one_back():
    lim = RateLimiter(10.0)
    lim.request(0.0)
    lim.mark(0.0)
    lim.request(0.13)  # 30 ms late for the 0.1 slot: the slot is used, the next stays at 0.2
    lim.mark(0.13)
    lim.request(0.2)
    assert lim.due(0.2)


def test_reset_after_a_clock_jump_back_allows_at_once():
    """Evaluated at 106 s; the clock jumps back to 50 s: without reset the next slot would be
    at 106.1 s, 56 s away."""
    lim = RateLimiter(10.0)
    lim.request(106.0)
    lim.mark(106.0)
    lim.request(50.0)
    assert not lim.due(50.0) and lim.pending
    lim.reset()
    assert lim.due(50.0)


def test_warning_throttle_one_per_reason_per_period():
    w = WarningThrottle(5.0)
    assert w("x", "first", 0.0) == "first"
    assert w("x", "again", 1.0) is None and w("x", "again", 4.9) is None
    assert w("y", "other", 1.0) == "other"
    assert w("x", "later", 5.0) == "later (2 similar suppressed)"


def test_warning_throttle_reset_lets_the_next_one_through():
    w = WarningThrottle(5.0)
    assert w("x", "at 106", 106.0) == "at 106"
    assert w("x", "at 50", 50.0) is None  # 106 lies in the future of the new clock
    w.reset()
    assert w("x", "after reset", 50.0) == "after reset (1 similar suppressed)"
