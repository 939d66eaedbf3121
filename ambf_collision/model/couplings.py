"""Coupled (mimic) joints: ``q[joint] = multiplier * q[source] + offset``.

A real dVRK arm publishes only its actuated joints; the passive joints of its parallelogram
follow the pitch joint. A coupling map states that relation; it is compiled into the kinematics
and applied at the start of every evaluation, so the coupled joint's position is *computed*
(a published position of a coupled joint is overwritten: the coupling wins). A full AMBF joint
state, which names every joint, needs no coupling.

Two ways to write couplings (units: the multiplier is source units per joint unit, rad/rad,
m/m or rad/m; the offset is in the coupled joint's unit, rad or m):

* a YAML file::

      couplings:
        - {joint: "pitch front link-pitch bottom link", source: "yaw link-pitch back link",
           multiplier: 1.0, offset: 0.0}
        - "pitch back link-pitch top link = -1 * yaw link-pitch back link"

  ``multiplier`` defaults to 1, ``offset`` to 0; an entry may also be a rule string;

* rule strings (e.g. a ROS parameter ``string[]``), one coupling each::

      JOINT = [MULTIPLIER *] SOURCE [+ OFFSET | - OFFSET]

  ``JOINT`` and ``SOURCE`` are joint names in any spelling the model accepts (qualified, plain,
  with or without AMBF's spaces); they may contain spaces and hyphens but not ``=`` or ``*``.
  ``MULTIPLIER`` and ``OFFSET`` are decimal numbers (``-1``, ``0.5``, ``2e-3``); the ``+`` or
  ``-`` before the offset needs a space on both sides (``a-b - 0.5``: joint ``a-b``, offset
  -0.5), so a name cannot hold a ``+`` or ``-`` between spaces (write such a name without its
  spaces, as AMBF does). Examples: ``"b = a"``, ``"b = -1 * a + 1.5708"``, ``"b = 0.5*a - 0.1"``.

Chains (``c = f(b)``, ``b = g(a)``) are applied in dependency order. Refused with a
:class:`CouplingError` naming file, entry and key: an unknown or ambiguous name, a joint that
does not move (fixed, p2p, springs, ...: only revolute and prismatic joints have a position),
a joint coupled twice, a cycle, a non-finite number, a rule that does not parse.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ambf_collision.model.adf import AdfError

__all__ = ["Coupling", "CouplingError", "CompiledCouplings", "parse_rule", "load_couplings",
           "couplings_from", "compile_couplings"]

MAX_COUPLINGS_FILE_BYTES = 1024 * 1024  # a coupling file is a few lines; refuse anything huge

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_UNSIGNED = r"(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_SPACED_SIGN = re.compile(r"\s[-+](\s|$)")  # an offset that is not a number, or a stray sign
_RULE = re.compile(
    rf"^\s*(?P<joint>[^=*]+?)\s*=\s*(?:(?P<multiplier>{_NUMBER})\s*\*\s*)?(?P<source>[^=*]+?)"
    rf"(?:\s+(?P<sign>[-+])\s+(?P<offset>{_UNSIGNED}))?\s*$"
)


class CouplingError(AdfError):
    """Bad coupling input. ``file`` (the couplings file, or where the rules came from),
    ``entry`` (``couplings[i]``), ``key`` (``joint``, ``source``, ``multiplier``, ``offset``);
    ``str()`` is one line naming all three. An :class:`AdfError`, so that every caller that
    reports bad model input reports this too."""


@dataclass(frozen=True)
class Coupling:
    """``q[joint] = multiplier * q[source] + offset`` (names as written; ``file`` and ``entry``
    say where it was written, for error messages)."""

    joint: str
    source: str
    multiplier: float = 1.0
    offset: float = 0.0
    file: str = ""
    entry: str = ""


@dataclass(frozen=True)
class CompiledCouplings:
    """Couplings resolved to joint indices, in the order they are applied (a source that is
    itself coupled comes first). Arrays ``(C,)``: ``joint``, ``source`` int64; ``multiplier``,
    ``offset`` float64. ``coupled (J,) bool``: joints whose position a coupling computes."""

    joint: np.ndarray
    source: np.ndarray
    multiplier: np.ndarray
    offset: np.ndarray
    coupled: np.ndarray
    couplings: tuple  # the Coupling entries, in application order


def _finite(value, file, entry, key) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise CouplingError(file, entry, key, f"must be a finite number, got {value!r}")
    f = float(value)
    if not math.isfinite(f):
        raise CouplingError(file, entry, key, f"must be a finite number, got {value!r}")
    return f


def parse_rule(text, file: str = "", entry: str = "") -> Coupling:
    """One rule string ``JOINT = [MULTIPLIER *] SOURCE [+|- OFFSET]`` (module docstring)."""
    if not isinstance(text, str):
        raise CouplingError(file, entry, "", f"must be a rule string 'JOINT = [M *] SOURCE [+ O]', got {text!r}")
    m = _RULE.match(text)
    if m is None or _SPACED_SIGN.search(m["joint"]) or _SPACED_SIGN.search(m["source"]):
        raise CouplingError(file, entry, "", f"{text!r} is not 'JOINT = [MULTIPLIER *] SOURCE [+|- OFFSET]'")
    multiplier = _finite(float(m["multiplier"]), file, entry, "multiplier") if m["multiplier"] else 1.0
    offset = 0.0
    if m["offset"]:
        offset = _finite(float(m["offset"]), file, entry, "offset") * (-1.0 if m["sign"] == "-" else 1.0)
    return Coupling(m["joint"], m["source"], multiplier, offset, file, entry)


def _from_mapping(item: dict, file: str, entry: str) -> Coupling:
    unknown = sorted(set(map(str, item)) - {"joint", "source", "multiplier", "offset"})
    if unknown:
        raise CouplingError(file, entry, unknown[0], "unknown key (expected joint, source, multiplier, offset)")
    names = []
    for key in ("joint", "source"):
        value = item.get(key)
        if not isinstance(value, str) or not value.strip():
            raise CouplingError(file, entry, key, f"must be a joint name, got {value!r}")
        names.append(value.strip())
    multiplier = _finite(item.get("multiplier", 1.0), file, entry, "multiplier")
    offset = _finite(item.get("offset", 0.0), file, entry, "offset")
    return Coupling(names[0], names[1], multiplier, offset, file, entry)


def _entries(items, file: str) -> list:
    out = []
    for i, item in enumerate(items):
        entry = f"couplings[{i}]"
        if isinstance(item, Coupling):
            out.append(item)
        elif isinstance(item, dict):
            out.append(_from_mapping(item, file, entry))
        else:
            out.append(parse_rule(item, file, entry))
    return out


def load_couplings(path) -> list:
    """The couplings of a YAML file (``couplings:`` list of mappings or rule strings)."""
    file = str(path)
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_COUPLINGS_FILE_BYTES:
            raise CouplingError(file, "", "", f"file is {size} bytes, over the {MAX_COUPLINGS_FILE_BYTES} limit")
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as e:
        raise CouplingError(file, "", "", f"cannot read file: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise CouplingError(file, "", "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        raise CouplingError(file, "", "", f"malformed YAML{where}: {getattr(e, 'problem', None) or e}") from None
    if not isinstance(doc, dict) or "couplings" not in doc:
        raise CouplingError(file, "", "couplings", "missing (the file must hold 'couplings: [...]')")
    items = doc["couplings"]
    if items is None:
        return []
    if not isinstance(items, list):
        raise CouplingError(file, "", "couplings", f"must be a list, got {type(items).__name__}")
    return _entries(items, file)


def couplings_from(spec, origin: str = "couplings") -> list:
    """Couplings from a YAML file path (``str`` or ``os.PathLike``) or a sequence of entries
    (rule strings, ``{joint, source, multiplier, offset}`` mappings, :class:`Coupling`);
    ``origin`` names where a sequence came from in error messages. ``None``: no couplings."""
    if spec is None:
        return []
    if isinstance(spec, (str, os.PathLike)):
        return load_couplings(spec)
    return _entries(list(spec), origin)


def compile_couplings(couplings, joint_index, joint_names, movable) -> CompiledCouplings:
    """Resolve names and order the couplings (module docstring).

    ``joint_index(name) -> int`` raises ``KeyError`` with a message for an unknown or ambiguous
    name; ``joint_names (J,)`` (qualified, for messages); ``movable (J,) bool``.
    """
    J = len(joint_names)
    by_joint: dict = {}
    resolved = []
    for c in couplings:
        ks = []
        for key, name in (("joint", c.joint), ("source", c.source)):
            try:
                k = joint_index(name)
            except KeyError as e:
                raise CouplingError(c.file, c.entry, key, e.args[0] if e.args else f"unknown joint {name!r}") from None
            if not movable[k]:
                raise CouplingError(c.file, c.entry, key, f"joint {joint_names[k]} does not move "
                                    "(only revolute and prismatic joints have a position)")
            ks.append(k)
        k, s = ks
        if k == s:
            raise CouplingError(c.file, c.entry, "source", f"joint {joint_names[k]} is coupled to itself")
        if k in by_joint:
            first = resolved[by_joint[k]][0]
            raise CouplingError(c.file, c.entry, "joint",
                                f"joint {joint_names[k]} is already coupled by {first.file + ': ' if first.file else ''}{first.entry}")
        by_joint[k] = len(resolved)
        resolved.append((c, k, s))
    # Dependency order: a coupling is applied after the one that computes its source.
    order, state = [], [0] * len(resolved)  # 0 new, 1 on the current chain, 2 placed
    for start in range(len(resolved)):
        chain = []
        i = start
        while i is not None and state[i] == 0:
            state[i] = 1
            chain.append(i)
            i = by_joint.get(resolved[i][2])
        if i is not None and state[i] == 1:
            c = resolved[i][0]
            loop = " <- ".join(joint_names[resolved[x][1]] for x in chain[chain.index(i):] + [i])
            raise CouplingError(c.file, c.entry, "source", f"couplings form a cycle: {loop}")
        for x in chain:
            state[x] = 2
        order.extend(reversed(chain))
    ordered = [resolved[i] for i in order]
    coupled = np.zeros(J, dtype=bool)
    coupled[[k for _, k, _ in ordered]] = True
    return CompiledCouplings(
        joint=np.array([k for _, k, _ in ordered], dtype=np.int64),
        source=np.array([s for _, _, s in ordered], dtype=np.int64),
        multiplier=np.array([c.multiplier for c, _, _ in ordered], dtype=np.float64),
        offset=np.array([c.offset for c, _, _ in ordered], dtype=np.float64),
        coupled=coupled,
        couplings=tuple(c for c, _, _ in ordered),
    )
