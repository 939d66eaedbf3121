"""Rate cap and warning throttle (monitor/scheduling.py), against hand-written schedules."""

from __future__ import annotations

import pytest

from ambf_collision.monitor.scheduling import RateLimiter, WarningThrottle


def test_rate_limiter_alone():
    """10 Hz: a bucket of 2 (the minimum burst). Two evaluations back to back empty it; the
    next token comes 100 ms after the second."""
    r = RateLimiter(10.0)
    assert r.burst == 2 and r.period == pytest.approx(0.1)
    r.request(0.0)
    assert r.due(0.0)
    r.mark(0.0)
    r.request(0.0)
    assert r.due(0.0)  # the second token
    r.mark(0.0)
    r.request(0.05)
    assert not r.due(0.05) and r.deferred == 1 and r.next_time() == pytest.approx(0.1)
    assert r.due(0.1)


def test_input_within_the_cap_is_answered_message_by_message_even_when_bunched():
    """1 kHz cap (bucket of 10): 1 kHz input that arrives in bunches of 5 every 5 ms (a
    publisher catching up) is evaluated message by message: nothing coalesces."""
    r = RateLimiter(1000.0)
    assert r.burst == 10
    for k in range(200):
        t = 0.005 * (k // 5) + 1e-6 * (k % 5)
        r.request(t)
        assert r.due(t), k
        r.mark(t)
    assert r.coalesced == 0 and r.deferred == 0


def test_input_above_the_cap_is_held_to_the_cap():
    """2 kHz input against a 1 kHz cap for 1 s: after the bucket of 10 is used up, every other
    message waits for its token; one evaluation per ms on average (the bucket plus 1000)."""
    r = RateLimiter(1000.0)
    n_eval = 0
    for k in range(2000):
        t = 0.0005 * k
        r.request(t)
        if r.due(t):
            r.mark(t)
            n_eval += 1
    assert n_eval == pytest.approx(1000 + 10, abs=2)
    assert r.coalesced + r.deferred + n_eval >= 2000 - 1


def test_busy_budget_spaces_slow_cycles():
    """No cap (max_rate 0), cycles of 2 ms: the next may start 2 / 0.8 = 2.5 ms after the
    previous began, so 1 kHz input is answered every 3rd ms (the others coalesce)."""
    r = RateLimiter(0.0)
    assert r.MAX_BUSY_FRACTION == 0.8
    r.request(0.0)
    r.mark(0.0)
    r.account(0.002)
    r.request(0.001)
    r.request(0.002)
    assert not r.due(0.002) and r.coalesced == 1
    assert r.next_time() == pytest.approx(0.0025) and r.due(0.0025)


def test_rate_limiter_follows_a_changed_max_rate():
    """4 Hz after the bucket is used: the next token 250 ms on; 0 (no cap) allows at once."""
    lim = RateLimiter(4.0)
    for _ in range(2):
        lim.request(1.0)
        lim.mark(1.0)
    lim.request(1.05)
    assert not lim.due(1.05) and lim.next_time() == pytest.approx(1.25)
    lim.max_rate = 0.0
    assert lim.period == 0.0 and lim.due(1.05)
    lim.mark(1.05)
    lim.max_rate = 10.0
    lim.request(1.1)
    assert lim.period == pytest.approx(0.1) and lim.due(1.1)


def test_reset_after_a_clock_jump_back_allows_at_once():
    """Evaluated twice at 106 s (bucket empty); the clock jumps back to 50 s: without reset the
    next token would come at 106.1 s, 56 s away."""
    lim = RateLimiter(10.0)
    for _ in range(2):
        lim.request(106.0)
        lim.mark(106.0)
    lim.account(0.01)
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
