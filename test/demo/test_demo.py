"""`make demo` end to end: scripts/run_demo.sh with a duration, and its clean stop on SIGTERM.

Real processes over real DDS (node, joint player, viewer) on a domain of their own. Checks: exit
0 within a bound, the live view printed a minimum distance and reached a penetrating contact of
the demo script, a valid PNG was written, no traceback, and no process of the demo is left.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from conftest import REPO

pytestmark = pytest.mark.dds  # the demo's node, player and viewer as processes

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


DEMO_PROGRAMS = ("collision_monitor", "joint_player", "demo_viewer")


def _stat(pid: int) -> list:
    """The fields of ``/proc/<pid>/stat`` after the command: state, parent pid, ... ([] when
    ``pid`` is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def _demo_processes(domain: int) -> dict:
    """``{pid: program}`` of the live processes with ROS_DOMAIN_ID=<domain> that belong to the
    demo (program: one of DEMO_PROGRAMS)."""
    found = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            env = open(f"/proc/{d}/environ", "rb").read().split(b"\0")
            cmd = open(f"/proc/{d}/cmdline", "rb").read()
        except OSError:
            continue
        if _stat(int(d))[:1] in ([], ["Z"]):  # gone meanwhile, or ended
            continue
        if f"ROS_DOMAIN_ID={domain}".encode() in env:
            for program in DEMO_PROGRAMS:
                if program.encode() in cmd:
                    found[int(d)] = program
    return found


def _wait_for_all_programs(proc, domain, timeout=30.0) -> dict:
    """Wait until the node, the player and the viewer all run; fail naming the missing ones,
    with the script's output and the end of each log, if they do not within ``timeout`` s or the
    script ends first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and proc.poll() is None:
        found = _demo_processes(domain)
        if sorted(found.values()) == sorted(DEMO_PROGRAMS):
            return found
        time.sleep(0.2)
    found = _demo_processes(domain)
    missing = sorted(set(DEMO_PROGRAMS) - set(found.values()))
    out, err = _kill_demo(proc, domain)
    logs = {name: _log_tail(name) for name in ("collision_monitor", "joint_player")}
    pytest.fail(f"not running after {timeout:g} s: {missing} (script exit {proc.returncode})\n"
                f"stdout: {out[-1500:]}\nstderr: {err[-1500:]}\nlogs: {logs}")


def _kill_demo(proc, domain) -> tuple:
    """SIGKILL the script and every demo process of ``domain`` (each child has a process group
    of its own and holds the script's output pipes); the script's ``(stdout, stderr)``."""
    proc.kill()
    for pid in _demo_processes(domain):
        os.kill(pid, signal.SIGKILL)
    return proc.communicate(timeout=10)


def _expect_demo_error(proc, domain, died: str) -> str:
    """The script's stderr, once it has exited with status 1 within 20 s of ``died`` (what
    was killed) and left no demo process; fails otherwise."""
    try:
        _, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        _, err = _kill_demo(proc, domain)
        pytest.fail(f"run_demo.sh went on for 20 s after {died} died\n{err[-2000:]}")
    assert proc.returncode == 1, err[-2000:]
    time.sleep(0.5)
    assert _demo_processes(domain) == {}
    return err


def _log_tail(name: str) -> str:
    path = REPO / "demo_output" / f"{name}.log"
    return path.read_text()[-1500:] if path.is_file() else "(no log)"


def _run_demo(domain, duration, out_dir, **popen):
    env = dict(os.environ, DEMO_DOMAIN_ID=str(domain), DEMO_NO_RVIZ="1")
    return subprocess.Popen(["bash", "scripts/run_demo.sh", str(duration), "--period", "0.5",
                             "--png-period", "1.0"], cwd=str(REPO), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


def _check_png(path: Path):
    assert path.is_file(), f"{path} not written"
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    w, h = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert w >= 200 and h >= 200


@pytest.mark.slow
def test_run_demo_with_duration(tmp_path):
    domain = 215 + os.getpid() % 9  # 215..232: outside the ephemeral port range on Linux
    out_png = REPO / "demo_output" / "demo_scene.png"
    if out_png.exists():
        out_png.unlink()
    t0 = time.monotonic()
    proc = _run_demo(domain, 8, tmp_path)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"run_demo.sh 8 did not finish within 60 s\n{out[-2000:]}\n{err[-2000:]}")
    elapsed = time.monotonic() - t0
    assert proc.returncode == 0, f"exit {proc.returncode}\n{out[-2000:]}\n{err[-3000:]}"
    assert elapsed < 45, f"took {elapsed:.1f} s"
    assert "Traceback" not in out + err
    mins = [float(m) for m in re.findall(r"min\s+([+-]\d+\.\d) mm", out)]
    assert len(mins) >= 3, out[-2000:]
    # the first 8 s of the demo script reach the self-contact hold (3.5-4.5 s): a penetration,
    # in the smallest distance over every message the viewer received (its periodic lines are
    # samples, which a loaded machine can space out past the 1 s hold)
    seen = re.search(r"smallest distance seen ([+-]\d+\.\d) mm", out)
    assert seen and float(seen.group(1)) < 0.0, out[-2000:]
    assert "closest:" in out and "probes:" in out
    _check_png(out_png)
    time.sleep(0.5)
    assert _demo_processes(domain) == {}


def test_run_demo_stops_cleanly_on_sigterm(tmp_path):
    domain = 224 + os.getpid() % 9
    proc = _run_demo(domain, 0, tmp_path)
    _wait_for_all_programs(proc, domain)
    time.sleep(3.0)
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        _kill_demo(proc, domain)
        pytest.fail("run_demo.sh did not stop within 20 s of SIGTERM")
    assert proc.returncode == 0, err[-2000:]
    assert "Traceback" not in out + err, (out + err)[-3000:]
    assert "run_demo: stopped" in out
    time.sleep(0.5)
    assert _demo_processes(domain) == {}
    logs = (REPO / "demo_output" / "collision_monitor.log").read_text()
    assert "Traceback" not in logs


@pytest.mark.parametrize("program", ["joint_player", "collision_monitor"])
def test_run_demo_stops_with_an_error_when_the_node_or_the_player_dies(tmp_path, program):
    """A node or player killed by SIGKILL (as a crash would end it) stops the whole demo within
    seconds: exit status 1, a line naming the program and its exit status (137: killed by signal
    9), and no demo process left; the viewer does not go on waiting for messages."""
    domain = 215 + (os.getpid() + 4) % 9
    proc = _run_demo(domain, 0, tmp_path)
    found = _wait_for_all_programs(proc, domain)
    os.kill(next(pid for pid, name in found.items() if name == program), signal.SIGKILL)
    err = _expect_demo_error(proc, domain, program)
    assert f"run_demo: {program} ended by itself (exit status 137)" in err


def test_run_demo_names_each_dead_program_with_its_own_exit_status(tmp_path):
    """The player and the node both end while the script is held (SIGSTOP): the node, reported
    first, is named with its own exit status (138: killed by SIGUSR1), not the player's (137),
    whichever of the two the script's ``wait -n`` collects first."""
    domain = 215 + (os.getpid() + 6) % 9
    proc = _run_demo(domain, 0, tmp_path)
    pids = {name: pid for pid, name in _wait_for_all_programs(proc, domain).items()
            if _stat(pid)[1:2] == [str(proc.pid)]}  # the script's own children
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 10.0
        while _stat(proc.pid)[:1] != ["T"]:  # stopped: it collects no child until SIGCONT
            assert time.monotonic() < deadline, "the script did not stop"
            time.sleep(0.01)
        os.kill(pids["joint_player"], signal.SIGKILL)
        os.kill(pids["collision_monitor"], signal.SIGUSR1)
        while not all(_stat(pids[n])[:1] == ["Z"] for n in ("joint_player", "collision_monitor")):
            assert time.monotonic() < deadline, "the player and the node did not end"
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    err = _expect_demo_error(proc, domain, "the node and the player")
    assert "run_demo: collision_monitor ended by itself (exit status 138)" in err, err[-2000:]


def _viewer(domain, out_dir):
    from ros_harness import node_command

    return subprocess.Popen(node_command("demo_viewer") + [
        "--params-file", "config/demo.yaml", "--output-dir", str(out_dir), "--duration", "0"],
        cwd=str(REPO), env=dict(os.environ, ROS_DOMAIN_ID=str(domain)), stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True)


@pytest.mark.slow
def test_demo_viewer_stops_cleanly_on_sigterm_at_any_point_of_its_start_up(tmp_path):
    """SIGTERM sent to demo_viewer at staggered times of its start-up (imports, scene load,
    ROS set-up): every one ends without a traceback, with exit 0 once it has taken the signal
    over, or killed by the signal (-15) before. Then one viewer signalled once it listens stops
    through its own handler: exit 0 and its summary line. CI once saw a signal between creating
    the node and its subscriptions end in rcl's 'context is invalid' traceback."""
    from ros_harness import next_domain

    domain = next_domain()
    delays = [0.25 * i for i in range(1, 13)]
    procs = [_viewer(domain, tmp_path / f"v{i}") for i in range(len(delays))]
    t0 = time.monotonic()
    try:
        for proc, delay in zip(procs, delays):
            time.sleep(max(0.0, t0 + delay - time.monotonic()))
            proc.send_signal(signal.SIGTERM)
        results = [p.communicate(timeout=60) + (p.returncode,) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    for (out, err, code), delay in zip(results, delays):
        assert "Traceback" not in out + err, (delay, err[-2000:])
        assert code in (0, -signal.SIGTERM), (delay, code, err[-2000:])

    late = _viewer(domain, tmp_path / "late")
    try:
        first = late.stdout.readline()  # blocks until the viewer prints (or exits: "")
        assert "listening" in first, first
        late.send_signal(signal.SIGTERM)
        out, err = late.communicate(timeout=30)
    finally:
        if late.poll() is None:
            late.kill()
            late.communicate()
    assert late.returncode == 0 and "Traceback" not in out + err, err[-2000:]
    assert "contact messages" in out, out
