"""Helpers of the probe tests: a scene of posed bodies with shapes, probe specs, and the
brute-force reference (every sensed pair, the rules of probes/spec.py written out in NumPy)."""

from __future__ import annotations

import numpy as np

from ambf_collision.geometry.points import point_signed_distance_batch
from ambf_collision.geometry.world_shapes import LinkShapes
from ambf_collision.probes import ProbeModel, ProbeSpec


class Scene:
    """Bodies ``/ambf/env/<name>`` with shapes fixed in their frames, posed by (R, t)."""

    def __init__(self, bodies):
        self.body_names = [f"/ambf/env/{b}" for b in bodies]
        self.shapes, self.shape_body = [], []
        B = len(bodies)
        self.R = np.repeat(np.eye(3)[None], B, axis=0)
        self.t = np.zeros((B, 3))
        self._link = None

    def add(self, body, shape):
        self.shapes.append(shape)
        self.shape_body.append(self.body_names.index(f"/ambf/env/{body}"))
        self._link = None

    def pose(self, body, R=None, t=None):
        b = self.body_names.index(f"/ambf/env/{body}")
        if R is not None:
            self.R[b] = R
        if t is not None:
            self.t[b] = t

    @property
    def link(self):
        if self._link is None:
            self._link = LinkShapes(self.shapes, np.array(self.shape_body, dtype=np.int64))
        return self._link

    def world(self):
        return self.link.to_world(self.R, self.t)

    def probes(self, specs, **kw):
        """``(ProbeModel, ProbeData)`` of ``specs`` on this scene."""
        pm = ProbeModel(specs, self.body_names, self.link, **kw)
        return pm, pm.create_data()

    def evaluate(self, probes):
        pm, data = probes
        return pm.evaluate(data, self.R, self.t, self.world())


def probe(name="p", body="/ambf/env/finger", position=(0, 0, 0), normal=(0, 0, -1),
          radius=0.004, stiffness=2000.0, **kw):
    n = np.asarray(normal, float)
    return ProbeSpec(name, body, np.asarray(position, float), n / np.linalg.norm(n), radius,
                     stiffness, **kw)


def brute_force(pm, world, res, groups=None):
    """Expected per-probe outputs for the probe centres and normals of ``res``: every
    (probe, shape) pair measured by the point kernel, then the rules of probes/spec.py
    (facing, range, d_pen clip, sums, deepest contact with ties to the lowest shape)."""
    N, S = len(pm), pm.n_shapes
    pi = np.repeat(np.arange(N), S)
    si = np.tile(np.arange(S), N)
    d, _, nc = point_signed_distance_batch(world, pm.hulls, si, res.position[pi])
    d, nc = d.reshape(N, S), nc.reshape(N, S, 3)
    sensed = np.zeros((N, S), dtype=bool)
    shape_body = pm.shape_body
    for i, p in enumerate(pm.specs):
        names = [pm.body_names[b] for b in shape_body]
        plain = np.array([n.rsplit("/", 1)[-1] for n in names])
        if p.sense_bodies or p.sense_groups:
            sensed[i] = np.isin(plain, p.sense_bodies)
            if p.sense_groups:
                sensed[i] |= [bool(set(groups[n]) & set(p.sense_groups)) for n in names]
        else:
            sensed[i] = True
        if not p.include_own_body:
            sensed[i] &= pm.probe_body[i] != shape_body
    r = pm.radius[:, None]
    facing = sensed & (np.einsum("nsk,nk->ns", nc, res.normal) < 0)
    gap = np.where(facing & (d - r <= pm.range[:, None]), d - r, np.inf)
    touch = facing & (d < r)
    pen = np.where(touch, np.clip(r - d, 0, 2 * r), 0.0)
    deepest = np.where(touch.any(1), np.argmin(np.where(touch, d, np.inf), axis=1), -1)
    return dict(distance=gap.min(1), depth=np.where(touch.any(1), pen.max(1), 0.0),
                force=np.einsum("ns,nsk->nk", pm.stiffness[:, None] * pen, nc),
                area=(np.pi * (2 * r * pen - pen**2)).sum(1), in_contact=touch.any(1),
                touching_shape=deepest,
                touching_body=np.where(deepest >= 0, shape_body[np.maximum(deepest, 0)], -1),
                contact_normal=np.where(touch.any(1)[:, None], nc[np.arange(N), np.maximum(deepest, 0)], 0.0))


def assert_brute_force(res, exp):
    """Every per-probe output of ``res`` equals the brute force ``exp``."""
    np.testing.assert_allclose(res.distance, exp["distance"], atol=1e-15)
    np.testing.assert_allclose(res.depth, exp["depth"], atol=1e-15)
    np.testing.assert_allclose(res.force, exp["force"], atol=1e-12)
    np.testing.assert_allclose(res.area, exp["area"], atol=1e-16)
    np.testing.assert_allclose(res.contact_normal, exp["contact_normal"], atol=1e-15)
    assert np.array_equal(res.in_contact, exp["in_contact"])
    assert np.array_equal(res.touching_shape, exp["touching_shape"])
    assert np.array_equal(res.touching_body, exp["touching_body"])
