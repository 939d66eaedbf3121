"""Tactile probe evaluation speed (issue 14 targets), against a plain C loop of the same
computation compiled and timed in the same run.

Workloads (seeded; every cycle moves every body a little, poses precomputed):
  A. 1,000 probes (4 patches of 250 on 4 finger bodies) among 40 capsules on 8 bodies, probe
     range 0.02 m; then the same with range 10 m (the broadphase drops nothing: every pair is
     exact). Target: at most 2x the C loop.
  B. 10,000 probes (10 patches of 1,000 on 10 bodies) against 100 shapes (capsules, spheres,
     boxes, cylinders, cones on 20 bodies, and a floor plane). Target: under 1 ms.
  C. The demo: examples/demo/demo_arm.yaml with the 256 probes of
     examples/demo/demo_probes_256.yaml along the demo joint script (free, proximity and contact
     cycles). Target: a few microseconds. Also timed: an empty compiled function taking the same
     25 arrays (the dispatch floor of one call).

The C loop (gcc -O3, called once per evaluation through ctypes) computes for A what the kernel
computes: probe centres and normals to world, every (probe, capsule) pair by the closed form of
the point-segment distance, the facing and range rules, force, area, depth, nearest and
deepest contact, body-frame force and patch totals, for every pair (a brute-force loop, what
one would write by hand). Both are checked to agree before timing. The world shapes are moved
outside the timed region (the model does that for collision anyway).

Run: PYTHONPATH=. python bench/bench_probes.py [--cycles N]
"""

from __future__ import annotations

import argparse
import ctypes
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ambf_collision.geometry.shapes import Box, Capsule, Cone, Cylinder, Plane, Sphere  # noqa: E402
from ambf_collision.geometry.transforms import axis_angle_to_matrix  # noqa: E402
from ambf_collision.geometry.world_shapes import LinkShapes  # noqa: E402
from ambf_collision.probes import PatchSpec, ProbeModel  # noqa: E402
from c_loop import compile_c, pointer  # noqa: E402

C_SOURCE = r"""
#include <math.h>
/* Every probe against every capsule (shape_body != probe_body), world outputs as the kernel. */
long probes(long n, const double *lp, const double *ln, const double *rad, const double *stiff,
            const double *rng, const long *pbody, const long *ppatch, long s, const double *a,
            const double *b, const double *sr, const long *sbody, const double *R, const double *t,
            double *pos, double *nor, double *depth, double *area, double *force,
            double *force_body, double *cnormal, double *dist, long *touch, long q,
            double *patch_force, double *patch_area)
{
    for (long i = 0; i < n; i++) {
        const double *Rb = R + 9 * pbody[i], *tb = t + 3 * pbody[i];
        for (int r = 0; r < 3; r++) {
            pos[3*i+r] = Rb[3*r]*lp[3*i] + Rb[3*r+1]*lp[3*i+1] + Rb[3*r+2]*lp[3*i+2] + tb[r];
            nor[3*i+r] = Rb[3*r]*ln[3*i] + Rb[3*r+1]*ln[3*i+1] + Rb[3*r+2]*ln[3*i+2];
            force[3*i+r] = 0.0; cnormal[3*i+r] = 0.0;
        }
        depth[i] = 0.0; area[i] = 0.0; dist[i] = INFINITY; touch[i] = -1;
    }
    for (long j = 0; j < q; j++) {
        patch_area[j] = 0.0;
        patch_force[3*j] = patch_force[3*j+1] = patch_force[3*j+2] = 0.0;
    }
    long checked = 0;
    for (long i = 0; i < n; i++) {
        const double *p = pos + 3*i, *ns = nor + 3*i;
        for (long k = 0; k < s; k++) {
            if (sbody[k] == pbody[i]) continue;
            const double *ak = a + 3*k, *bk = b + 3*k;
            double e0 = bk[0]-ak[0], e1 = bk[1]-ak[1], e2 = bk[2]-ak[2];
            double l2 = e0*e0 + e1*e1 + e2*e2, u = 0.0;
            if (l2 > 0.0) {
                u = ((p[0]-ak[0])*e0 + (p[1]-ak[1])*e1 + (p[2]-ak[2])*e2) / l2;
                u = u < 0.0 ? 0.0 : (u > 1.0 ? 1.0 : u);
            }
            double w0 = p[0]-(ak[0]+u*e0), w1 = p[1]-(ak[1]+u*e1), w2 = p[2]-(ak[2]+u*e2);
            double L = sqrt(w0*w0 + w1*w1 + w2*w2), n0 = 0.0, n1 = 0.0, n2 = 1.0;
            if (L > 0.0) { n0 = w0/L; n1 = w1/L; n2 = w2/L; }
            checked++;
            if (n0*ns[0] + n1*ns[1] + n2*ns[2] >= 0.0) continue;
            double r = rad[i], gap = L - sr[k] - r;
            if (gap > rng[i]) continue;
            if (gap < dist[i]) {
                dist[i] = gap;
                if (gap < 0.0) { touch[i] = k; cnormal[3*i] = n0; cnormal[3*i+1] = n1; cnormal[3*i+2] = n2; }
            }
            if (gap < 0.0) {
                double pen = -gap < 2.0*r ? -gap : 2.0*r, f = stiff[i]*pen;
                force[3*i] += f*n0; force[3*i+1] += f*n1; force[3*i+2] += f*n2;
                area[i] += M_PI*(2.0*r*pen - pen*pen);
            }
        }
    }
    for (long i = 0; i < n; i++) {
        const double *Rb = R + 9 * pbody[i];
        if (dist[i] < 0.0) depth[i] = -dist[i] < 2.0*rad[i] ? -dist[i] : 2.0*rad[i];
        for (int c = 0; c < 3; c++)
            force_body[3*i+c] = Rb[c]*force[3*i] + Rb[3+c]*force[3*i+1] + Rb[6+c]*force[3*i+2];
        long j = ppatch[i];
        if (j >= 0) {
            patch_area[j] += area[i];
            for (int c = 0; c < 3; c++) patch_force[3*j+c] += force[3*i+c];
        }
    }
    return checked;
}
"""


