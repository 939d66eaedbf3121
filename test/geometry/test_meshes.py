"""Mesh reading (geometry/meshes.py): vertices and triangles of binary and ASCII STL and OBJ,
broken and oversized files, and the distinct-vertex reduction. Oracles: files written here with
``struct`` and by hand, Python's ``set`` of tuples for the distinct vertices."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ambf_collision.geometry import meshes as meshes_module
from ambf_collision.geometry.meshes import (
    MAX_MESH_TRIANGLES,
    MeshError,
    read_mesh,
    read_mesh_vertices,
    unique_vertices,
)

TRIS = [((0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0)),
        ((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, -2.5))]


def binary_stl(tris, header=b"binary", extra=b""):
    out = header.ljust(80, b" ") + struct.pack("<I", len(tris))
    for tri in tris:
        out += struct.pack("<3f", 0, 0, 1) + b"".join(struct.pack("<3f", *v) for v in tri) + b"\0\0"
    return out + extra


@pytest.mark.parametrize("header, extra", [(b"binary", b""), (b"solid but binary", b""),
                                           (b"binary", b"\0" * 7)])
def test_binary_stl(tmp_path, header, extra):
    p = tmp_path / "m.STL"
    p.write_bytes(binary_stl(TRIS, header, extra))
    v = read_mesh_vertices(p)
    assert v.dtype == np.float64 and v.shape == (6, 3)
    np.testing.assert_array_equal(v, np.array(TRIS).reshape(-1, 3))


def test_ascii_stl_any_case_and_spacing(tmp_path):
    p = tmp_path / "m.stl"
    p.write_text("solid m\n facet normal 0 0 1\n  outer loop\n   VERTEX 0 0 0\n\tvertex  1e-3 2 3\n"
                 "   vertex -1.5 0 0\n  endloop\n endfacet\nendsolid m\n")
    np.testing.assert_array_equal(read_mesh_vertices(p), [[0, 0, 0], [1e-3, 2, 3], [-1.5, 0, 0]])


def test_obj_vertices_only(tmp_path):
    p = tmp_path / "m.OBJ"
    p.write_text("# comment\no thing\nv 0 0 0\nv 1 2 3 1.0\nv 4 5 6 0.1 0.2 0.3\nvn 0 0 1\n"
                 "vt 0.5 0.5\n  v -1 -2 -3\nf 1 2 3\n")
    np.testing.assert_array_equal(read_mesh_vertices(p), [[0, 0, 0], [1, 2, 3], [4, 5, 6], [-1, -2, -3]])


@pytest.mark.parametrize("name, data, reason", [
    ("m.ply", b"ply\n", "format .ply not supported"),
    ("m", b"", "format (no suffix) not supported"),
    ("m.stl", b"", "neither a binary STL"),
    ("m.stl", binary_stl(TRIS)[:-10], "neither a binary STL"),
    ("m.stl", binary_stl([]), "no vertices"),
    ("m.obj", b"# nothing\nf 1 2 3\n", "no vertices"),
    ("m.stl", b"solid x\nvertex 0 0 zero\nendsolid\n", "vertex 0 is not three numbers"),
    ("m.obj", b"v 0 0 0\nv nan 0 0\n", "vertex 1 is not finite"),
    ("m.stl", binary_stl([((0, 0, 0), (float("inf"), 0, 0), (0, 1, 0))]), "vertex 1 is not finite"),
])
def test_broken_files_name_the_file_and_reason(tmp_path, name, data, reason):
    assert_refused(tmp_path / name, data, read_mesh_vertices, reason)


def assert_refused(path, data, reader, reason):
    """``reader`` refuses the file ``data`` written at ``path`` with a message that starts
    with the path and gives ``reason``."""
    path.write_bytes(data)
    with pytest.raises(MeshError) as ei:
        reader(path)
    assert str(ei.value).startswith(str(path)) and reason in str(ei.value)


def test_missing_file(tmp_path):
    with pytest.raises(MeshError, match="cannot read"):
        read_mesh_vertices(tmp_path / "none.stl")


def test_unique_vertices_degenerate_inputs():
    np.testing.assert_array_equal(unique_vertices(np.zeros((0, 3))), np.zeros((0, 3)))
    np.testing.assert_array_equal(unique_vertices([[1, 2, 3]] * 5), [[1, 2, 3]])  # a single point
    zeros = unique_vertices([[0.0, -0.0, 0.0], [-0.0, 0.0, -0.0]])  # the two zeros are one value
    assert zeros.shape == (1, 3) and not np.signbit(zeros).any()
    flat = unique_vertices([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0], [0, 0, 0]])  # coplanar
    np.testing.assert_array_equal(flat, [[0, 0, 0], [0, 1, 0], [1, 0, 0]])


@given(st.lists(st.tuples(*[st.sampled_from([-1.5, -0.0, 0.0, 0.25, 2.0])] * 3), min_size=1, max_size=40))
def test_unique_vertices_is_the_sorted_set(points):
    expect = sorted({tuple(float(c) + 0.0 for c in p) for p in points})
    np.testing.assert_array_equal(unique_vertices(np.array(points)), np.array(expect).reshape(-1, 3))


# --------------------------------------------------------------------------- triangles (read_mesh)

def test_read_mesh_binary_and_ascii_stl_give_the_same_triangles(tmp_path):
    (tmp_path / "b.stl").write_bytes(binary_stl(TRIS))
    lines = ["solid x"] + ["facet normal 0 0 1\nouter loop\n" + "".join(f"vertex {a} {b} {c}\n" for a, b, c in t)
                           + "endloop\nendfacet" for t in TRIS] + ["endsolid x"]
    (tmp_path / "a.stl").write_text("\n".join(lines))
    for name in ("a.stl", "b.stl"):
        v, f = read_mesh(tmp_path / name)
        assert f.dtype == np.int64 and f.shape == (2, 3)
        np.testing.assert_array_equal(v[f], np.array(TRIS))


def test_read_mesh_obj_polygons_relative_indices_and_slashes(tmp_path):
    p = tmp_path / "m.obj"
    # a quad (fan: 2 triangles), a pentagon with v/vt/vn corners, a triangle with negative indices
    p.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\nvt 0 0\nvn 0 0 1\n"
                 "v 2 0 0\nf 1/1/1 2/1/1 5//1 3/1 4\nv 3 3 3\nf -1 -2 -3\n")
    v, f = read_mesh(p)
    assert len(v) == 6
    np.testing.assert_array_equal(f, [[0, 1, 2], [0, 2, 3],                     # quad fan
                                      [0, 1, 4], [0, 4, 2], [0, 2, 3],           # pentagon fan
                                      [5, 4, 3]])                                # -1 = v 6, -2 = v 5


@pytest.mark.parametrize("name, data, reason", [
    ("m.stl", b"", "neither a binary STL"),
    ("m.stl", binary_stl(TRIS)[:-10], "neither a binary STL"),                      # truncated
    ("m.stl", binary_stl([]), "no vertices"),
    ("m.stl", b"solid x\nvertex 0 0 0\nvertex 1 0 0\nendsolid\n", "2 vertex lines, not three"),
    ("m.stl", binary_stl([((0, 0, 0), (1e30, 0, 0), (0, 1, 0))]), "vertex 1 has a coordinate beyond"),
    ("m.stl", binary_stl([((0, 0, 0), (float("nan"), 0, 0), (0, 1, 0))]), "vertex 1 is not finite"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\n", "no triangles"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2\n", "face 0 is not three or more"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 0\n", "face 0 is not three or more"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2 4\n", "face 1 refers to a vertex that does not exist"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -1 -2 -4\n", "face 0 refers to a vertex that does not exist"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 x\n", "face 0 is not vertex indices"),
    ("m.obj", b"v 0 0 0\nv 1 0 0\nv 0 1 -2e6\nf 1 2 3\n", "vertex 2 has a coordinate beyond the limit of 1e+06"),
])
def test_read_mesh_bad_files(tmp_path, name, data, reason):
    assert_refused(tmp_path / name, data, read_mesh, reason)


def test_triangle_limit_is_checked_from_the_header_before_reading(tmp_path, monkeypatch):
    # a binary STL header announcing 10,000,000 triangles (the file itself is short): refused with
    # its count and the limit, not as a truncated file and without building arrays
    p = tmp_path / "huge.stl"
    p.write_bytes(b"binary".ljust(80, b" ") + struct.pack("<I", 10_000_000) + b"\0" * 50)
    with pytest.raises(MeshError, match=f"10000000 triangles, over the limit of {MAX_MESH_TRIANGLES}"):
        read_mesh(p)
    # OBJ: the fan triangles are counted; a lowered limit shows the check runs on them
    monkeypatch.setattr(meshes_module, "MAX_MESH_TRIANGLES", 1)
    q = tmp_path / "quad.obj"
    q.write_text("v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n")
    with pytest.raises(MeshError, match="2 triangles, over the limit of 1 triangles"):
        read_mesh(q)
