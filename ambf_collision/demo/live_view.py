"""Compact live text view of the collision monitor (the demo's output without RViz).

Pure string formatting from a :class:`ambf_collision.monitor.MonitorOutput`: status, minimum
distance, pairs checked, evaluation rate and compute time, the closest reported pairs in mm, and
the probes (patch totals and the strongest probes in N). :class:`LiveView` limits refreshes to one
per ``period`` seconds and can redraw in place on an ANSI terminal.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.monitor.monitor import STATUS_NAMES, STATUS_OK

__all__ = ["format_view", "LiveView", "short_name"]


def short_name(name: str) -> str:
    """Body name without its namespace (``/ambf/env/hand`` -> ``hand``)."""
    return str(name).rstrip("/").rsplit("/", 1)[-1]


def _mm(d: float) -> str:
    """A distance in metres as ``+12.3 mm`` (``inf`` stays ``inf``)."""
    if math.isinf(d):
        return "inf" if d > 0 else "-inf"
    return f"{d * 1e3:+.1f} mm"


def _vec(v) -> str:
    return "(" + ", ".join(f"{x:+.2f}" for x in np.asarray(v, float)) + ")"


def format_view(out, n_pairs: int = 3, n_probes: int = 3) -> str:
    """A few lines describing one monitor output (distances in mm, forces in N)."""
    name = STATUS_NAMES.get(out.status, f"STATUS {out.status}")
    head = (f"[t={out.time:9.3f} s] {name:<17} min {_mm(out.min_distance):>11}  "
            f"pairs {out.pairs_checked:4d}  {out.evaluation_rate:7.1f} eval/s  "
            f"compute {out.compute_time * 1e3:6.2f} ms")
    lines = [head]
    if out.status != STATUS_OK and out.reason:
        lines.append(f"  status: {out.reason}")
    if out.contacts:
        shown = []
        for c in out.contacts[:n_pairs]:
            mark = "!" if c.distance < 0.0 else " "
            shown.append(f"{mark}{short_name(c.body_1)}-{short_name(c.body_2)} {_mm(c.distance)}")
        more = len(out.contacts) - n_pairs
        lines.append("  closest: " + " | ".join(shown) + (f" (+{more} more)" if more > 0 else ""))
    elif out.evaluated:
        lines.append("  closest: no pair within the report distance")
    pr = out.probes
    if pr is not None and len(pr.names):
        lines.append("  " + _probe_line(pr, n_probes))
    if out.dropped_contacts:
        lines.append(f"  dropped {out.dropped_contacts} non-finite contact(s)")
    return "\n".join(lines)


def _probe_line(pr, n_probes: int) -> str:
    parts = []
    for j, name in enumerate(pr.patch_names):
        f = np.asarray(pr.patch_force[j], float)
        total = int(np.sum([1 for k, n in enumerate(pr.names)
                            if n.startswith(name + "/")])) if pr.names else 0
        parts.append(f"{name} {int(pr.patch_in_contact[j])}/{total} touching "
                     f"F {np.linalg.norm(f):.2f} N {_vec(f)}")
    force = np.linalg.norm(np.asarray(pr.force, float), axis=1)
    n_in = int(np.count_nonzero(pr.in_contact))
    if n_in:
        order = np.argsort(-force, kind="stable")[:n_probes]
        strongest = ", ".join(f"{pr.names[i]} {force[i]:.2f} N" for i in order if force[i] > 0)
        parts.append(f"strongest: {strongest}")
    else:
        finite = np.asarray(pr.distance, float)
        finite = finite[np.isfinite(finite)]
        parts.append("no probe touching" + (f", nearest gap {_mm(finite.min())}" if finite.size else ""))
    return "probes: " + "; ".join(parts)


class LiveView:
    """Refresh-limited live view: :meth:`update` returns the text at most once per ``period`` s.

    With ``ansi=True`` the returned text starts with the escape codes that move the cursor over
    the previous refresh and clear it, so printing it redraws the view in place.
    """

    def __init__(self, period: float = 0.2, ansi: bool = False, n_pairs: int = 3, n_probes: int = 3):
        self.period = float(period)
        self.ansi = bool(ansi)
        self.n_pairs, self.n_probes = n_pairs, n_probes
        self._last = -math.inf
        self._lines = 0

    def update(self, out, now: float | None = None):
        """The view of ``out`` when a refresh is due at ``now`` (s; default ``out.time``), else None."""
        now = out.time if now is None else float(now)
        if now - self._last < self.period - 1e-9:
            return None
        self._last = now
        text = format_view(out, self.n_pairs, self.n_probes)
        prefix = f"\x1b[{self._lines}F\x1b[J" if self.ansi and self._lines else ""
        self._lines = text.count("\n") + 1
        return prefix + text
