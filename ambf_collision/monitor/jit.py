"""The compiled core's JIT as the node and the command-line tool meet it (issue 14 §6; no ROS).

numba compiles the kernels (``@njit(cache=True)``) on their first call and keeps them in an
on-disk cache. What the node (``ros/scene_loading.py``) and ``ambf-collision check`` take care of:

- **Where the cache lives.** numba writes it next to the sources (``__pycache__``) when that
  folder is writable, which is the case in a source checkout, a colcon workspace and a user's
  pip install. Where it is not (a package installed system-wide, a read-only image),
  :func:`choose_numba_cache_dir` sets ``NUMBA_CACHE_DIR`` to ``$XDG_CACHE_HOME/ambf_collision/numba``
  (``~/.cache/ambf_collision/numba`` by default) before numba is imported, so compiled kernels
  are still kept between runs. A ``NUMBA_CACHE_DIR`` the user has set is always kept. The
  executables call it first (``scripts/collision_monitor``, :func:`ambf_collision.ros.node.main`).
- **Never a stale kernel.** numba checks a cached kernel against its own source file only: a
  kernel whose callee in another file changed is loaded as it was compiled before (numba's PRs
  8396 and 9563, which would track the other files, were not merged). A pull in a source checkout
  or a colcon symlink install changes some files and not others, so :func:`drop_stale_kernels`
  keeps a digest of the package's sources beside the cache next to them and deletes that cache
  when they changed. (An install rewrites every file, which numba's own check catches.)
- **Saying when it compiles.** :class:`CompileWatch` counts numba's compilations during the scene
  load (numba's own ``numba:compile`` events: none when every kernel comes from the cache), so
  the node logs once that it compiled and how long that took.
- **Compiling on both cores.** numba compiles one function at a time in a process, and compiles
  a callee while it types its caller. On a cold cache the scene load has a second Python
  process (:class:`CompileElsewhere`, ``python -m ambf_collision.monitor.jit``) compile, into
  numba's on-disk cache, what can be compiled apart from the model's kernel, in the order it is
  needed: functions the model's kernel reaches late in its own compilation (EPA, the contacts'
  ordering: ``Model.separate_callees``), the probes' kernel and, in the node, the markers'
  kernels. This process, compiling the model's kernel, loads each from the cache when it reaches
  it, if it is there by then (else it compiles it as usual: the same result, a little later).
"""

from __future__ import annotations

