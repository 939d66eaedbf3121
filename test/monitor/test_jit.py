"""The JIT as the node and the CLI meet it (monitor/jit.py): numba's cache folder where the
installed tree is read-only, the count of compilations the node logs, and a kernel compiled in a
second process into the cache this one loads it from (issue 14 §6). No ROS needed."""

from __future__ import annotations

import importlib
import os
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from ambf_collision.monitor.jit import (KERNEL_FOLDERS, PACKAGE_DIR, CompileElsewhere, CompileWatch,
                                   _compile_here, _encode, choose_numba_cache_dir, drop_stale_kernels,
                                   user_cache_dir)


def test_a_cache_dir_the_user_set_is_kept():
    env = {"NUMBA_CACHE_DIR": "/somewhere"}
    assert choose_numba_cache_dir(env, writable=lambda f: False) is None
    assert env == {"NUMBA_CACHE_DIR": "/somewhere"}


def test_a_writable_tree_keeps_numbas_own_choice():
    env = {}
    assert choose_numba_cache_dir(env, writable=lambda f: True) is None
    assert env == {}


def test_a_read_only_tree_gets_the_user_cache_dir(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    seen = []
    chosen = choose_numba_cache_dir(env, writable=lambda f: seen.append(f.name) or f.name != "model")
    assert chosen == env["NUMBA_CACHE_DIR"] == str(tmp_path / "ambf_collision" / "numba")
    assert "model" in seen  # the folder found read-only decided it
    assert user_cache_dir({}) == Path.home() / ".cache" / "ambf_collision" / "numba"


def test_the_kernel_folders_exist_and_hold_every_kernel():
    for sub in KERNEL_FOLDERS:
        assert (PACKAGE_DIR / sub / "__init__.py").is_file()
    with_kernels = {p.relative_to(PACKAGE_DIR).parts[0] for p in PACKAGE_DIR.rglob("*.py")
                    if re.search(r"^@njit\b", p.read_text(), re.MULTILINE)}  # decorated functions
    assert with_kernels == set(KERNEL_FOLDERS)  # the check looks at each folder that has one


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


KERNELS = """
from numba import njit

@njit(cache=True)
def weighted_sum(a, w):
    s = 0.0
    for i in range(a.shape[0]):
        s += w * a[i]
    return s

@njit(cache=True)
def plus_one(x):
    return x + 1.0
"""


@pytest.fixture
def fresh_kernels(tmp_path, monkeypatch):
    """A module of two cached kernels in a new folder (so numba's cache of them starts empty),
    importable here and in a child process."""
    name = f"ahead_kernels_{os.getpid()}_{tmp_path.name}".replace("-", "_")
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(KERNELS))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path),
                                                                   os.environ.get("PYTHONPATH")])))
    return importlib.import_module(name)


@pytest.mark.slow
def test_a_kernel_compiled_elsewhere_is_loaded_here_from_the_cache(fresh_kernels, tmp_path,
                                                                  monkeypatch):
    k = fresh_kernels
    shadow = tmp_path / "working_folder"   # a copy of the module where the process runs, as a
    shadow.mkdir()                         # source tree beside a colcon install: not the one
    (shadow / Path(k.__file__).name).write_text(Path(k.__file__).read_text())   # imported here
    monkeypatch.chdir(shadow)
    a = np.array([1.0, 2.0, 3.5])
    with CompileElsewhere([(k.weighted_sum, (a, 2.0))]) as elsewhere:
        assert elsewhere.process is None  # started by the first compilation in the block
        assert k.plus_one(1.0) == 2.0
        assert elsewhere.process is not None
    assert elsewhere.wait(), elsewhere.error
    with CompileWatch() as here:
        assert k.weighted_sum(a, 2.0) == 13.0  # 2 * (1 + 2 + 3.5), exact in binary
    assert here.compiled == 0  # loaded from what the other process wrote

    with CompileElsewhere([(k.weighted_sum, (a, 2.0))]) as warm:
        assert k.plus_one(2.0) == 3.0  # compiled already: nothing compiles, no process
    assert warm.process is None and warm.wait() is False


@pytest.mark.slow
def test_a_failed_compilation_elsewhere_is_reported_and_compiled_here(fresh_kernels):
    k = fresh_kernels
    with CompileElsewhere([(k.weighted_sum, ("not an array", 2.0)),
                           (k.plus_one, (2.5,))]) as elsewhere:
        k.plus_one(1)   # an int64 version here: starts the other process
    assert elsewhere.wait() is False
    assert "weighted_sum" in elsewhere.error and "plus_one" not in elsewhere.error
    error = elsewhere.error
    assert elsewhere.wait() is False and elsewhere.error == error  # asked again: the same answer
    with CompileWatch() as here:  # the first call here compiles it, as without the other process
        assert k.weighted_sum(np.array([0.5, 0.25]), 4.0) == 3.0
    assert here.compiled >= 1
    with CompileWatch() as after:  # the job after the failed one was still compiled there
        assert k.plus_one(2.5) == 3.5
    assert after.compiled == 0


