"""numba's cache of the package's kernels (geometry/kernel_cache.py: keyed by each kernel's own
sources and what they import) and the count of compilations the node logs (monitor/jit.py).
No ROS needed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from ambf_collision.geometry import kernel_cache
from ambf_collision.geometry.kernel_cache import (LOCATORS, imported_files, kernel_digest,
                                                  kernel_files, user_cache_dir)
from ambf_collision.monitor.jit import CompileWatch

PACKAGE = Path(kernel_cache.PACKAGE_DIR)


def test_compile_watch_counts_compilations_not_cached_calls():
    @njit(cache=False)
    def twice(x):
        return 2.0 * x

    with CompileWatch() as first:
        assert twice(np.float64(1.5)) == 3.0
    with CompileWatch() as second:
        assert twice(np.float64(2.5)) == 5.0  # the same signature: compiled already
    with CompileWatch() as third:
        assert twice(np.int64(3)) == 6.0  # a new signature: compiled again
    assert first.compiled >= 1 and second.compiled == 0 and third.compiled >= 1
    assert first.seconds > 0.0 and second.seconds >= 0.0


def _tree(root: Path, files: dict) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text))
    return root


def test_imports_resolve_to_the_packages_files(tmp_path):
    """Absolute, relative and ``from package import module`` imports, inside functions too; a
    name from a package's ``__init__`` counts the ``__init__``; other packages do not count."""
    pkg = _tree(tmp_path / "pkg", {
        "__init__.py": "", "a/__init__.py": "X = 1\n", "a/one.py": "", "a/two.py": "",
        "b/__init__.py": "", "b/three.py": "", "b/four.py": "",
        "b/main.py": """
            import numpy as np
            from pkg.a.one import f
            from pkg.a import two, X
            from . import three
            def g():
                from .four import h
            """})
    found = {str(Path(p).relative_to(pkg)) for p in imported_files(str(pkg / "b" / "main.py"))}
    assert found == {"a/one.py", "a/two.py", "a/__init__.py", "b/three.py", "b/four.py"}


def test_the_digest_follows_code_not_docstrings_and_imports_transitively(tmp_path):
    pkg = _tree(tmp_path / "pkg", {
        "__init__.py": "", "k.py": "from pkg.c import f\n",
        "c.py": '"""Callee."""\nfrom pkg.d import SCALE\ndef f(x):\n    return SCALE * x\n',
        "d.py": "SCALE = 2.0\n", "node.py": "from pkg.k import f\n"})
    kernel = str(pkg / "k.py")
    assert [Path(p).name for p in kernel_files(kernel)] == ["c.py", "d.py", "k.py"]
    before = kernel_digest(kernel)
    (pkg / "c.py").write_text('"""The callee,\nreworded."""\nfrom pkg.d import SCALE\n'
                              'def f(x):\n    """Twice."""\n    return SCALE * x\n')
    (pkg / "node.py").write_text("from pkg.k import f  # imports the kernel, not imported by it\n"
                                 "print(f)\n")
    assert kernel_digest(kernel) == before
    (pkg / "d.py").write_text("SCALE = 3.0\n")  # a constant two imports away
    assert kernel_digest(kernel) != before


def test_no_kernel_depends_on_the_node_or_the_command_line():
    """The package's own kernel modules: their digests cover their callees (EPA for the model's
    kernel) and never the node, the CLI or the loaders, whose edits then recompile nothing."""
    kernels = [p for p in PACKAGE.rglob("*.py") if "@njit" in p.read_text()]
    assert len(kernels) >= 15
    closure = {Path(f).relative_to(PACKAGE).as_posix() for p in kernels for f in kernel_files(str(p))}
    evaluate = {Path(f).relative_to(PACKAGE).as_posix()
                for f in kernel_files(str(PACKAGE / "model" / "evaluate_kernel.py"))}
    assert {"geometry/epa.py", "geometry/gjk.py", "model/jacobians.py"} <= evaluate
    assert not {f for f in closure if f.startswith(("cli/", "monitor/monitor", "ros/node"))}
    assert "ros/node.py" not in closure and "model/adf.py" not in closure


def test_every_kernel_of_the_package_is_stamped_by_its_digest():
    """Each sub-package's ``__init__`` installs the locators before its modules' kernels are
    decorated (whichever module a process imports first); a kernel outside the package keeps
    numba's own."""
    import importlib

    from numba.core.registry import CPUDispatcher

    cached, sub_packages = [], set()
    for path in PACKAGE.rglob("*.py"):
        if "@njit(cache=True" not in path.read_text():
            continue
        sub_packages.add(path.relative_to(PACKAGE).parts[0])
        module = importlib.import_module(
            "ambf_collision." + path.relative_to(PACKAGE).with_suffix("").as_posix().replace("/", "."))
        cached += [v for v in vars(module).values()
                   if isinstance(v, CPUDispatcher) and v._cache.__class__.__name__ != "NullCache"]
    assert len(cached) >= 30
    wrong = [d.py_func.__qualname__ for d in cached if type(d._cache._impl.locator) not in LOCATORS]
    assert not wrong, wrong
    without = [sub for sub in sorted(sub_packages) if "from ambf_collision.geometry import "
               "kernel_cache" not in (PACKAGE / sub / "__init__.py").read_text()]
    assert sub_packages >= {"geometry", "model", "probes", "monitor", "ros"} and not without

    @njit(cache=True)
    def outside(x):
        return x

    assert type(outside._cache._impl.locator) not in LOCATORS


