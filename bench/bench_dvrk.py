#!/usr/bin/env python3
"""The dVRK cart at 1 kHz per arm, end to end (issue 37): measured_js in, the master's wrench out.

The pipeline is what ``dvrk.launch.py`` and the ``virtual_fixture`` run on a cart: the
collision_monitor over PSM1, PSM2, PSM3 and the ECM (AMBF's files, the copies under test/ unless
``--ambf-models``; ``config/dvrk.yaml`` with the parameters of ``ros/dvrk_cart.py``) beside the
patient of ``examples/dvrk/patient.yaml``, ``cart_frames`` for the arms' base frames, and the
``virtual_fixture`` (``config/virtual_fixture.yaml``, PSM1 the tool) publishing
``/MTMR/body/servo_cf``. The publisher (``dvrk_peers.py publish``) sends every arm's
``measured_js`` at ``--rate`` Hz (CRTK names; PSM1 moving in and out of the patient at up to
0.094 m/s), each message stamped with the wall clock just before its publish. The receiver (this
process) takes each wrench's stamp: the fixture stamps a wrench with the stamp of the contacts
it answers, which the monitor stamps with the joint state it evaluated. Latency = receipt -
stamp (one clock). The reference in the same run: ``dvrk_peers.py echo``, a node that answers
each measured_js at once with a wrench carrying its stamp (DDS + rclpy + a Python callback, no
monitor, no fixture), run for ``--echo-minutes`` before and as long after the pipeline.

Reported per minute of the pipeline: joint states sent; answered (a wrench of their own);
coalesced (the monitor's ``/diagnostics``: received and merged into a later evaluation, at most
``max_rate`` evaluations per second over four arms' input); lost in the monitor (received, but
neither evaluated nor coalesced: must be 0); never received (published, not in the monitor's
``joint_states_good``); latency p50 / p99 / max (ms) of the answered ones; CPU share and RSS of
the monitor and of the fixture. Targets: p99 within 1.5x the echo's, 0 lost in the monitor, RSS
flat (the last minute's within 5 % of the first's).

    bench/bench_dvrk.py [--minutes 10] [--echo-minutes 1] [--rate 1000] [--quick]
    bench/bench_dvrk.py --in-process 2000     (the monitor's evaluations alone, no ROS)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from bench_soak import first_replies, follow_protocol, rss_mb
from latency_receiver import Receiver
from process_stats import (node_executable, process_cpu, process_tree, stop_process,
                           without_gc_pauses)

REPO = Path(__file__).resolve().parents[1]
PEERS = str(Path(__file__).resolve().with_name("dvrk_peers.py"))
ROBOTS = REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
PATIENT = REPO / "examples" / "dvrk" / "patient.yaml"
ARMS = "PSM1,PSM2,PSM3,ECM"
SAMPLE = 1.0  # s between CPU and RSS samples


def executable(name: str) -> str:
    """An executable of the installed package (lib/ambf_collision/<name>)."""
    return str(Path(node_executable()).with_name(name))


def pipeline_commands(workdir: Path, ambf_models: str) -> list:
    """The three processes of the pipeline: (label, command)."""
    from ambf_collision.ros.dvrk_cart import load_cart, monitor_parameters

    cart_file = REPO / "config" / "dvrk_cart.yaml"
    params = yaml.safe_load((REPO / "config" / "dvrk.yaml").read_text())["/**"]["ros__parameters"]
    params.update(monitor_parameters(load_cart(cart_file), ARMS, ambf_models,
                                     extra_files=[str(PATIENT)]))
    params_file = workdir / "monitor.yaml"
    params_file.write_text(yaml.safe_dump({"/**": {"ros__parameters": params}}))
    return [("cart_frames", [executable("cart_frames"), "--ros-args", "-p", f"cart:={cart_file}",
                             "-p", f"arms:={ARMS}"]),
            ("monitor", [executable("collision_monitor"), "--ros-args", "--params-file",
                         str(params_file)]),
            ("fixture", [executable("virtual_fixture"), "--ros-args", "--params-file",
                         str(REPO / "config" / "virtual_fixture.yaml")])]


def run(target: str, seconds: float, rate: float, domain: int, ambf_models: str) -> dict:
    """One target (``echo`` or ``pipeline``) for ``seconds``; the raw samples of the run."""
    from geometry_msgs.msg import WrenchStamped

    env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1")
    work = Path(tempfile.mkdtemp(prefix="bench_dvrk_"))
    commands = ([("echo", [sys.executable, PEERS, "echo", "--arms", ARMS])] if target == "echo"
                else pipeline_commands(work, ambf_models))
    procs = {label: subprocess.Popen(cmd, cwd=str(REPO), env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, text=True) for label, cmd in commands}
    pub = rx = None
    try:
        rx = Receiver(domain, topic="/MTMR/body/servo_cf", message=WrenchStamped)
        stamps_file = work / "stamps.npy"
        pub = subprocess.Popen([sys.executable, PEERS, "publish", "--domain", str(domain),
                                "--arms", ARMS, "--rate", str(rate), "--seconds", str(seconds),
                                "--stamps", str(stamps_file)],
                               cwd=str(REPO), env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
        if pub.stdout.readline().strip() != "READY":
            raise RuntimeError("publisher did not start")
        deadline = time.monotonic() + 120.0   # the monitor loads four arms' meshes first
        rx.spin_while(lambda: rx.sub.get_publisher_count() == 0 and time.monotonic() < deadline)
        if rx.sub.get_publisher_count() == 0:
            raise RuntimeError(f"the {target} did not come up within 120 s")
        pids = {label: process_tree(p.pid) for label, p in procs.items()}
        reader, lines = follow_protocol(pub)
        samples = []  # (wall s, {label: (CPU s, RSS MB)})
        chunks, next_sample = [], 0.0
        with without_gc_pauses():
            while reader.is_alive():
                rx.executor.spin_once(timeout_sec=0.05)
                now = time.time()
                if now >= next_sample:
                    samples.append((now, {label: (process_cpu(ids)[0], rss_mb(procs[label].pid))
                                          for label, ids in pids.items()}))
                    n = len(rx.replies)
                    if n:
                        chunks.append(np.array(rx.replies[:n], np.int64))
                        del rx.replies[:n]
                    next_sample = now + SAMPLE
        end = time.time() + 1.5   # one more /diagnostics (1 Hz)
        while time.time() < end:
            rx.executor.spin_once(timeout_sec=0.05)
        if rx.replies:
            chunks.append(np.array(rx.replies, np.int64))
        if "END" not in lines:
            raise RuntimeError("the publisher stopped before the end of the run")
        return dict(target=target, sent=np.sort(np.load(stamps_file)),
                    replies=first_replies(chunks), samples=samples, counts=list(rx.counts),
                    published=int(lines["TOTAL"][1]), start=lines["START"][0])
    finally:
        if pub is not None and pub.poll() is None:
            pub.kill()
            pub.wait()
        if rx is not None:
            rx.close()
        for label, p in procs.items():
            err = stop_process(p)
            if "Traceback" in err:
                print(f"bench_dvrk: {label} stderr:\n" + err[-2000:], file=sys.stderr)


def latencies(run: dict) -> tuple:
    """``(answered (S,) bool, latency (S,) ms)`` of each sent stamp."""
    sent = run["sent"]
    stamps, receipt = run["replies"]
    if not len(stamps):
        return np.zeros(len(sent), bool), np.full(len(sent), np.nan)
    idx = np.minimum(np.searchsorted(stamps, sent), len(stamps) - 1)
    got = stamps[idx] == sent
    return got, np.where(got, (receipt[idx] - sent) * 1e-6, np.nan)


def at(samples: list, t: float, label: str, column: int) -> float:
    rows = [s for s in samples if s[0] <= t] or samples[:1]
    return rows[-1][1][label][column]


def count(counts: list, t: float, column: int) -> float:
    """A cumulative /diagnostics count at wall time t (the first message's before it)."""
    rows = [c for c in counts if c[0] <= t] or counts[:1]
    return rows[-1][column] if rows else np.nan


def report(echo: list, pipe: dict, rate: float) -> dict:
    """Print the tables; return the numbers the targets are judged on."""
    e_got, e_lat = zip(*(latencies(r) for r in echo))
    e_lat = np.concatenate([lat[got] for got, lat in zip(e_got, e_lat)])
    got, lat = latencies(pipe)
    sent = pipe["sent"]
    t0 = sent[0] * 1e-9
    minute = ((sent * 1e-9 - t0) // 60.0).astype(int)
    samples, counts = pipe["samples"], pipe["counts"]
    print(f"{'minute':>6} {'sent':>7} {'answered':>8} {'coal.':>7} {'lost':>5} {'p50 ms':>7} "
          f"{'p99 ms':>7} {'max ms':>7} {'monitor CPU':>11} {'fixture CPU':>11} "
          f"{'monitor MB':>10} {'fixture MB':>10}")
    rss = []
    for m in range(int(minute.max()) + 1):
        sel = minute == m
        a, b = t0 + 60.0 * m, min(t0 + 60.0 * (m + 1), sent[sel][-1] * 1e-9)
        c = {k: count(counts, b + 1.0, k) - count(counts, a, k) for k in (1, 2, 3, 4)}
        lost = c[1] + c[4] - c[3] - c[2]   # received, neither evaluated nor coalesced
        cpu = {k: (at(samples, b, k, 0) - at(samples, a, k, 0)) / max(b - a, 1e-9)
               for k in ("monitor", "fixture")}
        rss.append((at(samples, b, "monitor", 1), at(samples, b, "fixture", 1)))
        p = np.percentile(lat[sel & got], [50, 99]) if (sel & got).any() else (np.nan,) * 2
        print(f"{m + 1:6d} {int(sel.sum()):7d} {int((sel & got).sum()):8d} {int(c[2]):7d} "
              f"{int(lost):5d} {p[0]:7.3f} {p[1]:7.3f} {np.nanmax(lat[sel]) if (sel & got).any() else np.nan:7.2f} "
              f"{100 * cpu['monitor']:10.1f}% {100 * cpu['fixture']:10.1f}% {rss[-1][0]:10.1f} "
              f"{rss[-1][1]:10.1f}")
    received = count(counts, time.time(), 1) + count(counts, time.time(), 4)
    total_lost = (count(counts, time.time(), 1) + count(counts, time.time(), 4)
                  - count(counts, time.time(), 3) - count(counts, time.time(), 2))
    p = np.percentile(lat[got], [50, 99])
    q = np.percentile(e_lat, [50, 99])
    print(f"pipeline: {int(got.sum())} of {len(sent)} joint states answered, p50 {p[0]:.3f} ms, "
          f"p99 {p[1]:.3f} ms, max {np.nanmax(lat):.2f} ms; the monitor received {int(received)} "
          f"of the {pipe['published']} published (warm-up included)")
    print(f"echo: {len(e_lat)} answered, p50 {q[0]:.3f} ms, p99 {q[1]:.3f} ms, "
          f"max {e_lat.max():.2f} ms; pipeline/echo p50 x{p[0] / q[0]:.2f}, p99 x{p[1] / q[1]:.2f}")
    flat = [abs(rss[-1][i] - rss[0][i]) <= 0.05 * rss[0][i] for i in (0, 1)]
    checks = [("p99 within 1.5x the echo's", p[1] <= 1.5 * q[1]),
              ("0 joint states lost in the monitor", total_lost == 0),
              ("RSS flat (last minute within 5 % of the first)", all(flat))]
    for text, ok in checks:
        print(f"target {'MET    ' if ok else 'NOT MET'}: {text}")
    return dict(p99=p[1], echo_p99=q[1], lost=total_lost)


def in_process(ambf_models: str, states: int, rate: float) -> None:
    """The monitor's work alone: the cart of the pipeline (with the patient) evaluated in this
    process along the publisher's script (every joint new at every state), as hulls (what
    config/dvrk.yaml sets) and as AMBF's concave meshes, ``near_only`` (the node) and every pair
    exact; p50 / p99 of the thread CPU time per evaluation."""
    import math
    import warnings

    from dvrk_peers import arm_positions

    from ambf_collision.model import Model
    from ambf_collision.ros.dvrk_cart import load_cart, monitor_parameters

    cart = load_cart(REPO / "config" / "dvrk_cart.yaml")
    p = monitor_parameters(cart, ARMS, ambf_models, extra_files=[str(PATIENT)])
    poses = []
    for arm in cart.arms.values():
        _, xyz, rpy = arm.placement
        c, s = math.cos(rpy[2]), math.sin(rpy[2])
        poses.append((np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.array(xyz)))
    poses.append(None)
    for label, hulls in (("hulls", ["*"]), ("concave meshes", [])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = Model.from_files(p["adf_files"], namespaces=[n or None for n in p["adf_namespaces"]],
                                     couplings=p["couplings"], hull_meshes=hulls)
        names = []
        for arm in cart.arms.values():
            aliases = [a.split("=", 1)[1] for a in cart.kinds[arm.kind]["aliases"]]
            names += [f"/{arm.name}/{j.replace(' ', '')}" for j in aliases]
        script = [np.concatenate([arm_positions(a, k / rate) for a in cart.arms])
                  for k in range(states)]
        for near in (True, False):
            data = model.create_data()
            model.set_root_poses(data, poses)
            times, contacts = [], 0
            for q in script:
                model.set_joint_positions(data, names, q)
                t = time.thread_time()
                r = model.evaluate(data, report_distance=0.05, near_only=near)
                times.append(time.thread_time() - t)
                contacts += len(r.contact_index)
            t = np.percentile(np.array(times[10:]) * 1e3, [50, 99])
            print(f"in-process, {label} ({len(model.pairs)} pairs), "
                  f"{'near_only' if near else 'every pair exact'}: CPU p50 {t[0]:.3f} / p99 "
                  f"{t[1]:.3f} ms per evaluation, {contacts / states:.1f} contacts per state")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--minutes", type=float, default=10.0, help="the pipeline's run")
    ap.add_argument("--echo-minutes", type=float, default=1.0,
                    help="the echo's run, before and again after the pipeline")
    ap.add_argument("--rate", type=float, default=1000.0, help="measured_js per second per arm")
    ap.add_argument("--quick", action="store_true", help="1 minute, echo 0.5 minute")
    ap.add_argument("--ambf-models", default=os.environ.get("AMBF_MODELS", str(ROBOTS)))
    ap.add_argument("--domain", type=int, default=None)
    ap.add_argument("--in-process", type=int, default=0, metavar="STATES",
                    help="only the monitor's evaluations in this process, for STATES states")
    args = ap.parse_args(argv)
    if args.in_process:
        in_process(args.ambf_models, args.in_process, args.rate)
        return 0
    if args.quick:
        args.minutes, args.echo_minutes = 1.0, 0.5
    domain = args.domain or int(os.environ.get("BENCH_DOMAIN_ID", 200 + os.getpid() % 30))
    echo = [run("echo", 60.0 * args.echo_minutes, args.rate, domain, args.ambf_models)]
    pipe = run("pipeline", 60.0 * args.minutes, args.rate, domain, args.ambf_models)
    echo.append(run("echo", 60.0 * args.echo_minutes, args.rate, domain, args.ambf_models))
    print(f"bench_dvrk: PSM1, PSM2, PSM3, ECM + patient at {args.rate:g} Hz per arm "
          f"({4 * args.rate:g} measured_js/s), pipeline {args.minutes:g} min, echo "
          f"2 x {args.echo_minutes:g} min; {os.cpu_count()} CPUs, load "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(echo, pipe, args.rate)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