def _rand_rot(rng):
    return axis_angle_to_matrix(rng.normal(size=3), rng.uniform(0, math.pi))


def _patch(name, body, rows, cols, spacing, rng, probe_range):
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


def build(workload, probe_range, seed=1):
    """``(body_names, shapes, shape_body, specs, half size of the workspace)``."""
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
    return names, shapes, np.array(shape_body, dtype=np.int64), specs, half


def poses(n_bodies, half, cycles, rng):
    """Per cycle body poses (world, m): random base poses, each body swinging about its own
    axis by up to 0.3 rad and moving up to 1 cm, so that contact and free cycles alternate the
    same way however many cycles are run."""
    R0 = np.array([_rand_rot(rng) for _ in range(n_bodies)])
    t0 = rng.uniform(-half, half, (n_bodies, 3))
    axis = rng.normal(size=(n_bodies, 3))
    shift = rng.normal(size=(n_bodies, 3))
    phase = rng.uniform(0, 2 * math.pi, n_bodies)
    out = []
    for c in range(cycles):
        wave = np.sin(0.2 * c + phase)
        dR = np.array([axis_angle_to_matrix(axis[b], 0.3 * wave[b]) for b in range(n_bodies)])
        out.append((np.ascontiguousarray(np.matmul(dR, R0)),
                    np.ascontiguousarray(t0 + 0.01 * wave[:, None] * shift)))
    return out


