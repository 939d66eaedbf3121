"""The compiled core's JIT as the node and the command-line tool meet it (issue 14 §6; no ROS).

numba compiles the kernels (``@njit(cache=True)``) on their first call and keeps them in an
on-disk cache keyed by each kernel's own sources (``geometry/kernel_cache.py``). A colcon build
compiles them when it installs the package (``ros/compile_kernels.py``, run by
``CMakeLists.txt``), so a node finds them compiled. Where they do compile (a tree edited after its
build, a pip install), :class:`CompileWatch` counts numba's compilations during the node's scene
load (numba's own ``numba:compile`` events: none when every kernel comes from the cache), so the
node logs once that it compiled and how long that took, and :class:`FirstCompile` has
``ambf-collision`` say so before the wait.
"""

from __future__ import annotations

import os
import sys
import time

__all__ = ["CompileWatch", "FirstCompile", "package_root"]


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
    comes from its cache: the CLI says then that it compiles."""

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
