"""One compiled call per evaluation: kinematics, shapes to world, every pair, contacts in order.

The Model's constant tables are packed into one read-only buffer and the Data's per-cycle tables
into one writable buffer (:mod:`table_buffer`); :func:`evaluate_model` takes the two buffers and
views the tables in them, in the orders :data:`MODEL_TABLES` and :data:`DATA_TABLES`:

Model buffer: ``joints``, ``bodies``, ``couplings`` (``kinematics_kernels`` dtypes),
``closure_joints (K,)``; ``shapes`` (:data:`~ambf_collision.geometry.world_shapes.SHAPE_DTYPE`,
each in its body's frame), ``shape_body (N,)``; ``bounds`` and ``pairs`` (``geometry/pairs.py``
dtypes); the nine hull arrays (:class:`~ambf_collision.geometry.hulls.Hulls` order).

Data buffer: ``joints`` (``JOINT_STATE_DTYPE``), ``files`` and ``bodies`` (``POSE_DTYPE``),
``closure_residuals (K,2)``, ``world`` (the shapes in world, ``SHAPE_DTYPE``), ``results``
(:data:`~ambf_collision.geometry.pairs.PAIR_RESULT_DTYPE`), ``contact_index (P,)``.
"""

from __future__ import annotations

import math

from numba import njit

from ambf_collision.geometry.hulls import Hulls
from ambf_collision.geometry.pairs import (BOUND_DTYPE, PAIR_DTYPE, PAIR_RESULT_DTYPE,
                                           contact_order, evaluate_pairs, pair_constants,
                                           pair_results)
from ambf_collision.geometry.world_shapes import SHAPE_DTYPE, Link, to_world, world_of
from ambf_collision.model.kinematics_kernels import (BODY_DTYPE, COUPLING_DTYPE, JOINT_DTYPE,
                                                     JOINT_STATE_DTYPE, POSE_DTYPE,
                                                     forward_kinematics, kinematics_buffers,
                                                     kinematics_constants)
from ambf_collision.model.table_buffer import float_matrix, float_vector, int_vector, records

__all__ = ["MODEL_TABLES", "DATA_TABLES", "evaluate_model"]

MODEL_TABLES = ("joints", "bodies", "couplings", "closure_joints", "shapes", "shape_body",
                "bounds", "pairs") + Hulls._fields
"""The Model buffer's tables, in order."""
DATA_TABLES = ("joints", "files", "bodies", "closure_residuals", "world", "results",
               "contact_index")
"""The Data buffer's tables, in order."""


@njit(cache=True, inline="always")
def model_tables(model):
    """``(K, link, C, H)``: the kinematics constants, the shapes in their bodies' frames, the
    pair constants and the hulls of a Model buffer."""
    K = kinematics_constants(records(model, 0, JOINT_DTYPE), records(model, 1, BODY_DTYPE),
                             records(model, 2, COUPLING_DTYPE), int_vector(model, 3))
    link = Link(world_of(records(model, 4, SHAPE_DTYPE)), int_vector(model, 5))
    C = pair_constants(records(model, 7, PAIR_DTYPE), records(model, 6, BOUND_DTYPE))
    H = Hulls(float_matrix(model, 8, 3), int_vector(model, 9), float_matrix(model, 10, 3),
              float_vector(model, 11), int_vector(model, 12), float_matrix(model, 13, 3),
              float_vector(model, 14), int_vector(model, 15), int_vector(model, 16))
    return K, link, C, H


@njit(cache=True, inline="always")
def data_tables(data):
    """``(D, W, R, contact_index)``: the kinematics buffers, the world shapes, the pair results
    and the contact index of a Data buffer."""
    D = kinematics_buffers(records(data, 0, JOINT_STATE_DTYPE), records(data, 1, POSE_DTYPE),
                           records(data, 2, POSE_DTYPE), float_matrix(data, 3, 2))
    W = world_of(records(data, 4, SHAPE_DTYPE))
    return D, W, pair_results(records(data, 5, PAIR_RESULT_DTYPE)), int_vector(data, 6)


@njit(cache=True)
def evaluate_model(model, data, near, report_distance):
    """One evaluation (``model.Model.evaluate``): couplings and forward kinematics, every shape
    to world, every pair (``near`` m: +inf every pair exact, else the pairs a bound cannot put
    beyond it, ``geometry/pairs.py``), the pairs below ``report_distance`` (m) closest first
    into ``contact_index``. Returns ``(number of contacts, closest pair, its distance)``
    (``-1, +inf`` without pairs)."""
    K, link, C, H = model_tables(model)
    D, W, R, contact_index = data_tables(data)
    forward_kinematics(K, D)
    to_world(link, D.body_R, D.body_t, W)
    evaluate_pairs(W, H, C, near, R)
    closest, lowest = -1, math.inf
    for p in range(R.distance.shape[0]):
        if R.distance[p] < lowest or closest < 0:
            closest, lowest = p, R.distance[p]
    return contact_order(R.distance, report_distance, contact_index), closest, lowest
