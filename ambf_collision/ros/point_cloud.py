"""``sensor_msgs/msg/PointCloud2`` -> points (N,3) float64, read with NumPy alone.

:func:`decode_cloud` reads the fields ``x``, ``y``, ``z`` (datatype FLOAT32 or FLOAT64, count 1,
at their offsets; any other fields, e.g. ``rgb`` or ``intensity``, are skipped) of an organized
(``height`` > 1, rows possibly padded: ``row_step > width * point_step``) or unorganized cloud,
in either byte order, as strided views of the message's bytes and one copy to float64. Points
are in row-major order (row ``r``, column ``c`` is point ``r * width + c``), in the cloud's
frame (``header.frame_id``), m. NaN points are passed through: the
:class:`~ambf_collision.geometry.point_set.PointSet` built from them drops and counts them.

A malformed cloud is refused, never raised on: :class:`CloudPoints` then has no points and
``refused`` names the key and values at fault. A cloud of more than ``max_points`` points keeps
its first ``max_points`` (``truncated_from`` = the points it had); only the rows holding them are
read, so a 10,000,000-point cloud costs ``max_points`` points of memory and time.

:func:`make_cloud` builds a PointCloud2 (tests and benches).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["FLOAT32", "FLOAT64", "CloudPoints", "decode_cloud", "make_cloud"]

FLOAT32 = 7   # sensor_msgs/PointField datatypes
FLOAT64 = 8
_SIZES = {1: 1, 2: 1, 3: 2, 4: 2, 5: 4, 6: 4, 7: 4, 8: 8}   # INT8 .. FLOAT64: bytes
_KINDS = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 8: "f8"}
_NANOSEC = 1_000_000_000


class CloudPoints(NamedTuple):
    """A decoded cloud: ``points (N,3) float64`` (m, frame ``frame_id``, row-major order, NaN
    kept; (0,3) when refused), ``stamp`` (the header's ``builtin_interfaces/Time``),
    ``refused`` ('' when accepted, else a one-line reason), ``truncated_from`` (points in the
    cloud when more than ``max_points``, else 0), ``n_rows`` (``height * width`` as given)."""

    points: np.ndarray
    frame_id: str
    stamp: object
    refused: str
    truncated_from: int
    n_rows: int


def _refuse(msg, reason: str, n_rows: int = 0) -> CloudPoints:
    return CloudPoints(np.empty((0, 3)), str(msg.header.frame_id), msg.header.stamp,
                       f"PointCloud2 refused: {reason}", 0, n_rows)


def _coordinate_fields(fields, point_step: int):
    """``({'x': (offset, datatype), ...}, '')``, or ``(None, reason)``."""
    found = {}
    for f in fields:
        if f.name not in ("x", "y", "z"):
            continue
        if f.name in found:
            return None, f"field '{f.name}' appears twice"
        if f.datatype not in (FLOAT32, FLOAT64):
            return None, (f"field '{f.name}' has datatype {f.datatype} (supported: "
                          f"FLOAT32={FLOAT32}, FLOAT64={FLOAT64})")
        if f.count != 1:
            return None, f"field '{f.name}' has count {f.count} (must be 1)"
        end = f.offset + _SIZES[f.datatype]
        if end > point_step:
            return None, (f"point_step {point_step} is smaller than field '{f.name}' "
                          f"(offset {f.offset}, {_SIZES[f.datatype]} bytes: ends at {end})")
        found[f.name] = (f.offset, f.datatype)
    missing = [a for a in "xyz" if a not in found]
    if missing:
        names = [f.name for f in fields]
        return None, f"field(s) {', '.join(missing)} missing (fields: {names})"
    return found, ""


def decode_cloud(msg, max_points: int) -> CloudPoints:
    """The points of PointCloud2 ``msg`` (module docstring), at most ``max_points`` (>= 0)."""
    h, w = int(msg.height), int(msg.width)
    step, row = int(msg.point_step), int(msg.row_step)
    n_rows = h * w
    stamp = msg.header.stamp
    if not str(msg.header.frame_id):
        return _refuse(msg, "header.frame_id is empty", n_rows)
    if not 0 <= int(stamp.nanosec) < _NANOSEC:
        return _refuse(msg, f"header.stamp.nanosec {stamp.nanosec} is not in 0..999999999", n_rows)
    if step <= 0:
        return _refuse(msg, f"point_step is {step}", n_rows)
    fields, reason = _coordinate_fields(msg.fields, step)
    if fields is None:
        return _refuse(msg, reason, n_rows)
    if row < w * step:
        return _refuse(msg, f"row_step {row} < width {w} * point_step {step} = {w * step}", n_rows)
    raw = np.frombuffer(msg.data, np.uint8)
    if raw.size < h * row:
        return _refuse(msg, f"data has {raw.size} bytes < height {h} * row_step {row} = {h * row}",
                       n_rows)
    n = min(n_rows, max(int(max_points), 0))
    full = n // w if w else 0   # whole rows of the first n points, then a part of one
    rem = n - full * w
    out = np.empty((n, 3))
    rows = out[:full * w].reshape(full, w, 3)
    order = ">" if msg.is_bigendian else "<"
    for a, name in enumerate("xyz"):
        offset, datatype = fields[name]
        kind = np.dtype(order + _KINDS[datatype])
        if full:
            rows[:, :, a] = np.ndarray((full, w), kind, buffer=raw, offset=offset,
                                       strides=(row, step))
        if rem:
            out[full * w:, a] = np.ndarray((rem,), kind, buffer=raw, offset=offset + full * row,
                                           strides=(step,))
    return CloudPoints(out, str(msg.header.frame_id), stamp, "", n_rows if n < n_rows else 0,
                       n_rows)


def make_cloud(points, frame_id: str = "camera", stamp=(0, 0), dtype=np.float32,
               extra_fields=(), width: int | None = None, row_padding: int = 0,
               big_endian: bool = False):
    """A ``sensor_msgs/msg/PointCloud2`` of ``points (N,3)`` (m) in frame ``frame_id`` at
    ``stamp`` ((sec, nanosec)), coordinates of ``dtype`` (float32 or float64).
    ``extra_fields``: names of float32 fields (filled with the point's row number) placed
    between the coordinates: after ``x`` for the first, after ``y`` for the second, then after
    ``z``. ``width``: points per row (organized, ``N`` a multiple of it; default N, one row);
    ``row_padding``: bytes after each row; ``big_endian``: the data's byte order."""
    from sensor_msgs.msg import PointCloud2, PointField

    P = np.asarray(points, dtype=np.float64).reshape(-1, 3)
    n = len(P)
    w = n if width is None else int(width)
    h = n // w if w else 1
    if w and h * w != n:
        raise ValueError(f"make_cloud: {n} points are not rows of width {w}")
    kind = np.dtype(dtype)
    order = ">" if big_endian else "<"
    names = ["x"] + list(extra_fields[:1]) + ["y"] + list(extra_fields[1:2]) + ["z"] + list(extra_fields[2:])
    coord = ("x", "y", "z")
    names_formats = [(nm, order + (kind.str[1:] if nm in coord else "f4")) for nm in names]
    record = np.dtype(names_formats)
    arr = np.zeros(n, record)
    for a, nm in enumerate(coord):
        arr[nm] = P[:, a]
    for nm in extra_fields:
        arr[nm] = np.arange(n, dtype=np.float32)
    step = record.itemsize
    body = np.zeros((h, w * step + row_padding), np.uint8)
    body[:, :w * step] = arr.view(np.uint8).reshape(h, w * step)
    msg = PointCloud2()
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = int(stamp[0]), int(stamp[1])
    msg.height, msg.width = h, w
    msg.fields = [PointField(name=nm, offset=record.fields[nm][1],
                             datatype=(FLOAT64 if kind == np.float64 else FLOAT32)
                             if nm in coord else FLOAT32, count=1) for nm in names]
    msg.is_bigendian = big_endian
    msg.point_step = step
    msg.row_step = w * step + row_padding
    msg.data = body.tobytes()
    msg.is_dense = bool(np.all(np.isfinite(P)))
    return msg
