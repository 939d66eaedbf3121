"""Closed-form sphere/capsule distances (the compiled kernel) against an exact rational
reference and hand values."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from conftest import examples

import exact_reference as ex
from ambf_collision.geometry.segments import (capsule_distance, closest_parameters, fallback_normal,
                                             point_segment)
from ambf_collision.geometry.transforms import quat_to_matrix

TOL = 1e-9
coord = st.floats(-2.0, 2.0, allow_nan=False, allow_infinity=False)
point = st.tuples(coord, coord, coord).map(np.array)
radius = st.floats(0.0, 0.5, allow_nan=False)
quat = st.tuples(*[st.floats(-1, 1)] * 4).filter(lambda q: sum(x * x for x in q) > 0.1)


def one(a1, b1, r1, a2, b2, r2):
    """The kernel on one pair: d, point_1, point_2, normal, position."""
    a1, b1, a2, b2 = (tuple(float(v) for v in x) for x in (a1, b1, a2, b2))
    d, p1, p2, n = capsule_distance(a1, b1, float(r1), a2, b2, float(r2))
    p1, p2, n = np.array(p1), np.array(p2), np.array(n)
    return d, p1, p2, n, 0.5 * (p1 + p2)


def check_contact(a1, b1, r1, a2, b2, r2):
    """Distance vs exact reference; witness points on the surfaces; |p2-p1| = |d|; unit normal."""
    d, p1, p2, n, pos = one(a1, b1, r1, a2, b2, r2)
    assert np.all(np.isfinite([d, *p1, *p2, *n, *pos]))
    assert d == pytest.approx(ex.capsule_distance(a1, b1, r1, a2, b2, r2), abs=TOL)
    assert ex.sqrt_float(ex.point_segment_sq(p1, a1, b1)) == pytest.approx(r1, abs=TOL)
    assert ex.sqrt_float(ex.point_segment_sq(p2, a2, b2)) == pytest.approx(r2, abs=TOL)
    assert np.linalg.norm(p2 - p1) == pytest.approx(abs(d), abs=TOL)
    assert np.linalg.norm(n) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(p2 - p1, d * n, atol=TOL)
    np.testing.assert_allclose(pos, 0.5 * (p1 + p2), atol=1e-15)
    return d, p1, p2, n


@pytest.mark.slow
@settings(max_examples=examples(400), deadline=None)
@given(point, point, radius, point, point, radius)
def test_random_capsules_match_exact_reference(a1, b1, r1, a2, b2, r2):
    check_contact(a1, b1, r1, a2, b2, r2)


@settings(max_examples=examples(200), deadline=None)
@given(point, point, radius, point, point, radius)
def test_swap_keeps_distance_and_flips_normal(a1, b1, r1, a2, b2, r2):
    d, p1, p2, n, _ = one(a1, b1, r1, a2, b2, r2)
    e, q1, q2, m, _ = one(a2, b2, r2, a1, b1, r1)
    assert e == pytest.approx(d, abs=TOL)
    if ex.sqrt_float(ex.segment_segment_sq(a1, b1, a2, b2)) > 1e-6:  # normal defined
        np.testing.assert_allclose(m, -n, atol=1e-6)


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None)
@given(point, point, radius, point, point, radius, quat, point)
def test_invariant_under_common_rigid_motion(a1, b1, r1, a2, b2, r2, q, t):
    R = quat_to_matrix(np.array(q))
    d, p1, p2, n, _ = one(a1, b1, r1, a2, b2, r2)
    e, q1, q2, m, _ = one(R @ a1 + t, R @ b1 + t, r1, R @ a2 + t, R @ b2 + t, r2)
    assert e == pytest.approx(d, abs=TOL)
    if ex.sqrt_float(ex.segment_segment_sq(a1, b1, a2, b2)) > 1e-6:
        np.testing.assert_allclose(m, R @ n, atol=1e-6)


# ---------------------------------------------------------------- degenerate cases, on purpose
X = np.array([1.0, 0.0, 0.0])
O = np.zeros(3)


def test_parallel_overlapping():
    d, *_ = check_contact(O, X, 0.1, [0.5, 0.3, 0.0], [1.5, 0.3, 0.0], 0.05)
    assert d == pytest.approx(0.3 - 0.15, abs=1e-15)


def test_anti_parallel_and_collinear_disjoint():
    d, *_ = check_contact(O, X, 0.1, [1.5, 0.3, 0.0], [0.5, 0.3, 0.0], 0.05)
    assert d == pytest.approx(0.15, abs=1e-15)
    d, p1, p2, n = check_contact(O, X, 0.1, [3.0, 0.0, 0.0], [2.0, 0.0, 0.0], 0.2)
    assert d == pytest.approx(1.0 - 0.3, abs=1e-15)
    np.testing.assert_allclose(n, X)
    np.testing.assert_allclose(p1, [1.1, 0, 0])
    np.testing.assert_allclose(p2, [1.8, 0, 0])


def test_collinear_overlapping_uses_perpendicular_fallback():
    d, p1, p2, n = check_contact(O, X, 0.1, [0.5, 0.0, 0.0], [2.0, 0.0, 0.0], 0.2)
    assert d == pytest.approx(-0.3, abs=1e-15)
    assert abs(n @ X) < 1e-15 and np.linalg.norm(n) == pytest.approx(1.0)


def test_crossing_axes_normal_is_cross_product_and_flips():
    a2, b2 = np.array([0.5, -1.0, 0.0]), np.array([0.5, 1.0, 0.0])
    d, p1, p2, n = check_contact(O, X, 0.1, a2, b2, 0.2)
    assert d == pytest.approx(-0.3, abs=1e-15)
    np.testing.assert_allclose(n, [0, 0, 1.0])  # unit(d1 x d2) = x cross y
    e, *_, m, _ = one(a2, b2, 0.2, O, X, 0.1)
    np.testing.assert_allclose(m, [0, 0, -1.0])


@pytest.mark.parametrize("angle", [1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2])
@pytest.mark.parametrize("gap", [0.0, 1e-6, 0.02])
def test_nearly_parallel(angle, gap):
    # segment 2 rotated by `angle` about z, crossing segment 1's line at x = 0.5, lifted by `gap` in z
    c, s = math.cos(angle), math.sin(angle)
    a2 = np.array([0.5 - 0.6 * c, -0.6 * s, gap])
    b2 = np.array([0.5 + 0.6 * c, 0.6 * s, gap])
    d, *_ = check_contact(O, X, 0.01, a2, b2, 0.02)
    assert d == pytest.approx(gap - 0.03, abs=TOL)  # hand value: the lines cross under each other
    # shifted along the lines: nearest features are segment ends, still exact
    check_contact(O, X, 0.01, a2 + [0.9, 0, 0], b2 + [0.9, 0, 0], 0.02)


@pytest.mark.parametrize("angle", [1e-9, 1e-6, 1e-3])
def test_nearly_parallel_offset_side_by_side(angle):
    c, s = math.cos(angle), math.sin(angle)
    d, *_ = check_contact(O, X, 0.0, [0.0, 0.05, 0.0], [c, 0.05 + s, 0.0], 0.0)
    assert d == pytest.approx(0.05, abs=1e-12)


def test_zero_length_capsules_are_spheres():
    d, p1, p2, n = check_contact(O, O, 0.5, [3.0, 4.0, 0.0], [3.0, 4.0, 0.0], 1.0)
    assert d == pytest.approx(3.5, abs=1e-15)
    np.testing.assert_allclose(n, [0.6, 0.8, 0.0])
    np.testing.assert_allclose(p1, [0.3, 0.4, 0.0])
    # sphere against a segment end and against a segment interior
    d, *_ = check_contact(O, O, 0.1, [2.0, 0.0, 0.0], [3.0, 0.0, 0.0], 0.1)
    assert d == pytest.approx(1.8)
    d, *_ = check_contact([0.5, 2.0, 0.0], [0.5, 2.0, 0.0], 0.5, O, X, 0.25)
    assert d == pytest.approx(1.25)


def test_coincident_sphere_centres_use_plus_z():
    d, p1, p2, n = check_contact([1.0, 2.0, 3.0], [1.0, 2.0, 3.0], 0.5, [1.0, 2.0, 3.0],
                                 [1.0, 2.0, 3.0], 0.25)
    assert d == -0.75
    np.testing.assert_array_equal(n, [0.0, 0.0, 1.0])
    np.testing.assert_allclose(p1, [1.0, 2.0, 3.5])
    np.testing.assert_allclose(p2, [1.0, 2.0, 2.75])


def test_sphere_centre_on_capsule_axis_is_perpendicular_and_flips():
    d, p1, p2, n = check_contact(O, [0.0, 0.0, 2.0], 0.1, [0.0, 0.0, 1.0], [0.0, 0.0, 1.0], 0.2)
    assert d == pytest.approx(-0.3)
    assert abs(n[2]) < 1e-15
    *_, m, _ = one([0.0, 0.0, 1.0], [0.0, 0.0, 1.0], 0.2, O, [0.0, 0.0, 2.0], 0.1)
    np.testing.assert_allclose(m, -n)


def test_exact_touching_and_deep_penetration():
    d, *_ = check_contact(O, O, 1.0, [2.0, 0.0, 0.0], [2.0, 0.0, 0.0], 1.0)
    assert d == 0.0
    d, *_ = check_contact(O, X, 0.25, [0.0, 0.5, 0.0], [1.0, 0.5, 0.0], 0.25)
    assert d == 0.0
    d, p1, p2, n = check_contact(O, X, 1.0, [0.5, 0.1, 0.0], [0.5, 0.1, 0.0], 2.0)
    assert d == pytest.approx(0.1 - 3.0)
    np.testing.assert_allclose(n, [0, 1, 0])


def test_fallback_normals_are_documented_cases():
    assert fallback_normal((1.0, 0.0, 0.0), (0.0, 1.0, 0.0)) == (0, 0, 1)   # d1 x d2
    assert fallback_normal((0.0, 0.0, 0.0), (0.0, 0.0, 2.0)) == (0, -1, 0)  # -unit(d2 x e_x) = -y
    n = fallback_normal((1.0, 0.0, 0.0), (2.0, 0.0, 0.0))                   # parallel: perpendicular to d1
    assert abs(n[0]) < 1e-15 and abs(np.linalg.norm(n) - 1) < 1e-15
    assert fallback_normal((0.0, 0.0, 0.0), (0.0, 0.0, 0.0)) == (0, 0, 1)   # +z


def test_closest_points_batch_and_nan_free():
    rng = np.random.default_rng(7)
    a1, b1, a2, b2 = (rng.uniform(-1, 1, (500, 3)) for _ in range(4))
    b1[:50] = a1[:50]           # zero-length segments
    b2[40:90] = a2[40:90]
    a2[100:150] = a1[100:150]   # shared endpoints: distance 0
    r1 = rng.uniform(0, 0.1, 500)
    for k in range(500):
        s, t = closest_parameters(*(tuple(x[k]) for x in (a1, b1, a2, b2)))
        assert 0 <= s <= 1 and 0 <= t <= 1
        c1, c2 = a1[k] + s * (b1[k] - a1[k]), a2[k] + t * (b2[k] - a2[k])
        exact = ex.sqrt_float(ex.segment_segment_sq(a1[k], b1[k], a2[k], b2[k]))
        assert np.linalg.norm(c2 - c1) == pytest.approx(exact, abs=TOL)
        d, p1, p2, n, pos = one(a1[k], b1[k], r1[k], a2[k], b2[k], 0.0)
        assert np.isfinite([d, *p1, *p2, *n]).all() and abs(np.linalg.norm(n) - 1) < 1e-12


def test_special_inputs_match_exact_reference():
    """Parallel, collinear, anti-parallel, crossing, grid-snapped (ties), identical and
    zero-length capsules: the exact rational reference, finite unit normals."""
    rng = np.random.default_rng(13)
    n = 300
    a1, b1, a2, b2 = (rng.uniform(-1, 1, (n, 3)) for _ in range(4))
    b1[:30] = a1[:30]                                   # spheres
    b2[20:50] = a2[20:50]
    d = b1[60:120] - a1[60:120]                         # parallel / collinear / anti-parallel
    a2[60:120] = a1[60:120] + rng.uniform(-1, 1, (60, 1)) * d
    a2[60:90] += [0, 0.1, 0]
    b2[60:120] = a2[60:120] + rng.uniform(-1, 1, (60, 1)) * d
    m = 0.5 * (a1[120:160] + b1[120:160])               # crossing at the midpoints
    a2[120:160] = m - 0.5 * (b2[120:160] - a2[120:160])
    b2[120:160] = 2 * m - a2[120:160]
    a1[160:200], b1[160:200], a2[160:200], b2[160:200] = (
        np.round(rng.uniform(-2, 2, (4, 40, 3)) * 4) / 4)  # grid points: exact ties
    a2[200:220], b2[200:220] = a1[200:220], b1[200:220]  # identical capsules
    r1, r2 = rng.uniform(0, .2, n), rng.uniform(0, .2, n)
    for k in range(n):
        d, p1, p2, nrm, _ = one(a1[k], b1[k], r1[k], a2[k], b2[k], r2[k])
        assert np.isfinite([d, *p1, *p2, *nrm]).all() and abs(np.linalg.norm(nrm) - 1) < 1e-12
        scale = 1.0 + max(np.abs(x).max() for x in (a1[k], b1[k], a2[k], b2[k]))
        exact = ex.capsule_distance(a1[k], b1[k], r1[k], a2[k], b2[k], r2[k])
        assert d == pytest.approx(exact, abs=4e-16 * scale)


def test_point_segment_distance_closest_point_and_normal():
    """Hand-derived: a point on the segment's axis gets the perpendicular fallback normal; a
    point beyond an end is measured from that end."""
    L, C, n = point_segment((0.0, 0.0, 1.0), (0.0, 0.0, 0.0), (0.0, 0.0, 2.0))
    assert L == 0.0 and C == (0.0, 0.0, 1.0) and n == (0.0, 1.0, 0.0)
    L, C, n = point_segment((3.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1.0, 0.0, 0.0))
    assert L == 2.0 and C == (1.0, 0.0, 0.0) and n == (1.0, 0.0, 0.0)
    L, C, n = point_segment((0.5, 2.0, 0.0), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))  # zero length
    assert L == np.hypot(0.5, 2.0) and C == (0.0, 0.0, 0.0)
    np.testing.assert_allclose(n, np.array([0.5, 2.0, 0.0]) / L, rtol=0, atol=1e-16)


@pytest.mark.parametrize("a1, b1, r1, a2, b2, r2", [
    # nearly crossing axes 4.7e-12 m apart: c2 - c1 is a poor direction (hypothesis finds these)
    ([0.0, 0.0, 1.9375], [0.0, 1.0, -1.0], 0.5, [4.688807554152295e-12, 0.0, 0.0], [0.0, 1.0, 0.0], 0.0),
    ([0.0, 0.0, 2.0], [0.0, 1.0, -1.0], 0.0, [4.688807554152295e-12, 0.96875, 0.0], [0.0, 0.0, 0.0], 0.5),
])
def test_near_coincident_closest_points_keep_witnesses_on_the_surfaces(a1, b1, r1, a2, b2, r2):
    a1, b1, a2, b2 = (np.array(v, float) for v in (a1, b1, a2, b2))
    check_contact(a1, b1, r1, a2, b2, r2)
    d, p1, p2, n, pos = one(a1, b1, r1, a2, b2, r2)
    # both closest points are interior: the exact normal is along d1 x d2 (here +-x)
    assert abs(abs(n[0]) - 1.0) < 1e-15
