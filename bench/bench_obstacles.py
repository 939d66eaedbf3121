#!/usr/bin/env python3
"""Sensed obstacles (issue 39): a 24,000-point cloud's intake and its cost per evaluation, on the
demo arm and on a dVRK-like arm (AMBF's PSM, ``blender-psm.yaml``, meshes as hulls as
``config/dvrk.yaml`` monitors them), in process, with the code path the node runs.

The cloud: what a depth camera 0.8 m from the arm sees, in the camera's frame: a wall behind the
arm (10,000 points), the floor (6,000), a hand-sized ball near the tool (4,000), and 4,000 points
on the arm's own shapes (its image), 1 mm noise, 2 % NaN (pixels without a return).

* **Intake** (target: cloud receipt to the first evaluation that uses it, p99 <= 2 ms): the
  ``PointCloud2`` decoded (``ros/point_cloud.decode_cloud``; its bytes made once), handed to
  ``CollisionMonitor.on_cloud`` (point set in world, self filter at the cloud's stamp, the rest
  in a new tree) and the next evaluation (``CollisionMonitor.step``), timed together, per cloud;
  the joints move between clouds.
* **Per evaluation** (target: at most +50 us against the same evaluation without the source):
  ``CollisionMonitor.step`` with a joint state before each (every joint moves: no pair kept),
  with the source's cloud in use and without a source, interleaved in rounds.

Run after ``make env`` (or with the package importable): ``bench/bench_obstacles.py [--clouds
N] [--evaluations N] [--rounds R]``. Times: median and p99 (single calls, perf_counter_ns); the
machine is shared, so compare the columns of one run.

Measured 2026-12-07 23:25 UTC (2-CPU VM, idle; defaults); 19:22 UTC in brackets, before the
build placed the points itself in kept arrays:

| arm | intake, median / p99 | points | evaluation without source | with source | added |
|---|---|---|---|---|---|
| demo arm (6 robot shapes) | 1.67 / 2.28 ms (3.39 / 4.02) | 19,554 kept, 3,908 on the robot | 0.036 / 0.097 ms | 0.113 / 0.247 ms | +77 us (+164) |
| dVRK PSM, hulls (14 hull shapes) | 10.7 / 17.3 ms (14.8 / 25.7) | 19,394 kept, 4,157 on the robot | 0.031 / 0.090 ms | 2.01 / 3.77 ms | +1,974 us (+2,591) |

Neither target is met. Where the demo arm's intake goes (medians, a separate timing of the
parts): decode 0.08 ms, the build (placed in world, k-d tree) 0.72 ms, the self filter 0.15 ms,
the tree without the robot's points 0.24 ms (``PointSet.subset``: no sort), the evaluation
0.21 ms. Per evaluation on the demo arm the nearest-ball kernel takes 26 us (6 us of it its
arguments), the rest is Python (the rows, the merge, a contact's handling). On the PSM's hulls
every exact point distance scans the hull's faces and, off a face, its edges
(``points.hull_local``): 2-4 us a point, 6.6 ms a self filter (2,992 exact evaluations).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
DEMO = REPO / "examples" / "demo" / "demo_arm.yaml"
PSM = (REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
       / "blender-psm.yaml")
PSM_COUPLINGS = REPO / "config" / "couplings" / "blender-psm.yaml"


def camera_pose():
    """The camera 0.8 m in front of the origin, looking back at it (z along -x)."""
    R = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]).T
    return R, np.array([0.8, 0.0, 0.4])


def make_points(model, data, rng, n=24000):
    """The cloud in world (module docstring): ``(N,3)``."""
    from ambf_collision.geometry.points import point_signed_distance_batch
    from ambf_collision.model.obstacles import robot_shapes

    lo, hi = data.body_t.min(axis=0), data.body_t.max(axis=0)
    centre, span = 0.5 * (lo + hi), np.maximum(hi - lo, 0.3)
    wall = np.column_stack([np.full(10000, lo[0] - 0.3), rng.uniform(-1, 1, 10000) * span[1] + centre[1],
                            rng.uniform(-1, 1, 10000) * span[2] + centre[2]])
    floor = np.column_stack([rng.uniform(-1, 1, 6000) * span[0] + centre[0],
                             rng.uniform(-1, 1, 6000) * span[1] + centre[1], np.full(6000, lo[2] - 0.05)])
    d = rng.normal(size=(4000, 3))
    ball = hi + 0.05 + 0.04 * d / np.linalg.norm(d, axis=1, keepdims=True)
    shapes = robot_shapes(model)
    near = rng.uniform(lo - 0.05, hi + 0.05, (4000, 3))
    k = rng.choice(shapes, 4000)
    own = point_signed_distance_batch(data.world, None, k, near)[1]   # on the arm's surfaces
    pts = np.concatenate([wall, floor, ball, own])[:n] + rng.normal(scale=0.001, size=(n, 3))
    pts[rng.random(n) < 0.02] = np.nan
    return pts


def percentiles(values) -> str:
    v = np.asarray(values) * 1e3
    return f"{np.median(v):.3f} / {np.percentile(v, 99):.3f} ms"


def arm(name, path, couplings, hull):
    from ambf_collision.monitor.scene import load_scene

    scene = load_scene([str(path)], coupling_files=[str(couplings)] if couplings else (),
                       hull_meshes=["*"] if hull else ())
    return name, scene.model


def run(name, model, clouds, evaluations, rounds, rng):
    from ambf_collision.monitor.config import MonitorConfig
    from ambf_collision.monitor.monitor import CollisionMonitor
    from ambf_collision.monitor.obstacle_sources import SourceSpec
    from ambf_collision.ros.point_cloud import decode_cloud, make_cloud

    names = list(model.joint_names)
    config = MonitorConfig(joint_state_timeout=0.0, report_distance=0.05, continuous=True)
    spec = SourceSpec("camera", point_radius=0.002, source_timeout=0.0, self_filter_padding=0.02)
    with_source = CollisionMonitor(model, config, obstacle_sources=[spec])
    without = CollisionMonitor(model, config)
    data = with_source.data
    q = np.zeros(len(names))
    with_source.on_joint_state(names, q, 1.0, 1.0)
    with_source.step(1.0)
    R, t = camera_pose()
    world = make_points(model, data, rng)
    msg = make_cloud((world - t) @ R, "camera", (1, 0))
    stamp = [1.0]

    def state(monitor, dq):
        stamp[0] += 1e-3
        monitor.on_joint_state(names, q + dq, stamp[0], stamp[0])
        return monitor.step(stamp[0])

    # intake: decode + on_cloud + the next evaluation
    intake, kept, removed = [], [], []
    for i in range(clouds + 5):
        dq = rng.uniform(-0.02, 0.02, len(names))
        state(with_source, dq)
        t0 = time.perf_counter_ns()
        cloud = decode_cloud(msg, 1_000_000)
        note = with_source.on_cloud("camera", cloud.points, (R, t), stamp[0], stamp[0])
        out = with_source.step(stamp[0])
        dt = (time.perf_counter_ns() - t0) * 1e-9
        if i >= 5:
            intake.append(dt)
            kept.append(note.kept)
            removed.append(note.self_filtered)
    found = sum(1 for who in out.contact_info if who[1] == "source:camera")
    # per evaluation, interleaved
    times = {"without": [], "with": []}
    for r in range(rounds):
        for label, monitor in (("without", without), ("with", with_source)):
            for i in range(evaluations // rounds + 20):
                dq = rng.uniform(-0.02, 0.02, len(names))
                t0 = time.perf_counter_ns()
                state(monitor, dq)
                dt = (time.perf_counter_ns() - t0) * 1e-9
                if i >= 20:
                    times[label].append(dt)
    m0, m1 = np.median(times["without"]), np.median(times["with"])
    print(f"| {name} ({len(model.shapes)} shapes, {len(model.pairs)} pairs) | "
          f"{percentiles(intake)} | {int(np.median(kept))} kept, {int(np.median(removed))} "
          f"on the robot | {percentiles(times['without'])} | {percentiles(times['with'])} | "
          f"{(m1 - m0) * 1e6:+.1f} us | {found} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--clouds", type=int, default=300, help="clouds timed per arm")
    ap.add_argument("--evaluations", type=int, default=6000, help="evaluations per arm and case")
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(39)
    print("| arm | intake: decode + on_cloud + evaluation, median / p99 | points | evaluation "
          "without source | with source | added (median) | source contacts |")
    print("|---|---|---|---|---|---|---|")
    for name, path, couplings, hull in (("demo arm", DEMO, None, False),
                                        ("dVRK PSM (hulls)", PSM, PSM_COUPLINGS, True)):
        label, model = arm(name, path, couplings, hull)
        run(label, model, args.clouds, args.evaluations, args.rounds, rng)
    return 0


if __name__ == "__main__":
    sys.exit(main())
