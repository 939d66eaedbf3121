"""YAML as AMBF's yaml-cpp reads it: numbers, booleans, quoted values, tabs, and the size, alias
and nesting guards.

Oracle: the tables below were recorded with yaml-cpp 0.7.0 (Debian libyaml-cpp-dev), the library
AMBF's loader uses, by a probe calling ``YAML::Load("v: " + text)["v"].as<double>()`` and
``.as<bool>()`` for each text (ERR: the conversion throws, so AMBF refuses the file)."""

from __future__ import annotations

import math
import warnings

import pytest
import yaml

from ambf_collision.model import adf_yaml
from ambf_collision.model.adf import load_adf_files
from ambf_collision.model.adf_errors import AdfError, AdfWarning
from ambf_collision.model.adf_fields import Entry
from ambf_collision.model.adf_yaml import AdfYamlLoader, PythonAdfYamlLoader, load_yaml_text, yaml_cpp_bool

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


# text -> the document yaml-cpp 0.7.0 gives (its scalars as text; None: YAML::Load throws), by a
# probe calling YAML::Load(text) and printing the node tree.
YAML_CPP_TABS = {
    "a: 1\t\nb: 2\n": {"a": "1", "b": "2"},
    "a: 1 \t \nb: [1, 2]\t\n": {"a": "1", "b": ["1", "2"]},
    "a:\t1\n": {"a": "1"},
    "a:\n  b: 1\t\n  c: x\t\n": {"a": {"b": "1", "c": "x"}},
    "a: 1\t# c\n": {"a": "1"},
    "a: [1,\t2]\n": {"a": ["1", "2"]},
    "a: {b: 1,\tc: 2}\t\n": {"a": {"b": "1", "c": "2"}},
    "a: x\ty\n": {"a": "x\ty"},
    "a: x \t y\t\n": {"a": "x \t y"},
    "a: x\t\n  y\n": {"a": "x y"},
    "a:\t\n  b: 1\n": {"a": {"b": "1"}},
    "- 1\t\n- 2\n": ["1", "2"],
    'a: "x"\t\n': {"a": "x"},
    "a\t: 1\n": {"a": "1"},
    "? a\t\n: 1\n": {"a": "1"},
    "a: &x 1\t\nb: *x\t\n": {"a": "1", "b": "1"},
    "a: |\n  x\t\n  y\n": {"a": "x\t\ny\n"},
    "\tb: 1\n": None,
    "a:\n\t- 1\n": None,
    "a: 1\n\t\nb: 2\n": None,
    "a: b\t: c\n": None,
}
# Read by yaml-cpp, refused by libyaml and so by both loaders here (documented in adf_yaml).
YAML_CPP_ONLY = {"-\t1\n": ["1"]}


def _as_text(doc):
    """The document with every scalar as its text, as yaml-cpp keeps it."""
    if isinstance(doc, dict):
        return {str(k): _as_text(v) for k, v in doc.items()}
    if isinstance(doc, list):
        return [_as_text(v) for v in doc]
    return str(doc)


LOADERS = {"libyaml": AdfYamlLoader, "pure-python": PythonAdfYamlLoader}


@pytest.fixture(params=sorted(LOADERS))
def loader(request, monkeypatch):
    """Each of the two readers, forced as the one ``load_yaml_text`` uses."""
    if request.param == "libyaml" and not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML without libyaml")
    monkeypatch.setattr(adf_yaml, "AdfYamlLoader", LOADERS[request.param])
    return LOADERS[request.param]


@pytest.mark.parametrize("text", sorted(YAML_CPP_TABS))
def test_tabs_read_as_yaml_cpp(loader, text):
    expect = YAML_CPP_TABS[text]
    if expect is None:
        with pytest.raises(AdfError, match="malformed YAML at line"):
            load_yaml_text(text, "f.yaml")
        return
    assert _as_text(load_yaml_text(text, "f.yaml")) == expect


def test_tab_after_dash_refused_by_both_readers(loader):
    (text,) = YAML_CPP_ONLY
    with pytest.raises(AdfError, match="malformed YAML at line 1"):
        load_yaml_text(text, "f.yaml")


def test_pure_python_reader_keeps_yaml_cpp_numbers():
    """The fallback has the same number rules as the libyaml reader (the table above)."""
    for text, expect in YAML_CPP_DOUBLE.items():
        if expect is not None and text[0] not in "'\"":
            assert yaml.load(f"v: {text}\t\n", Loader=PythonAdfYamlLoader)["v"] == expect
    assert yaml.load("v: 010", Loader=PythonAdfYamlLoader)["v"] == 10
    assert yaml.load("v: 0x1A", Loader=PythonAdfYamlLoader)["v"] == "0x1A"


def test_file_with_trailing_tabs_loads_with_either_reader(loader, tmp_path):
    p = tmp_path / "tabs.yaml"
    p.write_text("bodies: [BODY A]\t\nBODY A:\t\n  name: A\t\n  mass: 0.5\t\t\n"
                 "  collision shape: SPHERE\t\n  collision geometry: {radius: 0.1}\t\n")
    (a,) = load_adf_files(p).bodies
    assert (a.name, a.mass, a.shapes[0].radius) == ("/ambf/env/A", 0.5, 0.1)
