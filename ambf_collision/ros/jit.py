"""The compiled core's JIT as the node's executables meet it (issue 14 §6).

numba compiles the kernels (``@njit(cache=True)``) on their first call and keeps them in an
on-disk cache. Two things the node takes care of:

- **Where the cache lives.** numba writes it next to the sources (``__pycache__``) when that
  folder is writable, which is the case in a source checkout, a colcon workspace and a user's
  pip install. Where it is not (a package installed system-wide, a read-only image),
  :func:`choose_numba_cache_dir` sets ``NUMBA_CACHE_DIR`` to ``$XDG_CACHE_HOME/ambf_collision/numba``
  (``~/.cache/ambf_collision/numba`` by default) before numba is imported, so compiled kernels
  are still kept between runs. A ``NUMBA_CACHE_DIR`` the user has set is always kept. The
  executables call it first (``scripts/collision_monitor``, :func:`ambf_collision.ros.node.main`).
- **Saying when it compiles.** :class:`CompileWatch` counts numba's compilations during the scene
  load (numba's own ``numba:compile`` events: none when every kernel comes from the cache), so
  the node logs once that it compiled and how long that took.
- **Compiling on both cores.** numba compiles one function at a time in a process. On a cold
  cache the scene load's two big kernels, the model's (kinematics and every pair) and the
  probes', do not call each other, so :class:`CompileElsewhere` has a second Python process
  (``python -m ambf_collision.ros.jit``) compile the probes' kernel into numba's on-disk cache
  while this one compiles the model's; the probes' first call here then loads it from the cache.
"""

from __future__ import annotations

import base64
import importlib
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["KERNEL_FOLDERS", "CompileElsewhere", "CompileWatch", "choose_numba_cache_dir",
           "user_cache_dir"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed ``ambf_collision`` folder (its sub-packages hold the kernels)."""
KERNEL_FOLDERS = ("geometry", "model", "probes", "ros")
"""The sub-packages of :data:`PACKAGE_DIR` with compiled kernels (``ros``: the markers')."""


def user_cache_dir(environ=None) -> Path:
    """``$XDG_CACHE_HOME/ambf_collision/numba``, ``~/.cache/ambf_collision/numba`` without it."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "ambf_collision" / "numba"


def _writable(folder: Path) -> bool:
    """True when numba could write its cache next to the sources in ``folder``."""
    cache = folder / "__pycache__"
    target = cache if cache.is_dir() else folder
    return os.access(target, os.W_OK)


def choose_numba_cache_dir(environ=None, package_dir: Path = PACKAGE_DIR,
                           writable=_writable) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` in ``environ`` (default ``os.environ``) to :func:`user_cache_dir`
    when it is unset and a folder of ``package_dir`` holding kernels (:data:`KERNEL_FOLDERS`) is
    not ``writable``. Returns the folder chosen, or None when numba's own choice
    stands (set by the user, or next to the sources). Call it before numba is imported."""
    environ = os.environ if environ is None else environ
    if environ.get("NUMBA_CACHE_DIR"):
        return None
    folders = [package_dir / sub for sub in KERNEL_FOLDERS]
    if all(writable(f) for f in folders if f.is_dir()):
        return None
    folder = user_cache_dir(environ)
    environ["NUMBA_CACHE_DIR"] = str(folder)
    return str(folder)


class CompileWatch:
    """Counts numba compilations while the ``with`` block runs (any thread): ``compiled``
    (functions compiled, not loaded from the cache) and ``seconds`` (wall time of the block)."""

    def __init__(self):
        self.compiled = 0
        self.seconds = 0.0

    def __enter__(self):
        from numba.core import event

        self._recorder = event.install_recorder("numba:compile")
        self._buffer = self._recorder.__enter__()
        self._t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._t0
        self._recorder.__exit__(*exc)
        from numba.core.event import EventStatus

        self.compiled = sum(1 for _, ev in self._buffer.buffer if ev.status == EventStatus.START)
        return False


class CompileElsewhere:
    """Compiles ``kernel`` (an ``@njit(cache=True)`` function) for the types of ``args`` in a
    second Python process, started when numba first starts compiling something in this one
    inside the ``with`` block (on a warm cache nothing compiles, and no process starts). The
    kernel lands in numba's on-disk cache (the same ``NUMBA_CACHE_DIR``), so that its first
    call here, after :meth:`wait`, loads it instead of compiling it::

        with CompileElsewhere(evaluate_probes, probe_args) as elsewhere:
            model.evaluate(data)     # compiles the model's kernel here, the probes' there
        elsewhere.wait()
        probes.evaluate(...)         # loaded from the cache

    Nothing runs the kernel there: the types (``numba.typeof`` of each argument) are all it
    gets. Should that process fail, the kernel's first call here compiles it as usual."""

    def __init__(self, kernel, args):
        import numba

        self.kernel = kernel
        self.types = tuple(numba.typeof(a) for a in args)
        self.process = None
        self.error = ""

    def __enter__(self):
        from numba.core import event

        outer = self

        class _FirstCompile(event.Listener):  # here: numba is imported on first use (module doc)
            def on_start(self, ev):
                if outer.process is None:
                    outer._start()

            def on_end(self, ev):
                pass

        self._listener = _FirstCompile()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, exc_type, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        if exc_type is not None and self.process is not None:
            self.process.kill()
            self.process.wait()
        return False

    def _start(self):
        py_func = self.kernel.py_func
        source = os.path.abspath(sys.modules[py_func.__module__].__file__)
        payload = base64.b64encode(pickle.dumps((py_func.__module__, py_func.__qualname__, source,
                                                 self.types))).decode("ascii")
        # The package as imported here (not its resolved path: numba keys its cache by the
        # source's path, and a colcon symlink install links every module to the sources).
        package = os.path.abspath(sys.modules["ambf_collision"].__file__)
        root = os.path.dirname(os.path.dirname(package))
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=root + (os.pathsep + path if path else ""))
        self.process = subprocess.Popen([sys.executable, "-m", __name__, payload], env=env,
                                        cwd=root,   # "-m" puts the working folder first
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)

    def wait(self, timeout: float = 600.0) -> bool:
        """Wait for the other process, if it started; True when it compiled the kernel. On a
        failure or after ``timeout`` s, False, with its error output in :attr:`error` (a process
        still running is stopped)."""
        if self.process is None:
            return False
        try:
            self.error = self.process.communicate(timeout=timeout)[1].strip()
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.error = self.process.communicate()[1].strip() or f"no result within {timeout} s"
            return False
        return self.process.returncode == 0


def _compile_here(payload: str) -> None:
    """The other process of :class:`CompileElsewhere`: compile the kernel named in
    ``payload`` for its types (into numba's on-disk cache)."""
    module, qualname, source, types = pickle.loads(base64.b64decode(payload))
    imported = importlib.import_module(module)
    if os.path.abspath(imported.__file__) != source:   # it would land in another cache
        raise RuntimeError(f"{module} is {imported.__file__} here, {source} in the caller")
    getattr(imported, qualname).compile(types)


if __name__ == "__main__":
    _compile_here(sys.argv[1])
