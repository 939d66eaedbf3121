"""Exact rational-arithmetic references for tests (no NumPy arithmetic involved).

Every float input is converted exactly with ``fractions.Fraction``; the squared distance
between two segments is minimised exactly over the unit square (interior critical point and
the four edges, each a 1-D quadratic clamped to [0, 1]).
"""

from __future__ import annotations

import math
from fractions import Fraction


def _vec(p):
    return [Fraction(float(x)) for x in p]


def _sub(u, v):
    return [x - y for x, y in zip(u, v)]


def _dot(u, v):
    return sum((x * y for x, y in zip(u, v)), Fraction(0))


def _clamp01(x):
    return min(max(x, Fraction(0)), Fraction(1))


def segment_segment_sq(a1, b1, a2, b2) -> Fraction:
    """Exact squared distance (m^2) between segments a1-b1 and a2-b2."""
    p1, q1, p2, q2 = _vec(a1), _vec(b1), _vec(a2), _vec(b2)
    d1, d2, r = _sub(q1, p1), _sub(q2, p2), _sub(p1, p2)
    a, e, b, c, f = _dot(d1, d1), _dot(d2, d2), _dot(d1, d2), _dot(d1, r), _dot(d2, r)

    def value(s, t):
        w = [ri + s * x - t * y for ri, x, y in zip(r, d1, d2)]
        return _dot(w, w)

    cands = []
    den = a * e - b * b
    if den > 0:
        s = (b * f - c * e) / den
        t = (a * f - b * c) / den
        if 0 <= s <= 1 and 0 <= t <= 1:
            return value(s, t)  # convex: interior stationary point is the minimum
    for s in (Fraction(0), Fraction(1)):
        t = _clamp01((f + s * b) / e) if e > 0 else Fraction(0)
        cands.append(value(s, t))
    for t in (Fraction(0), Fraction(1)):
        s = _clamp01((t * b - c) / a) if a > 0 else Fraction(0)
        cands.append(value(s, t))
    return min(cands)


def point_segment_sq(p, a, b) -> Fraction:
    """Exact squared distance (m^2) between point p and segment a-b."""
    return segment_segment_sq(p, p, a, b)


def sqrt_float(x: Fraction) -> float:
    """Square root of an exact non-negative rational, correctly rounded to about 1 ulp."""
    return math.sqrt(float(x))


def capsule_distance(a1, b1, r1, a2, b2, r2) -> float:
    """Signed capsule-capsule distance (m): exact segment distance minus both radii."""
    return sqrt_float(segment_segment_sq(a1, b1, a2, b2)) - float(r1) - float(r2)
