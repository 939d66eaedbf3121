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
"""

from __future__ import annotations

import os
import time
from pathlib import Path

__all__ = ["KERNEL_FOLDERS", "CompileWatch", "choose_numba_cache_dir", "user_cache_dir"]

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
