"""The node's result topics, ``~/contacts`` (ContactArray) and ``~/probes`` (ProbeArray), and
the stamp their headers carry.

The stamp is the evaluated joint state's own (``builtin_interfaces/Time``, republished as it
came; built once from its ``sec`` and ``nanosec`` when the state came raw), or the output's
time when the output carries no joint state's stamp (a heartbeat, an unstamped state).

A message is built only while its topic has a subscriber: one that no one reads reaches no
one. It is written by the scene's serializer (CDR bytes, ``ros/cdr.py``) where that matches
the middleware's serialization, else by its writer (an rclpy message filled in place,
``ros/convert.py``); ``ros/scene_loading.py`` prepares both with the scene.
"""

from __future__ import annotations

from builtin_interfaces.msg import Time

from ambf_collision.msg import ContactArray, ProbeArray
from ambf_collision.ros.convert import Stamp, stamp_msg

__all__ = ["ResultPublisher"]


class ResultPublisher:
    """The publishers of ``~/contacts`` and ``~/probes`` of ``node``, created at once (before
    the scene loads, so that subscribers can discover them meanwhile), and the stamp state."""

    def __init__(self, node):
        self.contacts_pub = node.create_publisher(ContactArray, "~/contacts", 10)
        self.probes_pub = node.create_publisher(ProbeArray, "~/probes", 10)
        self.prepared = None  # the PreparedScene whose writers and serializers are used
        self._stamp_pair = (None, None, 0, 0)  # (float stamp, Time or None, sec, nanosec)
        self._nanoseconds: dict = {}  # float stamp -> its integer ns, of the latest accepted states

    def new_scene(self, prepared) -> None:
        """Publish with the writers and serializers of ``prepared`` from now on."""
        self.prepared = prepared

    def joint_state_accepted(self, stamp, msg, sec: int, nanosec: int) -> None:
        """The monitor took a joint state: ``stamp`` (s, as the monitor keeps it; None for an
        unstamped state), its message stamp ``msg`` (None: built from ``sec``, ``nanosec`` when
        first needed)."""
        self._stamp_pair = (stamp, msg, sec, nanosec)
        if stamp is not None:   # (a step spans two accepted states: a few are enough)
            if len(self._nanoseconds) >= 8:
                del self._nanoseconds[next(iter(self._nanoseconds))]
            self._nanoseconds[stamp] = sec * 1_000_000_000 + nanosec

    def contact_stamps(self, out):
        """The times of contact of ``out`` as ``(sec, nanosec)``, exact: ``t0 + s (t1 - t0)``
        in the integer nanoseconds of the step's two joint-state stamps (``out.step_start``,
        ``out.stamp``; ``s``: ``out.contact_fractions``, +inf -> ``(0, 0)``). None (the
        writers then convert ``out.contact_times``) when either stamp was not a received one."""
        fractions = getattr(out, "contact_fractions", None)
        if fractions is None or not len(out.contact_info):
            return None
        start, end = self._nanoseconds.get(out.step_start), self._nanoseconds.get(out.stamp)
        if start is None or end is None:
            return None
        return [divmod(start + round(f * (end - start)), 1_000_000_000) if f <= 1.0 else (0, 0)
                for f in fractions.tolist()]

    def stamp(self, out) -> Time:
        """``builtin_interfaces/Time`` of ``out.stamp``: the accepted joint state's own stamp
        when ``out`` carries it (built once from its sec and nanosec when it came raw)."""
        f, msg, sec, nanosec = self._stamp_pair
        if f != out.stamp:
            return stamp_msg(out.stamp)
        if msg is None:
            msg = Time(sec=sec, nanosec=nanosec)
            self._stamp_pair = (f, msg, sec, nanosec)
        return msg

    def _serializer_stamp(self, out):
        """The stamp the serializers write (``sec``, ``nanosec``): as :meth:`stamp`, without
        building a ``Time`` message for the joint state's own stamp."""
        f, msg, sec, nanosec = self._stamp_pair
        return Stamp(sec, nanosec) if f == out.stamp else self.stamp(out)

    def publish_contacts(self, out) -> None:
        """``~/contacts`` of ``out`` (the node publishes it as soon as the step is done,
        before the probes are evaluated)."""
        if not self.contacts_pub.get_subscription_count():
            return
        serializer = self.prepared.contact_serializer
        stamps = self.contact_stamps(out) if len(out.contact_info) else None
        self.contacts_pub.publish(serializer.serialize(out, self._serializer_stamp(out), stamps)
                                  if serializer is not None
                                  else self.prepared.contact_writer.fill(out, self.stamp(out), stamps))

    def probes_wanted(self) -> bool:
        """True when the scene has probes and someone subscribes to ``~/probes``: the step
        evaluates them then, to publish them right after the contacts."""
        return self.prepared.probe_writer is not None and self.probes_pub.get_subscription_count() > 0

    def publish_probes(self, out) -> None:
        """``~/probes`` of a finished step (called when :meth:`probes_wanted`)."""
        writer = self.prepared.probe_writer
        serializer = self.prepared.probe_serializer
        if out.probes is None:
            self.probes_pub.publish(writer.empty(out.status, self.stamp(out)))
        elif serializer is not None:
            self.probes_pub.publish(serializer.serialize(out.status, self._serializer_stamp(out),
                                                         out.probes))
        else:
            self.probes_pub.publish(writer.fill(out.status, self.stamp(out), out.probes))
