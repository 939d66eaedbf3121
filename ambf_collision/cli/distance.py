"""``ambf-collision distance FILE.json``: signed distances between shapes given as JSON.

Input: ``{"shapes": [{"sphere": {...}}, ...], "pairs": [[i, j], ...]}`` (``pairs`` optional:
all pairs ``i < j``). Output on stdout: a JSON list with, per pair, ``i``, ``j``, ``distance``
(signed, m), ``point_1``, ``point_2``, ``normal`` (shape i -> shape j), ``position``.
Bad input: one message naming the file, the shape index and the field on stderr, exit status 2.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from ambf_collision.geometry.shapes import ShapeError, shape_from_json

__all__ = ["register", "load_request", "run", "main"]


def load_request(path):
    """Read and validate a distance request file -> (shapes, pairs (P,2) int array)."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = json.load(fh)
    except OSError as err:
        raise ShapeError(f"{path}: cannot read: {err.strerror or err}") from None
    except json.JSONDecodeError as err:
        raise ShapeError(f"{path}: invalid JSON at line {err.lineno} column {err.colno}: {err.msg}") from None
    if not isinstance(doc, dict) or "shapes" not in doc:
        raise ShapeError(f"{path}: expected an object with a 'shapes' list")
    unknown = sorted(set(doc) - {"shapes", "pairs"})
    if unknown:
        raise ShapeError(f"{path}: {unknown[0]}: unknown key (expected 'shapes' and optional 'pairs')")
    raw = doc["shapes"]
    if not isinstance(raw, list):
        raise ShapeError(f"{path}: shapes: must be a list, got {type(raw).__name__}")
    try:
        shapes = [shape_from_json(obj, k) for k, obj in enumerate(raw)]
    except ShapeError as err:
        raise ShapeError(f"{path}: {err}") from None
    n = len(shapes)
    if "pairs" not in doc or doc["pairs"] is None:
        pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    else:
        if not isinstance(doc["pairs"], list):
            raise ShapeError(f"{path}: pairs: must be a list of [i, j], got {doc['pairs']!r}")
        pairs = []
        for k, p in enumerate(doc["pairs"]):
            ok = (isinstance(p, list) and len(p) == 2
                  and all(isinstance(x, int) and not isinstance(x, bool) for x in p))
            if not ok:
                raise ShapeError(f"{path}: pairs[{k}]: must be [i, j] with integer shape indices, got {p!r}")
            for x in p:
                if not 0 <= x < n:
                    raise ShapeError(f"{path}: pairs[{k}]: shape index {x} out of range 0..{n - 1}")
            if p[0] == p[1]:
                raise ShapeError(f"{path}: pairs[{k}]: a shape cannot be paired with itself: {p!r}")
            if shapes[p[0]].kind == shapes[p[1]].kind == 5:
                raise ShapeError(f"{path}: pairs[{k}]: distance between two planes is not defined")
            pairs.append(tuple(p))
    return shapes, np.array(pairs, dtype=np.intp).reshape(-1, 2)


def run(path):
    """Distances of the request in ``path`` as a list of JSON-ready dicts."""
    from ambf_collision.geometry.pairs import PairDistance
    from ambf_collision.geometry.world_shapes import WorldShapes

    shapes, pairs = load_request(path)
    world = WorldShapes.from_shapes(shapes)
    res = PairDistance(world, pairs).compute(world)
    return [
        {"i": int(i), "j": int(j), "distance": float(res.distance[k]),
         "point_1": res.point_1[k].tolist(), "point_2": res.point_2[k].tolist(),
         "normal": res.normal[k].tolist(), "position": res.position[k].tolist()}
        for k, (i, j) in enumerate(pairs)
    ]


def main(args) -> int:
    """Subcommand body: print the JSON list; bad input -> message on stderr, status 2."""
    try:
        out = run(args.file)
    except (ShapeError, ValueError) as err:
        print(f"ambf-collision distance: {err}", file=sys.stderr)
        return 2
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


def register(subparsers):
    """Add the ``distance`` subcommand to the ``ambf-collision`` parser."""
    p = subparsers.add_parser(
        "distance", help="signed distances between shapes given as JSON",
        description="Signed distances (m), witness points, normals (shape i -> shape j) and "
                    "midpoints for pairs of shapes read from a JSON file "
                    '{"shapes": [...], "pairs": [[i, j], ...]} (pairs optional: all pairs).')
    p.add_argument("file", help="JSON file with 'shapes' and optional 'pairs'")
    p.set_defaults(func=main)
    return p
