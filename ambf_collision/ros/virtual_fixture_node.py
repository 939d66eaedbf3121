"""The ``virtual_fixture`` executable (issue 37 §2): the monitor's contacts in, the master's
wrench out (``monitor/virtual_fixture.py`` has the law, its frames, units and ramp).

Subscribes to ``contacts_topic`` (ambf_collision/ContactArray, default
``/collision_monitor/contacts``). Publishes at once for each ContactArray (its answer, stamped
with the array's stamp: the joint state the monitor evaluated, so a controller or a bench can
match the wrench to the state it answers), and on a timer of ``rate`` Hz of the node's clock (sim
time with ``use_sim_time``, stamped with that clock) when no answer went out in the last period:
while contacts come late or not at all, the wrench still ramps on time.

- ``wrench_topic`` (geometry_msgs/WrenchStamped, default ``/MTMR/body/servo_cf``, the dVRK
  master's Cartesian force command): the force in the master's frame (N; torque 0),
  ``frame_id`` = ``wrench_frame``; it ramps to zero within
  ``ramp_time`` (<= 10 ms) once the contacts are older than ``max_contact_age``, the monitor's
  status is not OK, or a message holds a non-finite value;
- with ``publish_velocity_scale``, ``velocity_scale_topic`` (std_msgs/Float64, default
  ``velocity_scale``): the factor in [0, 1] by which the teleoperation should scale the PSM's
  commanded velocity (the velocity damper's rule on the tool contacts' measured distance rates,
  ``monitor/damper.py``); 0 while the contacts are not fresh and good (nothing known: stop).

Topic names are remappable (``-r /MTMR/body/servo_cf:=/MTML/body/servo_cf``); relative ones
take the node's namespace. A bad parameter is one line on stderr and exit 2 (``ros/run.py``).
"""

from __future__ import annotations

import math

import numpy as np
from geometry_msgs.msg import WrenchStamped
from rclpy.node import Node
from std_msgs.msg import Float64

from ambf_collision.monitor.virtual_fixture import (FixtureContacts, FixtureParams,
                                                    VirtualFixture, contact_sides,
                                                    velocity_scale)
from ambf_collision.msg import ContactArray
from ambf_collision.ros.parameters import (BOOL, NUMBER, NUMBERS, STRING, STRINGS, ConfigError,
                                           Parameter, declare_parameters)
from ambf_collision.ros.run import run_node

__all__ = ["PARAMETERS", "VirtualFixtureNode", "main"]

P = Parameter
PARAMETERS = {
    "contacts_topic": P("/collision_monitor/contacts", STRING, "the monitor's ContactArray "
                        "topic"),
    "wrench_topic": P("/MTMR/body/servo_cf", STRING, "geometry_msgs/WrenchStamped topic of the "
                      "master's force command"),
    "wrench_frame": P("", STRING, "frame_id of the published wrenches (the master's frame)"),
    "tool_bodies": P(["/PSM1/*"], STRINGS, "the tool's bodies (names or fnmatch patterns, "
                     "qualified or plain): contacts between a tool body and another body push"),
    "registration": P([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], NUMBERS, "rotation from "
                      "the monitor's world frame into the master's frame, 9 numbers row major "
                      "(the teleoperation's registration)"),
    "stiffness": P(400.0, NUMBER, "spring k (N per m inside the activation distance)", 0.0, 1e5),
    "damping": P(5000.0, NUMBER, "Hunt-Crossley damper lam (N s/m^2: N per m inside the "
                 "activation distance per m/s of approach)", 0.0, 1e7),
    "activation_distance": P(0.02, NUMBER, "d_a (m): the fixture acts on contacts closer than "
                             "this (the monitor's report distance must be at least this)",
                             0.0, 1.0, low_open=True),
    "safety_distance": P(0.003, NUMBER, "d_s (m, below d_a): inside it the spring pushes also "
                         "while the tool moves away", 0.0, 1.0, low_open=True),
    "max_force": P(5.0, NUMBER, "f_max (N): cap of the force", 0.0, 100.0),
    "rate_band": P(0.005, NUMBER, "v_0 (m/s): approach rate from which the full spring acts "
                   "(slower approaches get a share, moving away none)", 0.0, 10.0,
                   low_open=True),
    "ramp_time": P(0.01, NUMBER, "s from the full wrench to zero when the contacts go stale or "
                   "bad (and back up)", 0.0, 0.01, low_open=True),
    "max_contact_age": P(0.05, NUMBER, "s after which the latest contacts are stale", 0.0, 60.0,
                         low_open=True),
    "rate": P(1000.0, NUMBER, "wrenches per second (Hz) published on the timer while no "
              "contacts are answered", 1.0, 10000.0),
    "publish_velocity_scale": P(False, BOOL, "also publish the PSM velocity scale"),
    "velocity_scale_topic": P("velocity_scale", STRING, "std_msgs/Float64 topic of the scale"),
    "influence_distance": P(0.05, NUMBER, "d_i (m) of the velocity damper (its d_s is "
                            "safety_distance)", 0.0, 1.0, low_open=True),
    "xi": P(0.3, NUMBER, "xi (m/s) of the velocity damper", 0.0, 10.0, low_open=True),
}


