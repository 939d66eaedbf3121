"""Reading an ADF file's YAML as AMBF's yaml-cpp reads it, with guards on size and aliases.

AMBF reads ADF files with yaml-cpp, which keeps every scalar as text until the loader converts it
(``as<double>()``, ``as<bool>()``). PyYAML's YAML 1.1 resolver decides types at parse time, and
disagrees: it makes ``1e6``, ``1e-7``, ``-2E3`` (an exponent without a dot), ``1.0e6`` (an
exponent without a sign) and ``+.5`` strings, and ``010`` (octal 8), ``0x1A``, ``1_000``, ``1:30``
(base 60) numbers. :class:`AdfYamlLoader` replaces PyYAML's number resolvers by yaml-cpp's
decimal syntax (``NUMBER_PATTERN``: ``010`` is 10, ``0x1A`` a string that no number field
accepts, as in AMBF). Booleans written as strings (``'True'``, ``y``) are converted where a
boolean is read (:func:`yaml_cpp_bool`), as ``as<bool>()`` does.

Tabs: yaml-cpp and libyaml (PyYAML's C reader, :class:`AdfYamlLoader` when present) read tabs
after values (``a: 1<TAB>``), after ``key:`` and in flow lists, which PyYAML's pure-Python
reader refuses; :class:`PythonAdfYamlLoader`, the fallback without libyaml, reads them as libyaml
does. Both refuse a tab that indents a line, as yaml-cpp does, and ``-<TAB>1``, which yaml-cpp
alone reads.

Guards: files over ``MAX_FILE_BYTES`` are refused before parsing; a document whose node count
with aliases expanded exceeds ``MAX_YAML_NODES`` is refused before it is constructed ("billion
laughs"); nesting deeper than libyaml's limit (1000 levels) or Python's recursion limit is a
malformed file. Every failure is an :class:`AdfError` naming the file.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

import yaml

from ambf_collision.model.adf_errors import AdfError

__all__ = ["AdfYamlLoader", "PythonAdfYamlLoader", "NUMBER_PATTERN", "MAX_FILE_BYTES", "MAX_YAML_NODES", "read_yaml",
           "load_yaml_text", "yaml_cpp_bool"]

MAX_FILE_BYTES = 2 * 1024 * 1024
"""ADF files larger than this (bytes) are refused. AMBF's largest ADF file is 75 kB (KnotEnv,
10k YAML nodes); PyYAML builds about 0.2-0.5 MB of ADF text per second here, so this bounds a
load (or a node's reload) to a few seconds."""
MAX_YAML_NODES = 2_000_000
"""Largest accepted node count of a document with its aliases expanded."""

NUMBER_PATTERN = re.compile(r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?$")
"""A decimal number as yaml-cpp's ``as<double>()`` reads it (C++ stream extraction): optional
sign, digits with an optional point (or a point and digits), optional exponent with optional
sign. Checked with yaml-cpp 0.7: ``1e6``, ``1.0e6``, ``-2E3``, ``+.5``, ``5.`` are numbers."""

# yaml-cpp's convert<bool>: these words in lower, upper or capitalised case.
_TRUE_WORDS = ("y", "yes", "true", "on")
_FALSE_WORDS = ("n", "no", "false", "off")

_INT_TAG = "tag:yaml.org,2002:int"
_FLOAT_TAG = "tag:yaml.org,2002:float"
_INTEGER_PATTERN = re.compile(r"^[-+]?[0-9]+$")
_INF_NAN_PATTERN = re.compile(r"^(?:[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$")  # yaml-cpp's too
_LINE_BREAKS = "\r\n\x85\u2028\u2029"


class _TabsAsLibyaml:
    """Scanner rules for tabs, as libyaml (and yaml-cpp) read them, for PyYAML's pure-Python
    scanner, which takes only spaces as blanks between tokens and inside plain scalars.

    Tabs are skipped between tokens in the flow context, and in the block context wherever a
    simple key cannot start (after a scalar, after ``key:``), e.g. trailing tabs (``a: 1<TAB>``)
    and ``a:<TAB>1``; a tab where indentation counts (a line's start) stays an error. Tabs and
    spaces inside a plain scalar are kept (``x<TAB>y``), and trailing ones dropped, as spaces."""

    def scan_to_next_token(self):
        while True:
            super().scan_to_next_token()
            if self.peek() != "\t" or (self.allow_simple_key and not self.flow_level):
                return
            while self.peek() in " \t":
                self.forward()

    def scan_plain_spaces(self, indent, start_mark):
        length = 0
        while self.peek(length) in " \t":
            length += 1
        if "\t" not in self.prefix(length):
            return super().scan_plain_spaces(indent, start_mark)
        blanks = self.prefix(length)
        self.forward(length)
        if self.peek() in _LINE_BREAKS:  # trailing blanks: the line break folds as after spaces
            return super().scan_plain_spaces(indent, start_mark)
        return [blanks]


def _yaml_cpp_numbers(loader: type) -> type:
    """``loader`` with yaml-cpp's numbers: plain scalars matching ``NUMBER_PATTERN`` are ints
    (digits only, always decimal: ``010`` is 10, as yaml-cpp's ``as<double>()``) or floats;
    ``.inf``/``.nan`` forms are floats (which no number field accepts). Every other implicit
    type (bool, null, timestamp) is PyYAML's."""
    loader.yaml_implicit_resolvers = {
        first: [(tag, rx) for tag, rx in resolvers if tag not in (_INT_TAG, _FLOAT_TAG)]
        for first, resolvers in loader.yaml_implicit_resolvers.items()
    }
    loader.add_implicit_resolver(_INT_TAG, _INTEGER_PATTERN, list("+-0123456789"))
    loader.add_implicit_resolver(_FLOAT_TAG, NUMBER_PATTERN, list("+-.0123456789"))
    loader.add_implicit_resolver(_FLOAT_TAG, _INF_NAN_PATTERN, list("+-."))
    loader.add_constructor(_INT_TAG, lambda self, node: int(self.construct_scalar(node)))
    return loader


@_yaml_cpp_numbers
class PythonAdfYamlLoader(_TabsAsLibyaml, yaml.SafeLoader):
    """The pure-Python ``SafeLoader`` with yaml-cpp's numbers and libyaml's tabs: the fallback
    when PyYAML was built without libyaml."""


if hasattr(yaml, "CSafeLoader"):
    @_yaml_cpp_numbers
    class AdfYamlLoader(yaml.CSafeLoader):
        """libyaml's ``SafeLoader`` (about 6x faster than the pure-Python one, and it limits
        nesting to 1000 levels by itself) with yaml-cpp's numbers."""
else:
    AdfYamlLoader = PythonAdfYamlLoader


def yaml_cpp_bool(text: str) -> Optional[bool]:
    """The boolean yaml-cpp's ``as<bool>()`` reads from the scalar ``text`` (``y``/``yes``/
    ``true``/``on`` and their negatives, in lower, upper or capitalised case), or None."""
    if not (text.islower() or text.isupper() or (text[:1].isupper() and text[1:].islower())):
        return None
    word = text.lower()
    if word in _TRUE_WORDS:
        return True
    if word in _FALSE_WORDS:
        return False
    return None


def read_yaml(path: Path, file: str):
    """The document of the YAML file ``path`` (``file``: the path as the user gave it, for
    messages). Raises :class:`AdfError` for a missing, oversized, non-UTF-8 or malformed file."""
    try:
        size = path.stat().st_size
        if not path.is_file():
            raise AdfError(file, "", "", "not a regular file")
        if size > MAX_FILE_BYTES:
            raise AdfError(file, "", "", f"file is {size} bytes, over the {MAX_FILE_BYTES} limit")
        data = path.read_bytes()
    except OSError as e:
        raise AdfError(file, "", "", f"cannot read file: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise AdfError(file, "", "", f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    return load_yaml_text(text, file)


def load_yaml_text(text: str, file: str):
    """The document of ``text`` read with :class:`AdfYamlLoader` and the alias guard."""
    loader = AdfYamlLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        # An alias is written '*name': without a '*' the document has none, nothing to expand.
        if "*" in text and _expanded_size(node, MAX_YAML_NODES) > MAX_YAML_NODES:
            raise AdfError(file, "", "", f"YAML expands to more than {MAX_YAML_NODES} nodes "
                           "(alias bomb?)")
        return loader.construct_document(node)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise AdfError(file, "", "", f"malformed YAML{where}: {problem}") from None
    except (RecursionError, MemoryError):
        raise AdfError(file, "", "", "YAML too deeply nested or too large") from None
    except (ValueError, TypeError, OverflowError) as e:
        # e.g. an invalid timestamp or an unhashable key, refused by the constructor
        raise AdfError(file, "", "", f"malformed YAML: {e}") from None
    finally:
        loader.dispose()


def _expanded_size(root, limit: int) -> int:
    """Node count of the YAML graph with aliases expanded (memoised; capped at ``limit + 1``;
    a recursive alias counts as over the limit). Iterative: no recursion limit."""
    memo: dict = {}
    on_stack: set = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        if done:
            on_stack.discard(nid)
            total = 1 + sum(memo[id(ch)] for ch in _children(node))
            memo[nid] = min(total, limit + 1)
            continue
        if nid in memo:
            continue
        on_stack.add(nid)
        stack.append((node, True))
        for ch in _children(node):
            if id(ch) in on_stack:
                return limit + 1  # the node contains itself
            if id(ch) not in memo:
                stack.append((ch, False))
    return memo[id(root)]


def _children(node) -> list:
    if isinstance(node, yaml.SequenceNode):
        return node.value
    if isinstance(node, yaml.MappingNode):
        return [c for kv in node.value for c in kv]
    return []
