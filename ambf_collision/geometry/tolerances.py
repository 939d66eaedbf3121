"""Every slack, epsilon and iteration limit of the package, in one place, with its unit and reason.

Each part of the core has its own section below; a constant is named for what it decides, not for
its value. Code imports the constants from here; no module keeps a private epsilon of its own.
"""

# --------------------------------------------------------------------------- sphere/capsule pairs

# --------------------------------------------------------------------------- segment vs solids, point SDFs

# --------------------------------------------------------------------------- GJK / EPA, hulls

#: HullSet.validate(): a vertex may lie this fraction of the hull's size (its bound radius or its
#: largest coordinate, whichever is larger; metres per metre) outside a face or triangle plane.
#: qhull merges facets that are coplanar up to its rounding (a few 1e-16 relative) and keeps their
#: first hyperplane, so a vertex of a merged facet can sit that far off it.
HULL_CHECK_RELATIVE = 1e-12

#: support(): a local direction component below this fraction of the direction's length counts as
#: zero (dimensionless), so that a box face or cylinder cap parallel up to rounding gives its
#: centre, not a corner chosen by rounding noise. The support value moves by at most this fraction
#: of the half extent (~4e-15 m per metre), below GJK's tolerances.
SUPPORT_TIE_RELATIVE = 16 * 2.220446049250313e-16

#: GJK stops when the gap between its upper bound of the core distance (|v|, the distance of the
#: simplex from the origin) and its lower bound (the separating plane v . w / |v|) is below this
#: (m). Polytopes end earlier, on a repeated support point (exact up to rounding); curved shapes
#: (cylinder, cone) converge to it. Rounding of v . w is ~1e-16 m for metre-size scenes.
GJK_TOLERANCE = 1e-12

#: Cores closer than this (m) count as touching: EPA then gives the signed distance and a normal
#: from a face of the Minkowski difference, where GJK's normal would be mostly rounding.
GJK_CONTACT_DISTANCE = 1e-12

#: GJK iteration cap (polytopes need at most a few dozen; curved shapes about 20-40 at
#: GJK_TOLERANCE). Reaching it returns the upper bound with status GJK_ITERATION_LIMIT.
GJK_MAX_ITERATIONS = 128

#: EPA accepts a face when the support function along its normal exceeds its distance from the
#: origin by at most this (m): the depth is then certified within it.
EPA_TOLERANCE = 1e-11

#: EPA's vertex budget per call (each iteration adds one vertex); when it is used up, the smallest
#: verified upper bound is returned with status EPA_NOT_CONVERGED.
EPA_MAX_VERTICES = 128

#: EPA's fallback pattern search starts with directions this far (rad) from the best it had;
#: EPA's faces are then within ~1e-4 rad of the optimum.
EPA_REFINE_STEP = 1e-3

#: EPA: a face "sees" a new vertex (and is replaced) unless the vertex is behind its plane by more
#: than this fraction of their coordinates' size (dimensionless, ~50 ulp): a coplanar vertex
#: replaces the face rather than bordering it with a sliver.
EPA_VISIBLE_RELATIVE = 1e-14

# --------------------------------------------------------------------------- pair list, near_only bounds

# --------------------------------------------------------------------------- kinematics, loops, couplings

# --------------------------------------------------------------------------- probes
