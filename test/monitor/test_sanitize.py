"""Nothing published is NaN (monitor/sanitize.py): contacts, minimum distance, probes."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from ambf_collision.monitor.sanitize import (finite_contacts, finite_min_distance,
                                             sanitize_probes)


def _contact(k, bad=""):
    p1, p2, pos, n = (np.array([k, 2.0 * k, 3.0]) + i for i in range(4))
    if bad == "normal":
        n[1] = np.inf
    return SimpleNamespace(body_1="x", body_2="y", shape_1=-1, shape_2=-1,
                           distance=math.nan if bad == "distance" else 0.01 * k,
                           point_1=p1, point_2=p2, position=pos, normal=n)


def test_contacts_with_a_non_finite_value_are_dropped_in_order():
    cs = [_contact(float(k), bad) for k, bad in enumerate(["", "normal", "", "distance", ""])]
    kept, vectors, dropped = finite_contacts(cs)
    assert kept == [cs[0], cs[2], cs[4]] and dropped == 2
    expect = [[getattr(c, f) for f in ("point_1", "point_2", "position", "normal")]
              for c in kept]
    np.testing.assert_array_equal(vectors, expect)


def test_given_vectors_are_checked_and_kept_rows_returned():
    cs = [_contact(0.0), _contact(1.0)]
    vectors = np.array([[c.point_1, c.point_2, c.position, c.normal] for c in cs])
    vectors[0, 2, 0] = np.nan  # a fault in the position row of contact 0
    kept, out, dropped = finite_contacts(cs, vectors)
    assert kept == [cs[1]] and dropped == 1 and out.shape == (1, 4, 3)
    np.testing.assert_array_equal(out[0], vectors[1])


def test_malformed_vectors_are_dropped_not_raised():
    c = _contact(0.0)
    c.normal = np.array([0.0, 1.0])  # not a 3-vector
    kept, vectors, dropped = finite_contacts([c, _contact(1.0)])
    assert dropped == 1 and len(kept) == 1 and vectors.shape == (1, 4, 3)


def test_no_contacts():
    assert finite_contacts([]) == ([], None, 0)


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


@pytest.mark.parametrize("where", ["jacobian", "rate", "local"])
def test_contact_with_a_non_finite_controller_value_is_dropped(where):
    """Issue 13: the Jacobian, the distance rate and the body-frame points are checked like the
    vectors; the kept rows of each come back in order."""
    cs = [_contact(float(k)) for k in range(3)]
    jac, rates, local = np.arange(12.0).reshape(3, 4), np.array([0.5, -0.5, 0.25]), np.ones((3, 2, 3))
    {"jacobian": jac[1], "rate": rates[1:2], "local": local[1, 1]}[where][-1] = np.nan
    kept, vectors, dropped, (j, r, lo) = finite_contacts(cs, None, (jac, rates, local))
    assert kept == [cs[0], cs[2]] and dropped == 1 and vectors.shape == (2, 4, 3)
    np.testing.assert_array_equal(j, jac[[0, 2]])
    np.testing.assert_array_equal(r, [0.5, 0.25])
    assert lo.shape == (2, 2, 3)
    kept, _, dropped, (j, r, lo) = finite_contacts([], None, (np.zeros((0, 4)), np.zeros(0),
                                                              np.zeros((0, 2, 3))))
    assert kept == [] and dropped == 0 and j.shape == (0, 4)
