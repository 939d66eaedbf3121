"""HullSet: qhull hulls of point clouds, flat representations of degenerate clouds, validate().

Oracles: hand-derived hulls (cube, square, segment, point), brute force over the cloud (every
point inside every face plane; the support value of the cloud along many directions equals the
hull's), coal's ``Convex.convexHull`` (same vertex set and volume), and broken hulls that
validate() must refuse.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from conftest import examples
from hypothesis import strategies as st

from ambf_collision.geometry.hulls import HullError, HullSet, _ear_clip
from ambf_collision.geometry.transforms import axis_angle_to_matrix

CUBE = np.array([[x, y, z] for x in (-1.0, 1.0) for y in (-2.0, 2.0) for z in (-3.0, 3.0)])


def enclosed_volume(hs, h):
    V, tri = hs.hull_vertices(h), hs.hull_triangles(h)
    A, B, C = (V[tri[:, i]] for i in range(3))
    return float(np.einsum("ij,ij->", A, np.cross(B, C))) / 6.0


def noisy_bottom_box(rng, noise, count):
    """A 3 cm box-like cloud whose bottom face z = 0 holds ``count`` points off it by ``noise`` m."""
    top = np.c_[rng.uniform(0, 0.03, (4, 2)), np.full(4, 0.01)]
    bottom = np.c_[rng.uniform(0, 0.03, (count, 2)), rng.normal(0, noise, count)]
    return np.vstack([top, bottom, [[0, 0, 0], [0.03, 0, 0], [0, 0.03, 0], [0.03, 0.03, 0]]])


def check_brute_force(hs, h, cloud, directions=200):
    """Every cloud point inside every face plane, hull vertices are cloud points, and the support
    of the hull equals the support of the cloud along many directions."""
    V = hs.hull_vertices(h)
    n, o = hs.hull_faces(h)
    scale = np.abs(cloud).max()
    assert (n @ cloud.T - o[:, None]).max() <= 1e-12 * scale
    assert all((cloud == v).all(axis=1).any() for v in V)
    U = np.random.default_rng(0).normal(size=(directions, 3))
    assert np.array_equal((U @ V.T).max(axis=1), (U @ cloud.T).max(axis=1))


def test_cube_with_face_edge_and_inner_points_hand():
    extra = np.array([[0.0, 0.0, 3.0], [1.0, 0.0, 0.0], [0.0, 2.0, 3.0], [0.2, 0.3, -0.1], [1.0, 2.0, 0.5]])
    hs = HullSet.from_clouds([np.vstack([extra, CUBE])]).validate()
    assert hs.dimension.tolist() == [3]
    assert sorted(map(tuple, hs.hull_vertices(0))) == sorted(map(tuple, CUBE))
    n, o = hs.hull_faces(0)
    expected = {(1, 0, 0, 1), (-1, 0, 0, 1), (0, 1, 0, 2), (0, -1, 0, 2), (0, 0, 1, 3), (0, 0, -1, 3)}
    assert {tuple(np.round(np.r_[nn, oo], 12) + 0.0) for nn, oo in zip(n, o)} == expected
    assert len(hs.hull_triangles(0)) == 12
    assert enclosed_volume(hs, 0) == pytest.approx(48.0, rel=1e-14)
    assert np.allclose(hs.centre[0], 0.0) and hs.bound_radius[0] == pytest.approx(np.sqrt(14.0))


def test_hull_ids_follow_the_clouds_and_shared_clouds_are_hulled_once():
    square = np.array([[0.0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]])
    hs = HullSet.from_clouds([CUBE, square, CUBE.copy(), [[1.0, 2.0, 3.0]]]).validate()
    assert hs.count == 4 and hs.dimension.tolist() == [3, 2, 3, 0]
    assert np.array_equal(hs.hull_vertices(0), hs.hull_vertices(2))
    assert hs.vertex_start.tolist() == [0, 8, 12, 20, 21]
    arrays = hs.arrays()
    assert arrays.vertices is hs.vertices and arrays.face_start is hs.face_start
    for a in arrays:
        assert a.flags.c_contiguous and not a.flags.writeable
    assert hs.vertex_start.dtype == hs.face_start.dtype == hs.triangles.dtype == np.int64


def test_point_cloud_of_one_point_and_of_repeated_points():
    for cloud in ([[0.5, -1.0, 2.0]], [[0.5, -1.0, 2.0]] * 5):
        hs = HullSet.from_clouds([cloud]).validate()
        assert hs.dimension[0] == 0
        assert hs.hull_vertices(0).tolist() == [[0.5, -1.0, 2.0]]
        n, o = hs.hull_faces(0)
        assert n.tolist() == [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
        assert o.tolist() == [0.5, -0.5, -1.0, 1.0, 2.0, -2.0]
        assert len(hs.hull_triangles(0)) == 0 and hs.bound_radius[0] == 0.0


@pytest.mark.parametrize("count", [2, 3, 7])
def test_collinear_cloud_is_its_two_extreme_points(count):
    R = axis_angle_to_matrix([0.3, -1.0, 0.2], 0.7)
    a, b = np.array([0.1, 0.2, 0.3]), np.array([-0.4, 0.8, 1.1])
    t = np.r_[0.0, 1.0, np.linspace(0.1, 0.9, count - 2)]
    cloud = (a + t[:, None] * (b - a)) @ R.T
    hs = HullSet.from_clouds([cloud]).validate()
    assert hs.dimension[0] == 1
    assert sorted(map(tuple, hs.hull_vertices(0))) == sorted(map(tuple, cloud[:2]))
    n, o = hs.hull_faces(0)
    u = (R @ (b - a)) / np.linalg.norm(b - a)
    assert abs(abs(n[0] @ u) - 1.0) < 1e-12 and np.allclose(n[1], -n[0])
    assert np.allclose(n[2:] @ u, 0.0, atol=1e-12)  # the four planes through the axis
    assert np.abs(n @ cloud.T - o[:, None]).max(axis=1)[2:].max() < 1e-15  # every point on them
    check_brute_force(hs, 0, cloud)


def test_coplanar_cloud_is_a_two_sided_polygon():
    square = np.array([[0.0, 0, 0], [2, 0, 0], [2, 2, 0], [0, 2, 0], [1, 1, 0], [1, 0, 0], [0.5, 1.5, 0]])
    R = axis_angle_to_matrix([1.0, 2.0, 0.5], 1.1)
    for cloud, normal in ((square, np.array([0.0, 0.0, 1.0])), (square @ R.T + [0.3, -0.2, 5.0], R[:, 2])):
        hs = HullSet.from_clouds([cloud]).validate()
        assert hs.dimension[0] == 2
        assert sorted(map(tuple, np.round(hs.hull_vertices(0), 12))) == sorted(map(tuple, np.round(cloud[:4], 12)))
        n, o = hs.hull_faces(0)
        assert len(n) == 6 and abs(abs(n[0] @ normal) - 1) < 1e-12 and np.allclose(n[1], -n[0])
        assert o[0] + o[1] == pytest.approx(0.0, abs=1e-14)  # zero thickness
        tri = hs.hull_triangles(0)
        assert len(tri) == 4  # a fan of 2 on each side
        V = hs.hull_vertices(0)
        area = np.cross(V[tri[:, 1]] - V[tri[:, 0]], V[tri[:, 2]] - V[tri[:, 0]])
        assert np.allclose(np.linalg.norm(area, axis=1).sum(), 2 * 2 * 4.0)  # both sides, area 4 each
        check_brute_force(hs, 0, cloud)


def test_three_points_and_four_coplanar_points():
    hs = HullSet.from_clouds([[[0, 0, 0], [1, 0, 0], [0, 1, 0]], [[0, 0, 1], [1, 0, 1], [0, 1, 1], [1, 1, 1]]])
    hs.validate()
    assert hs.dimension.tolist() == [2, 2]
    assert len(hs.hull_vertices(0)) == 3 and len(hs.hull_vertices(1)) == 4


@settings(max_examples=examples(60), deadline=None)
@given(st.integers(4, 60), st.integers(0, 2**32 - 1), st.sampled_from(["ball", "cube", "sphere", "flat-noise"]))
def test_random_clouds_against_brute_force_and_coal(count, seed, kind):
    rng = np.random.default_rng(seed)
    if kind == "ball":
        cloud = rng.uniform(-1, 1, (count, 3))
    elif kind == "cube":  # many points on faces, edges and corners of a box: coplanar facets to merge
        cloud = rng.integers(-2, 3, (count, 3)) * np.array([0.5, 0.25, 1.0])
    elif kind == "sphere":
        cloud = rng.normal(size=(count, 3))
        cloud /= np.linalg.norm(cloud, axis=1, keepdims=True)
    else:  # a box whose bottom face holds many points off its plane by rounding-size noise
        cloud = noisy_bottom_box(rng, 1e-15, count)
    hs = HullSet.from_clouds([cloud]).validate()
    check_brute_force(hs, 0, cloud)
    if hs.dimension[0] == 3:
        coal = pytest.importorskip("coal", reason="coal (the oracle) is not installed in this environment")
        pts = coal.StdVec_Vec3s()
        for p in cloud:
            pts.append(p)
        ref = coal.Convex.convexHull(pts, True, None)
        assert enclosed_volume(hs, 0) == pytest.approx(ref.computeVolume(), rel=1e-12, abs=1e-15)
        assert sorted(map(tuple, hs.hull_vertices(0))) == sorted(map(tuple, np.array(ref.points())))


@pytest.mark.parametrize("noise_seed", [(1e-16, 134), (1e-15, 90), (1e-15, 239), (1e-9, 3)])
def test_near_coplanar_bottom_faces(noise_seed):
    """Clouds where qhull merges facets that rounding made non-convex (these seeds did with scipy
    1.17's qhull): the hull stays closed, outward and convex."""
    noise, seed = noise_seed
    cloud = noisy_bottom_box(np.random.default_rng(seed), noise, 40)
    hs = HullSet.from_clouds([cloud]).validate()
    check_brute_force(hs, 0, cloud)


@pytest.mark.parametrize("start", range(5))
def test_ear_clip_of_a_non_convex_outline(start):
    # counter-clockwise, area 5 + 4 = 9 (shoelace); the corner (1, 2) is reflex, so a fan from
    # (4, 2) or (0, 4) would fold over it
    xy = [(0.0, 0.0), (4.0, 2.0), (1.0, 2.0), (0.0, 4.0), (-2.0, 2.0)]
    xy = xy[start:] + xy[:start]
    ring = [10 + i for i in range(5)]
    tri = _ear_clip(list(ring), list(xy))
    pos = {v: np.array(p) for v, p in zip(ring, xy)}
    areas = [float(np.cross(np.r_[pos[b] - pos[a], 0], np.r_[pos[c] - pos[a], 0])[2]) / 2 for a, b, c in tri]
    assert len(tri) == 3 and min(areas) > 0 and sum(areas) == pytest.approx(9.0, rel=1e-15)


def test_bad_clouds_name_the_hull():
    with pytest.raises(HullError, match="hull 1: .*shape \\(M, 3\\)"):
        HullSet.from_clouds([CUBE, np.zeros((4, 2))])
    with pytest.raises(HullError, match="hull 0: .*non-finite"):
        HullSet.from_clouds([[[0.0, 0.0, np.nan]]])
    with pytest.raises(HullError, match="hull 0: .*M >= 1"):
        HullSet.from_clouds([np.zeros((0, 3))])
    with pytest.raises(HullError, match="hull 2: .*not an array of numbers"):
        HullSet.from_clouds([CUBE, CUBE, [["a", "b", "c"]]])
    assert HullSet.from_clouds([]).validate().count == 0


def broken(hs, **changes):
    """A copy of hs with some arrays replaced (the constructor's layout, arrays set afterwards)."""
    out = HullSet.__new__(HullSet)
    out.__dict__.update({k: np.array(v) for k, v in hs.__dict__.items()})
    out.__dict__.update(changes)
    return out


def test_validate_refuses_broken_hulls():
    hs = HullSet.from_clouds([CUBE]).validate()
    tri = hs.triangles.copy()
    flipped = tri.copy()
    flipped[3] = flipped[3, [0, 2, 1]]
    with pytest.raises(HullError, match="hull 0 .*not closed"):
        broken(hs, triangles=flipped).validate()
    with pytest.raises(HullError, match="not closed"):
        broken(hs, triangles=tri[1:], triangle_start=np.array([0, 11])).validate()
    inward = tri[:, [0, 2, 1]]
    with pytest.raises(HullError, match="not outward"):
        broken(hs, triangles=inward).validate()
    pushed = hs.vertices.copy()
    pushed[0] *= 1.01
    with pytest.raises(HullError, match="not convex|does not lie"):
        broken(hs, vertices=pushed).validate()
    far = hs.face_offset.copy()
    far[2] += 0.1
    with pytest.raises(HullError, match="does not touch"):
        broken(hs, face_offset=far).validate()


# ------------------------------------------------------------------------------- import cost

@pytest.mark.slow
def test_scipy_spatial_is_imported_only_for_a_hull():
    """qhull's module costs ~0.4 s to import, part of every node's start: a robot without meshes
    never imports it, and the first hull does (in a fresh interpreter each)."""
    import subprocess
    import sys

    from conftest import DEMO_ARM

    def loaded(code):
        out = subprocess.run([sys.executable, "-c", "import sys\n" + code +
                              "\nprint('scipy.spatial' in sys.modules)"],
                             capture_output=True, text=True, check=True)
        return out.stdout.split()[-1] == "True"

    assert not loaded(f"from ambf_collision.model import Model\nModel.from_files([{str(DEMO_ARM)!r}])")
    assert loaded("import numpy as np\nfrom ambf_collision.geometry.hulls import HullSet\n"
                  "HullSet.from_clouds([np.vstack([np.eye(3), np.zeros(3)])])")
