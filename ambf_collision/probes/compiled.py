"""The compiled probe model: probe specs and a model's shapes turned once into constant arrays.

:class:`ProbeModel` is built once (from specs and a :class:`ambf_collision.model.Model`, or
from specs, body names and :class:`LinkShapes` directly) and never changes; every per-cycle
value lives in a :class:`~ambf_collision.probes.data.ProbeData` from ``create_data()``::

    probes = ProbeModel.from_model(load_probe_file(path, model.body_names), model)
    pdata = probes.create_data()
    result = probes.evaluate_model(pdata, model.evaluate(data))   # ProbeResult

Compilation groups the probes into clusters (same body, same sensed shapes, and for patches
the same patch; then split in space by median cuts to at most ``cluster_size`` members), so
that the broadphase tests clusters before probes; see ``probes/stages.py``.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ambf_collision.geometry.mesh_set import Meshes
from ambf_collision.geometry.pairs import bounding_spheres
from ambf_collision.geometry.world_shapes import hull_arrays
from ambf_collision.model.evaluate_kernel import MODEL_TABLES
from ambf_collision.probes.data import ProbeData
from ambf_collision.probes.layout import HEADER, MESH_TABLE, mesh_buffer, model_sizes, model_views
from ambf_collision.probes.spec import expand_specs, resolve_body, sensed_bodies
from ambf_collision.probes.stages import evaluate_probes

__all__ = ["ProbeModel", "probe_evaluator"]


def _split(points, members, size):
    """``members`` (indices into ``points``) in spatial chunks of at most ``size``, by
    recursive median cuts along the widest axis."""
    if len(members) <= size:
        return [members]
    p = points[members]
    axis = int(np.argmax(p.max(0) - p.min(0)))
    order = members[np.argsort(p[:, axis], kind="stable")]
    half = len(order) // 2
    return _split(points, order[:half], size) + _split(points, order[half:], size)


def _resolved_probes(specs, body_names, groups_of):
    """One ``ProbeSpec`` per probe (patches expanded), bodies resolved to ``body_names``."""
    probes = []
    for p in expand_specs(specs):
        if p.body not in body_names:  # specs loaded without the model's names
            try:
                p = replace(p, body=resolve_body(p.body, body_names))
            except KeyError as e:
                raise ValueError(f"probe {p.name!r}: {e.args[0]}") from None
        if p.sense_groups and groups_of is None:
            raise ValueError(f"probe {p.name!r}: 'sense: groups' needs the bodies' collision groups")
        probes.append(p)
    return probes


def _sense_key(p):
    """What decides the shapes a probe senses."""
    return (p.body, p.sense_bodies, p.sense_groups, p.include_own_body)


def _clusters(probes, local_position, row_of_key, cluster_size):
    """``[(sensed row, members (k,) int64)]``: probes with the same sense key (a patch's probes
    apart from the others), cut in space into chunks of at most ``cluster_size``."""
    groups = {}
    for i, p in enumerate(probes):
        groups.setdefault((row_of_key[_sense_key(p)], p.patch), []).append(i)
    clusters = []
    for (row, _), members in groups.items():
        members = np.array(members, dtype=np.int64)
        clusters += [(row, c) for c in _split(local_position, members, cluster_size)]
    return clusters


class ProbeModel:
    """Probes compiled against shapes fixed on bodies (constant after construction).

    ``specs``: ``ProbeSpec``/``PatchSpec`` list (bodies plain or qualified); ``body_names``
    (B,); ``link_shapes``: the shapes in their bodies' frames (``local`` arrays,
    ``frame_index (S,)`` = body of each shape, ``hulls``); ``groups_of(body_name)``: collision
    groups of a body (needed for ``sense: {groups: ...}``); ``cluster_size``: most probes per
    cluster; ``meshes``: ``(buffer, first)``, a byte buffer holding ``link_shapes.meshes``'
    arrays as tables ``first`` to ``first + 9`` (``probes/layout.py``; None: a buffer of their
    own, :func:`~ambf_collision.probes.layout.mesh_buffer`).

    Attributes: ``names``, ``bodies`` (body name per probe), ``body_names``,
    ``patch_names``, ``specs`` (one ``ProbeSpec`` per probe), ``pairs_total`` (sensed
    (probe, shape) pairs), ``n_bodies``, ``n_shapes``, and the arrays of
    :class:`~ambf_collision.probes.layout.ProbeArrays` (``radius``, ``probe_body``,
    ``sensed``, ...): read-only views of the buffers ``floats`` and ``ints`` the kernel reads.
    """

    def __init__(self, specs, body_names, link_shapes, groups_of=None, cluster_size=32,
                 meshes=None):
        if cluster_size < 1:
            raise ValueError(f"cluster_size must be >= 1, got {cluster_size}")
        self.body_names = list(body_names)
        probes = _resolved_probes(specs, self.body_names, groups_of)
        self.specs = probes
        self.names = [p.name for p in probes]
        self.bodies = [p.body for p in probes]
        self.patch_names = list(dict.fromkeys(p.patch for p in probes if p.patch is not None))
        self.link_shapes = link_shapes
        self.hulls = link_shapes.hulls
        self._hull_arrays = hull_arrays(self.hulls)
        self.meshes = link_shapes.meshes
        self.mesh_buffer, first_mesh_table = mesh_buffer(self.meshes) if meshes is None else meshes
        shape_body = np.asarray(link_shapes.frame_index, dtype=np.int64)
        if shape_body.size and (shape_body.min() < 0 or shape_body.max() >= len(self.body_names)):
            raise ValueError("link_shapes.frame_index holds an index outside body_names")
        body_index = {n: i for i, n in enumerate(self.body_names)}
        probe_body = np.array([body_index[p.body] for p in probes], dtype=np.int64)
        local_position = np.array([p.position for p in probes], dtype=float).reshape(-1, 3)

        row_of_key, rows = {}, []  # one sensed-shape row (S,) per sense key
        for p in probes:
            if _sense_key(p) not in row_of_key:
                row_of_key[_sense_key(p)] = len(rows)
                rows.append(sensed_bodies(p, self.body_names, groups_of)[shape_body])
        clusters = _clusters(probes, local_position, row_of_key, cluster_size)
        self.pairs_total = sum(int(rows[row_of_key[_sense_key(p)]].sum()) for p in probes)

        N, C, S, Q = len(probes), len(clusters), len(shape_body), len(self.patch_names)
        n_floats, n_ints = model_sizes.py_func(N, C, S, Q)
        self.floats = np.zeros(n_floats)
        self.ints = np.zeros(n_ints, dtype=np.int64)
        self.ints[:HEADER] = (N, C, S, Q, 0)
        self.ints[MESH_TABLE] = first_mesh_table
        arrays = model_views.py_func(self.floats, self.ints)
        arrays.local_position[:] = local_position
        arrays.local_normal[:] = [p.normal for p in probes] if N else 0.0
        for name in ("radius", "stiffness", "range", "contact_threshold", "release_threshold"):
            getattr(arrays, name)[:] = [getattr(p, name) for p in probes]
        arrays.probe_body[:] = probe_body
        self._fill_clusters(arrays, clusters, rows)
        arrays.shape_centre[:], arrays.shape_bound[:] = bounding_spheres(link_shapes.local, self.hulls)
        arrays.shape_body[:] = shape_body
        origins = {s.name: s.origin for s in specs if getattr(s, "origin", None) is not None}
        for j, name in enumerate(self.patch_names):
            members = np.array([i for i, p in enumerate(probes) if p.patch == name])
            if members[-1] - members[0] + 1 != len(members):
                raise ValueError(f"patch {name!r}: its probes must be consecutive in the specs")
            arrays.patch_first[j], arrays.patch_end[j] = members[0], members[-1] + 1
            # a patch's grid is centred on its origin; expanded specs alone: their centroid
            arrays.patch_origin[j] = origins.get(name, local_position[members].mean(0))
            arrays.patch_body[j] = probe_body[members[0]]
        self.floats.flags.writeable = self.ints.flags.writeable = False
        self.arrays = model_views.py_func(self.floats, self.ints)
        for name, value in zip(self.arrays._fields, self.arrays):
            setattr(self, name, value)
        self.n_bodies, self.n_shapes = len(self.body_names), S

    @staticmethod
    def _fill_clusters(arrays, clusters, rows):
        """Cluster members, bodies, sensed rows, and per cluster the centre of its members' box,
        its reach (farthest member offset plus that member's radius and range) and whether all
        members share one local sensor normal."""
        start = 0
        for c, (row, members) in enumerate(clusters):
            pts = arrays.local_position[members]
            mid = 0.5 * (pts.min(0) + pts.max(0))
            reach = arrays.radius[members] + arrays.range[members]
            arrays.cluster_centre[c] = mid
            arrays.cluster_reach[c] = np.max(np.linalg.norm(pts - mid, axis=1) + reach)
            arrays.cluster_start[c] = start
            arrays.cluster_member[start:start + len(members)] = members
            start += len(members)
            arrays.cluster_body[c] = arrays.probe_body[members[0]]
            normals = arrays.local_normal[members]
            arrays.cluster_uniform[c] = bool(np.all(normals == normals[0]))
            arrays.sensed[c] = rows[row]
        arrays.cluster_start[len(clusters)] = start

    @classmethod
    def from_model(cls, specs, model, cluster_size=32) -> "ProbeModel":
        """Compile against a :class:`ambf_collision.model.Model` (its bodies, its shapes in
        their bodies' frames, its collision groups and the meshes in its buffer)."""
        return cls(specs, model.body_names, model.link_shapes, groups_of=model.groups_of,
                   cluster_size=cluster_size,
                   meshes=(model.buffer, MODEL_TABLES.index(f"mesh_{Meshes._fields[0]}")))

    def __len__(self) -> int:
        return len(self.names)

    def create_data(self) -> ProbeData:
        """New per-cycle buffers for this model (free probes, no contact state)."""
        return ProbeData(self)

    def evaluate(self, data: ProbeData, body_R, body_t, world):
        """Evaluate every probe for body poses ``body_R (B,3,3)``, ``body_t (B,3)`` (world from
        body, m) and the world shapes of the same cycle (``WorldShapes`` of these shapes).
        One kernel call; returns ``data.result`` (views of ``data``'s buffers)."""
        if len(world.kind) != self.n_shapes or len(body_R) != self.n_bodies:
            raise ValueError(f"probe model compiled for {self.n_shapes} shapes on {self.n_bodies} "
                             f"bodies, evaluated with {len(world.kind)} shapes and {len(body_R)} poses")
        data.result.pairs_checked = evaluate_probes(
            self.floats, self.ints, world.table, *self._hull_arrays, self.mesh_buffer, body_R, body_t,
            data.floats, data.distance, data.ints, data.in_contact, data.scratch)
        return data.result

    def evaluate_model(self, data: ProbeData, evaluation):
        """:meth:`evaluate` for a model's ``EvaluationResult`` (its body poses and world shapes)."""
        return self.evaluate(data, evaluation.body_R, evaluation.body_t, evaluation.world)


def probe_evaluator(model, specs):
    """The monitor's probe entry point: ``(evaluate, probes)`` for probe specs on a
    :class:`ambf_collision.model.Model`. ``probes`` is the :class:`ProbeModel` (``names``,
    ``bodies``, ``len``); ``evaluate(model, data, result) -> ProbeResult`` evaluates it, into
    one ``ProbeData`` of its own, for the model's ``EvaluationResult`` ``result`` of the cycle."""
    probes = ProbeModel.from_model(specs, model)
    pdata = probes.create_data()

    def evaluate(model_, data, result):
        return probes.evaluate_model(pdata, result)

    return evaluate, probes
