"""PointCloud2 -> points (ambf_collision.ros.point_cloud): round trips in every layout, bytes
packed by hand with ``struct``, every refusal, truncation of a 10,000,000-point cloud."""

from __future__ import annotations

import array
import struct
import time
import tracemalloc

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")

from ambf_collision.ros.point_cloud import FLOAT32, FLOAT64, decode_cloud, make_cloud  # noqa: E402


def _points(n, seed=0):
    P = np.random.default_rng(seed).uniform(-3.0, 3.0, (n, 3))
    P[::7, 1] = np.nan   # NaN points pass through
    return P


def _same(a, b):
    """Equal bit for bit as float64, NaN where NaN."""
    return a.shape == b.shape and np.array_equal(a, b, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("big_endian", [False, True])
@pytest.mark.parametrize("layout", ["unorganized", "organized_padded"])
@pytest.mark.parametrize("extra", [(), ("rgb",), ("intensity", "rgb", "ring")])
def test_round_trip(dtype, big_endian, layout, extra):
    """Every layout gives back the points (rounded to the field type), in row-major order."""
    P = _points(24 * 10)
    width, pad = (None, 0) if layout == "unorganized" else (24, 5)
    msg = make_cloud(P, "cam", (12, 34), dtype=dtype, extra_fields=extra, width=width,
                     row_padding=pad, big_endian=big_endian)
    out = decode_cloud(msg, 10**6)
    assert out.refused == "" and out.truncated_from == 0 and out.n_rows == len(P)
    assert out.frame_id == "cam" and (out.stamp.sec, out.stamp.nanosec) == (12, 34)
    assert out.points.dtype == np.float64
    assert _same(out.points, P.astype(dtype).astype(np.float64))


def _hand_cloud(big_endian):
    """A 2 x 2 organized cloud packed field by field with struct (independent of make_cloud):
    point = (float64 z at 0, uint16 pad, float32 x at 10, float32 y at 14, uint8 flag at 18),
    point_step 19 (odd: unaligned doubles), row_step 40 (2 padding bytes a row)."""
    from sensor_msgs.msg import PointCloud2, PointField

    e = ">" if big_endian else "<"
    pts = [(1.5, -2.25, 3.125), (-0.5, 7.0, 1e-3), (float("nan"), 0.0, 2.0), (4.0, 5.0, -6.0)]
    data = b""
    for r in range(2):
        for c in range(2):
            x, y, z = pts[2 * r + c]
            data += struct.pack(e + "dHffB", z, 0xBEEF, x, y, 9)
        data += b"\xAA\xBB"
    msg = PointCloud2()
    msg.header.frame_id = "hand"
    msg.height, msg.width, msg.point_step, msg.row_step = 2, 2, 19, 40
    msg.is_bigendian = big_endian
    msg.fields = [PointField(name="z", offset=0, datatype=FLOAT64, count=1),
                  PointField(name="x", offset=10, datatype=FLOAT32, count=1),
                  PointField(name="y", offset=14, datatype=FLOAT32, count=1),
                  PointField(name="flag", offset=18, datatype=2, count=1)]
    msg.data = data
    return msg, np.array(pts, dtype=np.float64)


@pytest.mark.parametrize("big_endian", [False, True])
def test_hand_packed_bytes(big_endian):
    """Unaligned float64 and float32 fields in any order, other fields and row padding."""
    msg, expected = _hand_cloud(big_endian)
    out = decode_cloud(msg, 100)
    assert out.refused == ""
    expected[:, :2] = expected[:, :2].astype(np.float32)   # x, y were packed as float32
    assert _same(out.points, expected)


def _field(msg, name):
    return next(f for f in msg.fields if f.name == name)


def _refusals():
    """(mutation, words the reason must contain)."""
    def drop_z(m):
        m.fields = [f for f in m.fields if f.name != "z"]

    def count(m):
        _field(m, "x").count = 3

    def datatype(m):
        _field(m, "y").datatype = 6

    def twice(m):
        m.fields = list(m.fields) + [type(m.fields[0])(name="x", offset=0, datatype=FLOAT32, count=1)]

    def step0(m):
        m.point_step = 0

    def step_short(m):
        m.point_step = 11   # z (float32 at 8) ends at 12

    def row_short(m):
        m.row_step = m.width * m.point_step - 1

    def data_short(m):
        m.data = bytes(m.data)[:-1]

    def frame(m):
        m.header.frame_id = ""

    def nanosec(m):
        m.header.stamp.nanosec = 1_000_000_000

    return [(drop_z, ["z", "missing"]), (count, ["'x'", "count 3"]), (datatype, ["'y'", "datatype 6"]),
            (twice, ["'x'", "twice"]), (step0, ["point_step is 0"]),
            (step_short, ["point_step 11", "'z'", "12"]), (row_short, ["row_step 59", "width 5"]),
            (data_short, ["data has 59 bytes", "row_step 60"]), (frame, ["frame_id"]),
            (nanosec, ["nanosec 1000000000"])]


@pytest.mark.parametrize("mutate,words", _refusals(), ids=lambda v: getattr(v, "__name__", ""))
def test_refusals(mutate, words):
    """Each malformed cloud is refused with a reason naming the key and values, no points."""
    msg = make_cloud(np.arange(15.0).reshape(5, 3))   # point_step 12, row_step 60
    assert decode_cloud(msg, 100).refused == ""
    mutate(msg)
    out = decode_cloud(msg, 100)
    assert out.refused.startswith("PointCloud2 refused: ") and "\n" not in out.refused
    for w in words:
        assert w in out.refused, (w, out.refused)
    assert out.points.shape == (0, 3) and out.truncated_from == 0


def test_empty_cloud_and_zero_budget():
    """An empty cloud is a cloud (no obstacles), not an error; max_points 0 keeps nothing."""
    out = decode_cloud(make_cloud(np.empty((0, 3))), 100)
    assert out.refused == "" and out.points.shape == (0, 3) and out.n_rows == 0
    out = decode_cloud(make_cloud(_points(10)), 0)
    assert out.refused == "" and out.points.shape == (0, 3) and out.truncated_from == 10


@pytest.mark.parametrize("limit", [1, 29, 30, 31, 100, 989, 990])
def test_truncation_keeps_the_first_points(limit):
    """Organized, padded rows: a budget inside a row, at a row's end, the whole cloud."""
    P = _points(990, seed=3)
    out = decode_cloud(make_cloud(P, width=30, row_padding=3, dtype=np.float64), limit)
    assert _same(out.points, P[:limit])
    assert out.truncated_from == (990 if limit < 990 else 0) and out.n_rows == 990


def test_ten_million_points_read_only_the_budget():
    """A real 10,000,000-point cloud (120 MB of data): the first 100,000 points, reading only
    their rows: the decode allocates about 100,000 * 3 float64, not 10,000,000 * 3."""
    from sensor_msgs.msg import PointCloud2, PointField

    n, limit = 10_000_000, 100_000
    data = array.array("B", [0]) * (12 * n)
    coords = np.frombuffer(data, np.float32).reshape(n, 3)
    head = _points(limit + 10, seed=5).astype(np.float32)
    coords[:limit + 10] = head
    msg = PointCloud2()
    msg.header.frame_id = "lidar"
    msg.height, msg.width, msg.point_step, msg.row_step = 1, n, 12, 12 * n
    msg.fields = [PointField(name=a, offset=4 * i, datatype=FLOAT32, count=1) for i, a in enumerate("xyz")]
    msg.data = data
    del coords
    tracemalloc.start()
    try:
        t0 = time.perf_counter()
        out = decode_cloud(msg, limit)
        dt = time.perf_counter() - t0
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert out.refused == "" and out.truncated_from == n and out.n_rows == n
    assert _same(out.points, head[:limit].astype(np.float64))
    assert peak < 2 * limit * 3 * 8, peak
    print(f"\n10M-point cloud truncated to {limit}: {dt * 1e3:.2f} ms, peak {peak / 1e6:.2f} MB")


def test_decode_time_24k():
    """Timing (printed, not asserted): 24,000 float32 points, unorganized and 160 x 150."""
    P = _points(24_000, seed=7)
    for name, kw in [("unorganized", {}), ("organized 160x150, rgb, padded", dict(width=160, extra_fields=("rgb",), row_padding=8))]:
        msg = make_cloud(P, **kw)
        times = []
        for _ in range(200):
            t0 = time.perf_counter()
            decode_cloud(msg, 10**6)
            times.append(time.perf_counter() - t0)
        times.sort()
        print(f"\ndecode 24,000 points, {name}: median {times[100] * 1e6:.0f} us, "
              f"p99 {times[198] * 1e6:.0f} us")
