"""Joint-state merging, validation and per-source name resolution (monitor/joint_states.py).

Every expectation is written by hand: which joint a name reaches, which positions the merger
holds after a sequence of messages, and which check rejects a message first.
"""

from __future__ import annotations

import math

import pytest

from ambf_collision.monitor.config import MonitorConfig
from ambf_collision.monitor.joint_states import (JointStateMerger, add_joint_aliases,
                                                 joint_name_table)

# two copies of one arm (files 0 and 1, namespaces /psm1/ and /psm2/) plus a table (file 2)
NAMES = ["/psm1/yaw", "/psm1/pitch", "/psm2/yaw", "/psm2/pitch", "/env/lift"]
PLAIN = ["yaw", "pitch", "yaw", "pitch", "lift"]
FILES = [0, 0, 1, 1, 2]


def test_name_table_of_every_joint_has_qualified_and_unique_plain_names():
    table = joint_name_table(NAMES, PLAIN, FILES)
    assert table == {"/psm1/yaw": 0, "/psm1/pitch": 1, "/psm2/yaw": 2, "/psm2/pitch": 3,
                     "/env/lift": 4, "lift": 4}  # 'yaw', 'pitch': ambiguous, not accepted


def test_name_table_of_one_file_accepts_its_plain_names_only():
    assert joint_name_table(NAMES, PLAIN, FILES, file=1) == {
        "/psm2/yaw": 2, "/psm2/pitch": 3, "yaw": 2, "pitch": 3}
    assert joint_name_table(NAMES, PLAIN, FILES, file=7) == {}


def test_two_sources_with_the_same_plain_names_drive_their_own_arm():
    """dVRK: /PSM1/measured_js and /PSM2/measured_js both name 'yaw' and 'pitch'."""
    sources = [("psm1", joint_name_table(NAMES, PLAIN, FILES, 0)),
               ("psm2", joint_name_table(NAMES, PLAIN, FILES, 1))]
    j = JointStateMerger(NAMES, sources=sources)
    assert j.update(["yaw", "pitch"], [0.1, 0.2], 1.0, 1.0, source=0) == (True, "")
    assert j.update(["pitch", "yaw"], [-0.4, -0.3], 1.0, 1.0, source=1) == (True, "")
    assert j.positions.tolist() == [0.1, 0.2, -0.3, -0.4, 0.0]
    assert j.received.tolist() == [True, True, True, True, False]
    ok, reason = j.update(["lift"], [0.5], 1.0, 1.0, source=0)
    assert not ok and "unknown joint name(s) 'lift' (source psm1)" == reason


def test_aliases_reach_the_joint_of_each_topic_s_own_file():
    """dVRK's CRTK names: each PSM topic says 'outer_yaw' for its own arm's 'yaw' (written with
    spaces, as AMBF's files write names that the model stores without them)."""
    tables = [joint_name_table(NAMES, PLAIN, FILES, f) for f in (0, 1)]
    add_joint_aliases(tables, ["outer_yaw=y a w", " outer_pitch = /psm2/pitch "])
    assert tables[0]["outer_yaw"] == 0 and tables[1]["outer_yaw"] == 2
    assert "outer_pitch" not in tables[0] and tables[1]["outer_pitch"] == 3
    j = JointStateMerger(NAMES, sources=[("psm1", tables[0]), ("psm2", tables[1])])
    assert j.update(["outer_yaw"], [0.5], 1.0, 1.0, source=0) == (True, "")
    assert j.update(["outer_yaw", "outer_pitch"], [-0.25, 0.75], 1.0, 1.0, source=1) == (True, "")
    assert list(j.positions) == [0.5, 0.0, -0.25, 0.75, 0.0]


def test_an_alias_to_itself_is_accepted_and_an_empty_list_changes_nothing():
    table = joint_name_table(NAMES, PLAIN, FILES)
    before = dict(table)
    add_joint_aliases([table], [])
    add_joint_aliases([table], ["lift=lift"])
    assert table == before


