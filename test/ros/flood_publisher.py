"""A joint-state publisher process for the load tests and bench/bench_soak.py (not a test).

    python flood_publisher.py --rate HZ (--seconds S | --until-told)
                              [--trajectory | --names a,b --positions 0,1] [--last 0.1,0.2]

Publishes ``sensor_msgs/JointState`` on ``/joint_states`` (sensor-data QoS) at ``rate`` Hz
(0: as fast as it can) for ``seconds``, stamped with the wall clock just before each publish. The
message is serialized once and only its stamp (and, with ``--trajectory``, its positions along
the demo joint script) is patched per message, so a Python process reaches 20 kHz. With
``--last``, one more message with those positions ends the flood (the state the node must
answer). Prints ``READY`` once a subscriber matched, then ``SENT <n> <last stamp ns>``.
The domain comes from ``ROS_DOMAIN_ID``.

``--until-told`` (a handshake instead of a duration): the flood lasts until a line arrives on
stdin; then the ``--last`` message goes out, ``LAST <n> <its stamp ns>`` is printed, and that same
message (same bytes, same stamp: the same newest state) is sent again every 0.1 s until a
second line or the end of stdin, so that a best-effort copy lost on a busy machine does not lose
the state; then ``SENT``.
"""

from __future__ import annotations

import argparse
import struct
import sys
import time


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rate", type=float, default=0.0)
    ap.add_argument("--seconds", type=float, default=None)
    ap.add_argument("--until-told", action="store_true", help="flood until a line on stdin")
    ap.add_argument("--names", default="shoulder_yaw,shoulder_pitch,elbow,wrist")
    ap.add_argument("--positions", default="0,0,0,0")
    ap.add_argument("--trajectory", action="store_true", help="the demo joint script")
    ap.add_argument("--last", default="")
    args = ap.parse_args(argv)
    if (args.seconds is None) == (not args.until_told):
        ap.error("give one of --seconds and --until-told")

    import numpy as np
    import rclpy
    from rclpy.qos import qos_profile_sensor_data
    from rclpy.serialization import serialize_message
    from rclpy.signals import SignalHandlerOptions
    from sensor_msgs.msg import JointState

    rclpy.init(signal_handler_options=SignalHandlerOptions.NO)
    node = rclpy.create_node("flood_publisher")
    pub = node.create_publisher(JointState, "/joint_states", qos_profile_sensor_data)
    names = args.names.split(",")
    positions = [float(x) for x in args.positions.split(",")]
    if args.trajectory:
        from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array

        names = list(JOINT_NAMES)
        positions = demo_joint_array(0.0).tolist()
    # serialized once with marker positions, to find where the positions lie (the stamp is at
    # bytes 4..12, after the encapsulation header)
    marker = np.arange(1, len(positions) + 1) * 1.25e-300
    data = bytearray(serialize_message(JointState(name=names, position=marker.tolist())))
    pos_at = bytes(data).find(marker.astype("<f8").tobytes())
    assert pos_at > 0
    data[pos_at:pos_at + 8 * len(positions)] = np.asarray(positions, "<f8").tobytes()
    pos_end = pos_at + 8 * len(positions)
    deadline = time.monotonic() + 20.0
    while pub.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    told = _stdin_lines() if args.until_told else None
    print("READY", flush=True)
    period = 1.0 / args.rate if args.rate > 0 else 0.0
    start = time.perf_counter()
    end = start + args.seconds if args.seconds is not None else float("inf")
    sent = 0
    stamp = 0
    while told is None or not told.acquire(blocking=False):
        now = time.perf_counter()
        if now >= end:
            break
        if period:
            target = start + sent * period
            if target > now:
                time.sleep(target - now)
        if args.trajectory:
            q = demo_joint_array(sent * (period or 1e-3))
            data[pos_at:pos_end] = np.asarray(q, "<f8").tobytes()
        stamp = time.time_ns()
        struct.pack_into("<iI", data, 4, *divmod(stamp, 1_000_000_000))
        pub.publish(bytes(data))
        sent += 1
    if args.last:
        last = [float(x) for x in args.last.split(",")]
        data[pos_at:pos_end] = np.asarray(last, "<f8").tobytes()
        time.sleep(0.05)
        stamp = time.time_ns()
        struct.pack_into("<iI", data, 4, *divmod(stamp, 1_000_000_000))
        pub.publish(bytes(data))
        sent += 1
        if told is not None:
            print(f"LAST {sent} {stamp}", flush=True)
            while not told.acquire(timeout=0.1):
                pub.publish(bytes(data))
    print(f"SENT {sent} {stamp}", flush=True)
    time.sleep(0.2)
    node.destroy_node()
    rclpy.shutdown()
    return 0


def _stdin_lines():
    """A semaphore released once per line read from stdin (and at its end, for good) by a
    daemon thread."""
    import threading

    lines = threading.Semaphore(0)

    def read():
        for _ in sys.stdin:
            lines.release()
        for _ in range(2):
            lines.release()

    threading.Thread(target=read, daemon=True).start()
    return lines


if __name__ == "__main__":
    sys.exit(main())
