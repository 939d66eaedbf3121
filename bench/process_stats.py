"""Process helpers of the ROS benches (``bench_latency``, ``bench_soak``, ``bench_start``): the
installed node's executable, a process's tree, its threads' CPU time and run-queue wait from the
scheduler, and stopping it as Ctrl-C would."""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import time
from pathlib import Path

__all__ = ["node_executable", "paced", "process_tree", "process_cpu", "stop_process",
           "without_gc_pauses"]


def paced(rate: float, n: int):
    """Yield ``k = 0 .. n-1``, each at ``k / rate`` s after the first (``rate`` Hz): the
    publishers' clock. Sleeps, no busy wait: a late step is yielded at once, and the caller
    stamps its message at the actual publish."""
    period = 1e9 / rate
    start = time.perf_counter_ns()
    for k in range(n):
        target = start + k * period
        now = time.perf_counter_ns()
        if target > now:
            time.sleep((target - now) * 1e-9)
        yield k


@contextlib.contextmanager
def without_gc_pauses():
    """Python's cyclic garbage collector off in this process for the block, after one collection
    and a freeze of what exists then; on again after it. A bench process that times messages
    must not pause: its full collections took 83-91 ms (2026-12-04, the receiver of
    bench_latency with the reference model loaded), and the replies it delayed were counted as
    the node's latency. Cycles the block leaves are collected after it."""
    gc.collect()
    gc.freeze()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.unfreeze()


def node_executable() -> str:
    """The collision_monitor executable of the installed package (``lib/ambf_collision``)."""
    from ament_index_python.packages import get_package_prefix

    return str(Path(get_package_prefix("ambf_collision")) / "lib" / "ambf_collision"
               / "collision_monitor")


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants (scanned once, outside the measured windows)."""
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                text = open(f"/proc/{d}/stat").read()
            except OSError:
                continue
            parent[int(d)] = int(text[text.rindex(")") + 2:].split()[1])
    tree, frontier = [pid], [pid]
    while frontier:
        p = frontier.pop()
        for c, pp in parent.items():
            if pp == p and c not in tree:
                tree.append(c)
                frontier.append(c)
    return tree


def process_cpu(pids: list[int]) -> tuple[float, float]:
    """(CPU seconds run, seconds spent runnable but waiting for a CPU) of all threads of the
    processes ``pids``, from /proc/<pid>/task/<tid>/schedstat (scheduler clock, not ticks)."""
    run = wait = 0
    for p in pids:
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for t in tids:
            try:
                f = open(f"/proc/{p}/task/{t}/schedstat").read().split()
            except OSError:
                continue
            run += int(f[0])
            wait += int(f[1])
    return run * 1e-9, wait * 1e-9


def stop_process(proc: subprocess.Popen) -> str:
    """SIGINT to ``proc`` (SIGKILL 10 s later if it still runs); returns its stderr."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    return err or ""
