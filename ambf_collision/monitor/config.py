"""Statuses and tunable parameters of the collision monitor (no ROS).

The status codes are those of ``ContactArray.msg`` / ``ProbeArray.msg``; the rules that pick one
are in :mod:`ambf_collision.monitor.monitor`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

__all__ = [
    "STATUS_BAD_JOINT_STATE",
    "STATUS_DISABLED",
    "STATUS_NAMES",
    "STATUS_NO_JOINT_STATE",
    "STATUS_OK",
    "STATUS_STALE_JOINT_STATE",
    "STATUS_STALE_SOURCE",
    "STATUS_TF_UNAVAILABLE",
    "MonitorConfig",
]

STATUS_OK = 0
STATUS_NO_JOINT_STATE = 1
STATUS_STALE_JOINT_STATE = 2
STATUS_BAD_JOINT_STATE = 3
STATUS_TF_UNAVAILABLE = 4
STATUS_DISABLED = 5
STATUS_STALE_SOURCE = 6

STATUS_NAMES = {
    STATUS_OK: "OK",
    STATUS_NO_JOINT_STATE: "NO_JOINT_STATE",
    STATUS_STALE_JOINT_STATE: "STALE_JOINT_STATE",
    STATUS_BAD_JOINT_STATE: "BAD_JOINT_STATE",
    STATUS_TF_UNAVAILABLE: "TF_UNAVAILABLE",
    STATUS_DISABLED: "DISABLED",
    STATUS_STALE_SOURCE: "STALE_SOURCE",
}

# name: (lowest allowed value, whether the lowest value itself is allowed)
_NUMBER_RANGES = {
    "joint_state_timeout": (0.0, True),
    "joint_forget_timeout": (0.0, True),
    "max_rate": (0.0, True),
    "heartbeat_rate": (0.0, True),
    "future_tolerance": (0.0, True),
    "max_stamp_age": (0.0, False),
    "report_distance": (0.0, True),
    "warning_period": (0.0, True),
    "continuous_max_step": (0.0, False),
}
_FLAGS = ("accept_unstamped", "ignore_unknown_joints", "continuous")


@dataclass
class MonitorConfig:
    """Tunable parameters of the monitor (seconds, Hz, metres).

    ``joint_state_timeout``: age (s) beyond which the state is stale; 0 turns the check off.
    Ages are per joint: a joint that stops arriving makes the state STALE (and is named) until
    it comes again, or, with ``joint_forget_timeout`` > 0, until it is that many seconds old:
    it is then forgotten (no longer checked, kept at its last value, named in the OK status)
    until it comes again. 0 (default): never forgotten.
    ``max_rate``: cap on evaluations per second (Hz); 0 means no cap.
    ``heartbeat_rate``: outputs per second (Hz) when no joint state arrives; 0 turns it off.
    ``future_tolerance``: a stamp more than this many seconds ahead of ``now`` is rejected.
    ``max_stamp_age``: a stamp more than this many seconds behind ``now`` is rejected.
    ``accept_unstamped``: a stamp of exactly 0 means "not stamped". Such a message carries no
    time, so nothing can tell whether it is current: by default it is rejected
    (``BAD_JOINT_STATE``); when true it is stamped with its arrival time (and the outputs carry
    that time, never 0).
    ``ignore_unknown_joints``: accept messages with joints that the model does not know and ignore
    those joints (default false: the message is rejected).
    ``report_distance``: pairs closer than this (m) are reported as contacts.
    ``warning_period``: the same warning is logged at most once per this many seconds.
    ``continuous``: each evaluation covers the step from the previous evaluated joint state
    (:mod:`.continuous`): contacts between the two samples are reported, swept, with their time
    (false here, for models without ``evaluate_motion``; the node's parameter defaults to true).
    ``continuous_max_step``: a step in which a joint moves more than this (rad or m) is a jump,
    not a motion: evaluated at the state only.

    Numbers may be given as ``int`` (as users write them: ``max_rate: 1000``); they are kept as
    ``float``.
    """

    joint_state_timeout: float = 0.5
    joint_forget_timeout: float = 0.0
    max_rate: float = 0.0
    heartbeat_rate: float = 1.0
    future_tolerance: float = 0.5
    max_stamp_age: float = 60.0
    accept_unstamped: bool = False
    ignore_unknown_joints: bool = False
    report_distance: float = 0.05
    warning_period: float = 5.0
    continuous: bool = False
    continuous_max_step: float = 0.5

    def __post_init__(self):
        for name in _NUMBER_RANGES:
            value = getattr(self, name)
            if isinstance(value, int) and not isinstance(value, bool):
                setattr(self, name, float(value))

    def validate(self) -> None:
        """Raise ``ValueError`` naming the parameter when a value is out of range."""
        for name, (low, inclusive) in _NUMBER_RANGES.items():
            value = getattr(self, name)
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (number and math.isfinite(value)
                    and (value >= low if inclusive else value > low)):
                bound = f">= {low:g}" if inclusive else f"> {low:g}"
                raise ValueError(f"parameter {name}: must be a finite number {bound}, "
                                 f"got {value!r}")
        for name in _FLAGS:
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"parameter {name}: must be true or false, "
                                 f"got {getattr(self, name)!r}")

    def replaced(self, **changes) -> MonitorConfig:
        """A validated copy with ``changes`` applied (``ValueError`` naming a bad one)."""
        unknown = set(changes) - {f.name for f in fields(self)}
        if unknown:
            raise ValueError(f"unknown monitor parameter(s): {', '.join(sorted(unknown))}")
        new = MonitorConfig(**{**self.__dict__, **changes})
        new.validate()
        return new
