"""Segments against boxes, cylinders and cones (the compiled kernels of solids.py).

Oracles: a 56-step bisection of the signed distance along the segment (test code,
segment_reference.py; independent of the kernel's knots and closed forms), dense sampling of the
segment, coal (a zero-radius capsule, outside), hand-derived values.
"""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from conftest import examples

from ambf_collision.geometry.points import solid_local
from ambf_collision.geometry.shapes import BOX, CONE, CYLINDER, Box, Cone, Cylinder
from ambf_collision.geometry.solids import segment_solid
from ambf_collision.geometry.transforms import quat_to_matrix
from segment_reference import lowest_minimiser

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
quat = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-3).map(np.array)
size = st.floats(0.02, 1.0)
S5 = np.sqrt(5.0)


def seg(kind, qa, qb, h):
    """``(d, t, nearest, normal, enters)`` of segment ``qa``-``qb`` against the solid (local)."""
    qa, qb = np.asarray(qa, float), np.asarray(qb, float)
    u = qb - qa
    t, enters = segment_solid(kind, *qa, *u, *np.asarray(h, float)) if u.any() else (0.0, False)
    r = solid_local(kind, *(qa + t * u), *np.asarray(h, float))
    return r[0], t, np.array(r[1:4]), np.array(r[4:7]), enters


def check_against_bisection(kind, a, b, h, tol=2e-15):
    """Every row: separated rows equal the bisection minimum (never below it); the enter flag
    agrees with the sign of the bisection minimum (up to the tolerance). Returns the counts of
    separated and entering rows."""
    counts = [0, 0]
    for k in range(len(a)):
        u = b[k] - a[k]
        if not u.any():
            continue
        d, t, x, n, enters = seg(kind, a[k], b[k], h[k])
        t_ref, d_ref = lowest_minimiser(kind, a[k], u, h[k])
        scale = 1.0 + np.abs(a[k]).max() + np.abs(u).max()
        assert 0.0 <= t <= 1.0
        if abs(d_ref) > tol * scale:
            assert enters == (d_ref < 0.0), (k, d_ref)
        if not enters:
            assert d >= d_ref - tol * scale, (k, d, d_ref)
            assert d <= d_ref + tol * scale, (k, d, d_ref)
            assert np.isfinite([*x, *n]).all() and abs(np.linalg.norm(n) - 1) < 1e-12
        counts[enters] += 1
    return counts


@pytest.mark.parametrize("kind", [BOX, CYLINDER, CONE])
def test_random_segments_equal_bisection(kind):
    rng = np.random.default_rng(kind)
    K = 1500
    h = rng.uniform(0.05, 1, (K, 3))
    if kind != BOX:
        h[:, 1] = h[:, 0]
    a, b = 1.5 * rng.normal(size=(K, 3)), 1.5 * rng.normal(size=(K, 3))
    b[:50, 2] = a[:50, 2]  # in a horizontal plane (parallel to faces for some)
    a[50:150] = np.round(a[50:150] * 4) / 4   # grid points: exact ties
    b[50:150] = np.round(b[50:150] * 4) / 4
    h[50:150] = np.round(h[50:150] * 4) / 4 + 0.25
    if kind != BOX:
        h[:, 1] = h[:, 0]
    separated, entering = check_against_bisection(kind, a, b, h)
    assert separated > 800 and entering > 100


