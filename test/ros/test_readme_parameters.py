"""README.md's parameter table against the node's declared parameters
(``ambf_collision/ros/node_parameters.py``; pure Python, no ROS).

The table is printed by ``scripts/parameter_table.py``; here it must be the one in the README,
and, read back cell by cell, name every declared parameter in order with its declared default,
kind, range and run-time flag.
"""

from __future__ import annotations

import importlib.util
import math

import yaml
from conftest import REPO

from ambf_collision.ros.parameters import NUMBER


def _script():
    spec = importlib.util.spec_from_file_location("parameter_table",
                                                  REPO / "scripts" / "parameter_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TABLE = _script()
README_ROWS = TABLE.readme_table((REPO / "README.md").read_text())
SOURCE_ROWS = TABLE.readme_table((REPO / "docs" / "node.md").read_text())
PARAMETERS = {**TABLE.PARAMETERS, **TABLE.SOURCES}   # the node's, then each source's


def test_readme_holds_the_table_the_script_prints():
    for rows, parameters in ((README_ROWS, TABLE.PARAMETERS), (SOURCE_ROWS, TABLE.SOURCES)):
        assert rows == TABLE.table(parameters), (
            "a parameter table (README.md, docs/node.md) is out of date: run "
            "PYTHONPATH=$PWD python3 scripts/parameter_table.py --update")


def _cells(row: str) -> list:
    return [c.strip() for c in row.strip().strip("|").split(" | ")]


def test_readme_rows_read_back_as_the_declarations():
    header, rule, *rows = README_ROWS
    rows += SOURCE_ROWS[2:]
    assert _cells(header) == ["parameter", "type", "default", "range, unit", "set at run time",
                              "meaning"]
    names = [_cells(r)[0].strip("`") for r in rows]
    assert names == list(PARAMETERS)
    for row in rows:
        name, kind, default, span, settable, meaning = _cells(row)
        spec = PARAMETERS[name.strip("`")]
        assert kind == spec.kind
        value = yaml.safe_load(default.strip("`"))  # as a parameter file would read it
        assert value == spec.default and type(value) is type(spec.default) or (
            spec.kind == NUMBER and float(value) == spec.default), (name, default)
        assert settable == ("no" if spec.read_only else "yes")
        assert meaning.replace("&lt;", "<") == spec.text
        if spec.kind == NUMBER:
            bounds, unit = span.rsplit(" ", 1)
            low, high = (float(x) for x in bounds.strip("[(]").split(", "))
            assert (low, high, bounds[0] == "(") == (spec.low, spec.high, spec.low_open)
            assert math.isfinite(low) and math.isfinite(high)
        else:
            assert span == ""


def test_every_number_has_the_unit_its_description_names():
    numbers = {n for n, s in PARAMETERS.items() if s.kind == NUMBER}
    assert set(TABLE.UNITS) == numbers
    words = {"m": ("(m)",), "Hz": ("Hz",), "s": ("(s)", "seconds"), "rad/m": ("(rad or m)",),
             "points": ("points",)}
    for name in numbers:
        text = PARAMETERS[name].text
        assert any(w in text for w in words[TABLE.UNITS[name]]), (name, text)
