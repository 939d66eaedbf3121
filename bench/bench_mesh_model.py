"""Concave meshes through the whole Model (ADF files in, one compiled evaluation per state), against
coal's BVHModel distance per pair from Python on the same pairs and states, and against the hulls
the same files gave before (``hull_meshes``).

Run: ``python bench/bench_mesh_model.py [--triangles N] [--states K] [--coal-states C]
[--robot-states R]``.

1. **Instrument against a 1,000,000-triangle phantom**: ``bench_mesh.py``'s instrument (4 capsules,
   6 spheres) as one ADF body of a ``compound collision shape``, and its bumpy torus (``N``
   triangles) as the collision mesh of another ADF file's body (a binary STL written here, so
   float32 vertices as such files have). The instrument file's root pose follows
   ``bench_mesh.trajectory`` (1 kHz steps and a random jump every 200: never the same state),
   given to ``Model.evaluate(root_poses=...)`` as TF would. Reported: the load time of the two
   files (read, prepare, hierarchy), per evaluation p50/p99 (thread CPU time and wall clock) of
   ``Model.evaluate`` with every pair exact, and coal's loop (``coal_peer.CoalPeer``: geometries
   built once, posed from this project's forward kinematics), the largest difference to coal
   where apart, bytes per triangle.
2. **AMBF's dVRK PSM and PR2 against a ground plane and a phantom**: ``blender-psm.yaml`` (every
   link its concave mesh; bundled with the tests) and, when ``AMBF_MODELS`` names AMBF's
   ``multi-bodies`` folder (with AMBF's ``meshes`` folder beside it, as in AMBF's repository),
   ``robots/blender-pr2.yaml``; a ground plane under each and a closed bumpy torus of 20,000
   triangles about its last body, which its links pass through and by. Every joint moves at every evaluation (a smooth
   1 kHz trajectory within the joint limits with a random jump every 200 states). Reported: the
   PSM's mesh evaluation p50/p99 against coal's loop on the same mesh pairs (planes left out:
   coal's Halfspace has no distance to a BVHModel), and against the same files with every mesh a
   hull (``hull_meshes=["*"]``): its time and how far the hull's distances are from the mesh's.

Targets (issue 34): p99 <= 1 ms per evaluation for the instrument, >= 3x faster than coal.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np
import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "test" / "geometry"))

import mesh_examples  # noqa: E402
from bench_mesh import SHAFT, TIP, trajectory  # noqa: E402
from coal_peer import CoalPeer  # noqa: E402

from ambf_collision.geometry.shapes import MESH  # noqa: E402
from ambf_collision.model.model import Model  # noqa: E402

PSM = HERE.parent / "test/model/adf_models/ambf/descriptions/multi-bodies/robots/blender-psm.yaml"


def write_stl(path: Path, V: np.ndarray, F: np.ndarray) -> None:
    """A binary STL of the triangles ``F`` of ``V`` (normals left 0, as many exporters do)."""
    rec = np.zeros(len(F), dtype=[("n", "<f4", 3), ("v", "<f4", (3, 3)), ("a", "<u2")])
    rec["v"] = V[F]
    with open(path, "wb") as f:
        f.write(b"bench phantom".ljust(80, b" "))
        f.write(np.uint32(len(F)).tobytes())
        f.write(rec.tobytes())


def mesh_file(folder: Path, name: str, V, F, position=(0.0, 0.0, 0.0)) -> str:
    """An ADF file of one fixed body whose collision is the mesh ``V``, ``F`` (no type: concave)."""
    write_stl(folder / f"{name}.stl", V, F)
    doc = {"bodies": [f"BODY {name}"],
           f"BODY {name}": {"name": name, "mass": 0.0, "mesh": f"{name}.stl",
                            "location": {"position": dict(zip("xyz", map(float, position)))}}}
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def instrument_file(folder: Path) -> str:
    """``bench_mesh``'s instrument as one body of a compound collision shape (capsules along z)."""
    items = []
    for a, b, r in SHAFT:
        mid, length = 0.5 * (np.add(a, b)), float(np.linalg.norm(np.subtract(b, a)))
        items.append({"shape": "CAPSULE", "geometry": {"radius": r, "height": length + 2 * r, "axis": "z"},
                      "offset": {"position": dict(zip("xyz", map(float, mid)))}})
    for c, r in TIP:
        items.append({"shape": "SPHERE", "geometry": {"radius": r},
                      "offset": {"position": dict(zip("xyz", map(float, c)))}})
    doc = {"bodies": ["BODY instrument"],
           "BODY instrument": {"name": "instrument", "mass": 0.0, "compound collision shape": items}}
    path = folder / "instrument.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def load(paths, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Model.from_files(paths, **kw)


