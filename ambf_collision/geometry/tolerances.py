"""Every slack, epsilon and iteration limit of the package, in one place, with its unit and reason.

Each part of the core has its own section below; a constant is named for what it decides, not for
its value. Code imports the constants from here; no module keeps a private epsilon of its own.
"""

# --------------------------------------------------------------------------- sphere/capsule pairs

COINCIDENT = 1e-12
"""m. Closest points (or a point and its segment) nearer than this are coincident: their
difference has no direction, and the documented fallback normal is used instead."""

REFINE = 1e-6
"""m. Closest points of two segments nearer than this: ``c2 - c1`` carries rounding errors of
~1e-16 m against its length, so the normal is re-derived from the (exact) segment directions."""

TINY_LENGTH_SQ = 1e-200
"""m^2. A segment whose squared length is below this is a point (sphere, zero-length capsule):
dividing by its squared length would overflow; 1e-200 keeps segments down to 1e-100 m."""

PARALLEL_SINE = 1e-12
"""1. Two segments whose directions' cross product is below this fraction of the product of
their lengths are parallel for the fallback normal (``d1 x d2`` has no reliable direction)."""

REFINE_PARALLEL_SINE_SQ = 1e-24
"""1. The same test on squares for the refined normal (``|d1 x d2|^2 < this |d1|^2 |d2|^2``)."""

# --------------------------------------------------------------------------- segment vs solids, point SDFs

FLAT_SLOPE = 1e-13
"""1 (relative to the segment length). Along a segment, a distance whose slope is at least
``-FLAT_SLOPE * |b - a|`` is not decreasing: minima flat up to rounding (a segment parallel to a
face) resolve to the point closest to ``a``. Moves the distance by < 1e-13 |b - a|."""

RIM_STEPS = 40
"""Iterations. Safeguarded Halley steps for the minimum distance of a segment to a rim circle
(no closed form: a quartic); converges cubically, usually in 3 to 5 steps."""

RIM_CONVERGED_STEP = 1e-6
"""1 (segment parameter). A Halley step below this ends the iteration (cubic convergence: the
next one would be ~1e-18)."""

RIM_BRACKET = 1e-15
"""1 (segment parameter). A rim bracket narrower than this ends the iteration."""

SURFACE_SLACK = 16 * 2.220446049250313e-16
"""1 (relative to the size of the local coordinates: segment ends and half extents). A point of a
segment within this of a solid's surface is on it: the direction to its nearest point is rounding
noise, so it counts as a minimum of the distance along the segment, and the middle of the
segment's contact chord decides whether it enters the solid. Moves a grazing segment's distance
by at most this (~4e-15 m per m)."""

PENETRATION_AXIS = 1e-9
"""1 (relative to the segment length). A capsule-box separating axis ``(b - a) x e_i`` shorter
than this is degenerate (segment parallel to the box axis ``e_i``): the face axis stands in."""

PENETRATION_PARALLEL = 1e-12
"""1 (relative to the segment length). A segment whose ends differ by less than this along a
box face normal is parallel to the face: its witness is the middle of its part over the face."""

# --------------------------------------------------------------------------- GJK / EPA, hulls

# --------------------------------------------------------------------------- pair list, near_only bounds

BOUND_MARGIN = 1e-9
"""m. With ``near``, a pair is left bounded (not computed) only if its conservative lower bound
exceeds the cutoff by this: covers the rounding of the bounds themselves."""

# --------------------------------------------------------------------------- kinematics, loops, couplings

# --------------------------------------------------------------------------- probes