def _cylinder_adversarial(rng, n=60):
    """Local-frame segments (qa, qb) and half sizes h against an identity-posed cylinder or cone,
    built on the candidate methods' special cases: segments along the axis, horizontal ones (incl.
    exactly in a cap plane), through the axis, tangent to the lateral surface, through a rim circle,
    through the apex, along a shifted cone generator, zero-length; zero radius and/or zero height."""
    rows = []
    for _ in range(n):
        R, H = rng.uniform(0.1, 1.0, 2)
        th = rng.uniform(0, 2 * np.pi)
        e = np.array([np.cos(th), np.sin(th), 0.0])
        f = np.array([-np.sin(th), np.cos(th), 0.0])
        z = np.array([0.0, 0.0, 1.0])
        r0 = rng.uniform(0, 2) * R
        zs = rng.uniform(-2, 2) * H
        L = rng.uniform(0.1, 4)
        s = rng.uniform(-1, 1)
        cases = [
            (r0 * e + zs * z, r0 * e + (zs + L) * z),  # parallel to the axis (inside or outside)
            (r0 * e + H * z - L * f, r0 * e + H * z + L * f),  # horizontal in the top cap plane
            (r0 * e + zs * z - L * f, r0 * e + zs * z + L * f),  # horizontal
            (R * e + zs * z - L * f, R * e + (zs + s) * z + L * f),  # tangent line to the lateral surface
            (-L * e + zs * z, L * e + (zs + s) * z),  # through the axis
            (R * e + H * z - L * (e + f + z), R * e + H * z + L * (e - f + 0.5 * z)),  # through the rim
            (r0 * e + zs * z, r0 * e + zs * z),  # a point
            (-L * e + (H + 0.1) * z, L * e - (H + 0.2) * z),  # diagonal through the centre
            (R * e - H * z - L * (e + f + z), R * e - H * z + L * (e - f + 0.5 * z)),  # through the base rim
            (H * z - 0.7 * L * (e + s * z), H * z + 1.3 * L * (e + s * z)),  # through the apex
            # along a cone generator (apex to base rim), shifted along its outward normal
            (R * e - H * z + s * (2 * H * e + R * z) - L * (R * e - 2 * H * z),
             R * e - H * z + s * (2 * H * e + R * z) + L * (R * e - 2 * H * z)),
        ]
        for a, b in cases:
            for hh in ((R, R, H), (0.0, 0.0, H), (R, R, 0.0), (0.0, 0.0, 0.0)):
                rows.append((a, b, hh))
    a = np.array([r[0] for r in rows])
    b = np.array([r[1] for r in rows])
    h = np.array([r[2] for r in rows], dtype=float)
    return a, b, h


@pytest.mark.parametrize("kind", [CYLINDER, CONE])
def test_cylinder_cone_special_cases_equal_bisection(kind):
    """Segments along the axis, in a cap plane, through the axis, tangent to the side, through a
    rim, through the apex, along a generator, and flat solids (zero radius and/or height)."""
    a, b, h = _cylinder_adversarial(np.random.default_rng(21))
    separated, entering = check_against_bisection(kind, a, b, h)
    assert separated > 400 and entering > 50


def _box_adversarial(rng, n=40):
    """Local-frame segments (qa, qb) and half sizes h against an identity-posed box, built on the
    box candidates' special cases: axis-parallel segments (two components of b - a exactly 0, so
    knots and line crossings have no root), segments in a face plane, along an edge, through a
    corner, through the centre, zero-length; boxes with one or all half extents 0."""
    rows = []
    for _ in range(n):
        h = rng.uniform(0.1, 1.0, 3)
        p = rng.uniform(-2, 2, 3) * h
        L = rng.uniform(0.1, 4)
        i = rng.integers(3)
        e = np.eye(3)[i]
        corner = h * np.sign(rng.normal(size=3))
        face = p.copy()
        face[i] = h[i]
        edge = corner.copy()
        edge[i] = p[i]
        cases = [
            (p - L * e, p + L * e),  # axis-parallel (inside or outside)
            (face - L * np.roll(e, 1), face + L * np.roll(e, 1)),  # in the face plane x_i = h_i
            (edge - L * e, edge + L * e),  # along an edge
            (corner - L * (corner + e), corner + L * corner),  # through a corner
            (-p, p),  # through the centre
            (p, p),  # a point
            (corner - L * e, corner + L * e),  # along an edge line beyond the corner
        ]
        for a, b in cases:
            for hh in (h, h * e, np.zeros(3)):
                rows.append((a, b, hh))
    a = np.array([r[0] for r in rows])
    b = np.array([r[1] for r in rows])
    h = np.array([r[2] for r in rows], dtype=float)
    return a, b, h


