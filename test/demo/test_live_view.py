"""Live text view: the numbers of a monitor output appear, in mm and N, and refreshes are
limited to one per period."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np

from ambf_collision.demo.live_view import LiveView, format_view, short_name
from ambf_collision.model.contact_rows import contact_row, contact_row_width
from ambf_collision.monitor.config import STATUS_BAD_JOINT_STATE, STATUS_OK
from ambf_collision.monitor.monitor import MonitorOutput


def _contacts(*pairs):
    """``contact_info`` and ``contact_rows`` of ``(body_1, body_2, distance)`` contacts."""
    z = np.zeros(3)
    return dict(contact_info=[(b1, b2, -1, -1) for b1, b2, _ in pairs],
                contact_rows=np.array([contact_row(d, z, z, z, (0.0, 0.0, 1.0)) for *_, d in pairs
                                      ]).reshape(len(pairs), contact_row_width(0)))


def _probes(forces_z, in_contact):
    n = len(forces_z)
    force = np.zeros((n, 3))
    force[:, 2] = forces_z
    return SimpleNamespace(
        names=[f"pad/{i}" for i in range(n - 1)] + ["side"], force=force,
        in_contact=np.array(in_contact), distance=np.where(in_contact, -0.001, np.inf),
        patch_names=["pad"], patch_force=np.array([[0.0, 0.0, sum(forces_z[:-1])]]),
        patch_in_contact=np.array([sum(in_contact[:-1])]))


def _out(**kw):
    base = dict(stamp=12.0, status=STATUS_OK, reason="", min_distance=-0.002, pairs_checked=21,
                **_contacts(("/ambf/env/fingertip", "/ambf/env/table", -0.002),
                            ("/ambf/env/hand", "/ambf/env/table", 0.0331),
                            ("/ambf/env/forearm", "/ambf/env/table", 0.04),
                            ("/ambf/env/upper_arm", "/ambf/env/table", 0.049)),
                time=12.5, compute_time=0.00042, evaluation_rate=99.0, evaluated=True)
    base.update(kw)
    return MonitorOutput(**base)


def test_view_shows_status_distances_pairs_rate_and_probes():
    out = _out(probes=_probes([9.0, 4.5, 0.0, 0.0], [True, True, False, False]))
    text = format_view(out)
    lines = text.splitlines()
    assert len(lines) == 3
    assert "OK" in lines[0] and "-2.0 mm" in lines[0] and "pairs   21" in lines[0]
    assert "99.0 eval/s" in lines[0] and "0.42 ms" in lines[0]
    # the three closest pairs, in mm, penetration marked, the fourth counted
    assert "!fingertip-table -2.0 mm" in lines[1] and "hand-table +33.1 mm" in lines[1]
    assert "forearm-table +40.0 mm" in lines[1] and "(+1 more)" in lines[1]
    assert "upper_arm" not in lines[1]
    # patch totals and the strongest probes
    assert "pad 2/3 touching F 13.50 N" in lines[2]
    assert "strongest: pad/0 9.00 N, pad/1 4.50 N" in lines[2]


def test_view_of_a_bad_state_shows_the_reason_and_infinite_distance():
    out = _out(status=STATUS_BAD_JOINT_STATE, reason="joint 'a' has a non-finite position (nan)",
               min_distance=math.inf, pairs_checked=0, **_contacts(), evaluated=False)
    text = format_view(out)
    assert "BAD_JOINT_STATE" in text and "inf" in text and "non-finite position" in text
    assert "nan" not in text.splitlines()[0].lower()


def test_free_probes_report_nearest_gap():
    pr = _probes([0.0, 0.0, 0.0], [False, False, False])
    pr.distance = np.array([0.012, np.inf, 0.0305])
    text = format_view(_out(probes=pr, **_contacts()))
    assert "no pair within the report distance" in text
    assert "no probe touching, nearest gap +12.0 mm" in text


def test_refresh_limited_and_ansi_redraw():
    v = LiveView(period=0.2, ansi=True)
    first = v.update(_out(time=1.0))
    assert first is not None and not first.startswith("\x1b")
    assert v.update(_out(time=1.1)) is None
    again = v.update(_out(time=1.2))
    assert again.startswith("\x1b[2F\x1b[J")  # two lines drawn before


def test_short_name():
    assert short_name("/ambf/env/hand") == "hand" and short_name("hand") == "hand"
