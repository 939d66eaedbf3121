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

PROBE_MIN_VECTOR = 1e-12
"""Length (in the file's units) below which a probe file's ``normal`` or ``direction`` is taken
as the zero vector and rejected: no direction can be read from it."""

PROBE_MIN_IN_PLANE = 1e-9
"""Sine of the angle (dimensionless) below which a patch ``direction`` counts as parallel to its
``normal`` and is rejected: the in-plane column axis would be mostly rounding."""

PROBE_GRID_SLACK = 1e-9
"""Relative slack (dimensionless) of the circular-patch test ``|lattice point| <= disc_radius``,
so that lattice points exactly on the disc (e.g. spacing 2 mm, disc 4 mm) are kept despite the
rounding of ``spacing**2 * (i**2 + j**2)``."""

PROBE_BOUND_SLACK = 1e-9
"""Metres added to every broadphase bound of the probes (bounding spheres, cluster reach), so
that a pair exactly at ``radius + range`` is never dropped by the rounding of the bound (scene
coordinates up to ~1e3 m round at ~1e-13 m); the exact stage then decides."""

PROBE_FACING_SLACK = 1e-9
"""Metres by which a shape must lie behind the sensor plane of a cluster of probes (sharing one
sensor normal) to be dropped before the exact stage: far above the rounding of the support and
plane heights, so only pairs that the facing rule rejects exactly are dropped."""

PROBE_PLANE_FACING_SLACK = 1e-12
"""Cosine (dimensionless) above which a plane's normal counts as not opposing the shared sensor
normal of a cluster of probes, so the plane is dropped for the whole cluster before the exact
stage (the facing rule ``n_c . n_s < 0`` with ``n_c`` the plane normal for every point): only
a plane the rule rejects beyond rounding is dropped."""

# --------------------------------------------------------------------------- ADF reading

ADF_MIN_DIRECTION_NORM = 1e-12
"""Shortest accepted joint axis or plane normal in an ADF file (file units, m or unitless). Files
write unit vectors rounded to ~4 decimals; below this length a vector has no direction."""

ADF_CAPSULE_HEIGHT_SLACK = 1e-12
"""How far (m) an ADF CAPSULE's tip-to-tip ``height`` may fall below ``2 * radius`` and still be
a sphere (segment length 0): absorbs the last-digit rounding of files that write h = 2 r."""
