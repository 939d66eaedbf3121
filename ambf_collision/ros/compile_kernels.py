"""Compile the kernels the node calls, into numba's cache of the package as imported here.

The package's install step runs it (``CMakeLists.txt``: ``colcon build``, symlinked or copied),
with the install tree first on ``PYTHONPATH``, so that the cache lands where the installed
package looks (numba keys it by the path a module was imported from, and by each kernel's own
sources: ``geometry/kernel_cache.py``): a node started after the build finds every kernel
compiled. It warms the demo scene as the node's load does (``scene_loading.warm_up``): the
compiled functions depend on the types of the calls, which are the same for every scene.

    python -m ambf_collision.ros.compile_kernels ADF.yaml [--probes PROBES.yaml]

It also compiles the shape-pair entry point of ``ambf-collision distance``
(:func:`~ambf_collision.geometry.distance.distance`, one sphere pair: its types are those of
every call), so that the CLI's first run does not compile either (with the mesh kernels it calls,
minutes on a busy machine).

It lives in ``ros/`` because the markers' kernels are drawn through ROS messages; it needs no
middleware and no message of this package. Prints one line (functions compiled, seconds, where)
and exits 0; a bad file exits 2 naming it.
"""

from __future__ import annotations

import argparse
import sys

from ambf_collision.geometry.distance import distance
from ambf_collision.geometry.shapes import Sphere
from ambf_collision.monitor.jit import CompileWatch
from ambf_collision.monitor.scene import load_scene
from ambf_collision.ros.scene_loading import warm_up

__all__ = ["compile_kernels", "main"]


def compile_kernels(adf_files, probe_files=()) -> CompileWatch:
    """Load the scene of ``adf_files`` / ``probe_files`` and call every kernel the node calls
    (:func:`~ambf_collision.ros.scene_loading.warm_up`) and the CLI's pair distance; returns what
    compiled, and how long it took."""
    with CompileWatch() as watch:
        scene = load_scene(list(adf_files), list(probe_files))
        warm_up(scene, "world", {})
        distance(Sphere((0.0, 0.0, 0.0), 1.0), Sphere((3.0, 0.0, 0.0), 1.0))
    return watch


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ambf_collision.ros.compile_kernels",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("adf", nargs="+", help="ADF file(s) of the scene to warm")
    parser.add_argument("--probes", action="append", default=[], help="probe file(s)")
    args = parser.parse_args(argv)
    try:
        watch = compile_kernels(args.adf, args.probes)
    except (ValueError, OSError) as err:
        print(f"ambf_collision: compiling the kernels failed: {err}", file=sys.stderr)
        return 2
    import numba

    where = numba.config.CACHE_DIR or "next to the installed sources"
    print(f"ambf_collision: numba compiled {watch.compiled} function(s) in {watch.seconds:.1f} s "
          f"(cache: {where})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
