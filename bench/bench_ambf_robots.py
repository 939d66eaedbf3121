"""AMBF's own robots through the whole Model: load, first and later evaluation, loop residuals, coal.

Run: ``python bench/bench_ambf_robots.py [--models DIR] [--repeats N] [--no-coal] [FILE...]``
with DIR AMBF's ``ambf_models/descriptions/multi-bodies`` folder (default: ``$AMBF_MODELS``).
Without FILE arguments it takes every file of AMBF's ``launch.yaml`` list (``DIR/../launch.yaml``),
the files the real-robots issue names, and the eight files of ``../shared/adf-examples``.

Per file, one row:

- ``load ms``: ``Model.from_files`` (parse, hulls, filtering, compile into arrays), one call;
- ``pairs``: pairs checked after AMBF's filtering;
- ``first us`` / ``later us``: the first ``Model.evaluate`` on a new Data at q = 0 (every pair
  exact) and the median of N later ones at random joint positions, every pair computed again
  (``data.exact`` set False before each: the same work as the first); the compiled kernels are
  warmed on the demo arm beforehand, so ``first`` is what a loaded model still does on its first
  call, not numba's compile (the issue's target: first no slower than 3x later);
- ``after load us``: the control for ``first``: the same model, already evaluated, evaluated
  once more at q = 0 (every pair computed) right after loading the file again, the Python work
  that precedes a first evaluation. When it is close to ``first``, the first call's excess over
  ``later`` is the processor's caches, cold after that work, not anything the model does once;
- ``kept us``: the same later evaluations as a Data runs them, keeping the pairs of shapes that
  did not move (bodies fixed in the world: ``geometry/pairs.evaluate_pairs``);
- ``coal loop us`` / ``coal + poses us``: the same pairs through coal called per pair from Python
  (``coal_peer.CoalPeer``: geometries built once; its transforms from this project's body poses,
  composed by vectorised NumPy), the distance calls alone and with setting the poses, medians over
  a third of the same positions; the ratio ``coal loop / later``; ``max |d - coal|`` over those
  evaluations (m). Pairs with a plane are left out of the coal column (coal's Halfspace has no
  signed distance to every shape). ``mujoco/later``: ``mj_kinematics`` + ``mj_geomDistance`` per
  pair (``mujoco_scene``; "-" for a scene with a cone, which MuJoCo has no primitive for). The
  interleaved, per-round ratios of the hull robots are ``bench_hull_peers.py``'s;
- ``loop mm / deg``: the largest closure residual at q = 0 (position mm, angle degrees) over the
  file's loop-closing joints, "-" when it has none.

Load warnings are counted, not printed (``--warnings`` prints them).
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # coal_peer, mujoco_scene

from ambf_collision.model import Model

REPO = Path(__file__).resolve().parents[1]
NAMED = ["robots/blender-psm.yaml", "robots/blender-ecm.yaml", "robots/blender-mtm.yaml",
         "robots/blender-neuro-robot.yaml", "robots/sophie.yaml", "puzzles/parallel_structure.yaml",
         "environments/KnotEnv/env.yaml", "robots/urdf-psm.yaml", "grippers/multi joint2.yaml",
         "robots/blender-suj.yaml"]


def shared_examples() -> list:
    for parent in REPO.parents:
        folder = parent / "shared" / "adf-examples"
        if folder.is_dir():
            return sorted(folder.glob("*.yaml"))
    return []


def default_files(models: Path | None) -> list:
    files = []
    if models is not None:
        launch = models.parent / "launch.yaml"
        if launch.is_file():
            import yaml
            entries = yaml.safe_load(launch.read_text()).get("multibody configs", [])
            files += [(launch.parent / e).resolve() for e in entries]
        files += [(models / n).resolve() for n in NAMED]
    files += shared_examples()
    seen, out = set(), []
    for f in files:
        if f not in seen and f.is_file():
            seen.add(f)
            out.append(f)
    return out


def label(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[-2:]) if parts[-2] != "adf-examples" else "examples/" + parts[-1]


def random_positions(model, rng, n):
    """n joint vectors in each joint's limits (+-pi, +-0.1 m when unlimited)."""
    lo, hi = [], []
    for j in model.world.joints:
        a, b = j.limits if j.limits else (None, None)
        span = 0.1 if j.type == "prismatic" else math.pi
        lo.append(-span if a is None or not math.isfinite(a) else a)
        hi.append(span if b is None or not math.isfinite(b) else b)
    return rng.uniform(np.array(lo), np.array(hi), size=(n, len(lo))) if lo else np.zeros((n, 0))


def evaluate_at(model, data, q):
    model.set_joint_positions(data, list(model.joint_names), q.tolist())
    return model.evaluate(data, report_distance=math.inf)


