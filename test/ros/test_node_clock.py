"""A clock that jumps back (issue 12 #3: `ros2 bag play --loop`, a simulator reset), with a real
`/clock` publisher and the node in this process (``NodeInProcess``).

Sim time runs 100 s -> 103 s, then jumps back to 50 s and runs on. One sphere file is placed by a
TF root frame ('mover', republished at every sim step), so the node needs TF, its rate limiter
and heartbeat. Before the fix: after the jump `~/contacts` went silent (fallback TF cache: it
refused the older stamps) or nearly so (tf2_ros: 1 message in 8 s) while /diagnostics said OK.
Now, with either TF backend, OK contacts with the hand-derived distance come again within one
heartbeat period (0.1 s; the bound here allows for a loaded machine) and keep flowing.
"""

from __future__ import annotations

import time

import pytest
from ros_harness import SPHERE_ADF, NodeInProcess, domain, peer  # noqa: F401  (fixtures)

from ambf_collision.msg import ContactArray
from rclpy.qos import QoSProfile

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("backend", ["auto", "fallback"], ids=["tf2_ros", "fallback"])
def test_contacts_keep_flowing_after_the_clock_jumps_back(peer, tmp_path, backend, capfd):
    from geometry_msgs.msg import TransformStamped
    from rosgraph_msgs.msg import Clock
    from tf2_msgs.msg import TFMessage

    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(SPHERE_ADF.format(name="ball_a", ns="a", x=0.0))
    b.write_text(SPHERE_ADF.format(name="ball_b", ns="b", x=1.0))
    # ball_b at x = 1 in its file, the file placed at x = -0.5 by 'mover': gap 0.5 - 0.2 = 0.3
    node = NodeInProcess(peer, {"adf_files": [str(a), str(b)], "root_frames": ["", "mover"],
                                  "report_distance": 2.0, "heartbeat_rate": 10.0,
                                  "transform_tolerance": 0.5, "use_sim_time": True,
                                  "tf_backend": backend}, capfd=capfd)
    try:
        got = []  # (wall time of arrival, message)
        peer.node.create_subscription(ContactArray, "/collision_monitor/contacts",
                                      lambda m: got.append((time.monotonic(), m)), 10)
        clock_pub = peer.node.create_publisher(Clock, "/clock", 10)
        tf_pub = peer.node.create_publisher(TFMessage, "/tf", QoSProfile(depth=10))

        def step(sim):
            c = Clock()
            c.clock.sec, c.clock.nanosec = int(sim), int(round(sim % 1 * 1e9))
            clock_pub.publish(c)
            ts = TransformStamped()
            ts.header.stamp = c.clock
            ts.header.frame_id, ts.child_frame_id = "world", "mover"
            ts.transform.translation.x = -0.5
            ts.transform.rotation.w = 1.0
            tf_pub.publish(TFMessage(transforms=[ts]))
            peer.spin_for(0.05)

        def ok(m):
            return (m.status == ContactArray.STATUS_OK and m.contacts
                    and abs(m.contacts[0].distance - 0.3) < 1e-9)

        sim = 100.0
        end = time.monotonic() + 30.0
        while not (got and ok(got[-1][1])) and time.monotonic() < end:
            step(sim)
            sim += 0.05
        assert got and ok(got[-1][1]), got[-1:]
        while sim < 103.0:
            step(sim)
            sim += 0.05
        jump = time.monotonic()
        n_before = len(got)
        sim = 50.0
        sim_at_1s = None  # sim time one wall second after the jump
        while time.monotonic() < jump + 3.0:
            if sim_at_1s is None and time.monotonic() > jump + 1.0:
                sim_at_1s = sim
            step(sim)
            sim += 0.05
        after = [(t - jump, m) for t, m in got[n_before:]]
        good = [(t, m) for t, m in after if ok(m)]
        assert good, [(round(t, 2), m.status) for t, m in after[:10]]
        assert good[0][0] < 1.0, f"first OK output {good[0][0]:.2f} s after the jump"
        # the 10 Hz heartbeat runs on sim time, which this loop advances (0.05 s per step; a
        # step takes longer than 0.05 s of wall time on a loaded machine): at least 3/4 of the
        # heartbeats of the sim time that passed in the last ~2 s, all stamped in sim time
        late = [m for t, m in good if t > 1.0]
        expected = 10.0 * (sim - sim_at_1s)
        assert expected >= 10 and len(late) >= 0.75 * expected, (len(late), expected)
        assert all(40 <= m.header.stamp.sec <= 60 for m in late)
        assert ok(got[-1][1])
    finally:
        code, out, err = node.stop()
    assert code == 0 and "Traceback" not in out + err, err
    assert (out + err).count("clock jumped back") == 1, out + err
