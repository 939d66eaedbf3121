"""Loading the node's scene: what the parameters name, compiled into everything the node
publishes with, at start-up in place and on ``~/reload`` in a worker thread.

:func:`load_node_scene` resolves the file parameters (a bad path names its parameter), loads and
compiles the scene (:func:`ambf_collision.monitor.scene.load_scene`), evaluates it once on a
private ``Data`` and draws its markers once, with a contact at least (so that nothing is first
compiled or first touched on the executor) and builds
the message writers and serializers: a :class:`PreparedScene`. The node then installs it between
two evaluations.

:class:`SceneLoader` runs one load at a time in a daemon thread and hands the result back as an
``rclpy.task.Future`` that the node's ``~/reload`` coroutine awaits: the executor keeps
evaluating with the old model, publishing heartbeats and answering services meanwhile.
"""

from __future__ import annotations

import dataclasses
import gc
import math
import os
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ambf_collision.monitor.obstacle_sources import ObstacleSources, SourceSpec
from ambf_collision.monitor.scene import load_scene
from ambf_collision.ros.convert import (ContactArraySerializer, ContactArrayWriter,
                                       ProbeArraySerializer, ProbeArrayWriter)
from ambf_collision.monitor.jit import CompileWatch
from ambf_collision.ros.markers import build_markers
from ambf_collision.ros.node_parameters import parse_padding
from ambf_collision.ros.parameters import ConfigError
from ambf_collision.ros.paths import resolve_package_path
from ambf_collision.ros.run import one_line

__all__ = ["PreparedScene", "SceneLoader", "load_node_scene", "reload_scene", "warm_up", "with_pairs"]

FILE_PARAMETERS = ("adf_files", "probe_files", "coupling_files")


@dataclass
class PreparedScene:
    """A scene and what the node publishes it with. ``seconds``: the load's wall time;
    ``contact_serializer`` / ``probe_serializer`` are None where the middleware's serialization
    differs from the writers' messages (the messages go out then); ``compiled``: functions numba
    compiled during the load (0 when all came from its cache); ``marker_cache``: the
    ``build_markers`` cache the load drew its markers with (its layout, ready for the node)."""

    scene: object
    contact_writer: ContactArrayWriter
    contact_serializer: object
    probe_writer: object
    probe_serializer: object
    seconds: float
    compiled: int = 0
    marker_cache: dict = field(default_factory=dict)


def resolved_files(params: dict) -> dict:
    """The file parameters resolved to file system paths; ConfigError naming the parameter for
    a path that cannot be resolved (a ``package://`` URL leaving its package, an unknown
    package)."""
    out = {}
    for name in FILE_PARAMETERS:
        paths = []
        for p in params[name]:
            try:
                paths.append(resolve_package_path(p))
            except (ValueError, OSError) as err:
                raise ConfigError(f"parameter {name}: {err}") from None
        out[name] = paths
    return out


def load_node_scene(params: dict, world_frame: str) -> PreparedScene:
    """Load, compile and warm up the scene the parameters name (raises ``ValueError`` /
    ``OSError`` naming the file, entry and key, or the parameter)."""
    t0 = time.perf_counter()
    files = resolved_files(params)
    marker_cache: dict = {}
    with CompileWatch() as jit:
        scene = load_scene(files["adf_files"], files["probe_files"],
                           namespaces=[ns or None for ns in params["adf_namespaces"]] or None,
                           ignore_pairs=params["ignore_pairs"], check_pairs=params["check_pairs"],
                           coupling_files=files["coupling_files"], couplings=params["couplings"],
                           hull_meshes=params["hull_meshes"])
        warm_up(scene, world_frame, marker_cache)
    model = scene.model
    writer = ContactArrayWriter(world_frame)
    serializer = ContactArraySerializer(world_frame)
    probe_writer = probe_serializer = None
    ps = scene.probe_set
    if ps is not None:
        patches = [(n, model.body_names[b]) for n, b in zip(ps.patch_names, ps.patch_body.tolist())]
        probe_writer = ProbeArrayWriter(world_frame, ps.names, ps.bodies, model.body_names,
                                        patches)
        probe_serializer = ProbeArraySerializer(world_frame, ps.names, ps.bodies,
                                                model.body_names, patches)
        if not probe_serializer.matches(probe_writer):
            probe_serializer = None
    return PreparedScene(scene, writer, serializer if serializer.matches(writer) else None,
                         probe_writer, probe_serializer, time.perf_counter() - t0, jit.compiled,
                         marker_cache)


