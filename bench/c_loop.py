"""Plain C reference loops for the benches: built with the machine's ``gcc -O3`` and called once
per evaluation through ctypes, so that a bench times the compiled kernels against what one would
write by hand, in the same run.

    fn = compile_c(SOURCE, "probes", tmp_dir)      # the C function ``probes`` of SOURCE
    fn(ctypes.c_long(n), pointer(array), ...)
"""

from __future__ import annotations

import ctypes
import subprocess
from pathlib import Path

__all__ = ["compile_c", "pointer"]


def compile_c(source: str, function: str, tmp: Path, restype=ctypes.c_long):
    """``function`` of the C ``source``, built with ``gcc -O3`` into the folder ``tmp``, as a
    ctypes function returning ``restype``."""
    src, lib = Path(tmp) / f"{function}.c", Path(tmp) / f"{function}.so"
    src.write_text(source)
    subprocess.run(["gcc", "-O3", "-shared", "-fPIC", "-o", str(lib), str(src), "-lm"], check=True)
    fn = getattr(ctypes.CDLL(str(lib)), function)
    fn.restype = restype
    return fn


def pointer(array):
    """The data pointer of a NumPy array (C-contiguous, of the C side's element type)."""
    return ctypes.c_void_p(array.ctypes.data)
