"""Several tables in one byte buffer, so that a compiled call takes one argument for all of them.

numba's dispatcher charges every argument of a call from Python: measured here about 80 ns for a
plain array and about 300 ns for a record (structured) array, whose dtype it hashes on every call.
The Model's constant tables and the Data's per-cycle tables are therefore each kept in one
``uint8`` buffer. Python works on views of it (record tables, plain arrays); compiled code takes
the buffer, views its header once (:func:`header_of`) and table ``i`` with :func:`records`,
:func:`float_matrix`, :func:`float_vector` or :func:`int_vector`.

Layout (byte offsets): an int64 header ``[n, start_0, end_0, ..., start_{n-1}, end_{n-1}]``,
then table ``i`` in ``[start_i, end_i)``, each start a multiple of 64 (every dtype here is
aligned to at most 8 bytes). A table of 0 rows has ``start == end``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pack", "header_of", "records", "float_matrix", "float_vector", "int_vector"]

_ALIGN = 64


def pack(arrays, writeable: bool = True):
    """``(buffer, views)``: the arrays (record tables or plain float64/int64 arrays, C-ordered)
    copied into one new buffer, and a view of each in it (same dtype and shape). With
    ``writeable=False`` the buffer and every view are read-only."""
    arrays = [np.ascontiguousarray(a) for a in arrays]
    header = 8 * (1 + 2 * len(arrays))
    spans, start = [], -(-header // _ALIGN) * _ALIGN
    for a in arrays:
        spans.append((start, start + a.nbytes))
        start = -(-(start + a.nbytes) // _ALIGN) * _ALIGN
    buffer = np.zeros(max(start, header), dtype=np.uint8)
    buffer[:header] = np.array([len(arrays)] + [x for s in spans for x in s], np.int64).view(np.uint8)
    for a, (s, e) in zip(arrays, spans):
        buffer[s:e] = a.reshape(-1).view(np.uint8)
    buffer.flags.writeable = writeable
    views = [buffer[s:e].view(a.dtype).reshape(a.shape) for a, (s, e) in zip(arrays, spans)]
    return buffer, views


@njit(cache=True, inline="always")
def header_of(buffer):
    """The int64 header of ``buffer`` (``[n, start_0, end_0, ...]``): viewed once per call
    and handed to the functions below (a view costs ~35 ns in compiled code)."""
    n = buffer[:8].view(np.int64)[0]
    return buffer[:8 * (1 + 2 * n)].view(np.int64)


@njit(cache=True, inline="always")
def records(buffer, header, i, dtype):
    """Table ``i`` of ``buffer`` as a 1-D array of ``dtype`` (a record dtype)."""
    return buffer[header[1 + 2 * i]:header[2 + 2 * i]].view(dtype)


@njit(cache=True, inline="always")
def float_matrix(buffer, header, i, columns):
    """Table ``i`` of ``buffer`` as a float64 array ``(rows, columns)``."""
    s, e = header[1 + 2 * i], header[2 + 2 * i]
    return buffer[s:e].view(np.float64).reshape(((e - s) // (8 * columns), columns))


@njit(cache=True, inline="always")
def float_vector(buffer, header, i):
    """Table ``i`` of ``buffer`` as a 1-D float64 array."""
    return buffer[header[1 + 2 * i]:header[2 + 2 * i]].view(np.float64)


@njit(cache=True, inline="always")
def int_vector(buffer, header, i):
    """Table ``i`` of ``buffer`` as a 1-D int64 array."""
    return buffer[header[1 + 2 * i]:header[2 + 2 * i]].view(np.int64)
