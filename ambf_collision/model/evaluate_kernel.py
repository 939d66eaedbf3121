"""One compiled call per evaluation: kinematics, shapes to world, every pair, contacts in order.

The Model's constant tables are packed into one read-only buffer and the Data's per-cycle tables
into one writable buffer (:mod:`table_buffer`); :func:`evaluate_model` takes the two buffers and
views the tables in them, in the orders :data:`MODEL_TABLES` and :data:`DATA_TABLES`:

Model buffer: ``joints``, ``bodies``, ``couplings`` (``kinematics_kernels`` dtypes),
``closure_joints (K,)``; ``shapes`` (:data:`~ambf_collision.geometry.world_shapes.SHAPE_DTYPE`,
each in its body's frame), ``shape_body (N,)``; ``bounds`` and ``pairs`` (``geometry/pairs.py``
dtypes); the nine hull arrays (:class:`~ambf_collision.geometry.hulls.Hulls` order);
``pair_bodies (2P,)`` (the two bodies of pair ``p`` at ``2p``, ``2p + 1``),
``pair_environment (P,)`` (1 for a robot-environment pair, 0 for a self pair: ``model.py``);
the ten mesh arrays (:class:`~ambf_collision.geometry.mesh_set.Meshes` order).

Data buffer: ``joints`` (``JOINT_STATE_DTYPE``), ``files`` and ``bodies`` (``POSE_DTYPE``),
``closure_residuals (K,2)``, ``world`` (the shapes in world, ``SHAPE_DTYPE``), ``results``
(:data:`~ambf_collision.geometry.pairs.PAIR_RESULT_DTYPE`), ``contact_index (P,)``;
``contact_rows (P, 20 + J)`` (row r: the r-th contact's values in message order,
``contact_rows.py``, written by ``jacobians.py``); ``shape_moved (N,)`` (1 where shape k moved
in the last evaluation: ``to_world``; the pairs of two unmoved shapes keep their exact results,
``evaluate_pairs``).
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry.hulls import Hulls
from ambf_collision.geometry.mesh_set import Meshes
from ambf_collision.geometry.pairs import (BOUND_DTYPE, PAIR_DTYPE, PAIR_RESULT_DTYPE,
                                           contact_order, evaluate_pairs, pair_constants,
                                           pair_results)
from ambf_collision.geometry.world_shapes import SHAPE_DTYPE, Link, to_world, world_of
from ambf_collision.model.contact_rows import CONTROLLER_VALUES, GEOMETRY_VALUES
from ambf_collision.model.jacobians import write_contact_rows
from ambf_collision.model.kinematics_kernels import (BODY_DTYPE, COUPLING_DTYPE, JOINT_DTYPE,
                                                     JOINT_STATE_DTYPE, POSE_DTYPE,
                                                     forward_kinematics, kinematics_buffers,
                                                     kinematics_constants)
from ambf_collision.model.table_buffer import (float_matrix, float_vector, int32_matrix, int_vector,
                                                records, words_of)

__all__ = ["MODEL_TABLES", "DATA_TABLES", "evaluate_model", "evaluate_tables", "model_tables",
           "data_tables"]

MODEL_TABLES = ("joints", "bodies", "couplings", "closure_joints", "shapes", "shape_body",
                "bounds", "pairs") + Hulls._fields + ("pair_bodies", "pair_environment") + tuple(
                    f"mesh_{name}" for name in Meshes._fields)
"""The Model buffer's tables, in order."""
DATA_TABLES = ("joints", "files", "bodies", "closure_residuals", "world", "results",
               "contact_index", "contact_rows", "shape_moved")
"""The Data buffer's tables, in order."""


