"""Recorded-then-recomputed check: a change to the hull kernels gives the same results bit for bit.

Run ``python bench/same_bits.py record OUT.npz [--models DIR] [--states K]`` on the code before a
change, then ``python bench/same_bits.py compare OUT.npz`` on the code after it. Files: the
bundled examples (``examples/**/*.yaml``), ``../shared/adf-examples`` when present, and AMBF's PR2,
KUKA LBR Med and toy car 2 under DIR (``$AMBF_MODELS``). Per file: the zero state, then K random
joint states (every joint in its limits, seeded), every pair computed (``data.exact`` False) and
with ``near_only`` (its own Data, states in order: rows kept and bounds as the node runs them);
recorded: distance, witness points, normal, exact of every pair. ``compare`` prints per file the
number of results that differ in any bit and exits 1 when one does.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from ambf_collision.model import Model  # noqa: E402
from bench_ambf_robots import random_positions, shared_examples  # noqa: E402
from bench_hull_peers import ROBOTS  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FIELDS = ("distance", "point_1", "point_2", "normal", "exact")


def files(models) -> list:
    out = sorted(p for p in (REPO / "examples").rglob("*.yaml") if _is_adf(p))
    out += shared_examples()
    if models is not None:
        out += [models / r for r in ROBOTS if (models / r).is_file()]
    return out


def _is_adf(path: Path) -> bool:
    try:
        return "bodies:" in path.read_text()
    except OSError:
        return False


def results(path: Path, states: int) -> dict:
    """``{field: (2, K + 1, P, ...)}``: every pair computed, then near_only."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Model.from_files([path])
    names = list(model.joint_names)
    qs = np.concatenate([np.zeros((1, len(names))),
                         random_positions(model, np.random.default_rng(3636), states)])
    out = {f: [[], []] for f in FIELDS}
    every, near = model.create_data(), model.create_data()
    for q in qs:
        every.exact[:] = False
        model.set_joint_positions(every, names, q)
        model.evaluate(every)
        model.set_joint_positions(near, names, q)
        model.evaluate(near, near_only=True)
        for f in FIELDS:
            out[f][0].append(every.results[f].copy())
            out[f][1].append(near.results[f].copy())
    return {f: np.array(v) for f, v in out.items()}


def _same(a, b, states: int, P: int) -> np.ndarray:
    """Whether two recorded fields hold the same bits, per (mode,) state and pair: ``a``, ``b``
    of shape ``([2,] K + 1, P, ...)``."""
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    lead = a.shape[:a.shape.index(P, 1) + 1]
    same = (a == b) if a.dtype == bool else (a.view(np.uint8) == b.view(np.uint8))
    return same.reshape(lead + (-1,)).all(axis=-1)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=("record", "compare"))
    ap.add_argument("npz", type=Path)
    ap.add_argument("--models", type=Path,
                    default=Path(os.environ["AMBF_MODELS"]) if os.environ.get("AMBF_MODELS") else None)
    ap.add_argument("--states", type=int, default=200)
    args = ap.parse_args(argv)
    if args.mode == "record":
        store = {}
        for path in files(args.models):
            try:
                r = results(path, args.states)
            except Exception as exc:  # noqa: BLE001  (a file this loader refuses: named, skipped)
                print(f"{path}: skipped ({type(exc).__name__}: {exc})")
                continue
            for f, v in r.items():
                store[f"{path}|{f}"] = v
            print(f"{path}: {r['distance'].shape[2]} pairs recorded")
        np.savez_compressed(args.npz, states=args.states, **store)
        return 0
    ref = np.load(args.npz)
    states = int(ref["states"])
    bad = 0
    for path in sorted({k.split("|")[0] for k in ref.files if "|" in k}):
        r = results(Path(path), states)
        if r["distance"].shape[2] == 0:
            continue
        P = r["distance"].shape[2]
        changed = np.zeros((2, states + 1, P), bool)     # some field's bits differ from the record
        as_every = np.ones((states + 1, P), bool)        # near_only row == every-pair row
        for f in FIELDS:
            changed |= ~_same(ref[f"{path}|{f}"], r[f], states, P)
            as_every &= _same(r[f][1], r[f][0], states, P)
        exact = r["exact"][1]
        # every pair computed: the record's bits; near_only: its contract (pairs.py), an exact row
        # with the bits of every pair computed, a bound at most the distance
        differ = int(changed[0].sum())
        broken = int((exact & ~as_every).sum() + (~exact & (r["distance"][1] > r["distance"][0])).sum())
        bad += differ + broken
        print(f"{Path(path).name}: {P} pairs x {states + 1} states: every pair computed: {differ} "
              f"results differ in some bit from the record (max |distance change| "
              f"{float(np.abs(ref[f'{path}|distance'][0] - r['distance'][0]).max()):.1e} m); "
              f"near_only: {broken} rows break its contract, {int(changed[1].sum())} differ from the "
              f"record ({int((exact & ~ref[f'{path}|exact'][1]).sum())} bounds now exact, "
              f"{int((exact & ~ref[f'{path}|exact'][1] & ~changed[1]).sum())} unchanged)")
    print("SAME BITS" if bad == 0 else f"DIFFERENT: {bad} results")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
