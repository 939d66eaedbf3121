"""Mesh vertex reading (geometry/meshes.py): binary and ASCII STL, OBJ, broken files, and the
distinct-vertex reduction. Oracles: files written here with ``struct`` and by hand, Python's
``set`` of tuples for the distinct vertices."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from ambf_collision.geometry.meshes import (
    MeshError,
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
    p = tmp_path / name
    p.write_bytes(data)
    with pytest.raises(MeshError) as ei:
        read_mesh_vertices(p)
    assert str(ei.value).startswith(str(p)) and reason in str(ei.value)


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
