"""Vertices and triangles of the mesh files AMBF uses for collision: STL (binary or ASCII) and OBJ.

:func:`read_mesh_vertices` reads the vertex positions only (the collision core builds convex hulls
from the points); :func:`read_mesh` reads the triangles too, ``(V, F)``: ``V`` float64 ``(N, 3)``,
``F`` int64 ``(M, 3)`` rows of vertex indices (STL: three new vertices per facet, welded later
by :mod:`~ambf_collision.geometry.trimesh`; OBJ: polygons fan-triangulated ``(i0, ik, ik+1)``).
Coordinates are returned as written in the file (AMBF's meshes are in metres); no scaling here.
Every coordinate must be finite and at most ``MAX_MESH_COORDINATE`` in magnitude.

- Binary STL: 80-byte header, uint32 triangle count n, n records of 50 bytes (normal, 3 vertices
  as little-endian float32, attribute). A file whose size holds n records is binary even when its
  header starts with ``solid`` (several exporters write that); bytes after the last record are
  ignored.
- ASCII STL: ``solid ... vertex x y z ... endsolid``; every ``vertex`` line is read.
- OBJ: every ``v x y z`` line (a 4th ``w`` or colour values are ignored; ``vn``/``vt`` are not
  vertices); faces ``f i j k ...`` with ``i``, ``i/t``, ``i//n`` or ``i/t/n`` corners, 1-based, or
  negative (relative: ``-1`` is the last vertex read before the face line).

Limits (refused with a :class:`MeshError` naming the file, checked before the arrays are built):
``MAX_MESH_BYTES`` per file, ``MAX_MESH_TRIANGLES`` per file (a binary STL's count is checked
from its header alone), ``MAX_MESH_COORDINATE`` per coordinate.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["MESH_SUFFIXES", "MAX_MESH_BYTES", "MAX_MESH_COORDINATE", "MAX_MESH_TRIANGLES", "MeshError",
           "read_mesh", "read_mesh_vertices", "unique_vertices"]

MESH_SUFFIXES = (".stl", ".obj")
"""File suffixes (lower case) :func:`read_mesh_vertices` reads."""
MAX_MESH_BYTES = 256 * 1024 * 1024
"""Mesh files larger than this (bytes) are refused: no collision mesh of a robot is near it."""
MAX_MESH_TRIANGLES = 5_000_000
"""Triangles per file above which a file is refused, before its arrays are built: a triangle mesh
with its hierarchy takes about 100 bytes per triangle (``geometry/trimesh.py``), and its build
several times that while it runs; 5,000,000 triangles is ~5 times the largest anatomy models in
use (a 1.19M-triangle skull) and a binary STL of that size (250 MB) still fits ``MAX_MESH_BYTES``."""
MAX_MESH_COORDINATE = 1e6
"""Largest accepted coordinate magnitude (file units, m for AMBF's meshes): 1000 km. Beyond it a
coordinate is garbage (1e30 from a broken exporter), and squared distances of such values lose
every digit of a robot-sized distance."""

_STL_RECORD = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
_STL_VERTEX = re.compile(rb"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", re.M | re.I)
_OBJ_VERTEX = re.compile(rb"^[ \t]*v[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)", re.M)
_OBJ_FACE = re.compile(rb"^[ \t]*f[ \t]+([^\r\n]*)", re.M)
_OBJ_VERTEX_LINE = re.compile(rb"^[ \t]*v[ \t]", re.M)


class MeshError(ValueError):
    """A mesh file that cannot be read; the message names the file and the reason."""


def read_mesh_vertices(path) -> np.ndarray:
    """All vertex positions ``(N, 3)`` float64 of an STL or OBJ file (N >= 1, all finite).

    Raises :class:`MeshError` for an unknown suffix, an unreadable, oversized, empty or
    malformed file, or a non-finite coordinate.
    """
    path, data, stl = _read_file(path)
    v = _stl_vertices(data, path) if stl else _obj_vertices(data, path)
    return _checked_vertices(v, path)


def read_mesh(path) -> tuple[np.ndarray, np.ndarray]:
    """The vertices ``V`` (N, 3) float64 and triangles ``F`` (M, 3) int64 (indices into ``V``)
    of an STL or OBJ file (module docstring); M >= 1.

    Raises :class:`MeshError` as :func:`read_mesh_vertices` does, and for a file without
    triangles, over ``MAX_MESH_TRIANGLES`` triangles, or with an OBJ face that is not at least
    three valid vertex indices.
    """
    path, data, stl = _read_file(path)
    if stl:
        v = _stl_vertices(data, path, check_count=True)
        if len(v) % 3:
            raise MeshError(f"{path}: {len(v)} vertex lines, not three per facet")
        f = np.arange(len(v), dtype=np.int64).reshape(-1, 3)
    else:
        v = _obj_vertices(data, path)
        f = _obj_faces(data, path, len(v))
    v = _checked_vertices(v, path)
    if len(f) == 0:
        raise MeshError(f"{path}: no triangles")
    return v, f


def _read_file(path):
    """``(path, bytes, is_stl)`` of a mesh file, with the suffix and size checks."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in MESH_SUFFIXES:
        raise MeshError(f"{path}: mesh format {suffix or '(no suffix)'} not supported "
                        f"(supported: {', '.join(s.upper()[1:] for s in MESH_SUFFIXES)})")
    try:
        size = path.stat().st_size
        if size > MAX_MESH_BYTES:
            raise MeshError(f"{path}: {size} bytes, over the {MAX_MESH_BYTES} byte limit")
        data = path.read_bytes()
    except OSError as e:
        raise MeshError(f"{path}: cannot read: {e.strerror or e}") from None
    return path, data, suffix == ".stl"


def _checked_vertices(v: np.ndarray, path: Path) -> np.ndarray:
    if v.shape[0] == 0:
        raise MeshError(f"{path}: no vertices")
    bad = np.flatnonzero(~np.isfinite(v).all(axis=1))
    if bad.size:
        raise MeshError(f"{path}: vertex {bad[0]} is not finite: {v[bad[0]].tolist()}")
    big = np.flatnonzero((np.abs(v) > MAX_MESH_COORDINATE).any(axis=1))
    if big.size:
        raise MeshError(f"{path}: vertex {big[0]} has a coordinate beyond the limit of "
                        f"{MAX_MESH_COORDINATE:g}: {v[big[0]].tolist()}")
    return v


def _check_triangle_count(n: int, path: Path) -> None:
    if n > MAX_MESH_TRIANGLES:
        raise MeshError(f"{path}: {n} triangles, over the limit of {MAX_MESH_TRIANGLES} triangles")


def unique_vertices(v: np.ndarray) -> np.ndarray:
    """The distinct rows of ``v`` (N, 3), sorted lexicographically by (x, y, z); ``-0.0`` and
    ``0.0`` count as one value."""
    v = np.asarray(v, dtype=np.float64).reshape(-1, 3) + 0.0  # + 0.0 turns -0.0 into 0.0
    if len(v) == 0:
        return v
    s = v[np.lexsort((v[:, 2], v[:, 1], v[:, 0]))]
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.any(s[1:] != s[:-1], axis=1, out=keep[1:])
    return s[keep]


def _stl_vertices(data: bytes, path: Path, check_count: bool = False) -> np.ndarray:
    n = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    fits_binary = n >= 0 and len(data) >= 84 + 50 * n
    if data[:5].lower() == b"solid" and not (fits_binary and len(data) == 84 + 50 * n):
        triples = _STL_VERTEX.findall(data)
        if check_count:
            _check_triangle_count(len(triples) // 3, path)
        v = _parse_triples(triples, path, "vertex")
        if len(v) or not fits_binary:
            return v
    if check_count and n > 0:
        _check_triangle_count(n, path)
    if not fits_binary:
        raise MeshError(f"{path}: neither a binary STL ({len(data)} bytes cannot hold the "
                        f"{max(n, 0)} triangles the header announces) nor an ASCII STL")
    tri = np.frombuffer(data, _STL_RECORD, n, 84)
    return tri["vertices"].reshape(-1, 3).astype(np.float64)


def _obj_vertices(data: bytes, path: Path) -> np.ndarray:
    return _parse_triples(_OBJ_VERTEX.findall(data), path, "v")


def _obj_faces(data: bytes, path: Path, n_vertices: int) -> np.ndarray:
    """Fan-triangulated faces (M, 3) int64, 0-based; relative indices resolved against the
    number of ``v`` lines before each face line."""
    faces = list(_OBJ_FACE.finditer(data))
    if not faces:
        return np.zeros((0, 3), dtype=np.int64)
    starts = [m.start() for m in _OBJ_VERTEX_LINE.finditer(data)]
    before = np.searchsorted(np.array(starts, dtype=np.int64), [m.start() for m in faces])
    corners, sizes = [], []
    for k, m in enumerate(faces):
        try:
            idx = [int(t.split(b"/", 1)[0]) for t in m.group(1).split()]
        except ValueError:
            raise MeshError(f"{path}: face {k} is not vertex indices: "
                            f"{m.group(1).decode('latin-1')!r}") from None
        if len(idx) < 3 or 0 in idx:
            raise MeshError(f"{path}: face {k} is not three or more vertex indices (1-based): "
                            f"{m.group(1).decode('latin-1')!r}")
        corners.extend(i - 1 if i > 0 else before[k] + i for i in idx)
        sizes.append(len(idx))
    sizes = np.array(sizes, dtype=np.int64)
    _check_triangle_count(int((sizes - 2).sum()), path)
    corners = np.array(corners, dtype=np.int64)
    first = np.cumsum(sizes) - sizes
    bad = np.flatnonzero((corners < 0) | (corners >= n_vertices))
    if bad.size:
        k = int(np.searchsorted(first, bad[0], side="right") - 1)
        raise MeshError(f"{path}: face {k} refers to a vertex that does not exist "
                        f"({n_vertices} vertices): {faces[k].group(1).decode('latin-1')!r}")
    # fan: polygon (c0, c1, ..., c_{s-1}) -> (c0, c_j, c_{j+1}) for j = 1 .. s-2
    tri_face = np.repeat(np.arange(len(sizes)), sizes - 2)
    j = np.arange(len(tri_face)) - np.repeat(np.cumsum(sizes - 2) - (sizes - 2), sizes - 2) + 1
    base = first[tri_face]
    return np.stack([corners[base], corners[base + j], corners[base + j + 1]], axis=1)


def _parse_triples(triples: list, path: Path, what: str) -> np.ndarray:
    try:
        return np.array(triples, dtype=np.float64).reshape(-1, 3)
    except ValueError:
        for k, t in enumerate(triples):
            try:
                [float(x) for x in t]
            except ValueError:
                text = b" ".join(t).decode("latin-1")
                raise MeshError(f"{path}: {what} {k} is not three numbers: {text!r}") from None
        raise