def warm_up(scene, world_frame: str, marker_cache: dict) -> None:
    """Call every compiled function the node calls per cycle, once, on a private ``Data`` of
    ``scene``: its evaluation (discrete and continuous), probes and markers (with a contact at least),
    and the point-cloud path,
    so that none is first compiled or first touched on the executor. The package's install step
    runs it on the demo scene to compile them all (``ros/compile_kernels.py``); the types of the
    calls, and so the compiled functions, are the same for every scene. ``marker_cache``: the
    ``build_markers`` cache to draw with."""
    model = scene.model
    data = model.create_data()
    if not scene.empty:  # the continuous step's kernel (Model.evaluate_motion)
        model.evaluate_motion(data, data.q, data.q, report_distance=0.05, near_only=True)
    result = model.evaluate(data, report_distance=0.05, near_only=True)   # the node's call
    probe_result = None if scene.probe_set is None else scene.probes(model, data, result)
    if not scene.empty:  # the markers' kernels too, whether or not markers are on now
        build_markers(model, result, probe_result, world_frame, 0.0, cache=marker_cache)
        if not len(result.contact_index) and math.isfinite(result.min_distance):
            # and the contacts' kernel: the closest pair reported as a contact
            closest = model.evaluate(
                data, report_distance=math.nextafter(result.min_distance, math.inf))
            build_markers(model, closest, probe_result, world_frame, 0.0, cache=marker_cache)
        _warm_obstacles(model, data)


def _warm_obstacles(model, data) -> None:
    """The point-cloud kernels (``monitor/obstacle_sources.py``: the build, the self filter, the
    tree without the robot's points, the nearest balls) on a small cloud: the body origins, and
    the same 10 m away; their types are those of every cloud."""
    sources = ObstacleSources(model, [SourceSpec("warm_up", source_timeout=0.0)], started=0.0)
    sources.evaluated(0.0, data.q, data.file_R, data.file_t)
    points = np.concatenate([data.body_t, data.body_t + 10.0])
    sources.on_cloud("warm_up", points, (np.eye(3), np.zeros(3)), 0.0)
    point_set = sources.sources["warm_up"].cloud.point_set
    point_set.subset(np.arange(len(point_set)) % 2 == 0)   # whether or not the filter removed any
    model.evaluate_obstacles(data, sources.fresh(0.0), 0.05)


