"""support(): the support point of every bounded kind in a world direction.

Oracles: the closed-form support functions of gjk_reference.support_values (the support point's
value along d must equal h(d), the core's for spheres and capsules), membership of the point in
the shape (local coordinates within the half extents / radius), and hand-derived tie rules.
"""

import numpy as np
import pytest
from gjk_reference import support_values, world_of
from hypothesis import given, settings
from conftest import examples
from hypothesis import strategies as st

from ambf_collision.geometry.shapes import (
    Box,
    Capsule,
    Cone,
    ConvexHull,
    Cylinder,
    Plane,
    Sphere,
)
from ambf_collision.geometry.support import core_of, core_support, support
from ambf_collision.geometry.transforms import matrix_to_quat, quat_to_matrix

finite = st.floats(-1.0, 1.0, allow_nan=False)
vec3 = st.tuples(finite, finite, finite).map(np.array)
quat = st.tuples(finite, finite, finite, finite).filter(lambda q: sum(x * x for x in q) > 1e-3).map(np.array)
size = st.floats(0.0, 1.0)


def support_point(W, H, k, d0, d1, d2):
    """The contract entry, as a tuple."""
    out = np.full(3, np.nan)
    support(W, H, k, d0, d1, d2, out)
    return tuple(out.tolist())


def shapes_strategy():
    return st.one_of(
        st.builds(Sphere, vec3, size),
        st.builds(Capsule, vec3, vec3, size),
        st.builds(lambda s, c, q: Box(s, c, q), st.tuples(size, size, size), vec3, quat),
        st.builds(lambda r, h, c, q: Cylinder(r, h, c, q), size, size, vec3, quat),
        st.builds(lambda r, h, c, q: Cone(r, h, c, q), size, size, vec3, quat),
        st.builds(lambda seed, n, c, q: ConvexHull(np.random.default_rng(seed).uniform(-0.5, 0.5, (n, 3)), c, q),
                  st.integers(0, 1000), st.integers(1, 12), vec3, quat),
    )


def point_in_shape(s, x, tol=1e-12):
    if s.kind == 0:
        return np.allclose(x, s.center, atol=0)
    if s.kind == 1:
        u = s.b - s.a
        t = 0.0 if u @ u == 0 else np.clip((x - s.a) @ u / (u @ u), 0, 1)
        return np.linalg.norm(s.a + t * u - x) <= tol
    R = quat_to_matrix(s.orientation)
    q = R.T @ (x - s.position)
    if s.kind == 2:
        return np.all(np.abs(q) <= 0.5 * s.size + tol)
    if s.kind in (3, 4):
        hh = 0.5 * s.height
        rho = np.hypot(q[0], q[1])
        if abs(q[2]) > hh + tol:
            return False
        if s.kind == 3:
            return rho <= s.radius + tol
        return rho <= s.radius + tol and rho * 2 * hh <= s.radius * (hh - q[2]) + tol  # under the slant
    return any(np.linalg.norm(q - v) <= tol for v in s.vertices)  # a hull's support is a vertex


def core_value(s, d):
    """h(d) of the core: the full shape's minus radius |d| for spheres and capsules."""
    r = s.radius if s.kind in (0, 1) else 0.0
    return support_values(s, d[None])[0] - r * np.linalg.norm(d)


@pytest.mark.slow
@settings(max_examples=examples(300), deadline=None)
@given(shapes_strategy(), vec3.filter(lambda d: np.linalg.norm(d) > 1e-6))
def test_support_value_and_membership(shape, d):
    W, hulls = world_of([shape])
    x = np.array(support_point(W, hulls.arrays(), 0, *d))
    assert abs(d @ x - core_value(shape, d)) <= 1e-14 * (1 + np.abs(x).max())
    assert point_in_shape(shape, x)


