"""The JIT as the node meets it (ros/jit.py): numba's cache folder where the installed tree is
read-only, and the count of compilations the node logs (issue 14 §6). No ROS needed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from numba import njit

from ambf_collision.ros.jit import (KERNEL_FOLDERS, PACKAGE_DIR, CompileWatch, choose_numba_cache_dir,
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
                    if "@njit" in p.read_text()}
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
