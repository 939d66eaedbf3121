"""Probes against triangle meshes (MESH shapes): depth and normal into a closed mesh against
brute force over every triangle with the sign of the generalised winding number, a probe in a
bowl's hollow (which the bowl's hull would swallow), an open mesh (unsigned, derived by hand),
and the dVRK PSM of AMBF with a probe on one link sensing another's concave mesh."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest
from numba import njit

from conftest import TEST_DIR
from probe_scene import Scene, probe
from ambf_collision.geometry.shapes import ConvexHull, Mesh
from ambf_collision.geometry.transforms import axis_angle_to_matrix, matrix_to_quat
from ambf_collision.geometry.triangles import point_triangle
from ambf_collision.geometry.trimesh import TriangleMesh, winding_numbers
from ambf_collision.probes import ProbeModel, ProbeSpec

sys.path.insert(0, str(TEST_DIR / "geometry"))
from mesh_examples import bowl, torus  # noqa: E402 - test/geometry's closed meshes

PSM = (TEST_DIR / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
       / "blender-psm.yaml")


@njit(cache=True)
def _closest_all(V, F, P, out_d, out_x):
    """Per point of ``P``: the smallest distance to any triangle and its closest point."""
    for i in range(P.shape[0]):
        p = (P[i, 0], P[i, 1], P[i, 2])
        best = math.inf
        for t in range(F.shape[0]):
            a, b, c = F[t, 0], F[t, 1], F[t, 2]
            d2, x, _ = point_triangle(p, (V[a, 0], V[a, 1], V[a, 2]), (V[b, 0], V[b, 1], V[b, 2]),
                                      (V[c, 0], V[c, 1], V[c, 2]))
            if d2 < best:
                best = d2
                out_x[i, 0], out_x[i, 1], out_x[i, 2] = x
        out_d[i] = math.sqrt(best)


def oracle(V, F, P, closed=True):
    """``(d_surf (K,), n_c (K,3))`` of points ``P`` (mesh frame): the distance over all triangles,
    negative where the winding number says inside (closed meshes), and the unit normal out of the
    mesh towards the point (from the closest point, reversed inside)."""
    P = np.ascontiguousarray(P, dtype=float)
    d, x = np.empty(len(P)), np.empty((len(P), 3))
    _closest_all(np.ascontiguousarray(V, float), np.ascontiguousarray(F, np.int64), P, d, x)
    inside = winding_numbers(V, F, P) > 0.5 if closed else np.zeros(len(P), bool)
    n = (P - x) / d[:, None]
    n[inside] *= -1
    return np.where(inside, -d, d), n


def _organ_scene(V, F, R, t, cls=Mesh):
    """A finger (identity pose) and an organ holding the mesh (V, F) as shape ``cls`` at pose
    (R, t) in its body, the body itself at a turned pose too."""
    sc = Scene(["finger", "organ"])
    q = matrix_to_quat(R)
    shape = cls(TriangleMesh.build(V, F), t, q) if cls is Mesh else cls(V, t, q)
    sc.add("organ", shape)
    Rb = axis_angle_to_matrix([0.3, -1.0, 0.2], 0.4)
    sc.pose("organ", R=Rb, t=[0.02, -0.01, 0.03])
    return sc, Rb @ R, Rb @ t + np.array([0.02, -0.01, 0.03])


def _expected(d_surf, n_c, normals, r, reach):
    facing = np.einsum("ij,ij->i", n_c, normals) < 0
    seen = facing & (d_surf - r <= reach)
    touch = seen & (d_surf < r)
    return (np.where(seen, d_surf - r, np.inf), np.where(touch, np.clip(r - d_surf, 0, 2 * r), 0.0),
            np.where(touch[:, None], n_c, 0.0), touch)


@pytest.mark.parametrize("shared_normal", [False, True])
def test_probe_depth_and_normal_in_closed_mesh_match_brute_force(shared_normal):
    """200 probes around and inside an uneven torus (turned and moved in a turned body): the
    gap, depth, contact normal and touch of each equal brute force over all 1,152 triangles with
    the winding number's sign. Each probe faces its closest point (per-probe normals: every
    probe measured), or all share one sensor normal (the broadphase's facing test of uniform
    clusters is on, and a probe sees the mesh only when it faces it)."""
    rng = np.random.default_rng(7)
    V, F = torus(0.1, 0.03, 48, 12, bump=0.2)
    R, t = axis_angle_to_matrix([1.0, 0.5, -0.3], 0.9), np.array([0.01, 0.02, -0.01])
    sc, Rw, tw = _organ_scene(V, F, R, t)
    local = rng.uniform([-0.15, -0.15, -0.05], [0.15, 0.15, 0.05], (200, 3))
    world = local @ Rw.T + tw
    d_surf, n_local = oracle(V, F, local)
    keep = np.abs(d_surf) > 1e-6           # not on the surface, where the normal is a choice
    world, d_surf, n_c = world[keep], d_surf[keep], n_local[keep] @ Rw.T
    assert (d_surf < 0).sum() > 10 and (d_surf > 0).sum() > 10
    normals = np.tile([0.0, 0.0, -1.0], (len(world), 1)) if shared_normal else -n_c
    if shared_normal:   # no probe on the facing rule's edge
        ok = np.abs(n_c @ [0.0, 0.0, -1.0]) > 1e-9
        world, d_surf, n_c, normals = world[ok], d_surf[ok], n_c[ok], normals[ok]
    r, reach = 0.004, 0.05
    specs = [probe(f"p{i}", position=p, normal=n, radius=r, range=reach)
             for i, (p, n) in enumerate(zip(world, normals))]
    res = sc.evaluate(sc.probes(specs, cluster_size=8))
    gap, depth, normal, touch = _expected(d_surf, n_c, normals, r, reach)
    assert touch.sum() > 5 and (depth == 2 * r).sum() > 0     # deep probes: clipped at 2 r
    np.testing.assert_allclose(res.distance, gap, atol=1e-12)
    np.testing.assert_allclose(res.depth, depth, atol=1e-12)
    np.testing.assert_allclose(res.contact_normal, normal, atol=1e-9)
    assert np.array_equal(res.in_contact, touch)
    assert np.array_equal(res.touching_body, np.where(touch, 1, -1))


def test_probe_depth_below_2r_reads_the_mesh_depth():
    """A probe of radius 4 mm centred 1 mm above a vertex of the top ridge of a torus tube (a
    ring of vertices at z = 0.03; the surface falls away from it on every side): d_surf = 1 mm,
    depth 3 mm < 2 r, normal +z, by hand and by the brute force."""
    V, F = torus(0.1, 0.03, 48, 12)
    sc = Scene(["finger", "organ"])
    sc.add("organ", Mesh(TriangleMesh.build(V, F)))
    x = np.array([0.1, 0.0, 0.031])
    d_surf, n_c = oracle(V, F, x[None])
    assert d_surf[0] == pytest.approx(0.001, abs=1e-15)
    np.testing.assert_allclose(n_c[0], [0, 0, 1], atol=1e-12)
    res = sc.evaluate(sc.probes([probe(position=x, normal=(0, 0, -1), radius=0.004, range=0.01)]))
    assert res.depth[0] == pytest.approx(0.003, abs=1e-15)
    assert res.distance[0] == pytest.approx(-0.003, abs=1e-15)
    np.testing.assert_allclose(res.contact_normal[0], [0, 0, 1], atol=1e-12)


def test_probe_in_bowl_hollow_is_free_where_the_hull_swallows_it():
    """A probe hanging in a bowl's hollow (inner radius 0.8 about the rim's centre, the probe
    0.3 below it): the mesh leaves it 0.5 minus its radius (less the facets' sag) from the
    bottom, the brute force's value, while the bowl's hull holds it 0.3 below its top face:
    touching, clipped at 2 r."""
    V, F = bowl(1.0, 0.8)
    r = 0.05
    spec = [probe(position=(0, 0, -0.3), normal=(0, 0, -1), radius=r, range=1.0)]
    sc, _, _ = _organ_scene(V, F, np.eye(3), np.zeros(3))
    sc.pose("organ", R=np.eye(3), t=np.zeros(3))
    res = sc.evaluate(sc.probes(spec))
    d_surf, _ = oracle(V, F, np.array([[0, 0, -0.3]]))
    sag = 0.8 * (1 - math.cos(math.pi / 24))       # a bound of the facets' chord sag
    assert 0.5 - sag <= d_surf[0] <= 0.5
    assert not res.in_contact[0] and res.depth[0] == 0.0
    assert res.distance[0] == pytest.approx(d_surf[0] - r, abs=1e-12)
    hull_sc, _, _ = _organ_scene(V, F, np.eye(3), np.zeros(3), cls=ConvexHull)
    hull_sc.pose("organ", R=np.eye(3), t=np.zeros(3))
    hull = hull_sc.evaluate(hull_sc.probes(spec))
    assert hull.in_contact[0] and hull.depth[0] == pytest.approx(2 * r)


@pytest.mark.parametrize("z, facing_up, gap", [(-0.002, True, 0.002 - 0.004),
                                                (0.003, False, 0.003 - 0.004),
                                                (-0.001, False, None),
                                                (0.01, False, 0.006)])
def test_probe_against_open_mesh_is_unsigned(z, facing_up, gap):
    """An open square (two triangles, z = 0, |x|, |y| <= 0.05) has no inside: a probe at
    height z sees d_surf = |z| with n_c from the square to the probe, from either side (a
    probe below faces it with an upward sensor normal); one turned away sees nothing."""
    V = np.array([[-0.05, -0.05, 0], [0.05, -0.05, 0], [0.05, 0.05, 0], [-0.05, 0.05, 0]], float)
    F = np.array([[0, 1, 2], [0, 2, 3]])
    mesh = TriangleMesh.build(V, F)
    assert not mesh.closed
    sc = Scene(["finger", "sheet"])
    sc.add("sheet", Mesh(mesh))
    normal = (0, 0, 1) if facing_up else (0, 0, -1)
    res = sc.evaluate(sc.probes([probe(position=(0.01, 0.02, z), normal=normal, radius=0.004,
                                       range=0.01)]))
    if gap is None:
        assert res.distance[0] == math.inf and not res.in_contact[0]
        return
    assert res.distance[0] == pytest.approx(gap, abs=1e-12)
    assert res.in_contact[0] == (gap < 0)
    if gap < 0:
        np.testing.assert_allclose(res.contact_normal[0], [0, 0, math.copysign(1, z)], atol=1e-12)
        assert res.depth[0] == pytest.approx(-gap, abs=1e-12)


@pytest.fixture(scope="module")
def psm():
    from ambf_collision.model import Model
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Model.from_files([PSM])


UNSPLIT_SHELLS = ("interpenetrating shells: this file is two closed shells, an 80-triangle pin "
                  "through the link, monitored as one mesh; a point inside the pin whose closest "
                  "face is one of the link's shell running inside the pin gets that face's side "
                  "(outside) where the winding number (1) says inside: geometry/mesh_distance "
                  "decides the sign at the closest feature alone")


def _rules(d, n, normals, r, reach):
    """The probe rules over several shapes: ``d (K, S)``, ``n (K, S, 3)`` -> the expected
    ``(distance, depth, contact normal, touching shape column or -1)`` per probe."""
    facing = np.einsum("ksj,kj->ks", n, normals) < 0
    gap = np.where(facing & (d - r <= reach), d - r, np.inf)
    touch = facing & (d < r)
    deepest = np.where(touch.any(1), np.argmin(np.where(touch, d, np.inf), axis=1), -1)
    depth = np.where(touch, np.clip(r - d, 0, 2 * r), 0.0).max(1)
    normal = np.where((deepest >= 0)[:, None], n[np.arange(len(d)), np.maximum(deepest, 0)], 0.0)
    return gap.min(1), depth, normal, deepest


@pytest.mark.parametrize("link", ["toolgripper2link", "pitchbottomlink", "toolpitchlink"])
def test_psm_probe_on_one_link_senses_another_links_concave_mesh(psm, link):
    """The dVRK PSM of AMBF: its links are concave meshes (kind ``mesh``; a file whose closed
    shells interpenetrate may be split into one solid per shell). Probes on the tool gripper 1
    link, placed 0.5 mm inside and 3 mm outside another link's mesh at 12 triangles, read the
    gap, depth and normal of the brute force over each of that link's solids in its frame (the
    winding number's sign), with the probe rules over the solids. The tool pitch link (a pin
    through the link) is the known failure of one mesh of interpenetrating shells."""
    model = psm
    ks = [k for k, i in enumerate(model.shape_info) if i.body.rsplit("/", 1)[-1] == link]
    assert ks and all(model.shape_info[k].kind == "mesh" for k in ks)
    parts = [model.link_shapes.meshes.meshes[int(model.link_shapes.local.mesh_id[k])] for k in ks]
    assert all(p.closed for p in parts)
    data = model.create_data()
    ev = model.evaluate(data)
    s_R, s_a = ev.world.rot[ks[0]].copy(), ev.world.a[ks[0]].copy()   # the file's frame in world
    for k in ks:
        np.testing.assert_allclose(ev.world.a[k], s_a)      # the solids of one file, one frame
    rng = np.random.default_rng(3)
    V = np.concatenate([p.vertices for p in parts])
    F = np.concatenate([p.faces.astype(np.int64) + sum(len(q.vertices) for q in parts[:j])
                        for j, p in enumerate(parts)])
    tri = rng.choice(len(F), 12, replace=False)
    cen = V[F[tri]].mean(1)
    fn = np.cross(V[F[tri, 1]] - V[F[tri, 0]], V[F[tri, 2]] - V[F[tri, 0]])
    fn /= np.linalg.norm(fn, axis=1)[:, None]
    local = np.concatenate([cen - 0.0005 * fn, cen + 0.003 * fn])    # inside and outside
    per = [oracle(p.vertices, p.faces.astype(np.int64), local) for p in parts]
    d = np.stack([x[0] for x in per], 1)
    n_c = np.stack([x[1] @ s_R.T for x in per], 1)
    primary = np.argmin(d, axis=1)
    sensor = -n_c[np.arange(len(local)), primary]       # facing the closest solid
    world = local @ s_R.T + s_a
    b = model.body_index(next(n for n in model.body_names if n.endswith("toolgripper1link")))
    Rb, tb = ev.body_R[b], ev.body_t[b]
    r = 0.0025
    specs = [ProbeSpec(f"p{i}", model.body_names[b], Rb.T @ (w - tb), Rb.T @ n, r, 100.0,
                       range=0.01, sense_bodies=(link,))
             for i, (w, n) in enumerate(zip(world, sensor))]
    pm = ProbeModel.from_model(specs, model)
    res = pm.evaluate_model(pm.create_data(), ev)
    gap, depth, normal, deepest = _rules(d, n_c, sensor, r, 0.01)
    assert (d.min(1) < 0).sum() >= 6
    try:
        np.testing.assert_allclose(res.distance, gap, atol=1e-12)
        np.testing.assert_allclose(res.depth, depth, atol=1e-12)
        np.testing.assert_allclose(res.contact_normal, normal, atol=1e-9)
        assert np.array_equal(res.touching_shape, np.where(deepest >= 0, np.array(ks)[deepest], -1))
    except AssertionError:
        if link == "toolpitchlink" and len(ks) == 1:
            pytest.xfail(UNSPLIT_SHELLS)
        raise
