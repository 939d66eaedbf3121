"""Tactile probes against a large closed triangle mesh (issue 34: a fingertip in anatomy).

A 10 x 10 pad of probes (1 mm pitch, radius 2 mm, range 5 mm, sensor normal down) on a finger,
over the top of a closed, uneven torus tube (``test/geometry/mesh_examples.torus`` with a bump,
about ``--triangles`` triangles; major radius 0.1 m, tube 0.03 m). The finger's pose changes at
every evaluation, never the same state twice:

  trajectory  1 kHz steps: the pad's height follows a 10 um random walk about the surface,
              with a slow drift in x and y (the pad slides over the bumps);
  jumps       every evaluation at a random place over the tube and a random height, from 4 mm
              inside the surface to 12 mm above it.

Reported per evaluation (one compiled call for the pad): median and p99 time, the exact (probe,
mesh) queries it made, and the time per query. The floor beside it: the same number of the
geometry layer's point queries (``mesh_distance.point_phi``, no hint) in one compiled loop.
Times are wall clock on a shared machine: repeat, and read medians.

Run: PYTHONPATH=. python bench/bench_probe_mesh.py [--triangles N] [--cycles N]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "geometry"))

import mesh_examples  # noqa: E402

from ambf_collision.geometry.mesh_distance import point_phi  # noqa: E402
from ambf_collision.geometry.shapes import Mesh  # noqa: E402
from ambf_collision.geometry.trimesh import TriangleMesh  # noqa: E402
from ambf_collision.geometry.world_shapes import LinkShapes  # noqa: E402
from ambf_collision.probes import ProbeModel, ProbeSpec  # noqa: E402

R0, R_TUBE, BUMP = 0.1, 0.03, 0.2


@njit(cache=True)
def _floor(V, F, NB, VN, boxes, nodes, P):
    """The point queries alone: ``point_phi`` of every row of ``P`` (no hint)."""
    s = 0.0
    for i in range(P.shape[0]):
        s += point_phi(V, F, NB, VN, boxes, nodes, 1, (P[i, 0], P[i, 1], P[i, 2]), -1)[0]
    return s


def _pad():
    g = (np.arange(10) - 4.5) * 0.001
    return [ProbeSpec(f"p{i}_{j}", "finger", np.array([x, y, 0.0]), np.array([0.0, 0.0, -1.0]),
                      0.002, 1000.0, range=0.005) for i, x in enumerate(g) for j, y in enumerate(g)]


def _surface_height(x, y):
    """The tube's top (m) over (x, y), on the smooth torus (the bump moves it by up to 20 %)."""
    rho = math.hypot(x, y)
    return math.sqrt(max(R_TUBE ** 2 - (rho - R0) ** 2, 0.0))


def _poses(kind, cycles, rng):
    out = np.zeros((cycles, 3))
    if kind == "trajectory":
        u, z = 0.0, 0.0
        for k in range(cycles):
            u += 2e-5                                    # 2 cm/s along the ring at 1 kHz
            z = min(max(z + rng.normal(0.0, 1e-5), -0.004), 0.008)
            out[k] = (R0 * math.cos(u), R0 * math.sin(u), _surface_height(R0, 0.0) + z)
    else:
        for k in range(cycles):
            u, w = rng.uniform(0, 2 * math.pi), rng.uniform(-0.01, 0.01)
            x, y = (R0 + w) * math.cos(u), (R0 + w) * math.sin(u)
            out[k] = (x, y, _surface_height(x, y) + rng.uniform(-0.004, 0.012))
    return out


def run(triangles: int, cycles: int) -> None:
    m = max(8, int(round(math.sqrt(triangles / 4))))
    n = max(8, int(round(triangles / (2 * m))))
    V, F = mesh_examples.torus(R0, R_TUBE, n, m, bump=BUMP)
    t = time.perf_counter()
    mesh = TriangleMesh.build(V, F)
    print(f"mesh: {len(mesh.faces):,} triangles, closed {mesh.closed}, prepared in "
          f"{time.perf_counter() - t:.1f} s")
    link = LinkShapes([Mesh(mesh)], np.array([1]))
    pm = ProbeModel(_pad(), ["finger", "organ"], link)
    data = pm.create_data()
    R = np.repeat(np.eye(3)[None], 2, axis=0)
    rng = np.random.default_rng(34)
    local = np.array([s.position for s in pm.specs])
    for kind in ("trajectory", "jumps"):
        poses = _poses(kind, cycles, rng)
        t_body = np.zeros((2, 3))
        world = link.new_world()
        times, checked, contact, floor = [], 0, 0, []
        for k in range(cycles):
            t_body[0] = poses[k]
            link.to_world(R, t_body, world)
            a = time.perf_counter()
            res = pm.evaluate(data, R, t_body, world)
            times.append(time.perf_counter() - a)
            checked += res.pairs_checked
            contact += int(res.in_contact.sum())
            P = local + poses[k]
            a = time.perf_counter()
            _floor(*mesh.arrays(), P)
            floor.append(time.perf_counter() - a)
        v, f = 1e6 * np.array(times[1:]), 1e6 * np.array(floor[1:])
        q = checked / cycles
        print(f"{kind}: {cycles} evaluations, {q:.0f} exact queries and {contact / cycles:.0f} "
              f"probes in contact per evaluation; median {np.median(v):.0f} us, p99 "
              f"{np.percentile(v, 99):.0f} us ({np.median(v) / max(q, 1):.1f} us per query); "
              f"point_phi loop of the 100 probe centres: median {np.median(f):.0f} us")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--triangles", type=int, default=1_000_000)
    ap.add_argument("--cycles", type=int, default=1000)
    args = ap.parse_args(argv)
    run(args.triangles, args.cycles)


if __name__ == "__main__":
    main()
