"""Monitor layer (no ROS): what the collision_monitor node decides and publishes.

``config`` (statuses, parameters), ``joint_states`` (merging, validation, per-source names),
``scheduling`` (rate cap, warning throttle), ``sanitize`` (no NaN out), ``scene`` (files ->
model and probes, shared with the CLI) and ``monitor`` (:class:`CollisionMonitor`).
"""

from ambf_collision.geometry import kernel_cache  # noqa: F401 - before any kernel: numba's cache stamp
