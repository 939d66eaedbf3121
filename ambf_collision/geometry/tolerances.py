"""Every slack, epsilon and iteration limit of the package, in one place, with its unit and reason.

Each part of the core has its own section below; a constant is named for what it decides, not for
its value. Code imports the constants from here; no module keeps a private epsilon of its own.
"""

# --------------------------------------------------------------------------- sphere/capsule pairs

# --------------------------------------------------------------------------- segment vs solids, point SDFs

# --------------------------------------------------------------------------- GJK / EPA, hulls

# --------------------------------------------------------------------------- pair list, near_only bounds

# --------------------------------------------------------------------------- kinematics, loops, couplings

LOOP_OPEN_POSITION = 5e-3
"""Closure-joint position residual (m) above which a loop counts as open: the joint state does not
fit the loop (a stale or uncoupled passive joint: a 0.1 rad error on a 0.3 m link is 30 mm). AMBF's
own dVRK files, correctly coupled, stay under 2.1 mm over their joint ranges (their values are
rounded to 0.1 mm; the ECM's remote centre amplifies that), hence the margin."""

LOOP_OPEN_ANGLE = 0.05
"""Closure-joint angle residual (rad, about 3 deg) above which a loop counts as open; AMBF's dVRK
files, correctly coupled, stay under 0.0045 rad (0.26 deg: the MTM's hinge axes are 6e-3 rad
apart in its file)."""

# --------------------------------------------------------------------------- probes

# --------------------------------------------------------------------------- ADF reading

ADF_MIN_DIRECTION_NORM = 1e-12
"""Shortest accepted joint axis or plane normal in an ADF file (file units, m or unitless). Files
write unit vectors rounded to ~4 decimals; below this length a vector has no direction."""

ADF_CAPSULE_HEIGHT_SLACK = 1e-12
"""How far (m) an ADF CAPSULE's tip-to-tip ``height`` may fall below ``2 * radius`` and still be
a sphere (segment length 0): absorbs the last-digit rounding of files that write h = 2 r."""
