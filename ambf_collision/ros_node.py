"""The ``collision_monitor`` ROS 2 node (first slice): a thin adapter around the core.

Subscribes ``joint_states`` (sensor_msgs/JointState, sensor-data QoS) and publishes
``~/contacts`` (ambf_collision/ContactArray) at ``rate`` Hz with an honest status.
"""

from __future__ import annotations

import math
import sys

import rclpy
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, ParameterType
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from ambf_collision.msg import Contact, ContactArray


def _load_model(paths):
    """The compiled ADF model, or None when no file is given."""
    if not paths:
        return None
    from ambf_collision.model import Model

    return Model.from_files(list(paths))


class CollisionMonitorNode(Node):
    """Evaluates the ADF collision model for every cycle and publishes the contacts."""

    def __init__(self):
        super().__init__("collision_monitor")
        self.declare_parameter(
            "adf_files",
            [""],
            ParameterDescriptor(
                type=ParameterType.PARAMETER_STRING_ARRAY,
                description="AMBF ADF description files (paths) loaded into one world",
                read_only=True,
            ),
        )
        self.declare_parameter(
            "world_frame",
            "world",
            ParameterDescriptor(description="Frame of all published positions", read_only=True),
        )
        self.declare_parameter(
            "rate",
            50.0,
            ParameterDescriptor(
                description="Evaluations per second (Hz)",
                floating_point_range=[FloatingPointRange(from_value=0.1, to_value=1000.0)],
            ),
        )
        self.declare_parameter(
            "report_distance",
            0.05,
            ParameterDescriptor(
                description="Pairs closer than this (m) are published as contacts",
                floating_point_range=[FloatingPointRange(from_value=0.0, to_value=10.0)],
            ),
        )
        paths = [p for p in self.get_parameter("adf_files").value if p]
        self.world_frame = self.get_parameter("world_frame").value
        self.model = _load_model(paths)
        self.data = self.model.create_data() if self.model is not None else None
        self.last_stamp = None
        self.bad_reason = ""

        self.pub = self.create_publisher(ContactArray, "~/contacts", 10)
        self.sub = self.create_subscription(
            JointState, "joint_states", self.on_joint_state, qos_profile_sensor_data
        )
        self.timer = self.create_timer(1.0 / self.get_parameter("rate").value, self.on_timer)
        self.get_logger().info(
            f"collision_monitor: {len(paths)} ADF file(s), world frame '{self.world_frame}'"
        )

    def on_joint_state(self, msg: JointState):
        if len(msg.name) != len(msg.position) or not all(map(math.isfinite, msg.position)):
            self.bad_reason = "names and positions differ in length or a position is not finite"
            self.get_logger().warn(f"bad joint state: {self.bad_reason}", throttle_duration_sec=2.0)
            return
        self.bad_reason = ""
        if self.model is not None:
            self.model.set_joint_positions(self.data, list(msg.name), list(msg.position))
        self.last_stamp = msg.header.stamp

    def on_timer(self):
        out = ContactArray()
        out.header.frame_id = self.world_frame
        out.min_distance = math.inf
        if self.bad_reason:
            out.status = ContactArray.STATUS_BAD_JOINT_STATE
        elif self.last_stamp is None:
            out.status = ContactArray.STATUS_NO_JOINT_STATE
        else:
            out.status = ContactArray.STATUS_OK
            out.header.stamp = self.last_stamp
        if out.status == ContactArray.STATUS_OK and self.model is not None:
            result = self.model.evaluate(
                self.data, report_distance=self.get_parameter("report_distance").value
            )
            out.min_distance = float(result.min_distance)
            out.pairs_checked = int(result.pairs_checked)
            out.contacts = [_contact_msg(c) for c in result.contacts]
        self.pub.publish(out)


def _contact_msg(c) -> Contact:
    m = Contact()
    m.body_1, m.body_2 = c.body_1, c.body_2
    m.shape_1, m.shape_2 = int(c.shape_1), int(c.shape_2)
    m.distance = float(c.distance)
    for field, v in (("point_1", c.point_1), ("point_2", c.point_2), ("position", c.position)):
        p = getattr(m, field)
        p.x, p.y, p.z = (float(x) for x in v)
    m.normal.x, m.normal.y, m.normal.z = (float(x) for x in c.normal)
    return m


def main(argv=None) -> int:
    """Run the node until SIGINT/SIGTERM; exit 0 then, 2 on a bad ADF file."""
    rclpy.init(args=argv if argv is not None else sys.argv)
    node = None
    try:
        node = CollisionMonitorNode()
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except ValueError as err:  # AdfError / ShapeError: a clear message, no traceback
        print(f"collision_monitor: {err}", file=sys.stderr)
        return 2
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
