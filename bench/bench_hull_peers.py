"""Mesh (hull) robots against coal and MuJoCo, side by side in one process, interleaved rounds.

Run: ``python bench/bench_hull_peers.py [--models DIR] [--rounds N] [--states K] [--rss] [FILE...]``
with DIR AMBF's ``ambf_models/descriptions/multi-bodies`` folder (default ``$AMBF_MODELS``);
without FILE: AMBF's PR2 (``robots/blender-pr2.yaml``), KUKA LBR Med and toy car 2.

Per evaluation every method does the same work at new joint positions: every joint drawn in its
limits (``bench_ambf_robots.random_positions``), a new state for every evaluation of a round (never
the same state twice), the same states for every method of that round:

- ``ours``: ``Model.set_joint_positions`` + ``Model.evaluate`` (report distance 0.05 m), every pair
  exact and no pair kept (``data.exact`` set False first: also the shapes fixed in the world are
  computed again);
- ``ours near_only``: what the node runs, on its own Data (rows of unmoved pairs kept);
  ``ours exact, kept``: the same Data handling with ``near_only`` False (issue 36 §3: near_only
  never slower than this);
- ``coal loop``: ``coal.distance`` per pair from Python, geometries built once, tolerances 1e-10
  (``coal_peer.CoalPeer``), its transforms already set; ``coal + poses``: the same plus the
  transforms from the project's FK output (vectorised NumPy + one set per shape);
- ``mujoco``: ``qpos`` + one ``mj_kinematics`` + one ``mj_geomDistance`` per pair (meshes as MuJoCo
  hull mesh geoms, ``mujoco_scene.py``), MuJoCo's default ``ccd_tolerance`` (1e-6);
  ``mujoco 1e-12``: tightened to 1e-12 as for the agreement check.

Each round runs every method once over its K states, in turn; the table gives per method the
median time per evaluation over the rounds and, for each peer, the ratio ``peer / ours`` per round:
its median and its range over the rounds. Agreement: over the states of every round, the largest
``|d_ours - d_coal|`` per pair (coal's Halfspace pairs left out) and ``|d_ours - d_mujoco 1e-12|``
(MuJoCo stores mesh vertices as float32: about 1e-8 m), over the pairs apart and over all pairs
(random states push curved solids deep into each other, where coal's EPA is known to stop early:
``bench_solids``, issue 11).

``--rss``: the peak resident memory of the demo loop (10,000 evaluations of the demo script,
``bench_vs_mujoco.trajectory``) in a fresh process each: this project (import, load, kernels from
the cache, loop with ``near_only``) and MuJoCo (its MJCF written here; that child imports only
``numpy`` and ``mujoco``).

Targets (issue 36): ours every pair exact >= 2x faster than MuJoCo and >= 3x faster than coal's own
distance loop on each robot; agreement with coal within 1e-9 m on every pair; near_only never
slower than exact.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ambf_collision.model import Model  # noqa: E402
from bench_ambf_robots import random_positions  # noqa: E402
from coal_peer import CoalPeer  # noqa: E402
from mujoco_scene import MujocoScene, model_to_mjcf, tighten  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
ROBOTS = ["robots/blender-pr2.yaml", "robots/blender-kuka-lbr-med.yaml", "robots/blender-toy-car2.yaml"]
DEMO_LOOP = 10_000
DEMO_ARM = REPO / "examples" / "demo" / "demo_arm.yaml"


def robot_methods(model):
    """``(methods, check)``: the timed methods (name -> function of a ``(K, J)`` state block,
    returning its seconds per evaluation) and the agreement check (a state block -> (max coal
    difference, max MuJoCo difference, pairs over 1e-9 m against coal))."""
    names = list(model.joint_names)
    data, kept, near = model.create_data(), model.create_data(), model.create_data()
    coal = CoalPeer(model)
    scene, tight = MujocoScene(model), MujocoScene(model)
    tighten(tight)
    P = len(model.pairs)
    out_c, out_m, fromto = np.zeros(len(coal.keep)), np.zeros(P), np.zeros(6)
    pose_of = {}

    def poses(qs):
        """Body poses at each state (the project's FK), computed once per block, untimed."""
        key = id(qs)
        if key not in pose_of:
            pose_of.clear()
            R, t = [], []
            for q in qs:
                model.set_joint_positions(data, names, q)
                model.evaluate(data)
                R.append(data.body_R.copy())
                t.append(data.body_t.copy())
            pose_of[key] = (R, t)
        return pose_of[key]

    def ours(qs):
        t0 = time.perf_counter()
        for q in qs:
            data.exact[:] = False
            model.set_joint_positions(data, names, q)
            model.evaluate(data)
        return (time.perf_counter() - t0) / len(qs)

    def with_data(d, near_only):
        def run(qs):
            t0 = time.perf_counter()
            for q in qs:
                model.set_joint_positions(d, names, q)
                model.evaluate(d, near_only=near_only)
            return (time.perf_counter() - t0) / len(qs)
        return run

    def coal_loop(qs):
        R, t = poses(qs)
        total = 0.0
        for Rb, tb in zip(R, t):
            coal.set_poses(Rb, tb)
            t0 = time.perf_counter()
            coal.distances(out_c)
            total += time.perf_counter() - t0
        return total / len(qs)

    def coal_poses(qs):
        R, t = poses(qs)
        t0 = time.perf_counter()
        for Rb, tb in zip(R, t):
            coal.set_poses(Rb, tb)
            coal.distances(out_c)
        return (time.perf_counter() - t0) / len(qs)

    def mujoco(s):
        def run(qs):
            t0 = time.perf_counter()
            for q in qs:
                s.set_q(q)
                s.distances(out_m, fromto)
            return (time.perf_counter() - t0) / len(qs)
        return run

    def check(qs):
        """Largest |d - coal| and |d - MuJoCo 1e-12| over the pairs apart (this project's d >= 0)
        and over all pairs, and the pair results over 1e-9 m from coal (apart, all)."""
        worst = np.zeros(4)
        over = np.zeros(2, np.int64)
        for q in qs:
            data.exact[:] = False
            model.set_joint_positions(data, names, q)
            model.evaluate(data)
            coal.set_poses(data.body_R, data.body_t)
            coal.distances(out_c)
            ours_c = data.distance[coal.keep]
            diff, apart = np.abs(out_c - ours_c), ours_c >= 0.0
            tight.set_q(q)
            tight.distances(out_m, fromto)
            diff_m, apart_m = np.abs(out_m - data.distance), data.distance >= 0.0
            worst = np.maximum(worst, [diff[apart].max(initial=0.0), diff.max(initial=0.0),
                                       diff_m[apart_m].max(initial=0.0), diff_m.max(initial=0.0)])
            over += [int((diff[apart] > 1e-9).sum()), int((diff > 1e-9).sum())]
        return worst, over

    methods = {"ours": ours, "ours exact, kept": with_data(kept, False),
               "ours near_only": with_data(near, True), "coal loop": coal_loop,
               "coal + poses": coal_poses, "mujoco": mujoco(scene), "mujoco 1e-12": mujoco(tight)}
    return methods, check


def robot_rows(path: Path, rounds: int, states: int, rng) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Model.from_files([path])
    methods, check = robot_methods(model)
    J = len(model.joint_names)
    blocks = random_positions(model, rng, (rounds + 1) * states).reshape(rounds + 1, states, J)
    for fn in methods.values():  # warm-up on block 0 (compile, caches)
        fn(blocks[0])
    samples = {name: [] for name in methods}
    worst = np.zeros(4)
    over = np.zeros(2, np.int64)
    for r in range(1, rounds + 1):
        for name, fn in methods.items():
            samples[name].append(fn(blocks[r]))
        w, o = check(blocks[r])
        worst, over = np.maximum(worst, w), over + o
    ours = np.array(samples["ours"])
    hulls = sum(1 for s in model.shapes if s.kind == 6)
    print(f"\n{path.name}: {len(model.pairs)} pairs, {hulls} hulls, {J} joints; {rounds} interleaved "
          f"rounds x {states} states; load {os.getloadavg()[0]:.2f}")
    print("| method | us per evaluation (p50) | peer / ours, p50 [min, max] over rounds |")
    print("|---|---|---|")
    for name, s in samples.items():
        s = np.array(s)
        ratio = s / ours
        txt = "-" if name == "ours" else f"{np.median(ratio):.2f} [{ratio.min():.2f}, {ratio.max():.2f}]"
        print(f"| {name} | {1e6 * np.median(s):.1f} | {txt} |")
    print(f"agreement over {rounds * states} states, pairs apart / all pairs: max |d - coal| = "
          f"{worst[0]:.1e} / {worst[1]:.1e} m ({over[0]} / {over[1]} pair results over 1e-9 m); "
          f"max |d - mujoco 1e-12| = {worst[2]:.1e} / {worst[3]:.1e} m")
    r_mj = np.median(np.array(samples["mujoco"]) / ours)
    r_coal = np.median(np.array(samples["coal loop"]) / ours)
    r_near = np.median(np.array(samples["ours near_only"]) / np.array(samples["ours exact, kept"]))
    print(f"targets: >= 2x MuJoCo {'MET' if r_mj >= 2 else 'NOT MET'} (x{r_mj:.2f}); >= 3x coal loop "
          f"{'MET' if r_coal >= 3 else 'NOT MET'} (x{r_coal:.2f}); coal within 1e-9 m "
          f"{'MET' if over[1] == 0 else 'NOT MET'}; near_only / exact kept = {r_near:.2f}", flush=True)


# VmHWM: this process image's peak (ru_maxrss would carry the parent's peak over fork and exec)
_PEAK = """
def peak_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
"""
_CHILD = {
    # each child imports only what its side needs, then prints its peak RSS (KiB, Linux)
    "mujoco": """
import sys
import numpy as np
import mujoco
xml, q_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
qs, pairs, adr = np.load(q_path), np.load(q_path + ".pairs.npy"), np.load(q_path + ".adr.npy")
m = mujoco.MjModel.from_xml_path(xml)
d = mujoco.MjData(m)
fromto = np.zeros(6)
pair_list = pairs.tolist()
for i in range(n):
    d.qpos[adr[:, 0]] = qs[i % len(qs)][adr[:, 1]]
    mujoco.mj_kinematics(m, d)
    for g1, g2 in pair_list:
        mujoco.mj_geomDistance(m, d, g1, g2, 1e3, fromto)
print(peak_kib())
""",
    "ours": """
import sys
import numpy as np
from ambf_collision.model import Model
adf, q_path, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
qs = np.load(q_path)
model = Model.from_files([adf])
data = model.create_data()
names = list(model.joint_names)
for i in range(n):
    model.set_joint_positions(data, names, qs[i % len(qs)])
    model.evaluate(data, near_only=True)
print(peak_kib())
""",
}


def rss_rows() -> None:
    from bench_vs_mujoco import trajectory

    model = Model.from_files([DEMO_ARM])
    scene = MujocoScene(model)
    xml, _ = model_to_mjcf(model)
    with tempfile.TemporaryDirectory() as tmp:
        xml_path, q_path = os.path.join(tmp, "demo.xml"), os.path.join(tmp, "q.npy")
        Path(xml_path).write_text(xml)
        np.save(q_path, trajectory(model, 1000))
        np.save(q_path + ".pairs.npy", np.array(scene.pairs, dtype=np.int64))
        np.save(q_path + ".adr.npy", np.stack([scene.qpos_adr, scene.joint_index], axis=1).astype(np.int64))
        print(f"\npeak RSS of the demo loop ({DEMO_LOOP} evaluations of the demo script, a fresh "
              "process each; ours with near_only, as the node):")
        print("| process | peak RSS MiB |\n|---|---|")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]))
        for side, model_file in (("ours", str(DEMO_ARM)), ("mujoco", xml_path)):
            out = subprocess.run([sys.executable, "-c", _PEAK + _CHILD[side], model_file, q_path,
                                  str(DEMO_LOOP)],
                                 capture_output=True, text=True, check=True, env=env).stdout.split()
            print(f"| {side} | {int(out[-1]) / 1024:.0f} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--models", type=Path,
                    default=Path(os.environ["AMBF_MODELS"]) if os.environ.get("AMBF_MODELS") else None)
    ap.add_argument("--rounds", type=int, default=15, help="interleaved rounds (default 15)")
    ap.add_argument("--states", type=int, default=20, help="states per round (default 20)")
    ap.add_argument("--rss", action="store_true", help="also the demo loop's peak RSS")
    args = ap.parse_args(argv)
    files = [f.resolve() for f in args.files]
    if not files and args.models is None:
        print("bench_hull_peers: give FILE arguments, --models or $AMBF_MODELS")
        return 2
    files = files or [args.models / r for r in ROBOTS]
    rng = np.random.default_rng(36)
    for path in files:
        robot_rows(path, args.rounds, args.states, rng)
    if args.rss:
        rss_rows()
    return 0


if __name__ == "__main__":
    sys.exit(main())
