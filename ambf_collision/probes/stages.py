"""The probe kernels: one function per stage, one call from Python per evaluation.

:func:`evaluate_probes` runs, for body poses ``body_R (B,3,3)``, ``body_t (B,3)`` (world from
body, m) and the world shapes of the same cycle:

1. :func:`move_probes`: probe centres and sensor normals to world;
2. :func:`move_bounds`: cluster centres, cluster sensor-plane heights and shape bounding
   spheres to world;
3. :func:`broadphase`: the (cluster, sensed shape) pairs some member may see (bounding
   spheres, the exact distance from the cluster centre, the facing rule for clusters sharing
   one sensor normal);
4. :func:`exact_stage`: per member of those pairs the bounding-sphere test, then the shared
   point kernel (``geometry.points``; a triangle mesh through :func:`mesh_point`) and the probe
   rules (facing, range, touch: nearest gap, force, area, deepest contact);
5. :func:`finish_probes`: depth, touching body, body-frame force, the contact state;
6. :func:`patch_totals`: per patch force, area, probes in contact and the body-frame wrench.

The semantics are those of ``probes/spec.py``. Shapes are visited in ascending index for
each probe (clusters partition the probes), so sums and ties never depend on the clustering.
Stage 3 and the bounding-sphere test of stage 4 drop only pairs the exact rules reject (slacks in
``geometry/tolerances.py``), so the outputs equal those of every pair evaluated exactly.

The stages take the arrays they read and write one by one (their signatures are their data
flow) and are inlined into :func:`evaluate_probes`; per pair, a shape is measured on its row of
plain values (``shape_row``, ``points.point_row``), hulls through ``point_signed_distance``,
meshes through :func:`mesh_point` (the mesh tables are viewed once per evaluation).

A MESH shape is sensed as its surface (``geometry/mesh_distance.point_phi`` in the mesh's frame):
``d_surf`` is the signed distance of the probe centre (negative inside a closed mesh, so a
probe whose centre went in has a depth beyond its radius; unsigned for an open mesh, which has
no inside) and ``n_c`` the unit normal at the closest point, out of the mesh towards the probe.
Its bound is its hull's bounding sphere, its facing test its hull's highest point (a mesh lies in
its hull). The triangle closest to the cluster centre (found by the broadphase) is the first
bound of the members' queries: it changes the speed, never the result.
A compiled call that passes a NamedTuple of k arrays, or reads its fields inside a loop, counts
k references in and out, measured here at 10-30 ns per array and call: with the World and Hulls
tuples passed per query, 1,000 probes x 40 capsules with every pair exact took 11x the C loop,
on rows 1.7x.
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry.mesh_distance import point_phi
from ambf_collision.geometry.mesh_set import mesh_arrays
from ambf_collision.geometry.points import point_row, point_signed_distance
from ambf_collision.geometry.shapes import CONVEX, MESH, PLANE
from ambf_collision.geometry.support import NONE, core_of, core_support
from ambf_collision.geometry.tolerances import (PROBE_BOUND_SLACK, PROBE_FACING_SLACK,
                                                PROBE_PLANE_FACING_SLACK)
from ambf_collision.geometry.transforms import transform_rows
from ambf_collision.geometry.world_shapes import (local_point, make_hulls, shape_row, world_of,
                                                  world_vector)
from ambf_collision.probes.layout import MESH_TABLE, data_views, mesh_tables, model_views

__all__ = ["evaluate_probes"]


@njit(cache=True, inline="always")
def move_probes(probe_body, local_position, local_normal, body_R, body_t, position, normal):
    """``position[i] = R p_i + t``, ``normal[i] = R n_i`` with the pose of probe i's body."""
    transform_rows(body_R, body_t, probe_body, local_position, position, True)
    transform_rows(body_R, body_t, probe_body, local_normal, normal, False)


@njit(cache=True, inline="always")
def move_bounds(body_R, body_t, cluster_body, cluster_centre, cluster_start, cluster_member,
                cluster_uniform, shape_body, shape_centre, position, normal, out_cluster_centre,
                out_cluster_front, out_shape_centre):
    """Cluster centres and shape bounding-sphere centres in world; per cluster whose members
    share one sensor normal n, ``front = min over members of position . n`` (the members'
    sensor planes; -inf for the other clusters)."""
    transform_rows(body_R, body_t, cluster_body, cluster_centre, out_cluster_centre, True)
    transform_rows(body_R, body_t, shape_body, shape_centre, out_shape_centre, True)
    for c in range(cluster_body.size):
        front = -math.inf
        if cluster_uniform[c]:
            first = cluster_member[cluster_start[c]]
            front = math.inf
            for m in range(cluster_start[c], cluster_start[c + 1]):
                i = cluster_member[m]
                front = min(front, position[i, 0] * normal[first, 0] + position[i, 1] * normal[first, 1]
                            + position[i, 2] * normal[first, 2])
        out_cluster_front[c] = front


