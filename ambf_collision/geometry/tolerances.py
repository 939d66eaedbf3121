"""Every slack, epsilon and iteration limit of the package, in one place, with its unit and reason.

Each part of the core has its own section below; a constant is named for what it decides, not for
its value. Code imports the constants from here; no module keeps a private epsilon of its own.
"""

# --------------------------------------------------------------------------- sphere/capsule pairs

# --------------------------------------------------------------------------- segment vs solids, point SDFs

# --------------------------------------------------------------------------- GJK / EPA, hulls

# --------------------------------------------------------------------------- pair list, near_only bounds

# --------------------------------------------------------------------------- kinematics, loops, couplings

# --------------------------------------------------------------------------- probes

# --------------------------------------------------------------------------- ADF reading

ADF_MIN_DIRECTION_NORM = 1e-12
"""Shortest accepted joint axis or plane normal in an ADF file (file units, m or unitless). Files
write unit vectors rounded to ~4 decimals; below this length a vector has no direction."""

ADF_CAPSULE_HEIGHT_SLACK = 1e-12
"""How far (m) an ADF CAPSULE's tip-to-tip ``height`` may fall below ``2 * radius`` and still be
a sphere (segment length 0): absorbs the last-digit rounding of files that write h = 2 r."""
