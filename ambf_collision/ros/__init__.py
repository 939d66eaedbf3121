"""ROS 2 layer: the only part of the package that imports rclpy or ROS messages."""

from ambf_collision.geometry import kernel_cache  # noqa: F401 - before any kernel: numba's cache stamp
