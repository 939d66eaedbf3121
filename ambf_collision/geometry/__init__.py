"""Geometry layer: shapes, transforms, pair kernels, point signed distances, tolerances.

Imports nothing else of the package. Import modules by full name, e.g.
``from ambf_collision.geometry.distance import distance``.
"""
