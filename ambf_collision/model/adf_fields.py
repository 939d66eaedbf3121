"""Field readers for one entry of an ADF file, with its error and warning context.

An :class:`Entry` reads values out of a YAML mapping by key path (``["location", "position",
"x"]``) and converts them as AMBF's yaml-cpp does: numbers (also quoted ones, with a warning),
booleans (also ``'True'``, ``yes``, ``off`` written as strings, with a warning), strings. Every
problem is an :class:`AdfError` naming file, entry and key. Warnings go to the file's
:class:`FileWarnings`, which issues one :class:`AdfWarning` per key and message, naming every
entry it concerns (21 bodies with one ``collision mesh type`` make one line, not 21).
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

from ambf_collision.geometry.tolerances import ADF_MIN_DIRECTION_NORM
from ambf_collision.geometry.transforms import rpy_to_matrix
from ambf_collision.model.adf_errors import AdfError, AdfWarning
from ambf_collision.model.adf_yaml import NUMBER_PATTERN, yaml_cpp_bool
from ambf_collision.model.names import ambf_name, normalize_namespace

__all__ = ["Entry", "FileWarnings", "MISSING", "MAX_MAGNITUDE", "entry_names", "key_text", "listed",
           "short"]

MAX_MAGNITUDE = 1e6
"""Largest accepted magnitude of an ADF number (m, rad, kg): beyond it the geometry overflows."""
MISSING = object()
"""Default meaning "the key is required"."""
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def key_text(path: Sequence) -> str:
    """A key path as messages show it: ``'collision geometry'.radius``, ``'compound collision
    shape'[1].offset``."""
    out = ""
    for p in path:
        if isinstance(p, int):
            out += f"[{p}]"
            continue
        s = str(p)
        out += ("." if out else "") + (s if _IDENT.match(s) else repr(s))
    return out


def short(v: Any) -> str:
    """``repr(v)`` cut to 60 characters."""
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def listed(items: Sequence, shown: int = 4) -> str:
    """``a, b, c, d and 17 more``: the first ``shown`` items and the count of the others."""
    head = ", ".join(str(i) for i in items[:shown])
    return head + (f" and {len(items) - shown} more" if len(items) > shown else "")


class FileWarnings:
    """The warnings of one file, gathered while it loads and issued by :meth:`issue`: one
    :class:`AdfWarning` per key and message, whose entry names the entries it concerns (the
    first four and the count of the others) and whose message lists their details the same way
    (``{}`` in the message stands for them)."""

    def __init__(self, file: str):
        self.file = file
        self._groups: dict = {}  # (key, message) -> (entries, details), in first-seen order

    def add(self, entry: str, key: str, message: str, detail: str = "") -> None:
        entries, details = self._groups.setdefault((key, message), ([], []))
        if entry not in entries:
            entries.append(entry)
        if detail and detail not in details:
            details.append(detail)

    def issue(self) -> None:
        """``warnings.warn`` each gathered warning once, then forget them."""
        groups, self._groups = self._groups, {}
        for (key, message), (entries, details) in groups.items():
            text = message.replace("{}", listed(details), 1) if details else message
            if len(entries) > 1:
                entries = [e or "top level" for e in entries]
            warnings.warn(AdfWarning(self.file, listed(entries), key, text), stacklevel=2)