@njit(cache=True, inline="always")
def _beyond(x, i, y, k, limit):
    """True when ``|x[i] - y[k]| > limit``."""
    d0 = x[i, 0] - y[k, 0]
    d1 = x[i, 1] - y[k, 1]
    d2 = x[i, 2] - y[k, 2]
    return d0 * d0 + d1 * d1 + d2 * d2 > limit * limit


@njit(cache=True, error_model="numpy")
def mesh_point(M, m, row, x, hint):
    """``(d_surf, t, n_c)`` of world point ``x`` (3-tuple) and mesh ``m`` of the
    :class:`~ambf_collision.geometry.mesh_set.Meshes` ``M``, the mesh of shape row ``row``: the
    signed distance to its surface (m, negative inside a closed mesh), the closest triangle, and
    the unit normal there out of the mesh towards ``x`` (world). ``hint``: a triangle to measure
    first (-1 none). Not inlined: the query loops keep no mesh arrays of their own (with them,
    the demo's exact stage, which has no mesh, took 20 % longer; measured here), and the ten
    arrays' reference counts cost little beside a mesh query."""
    V, F, NB, VN, boxes, nodes, closed = mesh_arrays(M, m)
    phi, t, _, n = point_phi(V, F, NB, VN, boxes, nodes, closed, local_point(row, x), hint)
    return phi, t, world_vector(row, (-n[0], -n[1], -n[2]))   # point_phi's n points to the mesh


@njit(cache=True, inline="always")
def broadphase(W, H, M, sensed, cluster_start, cluster_member, cluster_reach, cluster_uniform,
               shape_bound, normal, cluster_centre, cluster_front, shape_centre, nearest,
               surface_normal, candidates, candidate_hint):
    """The (cluster, shape) pairs where some member may see the shape, as ``c * S + s`` in
    ``candidates`` (cluster by cluster, shapes ascending), with the mesh triangle closest to the
    cluster centre in ``candidate_hint`` (-1 for other shapes); returns their number. Dropped: the
    shapes not sensed, beyond every member's reach (bounding spheres, then the exact distance
    from the cluster centre), and, for members sharing one sensor normal n, a plane whose
    normal does not oppose n or a bounded shape (a sphere's or capsule's core) wholly behind
    their sensor planes (then n_c . n > 0 for every member)."""
    C, S = sensed.shape
    n = 0
    for c in range(C):
        first = cluster_member[cluster_start[c]]
        ns = (normal[first, 0], normal[first, 1], normal[first, 2])  # shared by uniform clusters
        reach = cluster_reach[c] + PROBE_BOUND_SLACK
        for s in range(S):
            if not sensed[c, s]:
                continue
            bound = shape_bound[s]
            if bound < math.inf and _beyond(cluster_centre, c, shape_centre, s, reach + bound):
                continue
            row = shape_row(W, s)
            x = (cluster_centre[c, 0], cluster_centre[c, 1], cluster_centre[c, 2])
            hint = -1
            if row.kind == CONVEX:
                d = point_signed_distance(W, H, s, x[0], x[1], x[2], nearest, surface_normal)
            elif row.kind == MESH:
                d, hint, _ = mesh_point(M, W.mesh_id[s], row, x, -1)
            else:
                d, _, _ = point_row(row, x)
            if d > reach:
                continue
            if cluster_uniform[c]:
                n0, n1, n2 = ns
                if row.kind == PLANE:
                    p = row.normal
                    if p[0] * n0 + p[1] * n1 + p[2] * n2 > PROBE_PLANE_FACING_SLACK:
                        continue
                else:  # the shape's highest point along n: for spheres and capsules that of
                    # their core (their n_c points from the core to the probe, inside too)
                    x0, x1, x2, _ = core_support(core_of(W, H, s), H.vertices, H.neighbor_start,
                                                   H.neighbors, n0, n1, n2, NONE)
                    if x0 * n0 + x1 * n1 + x2 * n2 < cluster_front[c] - PROBE_FACING_SLACK:
                        continue
            candidates[n] = c * S + s
            candidate_hint[n] = hint
            n += 1
    return n


