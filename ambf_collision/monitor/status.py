"""The collision monitor's status: which one, why, and whether the model is evaluated (no ROS).

Status rules (first match wins):

1. ``STATUS_DISABLED`` while disabled, or idle (no model: ``idle_reason``); nothing is evaluated;
2. ``STATUS_BAD_JOINT_STATE`` when the latest joint-state message was rejected and no good one came
   since (the last good state is still evaluated, if there is one);
3. ``STATUS_NO_JOINT_STATE`` before the first good joint state (when one is needed: the model
   has a joint that a joint state must give), or while a required joint was never received
   (nothing is evaluated);
4. ``STATUS_TF_UNAVAILABLE`` when the caller reports missing root transforms (nothing is evaluated);
5. ``STATUS_STALE_JOINT_STATE`` when a received joint's stamp is more than
   ``joint_state_timeout`` seconds before ``now`` (0 turns the check off); the reason names
   those joints with their ages; still evaluated. Only joints that carry state count (fixed,
   coupled and loop-closing joints named in a message are ignored, :mod:`.joint_states`). A
   joint that stopped arriving keeps the status STALE until it comes again, or until it is
   ``joint_forget_timeout`` seconds old when that is > 0: then it is forgotten (named in the
   OK reason, kept at its last value) until it comes again;
6. ``STATUS_STALE_SOURCE`` when an obstacle source's newest cloud is more than its
   ``source_timeout`` old, or none came for that long (:mod:`.obstacle_sources`); the reason
   names the sources and their ages; still evaluated, without those sources' clouds;
7. ``STATUS_OK``, naming the joints never received and those forgotten.

When nothing is evaluated the output has no contacts, ``min_distance = +inf`` and
``pairs_checked = 0``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from ambf_collision.monitor.config import (STATUS_BAD_JOINT_STATE, STATUS_DISABLED,
                                           STATUS_NO_JOINT_STATE, STATUS_OK,
                                           STATUS_STALE_JOINT_STATE, STATUS_STALE_SOURCE,
                                           STATUS_TF_UNAVAILABLE)

__all__ = ["Status", "decide_status"]


class Status(NamedTuple):
    """What :meth:`CollisionMonitor.status` decided at one time."""

    status: int  # STATUS_* (monitor/config.py)
    reason: str  # "" when OK with nothing to say
    evaluate: bool  # the model is evaluated in this state
    stale_joints: tuple | list = ()  # STATUS_STALE_JOINT_STATE: [(name, age s)], oldest first


def decide_status(config, now: float, *, enabled: bool, idle_reason: str, last_error: str,
                  needs_first: bool, missing: list, tf_ok: bool, age: float, stale, unreceived: list,
                  forgotten, stale_sources=list) -> Status:
    """The :class:`Status` at ``now`` (s) by the module's rules, from the monitor's state:
    ``last_error`` the latest rejection ("" after a good state), ``needs_first`` no good joint
    state yet where one is needed, ``missing`` the required joints never received, ``age`` (s)
    of the oldest received joint, ``unreceived`` the joints neither received nor coupled;
    ``stale()`` and ``forgotten()`` (called only when their rule is reached) the stale and the
    forgotten joints as ``[(name, age s)]``; ``stale_sources()`` the stale obstacle sources, the
    same way (age +inf: no cloud yet)."""
    if not enabled:
        return Status(STATUS_DISABLED, "disabled", False)
    if idle_reason:
        return Status(STATUS_DISABLED, idle_reason, False)
    has_state = not needs_first and not missing
    if last_error:
        return Status(STATUS_BAD_JOINT_STATE, last_error, has_state and tf_ok)
    if needs_first:
        return Status(STATUS_NO_JOINT_STATE, "no joint state received yet", False)
    if missing:
        return Status(STATUS_NO_JOINT_STATE,
                      f"no joint state yet for required {listed(missing)}", False)
    if not tf_ok:
        return Status(STATUS_TF_UNAVAILABLE, "root transforms unavailable", False)
    timeout = config.joint_state_timeout
    if 0.0 < timeout < age < math.inf:
        old = stale()
        if old:
            return Status(STATUS_STALE_JOINT_STATE,
                          f"joint state is {old[0][1]:.3f} s old (timeout {timeout:g} s): "
                          f"{aged(old)}", True, old)
    sources = stale_sources()
    if sources:
        return Status(STATUS_STALE_SOURCE, "obstacle source(s) stale, not used: "
                      + listed([f"{n} ({'no cloud yet' if a == math.inf else f'{a:.3f} s'})"
                                for n, a in sources]), True)
    kept = []
    if unreceived:
        kept.append(f"never received, kept at their last value: {listed(unreceived)}")
    gone = forgotten()
    if gone:
        kept.append(f"stopped arriving (forgotten after {config.joint_forget_timeout:g} s), kept "
                    f"at their last value: {aged(gone)}")
    return Status(STATUS_OK, "; ".join(kept), True)


def aged(named_ages: list, limit: int = 4) -> str:
    """``[(name, age s), ...]`` as ``"name (1.234 s), ..."`` (at most ``limit``)."""
    return listed([f"{n} ({a:.3f} s)" for n, a in named_ages], limit)


def listed(names: list, limit: int = 4) -> str:
    """``names`` joined by commas, at most ``limit`` of them, then ``(+N more)``."""
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit} more)" if len(names) > limit else "")
