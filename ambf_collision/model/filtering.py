"""Which body pairs are checked: AMBF's collision filtering plus user overrides.

AMBF's rules (Bullet per-pair ignore list), applied to every pair of bodies that have
collision shapes (shapes of one body are never checked against each other):

1. ``same file ignore inter-collision``: both bodies come from one file whose top-level
   ``ignore inter-collision`` is true (bodies of other files are unaffected);
2. ``no shared collision group``: both bodies have ``collision groups`` and share none
   (a body without groups collides with everything);
3. ``joined by joint <name>``: a joint connects the two bodies and does not set
   ``ignore inter-collision: false``.
Ignoring always wins among AMBF's rules: groups never re-enable a pair ignored otherwise.
A pair matched by no rule is checked.

User overrides (an allowed-collision list, as MoveIt's allowed-collision matrix): ``ignore``
and ``check`` entries ``(A, B)``, each side an exact body name or an ``fnmatch`` pattern
(``*``, ``?``, ``[..]``) matched against the qualified (``/ambf/env/link3``) or plain
(``link3``) body name, in either order. Precedence, most specific wins:

- any user entry beats AMBF's rules;
- among user entries matching a pair, the one with more exact (non-pattern) sides wins
  (``link3:link5`` beats ``link3:*``, which beats ``*:*``);
- on a tie between ``ignore`` and ``check``, ``check`` wins (when in doubt, look).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ambf_collision.model.adf import AdfWorld
from ambf_collision.model.names import name_matches

__all__ = ["Overrides", "FilterResult", "parse_pair", "filter_pairs"]

_WILD = set("*?[")


def parse_pair(text: str):
    """``"A:B"`` -> ``("A", "B")``; ValueError naming the text when malformed."""
    if not isinstance(text, str) or text.count(":") != 1:
        raise ValueError(f"pair {text!r}: must be BODY_A:BODY_B (names or fnmatch patterns)")
    a, b = (s.strip() for s in text.split(":"))
    if not a or not b:
        raise ValueError(f"pair {text!r}: both body names must be non-empty")
    return a, b


@dataclass
class Overrides:
    """User allowed-collision entries: lists of ``(A, B)`` name/pattern pairs."""

    ignore: list = field(default_factory=list)
    check: list = field(default_factory=list)

    @classmethod
    def from_strings(cls, ignore=(), check=()):
        return cls([parse_pair(s) for s in ignore], [parse_pair(s) for s in check])


@dataclass
class FilterResult:
    """``checked``: (P,2) int array of body index pairs (i < j), sorted.
    ``ignored``: list of ``(i, j, reason)``. ``reasons_checked``: per checked pair the reason
    when a user entry re-enabled it, else ``""``."""

    checked: np.ndarray
    ignored: list
    reasons_checked: list


def _specificity(a: str, b: str) -> int:
    return int(not (_WILD & set(a))) + int(not (_WILD & set(b)))


def _user_decision(rules, ni, pi, nj, pj):
    """(action, rule) of the most specific matching user entry, or (None, None)."""
    best = None
    for action, a, b, spec in rules:
        if ((name_matches(a, ni, pi) and name_matches(b, nj, pj))
                or (name_matches(a, nj, pj) and name_matches(b, ni, pi))):
            key = (spec, action == "check")
            if best is None or key > best[0]:
                best = (key, action, (a, b))
    return (best[1], best[2]) if best else (None, None)


def ambf_reason(world: AdfWorld, i: int, j: int, joint_between: dict) -> str:
    """AMBF's reason to ignore body pair (i, j), or ``""`` when AMBF checks it."""
    bi, bj = world.bodies[i], world.bodies[j]
    if bi.file_index == bj.file_index and world.file_ignore_inter_collision[bi.file_index]:
        return "same file ignore inter-collision"
    if bi.groups and bj.groups and not set(bi.groups) & set(bj.groups):
        return "no shared collision group"
    names = joint_between.get((min(i, j), max(i, j)))
    if names:
        return f"joined by joint {names[0]}"
    return ""


def filter_pairs(world: AdfWorld, overrides: Overrides | None = None) -> FilterResult:
    """Checked and ignored body pairs of ``world`` (bodies without shapes take no part)."""
    ov = overrides or Overrides()
    rules = [("ignore", a, b, _specificity(a, b)) for a, b in ov.ignore]
    rules += [("check", a, b, _specificity(a, b)) for a, b in ov.check]
    joint_between: dict = {}
    for jt in world.joints:
        if jt.ignore_inter_collision:
            key = (min(jt.parent, jt.child), max(jt.parent, jt.child))
            joint_between.setdefault(key, []).append(jt.qualified_name)
    active = [k for k, b in enumerate(world.bodies) if b.shapes]
    checked, ignored, why = [], [], []
    for x, i in enumerate(active):
        bi = world.bodies[i]
        for j in active[x + 1:]:
            bj = world.bodies[j]
            reason = ambf_reason(world, i, j, joint_between)
            action, rule = (None, None)
            if rules:
                action, rule = _user_decision(rules, bi.name, bi.plain_name, bj.name, bj.plain_name)
            if action == "ignore":
                ignored.append((i, j, f"user ignore {rule[0]}:{rule[1]}"))
            elif action == "check":
                checked.append((i, j))
                why.append(f"user check {rule[0]}:{rule[1]}" + (f" (AMBF: {reason})" if reason else ""))
            elif reason:
                ignored.append((i, j, reason))
            else:
                checked.append((i, j))
                why.append("")
    arr = np.array(checked, dtype=np.intp).reshape(-1, 2)
    return FilterResult(arr, ignored, why)
