"""``ambf-collision``: the command-line tool of the core library (no ROS needed).

Subcommands (each module registers its own):
  distance FILE.json          signed distances between shapes given as JSON
  pairs FILE...               the body pairs AMBF checks, and the ignored ones with the rule
  check FILE... [--probes P]  body poses, contacts, minimum distance (and tactile probes)

Exit status: 0 on success, 2 on bad input (one clear message on stderr, never a traceback).

On a cold numba cache (the first run after an install or an upgrade) the kernels compile first,
which takes up to a minute; the tool says so once on stderr (:class:`FirstCompileNotice`), so
that the wait does not look like a hang and standard output stays the report alone.
"""

from __future__ import annotations

import argparse
import sys

from numba.core import event

from ambf_collision.cli import distance as cli_distance
from ambf_collision.cli import model as cli_model
from ambf_collision.probes import ProbeCheckExtension

# `check --probes PROBES.yaml`: tactile probes extend the check report (registered once).
cli_model.register_check_extension(ProbeCheckExtension())


COMPILING = ("ambf-collision: compiling the collision kernels first (once after an install or an "
             "upgrade, up to a minute; numba keeps them in its cache)")


class FirstCompileNotice(event.Listener):
    """Prints :data:`COMPILING` once on ``stream`` (stderr by default) when numba starts compiling
    a function, as a ``numba:compile`` listener (``numba.core.event``); nothing when every kernel
    comes from numba's cache."""

    def __init__(self, stream=None):
        self.stream = stream
        self.said = False

    def on_start(self, ev):
        if not self.said:
            self.said = True
            print(COMPILING, file=self.stream or sys.stderr, flush=True)

    def on_end(self, ev):
        pass


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
    notice = FirstCompileNotice()
    event.register("numba:compile", notice)
    try:
        return int(args.func(args) or 0)
    except BrokenPipeError:  # e.g. `ambf-collision pairs ... | head`
        return 0
    except KeyboardInterrupt:
        return 130
    finally:
        event.unregister("numba:compile", notice)


if __name__ == "__main__":
    sys.exit(main())
