"""Test oracle: the minimum over a segment of a solid's signed distance, by bisection.

The signed distance ``f(t)`` of ``q(t) = qa + t u`` to a convex solid is convex in ``t``; its
lowest minimiser is found by 56 bisection steps on the sign of the directional derivative
``n . u`` (the outward normal is a subgradient; a slope of at least ``-1e-13 |u|`` counts as not
decreasing), which resolves ``t`` to float64 resolution also at kinks; then the better of the
bracket's two ends. Independent of the kernel's knots and closed forms (it shares only the point
signed distance, tested on its own against coal and hand values). Slow: tests only.
"""

import math

from ambf_collision.geometry.points import solid_local

STEPS = 56
FLAT = 1e-13


def lowest_minimiser(kind, qa, u, h):
    """``(t, f(t))``: lowest minimiser of the solid's signed distance along ``qa + t u``
    (local frame, 3-sequences) and the value there."""
    def f(t):
        return solid_local(kind, qa[0] + t * u[0], qa[1] + t * u[1], qa[2] + t * u[2], *h)

    tol = -FLAT * math.sqrt(u[0] ** 2 + u[1] ** 2 + u[2] ** 2)
    lo, hi = 0.0, 1.0
    for _ in range(STEPS):
        m = 0.5 * (lo + hi)
        r = f(m)
        if r[4] * u[0] + r[5] * u[1] + r[6] * u[2] >= tol:
            hi = m
        else:
            lo = m
    d_lo, d_hi = f(lo)[0], f(hi)[0]
    return (hi, d_hi) if d_hi < d_lo else (lo, d_lo)
