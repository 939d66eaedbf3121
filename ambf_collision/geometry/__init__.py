"""Geometry layer: shapes, transforms, pair kernels, point signed distances, tolerances.

Imports nothing else of the package. Import modules by full name, e.g.
``from ambf_collision.geometry.distance import distance``.
"""

from ambf_collision.geometry import kernel_cache  # noqa: F401 - before any kernel: numba's cache stamp
