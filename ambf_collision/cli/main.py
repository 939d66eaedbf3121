"""``ambf-collision``: the command-line tool of the core library (no ROS needed).

Subcommands (each module registers its own):
  distance FILE.json          signed distances between shapes given as JSON
  pairs FILE...               the body pairs AMBF checks, and the ignored ones with the rule
  check FILE... [--probes P]  body poses, contacts, minimum distance (and tactile probes)

Exit status: 0 on success, 2 on bad input (one clear message on stderr, never a traceback).

On a cold numba cache (the first run after a pip install, an upgrade or an edit of a kernel's
sources; a colcon build compiles them ahead) the kernels compile first,
which takes up to a minute; the tool says so once on stderr (``monitor/jit.FirstCompile``), so
that the wait does not look like a hang and standard output stays the report alone.
"""

from __future__ import annotations

import argparse
import sys

from ambf_collision.cli import distance as cli_distance
from ambf_collision.cli import model as cli_model
from ambf_collision.monitor.jit import FirstCompile
from ambf_collision.probes import ProbeCheckExtension

# `check --probes PROBES.yaml`: tactile probes extend the check report (registered once).
cli_model.register_check_extension(ProbeCheckExtension())


COMPILING = ("ambf-collision: compiling the collision kernels first (once after an install or an "
             "upgrade, up to a minute; numba keeps them in its cache)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ambf-collision",
        description=(
            "Exact signed distances, contacts and tactile probes for AMBF ADF files. "
            "Units: metres and radians; positions in the world frame."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    cli_distance.register(sub)
    cli_model.register(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        with FirstCompile(lambda: print(COMPILING, file=sys.stderr, flush=True)):
            return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `ambf-collision pairs ... | head`
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
