"""Vertex positions of the mesh files AMBF uses for collision: STL (binary or ASCII) and OBJ.

Only vertex positions are read; faces, normals and materials are not needed (the collision core
builds convex hulls from the points). Coordinates are returned as written in the file (AMBF's
meshes are in metres), float64, shape ``(N, 3)``; no scaling here.

- Binary STL: 80-byte header, uint32 triangle count n, n records of 50 bytes (normal, 3 vertices
  as little-endian float32, attribute). A file whose size holds n records is binary even when its
  header starts with ``solid`` (several exporters write that); bytes after the last record are
  ignored.
- ASCII STL: ``solid ... vertex x y z ... endsolid``; every ``vertex`` line is read.
- OBJ: every ``v x y z`` line (a 4th ``w`` or colour values are ignored; ``vn``/``vt`` are not
  vertices).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

__all__ = ["MESH_SUFFIXES", "MAX_MESH_BYTES", "MeshError", "read_mesh_vertices", "unique_vertices"]

MESH_SUFFIXES = (".stl", ".obj")
"""File suffixes (lower case) :func:`read_mesh_vertices` reads."""
MAX_MESH_BYTES = 256 * 1024 * 1024
"""Mesh files larger than this (bytes) are refused: no collision mesh of a robot is near it."""

_STL_RECORD = np.dtype([("normal", "<f4", 3), ("vertices", "<f4", (3, 3)), ("attribute", "<u2")])
_STL_VERTEX = re.compile(rb"^\s*vertex\s+(\S+)\s+(\S+)\s+(\S+)", re.M | re.I)
_OBJ_VERTEX = re.compile(rb"^[ \t]*v[ \t]+(\S+)[ \t]+(\S+)[ \t]+(\S+)", re.M)


class MeshError(ValueError):
    """A mesh file that cannot be read; the message names the file and the reason."""


def read_mesh_vertices(path) -> np.ndarray:
    """All vertex positions ``(N, 3)`` float64 of an STL or OBJ file (N >= 1, all finite).

    Raises :class:`MeshError` for an unknown suffix, an unreadable, oversized, empty or
    malformed file, or a non-finite coordinate.
    """
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
    v = _stl_vertices(data, path) if suffix == ".stl" else _obj_vertices(data, path)
    if v.shape[0] == 0:
        raise MeshError(f"{path}: no vertices")
    bad = np.flatnonzero(~np.isfinite(v).all(axis=1))
    if bad.size:
        raise MeshError(f"{path}: vertex {bad[0]} is not finite: {v[bad[0]].tolist()}")
    return v


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


def _stl_vertices(data: bytes, path: Path) -> np.ndarray:
    n = int.from_bytes(data[80:84], "little") if len(data) >= 84 else -1
    fits_binary = n >= 0 and len(data) >= 84 + 50 * n
    if data[:5].lower() == b"solid" and not (fits_binary and len(data) == 84 + 50 * n):
        v = _parse_triples(_STL_VERTEX.findall(data), path, "vertex")
        if len(v) or not fits_binary:
            return v
    if not fits_binary:
        raise MeshError(f"{path}: neither a binary STL ({len(data)} bytes cannot hold the "
                        f"{max(n, 0)} triangles the header announces) nor an ASCII STL")
    tri = np.frombuffer(data, _STL_RECORD, n, 84)
    return tri["vertices"].reshape(-1, 3).astype(np.float64)


def _obj_vertices(data: bytes, path: Path) -> np.ndarray:
    return _parse_triples(_OBJ_VERTEX.findall(data), path, "v")


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
