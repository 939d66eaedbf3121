"""The monitor's controller outputs (issue 13) on the demo arm, no ROS: each contact row's
Jacobian, rate and body-frame points, the velocities flag, per-class report distances.

Oracles: the library's own per-contact Jacobians (the monitor must pass them through in order)
and J.qdot of the velocities sent; the demo file's structure (floor and table are joined to no
other body: every pair with one of them is an environment pair, every other pair a self pair).
"""

from __future__ import annotations

import math

import numpy as np
from conftest import DEMO_ARM

from ambf_collision.model import Model
from ambf_collision.monitor.config import MonitorConfig
from ambf_collision.model.contact_rows import CONTROLLER_VALUES, GEOMETRY_VALUES
from ambf_collision.monitor.monitor import CollisionMonitor

MOVABLE = ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]
SELF = [0.8, 0.3, 2.5, 1.74]  # the demo trajectory's self-contact pose
QDOT = [0.3, -0.2, 0.5, 0.1]


def _monitor():
    return CollisionMonitor(Model.from_files([str(DEMO_ARM)]), MonitorConfig(report_distance=0.1))


def test_rows_carry_the_models_jacobians_and_rates_only_with_velocities():
    mon = _monitor()
    J = len(mon.model.joint_names)
    mon.on_joint_state(MOVABLE, SELF, 1.0, 1.0, velocities=QDOT)
    out = mon.step(1.0)
    n = len(out.contacts)
    assert n > 0 and out.velocities_given and out.joint_names == mon.model.joint_names
    assert out.contact_rows.shape == (n, GEOMETRY_VALUES + J + CONTROLLER_VALUES)
    rows = out.contact_rows[:, GEOMETRY_VALUES:]  # Jacobian, rate, point_1_local, point_2_local
    np.testing.assert_array_equal(rows[:, :J], out.result.jacobians)
    qdot = np.zeros(J)
    plain = mon.model.joint_plain_names
    qdot[[plain.index(m) for m in MOVABLE]] = QDOT
    np.testing.assert_allclose(rows[:, J], rows[:, :J] @ qdot, rtol=1e-12, atol=1e-15)
    assert np.abs(rows[:, J]).max() > 0.0
    np.testing.assert_array_equal(rows[:, J + 1:J + 4], out.result.point_1_local)
    # a message without velocities: rates exactly 0, flag false, Jacobians unchanged
    mon.on_joint_state(MOVABLE, SELF, 1.1, 1.1)
    out2 = mon.step(1.1)
    assert not out2.velocities_given and (out2.contact_rows[:, GEOMETRY_VALUES + J] == 0.0).all()
    np.testing.assert_array_equal(out2.contact_rows[:, GEOMETRY_VALUES:GEOMETRY_VALUES + J], rows[:, :J])
    # a NaN velocity: the same, nothing non-finite anywhere
    mon.on_joint_state(MOVABLE, SELF, 1.2, 1.2, velocities=[math.nan, 0.0, 0.0, 0.0])
    out3 = mon.step(1.2)
    assert not out3.velocities_given and np.isfinite(out3.contact_rows).all()
    assert (out3.contact_rows[:, GEOMETRY_VALUES + J] == 0.0).all()


def test_report_distances_per_pair_class():
    mon = _monitor()
    seen = set()
    env_bodies = {"/ambf/env/floor", "/ambf/env/table"}

    def is_env(pair):
        return bool(env_bodies & set(pair))

    for self_rd, env_rd in ((0.0, 0.1), (0.1, 0.0), (0.05, 0.5)):
        mon.set_report_distances(self_rd, env_rd)
        mon.on_joint_state(MOVABLE, SELF, 2.0, 2.0)
        out = mon.step(2.0)
        got = {(c.body_1, c.body_2): c.distance for c in out.contacts}
        # a reference from one evaluation with a report distance covering both
        mon.set_report_distances(-1.0, -1.0)
        mon.config = mon.config.replaced(report_distance=max(self_rd, env_rd))
        mon.on_joint_state(MOVABLE, SELF, 3.0, 3.0)
        wide = {(c.body_1, c.body_2): c.distance for c in mon.step(3.0).contacts}
        mon.config = mon.config.replaced(report_distance=0.1)
        expect = {p: d for p, d in wide.items() if d < (env_rd if is_env(p) else self_rd)}
        assert got == expect, (self_rd, env_rd)
        assert len(out.contact_rows) == len(out.contact_info) == len(out.contacts)
        seen |= {is_env(p) for p in got}
    assert seen == {True, False}  # both classes were reported
