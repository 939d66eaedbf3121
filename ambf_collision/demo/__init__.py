"""The bundled demo: joint script, text view and PNG picture (no ROS needed)."""
