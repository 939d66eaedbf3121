"""Scene picture: the surfaces drawn lie on the shapes (checked point by point), per-shape
colours follow the pair distances, and a real PNG of plausible size is written."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from conftest import DEMO_DIR
from ambf_collision.demo.scene_render import render_scene_png, shape_distances, shape_surfaces
from ambf_collision.geometry.shapes import Box, Capsule, Cone, ConvexHull, Cylinder, Plane, Sphere

DEMO = DEMO_DIR


def _png_size(path):
    data = Path(path).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    w, h = struct.unpack(">II", data[16:24])
    return w, h, len(data)


def _points(pieces):
    out = []
    for p in pieces:
        if p[0] == "surface":
            out.append(np.stack([p[1].ravel(), p[2].ravel(), p[3].ravel()], 1))
        elif p[0] in ("polys", "plane", "triangles"):
            out.append(np.concatenate(p[1]))
        else:
            out.append(p[1])
    return np.concatenate(out)


def _seg_dist(p, a, b):
    ab = b - a
    s = np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0)
    return np.linalg.norm(p - (a + s[:, None] * ab), axis=1)


def test_surfaces_lie_on_the_shapes():
    sph = Sphere([0.1, -0.2, 0.3], 0.05)
    p = _points(shape_surfaces(sph))
    np.testing.assert_allclose(np.linalg.norm(p - sph.center, axis=1), 0.05, atol=1e-12)

    cap = Capsule([0.0, 0.0, 0.0], [0.3, 0.1, -0.2], 0.04)
    p = _points(shape_surfaces(cap))
    np.testing.assert_allclose(_seg_dist(p, np.asarray(cap.a), np.asarray(cap.b)), 0.04, atol=1e-12)

    # a rotated box: every corner drawn is a corner of the box (local coordinates +-size/2)
    box = Box([0.2, 0.4, 0.1], [0.5, 0.0, 0.1], [0.0, 0.0, np.sin(0.2), np.cos(0.2)])
    p = _points(shape_surfaces(box))
    local = (p - box.position) @ box.rotation
    np.testing.assert_allclose(np.abs(local), np.tile([0.1, 0.2, 0.05], (len(p), 1)), atol=1e-12)

    cyl = Cylinder(0.03, 0.2, [0.0, 0.1, 0.0], [np.sin(0.4), 0.0, 0.0, np.cos(0.4)])
    local = (_points(shape_surfaces(cyl)) - cyl.position) @ cyl.rotation
    rho = np.hypot(local[:, 0], local[:, 1])
    on_side = np.isclose(rho, 0.03) & (np.abs(local[:, 2]) <= 0.1 + 1e-12)
    on_cap = np.isclose(np.abs(local[:, 2]), 0.1) & (rho <= 0.03 + 1e-12)
    assert np.all(on_side | on_cap)

    cone = Cone(0.05, 0.1, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0])
    local = _points(shape_surfaces(cone))
    rho = np.hypot(local[:, 0], local[:, 1])
    on_side = np.isclose(rho, 0.05 * (0.05 - local[:, 2]) / 0.1, atol=1e-12)
    on_base = np.isclose(local[:, 2], -0.05)
    assert np.all(on_side | on_base)

    plane = Plane([0.0, 0.0, 2.0], 0.25)
    quad = _points(shape_surfaces(plane, plane_center=[1.0, 2.0, 3.0], plane_size=0.5))
    np.testing.assert_allclose(quad[:, 2], 0.25, atol=1e-12)
    np.testing.assert_allclose(quad.mean(0), [1.0, 2.0, 0.25], atol=1e-12)


def test_hull_faces_and_mesh_triangles_are_the_shapes_own():
    """A hull is drawn by its faces: every corner is one of its vertices, every vertex of the
    cube (none inside) is a corner, and each face's plane has all vertices on one side. A mesh
    is drawn by its own triangles, moved to world."""
    from ambf_collision.geometry.shapes import Mesh
    from ambf_collision.geometry.trimesh import TriangleMesh

    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float) * 0.1
    hull = ConvexHull(np.vstack([cube, [[0.05, 0.05, 0.05]]]), [0.3, 0.0, 0.0])
    (kind, tris), = shape_surfaces(hull)
    assert kind == "triangles" and len(tris) == 12  # 6 faces, 2 triangles each
    corners = {tuple(np.round(c - hull.position, 12)) for t in tris for c in t}
    assert corners == {tuple(c) for c in cube}
    world = cube + hull.position
    for t in tris:
        n = np.cross(t[1] - t[0], t[2] - t[0])
        side = (world - t[0]) @ n
        assert np.all(side <= 1e-15) or np.all(side >= -1e-15)
    flat = ConvexHull([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]])
    assert shape_surfaces(flat)[0][0] == "points"  # no solid: its vertices

    faces = np.array([[0, 1, 2], [0, 3, 1], [1, 3, 2], [2, 3, 0]])
    verts = np.array([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], float)
    mesh = Mesh(TriangleMesh.build(verts, faces), [0.0, 0.0, 1.0], [0.0, 0.0, 1.0, 0.0])  # 180 deg about z
    (kind, tris), = shape_surfaces(mesh)
    assert kind == "triangles" and len(tris) == 4
    np.testing.assert_array_equal(np.round(np.concatenate(tris), 12), np.round(
        mesh.mesh.vertices[mesh.mesh.faces].reshape(-1, 3) @ np.diag([-1.0, -1.0, 1.0]) + [0, 0, 1.0], 12))
    R = np.diag([-1.0, -1.0, 1.0])
    expected = {tuple(np.round(v @ R.T + [0, 0, 1.0], 12)) for v in verts}
    assert {tuple(np.round(c, 12)) for t in tris for c in t} == expected


def test_shape_distances_take_the_smallest_pair():
    model = SimpleNamespace(shapes=[None] * 4, pairs=np.array([[0, 1], [0, 2], [1, 2]]))
    result = SimpleNamespace(distances=np.array([0.03, -0.002, 0.2]))
    np.testing.assert_array_equal(shape_distances(model, result), [-0.002, 0.03, -0.002, np.inf])


def test_every_shape_kind_renders(tmp_path):
    """A scene with all seven shape kinds, one contact and probes, without the ADF model."""
    shapes = [Sphere([0, 0, 0.1], 0.05), Capsule([0.2, 0, 0.05], [0.2, 0, 0.3], 0.04),
              Box([0.1, 0.1, 0.1], [-0.2, 0, 0.05]), Cylinder(0.05, 0.1, [0, 0.25, 0.05]),
              Cone(0.05, 0.12, [0, -0.25, 0.06]), Plane([0, 0, 1], 0.0),
              ConvexHull([[0, 0, 0], [0.1, 0, 0], [0, 0.1, 0], [0, 0, 0.1]], [0.3, 0.3, 0.0])]
    n = len(shapes)
    model = SimpleNamespace(shapes=shapes, shape_body=np.arange(n),
                            pairs=np.array([[0, 5], [1, 2], [3, 4]]))
    contact = SimpleNamespace(body_1="a", body_2="floor", distance=-0.01,
                              point_1=np.array([0, 0, 0.05]), point_2=np.array([0, 0, -0.0]),
                              position=np.array([0, 0, 0.025]), normal=np.array([0, 0, -1.0]))
    result = SimpleNamespace(body_R=np.tile(np.eye(3), (n, 1, 1)), body_t=np.zeros((n, 3)),
                             distances=np.array([-0.01, 0.3, 0.02]), contacts=[contact],
                             min_distance=-0.01)
    probes = SimpleNamespace(position=np.array([[0, 0, 0.05], [0.01, 0, 0.05]]),
                             force=np.array([[0, 0, 3.0], [0, 0, 0]]), in_contact=np.array([True, False]))
    out = tmp_path / "kinds.png"
    render_scene_png(out, model, result, probes, time=1.5, dpi=60, size=(8, 4))
    w, h, nbytes = _png_size(out)
    assert (w, h) == (480, 240) and nbytes > 10_000


def test_demo_scene_png(tmp_path):
    from ambf_collision.demo.trajectory import demo_joint_positions
    from ambf_collision.model import Model
    from ambf_collision.monitor.scene import probe_evaluator
    from ambf_collision.probes import load_probe_file

    model = Model.from_files([str(DEMO / "demo_arm.yaml")])
    run, _ = probe_evaluator(model, load_probe_file(DEMO / "demo_probes.yaml", model.body_names))
    data = model.create_data()
    q = demo_joint_positions(12.0)
    model.set_joint_positions(data, list(q), list(q.values()))
    result = model.evaluate(data)
    out = tmp_path / "demo.png"
    assert render_scene_png(out, model, result, run(model, data, result), time=12.0, dpi=80) == out
    w, h, nbytes = _png_size(out)
    assert (w, h) == (1040, 512) and 50_000 < nbytes < 3_000_000


def test_no_contacts_no_probes_and_nothing_checked(tmp_path):
    model = SimpleNamespace(shapes=[Sphere([0, 0, 0], 0.1)], shape_body=np.array([0]),
                            pairs=np.zeros((0, 2), int))
    result = SimpleNamespace(body_R=np.eye(3)[None], body_t=np.zeros((1, 3)), distances=np.zeros(0),
                             contacts=[], min_distance=float("inf"))
    out = tmp_path / "empty.png"
    render_scene_png(out, model, result, dpi=40, size=(6, 3))
    assert _png_size(out)[:2] == (240, 120)
