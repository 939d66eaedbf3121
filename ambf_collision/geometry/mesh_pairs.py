"""A triangle mesh against any other bounded shape of a World: the pair kernel of MESH shapes.

``mesh_pair(W, H, M, k1, k2, hint1, hint2) -> (d, p1, p2, n, t1, t2)`` (njit): shapes ``k1`` and
``k2`` of the world ``W`` (at least one of kind MESH, neither a plane: a plane meets a mesh at
the lowest vertex of its hull, ``pair_kernels.convex_pair``), the hulls ``H``, the meshes ``M``
(:class:`~ambf_collision.geometry.mesh_set.Meshes`). Coal's semantics as every pair kernel
(``pair_kernels.py``): ``d`` signed (m), ``p1`` on shape 1, ``p2`` on shape 2 (world), ``n`` the
unit normal from shape 1 to shape 2; ``t1``, ``t2`` the closest triangle of each shape (-1 for a
shape that is not a mesh), the hints of the next call (they change the speed, never the result).

The other shape is taken into the mesh's frame, the query runs there
(:mod:`~ambf_collision.geometry.mesh_distance` for spheres and capsules,
:mod:`~ambf_collision.geometry.mesh_solid` for boxes, cylinders, cones and hulls), and the
results come back to the world frame. A mesh's signed distance, its inside and the depth it reports when
penetrating are documented with each query.
"""

from __future__ import annotations

from numba import njit

from ambf_collision.geometry.mesh_distance import capsule_mesh
from ambf_collision.geometry.mesh_set import mesh_arrays
from ambf_collision.geometry.mesh_solid import solid_mesh
from ambf_collision.geometry.shapes import CAPSULE, MESH
from ambf_collision.geometry.support import core_in_frame, core_of
from ambf_collision.geometry.world_shapes import local_point, shape_row, world_point, world_vector

__all__ = ["mesh_pair"]


@njit(cache=True, error_model="numpy", inline="always")
def _point(A, k):
    return A[k, 0], A[k, 1], A[k, 2]


@njit(cache=True, error_model="numpy")
def mesh_pair(W, H, M, k1, k2, hint1, hint2):
    """See the module docstring."""
    swap = W.kind[k1] != MESH      # the mesh first; the other order swaps the results back
    km, ko = (k2, k1) if swap else (k1, k2)
    hm = hint2 if swap else hint1
    V, F, NB, VN, boxes, nodes, closed = mesh_arrays(M, W.mesh_id[km])
    s = shape_row(W, km)
    # the other shape in the mesh's frame: witness on it, on the mesh, normal from it to the mesh
    if W.kind[ko] <= CAPSULE:
        a, b = local_point(s, _point(W.a, ko)), local_point(s, _point(W.b, ko))
        d, xo, xm, n, tm = capsule_mesh(V, F, NB, VN, boxes, nodes, closed, a, b, W.radius[ko], hm)
    else:          # box, cylinder, cone, hull
        C = core_in_frame(core_of(W, H, ko), s.rot, s.a)
        d, xo, xm, n, tm = solid_mesh(C, H.vertices, H.neighbor_start, H.neighbors, V, F, NB, VN,
                                      boxes, nodes, closed, hm)
    to = -1
    po, pm, nw = world_point(s, xo), world_point(s, xm), world_vector(s, n)
    if swap:    # shape 1 is the other shape: the normal from it to the mesh as computed
        return d, po, pm, nw, to, tm
    return d, pm, po, (-nw[0], -nw[1], -nw[2]), tm, to
