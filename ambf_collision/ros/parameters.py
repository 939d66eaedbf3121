"""Declaring and checking a node's ROS parameters, with the types users write.

ROS 2 parameter types are strict: a parameter declared as a double refuses ``1000`` (an integer)
with a traceback from rclpy, both in a parameter file and from ``-p rate:=50``. Here every
parameter is declared with dynamic typing and checked by :func:`check` instead: an integer is
accepted where a number is expected (and kept as ``float``), and anything else wrong is a
:class:`ConfigError` naming the parameter, what it must be and what it got; at start-up that is
one line and exit 2 (``ros/run.py``), at run time a refusal with that reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["BOOL", "INTEGERS", "NUMBER", "NUMBERS", "STRING", "STRINGS", "ConfigError", "Parameter",
           "check", "declare_parameters", "on_set_parameters"]

NUMBER, BOOL, STRING, STRINGS, INTEGERS = "number", "bool", "string", "string list", "integer list"
NUMBERS = "number list"


class ConfigError(ValueError):
    """A parameter value that the node cannot use (names the parameter)."""


@dataclass(frozen=True)
class Parameter:
    """One parameter: ``default``, ``kind`` (one of the module's kinds), ``text`` (its
    description), for numbers the allowed range ``low`` .. ``high`` (``low_open``: the lowest
    value itself is not allowed), and whether it can change at run time (``read_only``)."""

    default: object
    kind: str
    text: str
    low: float = -math.inf
    high: float = math.inf
    low_open: bool = False
    read_only: bool = True

    def describe(self) -> str:
        """The description with the type and range (shown by ``ros2 param describe``)."""
        extra = f"{self.kind}"
        if self.kind == NUMBER and (self.low > -math.inf or self.high < math.inf):
            lo = "(" if self.low_open else "["
            extra += f" in {lo}{self.low:g}, {self.high:g}]"
        if self.read_only:
            extra += ", read-only"
        return f"{self.text} ({extra})"


def check(name: str, spec: Parameter, value):
    """``value`` as the node uses it, or :class:`ConfigError`.

    Numbers: ``int`` or ``float`` (not ``bool``), finite, in range; kept as ``float``.
    Booleans: ``true``/``false`` only. String lists: a list of strings (one string is a list of
    one); a list of empty strings only is the empty list (``['']`` is how a parameter file
    writes one), otherwise entries are kept as given (per-file lists use ``''`` for "none").
    Integer lists: a list of integers (one integer is a list of one). Number lists: a list
    of finite numbers, integers accepted (kept as ``float``).
    """
    kind = spec.kind
    if kind == NUMBER:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"parameter {name}: must be a number, got {value!r}")
        value = float(value)
        low_ok = value > spec.low if spec.low_open else value >= spec.low
        if not (math.isfinite(value) and low_ok and value <= spec.high):
            lo = "(" if spec.low_open else "["
            raise ConfigError(f"parameter {name}: must be a finite number in "
                              f"{lo}{spec.low:g}, {spec.high:g}], got {value!r}")
        return value
    if kind == BOOL:
        if not isinstance(value, bool):
            raise ConfigError(f"parameter {name}: must be true or false, got {value!r}")
        return value
    if kind == STRING:
        if not isinstance(value, str):
            raise ConfigError(f"parameter {name}: must be a string, got {value!r}")
        return value
    if kind == STRINGS:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not all(isinstance(v, str) for v in items):
            raise ConfigError(f"parameter {name}: must be a list of strings, got {value!r}")
        return list(items) if any(v.strip() for v in items) else []
    if kind == INTEGERS:
        items = [value] if isinstance(value, int) and not isinstance(value, bool) else value
        if not isinstance(items, (list, tuple)) or not all(
                isinstance(v, int) and not isinstance(v, bool) for v in items):
            raise ConfigError(f"parameter {name}: must be a list of integers, got {value!r}")
        return [int(v) for v in items]
    if kind == NUMBERS:
        items = value if isinstance(value, (list, tuple)) else [value]
        if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                   for v in items):
            raise ConfigError(f"parameter {name}: must be a list of finite numbers, "
                              f"got {value!r}")
        return [float(v) for v in items]
    raise ConfigError(f"parameter {name}: unknown kind {kind!r}")


def declare_parameters(node, table: dict) -> dict:
    """Declare every parameter of ``table`` (name -> :class:`Parameter`) on ``node`` with
    dynamic typing and return ``{name: checked value}``; :class:`ConfigError` for the first bad
    one."""
    from rcl_interfaces.msg import ParameterDescriptor

    values = {}
    for name, spec in table.items():
        descriptor = ParameterDescriptor(description=spec.describe(), read_only=spec.read_only,
                                         dynamic_typing=True)
        raw = node.declare_parameter(name, spec.default, descriptor).value
        values[name] = check(name, spec, raw)
    return values


def on_set_parameters(table: dict, params) -> tuple:
    """The run-time check of a parameter change: ``({name: checked value}, "")`` or
    ``(None, reason)`` for the first bad one (read-only ones are refused by rclpy itself)."""
    changes = {}
    for p in params:
        spec = table.get(p.name)
        if spec is None:
            continue
        try:
            changes[p.name] = check(p.name, spec, p.value)
        except ConfigError as err:
            return None, str(err)
    return changes, ""