@pytest.mark.parametrize("entry, words", [
    ("outer_yaw", "is not 'ALIAS=JOINT'"),
    ("=yaw", "is not 'ALIAS=JOINT'"),
    ("outer_yaw=", "is not 'ALIAS=JOINT'"),
    ("outer_yaw=roll", "no joint named 'roll'"),
    ("pitch=yaw", "'pitch' already names another joint"),
])
def test_bad_aliases_are_refused_naming_the_entry(entry, words):
    tables = [joint_name_table(NAMES, PLAIN, FILES, f) for f in (0, 1)]
    with pytest.raises(ValueError, match="joint_aliases: entry") as err:
        add_joint_aliases(tables, [entry])
    assert words in str(err.value) and repr(entry) in str(err.value)


def test_one_alias_for_two_joints_of_one_table_is_refused():
    table = joint_name_table(NAMES, PLAIN, FILES)
    with pytest.raises(ValueError, match="'x' already names another joint"):
        add_joint_aliases([table], ["x=/psm1/yaw", "x=/psm2/yaw"])


def test_partial_messages_merge_and_full_message_in_any_order_sets_every_joint():
    j = JointStateMerger(["a", "b", "c"], aliases={"cc": 2})
    assert j.update(["cc", "a", "b"], [3.0, 1.0, 2.0], 5.0, 5.0) == (True, "")
    assert j.positions.tolist() == [1.0, 2.0, 3.0] and j.joint_stamps.tolist() == [5.0] * 3
    assert j.update(["b"], [4.0], 6.0, 6.0) == (True, "")
    assert j.positions.tolist() == [1.0, 4.0, 3.0] and j.joint_stamps.tolist() == [5.0, 6.0, 5.0]
    assert j.stamp == 6.0 and j.good_count == 2


def test_never_received_and_age_follow_every_change_of_the_received_joints():
    """Asked before and after each change (they are computed once per change): partial
    messages, a rejected one (no change), a clock jump back (rebase) and a take-over."""
    j = JointStateMerger(["a", "b", "c"])
    among = [True, False, True]
    assert j.never_received() == ["a", "b", "c"] and j.age(9.0) == math.inf
    assert j.update(["b"], [0.2], 5.0, 5.0) == (True, "")
    assert j.never_received() == ["a", "c"] and j.never_received(among) == ["a", "c"]
    assert j.age(9.0) == 4.0
    names = j.never_received()
    names.append("x")  # the caller's copy
    assert j.update(["a"], [0.1], 7.0, 7.0) == (True, "")
    assert j.never_received() == ["c"] and j.never_received(among) == ["c"]
    assert j.age(9.0) == 4.0  # b (5 s) is still the oldest
    assert j.update(["b"], [0.3], 8.0, 8.0) == (True, "")
    assert j.age(9.0) == 2.0  # now a (7 s)
    assert j.update(["c"], [math.nan], 8.5, 8.5)[0] is False
    assert j.never_received() == ["c"] and j.age(9.0) == 2.0
    j.rebase(3.0)
    assert j.age(4.0) == 1.0
    new = JointStateMerger(["c", "a"])
    assert new.never_received() == ["c", "a"] and new.age(4.0) == math.inf
    new.take_over(j)
    assert new.never_received() == ["c"] and new.age(4.0) == 1.0


BAD_MESSAGES = [
    # names, positions, stamp offset, code, words in the reason
    (["a", "b"], [0.1], 0.0, "length", "2 names but 1 positions"),
    (["a", "b", "c"], [0.1, float("nan"), 0.3], 0.0, "non_finite", "'b' has a non-finite"),
    (["a", "b", "c"], [0.1, 0.2, float("inf")], 0.0, "non_finite", "'c' has a non-finite"),
    (["a", "zz"], [0.1, 0.2], 0.0, "unknown", "unknown joint name(s) 'zz'"),
    (["a", ""], [0.1, 0.2], 0.0, "empty_name", "joint name #1 is empty"),
    (["a", "a"], [0.1, 0.2], 0.0, "duplicate", "'a' appears twice"),
    (["a", "A"], [0.1, 0.2], 0.0, "duplicate", "'A' appears twice (by another name)"),
    (["a"], [0.1], +2.0, "future", "in the future"),
    (["a"], [0.1], -100.0, "past", "in the past"),
    (["a"], [0.1], float("nan"), "bad_stamp", "not finite"),
    (["a"], ["x"], 0.0, "non_finite", "not numbers"),
]


