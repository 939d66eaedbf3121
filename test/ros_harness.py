"""Helpers for tests that run the installed collision_monitor node as a real process over DDS.

Each test gets its own ROS_DOMAIN_ID, so tests never hear each other.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")

REPO = Path(__file__).resolve().parents[1]
_domains = itertools.count((os.getpid() % 20) * 5 + 1)


def node_command(executable: str = "collision_monitor") -> list[str]:
    """`ros2 run` where ros2cli exists, else the executable installed into lib/ambf_collision."""
    if shutil.which("ros2"):
        return ["ros2", "run", "ambf_collision", executable]
    from ament_index_python.packages import get_package_prefix

    path = Path(get_package_prefix("ambf_collision")) / "lib" / "ambf_collision" / executable
    assert path.exists(), f"{path} not installed: run `make test` (colcon build)"
    return [str(path)]


class NodeProcess:
    """The node as a child process; `stop()` sends a signal and returns (code, stdout, stderr)."""

    def __init__(self, domain: int, params: dict | None = None, executable="collision_monitor",
                 extra_args=()):
        args = node_command(executable) + ["--ros-args"]
        for k, v in (params or {}).items():
            args += ["-p", f"{k}:={_param_text(v)}"]
        args += list(extra_args)
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain), PYTHONUNBUFFERED="1",
                   RCUTILS_COLORIZED_OUTPUT="0")
        self.proc = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, cwd=str(REPO))

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self, sig=signal.SIGINT, timeout=10.0):
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
            raise AssertionError(f"node did not stop within {timeout} s after {sig!r}:\n{err}")
        return self.proc.returncode, out, err


def _param_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (list, tuple)):
        return "[" + ",".join(_param_text(x) if not isinstance(x, str) else f"'{x}'" for x in v) + "]"
    return str(v)


class Peer:
    """A test-side rclpy context + node on its own domain, with a private executor."""

    def __init__(self, domain: int):
        from rclpy.context import Context
        from rclpy.executors import SingleThreadedExecutor

        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node(f"test_peer_{os.getpid()}", context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, predicate, timeout=10.0, step=0.02) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            self.executor.spin_once(timeout_sec=step)
            if predicate():
                return True
        return False

    def spin_for(self, seconds: float):
        self.spin_until(lambda: False, timeout=seconds)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.shutdown(context=self.context)


@pytest.fixture
def domain() -> int:
    return next(_domains)


@pytest.fixture
def peer(domain):
    p = Peer(domain)
    yield p
    p.close()
