"""Monitor layer: the ROS-free logic of the ``collision_monitor`` node."""