class Entry:
    """Error and warning context for the entry ``entry`` (an identifier such as ``BODY base``,
    or ``""`` for the file's top level) of the file ``file``, and the readers of its values.
    ``sink``: the file's :class:`FileWarnings` (None: each warning is issued at once)."""

    def __init__(self, file: str, entry: str, sink: FileWarnings = None):
        self.file = file
        self.entry = entry
        self.sink = sink
        self._warned: set = set()

    def error(self, path: Sequence, message: str) -> AdfError:
        return AdfError(self.file, self.entry, key_text(path), message)

    def warn(self, path: Sequence, message: str, detail: str = "") -> None:
        """Warn about ``path`` (once per entry and key). ``detail``: what differs from one entry
        to the next (a value, a file); ``message`` has ``{}`` where the details go."""
        key = key_text(path)
        if key in self._warned:
            return
        self._warned.add(key)
        if self.sink is not None:
            self.sink.add(self.entry, key, message, detail)
            return
        text = message.replace("{}", detail, 1) if detail else message
        warnings.warn(AdfWarning(self.file, self.entry, key, text), stacklevel=2)

    def get(self, mapping, path: Sequence, default=MISSING):
        """The value at ``path`` inside ``mapping``; a missing key or a null value gives
        ``default`` (an error when ``default`` is ``MISSING``)."""
        cur = mapping
        for i, k in enumerate(path):
            if isinstance(k, int):
                if not isinstance(cur, list):
                    raise self.error(path[:i], f"must be a list, got {short(cur)}")
                cur = cur[k]
                continue
            if not isinstance(cur, dict):
                raise self.error(path[:i], f"must be a mapping, got {short(cur)}")
            if cur.get(k) is None:
                if default is MISSING:
                    raise self.error(path[: i + 1], "missing")
                return default
            cur = cur[k]
        return cur

    def number(self, mapping, path: Sequence, default=MISSING, minimum=None, strict=False) -> float:
        """A finite number of magnitude at most ``MAX_MAGNITUDE`` (and ``>= minimum``, or ``>``
        when ``strict``). A quoted number (``'1.5'``) is read as yaml-cpp reads it, with a
        warning."""
        v = self.get(mapping, path, default)
        if v is default and default is not MISSING:
            return default
        bound = "" if minimum is None else f" {'>' if strict else '>='} {minimum:g}"
        if isinstance(v, str) and NUMBER_PATTERN.match(v):
            self.warn(path, "number written as a string: {}, as AMBF does", f"{v!r} read as {float(v):g}")
            v = float(v)
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.error(path, f"must be a finite number{bound}, got {short(v)}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f) or (minimum is not None and (f <= minimum if strict else f < minimum)):
            raise self.error(path, f"must be a finite number{bound}, got {short(v)}")
        if abs(f) > MAX_MAGNITUDE:
            raise self.error(path, f"must be at most {MAX_MAGNITUDE:g} in magnitude, got {f:g}")
        return f

    def vector(self, mapping, path: Sequence, default=MISSING, direction=False) -> np.ndarray:
        """``{x, y, z}`` as a float64 (3,) array; ``direction``: refuse a vector shorter than
        ``ADF_MIN_DIRECTION_NORM``."""
        v = self.get(mapping, path, default)
        if v is default and default is not MISSING:
            return np.array(default, dtype=np.float64)
        out = np.array([self.number(mapping, list(path) + [c]) for c in "xyz"])
        if direction and not np.linalg.norm(out) >= ADF_MIN_DIRECTION_NORM:
            raise self.error(path, "must be a non-zero vector")
        return out

    def pose(self, mapping, path: Sequence):
        """``{position {x,y,z}, orientation {r,p,y}}`` -> ``(R (3,3), t (3,))``; as AMBF, a
        missing pose, position or orientation is the identity (R = Rz(y) Ry(p) Rx(r))."""
        node = self.get(mapping, path, None)
        if node is None:
            return np.eye(3), np.zeros(3)
        if not isinstance(node, dict):
            raise self.error(path, f"must be a mapping, got {short(node)}")
        p = list(path)
        t = self.vector(mapping, p + ["position"], (0.0, 0.0, 0.0))
        R = np.eye(3)
        if self.get(mapping, p + ["orientation"], None) is not None:
            R = rpy_to_matrix(*(self.number(mapping, p + ["orientation", c]) for c in "rpy"))
        return R, t

    def boolean(self, mapping, path: Sequence, default) -> bool:
        """A boolean; ``'True'``, ``yes``, ``OFF``... written as strings are read as yaml-cpp's
        ``as<bool>()`` reads them, with a warning."""
        v = self.get(mapping, path, default)
        if isinstance(v, bool):
            return v
        b = yaml_cpp_bool(v) if isinstance(v, str) else None
        if b is None:
            raise self.error(path, f"must be true or false, got {short(v)}")
        self.warn(path, "boolean written as a string: {}, as AMBF does", f"{v!r} read as {str(b).lower()}")
        return b

    def string(self, mapping, path: Sequence, default=MISSING) -> str:
        """A string; a number is taken as its text (``name: 7`` -> ``"7"``)."""
        v = self.get(mapping, path, default)
        if v is default and default is not MISSING:
            return default
        if isinstance(v, bool) or not isinstance(v, (str, int, float)):
            raise self.error(path, f"must be a string, got {short(v)}")
        return str(v)


def _strip_prefix(ident: str, prefix: str) -> str:
    return ident[len(prefix):].strip() if ident.startswith(prefix) else ident


def entry_names(e: Entry, node: dict, prefix: str, file_ns: str, ns_override) -> tuple:
    """``(name as written, AMBF name, namespace)`` of a body or joint entry; the name defaults to
    the identifier without ``prefix`` (``BODY ``, ``JOINT ``); ``ns_override`` (if any) wins over
    the entry's ``namespace`` and the file's ``file_ns``."""
    original = e.string(node, ["name"], _strip_prefix(e.entry, prefix))
    name = ambf_name(original)
    if not name:
        raise e.error(["name"], "must not be empty")
    ns = ns_override or normalize_namespace(e.string(node, ["namespace"], file_ns))
    return original, name, ns
