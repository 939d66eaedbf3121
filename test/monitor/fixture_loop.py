"""A teleoperation loop for the virtual-fixture tests (issue 37): a hand holding the master, the
PSM following it through the teleop scale, the monitor's contacts, the fixture's wrench back
to the master. No ROS: the DDS test (test/ros/test_virtual_fixture_node.py) reuses the hand,
the approaches and the teleop mapping.

Model: ``test/model/adf_models/fixture/`` (a Cartesian PSM, tip sphere radius 4 mm at joint
values + (0, 0, 0.3) m; an organ BOX with its top face at z = 0.2 m and a rod CAPSULE).

Hand (a mass-damper, per approach drawn in a range): the master and the hand holding it, mass
m (kg), the hand a damper b (N s/m) towards the velocity it intends, v_i (m/s, master frame)::

    m dv/dt = b (v_i - v) + F_master

so in free space the master moves at v_i, and against the fixture it stops where the fixture
pushes back b |v_i| (N). The PSM moves by ``dx_W = SCALE R^T dx_M`` (R the registration).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from conftest import TEST_DIR

FILES = [TEST_DIR / "model" / "adf_models" / "fixture" / "cartesian_psm.yaml",
         TEST_DIR / "model" / "adf_models" / "fixture" / "environment.yaml"]
JOINTS = ["x", "y", "z"]
TIP_AT_ZERO = np.array([0.0, 0.0, 0.3])  # m, world: the tip's centre at joint values 0
TIP_RADIUS = 0.004  # m
TOOL = ["/PSM1/*"]
SCALE = 0.2  # the dVRK's default teleoperation scale (PSM motion per master motion)
DT = 0.001  # s: the dVRK's teleoperation period (1 kHz)
ORGAN_TOP, ORGAN_HALF = 0.2, 0.05  # m: the organ's top face z and half width (x and y)
ROD_X, ROD_Z, ROD_RADIUS = 0.15, 0.27, 0.01  # m: the rod's axis (along y) and radius
SPEEDS = (0.05, 0.2)  # m/s of the PSM's tip: the range
HAND_MASS = (0.2, 0.5)  # kg: an MTM's apparent mass at the grip with a hand on it
HAND_DAMPING = (1.0, 3.0)  # N s/m: a relaxed to a firm grip
START_GAP = 0.002  # m: approaches start this far outside the activation distance
HOLD = 0.1  # s the hand keeps pushing after its free approach would have arrived
RETREAT = 0.06  # s of the retreat: the hand reverses its intended velocity


@dataclass
class Approach:
    """One scripted approach: the tip's start (m, W), the unit direction it moves in (W),
    the PSM's intended speed (m/s), the hand (kg, N s/m) and the registration R (W -> M)."""

    start: np.ndarray
    direction: np.ndarray
    speed: float
    mass: float
    damping: float
    registration: np.ndarray

    @property
    def master_intent(self) -> np.ndarray:
        """The hand's intended master velocity (m/s, M): the PSM's intent over the scale."""
        return self.registration @ self.direction * (self.speed / SCALE)


