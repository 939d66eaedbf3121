#!/usr/bin/env python3
"""The long soak of issue 15: the collision_monitor node as the demo runs it, fed joint states
at a fixed rate for minutes, over real DDS.

The node runs ``config/demo.yaml`` unchanged (demo arm + its probes, markers on, the default
``max_rate``), with a subscriber to ``~/markers`` as RViz would be. The publisher sends the
static contact pose of ``bench_latency`` (the fingertip 1 mm into the floor: a contact in every
answer) or the moving demo script, at ``--rate`` Hz for ``--minutes`` (default 1 kHz for 10
minutes), after ``latency_peers.WARM`` s of warm-up. The same three processes as
``bench_latency`` (its publisher and receiver; see its docstring): latency = wall clock at
receipt - stamp, one clock.

Reported per minute: joint states sent, lost (no ContactArray of their own), coalesced (the
node's ``/diagnostics`` counter over that minute: those that reached it and were merged into a
later evaluation), latency p50 / p99 / max (ms), node CPU share (all its threads, from
/proc/<pid>/task/*/schedstat) and node RSS at the minute's end. Over the run: RSS at start, end
and its maximum (sampled every second), the joint states the node received (``/diagnostics``
``joint_states_good``) against those published, and the ``/diagnostics`` periods: how many
messages came, the largest gap between two, and how many gaps exceeded twice the period.

    bench/bench_soak.py [--rate 1000] [--minutes 10 | --quick] [--pose static|moving]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import threading
import time

import numpy as np

from bench_latency import DEMO_CONFIG, REPO, shut_down, start_publisher
from latency_peers import WARM
from latency_receiver import Receiver
from process_stats import node_executable, process_cpu, process_tree, without_gc_pauses

DIAGNOSTICS_PERIOD = 1.0  # s: config/demo.yaml keeps the node's default
SAMPLE = 1.0  # s between RSS and CPU samples


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` (MB), from /proc/<pid>/status."""
    try:
        for line in open(f"/proc/{pid}/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("nan")


def follow_protocol(pub):
    """Tell the publisher process ``pub`` (``latency_peers.py``/``dvrk_peers.py publish``,
    waiting after ``READY``) to go, and read its protocol lines (``START``, ``END ...``,
    ``TOTAL n``) in a thread: ``(thread, lines)``, ``lines[word] = (wall s, rest)``; the thread
    ends after ``TOTAL``."""
    lines = {}

    def protocol():
        for line in pub.stdout:
            word, _, rest = line.strip().partition(" ")
            lines[word] = (time.time(), rest)
            if word == "TOTAL":
                return

    reader = threading.Thread(target=protocol, daemon=True)
    reader.start()
    pub.stdin.write("go\n")
    pub.stdin.flush()
    return reader, lines


def first_replies(chunks: list) -> tuple:
    """``(stamps, receipt times)`` (ns), one per stamp: its first ContactArray (a heartbeat
    after the last joint state repeats that stamp)."""
    if not chunks:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    r = np.concatenate(chunks)
    order = np.lexsort((r[:, 1], r[:, 0]))
    r = r[order]
    stamps, first = np.unique(r[:, 0], return_index=True)
    return stamps, r[first, 1]


def soak(rate: float, minutes: float, pose: str, domain: int) -> dict:
    """Run the node, the publisher and the receiver; returns the raw samples of the run."""
    seconds = minutes * 60.0
    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
    node = subprocess.Popen([node_executable(), "--ros-args", "--params-file", DEMO_CONFIG],
                            cwd=str(REPO), env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    pub = rx = None
    try:
        rx = Receiver(domain, markers=True)
        pub = start_publisher(rx, domain, env, [rate], seconds, pose, "node")
        pids = process_tree(node.pid)
        reader, lines = follow_protocol(pub)
        samples = []  # (wall s, node CPU s, runq wait s, RSS MB)
        chunks = []
        next_sample = 0.0
        with without_gc_pauses():  # a pause here would delay the replies it times
            while reader.is_alive():
                rx.executor.spin_once(timeout_sec=0.05)
                now = time.time()
                if now >= next_sample:
                    cpu, wait = process_cpu(pids)
                    samples.append((now, cpu, wait, rss_mb(node.pid)))
                    n = len(rx.replies)
                    if n:
                        chunks.append(np.array(rx.replies[:n], np.int64))
                        del rx.replies[:n]
                    next_sample = now + SAMPLE
        end = time.time() + DIAGNOSTICS_PERIOD * 1.5  # one more /diagnostics after the end
        while time.time() < end:
            rx.executor.spin_once(timeout_sec=0.05)
        if rx.replies:
            chunks.append(np.array(rx.replies, np.int64))
        cpu, wait = process_cpu(pids)
        samples.append((time.time(), cpu, wait, rss_mb(node.pid)))
        if "END" not in lines or "START" not in lines:
            raise RuntimeError("the publisher stopped before the end of the run")
        sent = np.array(lines["END"][1].split()[1:], dtype=np.int64)
        return dict(sent=sent, replies=first_replies(chunks), samples=np.array(samples),
                    counts=list(rx.counts), diag_times=[d[0] for d in rx.diag],
                    start=lines["START"][0], published=int(lines["TOTAL"][1]),
                    received=rx.received, markers=rx.markers)
    finally:
        shut_down(pub, rx, node, "bench_soak: node")


def report(run: dict, rate: float, minutes: float, pose: str) -> None:
    sent = run["sent"]
    stamps, receipt = run["replies"]
    if len(stamps):
        idx = np.minimum(np.searchsorted(stamps, sent), len(stamps) - 1)
        got = stamps[idx] == sent
        latency = np.where(got, (receipt[idx] - sent) * 1e-6, np.nan)
    else:
        got, latency = np.zeros(len(sent), bool), np.full(len(sent), np.nan)
    t0 = sent[0] * 1e-9
    minute = ((sent * 1e-9 - t0) // 60.0).astype(int)
    samples, counts = run["samples"], run["counts"]

    def at(table, t, column):  # the last row of ``table`` at or before wall time t
        rows = [r for r in table if r[0] <= t]
        return rows[-1][column] if rows else np.nan

    def count_at(t):  # the coalesced count at t: the first /diagnostics when none came before
        c = at(counts, t, 2)
        return c if c == c or not counts else counts[0][2]

    print(f"bench_soak: config/demo.yaml (demo arm + its probes, markers on with a subscriber), "
          f"{pose} pose, {rate:g} Hz for {minutes:g} min; {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())} at the end")
    print(f"{'minute':>6} {'sent':>7} {'lost':>6} {'coal.':>6} {'p50 ms':>7} {'p99 ms':>7} "
          f"{'max ms':>7} {'CPU':>6} {'runq':>6} {'RSS MB':>7}")
    for m in range(int(minute.max()) + 1):
        sel = minute == m
        lat = latency[sel & got]
        a, b = t0 + 60.0 * m, min(t0 + 60.0 * (m + 1), sent[sel][-1] * 1e-9)
        c0, c1 = count_at(a), count_at(b + DIAGNOSTICS_PERIOD)
        cpu = (at(samples, b, 1) - at(samples, a, 1)) / max(b - a, 1e-9)
        wait = (at(samples, b, 2) - at(samples, a, 2)) / max(b - a, 1e-9)
        p = np.percentile(lat, [50, 99]) if len(lat) else (np.nan, np.nan)
        print(f"{m + 1:6d} {int(sel.sum()):7d} {int((sel & ~got).sum()):6d} "
              f"{int(c1 - c0) if c0 == c0 and c1 == c1 else -1:6d} {p[0]:7.3f} {p[1]:7.3f} "
              f"{(lat.max() if len(lat) else np.nan):7.2f} {100 * cpu:5.1f}% {100 * wait:5.1f}% "
              f"{at(samples, b, 3):7.1f}")
    lat = latency[got]
    rss = samples[:, 3]
    cpu_all = (samples[-1, 1] - at(samples, t0, 1)) / (samples[-1, 0] - t0)
    print(f"total  {len(sent):7d} {int((~got).sum()):6d}  p50 {np.percentile(lat, 50):.3f} ms, "
          f"p99 {np.percentile(lat, 99):.3f} ms, max {lat.max():.2f} ms; node CPU "
          f"{100 * cpu_all:.1f} %")
    print(f"node RSS: start {rss[0]:.1f} MB, end {rss[-1]:.1f} MB, max {np.nanmax(rss):.1f} MB")
    if run["received"] is not None:
        print(f"the node received {run['received']} of the {run['published']} joint states "
              "published (warm-up included; its /diagnostics joint_states_good)")
    times = np.array([t for t in run["diag_times"] if t >= run["start"] - WARM])
    gaps = np.diff(times) if len(times) > 1 else np.zeros(0)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    print(f"/diagnostics: {len(times)} messages over {span:.1f} s (period "
          f"{DIAGNOSTICS_PERIOD:g} s), largest gap {gaps.max() if len(gaps) else np.nan:.2f} s, "
          f"{int((gaps > 2 * DIAGNOSTICS_PERIOD).sum())} gap(s) over "
          f"{2 * DIAGNOSTICS_PERIOD:g} s; markers received {run['markers']} "
          f"({run['markers'] / max(span, 1e-9):.1f}/s)")
    print("lost: joint states without their own ContactArray; coal.: those the node received "
          "and merged into a later evaluation (lost - coal. never reached it: best-effort "
          "sensor-data QoS, or the answer was lost)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rate", type=float, default=1000.0, help="joint states per second")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--quick", action="store_true", help="1 minute (what make bench runs)")
    ap.add_argument("--pose", choices=("static", "moving"), default="static")
    ap.add_argument("--domain", type=int, default=None)
    args = ap.parse_args(argv)
    if args.quick:
        args.minutes = 1.0
    domain = args.domain or int(os.environ.get("BENCH_DOMAIN_ID", 170 + os.getpid() % 30))
    run = soak(args.rate, args.minutes, args.pose, domain)
    report(run, args.rate, args.minutes, args.pose)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
