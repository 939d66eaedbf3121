"""numba's on-disk cache of the package's kernels, keyed by what each kernel is compiled from.

numba keeps a compiled ``@njit(cache=True)`` function with a stamp of its own source file and
loads it while that stamp matches: a kernel whose callee or constant in another file changed
would load as it was compiled before (numba's PRs 8396 and 9563, which would track the other
files, were not merged). Importing this module (each sub-package's ``__init__`` does, so it
happens before any kernel is decorated) puts a locator of its own before numba's for the
package's files, with the stamp :func:`kernel_digest` instead of the file's, in numba's folders
and order: a ``NUMBA_CACHE_DIR`` the user has set; else next to the sources (``__pycache__``) when
that folder is writable (a source checkout, a colcon workspace, a user's pip install); else
:func:`user_cache_dir` (a package installed system-wide, a read-only image), so that compiled
kernels are still kept between runs.

The digest covers the kernel's module and every module of the package it imports, transitively
(their text without docstrings: a docstring changes nothing; found with :mod:`ast`, visiting
statements only, 0.12 s of CPU for the 26 files the kernels import, once per process). An edit
to a module no kernel imports (``ros/node.py``, the CLI, the loaders) keeps every kernel; an
edit to ``geometry/epa.py`` recompiles EPA and every kernel that calls it, on their next call. Nothing is deleted: a stale entry is overwritten in its own folder when the
kernel is compiled again there, and numba writes each file through a new file renamed into
place, so a link to another tree's cache file (a colcon symlink install links the source
tree's ``__pycache__`` files into its own) is replaced, never written through.
"""

from __future__ import annotations

import ast
import hashlib
import os
from functools import lru_cache

from numba.core import caching

__all__ = ["LOCATORS", "PACKAGE_DIR", "imported_files", "kernel_digest", "kernel_files", "user_cache_dir"]

PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The ``ambf_collision`` folder as imported (not resolved: numba keys its cache by the path a
module was imported from, and a colcon symlink install links every module to the sources)."""


def user_cache_dir(environ=None) -> str:
    """``$XDG_CACHE_HOME/ambf_collision/numba``, ``~/.cache/ambf_collision/numba`` without it."""
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ambf_collision", "numba")


def _module_file(root: str, dotted: list) -> str | None:
    """The file of module ``dotted`` (names below the package) in package folder ``root``."""
    base = os.path.join(root, *dotted)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            return path
    return None


_DEFINITIONS = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def _is_docstring(node) -> bool:
    return (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str))


def _statements(body, imports: list, docstrings: list) -> None:
    """Collect the import statements and the docstrings of the classes and functions in
    ``body``, at any depth, visiting statements only (an expression holds neither, and
    expressions are most of a tree)."""
    for node in body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(node)
        if isinstance(node, _DEFINITIONS) and _is_docstring(node.body[0]):
            docstrings.append(node.body[0])
        for block in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                _statements(inner, imports, docstrings)


def _without(source: bytes, nodes) -> bytes:
    """``source`` without the text of ``nodes`` (their positions count bytes on a line), and
    without the lines they leave blank."""
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    out, at = [], 0
    for n in sorted(nodes, key=lambda n: (n.lineno, n.col_offset)):
        begin = starts[n.lineno - 1] + n.col_offset
        end = starts[n.end_lineno - 1] + n.end_col_offset
        first, after = starts[n.lineno - 1], starts[n.end_lineno]
        if not source[first:begin].strip() and not source[end:after].strip():
            begin, end = first, after  # whole lines
        out.append(source[at:begin])
        at = end
    out.append(source[at:])
    return b"".join(out)


@lru_cache(maxsize=None)
def _parsed(path: str, mtime_ns: int, size: int) -> tuple:
    """``(code digest, files it imports from the package)`` of the module at ``path`` (keyed by
    its stat, so a file changed while the process runs is read again). The digest is of its
    text without docstrings."""
    with open(path, "rb") as f:
        source = f.read()
    tree = ast.parse(source, path)
    imports, docstrings = [], []
    if tree.body and _is_docstring(tree.body[0]):
        docstrings.append(tree.body[0])
    _statements(tree.body, imports, docstrings)
    root = _package_root(path)
    top = os.path.basename(root)
    here = os.path.relpath(os.path.dirname(path), root).split(os.sep)
    here = [] if here == ["."] else here
    found = set()
    for node in imports:
        if isinstance(node, ast.Import):
            targets = [(a.name.split("."), []) for a in node.names]
        elif node.level:  # relative: from the importing module's package
            base = here[:len(here) - node.level + 1] if node.level > 1 else list(here)
            targets = [([top, *base, *(node.module.split(".") if node.module else [])],
                        [a.name for a in node.names])]
        else:
            targets = [((node.module or "").split("."), [a.name for a in node.names])]
        for dotted, names in targets:
            if dotted[0] != top:
                continue
            module = _module_file(root, dotted[1:])
            if module is not None and (not names or not module.endswith("__init__.py")
                                       or len(dotted) == 1):
                found.add(module)
            for name in names:  # "from package import module" names a module
                sub = _module_file(root, [*dotted[1:], name])
                if sub is not None:
                    found.add(sub)
                elif module is not None:
                    found.add(module)
    code = hashlib.sha256(_without(source, docstrings)).hexdigest()
    return code, frozenset(found)


def _package_root(path: str) -> str:
    """The top package folder holding ``path``: the highest folder above it with an
    ``__init__.py``, every folder between included."""
    folder = os.path.dirname(path)
    while os.path.isfile(os.path.join(os.path.dirname(folder), "__init__.py")):
        folder = os.path.dirname(folder)
    return folder


def _module(path: str) -> tuple:
    st = os.stat(path)
    return _parsed(path, st.st_mtime_ns, st.st_size)


def imported_files(path: str) -> frozenset:
    """The package's files the module at ``path`` imports (``import``/``from ... import``
    anywhere in it, resolved to files of its own top package; ``from package import name``
    counts ``package/__init__.py`` only when ``name`` is not a module)."""
    return _module(os.path.abspath(path))[1]


def kernel_files(path: str) -> list:
    """The module at ``path`` and every module of its package it imports, transitively,
    sorted."""
    seen, todo = set(), [os.path.abspath(path)]
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(imported_files(p) - seen)
    return sorted(seen)


def kernel_digest(path: str) -> str:
    """SHA-256 over :func:`kernel_files` of ``path``: each file's path below its package and its
    text without docstrings (what a kernel defined in ``path`` is compiled from)."""
    root = _package_root(os.path.abspath(path))
    digest = hashlib.sha256()
    for f in kernel_files(path):
        digest.update(os.path.relpath(f, root).encode() + b"\0" + _module(f)[0].encode())
    return digest.hexdigest()


def _in_package(py_file: str) -> bool:
    return os.path.abspath(py_file).startswith(PACKAGE_DIR + os.sep)


def _digest_stamped(base):
    """A locator like numba's ``base`` for this package's files, stamped by
    :func:`kernel_digest`; None (numba's own locators decide) for other files."""

    class Locator(base):
        @classmethod
        def from_function(cls, py_func, py_file):
            if not _in_package(py_file):
                return None
            return super().from_function(py_func, py_file)

        def get_source_stamp(self):
            return ("ambf_collision kernel digest", kernel_digest(self._py_file))

    if base.__name__.lstrip("_") == "UserWideCacheLocator":
        class Locator(Locator):  # noqa: F811 - the user-wide one in this package's own folder
            def __init__(self, py_func, py_file):
                super().__init__(py_func, py_file)
                self._cache_path = os.path.join(user_cache_dir(),
                                                self.get_suitable_cache_subpath(py_file))

    Locator.__name__ = Locator.__qualname__ = "Digest" + base.__name__.lstrip("_")
    return Locator


def _numba_class(*names):
    """The first of ``names`` in ``numba.core.caching`` (numba 0.68 dropped the underscore)."""
    for name in names:
        if hasattr(caching, name):
            return getattr(caching, name)
    import numba

    raise ImportError(f"numba {numba.__version__}: numba.core.caching has none of {names}")


_IMPL = _numba_class("CacheImpl", "_CacheImpl")
LOCATORS = tuple(_digest_stamped(_numba_class(name, "_" + name))
                 for name in ("UserProvidedCacheLocator", "InTreeCacheLocator",
                              "UserWideCacheLocator"))
"""The package's locators, in numba's order: ``NUMBA_CACHE_DIR``, next to the sources, the
user-wide folder."""

if not any(getattr(c, "__module__", "") == __name__ for c in _IMPL._locator_classes):
    _IMPL._locator_classes[:0] = LOCATORS