@njit(cache=True, inline="always")
def exact_stage(W, H, M, candidates, candidate_hint, n_candidates, n_shapes, cluster_start,
                cluster_member, radius, range_, stiffness, shape_bound, position, normal,
                shape_centre, nearest, surface_normal, distance, touching_shape, contact_normal,
                force, area):
    """Every member of every candidate (cluster, shape) within the shape's bounding sphere is
    measured by the shared point kernel (``point_row`` on the shape's row of plain values: no
    reference counting per query; hulls through ``point_signed_distance``; meshes through
    :func:`mesh_point`, each member's closest triangle the next one's hint), then the rules: a
    shape not facing the probe (n_c . n_s >= 0) or beyond its range is not seen; the smallest
    gap is kept (the first shape on ties) with, when touching, its normal and shape; force and
    area are summed over the touching shapes. Returns the number of exact (probe, shape)
    queries.

    The rules stay in this one loop: as an inlined helper taking the output arrays they cost
    50 ns per query (the arrays' reference counts), twice the demo's exact stage (measured
    here)."""
    distance[:] = math.inf
    touching_shape[:] = -1
    contact_normal[:] = 0.0
    force[:] = 0.0
    area[:] = 0.0
    checked = 0
    for j in range(n_candidates):
        c, s = candidates[j] // n_shapes, candidates[j] % n_shapes
        bound = shape_bound[s]
        row = shape_row(W, s)
        hull = row.kind == CONVEX
        mesh = row.kind == MESH
        hint = candidate_hint[j]
        for m in range(cluster_start[c], cluster_start[c + 1]):
            i = cluster_member[m]
            r = radius[i]
            if bound < math.inf and _beyond(position, i, shape_centre, s,
                                            r + range_[i] + bound + PROBE_BOUND_SLACK):
                continue
            x = (position[i, 0], position[i, 1], position[i, 2])
            if hull:  # the hull's arrays are needed
                d_surf = point_signed_distance(W, H, s, x[0], x[1], x[2], nearest, surface_normal)
                n0, n1, n2 = surface_normal[0], surface_normal[1], surface_normal[2]
            elif mesh:
                d_surf, hint, (n0, n1, n2) = mesh_point(M, W.mesh_id[s], row, x, hint)
            else:  # plain values: no reference counting per query
                d_surf, _, (n0, n1, n2) = point_row(row, x)
            checked += 1
            if n0 * normal[i, 0] + n1 * normal[i, 1] + n2 * normal[i, 2] >= 0.0:
                continue
            gap = d_surf - r
            if gap > range_[i]:
                continue
            if gap < distance[i]:
                distance[i] = gap
                if gap < 0.0:
                    touching_shape[i] = s
                    contact_normal[i, 0], contact_normal[i, 1], contact_normal[i, 2] = n0, n1, n2
            if gap < 0.0:  # touching: d_pen = clip(r - d_surf, 0, 2r), and r - d_surf == -gap
                pen = min(-gap, 2.0 * r)
                w = stiffness[i] * pen
                force[i, 0] += w * n0
                force[i, 1] += w * n1
                force[i, 2] += w * n2
                area[i] += math.pi * (2.0 * r * pen - pen * pen)
    return checked


@njit(cache=True, inline="always")
def finish_probes(probe_body, radius, contact_threshold, release_threshold, shape_body, body_R,
                  distance, touching_shape, force, depth, touching_body, force_body, in_contact):
    """Per probe: depth and touching body of the deepest contact, the body-frame force
    ``R^T f``, and the contact state (enter above ``contact_threshold``, leave at or below
    ``release_threshold``)."""
    for i in range(probe_body.size):
        gap = distance[i]
        depth[i] = min(-gap, 2.0 * radius[i]) if gap < 0.0 else 0.0
        touching_body[i] = shape_body[touching_shape[i]] if gap < 0.0 else -1
        b = probe_body[i]
        for k in range(3):
            force_body[i, k] = (body_R[b, 0, k] * force[i, 0] + body_R[b, 1, k] * force[i, 1]
                                + body_R[b, 2, k] * force[i, 2])
        if in_contact[i]:
            in_contact[i] = depth[i] > release_threshold[i]
        else:
            in_contact[i] = depth[i] > contact_threshold[i]


