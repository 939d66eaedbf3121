"""Run one rclpy node until SIGINT/SIGTERM: the shared ``main`` loop of this package's executables.

rclpy's own signal handlers shut the context down from inside a signal, so a callback that is
publishing at that moment fails with a traceback. Here the signals only set a flag, checked
between callbacks; the node is then destroyed and rclpy shut down in order. Callbacks run on
rclpy's ``EventsExecutor`` from rclpy 9 (Kilted) on (its per-message overhead is a fraction of the
``SingleThreadedExecutor``'s wait-set rebuild), else on the ``SingleThreadedExecutor`` (see
``_Executor`` below for why not Jazzy's EventsExecutor).

Measured here (bench/bench_latency.py, echo node, and a 5000-message ping-pong in one process):
the EventsExecutor's ``spin_once`` loop costs ~25 us CPU per message (``spin_until_future_complete``
~19 us; the SingleThreadedExecutor ~150 us), so this loop is not where the node's latency goes.
After the node is built, its objects (model, probes, rclpy entities: ~44,000 tracked by the
garbage collector on the demo) are moved out of the collector's reach by ``gc.freeze()``: a
full collection then no longer walks them (13 ms -> 0.0 ms on the demo), so it cannot stall a
callback for that long.
"""

from __future__ import annotations

import gc
import signal
import sys

import rclpy
from rclpy.exceptions import NameValidationException, ParameterException
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions



def rclpy_major() -> int:
    """rclpy's major version (7: Jazzy, 9: Kilted), 0 when unknown."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return int(version("rclpy").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 0


# rclpy's EventsExecutor dispatches callbacks from C++ events, with far less overhead per message.
# Jazzy's (rclpy 7) never resumes a coroutine that awaits a future completed by another thread
# (rclpy issue #1467), which is how ~/reload waits for its loader thread: there, and where the
# EventsExecutor does not exist, the SingleThreadedExecutor, which resumes such tasks on every spin.
_Executor = SingleThreadedExecutor
if rclpy_major() >= 9:
    try:
        from rclpy.experimental import EventsExecutor as _Executor
    except ImportError:
        pass


# What building a node may raise for a bad file or parameter (AdfError, ProbeError, ShapeError and
# ConfigError are ValueErrors; rclpy's RCLError, a RuntimeError, comes from rcl itself, e.g. a
# topic name that is not valid).
_START_ERRORS = (ValueError, OSError, ParameterException, NameValidationException, RuntimeError)


def run_node(make_node, name: str, argv=None, done=lambda node: False,
             restore_signals: bool = True) -> int:
    """Build the node with ``make_node()`` and spin it until SIGINT/SIGTERM or ``done(node)``.

    Returns the exit status: 0 after a signal or ``done``; 2 with one line ``<name>: error: ...``
    on stderr (no traceback) when the command line or a parameter file cannot be read, or
    ``make_node`` refuses a file or parameter (``ValueError``, ``OSError``, rclpy's parameter,
    name and rcl errors).

    Any number of SIGINT and SIGTERM, in any order and spacing, only set the stop flag, also
    while the node shuts down: a second signal cannot interrupt the shutdown (a restored default
    handler would raise ``KeyboardInterrupt`` inside rclpy, or kill the process half-way). The
    previous handlers come back once everything is shut down, unless ``restore_signals`` is
    False (an executable): then both signals are ignored from there on, since nothing is left to
    stop. (Python's exit resets a handler written in Python to the default action, so a late
    signal would end the process by that signal half-way through its exit; an ignored one is
    left ignored.)
    """
    stop = []
    args = list(argv if argv is not None else sys.argv)
    old = {s: signal.signal(s, lambda signum, frame: stop.append(signum))
           for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            check_parameter_files(args)
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except Exception as err:  # noqa: BLE001 - rcl's argument / parameter-file errors
            print(f"{name}: error: {one_line(err)}", file=sys.stderr)
            return 2
        return _spin(make_node, name, args, done, stop)
    finally:
        for s, h in old.items():
            signal.signal(s, h if restore_signals else signal.SIG_IGN)


def _spin(make_node, name: str, args: list, done, stop: list) -> int:
    """:func:`run_node` once rclpy is initialised: build, spin until ``stop`` (the signals
    received) or ``done(node)``, then shut down in order."""
    node = executor = None
    try:
        try:
            node = make_node()
        except _START_ERRORS as err:  # bad file or parameter
            print(f"{name}: error: {one_line(err)}", file=sys.stderr)
            return 2
        warn_unknown_parameters(node, args)
        gc.collect()
        gc.freeze()  # long-lived start-up objects: never scanned again by a full collection
        executor = _Executor()
        executor.add_node(node)
        while not stop and not done(node):
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0


def _tag_blind_loader():
    """A ``yaml.SafeLoader`` that reads any tag as the plain node it tags: launch_ros writes
    lists as ``!!python/tuple``, which rcl reads as plain sequences. It builds no objects."""
    import yaml

    class Loader(yaml.SafeLoader):
        pass

    def plain(loader, suffix, node):
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_scalar(node)

    Loader.add_multi_constructor("", plain)
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    return Loader


def _ros_arguments(args):
    """``(option, value)`` of every option with a value inside ``--ros-args`` sections."""
    ros_args = False
    for i, a in enumerate(args):
        if a == "--ros-args":
            ros_args = True
        elif a == "--" or a == "--ros-args-end":
            ros_args = False
        elif ros_args and i + 1 < len(args):
            yield a, args[i + 1]


def check_parameter_files(args) -> dict:
    """Read every ``--params-file`` of the ROS arguments before rcl does: a missing, unreadable
    or malformed file is a ``ValueError`` naming it (rcl would log its own error line first).
    rcl's own checks of the contents still follow. Returns ``{path: document}``."""
    import yaml

    docs = {}
    for option, path in _ros_arguments(args):
        if option == "--params-file":
            try:
                with open(path, encoding="utf-8") as f:
                    doc = yaml.load(f, Loader=_tag_blind_loader())  # noqa: S506 - plain data
            except OSError as err:
                raise ValueError(f"parameter file {path}: cannot be read ({err.strerror})") from None
            except yaml.YAMLError as err:
                mark = getattr(err, "problem_mark", None)
                where = f" at line {mark.line + 1}" if mark is not None else ""
                raise ValueError(f"parameter file {path}: not valid YAML{where}") from None
            if not isinstance(doc, dict) or not all(
                    isinstance(v, dict) and isinstance(v.get("ros__parameters"), dict)
                    for v in doc.values()):
                raise ValueError(f"parameter file {path}: must map node names (or /**) to "
                                 "'ros__parameters:' mappings")
            docs[path] = doc
    return docs


