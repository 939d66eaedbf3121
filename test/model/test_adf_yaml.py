"""YAML as AMBF's yaml-cpp reads it: numbers, booleans, quoted values, and the size, alias and
nesting guards.

Oracle: the tables below were recorded with yaml-cpp 0.7.0 (Debian libyaml-cpp-dev), the library
AMBF's loader uses, by a probe calling ``YAML::Load("v: " + text)["v"].as<double>()`` and
``.as<bool>()`` for each text (ERR: the conversion throws, so AMBF refuses the file)."""

from __future__ import annotations

import math
import warnings

import pytest
import yaml

from ambf_collision.model.adf_errors import AdfError, AdfWarning
from ambf_collision.model.adf_fields import Entry
from ambf_collision.model.adf_yaml import AdfYamlLoader, load_yaml_text, yaml_cpp_bool

# text -> yaml-cpp 0.7.0 as<double>() (None: throws)
YAML_CPP_DOUBLE = {
    "1e6": 1e6, "1e-7": 1e-7, "-2E3": -2000.0, "1.0e6": 1e6, "1.5e+3": 1500.0, "+.5": 0.5,
    "-.5": -0.5, ".5": 0.5, "5.": 5.0, "010": 10.0, "12": 12.0, "-0": 0.0, "+7": 7.0,
    "0.1": 0.1, "'1.5'": 1.5, "\"-2e-3\"": -2e-3,
    "0x1A": None, "1_000": None, "1:30": None, "2e": None, "nan": None, "abc": None, "True": None,
}
# text -> yaml-cpp 0.7.0 as<bool>() (None: throws)
YAML_CPP_BOOL = {
    "True": True, "true": True, "TRUE": True, "yes": True, "Yes": True, "y": True, "Y": True,
    "on": True, "ON": True, "'True'": True, "\"on\"": True,
    "false": False, "False": False, "n": False, "N": False, "no": False, "Off": False,
    "'false'": False,
    "tRUE": None, "1": None, "0": None, "maybe": None, "'yess'": None,
}


def read(text: str, how: str):
    """Read ``v: text`` with the loader and the field reader ``how``; (value, warnings)."""
    doc = load_yaml_text(f"v: {text}\n", "f.yaml")
    e = Entry("f.yaml", "BODY b")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        value = e.number(doc, ["v"]) if how == "number" else e.boolean(doc, ["v"], None)
    return value, [r.message for r in rec]


CASES = [("number", t, v) for t, v in YAML_CPP_DOUBLE.items()] + [("boolean", t, v) for t, v in YAML_CPP_BOOL.items()]


@pytest.mark.parametrize("how, text, expect", CASES)
def test_scalars_read_as_yaml_cpp(how, text, expect):
    """The value yaml-cpp gives, or an AdfError where yaml-cpp throws. One warning exactly when
    the YAML scalar is a string standing for the number or boolean ('1.5', 'True', y)."""
    if expect is None:
        with pytest.raises(AdfError, match="must be a finite number" if how == "number" else "must be true or false"):
            read(text, how)
        return
    value, warned = read(text, how)
    assert value == expect and type(value) is type(expect)
    as_string = isinstance(yaml.load(f"v: {text}", Loader=AdfYamlLoader)["v"], str)
    assert len(warned) == as_string
    if warned:
        assert isinstance(warned[0], AdfWarning) and warned[0].key == "v" and "string" in str(warned[0])


def test_yaml_cpp_bool_cases():
    assert [yaml_cpp_bool(w) for w in ("Yes", "YES", "yES", "", "Y", "nO")] == [True, True, None, None, True, None]


def test_infinite_and_huge_numbers_refused():
    """yaml-cpp reads .inf as infinity; a non-finite or huge value makes geometry meaningless."""
    for text in (".inf", "-.Inf", ".nan", "1e7", "-1.5e300"):
        with pytest.raises(AdfError, match="finite|magnitude"):
            read(text, "number")
    assert math.isinf(load_yaml_text("v: .inf", "f")["v"])


def test_other_implicit_types_unchanged():
    doc = load_yaml_text("a: ~\nb: null\nc: 2001-12-14\nd: 'x'\ne: [1, 2.5]\n", "f")
    assert doc["a"] is None and doc["b"] is None and str(doc["c"]) == "2001-12-14"
    assert doc["d"] == "x" and doc["e"] == [1, 2.5]


def test_global_safe_loader_untouched():
    load_yaml_text("v: 1e6", "f")
    assert yaml.safe_load("v: 1e6") == {"v": "1e6"} and yaml.safe_load("v: 010") == {"v": 8}


@pytest.mark.parametrize("text", ["a: " + "[" * 5000 + "]" * 5000,
                                  "a:\n" + "".join("  " * (k + 1) + f"k{k}:\n" for k in range(3000))])
def test_deep_nesting_is_a_malformed_file(text):
    with pytest.raises(AdfError) as ei:
        load_yaml_text(text, "deep.yaml")
    assert ei.value.file == "deep.yaml" and ("nest" in str(ei.value) or "malformed" in str(ei.value))


def test_recursive_alias_refused():
    with pytest.raises(AdfError, match="alias"):
        load_yaml_text("a: &x [1, *x]\n", "f.yaml")


def test_shared_aliases_counted_once_per_use():
    """Aliases expand: 3 levels of 10 references to a 10-item list is ~10^4 nodes, accepted."""
    lines = ["a0: &a0 [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]"]
    for k in (1, 2, 3):
        lines.append(f"a{k}: &a{k} [{', '.join([f'*a{k - 1}'] * 10)}]")
    doc = load_yaml_text("\n".join(lines) + "\n", "f")
    assert len(doc["a3"]) == 10 and doc["a3"][9][9][9][9] == 9