def test_ties_pick_the_middle_of_the_feature_hand():
    R = quat_to_matrix(matrix_to_quat(np.array([[0.0, -1, 0], [1, 0, 0], [0, 0, 1]])))  # 90 deg about z
    shapes = [Box([2.0, 4.0, 6.0], [1.0, 1.0, 1.0], matrix_to_quat(R)), Cylinder(0.5, 2.0, [0, 0, 1.0]),
              Cone(0.5, 2.0), Capsule([0, 0, 0], [1.0, 0, 0], 0.1), Cylinder(0.0, 0.0, [1.0, 2.0, 3.0])]
    W, hulls = world_of(shapes)
    H = hulls.arrays()
    # box rotated 90 deg about z: world +x is local -y; the face centre at local (0, -2, 0)
    assert np.allclose(support_point(W, H, 0, 1.0, 0.0, 0.0), (3.0, 1.0, 1.0), rtol=0, atol=1e-15)
    assert np.allclose(support_point(W, H, 0, 0.0, 0.0, -1.0), (1.0, 1.0, -2.0), rtol=0, atol=1e-15)
    assert support_point(W, H, 1, 0.0, 0.0, 1.0) == (0.0, 0.0, 2.0)  # top cap centre
    assert support_point(W, H, 1, 0.0, 3.0, 0.0) == (0.0, 0.5, 1.0)  # side line's middle
    assert support_point(W, H, 2, 0.0, 0.0, 1.0) == (0.0, 0.0, 1.0)  # apex
    assert support_point(W, H, 2, 0.0, 0.0, -1.0) == (0.0, 0.0, -1.0)  # base centre
    assert support_point(W, H, 2, 1.0, 0.0, 0.0) == (0.5, 0.0, -1.0)  # rim before apex
    assert support_point(W, H, 3, 0.0, 1.0, 0.0) == (0.0, 0.0, 0.0)  # capsule end a on ties
    assert support_point(W, H, 3, 1.0, 1.0, 0.0) == (1.0, 0.0, 0.0)
    assert support_point(W, H, 4, 0.3, -0.2, 0.7) == (1.0, 2.0, 3.0)  # zero-size cylinder: its centre


@pytest.mark.parametrize("cloud", [[[0.1, 0.2, 0.3]], [[0, 0, 0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5]],
                                   [[0, 0, 0], [1.0, 0, 0], [1.0, 1.0, 0], [0, 1.0, 0], [0.5, 0.5, 0]]])
def test_flat_hulls_point_segment_polygon(cloud):
    shape = ConvexHull(np.array(cloud, float), [0.5, -0.5, 1.0], matrix_to_quat(quat_to_matrix([0.1, 0.2, 0.3, 0.9])))
    W, hulls = world_of([shape])
    for d in np.random.default_rng(1).normal(size=(50, 3)):
        x = np.array(support_point(W, hulls.arrays(), 0, *d))
        assert abs(d @ x - core_value(shape, d)) <= 1e-14
        assert point_in_shape(shape, x)


def test_plane_gives_its_reference_point():
    # no bounded support map: documented to give the point offset * normal (callers dispatch planes)
    W, hulls = world_of([Plane([0, 0, 2.0], 0.5)])
    assert support_point(W, hulls.arrays(), 0, 0.3, 0.0, 1.0) == (0.0, 0.0, 0.5)


@pytest.mark.slow
def test_hull_climb_from_any_hint_reaches_the_maximum():
    rng = np.random.default_rng(3)
    cloud = rng.normal(size=(400, 3))
    cloud /= np.linalg.norm(cloud, axis=1, keepdims=True)  # every point a hull vertex
    shape = ConvexHull(cloud * [0.3, 0.2, 0.1], [0.1, 0.2, 0.3], matrix_to_quat(quat_to_matrix([0.3, -0.1, 0.2, 0.9])))
    W, hulls = world_of([shape])
    H = hulls.arrays()
    assert np.diff(hulls.neighbor_start).min() >= 3  # every vertex of a solid hull has >= 3 neighbours
    core = core_of(W, H, 0)
    for d in rng.normal(size=(40, 3)):
        values = set()
        for hint in (-1, 0, 17, 399):
            x0, x1, x2, vertex = core_support(core, H.vertices, H.neighbor_start, H.neighbors, d[0], d[1], d[2], hint)
            assert 0 <= vertex < 400
            values.add(round(d @ np.array([x0, x1, x2]), 15))
            assert abs(d @ np.array([x0, x1, x2]) - core_value(shape, d)) <= 1e-14
        assert len(values) == 1
