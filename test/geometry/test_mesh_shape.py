"""The MESH shape (geometry/shapes.py): its JSON form, its validation and its errors, which name
the field and never leave a traceback to the user."""

from __future__ import annotations

import numpy as np
import pytest

import mesh_examples as mx
from ambf_collision.geometry.distance import distance
from ambf_collision.geometry.shapes import MESH, Mesh, ShapeError, Sphere, shape_from_json, shape_to_json
from ambf_collision.geometry.trimesh import TriangleMesh

TETRA = {"vertices": [[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]],
         "triangles": [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]}


def test_a_mesh_from_arrays_and_back():
    s = shape_from_json({"mesh": dict(TETRA, position=[1, 2, 3])}, 0)
    assert s.kind == MESH and s.mesh.closed and s.path == ""
    again = shape_from_json(shape_to_json(s))
    np.testing.assert_array_equal(again.mesh.vertices, s.mesh.vertices)
    np.testing.assert_array_equal(again.position, [1, 2, 3])


def test_a_mesh_from_a_file_with_its_scale(tmp_path):
    V, F = mx.torus(1.0, 0.3, 12, 6)
    path = tmp_path / "t.obj"
    path.write_text("".join(f"v {x} {y} {z}\n" for x, y, z in V) + "".join(f"f {a + 1} {b + 1} {c + 1}\n" for a, b, c in F))
    s = shape_from_json({"mesh": {"file": str(path), "scale": 0.01}})
    assert s.path == str(path) and s.scale == 0.01
    np.testing.assert_allclose(np.abs(s.mesh.vertices).max(axis=0), 0.01 * np.abs(V).max(axis=0), rtol=1e-12)
    assert shape_to_json(s)["mesh"]["file"] == str(path)


@pytest.mark.parametrize("body, message", [
    ({}, "give either 'file' or 'vertices' and 'triangles'"),
    ({"file": "x.stl", "vertices": [[0, 0, 0]]}, "give either"),
    ({"vertices": TETRA["vertices"]}, "shapes[3].mesh.triangles: missing"),
    ({"vertices": [[0, 0, float("nan")]] * 3, "triangles": [[0, 1, 2]]}, "mesh.vertices: must be a non-empty"),
    ({"vertices": TETRA["vertices"], "triangles": [[0, 1, 7]]}, "vertex index out of range 0..3"),
    ({"vertices": TETRA["vertices"], "triangles": [[0, 1, 1.5]]}, "must hold integer vertex indices"),
    ({"vertices": [[0, 0, 0], [1, 0, 0], [2, 0, 0]], "triangles": [[0, 1, 2]]}, "no triangle of non-zero area"),
    ({"file": "/nonexistent/mesh.stl"}, "shapes[3].mesh: "),
    ({"vertices": TETRA["vertices"], "triangles": TETRA["triangles"], "colour": 1}, "shapes[3].mesh.colour: unknown field"),
])
def test_bad_meshes_are_one_clear_error(body, message):
    with pytest.raises(ShapeError, match=None) as err:
        shape_from_json({"mesh": body}, 3)
    assert message in str(err.value)


def test_a_mesh_needs_a_prepared_triangle_mesh():
    with pytest.raises(ShapeError, match="mesh.mesh: must be a TriangleMesh"):
        Mesh(np.zeros((3, 3)))


def test_distance_of_a_sphere_to_a_mesh_is_its_gap():
    m = Mesh(TriangleMesh.build(np.array(TETRA["vertices"], float), np.array(TETRA["triangles"])))
    c = distance(Sphere([0.0, 0.0, -0.5], 0.1), m)
    assert c.distance == pytest.approx(0.4, abs=1e-15)
    np.testing.assert_allclose(c.normal, [0, 0, 1], atol=1e-15)
