"""The arrays the probe kernels read and write, as named views of a few flat buffers.

The compiled probe model keeps its constants in two buffers (``floats``, ``ints``) and the
probe data its per-cycle values in five (``floats``, ``distance``, ``ints``, ``in_contact``,
``scratch``), so that the one kernel call per evaluation takes 7 arrays instead of about 40
(numba's dispatcher costs about 75 ns per array argument, measured here). The functions below
are the one definition of where each named array lives in its buffer: the kernel calls them
(inside njit, where building the NamedTuple is free) and so does Python, once, to fill the
buffers and to hand out the result fields. Python calls their Python form (numba's ``py_func``):
the same slices, and no second compiled variant for the set-up's writable model buffers (~1.5 s
of a cold start, ``bench/bench_start.py``).

Sizes: N probes, C clusters of probes, S shapes, Q patches; the model's ``ints`` start with
the header ``[N, C, S, Q, first mesh table]``. Frames: ``local_*`` and ``patch_origin`` in the probe's or patch's
body frame; ``shape_centre``/``cluster_centre`` in the shape's or cluster's body frame; every
output in world unless named ``*_body``. Units: m, N, N/m, m^2, N m.

The triangle meshes of the sensed MESH shapes travel as one more byte buffer, in the layout of
``model/table_buffer.py``: the ten :class:`~ambf_collision.geometry.mesh_set.Meshes` tables
from table ``first mesh table`` on (:func:`mesh_buffer`, :func:`mesh_tables`). That is a Model's
own buffer when the probes are compiled against a Model (no copy of its meshes), else a buffer
of their own. One buffer is one argument: the ten arrays as a NamedTuple cost 2.3 us per call
from Python, the buffer 0.4 us (measured here, 2026-12-07).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from ambf_collision.geometry.mesh_set import Meshes, no_meshes
from ambf_collision.model.table_buffer import (float_matrix, int32_matrix, int_vector, pack,
                                                words_of)

__all__ = ["ProbeArrays", "ProbeOutputs", "HEADER", "MESH_TABLE", "model_sizes", "model_views",
           "data_sizes", "data_views", "mesh_buffer", "mesh_tables"]

HEADER = 5
"""Leading entries of the model's ``ints``: N, C, S, Q and the mesh buffer's first table."""
MESH_TABLE = 4
"""Index in the model's ``ints`` of the mesh buffer's first Meshes table."""


class ProbeArrays(NamedTuple):
    """The compiled probe model (constant)."""

    local_position: np.ndarray  # (N,3) m, probe centre, body frame
    local_normal: np.ndarray  # (N,3) unit sensor normal, body frame
    radius: np.ndarray  # (N,) m
    stiffness: np.ndarray  # (N,) N/m
    range: np.ndarray  # (N,) m
    contact_threshold: np.ndarray  # (N,) m of depth to enter contact
    release_threshold: np.ndarray  # (N,) m of depth at or below which contact is left
    cluster_centre: np.ndarray  # (C,3) m, cluster body frame
    cluster_reach: np.ndarray  # (C,) m: max over members of |p - centre| + radius + range
    shape_centre: np.ndarray  # (S,3) m, bounding-sphere centre, shape body frame
    shape_bound: np.ndarray  # (S,) m, bounding-sphere radius (inf: unbounded, planes)
    patch_origin: np.ndarray  # (Q,3) m, patch centre, patch body frame
    probe_body: np.ndarray  # (N,) body index of each probe
    cluster_start: np.ndarray  # (C+1,) members of cluster c: cluster_member[start[c]:start[c+1]]
    cluster_member: np.ndarray  # (N,) probe indices, cluster by cluster
    cluster_body: np.ndarray  # (C,) body index of each cluster (all members on it)
    cluster_uniform: np.ndarray  # (C,) 1 when all members share one local sensor normal
    sensed: np.ndarray  # (C,S) 1 when the cluster's members sense shape s
    shape_body: np.ndarray  # (S,) body index of each shape
    patch_body: np.ndarray  # (Q,) body index of each patch
    patch_first: np.ndarray  # (Q,) the patch's probes are patch_first[q]:patch_end[q]
    patch_end: np.ndarray  # (Q,)


class ProbeOutputs(NamedTuple):
    """The per-cycle probe data (a ``ProbeData``'s buffers)."""

    position: np.ndarray  # (N,3) m, probe centre, world
    normal: np.ndarray  # (N,3) unit sensor normal, world
    depth: np.ndarray  # (N,) m, largest d_pen, 0 when nothing touches
    area: np.ndarray  # (N,) m^2
    force: np.ndarray  # (N,3) N, world
    force_body: np.ndarray  # (N,3) N, the probe's body frame
    contact_normal: np.ndarray  # (N,3) unit n_c of the deepest contact, 0 when none
    patch_force: np.ndarray  # (Q,3) N, world
    patch_area: np.ndarray  # (Q,) m^2
    patch_force_body: np.ndarray  # (Q,3) N, the patch body's frame
    patch_torque_body: np.ndarray  # (Q,3) N m about the patch origin, the patch body's frame
    distance: np.ndarray  # (N,) m, smallest seen gap d_surf - r, +inf when none in range
    touching_shape: np.ndarray  # (N,) shape index of the deepest contact, -1 none
    touching_body: np.ndarray  # (N,) body index of the deepest contact, -1 none
    patch_in_contact: np.ndarray  # (Q,) number of the patch's probes in contact
    in_contact: np.ndarray  # (N,) bool, the thresholded contact state (kept between cycles)
    cluster_centre: np.ndarray  # (C,3) scratch: cluster centres, world
    cluster_front: np.ndarray  # (C,) scratch: min over members of p . n (uniform clusters)
    shape_centre: np.ndarray  # (S,3) scratch: bounding-sphere centres, world
    nearest: np.ndarray  # (3,) scratch: nearest surface point of the last query
    surface_normal: np.ndarray  # (3,) scratch: n_c of the last query
    candidates: np.ndarray  # (C*S,) scratch: broadphase output, c * S + s per (cluster, shape)
    candidate_hint: np.ndarray  # (C*S,) scratch: per candidate, the mesh triangle closest to the
    # cluster centre (the first bound of its members' queries), -1 for other shapes


@njit(cache=True)
def model_sizes(n, c, s, q):
    """``(floats, ints)`` lengths of the model buffers for the given sizes."""
    return 11 * n + 4 * c + 4 * s + 3 * q, HEADER + 2 * n + 3 * c + 1 + c * s + s + 3 * q


@njit(cache=True)
def model_views(floats, ints):
    """The :class:`ProbeArrays` views of the model buffers (sizes from the ints header)."""
    n, c, s, q = ints[0], ints[1], ints[2], ints[3]
    f = 0
    local_position = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    local_normal = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    radius = floats[f:f + n]
    f += n
    stiffness = floats[f:f + n]
    f += n
    reach = floats[f:f + n]
    f += n
    enter = floats[f:f + n]
    f += n
    leave = floats[f:f + n]
    f += n
    cluster_centre = floats[f:f + 3 * c].reshape((c, 3))
    f += 3 * c
    cluster_reach = floats[f:f + c]
    f += c
    shape_centre = floats[f:f + 3 * s].reshape((s, 3))
    f += 3 * s
    shape_bound = floats[f:f + s]
    f += s
    patch_origin = floats[f:f + 3 * q].reshape((q, 3))
    f += 3 * q
    i = HEADER
    probe_body = ints[i:i + n]
    i += n
    cluster_start = ints[i:i + c + 1]
    i += c + 1
    cluster_member = ints[i:i + n]
    i += n
    cluster_body = ints[i:i + c]
    i += c
    cluster_uniform = ints[i:i + c]
    i += c
    sensed = ints[i:i + c * s].reshape((c, s))
    i += c * s
    shape_body = ints[i:i + s]
    i += s
    patch_body = ints[i:i + q]
    i += q
    patch_first = ints[i:i + q]
    i += q
    patch_end = ints[i:i + q]
    i += q
    if f != floats.size or i != ints.size:
        raise ValueError("probe model buffers do not match their header")
    return ProbeArrays(local_position, local_normal, radius, stiffness, reach, enter, leave,
                       cluster_centre, cluster_reach, shape_centre, shape_bound, patch_origin,
                       probe_body, cluster_start, cluster_member, cluster_body,
                       cluster_uniform, sensed, shape_body, patch_body, patch_first, patch_end)


@njit(cache=True)
def data_sizes(n, c, s, q):
    """``(floats, distance, ints, in_contact, scratch)`` lengths of the data buffers."""
    return 17 * n + 10 * q, n, 2 * n + q + 2 * c * s, n, 4 * c + 3 * s + 6


@njit(cache=True)
def data_views(model_ints, floats, distance, ints, in_contact, scratch):
    """The :class:`ProbeOutputs` views of the data buffers of the model with ``model_ints``.
    ``floats`` holds exactly the float outputs that are always finite (``distance``, which is
    +inf beyond range, has its own buffer)."""
    n, c, s, q = model_ints[0], model_ints[1], model_ints[2], model_ints[3]
    f = 0
    position = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    normal = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    depth = floats[f:f + n]
    f += n
    area = floats[f:f + n]
    f += n
    force = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    force_body = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    contact_normal = floats[f:f + 3 * n].reshape((n, 3))
    f += 3 * n
    patch_force = floats[f:f + 3 * q].reshape((q, 3))
    f += 3 * q
    patch_area = floats[f:f + q]
    f += q
    patch_force_body = floats[f:f + 3 * q].reshape((q, 3))
    f += 3 * q
    patch_torque_body = floats[f:f + 3 * q].reshape((q, 3))
    f += 3 * q
    touching_shape = ints[:n]
    touching_body = ints[n:2 * n]
    patch_in_contact = ints[2 * n:2 * n + q]
    candidates = ints[2 * n + q:2 * n + q + c * s]
    candidate_hint = ints[2 * n + q + c * s:2 * n + q + 2 * c * s]
    cluster_centre = scratch[:3 * c].reshape((c, 3))
    cluster_front = scratch[3 * c:4 * c]
    shape_centre = scratch[4 * c:4 * c + 3 * s].reshape((s, 3))
    nearest = scratch[4 * c + 3 * s:4 * c + 3 * s + 3]
    surface_normal = scratch[4 * c + 3 * s + 3:4 * c + 3 * s + 6]
    if (f != floats.size or distance.size != n or ints.size != 2 * n + q + 2 * c * s
            or in_contact.size != n or scratch.size != 4 * c + 3 * s + 6):
        raise ValueError("probe data buffers do not match the model")
    return ProbeOutputs(position, normal, depth, area, force, force_body, contact_normal,
                        patch_force, patch_area, patch_force_body, patch_torque_body, distance,
                        touching_shape, touching_body, patch_in_contact, in_contact,
                        cluster_centre, cluster_front, shape_centre, nearest, surface_normal,
                        candidates, candidate_hint)


def mesh_buffer(meshes):
    """``(buffer, first)``: a read-only byte buffer holding the ten arrays of the
    :class:`~ambf_collision.geometry.mesh_set.MeshSet` ``meshes`` (None: no mesh) as tables
    ``first = 0`` to 9 (a copy: the Model's own buffer serves probes compiled against a Model)."""
    arrays = no_meshes() if meshes is None else meshes.arrays()
    buffer, _ = pack(tuple(arrays), writeable=False)
    return buffer, 0


@njit(cache=True, inline="always")
def mesh_tables(buffer, first):
    """The :class:`~ambf_collision.geometry.mesh_set.Meshes` of ``buffer``, tables ``first`` to
    ``first + 9`` (views and slices, no copy)."""
    h, f = words_of(buffer)
    return Meshes(float_matrix(f, h, first, 3), int32_matrix(buffer, h, first + 1, 3),
                  int32_matrix(buffer, h, first + 2, 3), float_matrix(f, h, first + 3, 3),
                  float_matrix(f, h, first + 4, 6), int32_matrix(buffer, h, first + 5, 2),
                  int_vector(h, first + 6), int_vector(h, first + 7), int_vector(h, first + 8),
                  int_vector(h, first + 9))