@njit(cache=True, inline="always")
def model_tables(model):
    """``(K, link, C, H, M, pair_bodies, pair_environment)``: the kinematics constants, the
    shapes in their bodies' frames, the pair constants, the hulls, the meshes, the pairs' bodies
    and which pairs are robot-environment pairs, of a Model buffer."""
    h, f = words_of(model)
    K = kinematics_constants(records(model, h, 0, JOINT_DTYPE), records(model, h, 1, BODY_DTYPE),
                             records(model, h, 2, COUPLING_DTYPE), int_vector(h, 3))
    link = Link(world_of(records(model, h, 4, SHAPE_DTYPE)), int_vector(h, 5))
    C = pair_constants(records(model, h, 7, PAIR_DTYPE), records(model, h, 6, BOUND_DTYPE))
    H = Hulls(float_matrix(f, h, 8, 3), int_vector(h, 9), float_matrix(f, h, 10, 3),
              float_vector(f, h, 11), int_vector(h, 12), float_matrix(f, h, 13, 3),
              float_vector(f, h, 14), int_vector(h, 15), int_vector(h, 16))
    M = Meshes(float_matrix(f, h, 19, 3), int32_matrix(model, h, 20, 3),
               int32_matrix(model, h, 21, 3), float_matrix(f, h, 22, 3), float_matrix(f, h, 23, 6),
               int32_matrix(model, h, 24, 2), int_vector(h, 25), int_vector(h, 26),
               int_vector(h, 27), int_vector(h, 28))
    return K, link, C, H, M, int_vector(h, 17), int_vector(h, 18)


@njit(cache=True, inline="always")
def data_tables(data):
    """``(D, velocity, W, R, contact_index, contact_rows, moved)``: the kinematics buffers, the
    joint velocities, the world shapes, the pair results, the contact index, the contacts' rows
    ``(P, contact_row_width(J))`` and which shapes moved, of a Data buffer."""
    h, f = words_of(data)
    joints = records(data, h, 0, JOINT_STATE_DTYPE)
    D = kinematics_buffers(joints, records(data, h, 1, POSE_DTYPE),
                           records(data, h, 2, POSE_DTYPE), float_matrix(f, h, 3, 2))
    W = world_of(records(data, h, 4, SHAPE_DTYPE))
    return (D, joints.velocity, W,
            pair_results(records(data, h, 5, PAIR_RESULT_DTYPE)), int_vector(h, 6),
            float_matrix(f, h, 7, GEOMETRY_VALUES + joints.shape[0] + CONTROLLER_VALUES),
            int_vector(h, 8))


@njit(cache=True)
def evaluate_model(model, data, near, report_distance, environment_report_distance):
    """One evaluation (``model.Model.evaluate``): couplings and forward kinematics, every shape
    to world, every pair (``near`` m: +inf every pair exact, else the pairs a bound cannot put
    beyond it, ``geometry/pairs.py``), the self pairs below ``report_distance`` and the
    robot-environment pairs below ``environment_report_distance`` (m), closest first, into
    ``contact_index``, and per contact its row of message values (distance, world vectors,
    distance Jacobian, distance rate, witnesses in body frames: ``contact_rows.py``). Returns
    ``(number of contacts, closest pair, its distance)`` (``-1, +inf`` without pairs)."""
    return evaluate_tables(model_tables(model), data_tables(data), near, report_distance,
                           environment_report_distance)


@njit(cache=True, inline="always")
def evaluate_tables(model_views, data_views, near, report_distance, environment_report_distance):
    """:func:`evaluate_model` on the tables already opened (:func:`model_tables`,
    :func:`data_tables`): what a kernel that has them calls (``motion_kernel.py``)."""
    K, link, C, H, M, pair_bodies, pair_environment = model_views
    D, velocity, W, R, contact_index, rows, moved = data_views
    forward_kinematics(K, D)
    to_world(link, D.body_R, D.body_t, W, moved)
    evaluate_pairs(W, H, M, C, near, R, moved)
    closest, lowest = -1, math.inf
    for p in range(R.distance.shape[0]):
        if R.distance[p] < lowest or closest < 0:
            closest, lowest = p, R.distance[p]
    n = contact_order(R.distance, report_distance, environment_report_distance, pair_environment,
                      contact_index)
    write_contact_rows(K, D, velocity, pair_bodies, R, contact_index, n, rows)
    return n, closest, lowest
