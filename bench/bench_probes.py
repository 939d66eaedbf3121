"""Tactile probe evaluation speed (issue 5), against coal called per (probe, shape) pair
from Python in the same run.

Workloads (seeded):
  A. 1,000 probes (4 patches of 250 on 4 finger bodies) among 40 capsules on 8 bodies;
     target <= 2 ms per evaluation.
  B. 10,000 probes (a dense skin: 10 patches of 1,000 on 10 bodies) against a 100-shape
     scene (capsules, spheres, boxes, cylinders, cones on 20 bodies, plus a floor plane);
     target <= 10 ms.
  C. The demo (issue 6): examples/demo/demo_arm.yaml with the 256 probes of
     examples/demo/demo_probes_256.yaml along the demo joint script (free, proximity and
     contact cycles), with the model's rigid roots (ProbeSet.from_model) and without them
     (ProbeSet.from_shapes): median, mean and p99 per evaluation, same cycles interleaved,
     in thread CPU time (other processes on a shared machine do not count), and the same
     over the free cycles alone (the broadphase leaves no pair: no exact stage).
Each cycle moves every body a little (poses precomputed), computes the world shapes (timed
separately: the model does that anyway for collision) and evaluates all probes.
The coal reference computes the signed distance of every sensed (probe, shape) pair (a
coal.Sphere of the probe radius against the shape), one coal.distance call per pair; for B
it is timed on a random sample of pairs and scaled to all pairs (marked "scaled").

Run: .venv/bin/python bench/bench_probes.py [--cycles N]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ambf_collision.geometry.pairs import LinkShapes  # noqa: E402
from ambf_collision.probes.probe_set import PatchSpec, ProbeSet  # noqa: E402
from ambf_collision.geometry.shapes import Box, Capsule, Cone, Cylinder, Plane, Sphere  # noqa: E402
from ambf_collision.geometry.transforms import axis_angle_to_matrix  # noqa: E402


def _rand_rot(rng):
    return axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, math.pi))


def _patch(name, body, rows, cols, spacing, rng, probe_range=0.02):
    n = rng.normal(size=3)
    n /= np.linalg.norm(n)
    d = np.cross(n, rng.normal(size=3))
    return PatchSpec(name, body, rng.uniform(-0.01, 0.01, 3), n, d / np.linalg.norm(d), spacing,
                     0.002, 2000.0, rows=rows, cols=cols, range=probe_range)


def _random_shape(kind, rng, size):
    q = rng.normal(size=4)
    p = rng.uniform(-size, size, 3)
    if kind == "capsule":
        return Capsule(p, p + rng.uniform(-0.08, 0.08, 3), rng.uniform(0.01, 0.03))
    if kind == "sphere":
        return Sphere(p, rng.uniform(0.01, 0.04))
    if kind == "box":
        return Box(rng.uniform(0.02, 0.08, 3), p, q)
    if kind == "cylinder":
        return Cylinder(rng.uniform(0.01, 0.04), rng.uniform(0.02, 0.1), p, q)
    return Cone(rng.uniform(0.01, 0.04), rng.uniform(0.02, 0.1), p, q)


def build(workload, seed=1, probe_range=0.02):
    """(body_names, shapes, shape_body, specs, box half-size of the workspace)."""
    rng = np.random.default_rng(seed)
    if workload == "A":
        n_fingers, n_shape_bodies, per_body, half = 4, 8, 5, 0.06
        kinds = ["capsule"]
        patches = [(25, 10, 0.002)] * n_fingers
    else:
        n_fingers, n_shape_bodies, per_body, half = 10, 20, 5, 0.3
        kinds = ["capsule", "sphere", "box", "cylinder", "cone"]
        patches = [(25, 40, 0.002)] * n_fingers
    names = [f"/ambf/env/finger{i}" for i in range(n_fingers)]
    names += [f"/ambf/env/link{i}" for i in range(n_shape_bodies)]
    shapes, shape_body = [], []
    for b in range(n_shape_bodies):
        for j in range(per_body):
            shapes.append(_random_shape(kinds[(b * per_body + j) % len(kinds)], rng, 0.05))
            shape_body.append(n_fingers + b)
    if workload == "B":  # 99 solids + the floor = 100 shapes
        shapes.pop()
        shape_body.pop()
        names.append("/ambf/env/floor")
        shapes.append(Plane([0, 0, 1], -half))
        shape_body.append(len(names) - 1)
    specs = [_patch(f"pad{i}", names[i], r, c, s, rng, probe_range) for i, (r, c, s) in enumerate(patches)]
    return names, shapes, np.array(shape_body), specs, half


def poses(n_bodies, half, cycles, rng):
    """Per cycle body poses: random base poses, small motion each cycle (world, m)."""
    R0 = np.array([_rand_rot(rng) for _ in range(n_bodies)])
    t0 = rng.uniform(-half, half, (n_bodies, 3))
    out = []
    for c in range(cycles):
        dR = np.array([axis_angle_to_matrix(rng.normal(size=3), 0.02 * c) for _ in range(n_bodies)])
        out.append((np.matmul(dR, R0), t0 + 0.002 * c * rng.normal(size=(n_bodies, 3))))
    return out


def coal_reference(ps, link, shapes, shape_body, body_R, body_t, max_pairs, rng):
    """Time coal.distance over sensed (probe, shape) pairs; returns (seconds for all pairs,
    pairs, sampled?). Shapes are converted once (outside the timing)."""
    import coal

    from ambf_collision.geometry.coal_bridge import to_coal

    # all sensed pairs: every probe against every shape not on its own body
    pi, si = np.nonzero(ps.probe_body[:, None] != np.asarray(shape_body)[None, :])
    total = len(pi)
    sampled = total > max_pairs
    if sampled:
        pick = rng.choice(total, max_pairs, replace=False)
        pi, si = pi[pick], si[pick]
    geoms, tfs = [], []
    for k, s in enumerate(shapes):
        b = shape_body[k]
        g, tf = to_coal(s.transformed(body_R[b], body_t[b]))
        geoms.append(g)
        tfs.append(tf)
    pos = np.einsum("nij,nj->ni", body_R[ps.probe_body], ps.local_position) + body_t[ps.probe_body]
    spheres = [coal.Sphere(float(r)) for r in ps.radius]
    ptf = [coal.Transform3s(np.eye(3), p) for p in pos]
    req = coal.DistanceRequest()
    res = coal.DistanceResult()
    t0 = time.perf_counter()
    for i, k in zip(pi.tolist(), si.tolist()):
        res.clear()
        coal.distance(spheres[i], ptf[i], geoms[k], tfs[k], req, res)
    dt = time.perf_counter() - t0
    return dt * total / len(pi), total, sampled


def run(workload, cycles, target_ms, probe_range=0.02):
    rng = np.random.default_rng(42)
    names, shapes, shape_body, specs, half = build(workload, probe_range=probe_range)
    link = LinkShapes(shapes, shape_body)
    ps = ProbeSet.from_shapes(specs, names, shapes, shape_body)
    seq = poses(len(names), half, cycles, rng)
    # warm-up
    w = link.to_world(*seq[0])
    ps.evaluate(*seq[0], w)
    t_world, t_probe, checked, contact, near = [], [], [], [], []
    for R, t in seq:
        a = time.perf_counter()
        w = link.to_world(R, t)
        b = time.perf_counter()
        res = ps.evaluate(R, t, w)
        c = time.perf_counter()
        t_world.append(b - a)
        t_probe.append(c - b)
        checked.append(res.pairs_checked)
        contact.append(int(res.in_contact.sum()))
        near.append(int(np.isfinite(res.distance).sum()))
    probe_ms = 1e3 * float(np.median(t_probe))
    world_ms = 1e3 * float(np.median(t_world))
    coal_s, pairs, sampled = coal_reference(ps, link, shapes, shape_body, *seq[0],
                                            max_pairs=40_000, rng=rng)
    coal_ms = 1e3 * coal_s
    print(f"workload {workload}: {len(ps)} probes x {len(shapes)} shapes "
          f"({pairs} sensed pairs), range {probe_range} m, {cycles} cycles")
    print(f"  exact pairs after broadphase per cycle: median {int(np.median(checked))} "
          f"({100 * np.median(checked) / pairs:.1f}% of pairs); probes in contact: median "
          f"{int(np.median(contact))}, within range: median {int(np.median(near))}")
    print(f"  probes evaluate: {probe_ms:.3f} ms (median; p90 {1e3 * np.percentile(t_probe, 90):.3f} ms)"
          f"   + world shapes: {world_ms:.3f} ms")
    print(f"  coal per pair from Python: {coal_ms:.1f} ms{' (scaled from a sample of 40000 pairs)' if sampled else ''}")
    print(f"  ratio coal / probes: {coal_ms / probe_ms:.1f}x;  target <= {target_ms} ms: "
          f"{'MET' if probe_ms <= target_ms else 'NOT MET'}")
    return probe_ms


def run_demo(cycles):
    """Workload C: the demo trajectory, with and without the model's rigid roots."""
    from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array
    from ambf_collision.model import Model
    from ambf_collision.probes.probe_set import load_probe_file, rigid_roots

    repo = Path(__file__).resolve().parents[1]
    model = Model.from_files([str(repo / "examples/demo/demo_arm.yaml")])
    data = model.create_data()
    specs = load_probe_file(repo / "examples/demo/demo_probes_256.yaml", model.body_names)
    args = (specs, model.body_names, model.shapes, model.shape_body)
    sets = {"without rigid roots": ProbeSet.from_shapes(*args, groups_of=model.groups_of),
            "with rigid roots": ProbeSet.from_shapes(*args, groups_of=model.groups_of,
                                                     rigid_root=rigid_roots(model))}
    plain = [n.rsplit("/", 1)[-1] for n in model.joint_names]
    names = [n for n in plain if n in JOINT_NAMES]
    order = [JOINT_NAMES.index(n) for n in names]
    times = {k: [] for k in sets}
    contact, free = [], []
    for i, t in enumerate(np.linspace(0.0, PERIOD, cycles, endpoint=False)):
        model.set_joint_positions(data, names, demo_joint_array(t)[order])
        ev = model.evaluate(data)
        keys = list(sets) if i % 2 == 0 else list(sets)[::-1]
        for k in keys:
            a = time.thread_time()
            res = sets[k].evaluate(ev.body_R, ev.body_t, model.link_shapes.world)
            times[k].append(time.thread_time() - a)
        contact.append(bool(res.in_contact.any()))
        free.append(res.pairs_checked == 0)
    print(f"workload C (demo): {len(specs[0].probes()) if specs else 0} probes x {len(model.shapes)} shapes "
          f"along the demo script, {cycles} cycles ({sum(contact)} with contact, {sum(free)} free: "
          f"no pair left by the broadphase)")
    free = np.array(free)
    for k, v in times.items():
        v = 1e6 * np.array(v)
        print(f"  {k:20s}: median {np.median(v):6.1f} us  mean {v.mean():6.1f} us  p99 {np.percentile(v, 99):6.1f} us"
              + (f"   free cycles: median {np.median(v[free]):6.1f} us  mean {v[free].mean():6.1f} us"
                 if free.any() else ""))
    a, b = (1e6 * np.array(times[k]) for k in sets)
    print(f"  ratio without / with rigid roots: median {np.median(a) / np.median(b):.2f}x, "
          f"mean {a.mean() / b.mean():.2f}x")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=200)
    args = ap.parse_args(argv)
    run("A", args.cycles, 2.0)
    run("B", max(20, args.cycles // 4), 10.0)
    print("worst case (range 10 m: the broadphase prunes nothing, every pair is exact):")
    run("A", max(20, args.cycles // 4), 2.0, probe_range=10.0)
    run_demo(max(2000, 10 * args.cycles))


if __name__ == "__main__":
    main()