@pytest.mark.parametrize("names,positions,dt,code,words", BAD_MESSAGES)
def test_bad_message_is_rejected_whole(names, positions, dt, code, words):
    j = JointStateMerger(["a", "b", "c"], aliases={"A": 0})
    j.update(["a", "b", "c"], [0.4, 0.5, 0.6], 10.0, 10.0)
    ok, reason = j.update(names, positions, 10.1 + dt, 10.1)
    assert not ok and words in reason and j.last_code == code and j.bad
    assert j.positions.tolist() == [0.4, 0.5, 0.6] and j.stamp == 10.0 and j.bad_count == 1
    assert j.update(["a"], [0.7], 10.2, 10.2) == (True, "") and not j.bad


def test_verdicts_stay_exact_and_in_order_for_repeated_name_lists():
    """The per-name-list verdict is remembered: the same list is good, then non-finite, then
    future, then good again; an unknown name with a future stamp is 'future' (stamp checks
    first) both times; switching ignore_unknown_joints at run time changes the verdict."""
    j = JointStateMerger(["a", "b", "c"])
    seq = [
        (["a", "b", "c"], [0.1, 0.2, 0.3], 10.0, ""),
        (["a", "b", "c"], [0.1, float("nan"), 0.3], 10.0, "non_finite"),
        (("a", "b", "c"), [0.1, 0.2, 0.3], 20.0, "future"),
        (("a", "b", "c"), [0.4, 0.5, 0.6], 10.0, ""),
        (["a", "zz"], [0.1, 0.2], 20.0, "future"),
        (["a", "zz"], [0.1, 0.2], 20.0, "future"),
        (["a", "zz"], [0.1, 0.2], 10.0, "unknown"),
        (["a", "zz"], [0.1, 0.2], 10.0, "unknown"),
        (["a", "a"], [0.1, float("nan")], 10.0, "duplicate"),
        (["a", ["b"]], [0.1, 0.2], 10.0, "empty_name"),
    ]
    for names, pos, stamp, code in seq:
        j.update(names, pos, stamp, 10.0)
        assert j.last_code == code, (names, pos, stamp)
    assert j.positions.tolist() == [0.4, 0.5, 0.6]
    j.config = MonitorConfig(ignore_unknown_joints=True)
    assert j.update(["a", "zz"], [0.75, 0.2], 10.0, 10.0) == (True, "")
    assert j.positions.tolist() == [0.75, 0.5, 0.6]
    j.config = MonitorConfig()
    assert j.update(["a", "zz"], [0.1, 0.2], 10.0, 10.0)[0] is False and j.last_code == "unknown"


def test_unstamped_messages_are_refused_or_use_arrival_time():
    """Stamp 0 carries no time: refused by default (issue 15 #4: it was accepted as OK), stamped
    on arrival with accept_unstamped."""
    j = JointStateMerger(["a"])
    ok, reason = j.update(["a"], [0.0], 0.0, 50.0)
    assert not ok and j.last_code == "unstamped" and "not stamped" in reason
    assert "accept_unstamped" in reason and j.good_count == 0
    j = JointStateMerger(["a"], MonitorConfig(accept_unstamped=True))
    assert j.update(["a"], [0.0], 0.0, 50.0) == (True, "") and j.stamp == 50.0


def test_stamp_within_future_tolerance_is_accepted():
    j = JointStateMerger(["a"], MonitorConfig(future_tolerance=0.5))
    assert j.update(["a"], [0.0], 10.4, 10.0)[0]
    assert not j.update(["a"], [0.0], 10.6, 10.0)[0]


def test_huge_finite_positions_are_finite():
    j = JointStateMerger(["a", "b", "c"])
    assert j.update(["a", "b", "c"], [1e308, 1e308, -0.5], 1.0, 1.0) == (True, "")
    assert j.positions.tolist() == [1e308, 1e308, -0.5]


