"""TF messages read from their bytes in slices (ros/tf_intake.py), issue 15 #2 and #4.

Oracles: rclpy's own serializer and deserializer (the bytes a publisher sends, the transforms
they hold), hand-set clocks and stamps.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
TFMessage = pytest.importorskip("tf2_msgs.msg", reason="tf2_msgs not importable").TFMessage

from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402

from ambf_collision.ros.tf_intake import TfIntake, cdr_transforms  # noqa: E402


def _ts(parent, child, stamp, q=(0.0, 0.0, 0.0, 1.0), t=(0.0, 0.0, 0.0)):
    ts = TransformStamped()
    ts.header.frame_id, ts.child_frame_id = parent, child
    ns = int(round(stamp * 1e9))
    ts.header.stamp.sec, ts.header.stamp.nanosec = divmod(ns, 1_000_000_000)
    r, p = ts.transform.rotation, ts.transform.translation
    r.x, r.y, r.z, r.w = q
    p.x, p.y, p.z = t
    return ts


def _bytes(transforms) -> bytes:
    return serialize_message(TFMessage(transforms=list(transforms)))


class _Sink:
    def __init__(self):
        self.got = []

    def __call__(self, parent, child, q, t, stamp, static):
        self.got.append((parent, child, tuple(q), tuple(t), stamp, static))


def _intake(now=100.0, tolerance=0.5):
    sink = _Sink()
    return TfIntake(sink, lambda: now, tolerance), sink


def test_decoding_matches_rclpy_on_random_messages():
    """Frame names of every length modulo 8 (so every padding case), non-ASCII names, random
    poses and stamps: the transforms read from the bytes are rclpy's, field by field."""
    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(0, 12))
        msgs = []
        for k in range(n):
            parent = "p" * int(rng.integers(1, 17)) + ("é" if k % 3 == 0 else "")
            child = "/c" * int(rng.integers(1, 9))
            msgs.append(_ts(parent, child, float(rng.uniform(0, 2e9)),
                            tuple(rng.normal(size=4)), tuple(rng.normal(size=3) * 10)))
        data = _bytes(msgs)
        count, items = cdr_transforms(data)
        items = list(items)
        ref = deserialize_message(data, TFMessage).transforms
        assert count == len(ref) == len(items)
        for (parent, child, q, t, stamp), r in zip(items, ref):
            assert parent == r.header.frame_id and child == r.child_frame_id
            assert q == (r.transform.rotation.x, r.transform.rotation.y, r.transform.rotation.z,
                         r.transform.rotation.w)
            assert t == (r.transform.translation.x, r.transform.translation.y,
                         r.transform.translation.z)
            assert stamp == r.header.stamp.sec + 1e-9 * r.header.stamp.nanosec


def test_other_encodings_are_left_to_rclpy():
    with pytest.raises(ValueError, match="not CDR little endian"):
        cdr_transforms(b"\x00\x00\x00\x00" + bytes(8))


def test_a_future_transform_is_refused_current_ones_and_statics_are_kept():
    """Clock at 100 s, tolerance 0.5 s: 100.4 is taken, 103 is refused (stored, it would stay
    the newest for 3 s and hide the current ones; issue 15 #4), a static one holds at any
    stamp."""
    intake, sink = _intake(now=100.0)
    intake.push(_bytes([_ts("world", "base", 103.0), _ts("world", "arm", 100.4)]), False)
    intake.push(_bytes([_ts("world", "table", 5e8)]), True)
    assert not intake.work(1.0)
    assert sorted((g[1], g[5]) for g in sink.got) == [("arm", False), ("table", True)]
    assert intake.counts["future"] == 1 and "3.000 s in the future" in intake.last_refusal