@njit(cache=True, inline="always")
def patch_totals(patch_first, patch_end, local_position, patch_origin, force, force_body, area,
                 in_contact, patch_force, patch_force_body, patch_torque_body, patch_area,
                 patch_in_contact):
    """Per patch (probes ``patch_first[q]:patch_end[q]``): summed force (world and body frame),
    area, probes in contact, and the torque ``sum (p_i - origin) x f_i`` about the patch origin
    (body frame, forces at the probe centres), in probe order."""
    for q in range(patch_first.size):
        f0 = f1 = f2 = b0 = b1 = b2 = t0 = t1 = t2 = a = 0.0
        count = 0
        for i in range(patch_first[q], patch_end[q]):
            f0 += force[i, 0]
            f1 += force[i, 1]
            f2 += force[i, 2]
            g0, g1, g2 = force_body[i, 0], force_body[i, 1], force_body[i, 2]
            b0 += g0
            b1 += g1
            b2 += g2
            r0 = local_position[i, 0] - patch_origin[q, 0]
            r1 = local_position[i, 1] - patch_origin[q, 1]
            r2 = local_position[i, 2] - patch_origin[q, 2]
            t0 += r1 * g2 - r2 * g1
            t1 += r2 * g0 - r0 * g2
            t2 += r0 * g1 - r1 * g0
            a += area[i]
            count += in_contact[i]
        patch_force[q, 0], patch_force[q, 1], patch_force[q, 2] = f0, f1, f2
        patch_force_body[q, 0], patch_force_body[q, 1], patch_force_body[q, 2] = b0, b1, b2
        patch_torque_body[q, 0], patch_torque_body[q, 1], patch_torque_body[q, 2] = t0, t1, t2
        patch_area[q] = a
        patch_in_contact[q] = count


@njit(cache=True)
def evaluate_probes(model_floats, model_ints, world,
                    vertices, vertex_start, face_normal, face_offset, face_start, centre,
                    bound_radius, neighbor_start, neighbors, mesh_buffer,
                    body_R, body_t,
                    out_floats, out_distance, out_ints, out_in_contact, scratch):
    """Evaluate every probe (stages 1-6 above); returns the number of exact (probe, shape)
    queries. Model and data buffers: ``probes/layout.py``; world shapes: the
    ``WorldShapes.table``; hulls: the arrays of ``world_shapes.hull_arrays(hulls)``; meshes:
    the byte buffer of ``probes/layout.py`` (``mesh_buffer``)."""
    P = model_views(model_floats, model_ints)
    D = data_views(model_ints, out_floats, out_distance, out_ints, out_in_contact, scratch)
    W = world_of(world)
    H = make_hulls(vertices, vertex_start, face_normal, face_offset, face_start, centre,
                   bound_radius, neighbor_start, neighbors)
    M = mesh_tables(mesh_buffer, model_ints[MESH_TABLE])
    move_probes(P.probe_body, P.local_position, P.local_normal, body_R, body_t, D.position, D.normal)
    move_bounds(body_R, body_t, P.cluster_body, P.cluster_centre, P.cluster_start,
                P.cluster_member, P.cluster_uniform, P.shape_body, P.shape_centre, D.position,
                D.normal, D.cluster_centre, D.cluster_front, D.shape_centre)
    n = broadphase(W, H, M, P.sensed, P.cluster_start, P.cluster_member,
                   P.cluster_reach, P.cluster_uniform, P.shape_bound, D.normal, D.cluster_centre,
                   D.cluster_front, D.shape_centre, D.nearest, D.surface_normal, D.candidates, D.candidate_hint)
    checked = exact_stage(W, H, M, D.candidates, D.candidate_hint, n, P.shape_body.size,
                          P.cluster_start,
                          P.cluster_member, P.radius, P.range, P.stiffness, P.shape_bound,
                          D.position, D.normal, D.shape_centre, D.nearest, D.surface_normal,
                          D.distance, D.touching_shape, D.contact_normal, D.force, D.area)
    finish_probes(P.probe_body, P.radius, P.contact_threshold, P.release_threshold, P.shape_body,
                  body_R, D.distance, D.touching_shape, D.force, D.depth, D.touching_body,
                  D.force_body, D.in_contact)
    patch_totals(P.patch_first, P.patch_end, P.local_position, P.patch_origin, D.force,
                 D.force_body, D.area, D.in_contact, D.patch_force, D.patch_force_body,
                 D.patch_torque_body, D.patch_area, D.patch_in_contact)
    return checked
