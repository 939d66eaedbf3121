"""The ``cart_frames`` executable: the base frames of a dVRK cart's arms on TF.

Reads the cart file (parameter ``cart``, format :mod:`ambf_collision.ros.dvrk_cart`) and, for
each arm named in ``arms`` (comma-separated; '' = every arm of the file):

* ``placement: {xyz, rpy}``: publishes ``world_frame -> base_frame`` once on ``/tf_static``
  (transient local, as a static broadcaster does; xyz in m, rpy in rad, fixed-axis roll, pitch,
  yaw as in URDF);
* ``placement: {pose_topic: T}``: relays each ``geometry_msgs/PoseStamped`` of ``T`` (a dVRK's
  set-up joints, ``/SUJ/PSM1/measured_cp``) to ``/tf`` as ``header.frame_id -> base_frame`` at
  the message's stamp; a pose that is not finite or whose quaternion is not of unit length
  (within 1e-3) is dropped with a throttled warning;
* ``placement: tf``: nothing (another node publishes ``base_frame``).
"""

from __future__ import annotations

import math

from geometry_msgs.msg import PoseStamped, TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from ambf_collision.ros.dvrk_cart import chosen_arms, load_cart
from ambf_collision.ros.parameters import STRING, Parameter, declare_parameters
from ambf_collision.ros.paths import resolve_package_path
from ambf_collision.ros.run import run_node

PARAMETERS = {
    "cart": Parameter("package://ambf_collision/config/dvrk_cart.yaml", STRING,
                      "cart file (ambf_collision/ros/dvrk_cart.py) naming each arm's placement"),
    "arms": Parameter("", STRING, "comma-separated arms of the cart file ('' = every arm)"),
}

QUATERNION_TOLERANCE = 1e-3
"""Largest accepted | |q| - 1 | of a relayed pose (dimensionless): a dVRK pose is normalised
to ~1e-9; a larger error is a corrupt message, not rounding."""


def quaternion_from_rpy(roll: float, pitch: float, yaw: float) -> tuple:
    """``(x, y, z, w)`` of the rotation ``Rz(yaw) Ry(pitch) Rx(roll)`` (URDF's rpy, rad)."""
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    return (sr * cp * cy - cr * sp * sy, cr * sp * cy + sr * cp * sy,
            cr * cp * sy - sr * sp * cy, cr * cp * cy + sr * sp * sy)


class CartFrames(Node):
    """Publishes the chosen arms' base frames (module docstring)."""

    def __init__(self):
        super().__init__("cart_frames")
        p = declare_parameters(self, PARAMETERS)
        cart = load_cart(resolve_package_path(p["cart"]))
        arms = chosen_arms(cart, p["arms"] or list(cart.arms))
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL,
                             reliability=ReliabilityPolicy.RELIABLE)
        self.static_pub = self.create_publisher(TFMessage, "/tf_static", latched)
        self.tf_pub = self.create_publisher(TFMessage, "/tf", 100)
        static = []
        now = self.get_clock().now().to_msg()
        for arm in arms:
            if arm.placement[0] == "static":
                t = TransformStamped()
                t.header.stamp, t.header.frame_id, t.child_frame_id = now, cart.world_frame, arm.base_frame
                (t.transform.translation.x, t.transform.translation.y,
                 t.transform.translation.z) = arm.placement[1]
                (t.transform.rotation.x, t.transform.rotation.y, t.transform.rotation.z,
                 t.transform.rotation.w) = quaternion_from_rpy(*arm.placement[2])
                static.append(t)
            elif arm.placement[0] == "topic":
                self.create_subscription(
                    PoseStamped, arm.placement[1],
                    lambda msg, frame=arm.base_frame: self.relay(msg, frame), 10)
        if static:
            self.static_pub.publish(TFMessage(transforms=static))
        self.relayed = 0
        self.get_logger().info(
            f"cart_frames: {len(static)} static base frame(s), "
            f"{sum(a.placement[0] == 'topic' for a in arms)} relayed from pose topics "
            f"({cart.path})")

    def relay(self, msg: PoseStamped, frame: str) -> None:
        """One set-up-joint pose to ``/tf`` (``header.frame_id -> frame``)."""
        p, q = msg.pose.position, msg.pose.orientation
        values = (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
        norm = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
        if (not all(math.isfinite(v) for v in values) or not msg.header.frame_id
                or abs(norm - 1.0) > QUATERNION_TOLERANCE):
            self.get_logger().warning(f"cart_frames: pose for {frame} dropped: not finite, no "
                                      "frame_id, or not a unit quaternion",
                                      throttle_duration_sec=5.0)
            return
        t = TransformStamped()
        t.header = msg.header
        t.child_frame_id = frame
        t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = p.x, p.y, p.z
        t.transform.rotation = q
        self.tf_pub.publish(TFMessage(transforms=[t]))
        self.relayed += 1


def main(argv=None) -> int:
    return run_node(CartFrames, "cart_frames", argv, restore_signals=False)