class CLoop:
    """The C loop's inputs and outputs for a probe model over capsules."""

    def __init__(self, fn, pm, world):
        self.fn, self.pm, self.world = fn, pm, world
        N, Q = len(pm), len(pm.patch_names)
        self.out = {k: np.zeros(s) for k, s in (("pos", (N, 3)), ("nor", (N, 3)), ("depth", N),
                                                ("area", N), ("force", (N, 3)), ("force_body", (N, 3)),
                                                ("cnormal", (N, 3)), ("dist", N), ("patch_force", (Q, 3)),
                                                ("patch_area", Q))}
        self.touch = np.zeros(N, dtype=np.int64)
        p = pm
        self.probe_patch = np.full(N, -1, dtype=np.int64)  # patch index per probe, -1 none
        for q, (a, b) in enumerate(zip(p.patch_first, p.patch_end)):
            self.probe_patch[a:b] = q
        # the world's fields are views of its record table (strided): C gets contiguous copies
        self.shapes = [np.ascontiguousarray(x) for x in (world.a, world.b, world.radius)]
        self.fixed = [ctypes.c_long(N), pointer(p.local_position), pointer(p.local_normal), pointer(p.radius),
                      pointer(p.stiffness), pointer(p.range), pointer(p.probe_body), pointer(self.probe_patch),
                      ctypes.c_long(len(world)), *map(pointer, self.shapes),
                      pointer(p.shape_body)]
        o = self.out
        self.outs = [pointer(o["pos"]), pointer(o["nor"]), pointer(o["depth"]), pointer(o["area"]), pointer(o["force"]),
                     pointer(o["force_body"]), pointer(o["cnormal"]), pointer(o["dist"]), pointer(self.touch),
                     ctypes.c_long(Q), pointer(o["patch_force"]), pointer(o["patch_area"])]

    def __call__(self, R, t):
        return self.fn(*self.fixed, pointer(R), pointer(t), *self.outs)


def _median_us(times):
    return 1e6 * float(np.median(times))


def point_query_ns(world, pairs, rng):
    """Median time (ns) of one call of the shared point kernel, over ``pairs`` random
    (capsule, point) queries through ``point_signed_distance_batch``: the floor of the exact
    stage's cost per pair."""
    from ambf_collision.geometry.points import point_signed_distance_batch

    idx = rng.integers(0, len(world), pairs)
    pts = rng.uniform(-0.1, 0.1, (pairs, 3))
    point_signed_distance_batch(world, None, idx, pts)
    times = []
    for _ in range(7):
        a = time.perf_counter()
        point_signed_distance_batch(world, None, idx, pts)
        times.append(time.perf_counter() - a)
    return 1e9 * float(np.median(times)) / pairs


def run(workload, cycles, probe_range, c_fn=None):
    """Time one workload; returns the kernel's median (us) and the C loop's (or None)."""
    rng = np.random.default_rng(42)
    names, shapes, shape_body, specs, half = build(workload, probe_range)
    link = LinkShapes(shapes, shape_body)
    pm = ProbeModel(specs, names, link)
    data = pm.create_data()
    seq = poses(len(names), half, cycles, rng)
    worlds = [link.to_world(R, t) for R, t in seq]
    c_loop = CLoop(c_fn, pm, worlds[0]) if c_fn is not None else None
    # agreement on the first cycle, and a warm-up
    res = pm.evaluate(data, *seq[0], worlds[0])
    if c_loop is not None:
        c_loop(*seq[0])
        o = c_loop.out
        assert np.allclose(o["force"], res.force, atol=1e-12) and np.allclose(o["area"], res.area, atol=1e-18)
        assert np.array_equal(np.isinf(o["dist"]), np.isinf(res.distance))
        assert np.allclose(np.where(np.isinf(o["dist"]), 0, o["dist"]),
                           np.where(np.isinf(res.distance), 0, res.distance), atol=1e-15)
        assert np.array_equal(c_loop.touch, res.touching_shape)
    t_kernel, t_c, checked, contact, near = [], [], [], [], []
    for k, (R, t) in enumerate(seq):
        if c_loop is not None:
            c_loop.world = worlds[k]
            c_loop.fixed[9:12] = [pointer(worlds[k].a), pointer(worlds[k].b), pointer(worlds[k].radius)]
        order = (0, 1) if k % 2 == 0 else (1, 0)
        for which in order:
            if which == 0:
                a = time.perf_counter()
                res = pm.evaluate(data, R, t, worlds[k])
                t_kernel.append(time.perf_counter() - a)
            elif c_loop is not None:
                a = time.perf_counter()
                c_loop(R, t)
                t_c.append(time.perf_counter() - a)
        checked.append(res.pairs_checked)
        contact.append(int(res.in_contact.sum()))
        near.append(int(np.isfinite(res.distance).sum()))
    us = _median_us(t_kernel)
    print(f"workload {workload}: {len(pm)} probes x {len(shapes)} shapes ({pm.pairs_total} sensed pairs), "
          f"range {probe_range} m, {cycles} cycles")
    print(f"  exact pairs per cycle: median {int(np.median(checked))} "
          f"({100 * np.median(checked) / pm.pairs_total:.1f}%); in contact: median {int(np.median(contact))}, "
          f"within range: median {int(np.median(near))}")
    line = f"  kernel: {us:9.1f} us (median; p90 {1e6 * np.percentile(t_kernel, 90):.1f} us)"
    c_us = None
    if c_loop is not None:
        c_us = _median_us(t_c)
        line += f"   C -O3 loop over every pair: {c_us:9.1f} us   ratio kernel / C: {us / c_us:.2f}"
    print(line)
    if c_loop is not None:
        print(f"  the shared point kernel alone (point_signed_distance_batch, capsules): "
              f"{point_query_ns(worlds[0], 20000, rng):.0f} ns per query; the C loop: "
              f"{1e3 * c_us / pm.pairs_total:.0f} ns per pair")
    return us, c_us