def _lower_priority() -> None:
    """The calling thread yields the CPU to the node's others (Linux: a thread's nice value is
    its own, ``setpriority`` on its native id); nothing elsewhere."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), LOADER_NICE)
    except (AttributeError, OSError):
        pass


LOADER_NICE = 10  # added niceness of the loader thread (Linux)


class SceneLoader:
    """Runs ``load()`` in a worker thread, one at a time.

    The loader is Python (YAML parsing, model set-up) and holds the GIL while it runs, so it
    is made to share it with the executor while a load runs (all restored after):

    - the switch interval is lowered to :attr:`SWITCH_INTERVAL` (``sys.setswitchinterval``): a
      thread asking for the GIL gets it after the interval (5 ms by default), and the executor
      asks for it several times per joint state (each rcl call releases it);
    - the cyclic garbage collector is off: the parser makes millions of objects for a large
      file, and the full collections they trigger stop every thread (up to 0.2 s at a time);
      reference counting still frees them;
    - the loader thread runs at a lower CPU priority (Linux, :data:`LOADER_NICE`).

    Measured with a 1.9 MB ADF file loading beside a thread that wakes every 1 ms: pauses of
    that thread p99 115 ms / max 170 ms as it was, 5 ms / 60 ms with all three (the load
    itself 3.1 s before, 2.6 s after: fewer collections).
    """

    SWITCH_INTERVAL = 1e-4  # s: the longest the executor waits for the GIL during a load

    def __init__(self, wake=None):
        self._thread = None
        self._wake = wake  # called once the future is complete: wakes the executor waiting on it

    @property
    def busy(self) -> bool:
        """True while a load runs."""
        return self._thread is not None and self._thread.is_alive()

    def start(self, load):
        """Start ``load()`` in a daemon thread; returns an ``rclpy.task.Future`` that gets its
        result or its exception."""
        from rclpy.task import Future

        future = Future()
        switch, collecting = sys.getswitchinterval(), gc.isenabled()

        def run():
            sys.setswitchinterval(min(switch, self.SWITCH_INTERVAL))
            gc.disable()
            _lower_priority()
            try:
                result, error = load(), None
            except BaseException as err:  # noqa: BLE001 - handed to the awaiting coroutine
                result, error = None, err
            finally:
                sys.setswitchinterval(switch)
                if collecting:
                    gc.enable()
            if error is None:
                future.set_result(result)
            else:
                future.set_exception(error)
            if self._wake is not None:
                self._wake()

        self._thread = threading.Thread(target=run, name="ambf_collision scene loader",
                                        daemon=True)
        self._thread.start()
        return future


async def reload_scene(node, response):
    """The node's ``~/reload`` (std_srvs/Trigger): rereads the files in ``node.loader``'s worker
    thread while the node keeps evaluating with the old model, installs the new one between two
    evaluations and publishes at once. A broken file keeps the old model, and the answer names
    the file, entry and key. ``node``: the ``CollisionMonitorNode``."""
    if node.loader.busy:
        response.success = False
        response.message = "a reload is already running: call again when it has finished"
        return response
    params = dict(node.params)
    try:
        prepared = await node.loader.start(lambda: node.load_scene_files(params))
        node.install_scene(prepared, previous=node.monitor)
    except Exception as err:  # noqa: BLE001 - any failure keeps the old model
        # a bad file (ValueError, OSError) or the new files lacking a required joint (ConfigError)
        what = "" if isinstance(err, (ValueError, OSError)) else f"{type(err).__name__}: "
        response.success = False
        response.message = f"reload failed, previous model kept: {what}{one_line(err)}"
        node.get_logger().error(response.message)
        return response
    response.success = True
    response.message = (f"reloaded {len(node.scene.adf_paths)} ADF file(s), "
                        f"{node.scene.probe_count()} probe(s), "
                        f"{len(node.model.joint_names)} joint(s) in {prepared.seconds:.2f} s")
    node.get_logger().info(response.message)
    node.publish_now()
    return response


def with_pairs(prepared: PreparedScene, params: dict, loading: bool = True) -> PreparedScene:
    """``prepared`` with its model's pair list rebuilt from ``ignore_pairs``, ``check_pairs``
    and ``padding`` (``Model.with_overrides``: no file is read again; shapes, kinematics and
    the compiled kernels are shared). ``loading``: part of a load (its warnings and compile
    count kept); else a run-time change (nothing to log again). Raises ValueError naming the
    parameter for a padding entry that matches no body."""
    from ambf_collision.model.filtering import Overrides

    model = prepared.scene.model
    if not hasattr(model, "with_overrides"):  # no ADF file: nothing to pad or pair
        return prepared
    try:
        new = model.with_overrides(
            Overrides.from_strings(params["ignore_pairs"], params["check_pairs"]),
            padding=parse_padding(params["padding"]))
    except ValueError as err:
        raise ConfigError(f"parameter padding or pairs: {one_line(err)}") from None
    scene = dataclasses.replace(prepared.scene, model=new,
                                warnings=prepared.scene.warnings if loading else [])
    return dataclasses.replace(prepared, scene=scene,
                               compiled=prepared.compiled if loading else 0)
