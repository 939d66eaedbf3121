"""The node under load (issue 15 #1, #5, #8 and the harness's "flood" and "soak" classes): floods,
/diagnostics and the heartbeat while it works, memory afterwards, and a shortened soak (the long
one: bench/bench_soak.py).

Joint states come from a separate publisher process (flood_publisher.py), so that the test's own
Python does not limit the rate. Expectations: the demo arm's hand-derived distances
(test_node_full.py): at home the closest pair is 0.1 m apart, at the touch pose the fingertip is
1 mm into the floor.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import DEMO_ARM
from ros_harness import (NodeProcess, Received, diagnostics_of, domain, peer,  # noqa: F401
                         rss_mb)

from ambf_collision.msg import ContactArray
from rclpy.qos import QoSProfile

pytestmark = [pytest.mark.dds, pytest.mark.slow]

NS = "/collision_monitor"
T1 = -math.acos(0.46)
TOUCH = [0.0, T1, -math.pi - T1, 0.0]
FLOOD = Path(__file__).with_name("flood_publisher.py")
HEARTBEAT_DEMO = 2.0  # Hz: config/demo.yaml's heartbeat_rate


class Flood:
    """flood_publisher.py as a child process on ``domain``."""

    def __init__(self, domain, *args):
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
        self.proc = subprocess.Popen([sys.executable, str(FLOOD), *map(str, args)], env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout.readline().strip() == "READY"

    def end_flood(self):
        """(``--until-told``) Ends the flood: the last message goes out, and is repeated until
        :meth:`result`; returns ``(messages sent, stamp of the last one in s)``."""
        self.proc.stdin.write("STOP\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline().split()
        assert line and line[0] == "LAST", (line, self.proc.stderr.read())
        return int(line[1]), int(line[2]) * 1e-9

    def result(self, timeout=120.0):
        """``(messages sent, stamp of the last one in s)``."""
        out, err = self.proc.communicate("" if self.proc.stdin.closed else "DONE\n",
                                         timeout=timeout)
        line = [ln for ln in out.splitlines() if ln.startswith("SENT")]
        assert line, err
        _, n, stamp = line[-1].split()
        return int(n), int(stamp) * 1e-9

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def _stamp(m):
    return m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec


def _no_nan(diags):
    for _, _, message, values in diags:
        text = message + " ".join(f"{k} {v}" for k, v in values.items())
        assert "nan" not in text.lower(), text


def test_a_flood_is_coalesced_the_newest_state_answered_and_memory_stays_bounded(domain, peer):
    """Two floods of as-fast-as-possible joint states, each ending with the touch pose. The node
    answers the last message (its stamp, the -1 mm contact), counts the coalesced ones in
    /diagnostics, and its memory after the second flood is within 5 MB of after the first:
    bounded, not growing per flood. Before: RSS rose 84.7 -> 107.9 MB and stayed.

    Bounded by counts, not by wall time: each flood lasts until the node's /diagnostics count
    1000 more good joint states and more coalesced ones (3 s of flood gave 22,000 on an idle
    machine and 1,600 on a busy one: the old `> 1000` then failed), and the last state is sent
    again until the node answers it (a best-effort copy may be lost while the node is starved).
    The node's glibc malloc keeps at most 2 arenas (MALLOC_ARENA_MAX): glibc opens a new one
    each time a thread finds its arena locked, which a busy machine makes likelier; each costs
    RSS once, bounded, not per message, and moved the figure by up to 4.3 MB between two floods
    (0.1 MB with the cap)."""
    from diagnostic_msgs.msg import DiagnosticArray

    # joint_state_timeout 5 s: this test is about coalescing, not staleness. With the default
    # 0.5 s a loaded 2-core machine may reach the last message, or let the peer read it, only
    # after the state has aged into STALE (CI saw status 2 once).
    node = NodeProcess(domain, {"adf_files": [str(DEMO_ARM)], "heartbeat_rate": 5.0,
                                "diagnostics_period": 0.5, "joint_state_timeout": 5.0},
                       env={"MALLOC_ARENA_MAX": "2"})
    floods = []
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        assert peer.spin_until(lambda: contacts.msgs and diags.msgs, timeout=30.0)
        rss = [rss_mb(node.proc.pid)]

        def counts():
            values = diagnostics_of(diags.msgs)[-1][3]
            return int(values["joint_states_good"]), int(values["coalesced"])

        for _ in range(2):
            good0, coalesced0 = counts()
            flood = Flood(domain, "--rate", 0, "--until-told", "--last",
                          ",".join(map(str, TOUCH)))
            floods.append(flood)
            # the timeout only bounds a failure
            assert peer.spin_until(lambda: counts()[0] >= good0 + 1000
                                   and counts()[1] > coalesced0, timeout=300.0), counts()
            n, last = flood.end_flood()
            assert peer.spin_until(lambda: contacts.last and abs(_stamp(contacts.last) - last)
                                   < 1e-6, timeout=60.0), (last, _stamp(contacts.last))
            flood.result()
            m = next(c for c in contacts.msgs if abs(_stamp(c) - last) < 1e-6)  # the answer
            assert m.status == ContactArray.STATUS_OK
            assert any(abs(c.distance + 0.001) < 1e-9 for c in m.contacts)
            peer.spin_for(1.5)
            rss.append(rss_mb(node.proc.pid))
        got = diagnostics_of(diags.msgs)
        _no_nan(got)
        values = got[-1][3]
        assert int(values["coalesced"]) > 0 and int(values["joint_states_good"]) > 1000, values
        assert rss[2] - rss[1] < 5.0, rss
        assert rss[2] - rss[0] < 40.0, rss
    finally:
        for f in floods:
            f.kill()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


def test_diagnostics_one_per_period_and_heartbeat_at_its_rate_under_load(domain, peer):
    """1 kHz of the moving demo script for 6 s with a 0.5 s diagnostics period: one message per
    period (stamps 0.5 s apart within a quarter period, never two with one stamp), no NaN in any
    string. Before: bursts of 2-12 messages with one stamp, gaps up to 19 s, 'nan' values. Then,
    without joint states, the 100 Hz heartbeat (the range's top) keeps coming, never faster."""
    from diagnostic_msgs.msg import DiagnosticArray

    node = NodeProcess(domain, {"adf_files": [str(DEMO_ARM)], "heartbeat_rate": 100.0,
                                "diagnostics_period": 0.5})
    flood = None
    try:
        contacts = Received(peer, ContactArray, NS + "/contacts")
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        assert peer.spin_until(lambda: contacts.msgs and diags.msgs, timeout=30.0)
        flood = Flood(domain, "--rate", 1000, "--seconds", 6.0, "--trajectory")
        t0 = time.monotonic()
        while flood.proc.poll() is None:
            peer.spin_for(0.05)
        t1 = time.monotonic()
        flood.result()
        window = [d for d, t in zip(diags.msgs, diags.times) if t0 + 0.5 <= t <= t1]
        got = diagnostics_of(window)
        _no_nan(diagnostics_of(diags.msgs))
        stamps = [g[0] for g in got]
        steps = [b - a for a, b in zip(stamps, stamps[1:])]
        assert len(got) >= (t1 - t0 - 1.0) / 0.5 - 1, (len(got), t1 - t0)
        assert all(0.375 <= s <= 0.625 for s in steps), steps
        assert int(got[-1][3]["evaluations"]) > 0
        # heartbeat: no joint states now (the status turns STALE); 100 Hz over 2 s
        peer.spin_for(1.0)
        t2 = time.monotonic()
        peer.spin_for(2.0)
        n = len(contacts.since(t2))
        # never above the rate (no bunching); at least half of it: a 100 Hz Python timer on this
        # shared 2-CPU machine gave 115 in 2 s once during the full suite (190-200 alone)
        assert 100 <= n <= 230, n
    finally:
        if flood is not None:
            flood.kill()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err


def test_short_soak_stays_bounded(domain, peer):
    """The harness's soak, shortened for CI: 25 s of the moving demo script at 500 Hz with the
    demo's parameters (markers on, a subscriber to them). No gap in ~/contacts of two heartbeat
    periods, /diagnostics regular and without NaN, memory flat over the last 15 s, and the last
    state answered."""
    from diagnostic_msgs.msg import DiagnosticArray
    from visualization_msgs.msg import MarkerArray

    from conftest import REPO

    node = NodeProcess(domain, {}, extra_args=["--params-file", str(REPO / "config" / "demo.yaml")])
    flood = None
    try:
        # a deep reader history: DDS keeps taking ~/contacts while this process is held up
        contacts = Received(peer, ContactArray, NS + "/contacts", qos=QoSProfile(depth=50_000))
        diags = Received(peer, DiagnosticArray, "/diagnostics")
        markers = Received(peer, MarkerArray, NS + "/markers")
        assert peer.spin_until(lambda: contacts.msgs and diags.msgs, timeout=30.0)
        flood = Flood(domain, "--rate", 500, "--seconds", 25.0, "--trajectory", "--last",
                      ",".join(map(str, TOUCH)))
        t0 = time.monotonic()
        rss = []
        while flood.proc.poll() is None:
            peer.spin_for(0.5)
            rss.append((time.monotonic() - t0, rss_mb(node.proc.pid)))
        t1 = time.monotonic()
        n, last = flood.result()
        assert peer.spin_until(lambda: abs(_stamp(contacts.last) - last) < 1e-6, timeout=10.0)
        # no gap of two periods of the demo's 2 Hz heartbeat, on the node's side: between the
        # stamps of its answers (joint-state stamps, or the heartbeat's time; one wall clock).
        # Arrival times here measured this process instead: under the full suite it was held
        # up for 1.1-1.4 s while the node kept publishing.
        stamps = sorted({_stamp(m) for m in contacts.since(t0)})
        gaps = [b - a for a, b in zip(stamps, stamps[1:]) if a <= last]
        assert stamps and max(gaps) < 2.0 / HEARTBEAT_DEMO, max(gaps)
        got = diagnostics_of(diags.since(t0))
        _no_nan(got)
        steps = [b[0] - a[0] for a, b in zip(got, got[1:])]
        assert steps and all(0.75 <= s <= 1.25 for s in steps), steps
        late = [r for t, r in rss if t > 10.0]
        assert max(late) - min(late) < 3.0, rss
        assert len(markers.since(t0)) >= 5 * (t1 - t0)  # markers kept coming (20 Hz cap)
    finally:
        if flood is not None:
            flood.kill()
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