def random_rotation(rng) -> np.ndarray:
    q = rng.normal(size=4)
    x, y, z, w = q / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def _cone(rng, axis, half_angle) -> np.ndarray:
    """A unit vector within ``half_angle`` (rad) of the unit ``axis``, uniform on the cap."""
    cos = 1.0 - rng.uniform() * (1.0 - math.cos(half_angle))
    phi = rng.uniform(0.0, 2 * math.pi)
    helper = np.array([1.0, 0.0, 0.0]) if abs(axis[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(axis, helper)
    e1 /= np.linalg.norm(e1)
    e2 = np.cross(axis, e1)
    sin = math.sqrt(max(0.0, 1.0 - cos * cos))
    return cos * axis + sin * (math.cos(phi) * e1 + math.sin(phi) * e2)


def random_approach(rng, activation_distance: float) -> Approach:
    """Towards a point of the organ's top face (its edges included: 70 %) or of the rod's side
    (30 %), from within 50 degrees of the surface's inward normal, starting with the tip
    ``activation_distance + START_GAP`` away from that point along the approach."""
    if rng.uniform() < 0.7:
        target = np.array([rng.uniform(-1.1, 1.1) * ORGAN_HALF,
                           rng.uniform(-1.1, 1.1) * ORGAN_HALF, ORGAN_TOP])
        inward = np.array([0.0, 0.0, -1.0])
    else:
        target = np.array([ROD_X - ROD_RADIUS, rng.uniform(-0.08, 0.08), ROD_Z])
        inward = np.array([1.0, 0.0, 0.0])
    u = _cone(rng, inward, math.radians(50.0))
    start = target - u * (TIP_RADIUS + activation_distance + START_GAP)
    return Approach(start, u, rng.uniform(*SPEEDS), rng.uniform(*HAND_MASS),
                    rng.uniform(*HAND_DAMPING), random_rotation(rng))


def hand_step(v_master, intent, damping, mass, force_master, dt=DT) -> np.ndarray:
    """The master's velocity (m/s, M) after ``dt`` s of the hand's law, with ``force_master``
    (N, M) held: exact for the linear damper (no step-size limit on stiff grips)."""
    decay = math.exp(-damping * dt / mass)
    steady = intent + np.asarray(force_master, float) / damping
    return steady + (np.asarray(v_master, float) - steady) * decay


@dataclass
class Run:
    """What one approach did, per 1 ms step: the closest tool distance (m), its rate (m/s),
    the master wrench's force norm (N), the phase (0 approach, 1 retreat)."""

    distance: np.ndarray
    rate: np.ndarray
    force: np.ndarray
    phase: np.ndarray


def simulate(model, data, fixture, a: Approach, report_distance: float, hold=HOLD) -> Run:
    """One approach, its hold and its retreat in the library's loop: per step the model at the
    PSM's joint values and velocities (the monitor's evaluation), the fixture's wrench, the
    hand's response, the PSM moved by the teleop mapping."""
    from ambf_collision.monitor.virtual_fixture import contacts_from_rows

    d_a = fixture.params.activation_distance
    tip = a.start.copy()
    v_m = a.master_intent.copy()  # the hand is already moving at its intended speed
    travel = (d_a + START_GAP) / a.speed
    n_approach = int(round((travel + hold) / DT))
    n_total = n_approach + int(round(RETREAT / DT))
    out = Run(np.empty(n_total), np.empty(n_total), np.empty(n_total), np.zeros(n_total, int))
    cache: dict = {}
    to_psm = SCALE * a.registration.T  # master velocity (M) -> PSM velocity (W)
    forward = a.master_intent
    for k in range(n_total):
        intent = forward if k < n_approach else -forward
        v_psm = to_psm @ v_m
        model.set_joint_positions(data, JOINTS, tip - TIP_AT_ZERO)
        model.set_joint_velocities(data, JOINTS, v_psm)
        r = model.evaluate(data, report_distance=report_distance, near_only=True)
        c = contacts_from_rows(r.contact_info, r.contact_rows, TOOL, cache)
        t = k * DT
        fixture.on_contacts(t, True, c)
        wrench = fixture.output(t)
        tool = np.flatnonzero(c.side != 0)
        closest = tool[np.argmin(c.distance[tool])] if len(tool) else -1
        out.distance[k] = c.distance[closest] if closest >= 0 else math.inf
        out.rate[k] = c.rate[closest] if closest >= 0 else 0.0
        out.force[k] = np.linalg.norm(wrench[:3])
        out.phase[k] = k >= n_approach
        v_new = hand_step(v_m, intent, a.damping, a.mass, wrench[:3])
        tip = tip + to_psm @ (0.5 * DT * (v_m + v_new))
        v_m = v_new
    return out
