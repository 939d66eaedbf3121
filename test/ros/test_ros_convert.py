"""Core results -> messages (ambf_collision.ros.convert), against values written by hand."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="rclpy not importable: run through `make test`")
pytest.importorskip("ambf_collision.msg", reason="messages not built: run through `make test`")

from ambf_collision.model.contact_rows import contact_row  # noqa: E402
from ambf_collision.msg import ContactArray  # noqa: E402
from ambf_collision.ros.convert import (  # noqa: E402
    ContactArraySerializer, ContactArrayWriter, ProbeArraySerializer, ProbeArrayWriter, Stamp,
    contact_msg, stamp_msg, stamp_parts)


@pytest.mark.parametrize("sec,expect", [(1234.5, (1234, 500_000_000)), (0.0, (0, 0)),
                                        (1.999999999, (1, 999_999_999)), (-3.0, (0, 0)),
                                        (math.nan, (0, 0)), (1.9999999999, (2, 0))])
def test_stamp_conversion(sec, expect):
    t = stamp_msg(sec)
    assert (t.sec, t.nanosec) == expect


def _output(rng, n, J, cycle, names=None):
    """A monitor output of ``n`` contacts (random rows with ``J`` Jacobian columns, body names
    ``names(i)`` or of every length modulo 4, int32 extremes among the shape indices)."""
    info = [names(i) if names else ("/a" * (i + 1), "b" * (cycle + i), i - 1, [2**31 - 1, -2**31][i % 2])
            for i in range(n)]
    rows = np.array([contact_row(rng.normal(), rng.normal(size=3), rng.normal(size=3),
                                 rng.normal(size=3), rng.normal(size=3), rng.normal(size=J),
                                 rng.normal(), rng.normal(size=3), rng.normal(size=3))
                     for _ in range(n)]).reshape(n, J + 20)
    return SimpleNamespace(status=cycle % 6, min_distance=[math.nan, 0.0, -0.5][cycle % 3],
                           pairs_checked=cycle * 1000, contact_info=info, contact_rows=rows,
                           joint_names=[f"/ambf/env/j{k}" * (k % 3 + 1) for k in range(J)],
                           velocities_given=bool(cycle % 2),
                           reason=["", "joint state is 1.250 s old (timeout 0.5 s): /a/wrist "
                                   "(1.250 s)", "ä", "xyz"][cycle % 4],
                           contact_swept=rng.random(n) < 0.5,
                           contact_times=np.where(rng.random(n) < 0.3, 0.0, 1.7e9 + rng.random(n)))


def _read_back(c) -> tuple:
    """``(who, values)`` of a Contact message, values in the row order written out by hand:
    distance, point_1, point_2, position, normal, jacobian, distance_rate, point_1_local,
    point_2_local."""
    xyz = lambda v: [v.x, v.y, v.z]  # noqa: E731
    return ((c.body_1, c.body_2, c.shape_1, c.shape_2),
            [c.distance, *xyz(c.point_1), *xyz(c.point_2), *xyz(c.position), *xyz(c.normal),
             *c.jacobian, c.distance_rate, *xyz(c.point_1_local), *xyz(c.point_2_local)])


def test_contact_fields_copied_exactly():
    m = contact_msg(("/w/a", "/w/b", -1, 2), contact_row(-0.25, (0, 0, 1), (0, 0, 0.75),
                                                        (0, 0, 0.875), (0, 0, -1)))
    assert (m.body_1, m.body_2, m.shape_1, m.shape_2) == ("/w/a", "/w/b", -1, 2)
    assert m.distance == -0.25
    assert (m.point_1.x, m.point_1.y, m.point_1.z) == (0.0, 0.0, 1.0)
    assert (m.point_2.z, m.position.z) == (0.75, 0.875)
    assert (m.normal.x, m.normal.y, m.normal.z) == (0.0, 0.0, -1.0)
    assert list(m.jacobian) == [] and m.distance_rate == 0.0


def test_contact_msg_carries_the_continuous_fields():
    """A swept contact at 10.00395 s: ``swept`` and ``time_of_contact`` (10 s 3,950,000 ns, to
    the nanosecond); by default neither (a near contact: time 0). The node's exact stamps
    (``ResultPublisher.contact_stamps``) over DDS: test_continuous_node.py."""
    row = contact_row(0.0, (0, 0, 0), (0, 0, 0), (0, 0, 0), (0, 0, 1))
    m = contact_msg(("/w/a", "/w/b", -1, -1), row, True, stamp_parts(10.00395))
    assert m.swept and (m.time_of_contact.sec, m.time_of_contact.nanosec) == (10, 3_950_000)
    m = contact_msg(("/w/a", "/w/b", -1, -1), row)
    assert not m.swept and (m.time_of_contact.sec, m.time_of_contact.nanosec) == (0, 0)


def test_contact_msg_carries_controller_fields():
    row = contact_row(0.02, (0, 0, 1), (0, 0, 1.02), (0, 0, 1.01), (0, 0, 1), [0.5, -0.25, 0.0],
                      -0.125, [0.1, 0, 0], [0, -0.5, 0.3])
    m = contact_msg(("/w/a", "/w/b", 0, 0), row)
    assert list(m.jacobian) == [0.5, -0.25, 0.0] and m.distance_rate == -0.125
    assert (m.point_1_local.x, m.point_2_local.y, m.point_2_local.z) == (0.1, -0.5, 0.3)


def test_contact_array_writer_reuses_message_and_maps_an_unknown_minimum_to_inf():
    w = ContactArrayWriter("map")
    out = SimpleNamespace(status=0, min_distance=0.01, pairs_checked=7,
                          contact_info=[("/w/a", "/w/b", -1, -1)],
                          contact_rows=contact_row(0.01, (0, 0, 0), (0.01, 0, 0), (0.005, 0, 0),
                                                   (1, 0, 0))[None, :])
    m = w.fill(out, stamp_msg(5.0))
    assert m is w.msg and m.header.frame_id == "map" and m.header.stamp.sec == 5
    assert (m.status, m.min_distance, m.pairs_checked, len(m.contacts)) == (0, 0.01, 7, 1)
    out2 = SimpleNamespace(status=2, min_distance=math.nan, pairs_checked=0, contact_info=[],
                           contact_rows=np.zeros((0, 20)))
    m2 = w.fill(out2, stamp_msg(6.0))
    assert m2 is m and m.contacts == [] and m.min_distance == math.inf and m.status == 2


def test_contact_array_writer_carries_each_row_through_changing_counts():
    """Through cycles whose contact count grows, shrinks and grows again, every contact read
    back through the middleware's serialization carries its row's values and its pair's names
    and shapes (int32 extremes too); nothing of a previous cycle remains."""
    from rclpy.serialization import deserialize_message, serialize_message

    rng = np.random.default_rng(7)
    w = ContactArrayWriter("world")
    for cycle, n in enumerate([3, 1, 0, 4, 2]):
        out = _output(rng, n, 2, cycle)
        m = deserialize_message(serialize_message(w.fill(out, stamp_msg(10.0 + cycle))),
                                ContactArray)
        assert [_read_back(c) for c in m.contacts] == [
            (who, row) for who, row in zip(out.contact_info, out.contact_rows.tolist())], cycle


@pytest.mark.parametrize("frame", ["world", "w", "odom_x", "a_frame_of_9"])
@pytest.mark.parametrize("J", [0, 1, 7])
def test_contact_serializer_equals_rclpy_serialization(frame, J):
    """Raw contact bytes deserialize (rclpy, the middleware's own CDR) to exactly the message
    the ContactArrayWriter builds (every field's repr: tells -0.0 from 0.0; rclpy leaves
    padding bytes unset, so bytes are not compared), with rclpy's length, for every header
    alignment, body names of 0..9 characters (and non-ASCII), 0..4 contacts, Jacobians of 0, 1
    and 7 columns, joint names, the velocities flag and status messages of every length
    modulo 4; and read back as the rows."""
    from rclpy.serialization import deserialize_message, serialize_message

    rng = np.random.default_rng(len(frame) + J)
    w, s = ContactArrayWriter(frame), ContactArraySerializer(frame)
    for cycle, n in enumerate([0, 1, 3, 4, 2, 0, 1]):
        out = _output(rng, n, J, cycle, names=lambda i: (
            "/" * int(rng.integers(0, 10)),
            "ä" * (i + cycle) if cycle % 2 else "b" * int(rng.integers(0, 10)),
            int(rng.integers(-1, 5)), -2**31))
        if n:
            out.contact_rows[0, 4] = -0.0
        st = stamp_msg(1.7e9 + cycle + 0.25)
        raw = s.serialize(out, st)
        m = w.fill(out, st)
        assert isinstance(raw, bytes) and len(raw) == len(serialize_message(m))
        back = deserialize_message(raw, ContactArray)
        assert repr(back) == repr(m), (frame, cycle)
        assert [_read_back(c) for c in back.contacts] == [
            (who, row) for who, row in zip(out.contact_info, out.contact_rows.tolist())]
        assert list(back.joint_names) == out.joint_names
        assert back.velocities_given is bool(cycle % 2)
        assert back.status_message == out.reason
        assert [c.swept for c in back.contacts] == out.contact_swept.tolist()
        assert [c.time_of_contact.sec + 1e-9 * c.time_of_contact.nanosec
                for c in back.contacts] == pytest.approx(out.contact_times.tolist(), abs=1e-6)
    assert s.matches(w)



def test_probe_array_writer_maps_arrays_and_touching_body():
    w = ProbeArrayWriter("world", ["tip", "pad/0"], ["/w/finger", "/w/finger"], ["/w/finger", "/w/table"])
    pr = SimpleNamespace(
        in_contact=np.array([True, False]), depth=np.array([0.001, 0.0]),
        area=np.array([math.pi * (2 * 0.003 * 0.001 - 0.001 ** 2), 0.0]),
        distance=np.array([-0.001, np.inf]), touching_body=np.array([1, -1]),
        force=np.array([[0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]),
        contact_normal=np.array([[0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]),
        position=np.array([[0.1, 0.2, 0.3], [0.4, 0.5, math.nan]]),
        normal=np.array([[0.0, 0.0, -1.0], [0.0, 0.0, -1.0]]))
    m = w.fill(0, stamp_msg(1.0), pr)
    a, b = m.probes
    assert (a.name, a.body, b.name) == ("tip", "/w/finger", "pad/0")
    assert a.in_contact is True and b.in_contact is False
    assert (a.depth, a.distance, a.touching_body) == (0.001, -0.001, "/w/table")
    assert a.area == pytest.approx(math.pi * 5e-6, rel=1e-12)
    assert (a.force.z, a.contact_normal.z, a.normal.z) == (2.0, 1.0, -1.0)
    assert (a.position.x, a.position.y, a.position.z) == (0.1, 0.2, 0.3)
    assert b.touching_body == "" and b.distance == math.inf
    assert b.position.z == 0.0, "a non-finite value must not reach the message"
    # a second cycle refreshes the same objects
    pr.in_contact[:] = False
    pr.force[0] = (0.0, 0.0, 0.0)
    m2 = w.fill(2, stamp_msg(2.0), pr)
    assert m2.probes[0] is a and a.in_contact is False and a.force.z == 0.0 and m2.status == 2
    assert w.empty(5, stamp_msg(3.0)).probes == []


def _random_probes(rng, n, n_bodies, touching=True):
    return SimpleNamespace(
        in_contact=rng.random(n) < 0.5, depth=rng.random(n), area=rng.random(n),
        force=rng.normal(size=(n, 3)), contact_normal=rng.normal(size=(n, 3)),
        distance=rng.random(n),
        touching_body=rng.integers(-1, n_bodies, n) if touching else np.full(n, -1),
        position=rng.normal(size=(n, 3)), normal=rng.normal(size=(n, 3)))


@pytest.mark.parametrize("n", [0, 1, 3, 256])
@pytest.mark.parametrize("frame", ["world", "w", "odom_x", "a_frame_of_9"])
def test_probe_serializer_equals_rclpy_serialization(n, frame):
    """Raw bytes deserialize (rclpy, the middleware's own CDR) to exactly the message the
    ProbeArrayWriter builds, and have the length rclpy's own serialization has, for every
    alignment of the header (frame names of 1..12 characters), name lengths 2..8, touching
    bodies appearing, changing and vanishing between cycles, and non-finite values."""
    from rclpy.serialization import deserialize_message, serialize_message

    from ambf_collision.msg import ProbeArray

    rng = np.random.default_rng(n)
    names = [f"p{i}" * (i % 4 + 1) for i in range(n)]
    bodies = ["/ambf/env/hand" if i % 2 else "b" for i in range(n)]
    body_names = ["a", "bb", "/ambf/env/forearm", "ccccccc"]
    w = ProbeArrayWriter(frame, names, bodies, body_names)
    s = ProbeArraySerializer(frame, names, bodies, body_names)
    for cycle in range(5):
        pr = _random_probes(rng, n, len(body_names), touching=cycle in (1, 2))
        if n and cycle == 3:
            pr.depth[0], pr.distance[-1], pr.force[0, 1], pr.position[-1, 2] = (
                np.nan, -np.inf, np.inf, np.nan)
            pr.distance[0] = np.inf  # a legitimate +inf stays
        if n and cycle == 4:  # non-finite distances only: +inf kept, NaN -> +inf
            pr.distance[::2] = np.inf
            pr.distance[-1] = np.nan
        st = stamp_msg(1.7e9 + cycle + 0.25)
        raw = s.serialize(cycle, st, pr)
        m = w.fill(cycle, st, pr)
        assert isinstance(raw, bytes) and len(raw) == len(serialize_message(m))
        back = deserialize_message(raw, ProbeArray)
        assert back == m, (n, frame, cycle)
        if n and cycle == 3:
            assert back.probes[0].depth == 0.0 and back.probes[-1].distance == math.inf
            assert back.probes[0].distance == math.inf and back.probes[-1].position.z == 0.0
        if n and cycle == 4:
            assert [p.distance for p in back.probes[::2]] == [math.inf] * len(back.probes[::2])
            assert back.probes[-1].distance == math.inf and back.probes[-1].depth == pr.depth[-1]
    assert s.matches(w)


def test_probe_serializer_hand_values():
    """One probe, values written by hand, read back through rclpy."""
    from rclpy.serialization import deserialize_message

    from ambf_collision.msg import ProbeArray

    s = ProbeArraySerializer("world", ["tip"], ["/w/finger"], ["/w/finger", "/w/table"])
    pr = SimpleNamespace(
        in_contact=np.array([True]), depth=np.array([0.001]), area=np.array([2e-6]),
        distance=np.array([-0.001]), touching_body=np.array([1]),
        force=np.array([[0.0, 0.5, 2.0]]), contact_normal=np.array([[0.0, 0.0, 1.0]]),
        position=np.array([[0.1, 0.2, 0.3]]), normal=np.array([[0.0, 0.0, -1.0]]))
    m = deserialize_message(s.serialize(2, stamp_msg(12.5), pr), ProbeArray)
    assert (m.header.frame_id, m.header.stamp.sec, m.header.stamp.nanosec, m.status) == (
        "world", 12, 500_000_000, 2)
    (a,) = m.probes
    assert (a.name, a.body, a.in_contact, a.touching_body) == ("tip", "/w/finger", True, "/w/table")
    assert (a.depth, a.area, a.distance) == (0.001, 2e-6, -0.001)
    assert (a.force.x, a.force.y, a.force.z, a.contact_normal.z) == (0.0, 0.5, 2.0, 1.0)
    assert (a.position.x, a.position.y, a.position.z, a.normal.z) == (0.1, 0.2, 0.3, -1.0)


def test_serializers_write_a_plain_stamp_as_the_time_message():
    """Stamp(sec, nanosec) (what the node passes for the joint state's own stamp) gives the
    same bytes as builtin_interfaces Time with those values, read back as that stamp, at the
    limits of both fields."""
    from rclpy.serialization import deserialize_message

    from ambf_collision.msg import ProbeArray
    from builtin_interfaces.msg import Time

    ps = ProbeArraySerializer("world", ["tip"], ["/w/finger"], ["/w/finger"])
    pr = SimpleNamespace(
        in_contact=np.array([False]), depth=np.zeros(1), area=np.zeros(1),
        distance=np.array([np.inf]), touching_body=np.array([-1]), force=np.zeros((1, 3)),
        contact_normal=np.zeros((1, 3)), position=np.ones((1, 3)), normal=np.ones((1, 3)))
    cs = ContactArraySerializer("world")
    out = SimpleNamespace(status=0, min_distance=0.5, pairs_checked=3,
                          contact_info=[("/w/a", "/w/b", -1, 2)],
                          contact_rows=contact_row(0.01, [0, 0, 0], [0, 0, 0.01], [0, 0, 0.005],
                                                   [0, 0, 1])[None, :])
    for sec, nanosec in ((0, 0), (1_796_012_907, 123_456_789), (-2**31, 999_999_999),
                         (2**31 - 1, 2**32 - 1)):
        plain, msg = Stamp(sec, nanosec), Time(sec=sec, nanosec=nanosec)
        raw = cs.serialize(out, plain)
        assert raw == cs.serialize(out, msg)
        h = deserialize_message(raw, ContactArray).header.stamp
        assert (h.sec, h.nanosec) == (sec, nanosec)
        raw = ps.serialize(1, plain, pr)
        assert raw == ps.serialize(1, msg, pr)
        h = deserialize_message(raw, ProbeArray).header.stamp
        assert (h.sec, h.nanosec) == (sec, nanosec)


# ----------------------------------------------------------------------------- issue 13 fields



def _patches(rng, q):
    return dict(patch_in_contact=rng.integers(0, 9, q), patch_area=rng.random(q),
                patch_force=rng.normal(size=(q, 3)), patch_force_body=rng.normal(size=(q, 3)),
                patch_torque_body=rng.normal(size=(q, 3)))


@pytest.mark.parametrize("n,q", [(0, 0), (1, 1), (3, 2), (16, 3)])
def test_probe_patches_serializer_equals_rclpy(n, q):
    """ProbeArray.patches: the raw bytes deserialize to the writer's message (and have
    rclpy's length) for every probe-record end alignment, patch names of several lengths and
    non-finite values (-> 0); the values read back are the input's."""
    from rclpy.serialization import deserialize_message, serialize_message

    from ambf_collision.msg import ProbeArray

    rng = np.random.default_rng(n + q)
    names = [f"pad{i // 4}/{i}" for i in range(n)]
    bodies = ["/ambf/env/hand"] * n
    patches = [("p" * (j + 1), "/ambf/env/" + "h" * (j + 2)) for j in range(q)]
    w = ProbeArrayWriter("world", names, bodies, ["/ambf/env/hand"], patches=patches)
    s = ProbeArraySerializer("world", names, bodies, ["/ambf/env/hand"], patches=patches)
    for cycle in range(3):
        pr = _random_probes(rng, n, 1, touching=cycle == 1)
        for k, v in _patches(rng, q).items():
            setattr(pr, k, v)
        if q and cycle == 2:
            pr.patch_force[0, 1], pr.patch_area[-1] = math.nan, math.inf
        raw = s.serialize(1, stamp_msg(3.0), pr)
        m = w.fill(1, stamp_msg(3.0), pr)
        assert len(raw) == len(serialize_message(m))
        back = deserialize_message(raw, ProbeArray)
        assert back == m, (n, q, cycle)
        for st, (name, body), j in zip(back.patches, patches, range(q)):
            assert (st.name, st.body, st.in_contact) == (name, body, int(pr.patch_in_contact[j]))
            f = np.where(np.isfinite(pr.patch_force[j]), pr.patch_force[j], 0.0)
            assert [st.force.x, st.force.y, st.force.z] == f.tolist()
            assert [st.torque_body.x, st.torque_body.y, st.torque_body.z] == pr.patch_torque_body[j].tolist()
            assert st.area == (pr.patch_area[j] if math.isfinite(pr.patch_area[j]) else 0.0)
    assert s.matches(w)
    assert w.empty(2, stamp_msg(4.0)).patches == []


def test_patch_arrays_take_the_first_rows_zero_what_does_not_fit_and_clamp_counts():
    """Hand-written cases: a probe result's own (q, .) arrays; more rows than patches (the
    first q); fewer rows, even one that would broadcast (zeros, not a copy of row 0); a
    missing array (zeros); non-finite values (0); counts below 0 or above uint32 (clamped)."""
    from ambf_collision.ros.convert_probes import patch_arrays

    def pr(rows, counts):
        k = np.arange(rows, dtype=float)
        return SimpleNamespace(patch_area=k + 0.5, patch_force=np.stack((k, k, k), axis=1),
                               patch_force_body=np.stack((-k, k, k), axis=1),
                               patch_torque_body=np.stack((k, -k, 2 * k), axis=1),
                               patch_in_contact=np.array(counts))

    out = np.full((2, 10), 7.0)
    assert patch_arrays(pr(2, [3, 4]), 2, out).tolist() == [3, 4]
    assert out.tolist() == [[0.5, 0, 0, 0, 0, 0, 0, 0, 0, 0],
                            [1.5, 1, 1, 1, -1, 1, 1, 1, -1, 2]]
    out[:] = 7.0
    assert patch_arrays(pr(3, [-2, 2**40, 9]), 2, out).tolist() == [0, 2**32 - 1]
    assert out[1].tolist() == [1.5, 1, 1, 1, -1, 1, 1, 1, -1, 2]
    for bad in (pr(1, [5]), pr(1, [5, 6]), SimpleNamespace(patch_area=np.ones(2))):
        out[:] = 7.0
        assert patch_arrays(bad, 2, out).tolist() == [0, 0] and not out.any()
    p = pr(2, [1, 1])
    p.patch_force[1, 2], p.patch_area[0], p.patch_torque_body[1, 0] = math.nan, -math.inf, math.inf
    patch_arrays(p, 2, out)
    assert out.tolist() == [[0, 0, 0, 0, 0, 0, 0, 0, 0, 0], [1.5, 1, 1, 0, -1, 1, 1, 0, -1, 2]]
