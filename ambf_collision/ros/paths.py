"""Resolving the file paths named in the node's parameter files (pure Python, no ROS import).

A ROS 2 parameter file cannot tell the node where it lives, so ``config/*.yaml`` names the
bundled ADF and probe files *relative to the package share folder* (e.g.
``examples/demo/demo_arm.yaml``). The same relative path then works

* from the source checkout (the current directory is the repository root: ``make demo``), and
* when installed (``share/ambf_collision/examples/...``, found through the ament index).

Accepted forms, tried in this order:

1. ``package://<pkg>/<rel>`` (as in URDF/RViz): ``<rel>`` inside ``<pkg>``'s share folder. ``<rel>``
   must stay inside it: an absolute ``<rel>`` or one with a ``..`` component is refused
   (``ValueError``), so a parameter cannot reach a file elsewhere by a package URL;
2. an absolute path (``~`` expanded): used as it is;
3. a relative path: the first of ``base_dirs`` under which it exists.

When nothing exists the first candidate is returned (so the loader's error names a real path)
unless ``must_exist`` is set, in which case :class:`FileNotFoundError` lists every place tried.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

__all__ = ["resolve_package_path", "package_share_dir", "default_base_dirs"]

PACKAGE = "ambf_collision"


def package_share_dir(package: str = PACKAGE) -> Path | None:
    """The package's installed share folder, or None when the ament index is not available."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        return None
    try:
        return Path(get_package_share_directory(package))
    except (PackageNotFoundError, LookupError, ValueError, OSError):  # OSError: no AMENT_PREFIX_PATH
        return None


def default_base_dirs(package: str = PACKAGE) -> list[Path]:
    """Where relative paths are looked up: the current directory, then the package share folder,
    then the source checkout this module lives in (ambf_collision/ros/ under the repository root)."""
    dirs = [Path.cwd()]
    share = package_share_dir(package)
    if share is not None:
        dirs.append(share)
    dirs.append(Path(__file__).resolve().parents[2])
    unique = []
    for d in dirs:
        if d not in unique:
            unique.append(d)
    return unique


def _package_url(text: str) -> tuple:
    """``(package, relative path)`` of a ``package://`` URL; ValueError unless the relative
    path names a file inside the package (no ``..`` component, not absolute, not empty)."""
    package, _, rel = text[len("package://"):].partition("/")
    parts = PurePosixPath(rel).parts
    if not package or not parts:
        raise ValueError(f"{text}: a package URL is package://<package>/<path inside it>")
    if rel.startswith("/") or ".." in parts:
        raise ValueError(f"{text}: '..' and absolute paths are refused in a package URL (the "
                         "path must stay inside the package's share folder)")
    return package, rel


def resolve_package_path(path, base_dirs=None, must_exist: bool = False) -> str:
    """The file system path of ``path`` as named in a parameter file (see the module docstring).

    ``base_dirs``: folders for relative paths, in order (default :func:`default_base_dirs`).
    Returns a string path. ``must_exist``: raise FileNotFoundError naming all candidates when
    none exists.
    """
    text = os.fspath(path).strip()
    if not text:
        raise ValueError("empty path")
    if text.startswith("package://"):
        package, rel = _package_url(text)
        share = package_share_dir(package)
        candidates = [share / rel] if share is not None else []
        if package == PACKAGE:  # the source checkout holds the same files
            candidates.append(Path(__file__).resolve().parents[2] / rel)
        if not candidates:
            raise FileNotFoundError(f"{text}: package '{package}' not found in the ament index")
    else:
        p = Path(text).expanduser()
        if p.is_absolute():
            candidates = [p]
        else:
            bases = default_base_dirs() if base_dirs is None else [Path(b) for b in base_dirs]
            candidates = [Path(b) / p for b in bases] or [p]
    for c in candidates:
        if c.exists():
            return str(c)
    if must_exist:
        tried = ", ".join(str(c) for c in candidates)
        raise FileNotFoundError(f"{text}: not found (tried {tried})")
    return str(candidates[0])