import base64
import hashlib
import importlib
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["KERNEL_FOLDERS", "CompileElsewhere", "CompileWatch", "FirstCompile", "choose_numba_cache_dir",
           "drop_stale_kernels", "evaluate_compiling_elsewhere", "package_root", "user_cache_dir"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed ``ambf_collision`` folder (its sub-packages hold the kernels)."""
KERNEL_FOLDERS = ("geometry", "model", "probes", "monitor", "ros")
"""The sub-packages of :data:`PACKAGE_DIR` with compiled kernels (``monitor``: the joint-state
merge; ``ros``: the markers')."""


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


SOURCES_STAMP = "numba_sources-{tree}.sha256"
"""The digest of the sources the cache next to them was compiled from, in the package's
``__pycache__``; ``tree``: a digest of the package folder's path, so that each copy of the
package keeps its own (a colcon symlink install links the files of the source tree's
``__pycache__`` into its own: one shared file would have two trees drop each other's cache)."""


def sources_digest(package_dir: Path) -> str:
    """SHA-256 of every ``.py`` file of ``package_dir`` (relative paths and contents, in order;
    a dangling link, as an install tree can keep for a deleted module, is not a source)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in package_dir.rglob("*.py") if p.is_file()):
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def drop_stale_kernels(package_dir: Path | None = None, environ=None) -> int:
    """Delete numba's cache next to the sources of ``package_dir`` (default: the package as
    imported, :func:`package_root`) when they changed since it was kept (module docstring), and
    note their digest; returns the number of cache files deleted. Nothing happens where numba
    keeps its cache elsewhere (``NUMBA_CACHE_DIR`` set) or the folder is not writable."""
    environ = os.environ if environ is None else environ
    if package_dir is None:
        package_dir = Path(package_root()) / "ambf_collision"
    if environ.get("NUMBA_CACHE_DIR") or not _writable(package_dir):
        return 0
    cache = package_dir / "__pycache__"
    digest = sources_digest(package_dir)
    tree = hashlib.sha256(str(package_dir).encode()).hexdigest()[:16]
    stamp = cache / SOURCES_STAMP.format(tree=tree)
    if stamp.is_file() and stamp.read_text().strip() == digest:
        return 0
    stale = [f for pattern in ("*.nbi", "*.nbc") for f in package_dir.rglob(f"__pycache__/{pattern}")]
    for f in stale:
        f.unlink(missing_ok=True)
    cache.mkdir(exist_ok=True)
    stamp.unlink(missing_ok=True)  # a link to another tree's stamp is not written through
    stamp.write_text(digest + "\n")
    return len(stale)


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


class FirstCompile:
    """Calls ``callback()`` once, when numba first starts compiling a function inside the
    ``with`` block (any thread; numba's ``numba:compile`` events), and never when every function
    comes from its cache: the node's second process starts then (:class:`CompileElsewhere`), the
    CLI says then that it compiles."""

    def __init__(self, callback):
        self.callback = callback
        self.called = False

    def __enter__(self):
        from numba.core import event

        outer = self

        class _Listener(event.Listener):  # here: numba is imported on first use (module doc)
            def on_start(self, ev):
                if not outer.called:
                    outer.called = True
                    outer.callback()

            def on_end(self, ev):
                pass

        self._listener = _Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)
        return False


def package_root() -> str:
    """The folder holding the ``ambf_collision`` package as imported here: not its resolved path
    (numba keys its cache by the source's path, and a colcon symlink install links every module
    to the sources)."""
    package = os.path.abspath(sys.modules["ambf_collision"].__file__)
    return os.path.dirname(os.path.dirname(package))


class CompileElsewhere:
    """Compiles ``jobs``, each ``(kernel, args)`` (an ``@njit(cache=True)`` function and
    arguments of a call to it), for the types of the arguments, in turn, in a second Python
    process, started when numba first starts compiling something in this one inside the
    ``with`` block (on a warm cache nothing compiles, and no process starts). The kernels land
    in numba's on-disk cache (the same ``NUMBA_CACHE_DIR``), so that their first calls here,
    after :meth:`wait`, load them instead of compiling them::

        with CompileElsewhere([(evaluate_probes, probe_args)]) as elsewhere:
            model.evaluate(data)     # compiles the model's kernel here, the probes' there
        elsewhere.wait()
        probes.evaluate(...)         # loaded from the cache

    Nothing runs the kernels there: the types (``numba.typeof`` of each argument) are all it
    gets. Where that process fails on a kernel, the kernel's first call here compiles it as
    usual."""

    def __init__(self, jobs):
        import numba

        self.jobs = [(kernel, tuple(numba.typeof(a) for a in args)) for kernel, args in jobs]
        self.process = None
        self.error = ""
        self._compiled = None  # what wait() found, once it has waited

    def __enter__(self):
        self._first = FirstCompile(self._start).__enter__()
        return self

    def __exit__(self, exc_type, *exc):
        self._first.__exit__(exc_type, *exc)
        if exc_type is not None and self.process is not None:
            self.process.kill()
            self.process.wait()
        return False

    def _start(self):
        root = package_root()
        path = os.environ.get("PYTHONPATH")
        env = dict(os.environ, PYTHONPATH=root + (os.pathsep + path if path else ""))
        self.process = subprocess.Popen([sys.executable, "-m", __name__, _encode(self.jobs)],
                                        env=env, cwd=root,   # "-m" puts the working folder first
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.PIPE, text=True)

    def wait(self, timeout: float = 600.0) -> bool:
        """Wait for the other process, if it started; True when it compiled every kernel. On a
        failure or after ``timeout`` s, False, with its error output in :attr:`error` (a process
        still running is stopped). Later calls return the same answer without waiting."""
        if self.process is None:
            return False
        if self._compiled is None:
            try:
                self.error = self.process.communicate(timeout=timeout)[1].strip()
                self._compiled = self.process.returncode == 0
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.error = (self.process.communicate()[1].strip()
                              or f"no result within {timeout} s")
                self._compiled = False
        return self._compiled


def evaluate_compiling_elsewhere(model, data, extra_jobs=(), **options) -> tuple:
    """``(result, elsewhere)``: ``model.evaluate(data, **options)``, where on a cold cache a
    :class:`CompileElsewhere` compiles meanwhile the model's separate callees
    (``Model.separate_callees``), then ``extra_jobs`` (``(kernel, args)`` the caller calls next:
    the probes' kernel, the markers'), and is waited for before returning: their first calls
    then load them from the cache. ``elsewhere.process`` is None when nothing compiled (a warm
    cache); ``elsewhere.wait()`` says whether it compiled every kernel."""
    jobs = list(model.separate_callees(data)) + list(extra_jobs)
    with CompileElsewhere(jobs) as elsewhere:
        result = model.evaluate(data, **options)
    elsewhere.wait()  # a kernel it could not compile compiles here on its first call
    return result, elsewhere


def _encode(jobs) -> str:
    """The command-line payload of :func:`_compile_here` for ``jobs``, each ``(kernel, types)``:
    per kernel its module, name, source file and argument types, pickled, in base64."""
    named = [(k.py_func.__module__, k.py_func.__qualname__,
              os.path.abspath(sys.modules[k.py_func.__module__].__file__), types)
             for k, types in jobs]
    return base64.b64encode(pickle.dumps(named)).decode("ascii")


def _compile_here(payload: str) -> bool:
    """The other process of :class:`CompileElsewhere`: compile each kernel named in ``payload``
    (:func:`_encode`) for its types, into numba's on-disk cache. A kernel that fails is reported
    on stderr and the others still compiled; returns False if any failed. A module imported here
    from another file than the caller's is refused (RuntimeError): it would land in another
    cache."""
    ok = True
    for module, qualname, source, types in pickle.loads(base64.b64decode(payload)):
        imported = importlib.import_module(module)
        if os.path.abspath(imported.__file__) != source:
            raise RuntimeError(f"{module} is {imported.__file__} here, {source} in the caller")
        try:
            getattr(imported, qualname).compile(types)
        except Exception as err:  # noqa: BLE001 - reported; the caller compiles it itself
            print(f"{module}.{qualname}: {type(err).__name__}: {err}", file=sys.stderr)
            ok = False
    return ok


if __name__ == "__main__":
    sys.exit(0 if _compile_here(sys.argv[1]) else 1)
