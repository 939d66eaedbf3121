"""The node's load calls every kernel the node calls later (ros/scene_loading.warm_up), and the
package's install step compiled them all (ros/compile_kernels.py, run by CMakeLists.txt)."""

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
def test_the_install_step_compiled_every_kernel_the_nodes_load_calls():
    """After ``colcon build`` (``make test`` builds first), a node's load finds every kernel in
    numba's cache of the installed package: in a fresh process, the load of a scene other than
    the demo the build compiled with (another robot, no probes; the demo arm alone without the
    shared examples) compiles nothing. Skipped where the package is not imported from a colcon
    install tree."""
    from conftest import DEMO_ARM, EXAMPLES, run_fresh_python

    from ambf_collision.monitor.jit import package_root

    pytest.importorskip("ambf_collision.ros.scene_loading",
                        reason="ROS 2 messages not importable: run via `make test`")
    if "site-packages" not in package_root():
        pytest.skip("ambf_collision is not imported from an install tree")
    scene = EXAMPLES / "blender-toy-car.yaml"
    scene = scene if scene.is_file() else DEMO_ARM
    code = f"""
from ambf_collision.monitor.jit import CompileWatch
from ambf_collision.ros.node_parameters import PARAMETERS
from ambf_collision.ros.parameters import check
from ambf_collision.ros.scene_loading import load_node_scene
params = {{n: check(n, s, s.default) for n, s in PARAMETERS.items()}}
params["adf_files"] = [{str(scene)!r}]
with CompileWatch() as watch:
    load_node_scene(params, "world")
print(watch.compiled)
"""
    assert run_fresh_python(code) == "0", (
        "the node's load compiled kernels: rebuild (`make env` or `colcon build`) after an edit")
