"""The node's load and the markers' kernels on a cold cache (monitor/jit.py's second process
compiles them; ros/markers.py gives their calls)."""

from __future__ import annotations

import pytest


@pytest.mark.slow
def test_the_nodes_load_calls_every_marker_kernel_even_without_a_contact():
    """The load warms every kernel the node calls later, so that none is first compiled on the
    executor (on a cold cache a first contact compiled the contacts' marker kernel there: 0.8 s).
    The demo arm has no contact at its load pose; a fresh process sees which kernels ran."""
    from conftest import DEMO_ARM, DEMO_PROBES, run_fresh_python

    pytest.importorskip("ambf_collision.ros.scene_loading",
                        reason="ROS 2 messages not importable: run via `make test`")

    code = f"""
from ambf_collision.ros import marker_geometry as kernels
from ambf_collision.ros.node_parameters import PARAMETERS
from ambf_collision.ros.parameters import check
from ambf_collision.ros.scene_loading import load_node_scene
names = ("shape_colours", "shape_markers", "contact_markers", "probe_markers")
assert not any(getattr(kernels, n).signatures for n in names)
params = {{n: check(n, s, s.default) for n, s in PARAMETERS.items()}}
params["adf_files"], params["probe_files"] = [{str(DEMO_ARM)!r}], [{str(DEMO_PROBES)!r}]
prepared = load_node_scene(params, "world")
print(sorted(n for n in names if getattr(kernels, n).signatures))
"""
    assert run_fresh_python(code) == str(sorted(["shape_colours", "shape_markers",
                                                     "contact_markers", "probe_markers"]))


@pytest.mark.slow
def test_the_markers_kernel_calls_have_the_types_build_passes():
    """``MarkerBuilder.kernel_calls`` (what the load's second process compiles) gives the four
    marker kernels with arguments of the types ``build`` passes them: in a fresh process, after
    compiling them for those types, a build with contacts and probes leaves each kernel with
    that one version."""
    from conftest import DEMO_ARM, run_fresh_python

    pytest.importorskip("ambf_collision.ros.markers",
                        reason="ROS 2 messages not importable: run via `make test`")
    code = f"""
from types import SimpleNamespace
import numpy as np
from numba import typeof
from ambf_collision.model import Model
from ambf_collision.ros.markers import build_markers, marker_kernel_calls
m = Model.from_files([{str(DEMO_ARM)!r}])
data = m.create_data()
calls = marker_kernel_calls(m, data, 2)
declared = [tuple(typeof(a) for a in args) for _, args in calls]
for (kernel, _), types in zip(calls, declared):
    kernel.compile(types)
result = m.evaluate(data, report_distance=1.0)
assert len(result.contacts) >= 2
probes = SimpleNamespace(names=["a", "b"], position=np.zeros((2, 3)), force=np.ones((2, 3)),
                         in_contact=np.array([True, False]))
build_markers(m, result, probes, "world", 0.0, data=data)
print([(kernel.py_func.__name__, kernel.signatures == [types])
       for (kernel, _), types in zip(calls, declared)])
"""
    assert run_fresh_python(code) == str([(n, True) for n in (
        "shape_colours", "shape_markers", "contact_markers", "probe_markers")])
