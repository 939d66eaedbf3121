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


def serve(r: RateLimiter, arrivals, cycle: float) -> list:
    """A single-threaded node in front of ``r``: joint states arrive at ``arrivals`` (s,
    increasing) and are taken in order as soon as the node is free (intake costs nothing); a
    deferred evaluation runs at ``r.next_time()`` (the node's deferred timer); every evaluation
    takes ``cycle`` seconds. Returns the times the evaluations began."""
    inf = float("inf")
    free, i, began = -inf, 0, []
    while i < len(arrivals) or r.pending:
        wake = r.next_time() if r.pending else inf
        nxt = arrivals[i] if i < len(arrivals) else inf
        if nxt <= wake:
            t = max(nxt, free)
            i += 1
            r.request(t)
        else:
            t = max(wake, free)
        if r.due(t):
            r.mark(t)
            r.account(cycle)
            began.append(t)
            free = t + cycle
    return began


def test_busy_bucket_size():
    """80 % of a 50 ms window: 40 ms of cycles when full."""
    r = RateLimiter(0.0)
    assert r.MAX_BUSY_FRACTION == 0.8 and r.BUSY_WINDOW == 0.05
    assert r.busy_capacity == pytest.approx(0.04) and r.busy_credit(0.0) == pytest.approx(0.04)


def test_a_burst_after_a_stall_is_answered_message_by_message():
    """No cap, cycles of 0.5 ms. 1 kHz input for 100 ms keeps the busy bucket full (0.5 ms
    spent, 0.8 ms earned per message); then a 20 ms stall: the 21 states of 100..120 ms all
    arrive at 120 ms. Back to back they take 10.5 ms and earn 8.4 ms: the bucket (40 ms) pays
    the difference, so every one is evaluated and none coalesces (a spacing of cycle / 0.8
    after each cycle coalesced most of them)."""
    r = RateLimiter(0.0)
    arrivals = ([0.001 * k for k in range(100)] + [0.12] * 21
                + [0.001 * k for k in range(121, 200)])
    began = serve(r, arrivals, 0.0005)
    assert len(began) == 200 and r.coalesced == 0 and r.requests == 200
    assert began[100:121] == pytest.approx([0.12 + 0.0005 * k for k in range(21)])
    # the states of 121.. ms waited for the burst (taken from 130.5 ms, 0.5 ms apart) and the
    # node catches up half a ms per ms: the last state (199 ms) is answered on arrival
    assert began[121] == pytest.approx(0.1305) and began[-1] == pytest.approx(0.199)


def test_busy_share_stays_under_the_fraction_over_a_long_run():
    """No cap, cycles of 2 ms against 1 kHz input for 1 s. The full bucket (40 ms) pays 0.4 ms
    of each back-to-back cycle (2 ms spent, 1.6 ms earned): 100 cycles from 0 to 200 ms. From
    then on each 2 ms cycle waits for its 0.4 ms debt to be earned back, 0.5 ms: one cycle per
    2.5 ms, at 0.2 + 0.0025 j up to j = 320 (1.0 s: the last state, of 0.999 s, is pending).
    So 100 + 321 = 421 evaluations: 842 ms of cycles in 1.002 s, under 80 % of it plus the
    bucket and one cycle (843.6 ms). Every state is evaluated or counted as coalesced."""
    r = RateLimiter(0.0)
    began = serve(r, [0.001 * k for k in range(1000)], 0.002)
    assert began[:100] == pytest.approx([0.002 * k for k in range(100)])
    assert began[100:] == pytest.approx([0.2 + 0.0025 * j for j in range(321)], abs=2e-6)
    assert len(began) * 0.002 <= 0.8 * (began[-1] + 0.002) + 0.04 + 0.002
    assert r.requests == 1000 == len(began) + r.coalesced


def test_a_long_cycle_is_paid_back_at_the_fraction():
    """Full bucket (40 ms), a 100 ms cycle at 0: 60 ms of debt, earned back at 0.8 s/s by
    75 ms, before the cycle ended: the state waiting at 100 ms runs at once (a spacing of
    cycle / 0.8 held it to 125 ms). A second 100 ms cycle from 100 ms (20 ms earned: 80 ms of
    debt after it) is paid back 80 / 0.8 = 100 ms after it began: nothing runs before 200 ms."""
    r = RateLimiter(0.0)
    r.request(0.0)
    r.mark(0.0)
    r.account(0.1)
    assert r.busy_credit(0.0) == pytest.approx(-0.06)
    r.request(0.1)
    assert r.due(0.1)
    r.mark(0.1)
    r.account(0.1)
    assert r.busy_credit(0.1) == pytest.approx(-0.08)
    r.request(0.19)
    assert not r.due(0.199) and r.next_time() == pytest.approx(0.2) and r.due(0.2)


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
