"""The ``ambf-collision`` command-line tool (no ROS needed)."""