def test_age_is_that_of_the_oldest_received_joint():
    j = JointStateMerger(["a", "b", "c"])
    assert j.age(1.0) == math.inf and j.never_received() == ["a", "b", "c"]
    j.update(["a"], [0.0], 1.0, 1.0)
    j.update(["c"], [0.0], 1.5, 1.5)
    assert j.age(2.0) == 1.0  # a's stamp; b was never received and does not count
    assert j.never_received() == ["b"] and j.never_received([True, False, True]) == []
    j.update(["a"], [0.0], 1.75, 1.75)
    assert j.age(2.0) == 0.5  # now c (1.5) is the oldest
    assert j.age(1.0) == 0.0  # stamps ahead of now: never negative


def test_rebase_after_a_clock_jump_back_counts_ages_from_the_jump():
    j = JointStateMerger(["a", "b"])
    j.update(["a"], [0.3], 106.0, 106.0)
    j.rebase(50.0)
    assert j.joint_stamps.tolist() == [50.0, -math.inf] and j.stamp == 50.0
    assert j.age(50.25) == 0.25 and j.positions.tolist() == [0.3, 0.0]


def test_take_over_carries_values_by_name():
    old = JointStateMerger(["a", "b", "c"])
    old.update(["a", "c"], [0.1, 0.3], 2.0, 2.0)
    new = JointStateMerger(["c", "d", "a"])
    new.take_over(old)
    assert new.positions.tolist() == [0.3, 0.0, 0.1]
    assert new.received.tolist() == [True, False, True] and new.good_count == 1


def test_velocities_known_where_given_and_finite_never_rejecting_positions():
    """Issue 13: velocities ride along with an accepted message; a joint's velocity is known
    when its latest message gave a finite one; a message without velocities (or a list of
    another length) makes its joints' velocities unknown; positions are taken either way."""
    j = JointStateMerger(["a", "b", "c"])
    assert not j.velocities_given()  # nothing received
    assert j.update(["a", "b", "c"], [0.1, 0.2, 0.3], 1.0, 1.0, velocities=[1.0, -2.0, 0.5]) == (True, "")
    assert j.velocities.tolist() == [1.0, -2.0, 0.5] and j.velocities_given()
    assert j.update(["b"], [0.4], 1.1, 1.1, velocities=[math.nan]) == (True, "")
    assert j.positions.tolist() == [0.1, 0.4, 0.3]
    assert j.velocity_known.tolist() == [True, False, True] and j.velocities[1] == 0.0
    assert not j.velocities_given()
    assert j.velocities_given(among=[True, False, True])  # b needs none (e.g. coupled)
    assert j.update(["c", "b"], [0.0, 0.0], 1.2, 1.2, velocities=[3.0, 4.0]) == (True, "")
    assert j.velocities.tolist() == [1.0, 4.0, 3.0] and j.velocities_given()
    assert j.update(["a"], [0.0], 1.3, 1.3) == (True, "")  # no velocities: a unknown
    assert j.velocity_known.tolist() == [False, True, True]
    assert j.update(["a", "b"], [0.0, 0.0], 1.4, 1.4, velocities=[1.0]) == (True, "")  # length
    assert j.velocity_known.tolist() == [False, False, True]
    # a rejected message changes no velocity
    assert j.update(["a"], [math.nan], 1.5, 1.5, velocities=[9.0])[0] is False
    assert j.velocity_known.tolist() == [False, False, True]


def test_without_any_velocity_only_an_empty_set_of_joints_has_its_velocities_given():
    """The merger skips clearing velocities while none is known: the answers stay those of the
    definition (every joint of ``among`` known; vacuously true for none)."""
    j = JointStateMerger(["a", "b"])
    assert j.update(["a", "b"], [0.1, 0.2], 1.0, 1.0) == (True, "")
    assert j.velocity_known.tolist() == [False, False] and j.velocities.tolist() == [0.0, 0.0]
    assert not j.velocities_given() and not j.velocities_given(among=[True, False])
    assert j.velocities_given(among=[False, False])
    empty = JointStateMerger([])
    assert empty.update([], [], 1.0, 1.0)[0] and empty.velocities_given()
    assert j.update(["b"], [0.3], 1.1, 1.1, velocities=[2.0])[0]
    assert j.velocities_given(among=[False, True]) and not j.velocities_given()
    assert j.update(["b"], [0.3], 1.2, 1.2)[0]  # no velocities: b unknown again
    assert j.velocity_known.tolist() == [False, False] and j.velocities[1] == 0.0


