"""The classic velocity damper on contact distances (no ROS): one copy of the rule that
``examples/velocity_damper.py`` and the virtual fixture's velocity scale
(``monitor/virtual_fixture.py``) both use.

For every contact with distance d below the influence distance d_i (Faverjon and Tournassoud,
1987; Kanoun et al.)::

    d_dot >= -xi (d - d_s) / (d_i - d_s)        (d_s: safety distance, m; xi: m/s)

with d_dot = J q_dot (J: the contact's distance Jacobian, one value per joint). The rule
(:func:`damper_scale`): the largest uniform scale s in [0, 1] such that s J_k q_dot >= bound_k
for every contact k. A contact whose distance is already moving away at the commanded velocity
(J q_dot >= bound) does not limit s; one approaching too fast limits s to bound / (J q_dot) when
its bound is negative (d > d_s); at or below d_s (bound >= 0) an approaching command gets s = 0
(a uniform scale cannot push the robot away). Uniform scaling keeps the commanded direction (the
path), only slows it.
"""

from __future__ import annotations

import numpy as np

__all__ = ["damper_bound", "damper_scale"]


def damper_bound(d, d_i: float, d_s: float, xi: float):
    """The damper's lower bound on d_dot (m/s) at distance ``d`` (m; array or float)."""
    return -xi * (np.asarray(d, float) - d_s) / (d_i - d_s)


def damper_scale(distances, jacobians, qdot, d_i: float, d_s: float, xi: float) -> float:
    """The largest s in [0, 1] with ``s * J_k . qdot >= bound_k`` for every contact k with
    ``distances[k] < d_i``; 0 when a contact at or below d_s is approached (see the module
    docstring). ``distances (n,)`` m, ``jacobians (n, J)``, ``qdot (J,)``; a single column with
    ``qdot = [1.0]`` passes measured distance rates (m/s) directly."""
    s = 1.0
    qdot = np.asarray(qdot, float)
    for d, jac in zip(np.asarray(distances, float), jacobians):
        if not d < d_i:
            continue
        rate = float(np.dot(jac, qdot))  # d_dot at the commanded velocity (m/s)
        bound = float(damper_bound(d, d_i, d_s, xi))
        if rate >= bound:
            continue
        if bound >= 0.0 or rate >= 0.0:  # at/below d_s, approaching: stop
            return 0.0
        s = min(s, bound / rate)
    return max(0.0, min(1.0, s))
