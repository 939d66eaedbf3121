"""Former import path of the probes layer (one module before the split), kept only so that the
CLI, the monitor, the node and the benches import until they name the new modules; delete it
then. ``ProbeSet`` and ``rigid_roots`` are gone: use :class:`ambf_collision.probes.ProbeModel`
and :func:`ambf_collision.probes.probe_evaluator`."""

from ambf_collision.probes.report import ProbeCheckExtension, probe_report_json, probe_report_table  # noqa: F401
from ambf_collision.probes.spec import (PatchSpec, ProbeError, ProbeSpec, expand_specs,  # noqa: F401
                                        load_probe_file, parse_probe_document, resolve_body)
