"""Probe results as a JSON report, a text table, and the CLI's ``check --probes`` extension."""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.probes.compiled import ProbeModel
from ambf_collision.probes.probe_file import load_probe_file
from ambf_collision.probes.spec import plain_body_name

__all__ = ["probe_report_json", "probe_report_table", "ProbeCheckExtension"]


def _vec(v):
    return [float(x) for x in v]


def probe_report_json(probes, result, model=None) -> dict:
    """``{"probes": [...], "patches": {...}}`` for ``check --json`` (SI units).

    ``probes``: the :class:`~ambf_collision.probes.compiled.ProbeModel`; ``result``: its
    :class:`~ambf_collision.probes.data.ProbeResult`. Each probe (world frame): ``name``,
    ``body`` (qualified), ``in_contact``, ``depth`` (m), ``area`` (m^2), ``force`` [x, y, z]
    (N), ``contact_normal`` [x, y, z] (zeros when free), ``distance`` (m, ``null`` beyond
    range), ``touching_body`` (qualified name, ``null`` when free), ``position`` [x, y, z] (m),
    ``normal`` [x, y, z]. Patches: ``{name: {"force", "area", "in_contact", "force_body",
    "torque_body"}}``: summed force (N, world), summed area (m^2), number of probes in contact,
    and the wrench in the patch body's frame (N; N m about the patch origin).
    """
    names = list(model.body_names) if model is not None else probes.body_names
    out = []
    for i, name in enumerate(result.names):
        tb = int(result.touching_body[i])
        dist = float(result.distance[i])
        out.append({
            "name": name,
            "body": result.body[i],
            "in_contact": bool(result.in_contact[i]),
            "depth": float(result.depth[i]),
            "area": float(result.area[i]),
            "force": _vec(result.force[i]),
            "contact_normal": _vec(result.contact_normal[i]),
            "distance": dist if math.isfinite(dist) else None,
            "touching_body": names[tb] if tb >= 0 else None,
            "position": _vec(result.position[i]),
            "normal": _vec(result.normal[i]),
        })
    patches = {
        name: {
            "force": _vec(result.patch_force[j]),
            "area": float(result.patch_area[j]),
            "in_contact": int(result.patch_in_contact[j]),
            "force_body": _vec(result.patch_force_body[j]),
            "torque_body": _vec(result.patch_torque_body[j]),
        }
        for j, name in enumerate(result.patch_names)
    }
    return {"probes": out, "patches": patches}


def probe_report_table(probes, result, model=None) -> str:
    """Human-readable table of all probes (mm, N, mm^2) and the patch totals."""
    names = list(model.body_names) if model is not None else probes.body_names
    head = f"{'probe':<20} {'body':<16} {'contact':<7} {'depth mm':>9} {'|F| N':>9} " \
           f"{'area mm2':>9} {'gap mm':>9}  touching"
    lines = [head, "-" * len(head)]
    for i, name in enumerate(result.names):
        dist = float(result.distance[i])
        tb = int(result.touching_body[i])
        lines.append(
            f"{name:<20} {plain_body_name(result.body[i]):<16} {'yes' if result.in_contact[i] else 'no':<7} "
            f"{1e3 * result.depth[i]:>9.3f} {float(np.linalg.norm(result.force[i])):>9.4f} "
            f"{1e6 * result.area[i]:>9.3f} {(f'{1e3 * dist:.3f}' if math.isfinite(dist) else '-'):>9}  "
            f"{plain_body_name(names[tb]) if tb >= 0 else '-'}"
        )
    if result.patch_names:
        lines.append("")
        lines.append(f"{'patch':<20} {'in contact':>10} {'|F| N':>9} {'force N [x, y, z]':<30} "
                     f"{'area mm2':>9}  torque N mm [x, y, z] (body frame, about the origin)")
        for j, name in enumerate(result.patch_names):
            f = result.patch_force[j]
            tau = 1e3 * result.patch_torque_body[j]
            lines.append(
                f"{name:<20} {int(result.patch_in_contact[j]):>10} {float(np.linalg.norm(f)):>9.4f} "
                f"{'[' + ', '.join(f'{x:.4f}' for x in f) + ']':<30} {1e6 * result.patch_area[j]:>9.3f}  "
                f"[{', '.join(f'{x:.4f}' for x in tau)}]"
            )
    return "\n".join(lines)


class ProbeCheckExtension:
    """``ambf-collision check FILE... --probes PROBES.yaml [--json]`` (for
    ``cli.model.register_check_extension``): adds ``"probes"`` and ``"patches"`` to the JSON
    report (see :func:`probe_report_json`) or the probe table to the text output.
    Bad probe files raise :class:`~ambf_collision.probes.probe_file.ProbeError` (file, entry, key)."""

    def add_arguments(self, parser):
        parser.add_argument("--probes", metavar="PROBES.yaml", default=None,
                            help="tactile probe file (YAML: probes/patches in body frames, m, N/m); "
                                 "adds each probe's depth, force, area, distance and patch totals")

    def __init__(self):
        self._loaded = None  # (path, model, ProbeModel) of the last check

    def _probes(self, path, model):
        """The ProbeModel of the probe file ``path`` for ``model``, loaded once per check."""
        if self._loaded is None or self._loaded[0] != path or self._loaded[1] is not model:
            self._loaded = (path, model,
                            ProbeModel.from_model(load_probe_file(path, model.body_names), model))
        return self._loaded[2]

    def extend(self, args, model, data, result, report):
        path = getattr(args, "probes", None)
        if not path:
            return []
        probes = self._probes(path, model)
        res = probes.evaluate_model(probes.create_data(), result)
        report.update(probe_report_json(probes, res, model))
        return ["", f"tactile probes: {len(probes)} from {path} (world frame; gap '-' beyond range)"] + [
            "  " + line for line in probe_report_table(probes, res, model).splitlines()
        ]
