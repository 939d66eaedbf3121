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

# --------------------------------------------------------------------------- pair list, near_only bounds

# --------------------------------------------------------------------------- kinematics, loops, couplings

# --------------------------------------------------------------------------- probes
