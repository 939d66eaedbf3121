"""Probes layer: kinematic tactile probes (ghost sensing spheres fixed on bodies).

* ``spec``: what a probe measures (:class:`ProbeSpec`, :class:`PatchSpec`) and which bodies
  it senses;
* ``probe_file``: the probe file, its parsing and validation (:class:`ProbeError`);
* ``compiled``: :class:`ProbeModel`, the probes compiled once against a model's shapes, and
  :func:`probe_evaluator`, the monitor's entry point;
* ``data``: :class:`ProbeData` (per-cycle buffers) and :class:`ProbeResult` (their view);
* ``stages``: the compiled kernels, one call per evaluation; ``layout``: their buffers;
* ``report``: JSON and table reports, the CLI's ``check --probes``.
"""

from ambf_collision.geometry import kernel_cache  # noqa: F401 - before any kernel: numba's cache stamp
from ambf_collision.probes.compiled import ProbeModel, probe_evaluator
from ambf_collision.probes.data import ProbeData, ProbeResult
from ambf_collision.probes.report import ProbeCheckExtension, probe_report_json, probe_report_table
from ambf_collision.probes.probe_file import ProbeError, load_probe_file, parse_probe_document
from ambf_collision.probes.spec import PatchSpec, ProbeSpec, expand_specs, resolve_body

__all__ = ["ProbeModel", "probe_evaluator", "ProbeData", "ProbeResult", "ProbeCheckExtension",
           "probe_report_json", "probe_report_table", "PatchSpec", "ProbeError", "ProbeSpec",
           "expand_specs", "load_probe_file", "parse_probe_document", "resolve_body"]