def peer_columns(model, data, positions):
    """coal and MuJoCo over the same positions, each evaluated by this project first:
    ``(coal loop us, coal + poses us, max |d - coal|, mujoco us)`` (medians per evaluation; None
    where a peer has nothing to compare). coal (``coal_peer.CoalPeer``): geometries built once, its
    transforms from this project's body poses (vectorised NumPy), planes left out; "loop" is the
    distance calls alone. MuJoCo (``mujoco_scene``): ``mj_kinematics`` + ``mj_geomDistance`` per
    pair; a scene with a cone is refused (None)."""
    from coal_peer import CoalPeer
    from mujoco_scene import MujocoScene

    coal = CoalPeer(model)
    try:
        scene = MujocoScene(model)
    except ValueError:
        scene = None
    out, out_m, fromto = np.zeros(len(coal.keep)), np.zeros(len(model.pairs)), np.zeros(6)
    loop, posed, mj, worst = [], [], [], 0.0
    for q in positions:
        data.exact[:] = False
        evaluate_at(model, data, q)
        t0 = time.perf_counter()
        coal.set_poses(data.body_R, data.body_t)
        t1 = time.perf_counter()
        coal.distances(out)
        t2 = time.perf_counter()
        loop.append(t2 - t1)
        posed.append(t2 - t0)
        if len(coal.keep):
            worst = max(worst, float(np.abs(out - data.distance[coal.keep]).max()))
        if scene is not None:
            t0 = time.perf_counter()
            scene.set_q(q)
            scene.distances(out_m, fromto)
            mj.append(time.perf_counter() - t0)

    def med(s):
        return 1e6 * float(np.median(s)) if s else None

    if not len(coal.keep):
        return None, None, None, med(mj)
    return med(loop), med(posed), worst, med(mj)


def row(path: Path, repeats: int, with_coal: bool, show_warnings: bool, rng) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t0 = time.perf_counter()
        model = Model.from_files([path])
        load_ms = 1e3 * (time.perf_counter() - t0)
    if show_warnings:
        for w in caught:
            print(f"  warning: {w.message}", file=sys.stderr)
    data = model.create_data()
    zero = np.zeros(len(model.joint_names))
    t0 = time.perf_counter()
    first = evaluate_at(model, data, zero)
    first_us = 1e6 * (time.perf_counter() - t0)
    res = first.closure_residuals
    loop = "-" if not len(res) else f"{1e3 * res[:, 0].max():.3f} / {math.degrees(res[:, 1].max()):.3f}"
    positions = random_positions(model, rng, repeats)
    later, kept = [], []
    for q in positions:
        data.exact[:] = False   # every pair computed again
        t0 = time.perf_counter()
        evaluate_at(model, data, q)
        later.append(time.perf_counter() - t0)
    for q in positions:
        t0 = time.perf_counter()
        evaluate_at(model, data, q)
        kept.append(time.perf_counter() - t0)
    later_us, kept_us = 1e6 * float(np.median(later)), 1e6 * float(np.median(kept))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Model.from_files([path])    # the Python work of a load, result unused
    data.exact[:] = False
    t0 = time.perf_counter()
    evaluate_at(model, data, zero)
    again_us = 1e6 * (time.perf_counter() - t0)
    coal_txt = ""
    if with_coal:
        loop_us, posed_us, worst, mj_us = peer_columns(model, data, positions[:max(3, repeats // 3)])
        coal_txt = (" | - | - | - | -" if loop_us is None
                    else f" | {loop_us:.0f} | {posed_us:.0f} | {loop_us / later_us:.1f}x | {worst:.1e}")
        coal_txt += " | -" if mj_us is None else f" | {mj_us / later_us:.2f}x"
    return (f"| {label(path)} | {load_ms:.0f} | {len(caught)} | {len(model.pairs)} | {first_us:.0f} "
            f"| {again_us:.0f} | {later_us:.0f} | {first_us / later_us:.1f} | {kept_us:.0f}{coal_txt} "
            f"| {loop} |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path, help="ADF files (default: see the module doc)")
    ap.add_argument("--models", type=Path, default=Path(os.environ["AMBF_MODELS"]) if os.environ.get("AMBF_MODELS") else None,
                    help="AMBF's multi-bodies folder (default $AMBF_MODELS)")
    ap.add_argument("--repeats", type=int, default=30, help="later evaluations per file (default 30)")
    ap.add_argument("--no-coal", action="store_true", help="leave out the coal column")
    ap.add_argument("--warnings", action="store_true", help="print the load warnings")
    args = ap.parse_args(argv)
    files = [f.resolve() for f in args.files] or default_files(args.models)
    rng = np.random.default_rng(7)
    demo = Model.from_files([REPO / "examples" / "demo" / "demo_arm.yaml"])
    t0 = time.perf_counter()
    evaluate_at(demo, demo.create_data(), np.zeros(len(demo.joint_names)))
    print(f"compile/warm-up on the demo arm: {time.perf_counter() - t0:.1f} s; load: "
          f"{os.getloadavg()[0]:.2f}")
    coal_head = ("" if args.no_coal else
                 " coal loop us | coal + poses us | coal loop/later | max abs(d - coal) m | mujoco/later |")
    print(f"| file | load ms | warnings | pairs | first us | after load us | later us | first/later | kept us |{coal_head} loop mm / deg |")
    print("|---" * (10 + (0 if args.no_coal else 5)) + "|")
    for path in files:
        try:
            print(row(path, args.repeats, not args.no_coal, args.warnings, rng), flush=True)
        except Exception as exc:  # noqa: BLE001  (a bench row, not a test: say what failed, go on)
            print(f"| {label(path)} | failed: {type(exc).__name__}: {exc} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
