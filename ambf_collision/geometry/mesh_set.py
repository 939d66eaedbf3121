"""Several prepared triangle meshes as one set of flat arrays, for compiled code.

:class:`MeshSet` stacks the arrays of its :class:`~ambf_collision.geometry.trimesh.TriangleMesh`
items (each in its own frame, metres); :class:`Meshes` is the tuple compiled code takes, and
:func:`mesh_arrays` (njit) cuts mesh ``m``'s arrays out of it, in the order the queries of
:mod:`~ambf_collision.geometry.mesh_distance` take them: ``(V, F, NB, VN, boxes, nodes,
closed)``. Faces, neighbours and nodes keep their indices local to their mesh (vertex rows,
face rows, node rows of that mesh), so the cut arrays are the mesh's own, unchanged.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = ["Meshes", "MeshSet", "mesh_arrays", "no_meshes"]


class Meshes(NamedTuple):
    """The stacked arrays: ``vertices`` (NV, 3) float64, ``faces`` (NF, 3) int32, ``neighbours``
    (NF, 3) int32, ``vertex_normals`` (NV, 3) float64, ``boxes`` (NN, 6) float64, ``nodes``
    (NN, 2) int32 (:class:`~ambf_collision.geometry.trimesh.TriangleMesh`); mesh ``m`` owns rows
    ``vertex_start[m]:vertex_start[m + 1]`` (likewise ``face_start``, ``node_start``, each
    (count + 1,) int64); ``closed`` (count,) int64, 1 when the mesh has an inside."""

    vertices: np.ndarray
    faces: np.ndarray
    neighbours: np.ndarray
    vertex_normals: np.ndarray
    boxes: np.ndarray
    nodes: np.ndarray
    vertex_start: np.ndarray
    face_start: np.ndarray
    node_start: np.ndarray
    closed: np.ndarray


def _starts(counts) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts, dtype=np.int64)]).astype(np.int64)


def _stacked(parts, shape, dtype) -> np.ndarray:
    return np.ascontiguousarray(np.concatenate(parts) if parts else np.zeros(shape), dtype=dtype)


class MeshSet:
    """The meshes ``meshes`` (list of TriangleMesh) as one :class:`Meshes` (read-only arrays)."""

    def __init__(self, meshes):
        self.meshes = list(meshes)
        ms = self.meshes
        self._arrays = Meshes(
            _stacked([m.vertices for m in ms], (0, 3), np.float64),
            _stacked([m.faces for m in ms], (0, 3), np.int32),
            _stacked([m.neighbours for m in ms], (0, 3), np.int32),
            _stacked([m.vertex_normals for m in ms], (0, 3), np.float64),
            _stacked([m.bvh.boxes for m in ms], (0, 6), np.float64),
            _stacked([m.bvh.nodes for m in ms], (0, 2), np.int32),
            _starts([len(m.vertices) for m in ms]), _starts([len(m.faces) for m in ms]),
            _starts([len(m.bvh.nodes) for m in ms]),
            np.array([int(m.closed) for m in ms], dtype=np.int64))
        for a in self._arrays:
            a.flags.writeable = False

    def __len__(self) -> int:
        return len(self.meshes)

    def arrays(self) -> Meshes:
        """The :class:`Meshes` tuple (views, no copies)."""
        return self._arrays


def no_meshes() -> Meshes:
    """The arrays of an empty set: kernels see the same types with and without meshes."""
    return MeshSet([]).arrays()


@njit(cache=True, error_model="numpy", inline="always")
def mesh_arrays(M, m):
    """Mesh ``m`` of the :class:`Meshes` ``M``: ``(V, F, NB, VN, boxes, nodes, closed)``."""
    v0, v1 = M.vertex_start[m], M.vertex_start[m + 1]
    f0, f1 = M.face_start[m], M.face_start[m + 1]
    n0, n1 = M.node_start[m], M.node_start[m + 1]
    return (M.vertices[v0:v1], M.faces[f0:f1], M.neighbours[f0:f1], M.vertex_normals[v0:v1],
            M.boxes[n0:n1], M.nodes[n0:n1], M.closed[m])
