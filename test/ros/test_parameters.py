"""Parameter values as users write them (ros/parameters.py `check`, pure Python)."""

from __future__ import annotations

import math

import pytest

from ambf_collision.ros.parameters import (BOOL, INTEGERS, NUMBER, STRING, STRINGS, ConfigError,
                                           Parameter, check)

RATE = Parameter(10.0, NUMBER, "rate", 0.0, 1000.0, low_open=True)


@pytest.mark.parametrize("value,expect", [(50, 50.0), (2.5, 2.5), (1000, 1000.0)])
def test_numbers_accept_integers_and_keep_floats(value, expect):
    got = check("rate", RATE, value)
    assert got == expect and type(got) is float


@pytest.mark.parametrize("value,words", [
    (0.0, "in (0, 1000], got 0.0"), (-5.0, "got -5.0"), (1000.5, "got 1000.5"),
    (math.nan, "finite"), (math.inf, "finite"), ("abc", "must be a number, got 'abc'"),
    (True, "must be a number, got True"), ([1.0], "must be a number")])
def test_bad_numbers_name_the_parameter(value, words):
    with pytest.raises(ConfigError, match="parameter rate: ") as e:
        check("rate", RATE, value)
    assert words in str(e.value)


def test_booleans_strings_and_lists():
    flag = Parameter(True, BOOL, "flag")
    assert check("f", flag, False) is False
    with pytest.raises(ConfigError, match="parameter f: must be true or false, got 'maybe'"):
        check("f", flag, "maybe")
    with pytest.raises(ConfigError, match="must be a string"):
        check("s", Parameter("", STRING, "s"), 3)
    files = Parameter([""], STRINGS, "files")
    assert check("files", files, [""]) == [] and check("files", files, ["", " "]) == []
    assert check("files", files, "a.yaml") == ["a.yaml"]
    assert check("files", files, ["", "mover"]) == ["", "mover"]  # per-file: '' = none
    with pytest.raises(ConfigError, match="must be a list of strings"):
        check("files", files, [1, 2])
    ints = Parameter([-1], INTEGERS, "ints")
    assert check("i", ints, [0, 1]) == [0, 1] and check("i", ints, 3) == [3]
    with pytest.raises(ConfigError, match="must be a list of integers"):
        check("i", ints, [0.5])
    with pytest.raises(ConfigError, match="must be a list of integers"):
        check("i", ints, [True])


def test_describe_shows_kind_and_range():
    assert RATE.describe() == "rate (number in (0, 1000], read-only)"
    assert Parameter(1.0, NUMBER, "x", read_only=False).describe() == "x (number)"