def warn_unknown_parameters(node, args) -> list:
    """Warn (through the node's logger) about every parameter given on the command line
    (``-p name:=value``) or in a parameter file's section for this node (``/**`` or its name)
    that the node does not have: rcl drops them silently, so a misspelt name would otherwise
    leave its default in force. Returns the names."""
    import difflib

    given = []
    for option, value in _ros_arguments(args):
        if option in ("-p", "--param") and ":=" in value:
            given.append(value.split(":=", 1)[0])
    for doc in check_parameter_files(args).values():
        for key, section in doc.items():
            if str(key).rstrip("/").rsplit("/", 1)[-1] in ("**", "*", node.get_name()):
                given += _flat_names(section["ros__parameters"])
    unknown = [n for n in dict.fromkeys(given)
               if not node.has_parameter(n) and not n.startswith("qos_overrides.")]
    known = list(getattr(node, "params", {}))
    for n in unknown:
        near = difflib.get_close_matches(n, known, n=1)
        hint = f"; did you mean {near[0]}?" if near else ""
        node.get_logger().warning(f"parameter {n}: not a parameter of this node, ignored{hint}")
    return unknown


def _flat_names(mapping, prefix: str = "") -> list:
    """Parameter names of a ``ros__parameters`` mapping (nested mappings: ``a.b``)."""
    names = []
    for k, v in mapping.items():
        name = f"{prefix}{k}"
        names += _flat_names(v, name + ".") if isinstance(v, dict) else [name]
    return names


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (rcl's messages carry newlines and an error trail);
    its type's name when it has no message."""
    text = " ".join(str(err).split())
    return (text.split(", at ")[0] if "rcl" in text else text) or type(err).__name__
