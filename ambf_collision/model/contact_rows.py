"""A reported contact as one row of float64 values, in the order of the ``Contact`` message.

The evaluate kernel writes one row per reported contact (closest first) into the Data
(``jacobians.write_contact_rows``); the monitor guards them for NaN in one check and the ROS
adapter packs each row behind its pair's cached names. Row of a model with ``J`` joints,
``contact_row_width(J)`` values:

============  =====================  ==========================================
columns       field                  unit, frame
============  =====================  ==========================================
0             ``distance``           m, signed (< 0: penetration)
1-3           ``point_1``            m, world: witness on shape 1
4-6           ``point_2``            m, world: witness on shape 2
7-9           ``position``           m, world: midpoint of the witnesses
10-12         ``normal``             unit, world, from shape 1 to shape 2
13 .. 13+J-1  ``jacobian``           m/rad or m/m per joint (``Model.joint_names``)
13+J          ``distance_rate``      m/s: ``jacobian . joint velocities``
14+J .. 16+J  ``point_1_local``      m, body 1's frame
17+J .. 19+J  ``point_2_local``      m, body 2's frame
============  =====================  ==========================================

Who is in contact travels beside the rows as ``(body_1, body_2, shape_1, shape_2)`` tuples
(``Model.pair_contact_info``): qualified body names, shape index within the body's compound
shape (-1 when the body has one shape).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple, Optional

import numpy as np

__all__ = ["GEOMETRY_VALUES", "CONTROLLER_VALUES", "ContactColumns", "ModelContact",
           "contact_columns", "contact_row", "contact_row_width", "model_contacts"]

GEOMETRY_VALUES = 13
"""Values of a row before its Jacobian: distance, point_1, point_2, position, normal."""
CONTROLLER_VALUES = 7
"""Values of a row after its Jacobian: distance_rate, point_1_local, point_2_local."""


def contact_row_width(n_joints: int) -> int:
    """Values per row of a model with ``n_joints`` joints."""
    return GEOMETRY_VALUES + n_joints + CONTROLLER_VALUES


class ContactColumns(NamedTuple):
    """Views of the fields of rows ``(..., contact_row_width(J))`` (units and frames as in the
    module's table): each field has the rows' leading shape."""

    distance: np.ndarray  # (...)
    point_1: np.ndarray  # (..., 3)
    point_2: np.ndarray  # (..., 3)
    position: np.ndarray  # (..., 3)
    normal: np.ndarray  # (..., 3)
    jacobian: np.ndarray  # (..., J)
    distance_rate: np.ndarray  # (...)
    point_1_local: np.ndarray  # (..., 3)
    point_2_local: np.ndarray  # (..., 3)


def contact_columns(rows: np.ndarray) -> ContactColumns:
    """The fields of ``rows`` (one row ``(W,)`` or many ``(n, W)``) as views: the one place
    that knows the columns."""
    rate = rows.shape[-1] - CONTROLLER_VALUES
    return ContactColumns(rows[..., 0], rows[..., 1:4], rows[..., 4:7], rows[..., 7:10],
                          rows[..., 10:GEOMETRY_VALUES], rows[..., GEOMETRY_VALUES:rate],
                          rows[..., rate], rows[..., rate + 1:rate + 4], rows[..., rate + 4:])


def contact_row(distance, point_1, point_2, position, normal, jacobian=(), distance_rate=0.0,
                point_1_local=(0.0, 0.0, 0.0), point_2_local=(0.0, 0.0, 0.0)) -> np.ndarray:
    """One row (a new ``(contact_row_width(len(jacobian)),)`` float64 array) of a contact given
    by its values, in message order (units and frames as in the module's table). For callers
    outside the kernel: a stand-in model, a contact read back from a message."""
    return np.concatenate(([distance], point_1, point_2, position, normal, jacobian,
                           [distance_rate], point_1_local, point_2_local), dtype=float)


@dataclass
class ModelContact:
    """One reported pair (the ``Contact`` fields plus who): world frame, metres. The arrays are
    views of the contact's row."""

    body_1: str
    body_2: str
    shape_1: int
    shape_2: int
    distance: float
    point_1: np.ndarray
    point_2: np.ndarray
    position: np.ndarray
    normal: np.ndarray
    jacobian: Optional[np.ndarray] = None  # (J,) m/rad or m/m, Model.joint_names order
    distance_rate: float = 0.0  # m/s: jacobian . joint velocities (0 when none were set)
    point_1_local: Optional[np.ndarray] = None  # (3,) m: point_1 in body_1's frame
    point_2_local: Optional[np.ndarray] = None  # (3,) m: point_2 in body_2's frame

    def to_json(self) -> dict:
        return {
            "body_1": self.body_1, "body_2": self.body_2,
            "shape_1": self.shape_1, "shape_2": self.shape_2,
            "distance": float(self.distance),
            "point_1": [float(x) for x in self.point_1],
            "point_2": [float(x) for x in self.point_2],
            "position": [float(x) for x in self.position],
            "normal": [float(x) for x in self.normal],
        }


def model_contacts(info, rows) -> list:
    """:class:`ModelContact` records of ``info`` (``(body_1, body_2, shape_1, shape_2)`` per
    contact) and their ``rows`` ``(n, contact_row_width(J))``, in order."""
    out = []
    for who, row in zip(info, rows):
        c = contact_columns(row)
        out.append(ModelContact(*who, float(c.distance), c.point_1, c.point_2, c.position,
                                c.normal, c.jacobian, float(c.distance_rate), c.point_1_local,
                                c.point_2_local))
    return out