def test_box_special_cases_equal_bisection():
    """Axis-parallel, in-face, edge and corner segments and flat boxes; along a face or an edge
    the whole part over it is a minimiser: the point closest to ``a`` wins."""
    a, b, h = _box_adversarial(np.random.default_rng(16))
    separated, entering = check_against_bisection(BOX, a, b, h, tol=4e-16)
    assert separated > 300 and entering > 50


@pytest.mark.slow
@settings(max_examples=examples(60), deadline=None)
@given(kind=st.sampled_from((BOX, CYLINDER, CONE)), c=vec3, q=quat, sx=size, sy=size, sz=size, pa=vec3,
       pb=vec3)
def test_posed_segment_against_sampling_and_coal(kind, c, q, sx, sy, sz, pa, pb):
    """A posed solid: the distance along dense samples of the segment bounds the result (the
    SDF is 1-Lipschitz), and coal's GJK (a zero-radius capsule) agrees when separated."""
    R = quat_to_matrix(q)
    h = np.array([sx, sy if kind == BOX else sx, sz])
    a, b = c + 1.5 * pa, c + 1.5 * pb
    qa, qb = R.T @ (a - c), R.T @ (b - c)
    d, t, x, n, enters = seg(kind, qa, qb, h)
    ts = np.linspace(0, 1, 4001)
    ds = np.array([solid_local(kind, *(qa + s * (qb - qa)), *h)[0] for s in ts])
    if not np.any(qb != qa):   # a point: its signed distance
        assert d == ds[0] and not enters
        return
    assert enters == (ds.min() < -1e-12) or abs(ds.min()) < 1e-9
    if enters:
        return
    assert ds.min() - np.linalg.norm(b - a) / 8000 - 1e-14 <= d <= ds.min() + 1e-14
    if d > 1e-6:
        coal = pytest.importorskip("coal")
        from ambf_collision.geometry.coal_bridge import _capsule_frame, coal_distance, to_coal
        shape = (Box(2 * h, c, q) if kind == BOX else (Cylinder if kind == CYLINDER else Cone)(sx, 2 * sz, c, q))
        g, tf = to_coal(shape)
        Rc, L = _capsule_frame(a, b)
        assert abs(coal_distance(g, tf, coal.Capsule(0.0, L), coal.Transform3s(Rc, 0.5 * (a + b)))[0] - d) < 1e-9


# ------------------------------------------------------------------------------------- hand-derived

def test_box_hand_cases():
    h = [1.0, 2.0, 3.0]
    d, t, x, n, e = seg(BOX, [3.0, 0.5, 0.2], [3.0, 0.5, 0.2], h)  # a point
    assert d == 2.0 and t == 0.0 and not e
    # parallel to the +x face, outside: flat minimum -> the point closest to a (a itself)
    d, t, x, n, e = seg(BOX, [1.5, -1.0, 0.0], [1.5, 1.0, 0.0], h)
    assert d == 0.5 and t == 0.0 and np.array_equal(n, [1, 0, 0])
    # parallel, starting beyond the face: the first point of the flat part (y = -2, t = 0.5)
    d, t, x, n, e = seg(BOX, [1.5, -4.0, 0.0], [1.5, 0.0, 0.0], h)
    assert abs(d - 0.5) < 1e-15 and abs(t - 0.5) < 1e-15
    # past a corner: nearest approach to the edge x = 1, y = 2 (z free): at t = 0.5
    d, t, x, n, e = seg(BOX, [2.0, 2.0, 0.0], [1.0, 3.0, 0.0], h)
    assert abs(d - np.sqrt(0.5)) < 1e-15 and abs(t - 0.5) < 1e-15 and not e
    # through the centre, and lying in a face: enters / does not
    assert seg(BOX, [-5.0, 0.0, 0.0], [5.0, 0.0, 0.0], h)[4]
    d, t, x, n, e = seg(BOX, [1.0, -1.0, 0.0], [1.0, 1.0, 0.0], h)   # in the face x = 1
    assert d == 0.0 and t == 0.0 and not e


