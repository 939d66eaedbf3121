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

HULL_FACE_SLACK = 1e-12
"""1 (relative to the hull's bound radius plus the point's coordinates, m/m). A point's projection
on a hull face plane that is outside another face plane by less than this still lies on the hull
(qhull keeps merged facets' vertices up to ~1e-12 relative off their plane): its distance is the
face's. Moves a distance near a hull edge by at most this much."""

PENETRATION_AXIS = 1e-9
"""1 (relative to the segment length). A capsule-box separating axis ``(b - a) x e_i`` shorter
than this is degenerate (segment parallel to the box axis ``e_i``): the face axis stands in."""

PENETRATION_PARALLEL = 1e-12
"""1 (relative to the segment length). A segment whose ends differ by less than this along a
box face normal is parallel to the face: its witness is the middle of its part over the face."""

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
#: (cylinder, cone) converge to it, or stop a little short of it where a new support point no
#: longer brings the simplex closer in floating point (two cylinders 0.11 m apart, a random test
#: case: stopped at a gap of 2.9e-11 m, the witness points 3.4e-11 m inside their supporting
#: planes; the largest found, a cone and a cylinder 0.13 mm apart: a gap of 1.6e-10 m, the
#: distance at most 7.6e-11 m above the true one, the witnesses 8.1e-11 m inside their planes).
#: Rounding of v . w is ~1e-16 m for metre-size scenes.
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

# --------------------------------------------------------------------------- triangle meshes

MESH_PRUNE_SLACK = 64 * 2.220446049250313e-16
"""1 (m per m of the largest coordinate magnitude of the mesh's root box and the query). A
hierarchy node is skipped only when its lower bound exceeds the best distance found by more than
this times that magnitude: a triangle's computed distance and its box's computed bound round
differently (a few ulp of the coordinates each), and a node skipped on rounding alone could hold
a triangle that ties or wins; with the slack the result does not depend on the visiting order
(nor on the hint). Costs nothing measurable (~1e-14 m on metre-size meshes)."""

CORE_DEPTH_TOLERANCE = 1e-9
"""m. The deepest point of a capsule's segment inside a closed mesh is searched by branch and
bound along the segment (geometry/mesh_distance.py); a piece whose lower bound is within this of
the best depth found is not split further. The returned depth is attained on the segment and at
most this much shallower than the deepest (1 nm: far below any model's accuracy, and about 30
bisection levels on a 1 m segment)."""

CORE_DEPTH_STEPS = 256
"""Evaluations (point queries) of that search at most per capsule; reached only when the depth
along the segment has many near-equal maxima (a segment along a medial axis): the returned depth
is then still attained on the segment, with a larger gap to the deepest."""

# --------------------------------------------------------------------------- point obstacle sets

POINT_PRUNE_SLACK = 64 * 2.220446049250313e-16
"""1 (m per m of the largest coordinate magnitude of the point set's root box and the shape's
bound). A node or point of a point obstacle set (geometry/point_query.py) is skipped only when
its lower bound exceeds the best signed distance found by more than this times that magnitude:
a bound and an exact distance round differently (a few ulp of the coordinates each), and with
the slack every point that ties or wins is evaluated, so the result does not depend on the
visiting order. Costs nothing measurable (~1e-14 m at metre coordinates)."""

# --------------------------------------------------------------------------- pair list, near_only bounds

BOUND_MARGIN = 1e-9
"""m. With ``near``, a pair is left bounded (not computed) only if its conservative lower bound
exceeds the cutoff by this: covers the rounding of the bounds themselves."""

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

# --------------------------------------------------------------------------- solids and meshes against meshes

MESH_SIDE_BY_WITNESS = 1e-9
"""m. A solid (or a mesh) apart from a closed mesh by more than this has its side (wholly
outside or wholly inside) read from its witness point: the sign of ``(x - p) . pseudo-normal``
at its closest mesh point ``x`` (geometry/mesh_solid.py, geometry/mesh_mesh.py), which costs
nothing. GJK's witnesses of curved solids are within ~1e-10 m of the true ones (GJK_TOLERANCE
above), so ``x - p`` keeps its direction; nearer, a point query at the solid's centre decides."""

# --------------------------------------------------------------------------- motion (continuous collision)

MOTION_TIME_TOLERANCE = 1e-6
"""1 (fraction of a joint-state step, ``s`` in [0, 1]). The reported first contact ``s`` is at
most this far before the true one (issue 38: 1e-6): conservative advancement proves no contact
before ``s``, and once the bound allows one within this much of the step, the distance at
``s + MOTION_TIME_TOLERANCE`` is sampled; <= 0 there brackets the first contact in between."""

MOTION_TOUCH_DISTANCE = 1e-9
"""m. A pair this close counts as touching in a step: conservative advancement moves by
``distance / rate`` at a time, so a pair grazing at a nanometre would take ~1e9 samples to pass
(a nanometre is below what the pair kernels resolve on metre-sized shapes anyway)."""

MOTION_MAX_SAMPLES = 100_000
"""Samples. Most exact distance samples one pair may take to find its first contact in a step
(a graze at a few nanometres along a surface); at the cap the pair is reported touching where
the advancement stopped: never a missed contact, at worst an early one."""

MOTION_DISTANCE_TOLERANCE = 1e-3
"""m. Default width of a near pair's minimum-distance interval over a step
(``Model.evaluate_motion``): the smallest distance sampled and the proven lower bound differ by
at most this for every pair whose bound is below its report distance (1 mm: a tenth of a typical
report margin; a 1 kHz step of the demo arm moves its shapes by less, so needs no sample)."""

MOTION_MIN_SAMPLES = 48
"""Samples. Most distance samples kept per pair for its minimum over the step (the ends, the
advancement's samples, the refinement's): the refinement stops there even when its interval is
still wider than the tolerance, and reports both ends of it."""
