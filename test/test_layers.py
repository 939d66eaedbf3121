"""The layers of docs/ARCHITECTURE.md, checked on the source: every ``ambf_collision.X`` import of a
module goes to its own sub-package or to one the table allows (geometry <- model <- probes <-
monitor <- ros; cli and demo beside monitor). Imports inside functions count too."""

from __future__ import annotations

import ast

import pytest
from conftest import REPO

PACKAGE = REPO / "ambf_collision"
CORE = ("geometry", "model", "probes", "monitor")
ALLOWED = {  # sub-package -> the sub-packages its modules may import
    "geometry": {"geometry"},
    "model": {"geometry", "model"},
    "probes": {"geometry", "model", "probes"},
    "monitor": {"geometry", "model", "probes", "monitor"},
    "cli": {*CORE, "cli"},
    "demo": {*CORE, "demo"},
    "ros": {*CORE, "demo", "ros", "msg", "srv"},
}
MODULES = sorted(p for p in PACKAGE.rglob("*.py")
                 if "__pycache__" not in p.parts and len(p.relative_to(PACKAGE).parts) > 1)


def imported_subpackages(path):
    """(line, sub-package) of every import of ``ambf_collision.<sub-package>`` in the file."""
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        names = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "ambf_collision" and len(parts) > 1:
                yield node.lineno, parts[1]
                break


def test_every_sub_package_is_in_the_table():
    found = {p.relative_to(PACKAGE).parts[0] for p in MODULES}
    assert found == set(ALLOWED), found ^ set(ALLOWED)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_go_one_way(path):
    layer = path.relative_to(PACKAGE).parts[0]
    wrong = [f"line {line}: {layer} imports {target}"
             for line, target in imported_subpackages(path) if target not in ALLOWED[layer]]
    assert not wrong, wrong