def test_velocities_of_ignored_unknown_names_are_skipped_in_order():
    cfg = MonitorConfig(ignore_unknown_joints=True)
    j = JointStateMerger(["a", "b"], cfg)
    assert j.update(["zz", "b", "a"], [9.0, 0.2, 0.1], 1.0, 1.0, velocities=[7.0, 2.0, 1.0])[0]
    assert j.velocities.tolist() == [1.0, 2.0] and j.velocities_given()
    k = JointStateMerger(["b", "a"], cfg)
    k.take_over(j)
    assert k.velocities.tolist() == [2.0, 1.0] and k.velocity_known.all()


def test_age_counts_from_the_oldest_joint_after_full_and_partial_messages():
    """A message naming every joint sets the oldest stamp to its own (even an earlier one than a
    joint had); a partial one leaves the others' stamps in the count; no joint, no age."""
    j = JointStateMerger(["a", "b"])
    assert j.update(["a", "b"], [0.0, 0.0], 5.0, 5.0)[0] and j.age(9.0) == 4.0
    assert j.update(["a"], [0.0], 7.0, 7.0)[0] and j.age(9.0) == 4.0  # b (5 s) is the oldest
    assert j.update(["b", "a"], [0.0, 0.0], 6.0, 7.0)[0] and j.age(9.0) == 3.0  # both 6 s now
    assert j.never_received() == [] and j.never_received([True, False]) == []
    empty = JointStateMerger([])
    assert empty.update([], [], 1.0, 1.0)[0] and empty.age(5.0) == math.inf


def test_age_when_a_message_names_every_joint_received_so_far():
    j = JointStateMerger(["a", "b", "c"])
    assert j.update(["a", "b"], [0.0, 0.0], 5.0, 5.0)[0] and j.age(9.0) == 4.0
    assert j.update(["b", "a"], [0.0, 0.0], 7.0, 7.0)[0] and j.age(9.0) == 2.0  # c never came
    assert j.update(["c"], [0.0], 8.0, 8.0)[0] and j.age(9.0) == 2.0  # a and b: 7 s
    assert j.update(["a", "b"], [0.0, 0.0], 8.5, 8.5)[0] and j.age(9.0) == 1.0  # c: 8 s
    assert j.update(["a", "b", "c"], [0.0] * 3, 6.0, 8.5)[0] and j.age(9.0) == 3.0


def test_every_kind_of_number_sequence_is_merged():
    """A message's numbers are merged whatever sequence gives them (lists, ints, ``array('d')``,
    read-only views of serialized bytes, float32, velocities or none, velocities that are not
    numbers), and a NaN velocity is unknown and 0 while the rest are taken."""
    from array import array

    import numpy as np

    raw = np.array([0.5, -0.5]).tobytes()
    j = JointStateMerger(["a", "b"])
    for positions, velocities in [([1, 2], None), (array("d", [0.1, 0.2]), [3, 4]),
                                  (np.frombuffer(raw), np.frombuffer(raw)), ((0.0, 1.0), ()),
                                  (np.array([1.0, 2.0], np.float32), ["x", "y"])]:
        assert j.update(["a", "b"], positions, 2, 2) == (True, "")
        assert j.positions.tolist() == [float(p) for p in positions]
    assert j.velocity_known.tolist() == [False, False]  # the last message's are not numbers
    assert j.update(["a"], [math.nan], 2.0, 2.0)[0] is False
    assert j.update(["b", "a"], np.frombuffer(raw), 2.0, 2.0, velocities=[math.nan, 7.0])[0]
    assert j.positions.tolist() == [-0.5, 0.5] and j.velocities.tolist() == [7.0, 0.0]
    assert j.velocity_known.tolist() == [True, False] and not j.velocities_given()
