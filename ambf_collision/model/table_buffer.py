"""Several tables in one byte buffer, so that a compiled call takes one argument for all of them.

numba's dispatcher charges every argument of a call from Python: measured here about 80 ns for a
plain array and about 300 ns for a record (structured) array, whose dtype it hashes on every call.
The Model's constant tables and the Data's per-cycle tables are therefore each kept in one
``uint8`` buffer. Python works on views of it (record tables, plain arrays); compiled code takes
the buffer and views table ``i`` with :func:`records`, :func:`float_matrix`, :func:`float_vector`
or :func:`int_vector`.

Layout (byte offsets): an int64 header ``[n, start_0, end_0, ..., start_{n-1}, end_{n-1}]``,
then table ``i`` in ``[start_i, end_i)``, each start a multiple of 64 (every dtype here is
aligned to at most 8 bytes). A table of 0 rows has ``start == end``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pack", "records", "float_matrix", "float_vector", "int_vector"]

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
def _span(buffer, i):
    h = buffer[8 + 16 * i:24 + 16 * i].view(np.int64)
    return h[0], h[1]


@njit(cache=True, inline="always")
def records(buffer, i, dtype):
    """Table ``i`` of ``buffer`` as a 1-D array of ``dtype`` (a record dtype)."""
    s, e = _span(buffer, i)
    return buffer[s:e].view(dtype)


@njit(cache=True, inline="always")
def float_matrix(buffer, i, columns):
    """Table ``i`` of ``buffer`` as a float64 array ``(rows, columns)``."""
    s, e = _span(buffer, i)
    return buffer[s:e].view(np.float64).reshape(((e - s) // (8 * columns), columns))


@njit(cache=True, inline="always")
def float_vector(buffer, i):
    """Table ``i`` of ``buffer`` as a 1-D float64 array."""
    s, e = _span(buffer, i)
    return buffer[s:e].view(np.float64)


@njit(cache=True, inline="always")
def int_vector(buffer, i):
    """Table ``i`` of ``buffer`` as a 1-D int64 array."""
    s, e = _span(buffer, i)
    return buffer[s:e].view(np.int64)