@pytest.mark.parametrize("ts, words", [
    (_ts("world", "a", 100.0, q=(0.0, 0.0, 0.0, 0.0)), "zero quaternion"),
    (_ts("world", "a", 100.0, t=(0.0, math.nan, 0.0)), "non-finite"),
    (_ts("world", "a", 100.0, q=(math.inf, 0.0, 0.0, 1.0)), "non-finite"),
    (_ts("a", "/a", 100.0), "its own parent"),
    (_ts("world", "/", 100.0), "empty frame name"),
])
def test_bad_transforms_are_refused_and_named(ts, words):
    intake, sink = _intake()
    intake.push(_bytes([ts, _ts("world", "good", 100.0)]), False)
    intake.work(1.0)
    assert [g[1] for g in sink.got] == ["good"]
    assert intake.counts["invalid"] == 1 and words in intake.last_refusal


def test_a_truncated_message_keeps_what_came_before_the_damage():
    data = _bytes([_ts("world", "a", 100.0), _ts("world", "b", 100.0)])
    intake, sink = _intake()
    intake.push(data[:-20], False)
    assert not intake.work(1.0)
    assert [g[1] for g in sink.got] == ["a"] and intake.counts["invalid"] == 1
    assert intake.pending == 0


def test_a_huge_message_is_read_in_slices():
    """10,000 transforms in one message: a zero-time slice reads exactly one transform, so the
    executor gets control back after each slice; repeated slices read them all, in order."""
    n = 10_000
    data = _bytes([_ts("world", f"f{k % 50}", 100.0, t=(float(k), 0.0, 0.0)) for k in range(n)])
    intake, sink = _intake()
    intake.push(data, False)
    assert intake.pending == n and intake.longest_slice == 0.0
    assert intake.work(0.0) and len(sink.got) == 1 and intake.pending == n - 1
    slices = 1
    cpu = time.thread_time()
    while intake.work(0.0005):
        slices += 1
    cpu = time.thread_time() - cpu
    assert len(sink.got) == n and [g[3][0] for g in sink.got] == list(range(n))
    assert slices > 1 and intake.pending == 0
    # the longest slice's CPU time: some, within all of them, and at most half of all (the
    # slices last 0.5 ms of wall time each, and there were several)
    assert 0.0 < intake.longest_slice <= 0.5 * cpu
    assert not intake.work() and intake.longest_slice <= 0.5 * cpu  # nothing queued: no slice


def test_the_queue_is_bounded_oldest_dynamic_messages_go_first():
    intake, sink = _intake()
    intake.MAX_PENDING = 5
    intake.push(_bytes([_ts("world", "s", 1.0)] * 2), True)  # static: never dropped
    intake.push(_bytes([_ts("world", "old", 100.0)] * 3), False)
    intake.push(_bytes([_ts("world", "new", 100.0)] * 3), False)  # 8 > 5: "old" goes
    assert intake.counts["dropped"] == 3 and intake.pending == 5
    intake.work(1.0)
    assert [g[1] for g in sink.got] == ["new", "new", "new", "s", "s"]


def test_the_newest_message_is_read_first():
    """A message that comes while a large one is being read is not held up behind it."""
    intake, sink = _intake()
    intake.push(_bytes([_ts("world", "big", 100.0)] * 100), False)
    intake.work(0.0)
    intake.push(_bytes([_ts("world", "mover", 100.0)]), False)
    intake.work(0.0)
    assert [g[1] for g in sink.got] == ["big", "mover"]
    intake.work(1.0)
    assert len(sink.got) == 101 and intake.pending == 0


def test_the_number_of_frames_is_bounded():
    intake, sink = _intake()
    intake.MAX_FRAMES = 3
    intake.push(_bytes([_ts("world", f"f{k}", 100.0) for k in range(5)] +
                       [_ts("world", "f0", 100.0)]), False)
    intake.work(1.0)
    assert [g[1] for g in sink.got] == ["f0", "f1", "f2", "f0"]
    assert intake.counts["frames"] == 2 and "more than 3 frames" in intake.last_refusal


def test_clear_forgets_the_queue():
    intake, sink = _intake()
    intake.push(_bytes([_ts("world", "a", 100.0)] * 4), False)
    intake.clear()
    assert not intake.work(1.0) and sink.got == [] and intake.pending == 0
