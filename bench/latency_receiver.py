"""The receiving side of the ROS benches (``bench_latency``, ``bench_soak``): the target's replies
and diagnostics, read in the bench's own process."""

from __future__ import annotations

import struct
import time

__all__ = ["Receiver"]


class Receiver:
    """The bench's own node in a context of its own on ``domain``: the target's replies on
    ``topic`` (default its ``~/contacts``; ``message`` their type, default ContactArray: any
    message whose first field is a ``std_msgs/Header``) taken raw (each reply's stamp and
    receipt time in ``replies``), the monitor's ``/diagnostics`` (``diag``, ``counts``,
    ``received``) and, with ``markers``, a subscriber to ``~/markers`` as RViz would be; an
    EventsExecutor spun by :meth:`spin_while`."""

    def __init__(self, domain: int, markers: bool = False,
                 topic: str = "/collision_monitor/contacts", message=None):
        import rclpy
        from diagnostic_msgs.msg import DiagnosticArray
        from rclpy.context import Context
        from rclpy.qos import QoSProfile

        from ambf_collision.msg import ContactArray

        try:
            from rclpy.experimental import EventsExecutor as Executor
        except ImportError:  # older rclpy
            from rclpy.executors import SingleThreadedExecutor as Executor

        self.rclpy = rclpy
        self.context = Context()
        rclpy.init(context=self.context, domain_id=domain)
        self.node = rclpy.create_node("bench_latency", context=self.context)
        self.executor = Executor(context=self.context)
        self.executor.add_node(self.node)
        self.replies = []  # (stamp ns, wall ns at receipt); list.append is atomic
        self.diag = []  # (wall s, compute mean ms, compute max ms, callback mean ms)
        self.counts = []  # (wall s, joint_states_good, coalesced) from each /diagnostics
        self.received = None  # the target's joint_states_good in its latest /diagnostics
        self.source = ""  # its latest 'source camera' value (bench_latency --cloud)
        unpack, clock, append = struct.Struct("<iI").unpack_from, time.time_ns, self.replies.append

        def on_contacts(raw: bytes):  # CDR: 4-byte encapsulation header, then header.stamp
            now = clock()
            sec, nsec = unpack(raw, 4)
            append((sec * 1_000_000_000 + nsec, now))

        self.sub = self.node.create_subscription(message or ContactArray, topic, on_contacts,
                                                 QoSProfile(depth=1000), raw=True)
        self.node.create_subscription(DiagnosticArray, "/diagnostics", self.on_diag, 10)
        self.markers = 0
        if markers:  # a viewer's subscription (RViz): the node builds markers only for one
            from visualization_msgs.msg import MarkerArray

            def on_markers(raw: bytes):
                self.markers += 1

            self.node.create_subscription(MarkerArray, "/collision_monitor/markers", on_markers,
                                          1, raw=True)

    def spin_while(self, busy):
        """Dispatch callbacks in this thread while ``busy()`` (spin_once: the EventsExecutor's
        ``spin()`` run in a thread here kept a core busy while idle and could not be shut down)."""
        while busy():
            self.executor.spin_once(timeout_sec=0.05)

    def on_diag(self, msg):
        for st in msg.status:
            if "collision_monitor" in st.name:
                v = {kv.key: kv.value for kv in st.values}
                if "joint_states_good" in v:
                    self.received = int(v["joint_states_good"])
                    self.counts.append((time.time(), self.received, int(v.get("coalesced", 0)),
                                        int(v.get("evaluations", -1)),
                                        int(v.get("joint_states_bad", 0))))
                if "source camera" in v:
                    self.source = v["source camera"]
                try:
                    self.diag.append((time.time(), float(v.get("compute_time_ms") or "nan"),
                                      float(v.get("compute_time_max_ms") or "nan"),
                                      float(v.get("cycle_time_ms") or "nan")))
                except ValueError:
                    pass

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        self.rclpy.shutdown(context=self.context)
