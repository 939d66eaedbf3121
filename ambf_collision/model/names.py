"""The one naming rule for bodies and joints: AMBF's.

AMBF removes every space from an object's ``name`` (``adf_loader_1_0.cpp``, identification
attributes: ``name.erase(remove(..., ' '))``), so the body ``base link-suj ecm L0`` is known to
AMBF, to its ROS topics and to its joint states as ``baselink-sujecmL0``. The canonical name of a
body or joint here is the same: the *plain* name (spaces removed) and the *qualified* name
``namespace + plain`` (e.g. ``/ambf/env/baselink-sujecmL0``); namespaces start and end with ``/``.

:class:`NameIndex` finds the canonical entry for any spelling people use: the qualified or plain
name, the original spelling with spaces, or a namespace tail such as ``psm1/baselink``. A spelling
that fits several entries is an error listing them, never a guess.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Iterable, Sequence
from typing import Optional

import numpy as np

__all__ = ["ambf_name", "normalize_namespace", "name_matches", "NameIndex", "NameLookupError"]


def name_matches(pattern: str, name: str, plain: str) -> bool:
    """True when the fnmatch ``pattern`` matches a body's qualified ``name`` or its ``plain``
    name (the rule of every body pattern: pairs, padding, obstacle sources)."""
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(plain, pattern)


def ambf_name(raw: str) -> str:
    """The name AMBF gives an object called ``raw``: every space character removed."""
    return raw.replace(" ", "")


def normalize_namespace(ns: str) -> str:
    """``ns`` with surrounding whitespace removed and one leading and trailing ``/``
    (``"ambf/env"`` -> ``"/ambf/env/"``, ``""`` -> ``"/"``)."""
    ns = ns.strip()
    if not ns.startswith("/"):
        ns = "/" + ns
    if not ns.endswith("/"):
        ns += "/"
    return ns


class NameLookupError(KeyError):
    """A name that designates no entry (``candidates`` empty) or several (``candidates``: their
    qualified names). ``str()`` is one readable line."""

    def __init__(self, message: str, name: str, candidates: Sequence[str] = ()):
        super().__init__(message)
        self.message = message
        self.name = name
        self.candidates = tuple(candidates)

    def __str__(self) -> str:
        return self.message


class NameIndex:
    """Canonical names of N bodies (or joints) and their lookup by any accepted spelling.

    ``NameIndex(namespaces, names, kind="body")``: ``namespaces[i]`` (normalised with
    :func:`normalize_namespace`) and ``names[i]`` as written in the file (spaces allowed). The
    canonical qualified names must be distinct (``ValueError`` otherwise; the ADF loader reports
    duplicates itself, with file and entry, before building an index).

    Attributes: ``qualified`` (N,) canonical qualified names, ``plain`` (N,) canonical plain
    names, ``original`` (N,) names as written, ``kind`` (``"body"`` or ``"joint"``, for messages).

    :meth:`index` tries, in order, and stops at the first step that fits exactly one entry:

    1. the canonical qualified name (a missing leading ``/`` is added when the name has a ``/``);
    2. the canonical plain name;
    3. the original spelling (qualified or plain), spaces included;
    4. the name with its spaces removed, as in steps 1 and 2;
    5. a namespace tail: the canonical qualified names ending in ``/`` + the name.

    A step that fits several entries raises :class:`NameLookupError` listing them.
    """

    def __init__(self, namespaces: Sequence[str], names: Sequence[str], kind: str = "body"):
        if len(namespaces) != len(names):
            raise ValueError(f"{len(namespaces)} namespaces for {len(names)} {kind} names")
        self.kind = kind
        self.original = [str(n) for n in names]
        ns = [normalize_namespace(str(s)) for s in namespaces]
        self.plain = [ambf_name(n) for n in self.original]
        self.qualified = [s + p for s, p in zip(ns, self.plain)]
        self._qualified = {}
        for i, q in enumerate(self.qualified):
            if q in self._qualified:
                raise ValueError(f"duplicate {kind} name {q}")
            self._qualified[q] = i
        self._plain = _multimap(self.plain)
        self._original = _multimap([s + o for s, o in zip(ns, self.original)] + self.original,
                                   modulo=len(self.original))

    def __len__(self) -> int:
        return len(self.qualified)

    def __contains__(self, name) -> bool:
        try:
            return self.get(name) is not None
        except NameLookupError:
            return False

    @property
    def ambiguous_plain_names(self) -> list:
        """Plain names shared by several entries (sorted): those need the qualified name."""
        return sorted(p for p, hits in self._plain.items() if len(hits) > 1)

    def index(self, name: str) -> int:
        """Index of the entry ``name`` designates; :class:`NameLookupError` when it designates
        none or several."""
        i = self.get(name)
        if i is None:
            raise NameLookupError(self._unknown_message(name), name)
        return i

    def get(self, name: str, default: Optional[int] = None) -> Optional[int]:
        """Like :meth:`index`, but ``default`` for a name that designates no entry (a name that
        designates several still raises :class:`NameLookupError`)."""
        if not isinstance(name, str):
            return default
        for step in (self._exact, self._by_original, self._stripped, self._tail):
            hits = step(name)
            if len(hits) == 1:
                return hits[0]
            if hits:
                names = [self.qualified[i] for i in sorted(hits)]
                raise NameLookupError(
                    f"{self.kind} name {name!r} is ambiguous: it fits {', '.join(names)}; "
                    "give the qualified name", name, names)
        return default

    def indices(self, names: Iterable[str], ambiguous_unknown: bool = False):
        """Batch lookup: ``(index (K,) int64, position in names of each (K,) int64, unknown
        names list)`` for the names that designate exactly one entry; ambiguous names raise
        (:class:`NameLookupError`), or count as unknown when ``ambiguous_unknown``."""
        idx, keep, unknown = [], [], []
        for k, n in enumerate(names):
            try:
                i = self.get(n)
            except NameLookupError:
                if not ambiguous_unknown:
                    raise
                i = None
            if i is None:
                unknown.append(n)
            else:
                idx.append(i)
                keep.append(k)
        return np.array(idx, np.int64), np.array(keep, np.int64), unknown

    # -- lookup steps (each returns the list of fitting indices) ------------------------------

    def _exact(self, name: str) -> list:
        q = name if name.startswith("/") or "/" not in name else "/" + name
        if q in self._qualified:
            return [self._qualified[q]]
        return self._plain.get(name, [])

    def _by_original(self, name: str) -> list:
        return self._original.get(name, [])

    def _stripped(self, name: str) -> list:
        key = ambf_name(name)
        return self._exact(key) if key != name else []

    def _tail(self, name: str) -> list:
        key = "/" + ambf_name(name).strip("/")
        if key == "/":
            return []
        return [i for i, q in enumerate(self.qualified) if q.endswith(key)]

    def _unknown_message(self, name) -> str:
        close = difflib.get_close_matches(ambf_name(str(name)), self.plain, n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        shown = ", ".join(self.qualified[:8]) + (" ..." if len(self.qualified) > 8 else "")
        return f"no {self.kind} named {name!r}{hint} ({self.kind}s: {shown or 'none'})"


def _multimap(keys: Sequence[str], modulo: int = 0) -> dict:
    """key -> sorted distinct indices (``index % modulo`` when ``modulo``)."""
    out: dict = {}
    for i, k in enumerate(keys):
        j = i % modulo if modulo else i
        hits = out.setdefault(k, [])
        if j not in hits:
            hits.append(j)
    return out
