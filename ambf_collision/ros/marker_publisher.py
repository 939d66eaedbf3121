"""``~/markers`` of the node: the latest evaluation as a ``visualization_msgs/MarkerArray``, at most
``marker_rate`` per second, only while someone subscribes, never before an answer.

The node offers each evaluation right after its contacts (and probes) are published
(:meth:`MarkerPublisher.offer`). When markers are due, a one-shot timer builds them
:attr:`MarkerPublisher.AFTER_ANSWER` later: in the gap before the next joint state, once the
answer's local subscribers have read it, so that building the view does not take a CPU from
them (on a 2-CPU machine at 1 kHz that was half of the node's p99 excess over the echo
floor, ``bench/bench_latency.py``). They go out on a grid of ``1 / marker_rate`` s (wall time)
while evaluations keep coming; a timer at ``marker_rate`` publishes the last evaluation when
they stop. The array is built by ``ros/markers.py`` as serialized bytes from a template per
layout (``cache``: the scene's templates, replaced on every reload).
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

    AFTER_ANSWER = 0.3e-3  # s from an answer to its markers: local delivery takes 0.1-0.3 ms

    def __init__(self, node, rate: float, enabled: bool, build):
        self.node = node
        self.enabled = enabled
        self.published = 0  # arrays published since start-up (``/diagnostics``)
        self._build = build
        self._cache: dict = {}
        self._latest = self._marked = None  # the latest evaluation offered, the last published
        self._due = 0.0  # time.perf_counter() from which the next array may go out
        self._offered = -1.0  # time.perf_counter() of the latest offer
        self._publisher = node.create_publisher(MarkerArray, "~/markers", 1)
        self._period = 1.0 / rate  # s
        self._timer = node.create_timer(self._period, self._on_timer)
        self._after_answer = node.create_timer(self.AFTER_ANSWER, self._on_after_answer)
        self._after_answer.cancel()  # one-shot: armed by offer()

    def set_rate(self, rate: float) -> None:
        """A new ``marker_rate`` (Hz): the grid and the timer follow it."""
        self._period = 1.0 / rate
        self.node.destroy_timer(self._timer)
        self._timer = self.node.create_timer(self._period, self._on_timer)

    @property
    def period(self) -> float:
        """``1 / marker_rate`` (s)."""
        return self._period

    def wanted(self) -> bool:
        """Markers are on and someone subscribes."""
        return self.enabled and self._publisher.get_subscription_count() > 0

    def publish_other(self, array: MarkerArray) -> None:
        """Another view's ``MarkerArray`` (a message or its serialized bytes) on the same topic
        (the clouds: ``ros/cloud_markers.py``; its own namespaces, its own schedule)."""
        self._publisher.publish(array)
        self.published += 1

    def new_scene(self, cache: dict) -> None:
        """A scene was installed: its templates (``cache``), and nothing of the old one to show."""
        self._cache = cache
        self._latest = self._marked = None

    def offer(self, out) -> None:
        """An evaluation whose answers are out: its markers :attr:`AFTER_ANSWER` later, when
        due."""
        self._latest = out
        self._offered = now = time.perf_counter()
        if now >= self._due and self._after_answer.is_canceled():
            self._after_answer.reset()

    def _on_after_answer(self) -> None:
        self._after_answer.cancel()
        self.publish_when_due()

    def _on_timer(self) -> None:
        """Every ``1 / marker_rate`` s: the last evaluation's markers once evaluations stopped
        (none offered for a period), as offers arm their own timer."""
        if time.perf_counter() - self._offered >= self._period:
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
