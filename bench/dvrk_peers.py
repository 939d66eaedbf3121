#!/usr/bin/env python3
"""The helper processes of ``bench_dvrk``: the cart's CRTK **publisher** and the **echo** node.

    python bench/dvrk_peers.py echo --arms PSM1,PSM2,PSM3,ECM      (with ROS_DOMAIN_ID set)
    python bench/dvrk_peers.py publish --domain D --arms ... --rate 1000 --seconds S

* ``echo``: subscribes to every arm's ``/<arm>/measured_js`` and answers each message at once
  with a geometry_msgs/WrenchStamped on ``/MTMR/body/servo_cf`` carrying its stamp: what DDS +
  rclpy + a Python callback cost for the same topics and QoS, with no monitor and no fixture;
* ``publish``: each arm's sensor_msgs/JointState (its CRTK joint names, the actuated joints)
  at ``rate`` Hz on ``/<arm>/measured_js`` (sensor-data QoS), one after the other in each
  period, each stamped with the wall clock just before its ``publish`` (so every stamp is
  distinct). PSM1 approaches the patient (examples/dvrk/patient.yaml) and retreats: its
  insertion follows :func:`insertion` (peak speed 0.094 m/s, the jaws in the tissue for part of
  each 2 s cycle); the other arms sway slowly. Protocol on stdin/stdout as
  ``latency_peers.py``: ``READY``, a line on stdin, ``START``, the window, ``END <count>`` once
  the window's stamps (ns, int64) are written to ``--stamps`` (a .npy file), ``TOTAL <n>``.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from process_stats import paced, without_gc_pauses

NAMES = {"PSM": ["outer_yaw", "outer_pitch", "outer_insertion", "outer_roll",
                 "outer_wrist_pitch", "outer_wrist_yaw"],
         "ECM": ["outer_yaw", "outer_pitch", "insertion", "outer_roll"]}
WARM = 1.0   # s of publishing before the measured window (not counted)


def insertion(t: float) -> float:
    """PSM1's insertion (m) at t (s): 0.12 +- 0.03 m over 2 s, so that the jaws reach into the
    patient (from 0.134 m) for about a third of each cycle; peak speed 0.03 * pi = 0.094 m/s."""
    return 0.12 + 0.03 * math.sin(math.pi * t)


def arm_positions(arm: str, t: float) -> list:
    """The CRTK joint values of ``arm`` at time ``t`` (s)."""
    sway = 0.05 * math.sin(0.5 * t + len(arm))
    if arm == "ECM":
        return [sway, 0.1, 0.05, 0.0]
    if arm == "PSM1":
        return [0.0, 0.0, insertion(t), 0.3 * math.sin(t), 0.1, 0.0]
    return [sway, 0.1 + sway, 0.10, 0.0, 0.0, 0.0]


def echo_main(arms: list) -> int:
    """Each measured_js answered with a WrenchStamped carrying its stamp."""
    from geometry_msgs.msg import WrenchStamped
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    from ambf_collision.ros.run import run_node

    class Echo(Node):
        def __init__(self):
            super().__init__("virtual_fixture")
            self.out = WrenchStamped()
            self.pub = self.create_publisher(WrenchStamped, "/MTMR/body/servo_cf", 10)
            for arm in arms:
                self.create_subscription(JointState, f"/{arm}/measured_js", self.on_js,
                                         qos_profile_sensor_data)

        def on_js(self, msg):
            self.out.header.stamp = msg.header.stamp
            self.pub.publish(self.out)

    return run_node(Echo, "bench_dvrk_echo", sys.argv[:1])


def publish_main(domain: int, arms: list, rate: float, seconds: float, stamps_file: str) -> int:
    """The publisher process (module docstring)."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    rclpy.init(domain_id=domain, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("bench_dvrk_publisher")
    pubs = [node.create_publisher(JointState, f"/{arm}/measured_js", qos_profile_sensor_data)
            for arm in arms]
    msgs = [JointState(name=NAMES["ECM" if arm == "ECM" else "PSM"]) for arm in arms]
    deadline = time.monotonic() + 30.0
    while any(p.get_subscription_count() == 0 for p in pubs) and time.monotonic() < deadline:
        time.sleep(0.01)
    print("READY", flush=True)
    sys.stdin.readline()
    total = 0

    def run(t0: float, duration: float, stamps):
        nonlocal total
        for k in paced(rate, int(math.ceil(duration * rate - 1e-9))):
            t = t0 + k / rate
            for arm, pub, msg in zip(arms, pubs, msgs):
                msg.position = arm_positions(arm, t)
                wall = time.time_ns()
                msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(wall, 1_000_000_000)
                pub.publish(msg)
                total += 1
                if stamps is not None:
                    stamps.append(wall)

    with without_gc_pauses():
        run(0.0, WARM, None)
        stamps = []
        print("START", flush=True)
        run(WARM, seconds, stamps)
    np.save(stamps_file, np.array(stamps, dtype=np.int64))
    print(f"END {len(stamps)}", flush=True)
    time.sleep(0.5)
    print(f"TOTAL {total}", flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("role", choices=("echo", "publish"))
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--arms", default="PSM1,PSM2,PSM3,ECM")
    ap.add_argument("--rate", type=float, default=1000.0, help="Hz per arm")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--stamps", default="dvrk_stamps.npy", help="where the window's stamps go")
    args = ap.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a]
    if args.role == "echo":
        return echo_main(arms)
    return publish_main(args.domain, arms, args.rate, args.seconds, args.stamps)


if __name__ == "__main__":
    raise SystemExit(main())
