"""Shared pytest configuration and the paths every test folder uses."""

import os
import signal
import sys
from pathlib import Path

from hypothesis import settings

# Hypothesis profiles, chosen by HYPOTHESIS_PROFILE:
#   ci       (.ci/run) the same examples on every run, so that a landing never depends on the draw;
#   dev      (`make test-quick`) 10 examples where a test sets no count of its own, a tenth of
#            its own count where it does (`examples(n)` below), no deadline: the edit loop;
#   default  (`make test`) hypothesis's own: 100 examples per test, new ones every run.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev", max_examples=10, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def examples(n: int) -> int:
    """A test's own count of hypothesis examples, ``n``: as given, or a tenth of it (at least
    10) under the dev profile, which a test's own ``@settings`` would otherwise override."""
    return max(10, n // 10) if os.environ.get("HYPOTHESIS_PROFILE") == "dev" else n


THOROUGH = os.environ.get("HYPOTHESIS_PROFILE") == "ci"
"""Under the ci profile (.ci/run) the tests that sample or repeat to hunt a rare case do so at
full size; locally at a size that still checks every case (each says which)."""
REPEATS = 4 if THOROUGH else 1
"""How often a test that hunts a race repeats each of its cases."""

# The ROS tests stop their nodes and launches with SIGINT, as Ctrl-C does. A shell that starts a
# command in the background without job control (`.ci/run &` in a script, nohup) starts it with
# SIGINT ignored (POSIX), every child inherits that, and `launch` then never shuts down. A handler
# here is reset to the default in every child at exec, so children get Ctrl-C's default again.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# Test helper modules (ros_harness, exact_reference, ...) live beside this file; test modules
# import the paths below with ``from conftest import ...``.
TEST_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TEST_DIR))

REPO = TEST_DIR.parent
"""The repository (source tree) root."""


def _shared_examples() -> Path:
    """``shared/adf-examples`` beside the checkout (``../shared``), or beside a folder above it
    (a git worktree in a sub-folder); the first that exists, else the plain ``../shared`` path."""
    for base in REPO.parents:
        candidate = base / "shared" / "adf-examples"
        if candidate.is_dir():
            return candidate
    return REPO.parent / "shared" / "adf-examples"


EXAMPLES = _shared_examples()
"""The eight real AMBF example files (``../shared/adf-examples``)."""
SHARED_EXAMPLES = EXAMPLES
DEMO_DIR = REPO / "examples" / "demo"
DEMO_ARM = DEMO_DIR / "demo_arm.yaml"
DEMO_PROBES = DEMO_DIR / "demo_probes.yaml"
DEMO_PROBES_256 = DEMO_DIR / "demo_probes_256.yaml"


def run_fresh_python(code: str, timeout: float = 900.0, **environ) -> str:
    """Runs ``code`` in a fresh Python process that imports ``ambf_collision`` from where this
    one did (``monitor/jit.package_root``, first on ``PYTHONPATH``), with ``environ`` added; asserts it succeeded and returns its last line of output."""
    import subprocess

    from ambf_collision.monitor.jit import package_root

    root = package_root()
    env = dict(os.environ, **environ,
               PYTHONPATH=os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")])))
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=root, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()[-1]