def test_the_user_cache_folder(tmp_path, monkeypatch):
    """Where the folder next to the sources is read-only numba's next choice, the user-wide
    locator, keeps the package's kernels in ``$XDG_CACHE_HOME/ambf_collision/numba``, stamped by
    their digest."""
    from ambf_collision.geometry.transforms import rotation_quaternion

    assert user_cache_dir({"XDG_CACHE_HOME": "/x"}) == "/x/ambf_collision/numba"
    assert user_cache_dir({}) == str(Path.home() / ".cache" / "ambf_collision" / "numba")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    source = rotation_quaternion.py_func.__code__.co_filename
    user_wide = LOCATORS[2].from_function(rotation_quaternion.py_func, source)
    assert Path(user_wide.get_cache_path()).parent == tmp_path / "ambf_collision" / "numba"
    assert user_wide.get_source_stamp()[1] == kernel_digest(source)


KERNEL = '''
from numba import njit
from ambf_collision.geometry.tiny_callee import scale

@njit(cache=True)
def tiny(x):
    return scale(x) + 1.0
'''
CALLEE = '''
from numba import njit

@njit(cache=True)
def scale(x):
    return 2.0 * x
'''
RUN = """
from ambf_collision.monitor.jit import CompileWatch
from ambf_collision.geometry.tiny_kernel import tiny
with CompileWatch() as w:
    value = tiny(1.5)
print(value, w.compiled)
"""


def _copy_package(root: Path) -> Path:
    """The package's geometry, monitor and tiny kernels in ``root``/ambf_collision (the locators
    apply to the package's own files)."""
    pkg = root / "ambf_collision"
    for sub in ("geometry", "monitor"):
        shutil.copytree(PACKAGE / sub, pkg / sub, ignore=shutil.ignore_patterns("__pycache__"))
    (pkg / "__init__.py").write_text("")
    (pkg / "ros").mkdir()
    (pkg / "ros" / "__init__.py").write_text("")
    (pkg / "ros" / "node.py").write_text("X = 1\n")
    (pkg / "geometry" / "tiny_kernel.py").write_text(KERNEL)
    (pkg / "geometry" / "tiny_callee.py").write_text(CALLEE)
    return pkg


def _run(root: Path) -> tuple:
    """``(value, functions compiled)`` of the tiny kernel's first call in a fresh process
    importing the package from ``root``, in the cache next to its sources."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["PYTHONPATH"] = str(root)
    out = subprocess.run([sys.executable, "-c", RUN], env=env, cwd=root, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    value, compiled = out.stdout.split()
    return float(value), int(compiled)


@pytest.mark.slow
def test_a_callees_edit_recompiles_the_kernel_and_nothing_else_does(tmp_path):
    """numba alone would load ``tiny`` compiled against the old callee (it checks the kernel's
    own file only: a stale GJK kernel once kept an EPA bug fixed in another file)."""
    pkg = _copy_package(tmp_path)
    assert _run(tmp_path) == (4.0, 2)           # cold: the kernel and its callee
    assert _run(tmp_path) == (4.0, 0)           # warm
    (pkg / "ros" / "node.py").write_text("X = 2  # the node edited\n")
    (pkg / "geometry" / "tiny_callee.py").write_text('"""Scaling."""\n' + CALLEE)
    assert _run(tmp_path) == (4.0, 0)           # a docstring and a module no kernel imports
    (pkg / "geometry" / "tiny_callee.py").write_text(CALLEE.replace("2.0 * x", "3.0 * x"))
    assert _run(tmp_path) == (5.5, 2)           # the callee changed: both compile again


@pytest.mark.slow
def test_two_trees_sharing_linked_cache_files_keep_their_own(tmp_path):
    """A colcon symlink install links the source tree's ``__pycache__`` files into its own: each
    tree keeps a cache of its own, and a link is replaced, never written through."""
    src, install = tmp_path / "src", tmp_path / "install"
    _copy_package(src)
    assert _run(src) == (4.0, 2)
    _copy_package(install)
    linked = install / "ambf_collision" / "geometry" / "__pycache__"
    linked.mkdir()
    for cached in (src / "ambf_collision" / "geometry" / "__pycache__").glob("tiny*.nb?"):
        (linked / cached.name).symlink_to(cached)
    assert _run(install) == (4.0, 0)            # the same sources: the linked cache serves
    (install / "ambf_collision" / "geometry" / "tiny_callee.py").write_text(
        CALLEE.replace("2.0 * x", "3.0 * x"))  # only the install tree's callee changes
    before = {p.name: p.read_bytes() for p in (src / "ambf_collision").rglob("tiny*.nb?")}
    assert _run(install) == (5.5, 2)
    assert {p.name: p.read_bytes() for p in (src / "ambf_collision").rglob("tiny*.nb?")} == before
    assert _run(src) == (4.0, 0) and _run(install) == (5.5, 0)