def run_demo(cycles):
    """Workload C: the demo trajectory with its 256-probe pad."""
    from numba import njit

    from ambf_collision.demo.trajectory import JOINT_NAMES, PERIOD, demo_joint_array
    from ambf_collision.model import Model
    from ambf_collision.probes import load_probe_file

    repo = Path(__file__).resolve().parents[1]
    model = Model.from_files([str(repo / "examples/demo/demo_arm.yaml")])
    data = model.create_data()
    pm = ProbeModel.from_model(load_probe_file(repo / "examples/demo/demo_probes_256.yaml", model.body_names),
                               model)
    pdata = pm.create_data()
    plain = [n.rsplit("/", 1)[-1] for n in model.joint_names]
    names = [n for n in plain if n in JOINT_NAMES]
    order = [JOINT_NAMES.index(n) for n in names]
    pm.evaluate_model(pdata, model.evaluate(data))  # warm-up: the first call loads the kernel
    times, contact, free = [], [], []
    for t in np.linspace(0.0, PERIOD, cycles, endpoint=False):
        model.set_joint_positions(data, names, demo_joint_array(t)[order])
        ev = model.evaluate(data)
        a = time.perf_counter()
        res = pm.evaluate_model(pdata, ev)
        times.append(time.perf_counter() - a)
        contact.append(bool(res.in_contact.any()))
        free.append(res.pairs_checked == 0)

    @njit
    def empty(*args):
        return 0

    args = (pm.floats, pm.ints, ev.world.table, *pm._hull_arrays, pm.mesh_buffer, ev.body_R, ev.body_t,
            pdata.floats, pdata.distance, pdata.ints, pdata.in_contact, pdata.scratch)
    empty(*args)
    floor = []
    for _ in range(2000):
        a = time.perf_counter()
        empty(*args)
        floor.append(time.perf_counter() - a)
    v, free = 1e6 * np.array(times), np.array(free)
    print(f"workload C (demo): {len(pm)} probes x {pm.n_shapes} shapes along the demo script, {cycles} cycles "
          f"({sum(contact)} with contact, {int(free.sum())} with no exact query)")
    print(f"  evaluate: median {np.median(v):.2f} us, mean {v.mean():.2f} us, p99 {np.percentile(v, 99):.2f} us;"
          f" contact cycles median {np.median(v[np.array(contact)]):.2f} us, free cycles median "
          f"{np.median(v[free]):.2f} us; dispatch floor (an empty call with the same "
          f"{len(args)} arrays): {_median_us(floor):.2f} us")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cycles", type=int, default=100)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        c_fn = compile_c(C_SOURCE, "probes", Path(tmp))
        k, c = run("A", args.cycles, 0.02, c_fn)
        print(f"  target kernel <= 2x C: {'MET' if k <= 2 * c else 'NOT MET'}")
        k, c = run("A", max(20, args.cycles // 2), 10.0, c_fn)
        print(f"  target kernel <= 2x C: {'MET' if k <= 2 * c else 'NOT MET'}")
    k, _ = run("B", max(20, args.cycles // 2), 0.02)
    print(f"  target < 1 ms: {'MET' if k < 1000 else 'NOT MET'}")
    run_demo(max(500, 5 * args.cycles))


if __name__ == "__main__":
    main()
