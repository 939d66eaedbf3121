"""Nothing published is NaN (monitor/sanitize.py): contacts, minimum distance, probes."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ambf_collision.model.contact_rows import contact_row_width
from ambf_collision.monitor.sanitize import (finite_contacts, finite_min_distance,
                                             sanitize_probes)


J = 3  # joints of the rows below


def _contacts(n):
    """``n`` contacts: who, and rows whose every value differs from the others'."""
    info = [(f"/w/a{k}", f"/w/b{k}", k - 1, k) for k in range(n)]
    rows = np.arange(n * contact_row_width(J), dtype=float).reshape(n, -1) / 7.0
    return info, rows


@pytest.mark.parametrize("column", range(contact_row_width(J)))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_a_contact_with_one_non_finite_value_is_dropped_and_the_order_kept(column, bad):
    """Every column of the row counts: distance, world vectors, Jacobian, rate, body-frame
    points (model/contact_rows.py)."""
    info, rows = _contacts(4)
    expect = rows[[0, 2, 3]].copy()
    rows[1, column] = bad
    kept, kept_rows, dropped = finite_contacts(info, rows)
    assert kept == [info[0], info[2], info[3]] and dropped == 1
    np.testing.assert_array_equal(kept_rows, expect)


def test_all_finite_rows_are_returned_as_they_are():
    info, rows = _contacts(3)
    assert finite_contacts(info, rows) == (info, rows, 0)
    assert finite_contacts(info, rows)[1] is rows  # no copy on the usual cycle


def test_huge_finite_contact_values_are_kept():
    """The sum of the rows overflows to +inf: the per-value check keeps them all."""
    info, rows = _contacts(2)
    rows[:, 1:] = 1.5e308
    kept, kept_rows, dropped = finite_contacts(info, rows)
    assert kept == info and dropped == 0 and np.array_equal(kept_rows, rows)


def test_no_contacts():
    rows = np.zeros((0, contact_row_width(J)))
    assert finite_contacts([], rows) == ([], rows, 0)


@pytest.mark.parametrize("value,expect,recomputed", [
    (0.25, 0.25, False), (math.inf, math.inf, False), (math.nan, 0.5, True),
    (-math.inf, 0.5, True)])
def test_min_distance(value, expect, recomputed):
    assert finite_min_distance(value, [math.nan, 0.5, 0.75, math.inf]) == (expect, recomputed)
    assert finite_min_distance(math.nan, [math.nan]) == (math.inf, True)


def _probes(n=3):
    return SimpleNamespace(
        in_contact=np.ones(n, bool), depth=np.full(n, 1e-3), area=np.full(n, 1e-6),
        force=np.ones((n, 3)), force_body=np.ones((n, 3)), contact_normal=np.ones((n, 3)),
        position=np.ones((n, 3)), normal=np.ones((n, 3)), distance=np.full(n, -1e-3),
        patch_force=np.ones((1, 3)), patch_area=np.ones(1))


def _probe_views(n=3):
    """The float fields as views of two buffers named by ``finite_buffers``."""
    pose, z = np.ones((2 * n, 3)), np.ones(11 * n + 4)
    return SimpleNamespace(
        in_contact=np.ones(n, bool), depth=z[:n], area=z[n:2 * n],
        force=z[2 * n:5 * n].reshape(n, 3), force_body=z[5 * n:8 * n].reshape(n, 3),
        contact_normal=z[8 * n:11 * n].reshape(n, 3), position=pose[:n], normal=pose[n:],
        distance=np.full(n, -1e-3), patch_force=z[11 * n:11 * n + 3].reshape(1, 3),
        patch_area=z[11 * n + 3:], finite_buffers=(pose, z))


@pytest.mark.parametrize("name", ["depth", "area", "force", "force_body", "contact_normal",
                                  "position", "normal", "distance", "patch_force",
                                  "patch_area"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("layout", [_probes, _probe_views])
def test_one_non_finite_probe_value_is_zeroed(name, bad, layout):
    pr = layout()
    assert sanitize_probes(pr) == 0
    good_depth = pr.depth[:2].tolist()
    arr = getattr(pr, name)
    arr.reshape(-1)[-1] = bad
    n = sanitize_probes(pr)
    if name == "distance" and bad == np.inf:  # +inf: beyond range, legal
        assert n == 0 and pr.in_contact.all()
        return
    assert n == 1
    if name.startswith("patch_"):
        assert arr.reshape(-1)[-1] == 0.0 and pr.in_contact.all()
    else:
        assert pr.in_contact.tolist() == [True, True, False]
        assert pr.distance[2] == np.inf and np.all(pr.force[2] == 0.0)
        assert pr.depth[:2].tolist() == good_depth  # the good probes are untouched
    for f in ("depth", "area", "force", "force_body", "contact_normal", "position", "normal",
              "patch_force", "patch_area"):
        assert np.isfinite(getattr(pr, f)).all(), f


def test_non_finite_value_in_a_strided_field_is_found():
    pr = _probes()
    storage = np.ones((3, 6))
    pr.force = storage[:, ::2]
    storage[1, 2] = np.nan  # pr.force[1, 1]
    assert sanitize_probes(pr) == 1
    assert pr.in_contact.tolist() == [True, False, True] and np.all(pr.force[1] == 0.0)


def test_huge_finite_probe_values_are_kept():
    pr = _probes()
    pr.force[:] = 1.5e308
    assert sanitize_probes(pr) == 0 and np.all(pr.force == 1.5e308)
