"""The ``joint_player`` executable: plays the demo arm's joint script as sensor_msgs/JointState.

Publishes ``joint_states`` (remappable; sensor-data QoS like the node's subscription) at
``rate`` Hz with positions from :func:`ambf_collision.demo_trajectory.demo_joint_array` at
script time ``start_time + time_scale * (elapsed seconds)``. Stops cleanly on SIGINT, SIGTERM
or after ``duration`` seconds (0 = run until stopped); exit status 0, no traceback.

Parameters: ``rate`` (Hz, > 0), ``duration`` (s, >= 0), ``time_scale`` (>= 0, 0 freezes the
pose), ``start_time`` (s into the script), ``joint_prefix`` (prepended to each joint name, e.g.
a qualified ADF namespace; default none: plain names, which the monitor accepts).
"""

from __future__ import annotations

import time

from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array
from ambf_collision.ros.run import run_node


class JointPlayer(Node):
    """Publishes the demo joint script on a wall-clock timer."""

    def __init__(self):
        super().__init__("joint_player")

        def rng(lo, hi):
            return [FloatingPointRange(from_value=lo, to_value=hi)]

        self.declare_parameter("rate", 50.0, ParameterDescriptor(
            description="JointState messages per second (Hz)", floating_point_range=rng(0.1, 10000.0)))
        self.declare_parameter("duration", 0.0, ParameterDescriptor(
            description="Stop after this many seconds (0: until SIGINT/SIGTERM)",
            floating_point_range=rng(0.0, 1e9)))
        self.declare_parameter("time_scale", 1.0, ParameterDescriptor(
            description="Script seconds per wall-clock second (0 freezes the pose)",
            floating_point_range=rng(0.0, 100.0)))
        self.declare_parameter("start_time", 0.0, ParameterDescriptor(
            description="Script time (s) at start"))
        self.declare_parameter("joint_prefix", "", ParameterDescriptor(
            description="Prefix added to every joint name"))
        p = self.get_parameter
        self.rate = float(p("rate").value)
        self.duration = float(p("duration").value)
        self.time_scale = float(p("time_scale").value)
        self.start_time = float(p("start_time").value)
        prefix = str(p("joint_prefix").value)
        self.msg = JointState()
        self.msg.name = [prefix + n for n in JOINT_NAMES]
        self.pub = self.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
        self.t0 = time.monotonic()
        self.done = False
        self.sent = 0
        self.timer = self.create_timer(1.0 / self.rate, self.on_timer)
        self.get_logger().info(
            f"joint_player: {len(JOINT_NAMES)} joints at {self.rate:g} Hz"
            + (f" for {self.duration:g} s" if self.duration > 0 else " until stopped"))

    def on_timer(self):
        elapsed = time.monotonic() - self.t0
        if self.duration > 0 and elapsed >= self.duration:
            self.done = True
            return
        q = demo_joint_array(self.start_time + self.time_scale * elapsed)
        self.msg.header.stamp = self.get_clock().now().to_msg()
        self.msg.position = q.tolist()
        self.pub.publish(self.msg)
        self.sent += 1


def main(argv=None) -> int:
    """Run until SIGINT/SIGTERM or ``duration``; exit 0."""
    return run_node(JointPlayer, "joint_player", argv, done=lambda node: node.done)


if __name__ == "__main__":
    raise SystemExit(main())
