"""Several tables in one byte buffer, so that a compiled call takes one argument for all of them.

numba's dispatcher charges every argument of a call from Python: measured here about 80 ns for a
plain array and about 300 ns for a record (structured) array, whose dtype it hashes on every call.
The Model's constant tables and the Data's per-cycle tables are therefore each kept in one
``uint8`` buffer. Python works on views of it (record tables, plain arrays); compiled code takes
the buffer, views it once as int64 and float64 words (:func:`words_of`), and table ``i`` with
:func:`records` or :func:`int32_matrix` (views of its bytes), :func:`float_matrix`,
:func:`float_vector` or :func:`int_vector` (slices of the words).

Layout (byte offsets): an int64 header ``[n, start_0, end_0, ..., start_{n-1}, end_{n-1}]``,
then table ``i`` in ``[start_i, end_i)``, each start a multiple of 64 (every dtype here is
aligned to at most 8 bytes), and the buffer's length a multiple of 64. A table of 0 rows has
``start == end``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["pack", "words_of", "records", "float_matrix", "float_vector", "int_vector",
           "int32_matrix"]

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
def words_of(buffer):
    """``(ints, floats)``: the whole buffer as int64 and as float64 words, viewed once per call
    (its length is a multiple of 64 bytes). ``ints`` begins with the header. A table of plain
    numbers is then a slice of one of them: a few ns, where a ``view`` of its own bytes costs
    about 60 ns in compiled code (measured here: 8 tables 108 against 480 ns)."""
    return buffer.view(np.int64), buffer.view(np.float64)


@njit(cache=True, inline="always")
def records(buffer, ints, i, dtype):
    """Table ``i`` of ``buffer`` as a 1-D array of ``dtype`` (a record dtype)."""
    return buffer[ints[1 + 2 * i]:ints[2 + 2 * i]].view(dtype)


@njit(cache=True, inline="always")
def float_matrix(floats, ints, i, columns):
    """Table ``i`` as a float64 array ``(rows, columns)``."""
    s, e = ints[1 + 2 * i] // 8, ints[2 + 2 * i] // 8
    return floats[s:e].reshape(((e - s) // columns, columns))


@njit(cache=True, inline="always")
def float_vector(floats, ints, i):
    """Table ``i`` as a 1-D float64 array."""
    return floats[ints[1 + 2 * i] // 8:ints[2 + 2 * i] // 8]


@njit(cache=True, inline="always")
def int_vector(ints, i):
    """Table ``i`` as a 1-D int64 array."""
    return ints[ints[1 + 2 * i] // 8:ints[2 + 2 * i] // 8]


@njit(cache=True, inline="always")
def int32_matrix(buffer, ints, i, columns):
    """Table ``i`` as an int32 array ``(rows, columns)`` (a view of its bytes)."""
    s, e = ints[1 + 2 * i], ints[2 + 2 * i]
    return buffer[s:e].view(np.int32).reshape(((e - s) // (4 * columns), columns))
