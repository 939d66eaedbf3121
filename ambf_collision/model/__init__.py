"""Model layer: ADF loading, names, kinematics, collision filtering, ``Model`` / ``Data``.

``from ambf_collision.model import Model`` is the public entry point of the library.
"""

from ambf_collision.geometry import kernel_cache  # noqa: F401 - before any kernel: numba's cache stamp
from ambf_collision.model.adf import AdfError, AdfWarning
from ambf_collision.model.data import Data, EvaluationResult, ModelContact
from ambf_collision.model.model import Model, ShapeInfo
from ambf_collision.model.obstacles import ObstacleContacts, ObstacleSource

__all__ = ["AdfError", "AdfWarning", "Data", "EvaluationResult", "Model", "ModelContact",
           "ObstacleContacts", "ObstacleSource", "ShapeInfo"]