def test_cylinder_hand_cases():
    h = [1.0, 1.0, 3.0]   # radius 1, half height 3
    # passing the rim at distance: horizontal at z = 4, x = 2: nearest the rim point (1, 0, 3)
    d, t, x, n, e = seg(CYLINDER, [2.0, -5.0, 4.0], [2.0, 5.0, 4.0], h)
    assert abs(d - np.sqrt(2.0)) < 1e-15 and abs(t - 0.5) < 1e-8 and not e
    # x = 2, z = 4 + y / 5 (y in [-5, 5]): squared distance to the top rim
    # g(y) = (sqrt(4 + y^2) - 1)^2 + (1 + y / 5)^2 has its minimum off every closed form
    # (Halley steps); g'(y) = 0 is checked at the returned point and the distance against g
    d, t, x, n, e = seg(CYLINDER, [2.0, -5.0, 3.0], [2.0, 5.0, 5.0], h)
    y = -5.0 + 10.0 * t
    r = np.hypot(2.0, y)
    assert abs(d - np.hypot(r - 1.0, 1.0 + y / 5.0)) < 1e-15
    assert abs((r - 1.0) * y / r + (1.0 + y / 5.0) / 5.0) < 1e-15 and -5.0 < y < 0.0
    # beside the side, parallel to the axis: flat from z = -3 to 3: the first point, z = -3
    d, t, x, n, e = seg(CYLINDER, [1.5, 0.0, -10.0], [1.5, 0.0, 10.0], h)
    assert abs(d - 0.5) < 1e-15 and abs(t - 0.35) < 1e-15 and np.allclose(n, [1, 0, 0])
    # along the axis through the cylinder, and tangent to the side: enters / does not
    assert seg(CYLINDER, [0, 0, -10.0], [0, 0, 10.0], h)[4]
    d, t, x, n, e = seg(CYLINDER, [1.0, -2.0, 0.0], [1.0, 2.0, 0.0], h)
    assert abs(d) < 1e-15 and abs(t - 0.5) < 1e-15 and not e


def test_cone_hand_cases():
    h = [1.0, 1.0, 1.0]   # base radius 1 at z = -1, apex (0, 0, 1)
    # parallel to a generator, outside at normal offset 0.5: flat, the first point (t = 0)
    nrm = np.array([2.0, 0.0, 1.0]) / S5
    gen = np.array([-1.0, 0.0, 2.0]) / S5
    mid = np.array([0.5, 0.0, 0.0]) + 0.5 * nrm
    d, t, x, n, e = seg(CONE, mid - 0.3 * gen, mid + 0.3 * gen, h)
    assert abs(d - 0.5) < 1e-15 and t == 0.0
    # straight above the apex, crossing the axis: the apex
    d, t, x, n, e = seg(CONE, [-1.0, 0.0, 2.0], [1.0, 0.0, 2.0], h)
    assert abs(d - 1.0) < 1e-15 and abs(t - 0.5) < 1e-15 and np.allclose(x, [0, 0, 1])
    # below the base rim, horizontal at z = -2 along y at x = 2: (sqrt(4 + y^2) - 1)^2 + 1 is
    # smallest at y = 0: sqrt(2)
    d, t, x, n, e = seg(CONE, [2.0, -3.0, -2.0], [2.0, 1.0, -2.0], h)
    assert abs(d - np.sqrt(2.0)) < 1e-15 and abs(t - 0.75) < 1e-8
    # under the base disc, horizontal: flat at distance 0.5, the first point over the disc
    d, t, x, n, e = seg(CONE, [-3.0, 0.0, -1.5], [3.0, 0.0, -1.5], h)
    assert abs(d - 0.5) < 1e-15 and abs(t - 1.0 / 3.0) < 1e-15
    # along the axis from below: enters
    assert seg(CONE, [0, 0, -0.5], [0, 0, 5.0], h)[4]


def test_flat_cone_segment():
    """A disc (cone of no height): a segment crossing its plane beyond the rim (rho = 3)."""
    d, t, x, n, e = seg(CONE, [3.0, 0.0, -1.0], [3.0, 0.0, 2.0], [1.0, 1.0, 0.0])
    assert abs(d - 2.0) < 1e-15 and abs(t - 1.0 / 3.0) < 1e-15 and not e
