#!/usr/bin/env python3
"""Velocity damper on the collision monitor's contacts (issue 13's worked example).

A small rclpy node between a velocity command and a robot: it subscribes to the monitor's
``~/contacts`` (``contacts``, remap it: ``-r contacts:=/collision_monitor/contacts``), takes
commanded joint velocities, scales them so that no reported distance closes faster than the
classic velocity damper allows (Faverjon and Tournassoud, 1987; Kanoun et al.), integrates them
and publishes the JointState it commands (``joint_states``: positions and velocities, which the
monitor reads back: the loop is closed through DDS).

The damper, for every contact with distance d below the influence distance d_i::

    d_dot >= -xi (d - d_s) / (d_i - d_s)        (d_s: safety distance, xi: m/s)

with d_dot = J q_dot (J: the contact's ``jacobian``, one value per joint in
``ContactArray.joint_names`` order). The rule implemented (:func:`damper_scale`, from
``ambf_collision/monitor/damper.py``, which the virtual fixture's velocity scale shares): the largest
uniform scale s in [0, 1] such that s J_k q_dot >= bound_k for every contact k. A contact
whose distance is already moving away at the commanded velocity (J q_dot >= bound) does not
limit s; one approaching too fast limits s to bound / (J q_dot) when its bound is negative
(d > d_s); at or below d_s (bound >= 0) an approaching command gets s = 0 (the robot stops; a
uniform scale cannot push it away). Uniform scaling keeps the commanded direction (the path),
only slows it. Contacts older than ``max_contact_age`` stop the robot (s = 0) as well.

Commands: ``~/command`` (sensor_msgs/JointState with ``name`` and ``velocity``) or, with
``demo: true``, the derivative of the demo arm's scripted trajectory
(``ambf_collision.demo.trajectory``) from ``demo_start`` to ``demo_end`` (s of the script;
the increment per step is the script's own position increment, so undamped the robot follows
the script exactly; the script starts once the monitor has evaluated this node's first joint
state: a contacts message stamped at or after it). ``enabled: false`` passes the command
through unchanged (the comparison).

Run beside the monitor (demo arm; its ``report_distance`` must be at least d_i, or contacts
between the two are not seen)::

    ros2 run ambf_collision collision_monitor --ros-args \
        -p adf_files:="['examples/demo/demo_arm.yaml']" -p report_distance:=0.1
    python3 examples/velocity_damper.py --ros-args -r contacts:=/collision_monitor/contacts -p demo:=true

``damper_scale`` needs no ROS (``examples/plot_velocity_damper.py`` uses it with the library in
the loop to draw docs/velocity_damper.png).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ambf_collision.monitor.damper import damper_bound, damper_scale

__all__ = ["damper_bound", "damper_scale", "main"]


def _make_node():
    import rclpy  # noqa: F401 (ROS only here: damper_scale is importable without it)
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    from ambf_collision.msg import ContactArray

    class VelocityDamper(Node):
        """See the module docstring. Parameters: ``joint_names`` (plain or qualified, the
        command's and the published order), ``initial_positions`` (rad / m), ``rate`` (Hz),
        ``influence_distance`` d_i, ``safety_distance`` d_s (m), ``xi`` (m/s), ``enabled``,
        ``max_contact_age`` (s), ``demo``, ``demo_start``, ``demo_end`` (s)."""

        def __init__(self):
            super().__init__("velocity_damper")
            p = {k: self.declare_parameter(k, v).value for k, v in (
                ("joint_names", ["shoulder_yaw", "shoulder_pitch", "elbow", "wrist"]),
                ("initial_positions", [0.0]), ("rate", 100.0), ("influence_distance", 0.08),
                ("safety_distance", 0.01), ("xi", 0.3), ("enabled", True),
                ("max_contact_age", 0.25), ("demo", False), ("demo_start", 0.0),
                ("demo_end", 1e9))}
            self.p = p
            self.names = list(p["joint_names"])
            self.q = np.zeros(len(self.names))
            self.qdot_cmd = np.zeros(len(self.names))
            self.dt = 1.0 / p["rate"]
            if p["demo"]:
                from ambf_collision.demo.trajectory import demo_joint_array
                self.script = demo_joint_array
                self.t = p["demo_start"]
                self.q[:] = demo_joint_array(self.t)
            else:
                self.script = None
                init = list(p["initial_positions"])
                if len(init) == len(self.names):
                    self.q[:] = init
            self.contacts = None
            self.contacts_time = -math.inf
            self.first_stamp = None  # s: stamp of this node's first published joint state
            self.live = False  # the monitor has evaluated one of our joint states
            self.columns = None  # (joint_names of the contacts, column of each of ours)
            self.scale = 1.0
            self.create_subscription(ContactArray, "contacts", self._on_contacts, 10)
            self.create_subscription(JointState, "~/command", self._on_command, 10)
            self.pub = self.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
            self.create_timer(self.dt, self._step)

        def _on_contacts(self, msg):
            self.contacts = msg
            self.contacts_time = self._now()
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            if self.first_stamp is not None and stamp >= self.first_stamp - 1e-9:
                self.live = True

        def _on_command(self, msg):
            index = {n: i for i, n in enumerate(msg.name)}
            if len(msg.velocity) == len(msg.name):
                for k, n in enumerate(self.names):
                    if n in index and math.isfinite(msg.velocity[index[n]]):
                        self.qdot_cmd[k] = msg.velocity[index[n]]

        def _now(self) -> float:
            return self.get_clock().now().nanoseconds * 1e-9

        def _our_columns(self, msg):
            """Per joint of ours, its column in the contacts' Jacobians (by plain or
            qualified name; -1 when the monitor does not know it)."""
            names = tuple(msg.joint_names)
            if self.columns is None or self.columns[0] != names:
                plain = [n.rsplit("/", 1)[-1] for n in names]
                cols = [names.index(n) if n in names else plain.index(n) if n in plain else -1
                        for n in self.names]
                self.columns = (names, np.array(cols))
            return self.columns[1]

        def _damped_scale(self, qdot) -> float:
            if not self.p["enabled"]:
                return 1.0
            msg = self.contacts
            if msg is None or self._now() - self.contacts_time > self.p["max_contact_age"]:
                return 0.0  # nothing known about the surroundings: do not move
            if msg.status != ContactArray.STATUS_OK:
                return 0.0
            cols = self._our_columns(msg)
            full = np.zeros(len(msg.joint_names))  # our command in the contacts' columns
            full[cols[cols >= 0]] = qdot[cols >= 0]
            return damper_scale([c.distance for c in msg.contacts],
                                [np.asarray(c.jacobian) for c in msg.contacts], full,
                                self.p["influence_distance"], self.p["safety_distance"],
                                self.p["xi"])

        def _step(self):
            if self.script is not None:  # the script's own increment over one step
                if self.live and self.t < self.p["demo_end"]:
                    step = self.script(self.t + self.dt) - self.script(self.t)
                    self.t += self.dt
                else:
                    step = np.zeros(len(self.names))
                qdot = step / self.dt
            else:
                qdot = self.qdot_cmd.copy()
            self.scale = self._damped_scale(qdot)
            self.q += self.scale * qdot * self.dt
            msg = JointState(name=self.names, position=self.q.tolist(),
                             velocity=(self.scale * qdot).tolist())
            msg.header.stamp = self.get_clock().now().to_msg()
            if self.first_stamp is None:
                self.first_stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            self.pub.publish(msg)

    return VelocityDamper


def main(argv=None) -> int:
    import rclpy

    rclpy.init(args=argv if argv is not None else sys.argv)
    node = _make_node()()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, rclpy.executors.ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
