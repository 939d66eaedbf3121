"""Monitor parameters (monitor/config.py): integers accepted for numbers, bad values named."""

from __future__ import annotations

import pytest

from ambf_collision.monitor import config as cfg
from ambf_collision.monitor.config import MonitorConfig


def test_integers_are_accepted_for_numbers_and_kept_as_float():
    c = MonitorConfig(max_rate=1000, report_distance=1, joint_state_timeout=0)
    c.validate()
    assert (c.max_rate, c.report_distance, c.joint_state_timeout) == (1000.0, 1.0, 0.0)
    assert all(type(v) is float for v in (c.max_rate, c.report_distance, c.joint_state_timeout))


@pytest.mark.parametrize("key,value,words", [
    ("joint_state_timeout", -1.0, ">= 0"), ("max_rate", float("nan"), "finite"),
    ("report_distance", -0.01, ">= 0"), ("max_stamp_age", 0.0, "> 0"),
    ("heartbeat_rate", "abc", "number"), ("max_rate", True, "number"),
    ("accept_unstamped", "maybe", "true or false")])
def test_invalid_value_is_refused_naming_the_parameter(key, value, words):
    c = MonitorConfig()
    with pytest.raises(ValueError, match=f"parameter {key}: .*{words}"):
        c.replaced(**{key: value})
    assert getattr(c, key) == getattr(MonitorConfig(), key)


def test_unknown_parameter_is_refused():
    with pytest.raises(ValueError, match="unknown monitor parameter"):
        MonitorConfig().replaced(no_such=1.0)


def test_status_constants_match_the_message_definition():
    """ContactArray.msg / ProbeArray.msg: OK=0 ... STALE_SOURCE=6."""
    assert (cfg.STATUS_OK, cfg.STATUS_NO_JOINT_STATE, cfg.STATUS_STALE_JOINT_STATE,
            cfg.STATUS_BAD_JOINT_STATE, cfg.STATUS_TF_UNAVAILABLE,
            cfg.STATUS_DISABLED, cfg.STATUS_STALE_SOURCE) == tuple(range(7))
    from conftest import REPO

    text = (REPO / "msg" / "ContactArray.msg").read_text()
    for code, name in cfg.STATUS_NAMES.items():
        assert f"uint8 STATUS_{name}={code}" in text
