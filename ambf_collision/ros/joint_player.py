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

from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array
from ambf_collision.ros.parameters import NUMBER, STRING, Parameter, declare_parameters
from ambf_collision.ros.run import run_node

PARAMETERS = {
    "rate": Parameter(50.0, NUMBER, "JointState messages per second (Hz)", 0.1, 10000.0),
    "duration": Parameter(0.0, NUMBER, "stop after this many seconds (0: until SIGINT/SIGTERM)",
                          0.0, 1e9),
    "time_scale": Parameter(1.0, NUMBER, "script seconds per wall-clock second (0 freezes the "
                            "pose)", 0.0, 100.0),
    "start_time": Parameter(0.0, NUMBER, "script time (s) at start"),
    "joint_prefix": Parameter("", STRING, "prefix added to every joint name"),
}


class JointPlayer(Node):
    """Publishes the demo joint script on a wall-clock timer."""

    def __init__(self):
        super().__init__("joint_player")
        p = declare_parameters(self, PARAMETERS)
        self.rate = p["rate"]
        self.duration = p["duration"]
        self.time_scale = p["time_scale"]
        self.start_time = p["start_time"]
        prefix = p["joint_prefix"]
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
    return run_node(JointPlayer, "joint_player", argv, done=lambda node: node.done,
                    restore_signals=False)


if __name__ == "__main__":
    raise SystemExit(main())