class VirtualFixtureNode(Node):
    """See the module docstring."""

    def __init__(self, **kwargs):
        super().__init__("virtual_fixture", **kwargs)
        p = declare_parameters(self, PARAMETERS)
        try:
            params = FixtureParams(**{k: p[k] for k in (
                "stiffness", "damping", "activation_distance", "safety_distance", "max_force",
                "registration", "rate_band", "ramp_time", "max_contact_age")})
            self.fixture = VirtualFixture(params)
        except ValueError as err:
            raise ConfigError(f"parameter {err}") from None
        if p["publish_velocity_scale"] and not p["safety_distance"] < p["influence_distance"]:
            raise ConfigError("parameter influence_distance: must be above safety_distance")
        self.p = p
        self.tools = list(p["tool_bodies"])
        self.sides_cache: dict = {}
        self.scale = 0.0
        self.received = 0  # ContactArray messages taken
        self.rejected = 0  # messages that could not be read (treated as not OK)
        self.active = None  # the fixture's state last logged (fresh or not)
        self.create_subscription(ContactArray, p["contacts_topic"], self._on_contacts, 10)
        self.wrench_pub = self.create_publisher(WrenchStamped, p["wrench_topic"], 10)
        self.scale_pub = (self.create_publisher(Float64, p["velocity_scale_topic"], 10)
                          if p["publish_velocity_scale"] else None)
        self.msg = WrenchStamped()
        self.msg.header.frame_id = p["wrench_frame"]
        self.period_ns = int(round(1e9 / p["rate"]))
        self.answered_ns = None  # node-clock time (ns) of the last answer to a ContactArray
        self.create_timer(1.0 / p["rate"], self._on_timer)
        self.get_logger().info(
            f"virtual_fixture: {p['contacts_topic']} -> {p['wrench_topic']} at {p['rate']:g} "
            f"Hz, tool {self.tools}")

    def _contacts(self, msg) -> FixtureContacts:
        n = len(msg.contacts)
        distance, rate = np.empty(n), np.empty(n)
        normal = np.empty((n, 3))
        for k, c in enumerate(msg.contacts):
            distance[k], rate[k] = c.distance, c.distance_rate
            normal[k] = (c.normal.x, c.normal.y, c.normal.z)
        side, obstacle = contact_sides([(c.body_1, c.body_2) for c in msg.contacts],
                                       self.tools, self.sides_cache)
        return FixtureContacts(distance, normal, rate, side, obstacle)

    def _on_contacts(self, msg):
        clock_now = self.get_clock().now()
        now = clock_now.nanoseconds * 1e-9
        self.received += 1
        try:
            contacts = self._contacts(msg)
        except (TypeError, ValueError, AttributeError):  # what a hand-made message may hold
            self.rejected += 1
            self.fixture.on_contacts(now, False, None)
            return
        ok = msg.status == ContactArray.STATUS_OK
        self.fixture.on_contacts(now, ok, contacts)
        if self.scale_pub is not None:
            self.scale = (velocity_scale(contacts, self.p["influence_distance"],
                                         self.p["safety_distance"], self.p["xi"])
                          if self.fixture.good else 0.0)
        self.answered_ns = clock_now.nanoseconds
        self._publish(now, msg.header.stamp)

    def _on_timer(self):
        clock_now = self.get_clock().now()
        if (self.answered_ns is not None
                and 0 < clock_now.nanoseconds - self.answered_ns < self.period_ns):
            return  # an answer went out less than a period ago (at the same time: published)
        self._publish(clock_now.nanoseconds * 1e-9, clock_now.to_msg())

    def _publish(self, now: float, stamp):
        """The wrench (and scale) of node-clock time ``now`` (s), stamped ``stamp``."""
        wrench = self.fixture.output(now)
        fresh = self.fixture.fresh(now)
        if fresh != self.active:
            self.active = fresh
            if fresh:  # one call site per severity (rclpy refuses a site that changes it)
                self.get_logger().info("virtual_fixture: contacts fresh and OK: rendering")
            else:
                self.get_logger().warning("virtual_fixture: no fresh OK contacts: the wrench "
                                          "ramps to zero")
        self.msg.header.stamp = stamp
        f = self.msg.wrench.force
        f.x, f.y, f.z = (float(v) if math.isfinite(v) else 0.0 for v in wrench[:3])
        self.wrench_pub.publish(self.msg)
        if self.scale_pub is not None:
            self.scale_pub.publish(Float64(data=float(self.scale) if fresh else 0.0))


def main(argv=None) -> int:
    """Run until SIGINT/SIGTERM; exit 0 (2 for a bad parameter)."""
    return run_node(VirtualFixtureNode, "virtual_fixture", argv, restore_signals=False)


if __name__ == "__main__":
    raise SystemExit(main())
