#!/usr/bin/env python3
"""The two helper processes of the ROS latency benches (``bench_latency``, ``bench_soak``): the
joint-state **publisher** and the **echo** node, the transport floor.

    python bench/latency_peers.py echo                 (with ROS_DOMAIN_ID set)
    python bench/latency_peers.py publish --domain D --rates 100,1000 --seconds S [--pose P]
    python bench/latency_peers.py clouds --domain D --cloud-rate 30

* ``echo``: a node named collision_monitor with the node's topics, QoS and executor loop
  (``ros/run.run_node``), which answers each JointState with an empty ContactArray carrying its
  stamp: what DDS + rclpy + a Python callback cost, with no evaluation;
* ``publish``: sensor_msgs/JointState at each rate (the demo joint script, or the static
  contact pose :data:`TOUCH`), stamped with the wall clock just before ``publish``. Protocol on
  stdin/stdout: ``READY`` once the target's subscription is matched, then it waits for a line on
  stdin; per rate :data:`WARM` s unrecorded, ``START <rate>``, the window, ``END <rate>
  <stamps ns...>``, :data:`DRAIN` s of silence; at the end ``TOTAL <n>`` (every joint state
  published, warm-ups included);
* ``clouds``: a sensor_msgs/PointCloud2 of :data:`CLOUD_POINTS` points in frame ``world`` at
  ``--cloud-rate`` Hz on ``/points`` (sensor-data QoS), stamped with the wall clock, until
  killed: uniform in the box around the demo arm ([-1, 1] x [-1, 1] x [0, 1.6] m, seeded; a
  new draw of 1 % of them each time, so that the node's tree is built from a new cloud), the
  robot's own image included. ``READY`` once a subscriber matched.
"""

from __future__ import annotations

import argparse
import math
import sys
import time

import numpy as np

from process_stats import paced, without_gc_pauses

TOUCH = (0.0, -math.acos(0.46), -math.pi + math.acos(0.46), 0.0)
"""The static contact pose (shoulder_yaw, shoulder_pitch, elbow, wrist): the forearm straight
down, the fingertip 1 mm into the floor (test/ros/test_node_full.py derives it)."""
CLOUD_POINTS = 24000  # the cloud size
WARM = 0.5  # s of publishing before each measured window (not counted)
DRAIN = 0.5  # s after each window for late replies


def echo_main() -> int:
    """A node named collision_monitor answering each JointState with an empty ContactArray."""
    from rclpy.node import Node
    from rclpy.qos import qos_profile_sensor_data
    from sensor_msgs.msg import JointState

    from ambf_collision.msg import ContactArray
    from ambf_collision.ros.run import run_node

    class Echo(Node):
        def __init__(self):
            super().__init__("collision_monitor")
            self.out = ContactArray()
            self.out.header.frame_id = "world"
            self.pub = self.create_publisher(ContactArray, "~/contacts", 10)  # as the node
            self.create_subscription(JointState, "joint_states", self.on_joint_state,
                                     qos_profile_sensor_data)

        def on_joint_state(self, msg):
            self.out.header.stamp = msg.header.stamp
            self.pub.publish(self.out)

    return run_node(Echo, "bench_latency_echo", sys.argv[:1])


def publish_main(domain: int, rates: list[float], seconds: float, pose: str = "moving") -> int:
    """The publisher process (see the module docstring for its protocol)."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

    rclpy.init(domain_id=domain, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("bench_latency_publisher")
    pub = node.create_publisher(JointState, "joint_states", qos_profile_sensor_data)
    msg = JointState()
    msg.name = list(JOINT_NAMES)
    deadline = time.monotonic() + 20.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    print("READY", flush=True)
    sys.stdin.readline()  # the receiver has matched the target's ContactArray publisher

    total = 0

    def run(rate, duration, stamps):
        nonlocal total
        n = int(np.ceil(duration * rate - 1e-9))
        script = ([list(TOUCH)] * n if pose == "static"  # before the clock starts
                  else [demo_joint_array(k / rate).tolist() for k in range(n)])
        for k in paced(rate, n):
            msg.position = script[k]
            wall = time.time_ns()
            msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(wall, 1_000_000_000)
            pub.publish(msg)
            total += 1
            if stamps is not None:
                stamps.append(wall)

    for rate in rates:
        with without_gc_pauses():  # a pause would publish late, then in a burst
            run(rate, WARM, None)
            stamps = []
            print(f"START {rate}", flush=True)
            run(rate, seconds, stamps)
        print(f"END {rate} " + " ".join(map(str, stamps)), flush=True)
        time.sleep(DRAIN)
    print(f"TOTAL {total}", flush=True)
    node.destroy_node()
    rclpy.shutdown()
    return 0


def clouds_main(domain: int, rate: float) -> int:
    """The cloud publisher (module docstring)."""
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.signals import SignalHandlerOptions

    from ambf_collision.ros.point_cloud import make_cloud

    rclpy.init(domain_id=domain, signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("bench_latency_clouds")
    rng = np.random.default_rng(39)
    points = rng.uniform((-1.0, -1.0, 0.0), (1.0, 1.0, 1.6), (CLOUD_POINTS, 3))
    msg = make_cloud(points, "world")
    pub = node.create_publisher(type(msg), "/points", qos_profile_sensor_data)
    deadline = time.monotonic() + 20.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    print("READY", flush=True)
    for _ in paced(rate, 10**9):
        k = rng.integers(0, CLOUD_POINTS, CLOUD_POINTS // 100)
        points[k] = rng.uniform((-1.0, -1.0, 0.0), (1.0, 1.0, 1.6), (len(k), 3))
        msg = make_cloud(points, "world", divmod(time.time_ns(), 1_000_000_000))
        pub.publish(msg)
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("role", choices=("echo", "publish", "clouds"))
    ap.add_argument("--domain", type=int, default=0)
    ap.add_argument("--rates", default="1000", help="Hz, comma-separated")
    ap.add_argument("--seconds", type=float, default=2.0, help="recorded seconds per rate")
    ap.add_argument("--pose", choices=("moving", "static"), default="moving")
    ap.add_argument("--cloud-rate", type=float, default=30.0, help="clouds: Hz")
    args = ap.parse_args(argv)
    if args.role == "echo":
        return echo_main()
    if args.role == "clouds":
        return clouds_main(args.domain, args.cloud_rate)
    return publish_main(args.domain, [float(r) for r in args.rates.split(",")], args.seconds,
                        args.pose)


if __name__ == "__main__":
    raise SystemExit(main())