def test_an_error_in_the_block_stops_the_other_process(fresh_kernels):
    k = fresh_kernels
    with pytest.raises(KeyError):
        with CompileElsewhere([(k.weighted_sum, (np.zeros(2), 1.0))]) as elsewhere:
            k.plus_one(1.0)
            raise KeyError("the load failed")
    assert elsewhere.process.returncode is not None  # ended, not left compiling


def test_the_other_process_refuses_a_module_imported_from_another_file(fresh_kernels):
    """numba keys its cache by the source's path: a kernel imported from another file (say the
    resolved path of a colcon symlink install) would be compiled into a cache never read."""
    from numba import typeof

    k = fresh_kernels
    payload = _encode([(k.plus_one, (typeof(1.0),))])
    elsewhere = k.__file__
    k.__file__ = "/another/install" + elsewhere   # as if imported here from another file
    try:
        with pytest.raises(RuntimeError, match="another/install"):
            _compile_here(payload)
    finally:
        k.__file__ = elsewhere
    assert k.plus_one.signatures == []  # refused before compiling


def _package(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "geometry" / "__pycache__").mkdir(parents=True)
    (pkg / "geometry" / "kernel.py").write_text("x = 1\n")
    (pkg / "geometry" / "callee.py").write_text("y = 2\n")
    return pkg


def _cache_files(pkg, names=("kernel.f-1.py311.nbi", "kernel.f-1.py311.1.nbc")):
    for name in names:
        (pkg / "geometry" / "__pycache__" / name).write_bytes(b"cached")
    return sorted(p.name for p in pkg.rglob("__pycache__/*.nb?"))


def test_the_cache_next_to_the_sources_is_dropped_when_any_source_changed(tmp_path):
    """numba would load kernel.f compiled against the old callee.py (it checks kernel.py only)."""
    pkg = _package(tmp_path)
    assert len(_cache_files(pkg)) == 2
    assert drop_stale_kernels(pkg, environ={}) == 2  # no digest kept yet: nothing is trusted
    assert _cache_files(pkg) == ["kernel.f-1.py311.1.nbc", "kernel.f-1.py311.nbi"]
    assert drop_stale_kernels(pkg, environ={}) == 0  # same sources: the cache stays
    (pkg / "geometry" / "callee.py").write_text("y = 3\n")  # another file than the kernel's
    assert drop_stale_kernels(pkg, environ={}) == 2
    assert not list(pkg.rglob("*.nb?")) and drop_stale_kernels(pkg, environ={}) == 0
    (pkg / "geometry" / "moved.py").write_text("y = 3\n")  # a new module changes the digest too
    _cache_files(pkg)
    assert drop_stale_kernels(pkg, environ={}) == 2


def test_a_cache_kept_elsewhere_is_left_alone(tmp_path):
    pkg = _package(tmp_path)
    _cache_files(pkg)
    assert drop_stale_kernels(pkg, environ={"NUMBA_CACHE_DIR": str(tmp_path / "c")}) == 0
    assert len(list(pkg.rglob("*.nb?"))) == 2 and not (pkg / "__pycache__").exists()


def test_a_dangling_link_in_an_install_tree_is_not_a_source(tmp_path):
    pkg = _package(tmp_path)
    assert drop_stale_kernels(pkg, environ={}) == 0
    (pkg / "geometry" / "deleted.py").symlink_to(tmp_path / "gone.py")
    assert drop_stale_kernels(pkg, environ={}) == 0


def test_two_trees_sharing_a_linked_stamp_keep_their_own(tmp_path):
    """A colcon symlink install links the source tree's __pycache__ files, the sources' digest
    among them, into its own: each tree's digest is its own file, and the link is not written
    through (two trees would otherwise drop each other's cache at every start)."""
    src, install = _package(tmp_path / "src"), _package(tmp_path / "install")
    (install / "geometry" / "generated.py").write_text("z = 0\n")  # the install has more files
    assert drop_stale_kernels(src, environ={}) == 0
    for stamp in (src / "__pycache__").iterdir():
        (install / "__pycache__").mkdir(exist_ok=True)
        (install / "__pycache__" / stamp.name).symlink_to(stamp)
    assert drop_stale_kernels(install, environ={}) == 0
    _cache_files(src), _cache_files(install)
    for _ in range(2):  # each start of either finds its own digest current
        assert drop_stale_kernels(src, environ={}) == 0
        assert drop_stale_kernels(install, environ={}) == 0
