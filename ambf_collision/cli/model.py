"""``ambf-collision pairs`` and ``ambf-collision check``: ADF models from the command line.

``pairs FILE...``: the body pairs checked (AMBF's filtering plus ``--ignore``/``--check``) and
the ignored ones with the rule that ignored them. ``check FILE...``: body poses, contacts
below ``--report-distance`` (closest first) and the minimum distance at the given joint
positions. Both print a table, or JSON with ``--json``. Units: metres, radians, world frame.

Bad input (files, ``--joint``, ``--ignore``/``--check``) prints one line on stderr naming
file, entry and key, and exits with status 2.

Extension point for ``check`` (e.g. tactile probes): :func:`register_check_extension` takes
an object with ``add_arguments(parser)`` and ``extend(args, model, data, result, report)`` (mutates the JSON ``report`` dict; may return extra table lines
as a list of str). :func:`check_report` builds the base JSON dict.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from ambf_collision.model.adf import AdfError
from ambf_collision.model.filtering import Overrides
from ambf_collision.probes import ProbeError
from ambf_collision.geometry.shapes import ShapeError

__all__ = ["register", "register_check_extension", "check_report", "pairs_report", "build_model"]

OVERRIDE_HELP = (
    "User overrides on top of AMBF's rules, as an allowed-collision list: each side of A:B is "
    "a body name (qualified like /ambf/env/link3 or plain like link3) or an fnmatch pattern. "
    "Precedence, most specific wins: any user entry beats AMBF's rules; an entry with more "
    "exact (non-pattern) sides beats one with fewer; on a tie --check beats --ignore."
)

_CHECK_EXTENSIONS: list = []
_CHECK_PARSERS: list = []


def register_check_extension(ext) -> None:
    """Add an extension to ``check`` (see the module docstring)."""
    _CHECK_EXTENSIONS.append(ext)
    for p in _CHECK_PARSERS:
        ext.add_arguments(p)


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help="AMBF ADF YAML files (one world)")
    p.add_argument("--ignore", action="append", default=[], metavar="A:B",
                   help="do not check body pair A:B (repeatable)")
    p.add_argument("--check", action="append", default=[], metavar="A:B",
                   help="check body pair A:B even if AMBF ignores it (repeatable)")
    p.add_argument("--couplings", action="append", default=[], metavar="FILE",
                   help="YAML file of coupled joints, passive = multiplier * source + offset "
                        "(e.g. config/couplings/blender-psm.yaml; repeatable)")
    p.add_argument("--coupling", action="append", default=[], metavar="RULE",
                   help="one coupled joint as 'JOINT = [MULT *] SOURCE [+|- OFFSET]' (repeatable)")
    p.add_argument("--hull-meshes", action="append", default=[], metavar="PATTERN",
                   help="monitor the concave collision meshes of the bodies matching PATTERN "
                        "(name or fnmatch pattern, qualified or plain) as their convex hulls, "
                        "for speed (repeatable; a pattern matching none is warned)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")


def register(subparsers) -> dict:
    """Add the ``pairs`` and ``check`` subcommands; each sets ``func(args) -> exit code``."""
    p = subparsers.add_parser(
        "pairs", help="body pairs checked and ignored (AMBF filtering + overrides)",
        description="Body pairs checked, and the ignored ones with the rule that ignored "
                    "them. " + OVERRIDE_HELP, epilog=OVERRIDE_HELP)
    _common(p)
    p.set_defaults(func=run_pairs)
    c = subparsers.add_parser(
        "check", help="body poses, contacts and minimum distance at given joint positions",
        description="Pose every body at the given joint positions (others 0) and report "
                    "signed distances (m) of all checked pairs. " + OVERRIDE_HELP)
    _common(c)
    c.add_argument("--joint", action="append", default=[], metavar="NAME=VALUE",
                   help="joint position (rad or m) by joint name, plain or qualified (repeatable)")
    c.add_argument("--report-distance", type=float, default=0.05, metavar="D",
                   help="report contacts with signed distance below D metres (default 0.05)")
    c.set_defaults(func=run_check)
    _CHECK_PARSERS.append(c)
    for ext in _CHECK_EXTENSIONS:
        ext.add_arguments(c)
    return {"pairs": p, "check": c}


class _InputError(Exception):
    pass


def build_model(args):
    """Model from ``args.files`` and the overrides, loaded as the node loads it
    (:func:`~ambf_collision.monitor.scene.load_scene`); warnings go to stderr as one line each."""
    from ambf_collision.monitor.scene import load_scene

    try:
        Overrides.from_strings(args.ignore, args.check)  # its error names the option
    except ValueError as e:
        raise _InputError(f"--ignore/--check: {e}") from None
    scene = load_scene(args.files, ignore_pairs=args.ignore, check_pairs=args.check,
                       coupling_files=args.couplings, couplings=args.coupling,
                       hull_meshes=args.hull_meshes)
    for line in scene.warnings:
        print(f"warning: {line}", file=sys.stderr)
    return scene.model


def _fail(message: str) -> int:
    print(f"ambf-collision: error: {message}", file=sys.stderr)
    return 2


def _guard(fn, args) -> int:
    try:
        return fn(args)
    except (AdfError, ProbeError, ShapeError, _InputError) as e:
        return _fail(str(e).replace("\n", " "))


# ------------------------------------------------------------------------------------- pairs


def pairs_report(model) -> dict:
    """``{"checked": [[b1, b2], ...], "ignored": [{"pair": [b1, b2], "reason": r}, ...]}``."""
    n = model.body_names
    return {
        "checked": [[n[i], n[j]] for i, j in model.body_pairs],
        "ignored": [{"pair": [n[i], n[j]], "reason": r} for i, j, r in model.ignored],
    }


def _pairs(args) -> int:
    model = build_model(args)
    rep = pairs_report(model)
    if args.json:
        print(json.dumps(rep, indent=2))
        return 0
    why = dict(zip(map(tuple, model.body_pairs.tolist()), model.filter.reasons_checked))
    rows = [(a, b, why.get((model.body_index(a), model.body_index(b)), "")) for a, b in rep["checked"]]
    print(f"checked body pairs: {len(rows)}")
    if any(r[2] for r in rows):
        _table(rows, ("body 1", "body 2", "note"))
    else:
        _table([r[:2] for r in rows], ("body 1", "body 2"))
    irows = [(x["pair"][0], x["pair"][1], x["reason"]) for x in rep["ignored"]]
    print(f"\nignored body pairs: {len(irows)}")
    _table(irows, ("body 1", "body 2", "reason"))
    no_shape = [b.name for b in model.world.bodies if not b.shapes]
    if no_shape:
        print(f"\nbodies without collision shapes: {', '.join(no_shape)}")
    return 0


def run_pairs(args) -> int:
    return _guard(_pairs, args)


# ------------------------------------------------------------------------------------- check


def _parse_joints(items):
    names, values = [], []
    for s in items:
        name, sep, val = s.rpartition("=")
        if not sep or not name.strip():
            raise _InputError(f"--joint {s!r}: must be NAME=VALUE")
        try:
            v = float(val)
        except ValueError:
            raise _InputError(f"--joint {s!r}: value must be a number (rad or m), got {val!r}") from None
        if not math.isfinite(v):
            raise _InputError(f"--joint {s!r}: value must be finite")
        names.append(name.strip())
        values.append(v)
    return names, values


def _num(x: float):
    return None if not math.isfinite(x) else float(x)


def check_report(model, data, result) -> dict:
    """The ``check`` JSON dict: bodies (position, orientation [x,y,z,w]), pairs_checked,
    min_distance (None when nothing is checked), contacts (closest first), loops (per
    loop-closing joint: position residual m, angle residual rad, open when above the
    LOOP_OPEN_* tolerances)."""
    bodies = {
        name: {"position": [float(x) for x in p], "orientation": [float(x) for x in q]}
        for name, (p, q) in result.body_poses().items()
    }
    return {
        "bodies": bodies,
        "pairs_checked": int(result.pairs_checked),
        "min_distance": _num(result.min_distance),
        "contacts": [c.to_json() for c in result.contacts],
        "loops": loop_report(model, result),
    }


def loop_report(model, result) -> list:
    """``[{"joint", "position", "angle", "open"}]`` per loop-closing joint: how far the joint
    positions are from closing the loop there (m, rad)."""
    opened = {name for name, _, _ in result.open_loops()}
    return [{"joint": name, "position": float(p), "angle": float(a), "open": name in opened}
            for name, (p, a) in zip(model.closure_joint_names, result.closure_residuals.tolist())]


def _check(args) -> int:
    if not math.isfinite(args.report_distance):
        raise _InputError("--report-distance: must be a finite number of metres")
    names, values = _parse_joints(args.joint)
    model = build_model(args)
    data = model.create_data()
    unknown = model.set_joint_positions(data, names, values)
    if unknown:
        amb = [u for u in unknown if u in model.kinematics.ambiguous]
        hint = f" ({', '.join(amb)}: ambiguous, qualify with the namespace)" if amb else ""
        known = ", ".join(model.joint_plain_names[:8]) + (" ..." if len(model.joint_names) > 8 else "")
        raise _InputError(f"--joint: unknown joint {', '.join(map(repr, unknown))}{hint}; known: {known or 'none'}")
    result = model.evaluate(data, report_distance=args.report_distance)
    report = check_report(model, data, result)
    extra = []
    for ext in _CHECK_EXTENSIONS:
        extra += ext.extend(args, model, data, result, report) or []
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    rows = [(n, *(f"{x:+.4f}" for x in b["position"]), *(f"{x:+.4f}" for x in b["orientation"]))
            for n, b in report["bodies"].items()]
    print(f"bodies: {len(rows)} (position m, orientation quaternion x y z w, world frame)")
    _table(rows, ("body", "x", "y", "z", "qx", "qy", "qz", "qw"))
    md = report["min_distance"]
    print(f"\npairs checked: {report['pairs_checked']}")
    if md is None:
        print("min distance: none (no pair checked)")
    else:
        c = model.pair_bodies[result.closest]
        print(f"min distance: {md:.6f} m ({model.body_names[c[0]]} - {model.body_names[c[1]]})")
    crow = [(f"{c['distance']:+.6f}", _sname(c["body_1"], c["shape_1"]), _sname(c["body_2"], c["shape_2"]),
             " ".join(f"{x:+.4f}" for x in c["position"]), " ".join(f"{x:+.3f}" for x in c["normal"]))
            for c in report["contacts"]]
    print(f"contacts below {args.report_distance:g} m: {len(crow)}")
    _table(crow, ("distance", "body 1", "body 2", "position", "normal 1->2"))
    loops = report["loops"]
    if loops:
        lrow = [(x["joint"], f"{1e3 * x['position']:.3f}", f"{math.degrees(x['angle']):.3f}",
                 "OPEN" if x["open"] else "closed") for x in loops]
        n_open = sum(x["open"] for x in loops)
        print(f"\nloop-closing joints: {len(loops)} ({n_open} open: the joint positions do not "
              "close the loop; give the passive joints or --couplings)")
        _table(lrow, ("joint", "position mm", "angle deg", "loop"))
    for line in extra:
        print(line)
    return 0


def run_check(args) -> int:
    return _guard(_check, args)


def _sname(body: str, shape: int) -> str:
    return body if shape < 0 else f"{body}[{shape}]"


def _table(rows, header) -> None:
    if not rows:
        print("  (none)")
        return
    w = [max(len(str(h)), *(len(str(r[k])) for r in rows)) for k, h in enumerate(header)]
    print("  " + "  ".join(str(h).ljust(w[k]) for k, h in enumerate(header)).rstrip())
    for r in rows:
        print("  " + "  ".join(str(x).ljust(w[k]) for k, x in enumerate(r)).rstrip())
