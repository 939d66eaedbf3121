"""Run one rclpy node until SIGINT/SIGTERM: the shared ``main`` loop of this package's executables.

rclpy's own signal handlers shut the context down from inside a signal, so a callback that is
publishing at that moment fails with a traceback. Here the signals only set a flag, checked
between callbacks; the node is then destroyed and rclpy shut down in order. Callbacks run on
rclpy's ``EventsExecutor`` where it exists (its per-message overhead is a fraction of the
``SingleThreadedExecutor``'s wait-set rebuild), else on the ``SingleThreadedExecutor``.

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
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

try:  # rclpy >= Jazzy: callbacks dispatched from C++ events, far less overhead per message
    from rclpy.experimental import EventsExecutor as _Executor
except ImportError:  # older rclpy
    _Executor = SingleThreadedExecutor


def run_node(make_node, name: str, argv=None, done=lambda node: False) -> int:
    """Build the node with ``make_node()`` and spin it until SIGINT/SIGTERM or ``done(node)``.

    Returns the exit status: 0 after a signal or ``done``; 2 when ``make_node`` raises
    ``ValueError``/``OSError`` (bad file or parameter: one line ``<name>: error: ...`` on
    stderr, no traceback).
    """
    stop = []
    rclpy.init(args=argv if argv is not None else sys.argv,
               signal_handler_options=SignalHandlerOptions.NO)
    old = {s: signal.signal(s, lambda signum, frame: stop.append(signum))
           for s in (signal.SIGINT, signal.SIGTERM)}
    node = executor = None
    try:
        try:
            node = make_node()
        except (ValueError, OSError) as err:  # AdfError / ProbeError / ShapeError / bad parameter
            print(f"{name}: error: {err}", file=sys.stderr)
            return 2
        gc.collect()
        gc.freeze()  # long-lived start-up objects: never scanned again by a full collection
        executor = _Executor()
        executor.add_node(node)
        while not stop and not done(node):
            executor.spin_once(timeout_sec=0.1)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        for s, h in old.items():
            signal.signal(s, h)
        if executor is not None:
            executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return 0