def percentiles(x) -> str:
    x = np.asarray(x) * 1e6
    return f"p50 {np.percentile(x, 50):7.1f} / p99 {np.percentile(x, 99):7.1f} us"


def timed(fn, cpu: list, wall: list) -> None:
    w0, c0 = time.perf_counter(), time.thread_time()
    fn()
    cpu.append(time.thread_time() - c0)
    wall.append(time.perf_counter() - w0)


def instrument_part(folder: Path, triangles: int, states: int, coal_states: int) -> None:
    R0, r0 = 0.1, 0.03
    m_tube = int(np.sqrt(triangles / 4))
    V, F = mesh_examples.torus(R0, r0, n=triangles // (2 * m_tube), m=m_tube, bump=0.08)
    phantom = mesh_file(folder, "phantom", V, F)
    tool = instrument_file(folder)
    c0 = time.process_time()
    model = load([phantom, tool])
    t_load = time.process_time() - c0
    (mesh,) = model.meshes.meshes
    print(f"1. instrument (10 shapes) against a closed {len(mesh.faces):,}-triangle phantom: "
          f"loaded in {t_load:.2f} s CPU (read, weld, orient, hierarchy), "
          f"{mesh.nbytes() / len(mesh.faces):.1f} bytes per triangle")
    data = model.create_data()
    Rs, ts = trajectory(states, R0, r0)
    model.evaluate(data, root_poses=[None, (Rs[0], ts[0])])
    cpu, wall, coal_cpu, coal_wall = [], [], [], []
    peer = CoalPeer(model)
    out = np.empty(len(peer.keep))
    worst = 0.0
    for k in range(states):
        timed(lambda: model.evaluate(data, root_poses=[None, (Rs[k], ts[k])]), cpu, wall)
        if k < coal_states:
            peer.set_poses(data.body_R, data.body_t)
            timed(lambda: peer.distances(out), coal_cpu, coal_wall)
            d = data.distance[peer.keep]
            apart = d > 1e-6
            worst = max(worst, float(np.abs(d[apart] - out[apart]).max(initial=0.0)))
    n = min(states, coal_states)
    print(f"   this project, {states:,} states: CPU {percentiles(cpu)}; wall {percentiles(wall)}")
    print(f"   first {n:,} states: this project CPU {percentiles(cpu[:n])}; coal loop CPU "
          f"{percentiles(coal_cpu)}: x{np.percentile(coal_cpu, 50) / np.percentile(cpu[:n], 50):.1f} "
          f"(p50) / x{np.percentile(coal_cpu, 99) / np.percentile(cpu[:n], 99):.1f} (p99); largest "
          f"difference where apart {worst:.1e} m")


def joint_trajectory(model, K: int, rng) -> np.ndarray:
    """K joint vectors: smooth steps within the limits, a random jump every 200."""
    lim = model.kinematics.limits if hasattr(model.kinematics, "limits") else None
    J = len(model.joint_names)
    lo, hi = (np.full(J, -0.8), np.full(J, 0.8)) if lim is None else (lim[:, 0], lim[:, 1])
    lo, hi = np.maximum(lo, -1.5), np.minimum(hi, 1.5)
    Q = np.empty((K, J))
    q, dq = rng.uniform(lo, hi), np.zeros(J)
    for k in range(K):
        if k % 200 == 0:
            q, dq = rng.uniform(lo, hi), rng.normal(size=J) * 2e-4
        q = np.clip(q + dq, lo, hi)
        Q[k] = q + 1e-9 * k
    return Q


def robot_part(folder: Path, robot: Path, states: int, coal_states: int) -> None:
    probe = load([str(robot)])
    data = probe.create_data()
    probe.evaluate(data)
    tool = data.body_t[-1]   # the phantom about the last body (the PSM's tool, the PR2's last link)
    ground = folder / "ground.yaml"
    ground.write_text(yaml.safe_dump({
        "bodies": ["BODY ground"],
        "BODY ground": {"name": "ground", "mass": 0.0, "collision shape": "PLANE",
                        "collision geometry": {"normal": {"x": 0, "y": 0, "z": 1},
                                               "offset": float(data.body_t[:, 2].min() - 0.05)}}}))
    V, F = mesh_examples.torus(0.04, 0.012, n=200, m=50, bump=0.08)
    phantom = mesh_file(folder, "phantom_" + robot.stem, V, F, position=tool)
    files = [str(robot), str(ground), phantom]
    model, hulled = load(files), load(files, hull_meshes=["*"])
    kinds = [model.shapes[s].kind for s in np.unique(model.pairs)]
    print(f"2. AMBF's {robot.name} ({sum(k == MESH for k in kinds)} concave mesh shapes in pairs) "
          f"against a ground plane and a {len(F):,}-triangle phantom: {len(model.pairs)} pairs "
          f"({len(hulled.pairs)} with hulls)")
    Q = joint_trajectory(model, states, np.random.default_rng(0))
    md, hd = model.create_data(), hulled.create_data()
    peer = CoalPeer(model)
    out = np.empty(len(peer.keep))
    nd = model.create_data()
    cpu, hull_cpu, coal_cpu, wall, near_cpu = [], [], [], [], []
    worst, hull_off = 0.0, []
    for k in range(states):
        model.set_joint_positions(md, model.joint_names, Q[k])
        model.set_joint_positions(nd, model.joint_names, Q[k])
        hulled.set_joint_positions(hd, hulled.joint_names, Q[k])
        timed(lambda: model.evaluate(md), cpu, wall)
        timed(lambda: model.evaluate(nd, report_distance=0.01, near_only=True), near_cpu, [])
        timed(lambda: hulled.evaluate(hd), hull_cpu, [])
        if k < coal_states:
            peer.set_poses(md.body_R, md.body_t)
            timed(lambda: peer.distances(out), coal_cpu, [])
            d = md.distance[peer.keep]
            apart = d > 1e-6
            worst = max(worst, float(np.abs(d[apart] - out[apart]).max(initial=0.0)))
        near = {}
        for (b1, b2), d in zip(model.pair_bodies, md.distance):
            near[(b1, b2)] = min(near.get((b1, b2), np.inf), d)
        for (b1, b2), d in zip(hulled.pair_bodies, hd.distance):
            if near[(b1, b2)] < 0.05:
                hull_off.append(near[(b1, b2)] - d)
    n = min(states, coal_states)
    print(f"   meshes, {states:,} states, every pair exact: CPU {percentiles(cpu)}; wall "
          f"{percentiles(wall)}; as the node evaluates (near_only, 1 cm): CPU {percentiles(near_cpu)}")
    print(f"   first {n:,} states: meshes CPU {percentiles(cpu[:n])}; coal loop (mesh pairs) CPU "
          f"{percentiles(coal_cpu)}: x{np.percentile(coal_cpu, 50) / np.percentile(cpu[:n], 50):.1f} "
          f"(p50) / x{np.percentile(coal_cpu, 99) / np.percentile(cpu[:n], 99):.1f} (p99); largest "
          f"difference where apart {worst:.1e} m")
    off = np.asarray(hull_off) * 1e3
    print(f"   hulls instead: CPU {percentiles(hull_cpu)}; the hull's distance is below the "
          f"mesh's by p50 {np.percentile(off, 50):.2f} / p90 {np.percentile(off, 90):.2f} / max "
          f"{off.max():.2f} mm (body pairs within 5 cm)")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--triangles", type=int, default=1_000_000)
    ap.add_argument("--states", type=int, default=5_000)
    ap.add_argument("--coal-states", type=int, default=500)
    ap.add_argument("--robot-states", type=int, default=1_000)
    args = ap.parse_args(argv)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; times per evaluation")
    with tempfile.TemporaryDirectory() as tmp:
        instrument_part(Path(tmp), args.triangles, args.states, args.coal_states)
        robots = [PSM]
        if os.environ.get("AMBF_MODELS"):
            robots.append(Path(os.environ["AMBF_MODELS"]) / "robots" / "blender-pr2.yaml")
        for robot in robots:
            robot_part(Path(tmp), robot, args.robot_states, args.coal_states)
    return 0


if __name__ == "__main__":
    sys.exit(main())
