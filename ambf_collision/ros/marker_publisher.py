"""``~/markers`` of the node: the latest evaluation as a ``visualization_msgs/MarkerArray``, at most
``marker_rate`` per second, only while someone subscribes, never before an answer.

The node offers each evaluation right after its contacts and probes are published
(:meth:`MarkerPublisher.offer`): the markers are then built in the gap before the next joint
state. They go out on a grid of ``1 / marker_rate`` s (wall time) while evaluations keep coming;
a timer at ``marker_rate`` publishes the last evaluation when they stop. The array is built
by ``ros/markers.py`` as serialized bytes from a template per layout (``cache``: the scene's
templates, replaced on every reload).
"""

from __future__ import annotations

import time

from visualization_msgs.msg import MarkerArray

__all__ = ["MarkerPublisher"]


class MarkerPublisher:
    """The node's ``~/markers`` publisher and its schedule.

    ``build(out, cache)`` returns the serialized MarkerArray of an evaluation (``out``: a
    ``MonitorOutput`` whose result buffers hold until the next evaluation, which cannot run
    during a callback) or raises ``ValueError``; ``rate`` in Hz (> 0); ``enabled``: the
    ``publish_markers`` parameter."""

    def __init__(self, node, rate: float, enabled: bool, build):
        self.node = node
        self.enabled = enabled
        self.published = 0  # arrays published since start-up (``/diagnostics``)
        self._build = build
        self._cache: dict = {}
        self._latest = self._marked = None  # the latest evaluation offered, the last published
        self._due = 0.0  # time.perf_counter() from which the next array may go out
        self._publisher = node.create_publisher(MarkerArray, "~/markers", 1)
        self._period = 1.0 / rate  # s
        self._timer = node.create_timer(self._period, self.publish_when_due)

    def set_rate(self, rate: float) -> None:
        """A new ``marker_rate`` (Hz): the grid and the timer follow it."""
        self._period = 1.0 / rate
        self.node.destroy_timer(self._timer)
        self._timer = self.node.create_timer(self._period, self.publish_when_due)

    def new_scene(self, cache: dict) -> None:
        """A scene was installed: its templates (``cache``), and nothing of the old one to show."""
        self._cache = cache
        self._latest = self._marked = None

    def offer(self, out) -> None:
        """An evaluation whose answers are out: its markers, when due."""
        self._latest = out
        self.publish_when_due()

    def publish_when_due(self) -> None:
        """The markers of the latest evaluation, when there is a new one, someone subscribes and
        ``1 / marker_rate`` has passed since the last (on a grid of that period while they keep
        coming). A build error is logged (throttled): markers are a view, the answers go on."""
        out = self._latest
        now = time.perf_counter()
        if (not self.enabled or out is None or out is self._marked or now < self._due
                or self._publisher.get_subscription_count() == 0):
            return
        self._marked = out
        late = now - self._due > self._period  # none for a while: a new grid
        self._due = (now if late else self._due) + self._period
        try:
            raw = self._build(out, self._cache)
        except ValueError as err:
            self.node.get_logger().error(f"markers not published: {err}",
                                         throttle_duration_sec=5.0)
            return
        self._publisher.publish(raw)  # the serialized MarkerArray
        self.published += 1
