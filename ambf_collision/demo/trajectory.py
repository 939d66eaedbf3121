"""Joint script of the bundled demo arm (``examples/demo/demo_arm.yaml``).

A smooth periodic trajectory (period :data:`PERIOD` s) through key poses in joint space:
free motion, self-contact (the fingertip folds onto the upper arm), floor contact (the fingertip
presses 4 mm into the floor), a probe touch (the fingertip pad presses 2 mm on the table top) and
back home. Between key poses every joint follows a half-cosine blend, so positions are C1 (zero
velocity at each key pose) and the script repeats seamlessly. Contact poses are held for
:data:`HOLD` s so that a live view or a test can observe them.

The key poses were solved for the demo geometry (planar inverse kinematics in the turret plane);
``test/test_demo_model.py`` checks with the real model that each phase produces its contact.
Positions in radians, times in seconds.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "JOINT_NAMES",
    "PERIOD",
    "HOLD",
    "PHASES",
    "KEYFRAMES",
    "demo_joint_positions",
    "demo_joint_array",
    "demo_phase",
]

JOINT_NAMES = ("shoulder_yaw", "shoulder_pitch", "elbow", "wrist")
"""The demo's movable joints (plain ADF names), in the order of :func:`demo_joint_array`."""

PERIOD = 16.0
"""Duration of one loop of the script (s)."""

HOLD = 1.0
"""How long each contact pose is held (s)."""

_HOME = (0.0, 0.35, 0.8, 0.6)
_FREE = (0.8, 0.05, 1.2, 0.9)
# fingertip sphere folded onto the upper arm, about 3 mm deep
_SELF = (0.8, 0.3, 2.5, 1.74)
_LIFT_1 = (-0.4, 0.3, 1.0, 0.6)
# fingertip pole 4 mm below the floor (z = -0.004 m), 0.5 m out, pointing straight down
_FLOOR = (-1.5, 1.1718, 1.5849, 0.3849)
_LIFT_2 = (-0.6, 0.45, 1.3, 1.1)
# fingertip pole 0.10 m above the table top (z = 0.40 m) at (0.55, 0), pointing down
_ABOVE = (0.0, 0.5682, 1.2988, 1.2746)
# fingertip pole 2 mm into the table top (z = 0.298 m) at (0.55, 0), pointing down
_PROBE = (0.0, 0.6738, 1.4358, 1.0320)

KEYFRAMES = (
    (0.0, _HOME),
    (2.0, _FREE),
    (3.5, _SELF),
    (4.5, _SELF),
    (5.8, _LIFT_1),
    (7.5, _FLOOR),
    (8.5, _FLOOR),
    (9.5, _LIFT_2),
    (10.5, _ABOVE),
    (11.5, _PROBE),
    (12.5, _PROBE),
    (13.5, _ABOVE),
    (16.0, _HOME),
)
"""``(time s, positions in JOINT_NAMES order)``; the last equals the first (periodic)."""

PHASES = {
    "free": (0.0, 2.5),
    "self_contact": (3.5, 4.5),
    "floor_contact": (7.5, 8.5),
    "probe_touch": (11.5, 12.5),
    "back": (13.5, 16.0),
}
"""Named phases ``(start s, end s)`` within one period; contact phases are the holds."""

_T = np.array([k[0] for k in KEYFRAMES])
_Q = np.array([k[1] for k in KEYFRAMES])


def demo_joint_array(t: float) -> np.ndarray:
    """Joint positions (rad, ``JOINT_NAMES`` order) at time ``t`` (s; any real, periodic)."""
    t = float(t)
    if not math.isfinite(t):
        raise ValueError(f"demo time must be finite, got {t!r}")
    tau = t % PERIOD
    k = int(np.searchsorted(_T, tau, side="right")) - 1
    k = min(max(k, 0), len(_T) - 2)
    u = (tau - _T[k]) / (_T[k + 1] - _T[k])
    s = 0.5 - 0.5 * math.cos(math.pi * min(max(u, 0.0), 1.0))
    return _Q[k] + s * (_Q[k + 1] - _Q[k])


def demo_joint_positions(t: float) -> dict:
    """``{joint name: position (rad)}`` of the demo arm at time ``t`` (s)."""
    return dict(zip(JOINT_NAMES, demo_joint_array(t).tolist()))


def demo_phase(t: float) -> str:
    """Name of the phase at time ``t`` (s), or ``"moving"`` between phases."""
    tau = float(t) % PERIOD
    for name, (a, b) in PHASES.items():
        if a <= tau <= b:
            return name
    return "moving"
