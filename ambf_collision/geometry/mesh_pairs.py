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
:mod:`~ambf_collision.geometry.mesh_solid` for boxes, cylinders, cones and hulls,
:mod:`~ambf_collision.geometry.mesh_mesh` for a second mesh, posed in the first one's frame), and
the results come back to the world frame. A mesh's signed distance, its inside and the depth it reports when
penetrating are documented with each query.
"""

from __future__ import annotations

from numba import njit

from ambf_collision.geometry.mesh_distance import capsule_mesh
from ambf_collision.geometry.mesh_mesh import mesh_mesh
from ambf_collision.geometry.mesh_set import mesh_arrays
from ambf_collision.geometry.mesh_solid import solid_mesh
from ambf_collision.geometry.shapes import CAPSULE, MESH
from ambf_collision.geometry.support import core_in_frame, core_of
from ambf_collision.geometry.world_shapes import (local_point, local_vector, shape_row, world_point,
                                                  world_vector)

__all__ = ["mesh_pair"]


@njit(cache=True, error_model="numpy", inline="always")
def _point(A, k):
    return A[k, 0], A[k, 1], A[k, 2]


@njit(cache=True, error_model="numpy")
def mesh_pair(W, H, M, k1, k2, hint1, hint2):
    """See the module docstring."""
    # the mesh first (of two meshes, the lower shape index: both orders then give the same bits);
    # the other order swaps the results back
    swap = W.kind[k1] != MESH or (W.kind[k2] == MESH and k2 < k1)
    km, ko = (k2, k1) if swap else (k1, k2)
    hm, ho = (hint2, hint1) if swap else (hint1, hint2)
    V, F, NB, VN, boxes, nodes, closed = mesh_arrays(M, W.mesh_id[km])
    s = shape_row(W, km)
    to = -1
    # the other shape in the mesh's frame: witness on it, on the mesh, normal from it to the mesh
    if W.kind[ko] <= CAPSULE:
        a, b = local_point(s, _point(W.a, ko)), local_point(s, _point(W.b, ko))
        d, xo, xm, n, tm = capsule_mesh(V, F, NB, VN, boxes, nodes, closed, a, b, W.radius[ko], hm)
    elif W.kind[ko] != MESH:          # box, cylinder, cone, hull
        C = core_in_frame(core_of(W, H, ko), s.rot, s.a)
        d, xo, xm, n, tm = solid_mesh(C, H.vertices, H.neighbor_start, H.neighbors, V, F, NB, VN,
                                      boxes, nodes, closed, hm)
    else:          # a second mesh, posed in this one's frame by R = R_m^T R_o, R_m^T (a_o - a_m)
        o = shape_row(W, ko)
        c0 = local_vector(s, (o.rot[0][0], o.rot[1][0], o.rot[2][0]))   # R's columns
        c1 = local_vector(s, (o.rot[0][1], o.rot[1][1], o.rot[2][1]))
        c2 = local_vector(s, (o.rot[0][2], o.rot[1][2], o.rot[2][2]))
        R = ((c0[0], c1[0], c2[0]), (c0[1], c1[1], c2[1]), (c0[2], c1[2], c2[2]))
        V2, F2, NB2, VN2, boxes2, nodes2, closed2 = mesh_arrays(M, W.mesh_id[ko])
        d, xm, xo, nmo, tm, to = mesh_mesh(V, F, NB, VN, boxes, nodes, closed, V2, F2, NB2, VN2,
                                           boxes2, nodes2, closed2, R, local_point(s, o.a), hm, ho)
        n = (-nmo[0], -nmo[1], -nmo[2])
    po, pm, nw = world_point(s, xo), world_point(s, xm), world_vector(s, n)
    if swap:    # shape 1 is the other shape: the normal from it to the mesh as computed
        return d, po, pm, nw, to, tm
    return d, pm, po, (-nw[0], -nw[1], -nw[2]), tm, to
