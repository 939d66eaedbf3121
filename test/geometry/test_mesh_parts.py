"""Closed meshes of several shells (geometry/mesh_parts.py): interpenetrating shells become
separate solids, so that the sign of every point is that of their union.

Oracle: the generalised winding number of the whole file (> 0.5: inside the union; written in
trimesh.py, independent of the closest-feature sign); the parts' signed distances (point_phi)
combined as a union's (the minimum).
"""

from __future__ import annotations

import numpy as np

import mesh_examples as mx
from ambf_collision.geometry.mesh_distance import point_phi
from ambf_collision.geometry.mesh_parts import components, solid_parts
from ambf_collision.geometry.trimesh import TriangleMesh, winding_numbers


def bar(lo, hi):
    """A closed box mesh from corner ``lo`` to ``hi``."""
    lo, hi = np.asarray(lo, float), np.asarray(hi, float)
    V, F = mx.extrude([(0, 0), (1, 0), (1, 1), (0, 1)], 1.0)
    return lo + V * (hi - lo), F


def joined(*meshes):
    V = np.concatenate([m[0] for m in meshes])
    offsets = np.cumsum([0] + [len(m[0]) for m in meshes[:-1]])
    return V, np.concatenate([m[1] + o for m, o in zip(meshes, offsets)])


def union_phi(parts, P):
    return np.array([min(point_phi(*p.arrays(), 1, tuple(map(float, y)), -1)[0] for p in parts)
                     for y in P])


def test_a_pin_through_a_link_is_two_solids_and_every_sign_is_the_unions():
    link = bar((0, 0, 0), (1.0, 0.4, 0.2))
    pin = bar((0.45, 0.15, -0.1), (0.55, 0.25, 0.3))         # through the link, out both faces
    whole = TriangleMesh.build(*joined(link, pin))
    assert whole.closed and components(whole)[1] == 2
    parts, note = solid_parts(whole)
    assert len(parts) == 2 and "2 of its 2 closed shells interpenetrate" in note
    rng = np.random.default_rng(0)
    P = np.concatenate([rng.uniform((0.3, 0.0, -0.15), (0.7, 0.4, 0.35), (3000, 3)),
                        rng.uniform((0.44, 0.14, -0.11), (0.56, 0.26, 0.31), (3000, 3))])
    inside = winding_numbers(whole.vertices, whole.faces, P) > 0.5
    assert np.all((union_phi(parts, P) < 0) == inside)
    # the whole mesh's closest feature errs somewhere (the reason for the split)
    assert np.any((union_phi([whole], P) < 0) != inside)


def test_a_cavity_stays_with_its_shell_and_apart_shells_stay_together():
    ball = mx.revolve([(0, -1), (1, 0), (0, 1)], 24)
    hollow = (0.5 * ball[0], ball[1])                        # fully inside: a cavity
    far = (ball[0] + (5.0, 0, 0), ball[1])                   # apart
    whole = TriangleMesh.build(*joined(ball, hollow, far))
    assert components(whole)[1] == 3
    parts, note = solid_parts(whole)
    assert parts == [whole] and note == ""


def test_open_and_single_shell_meshes_are_left_whole():
    for V, F in (mx.torus(), (np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0.0]]), np.array([[0, 1, 2]]))):
        m = TriangleMesh.build(V, F)
        assert solid_parts(m) == ([m], "")


def test_the_psm_tool_pitch_link_is_split_and_its_signs_are_the_unions():
    from ambf_collision.geometry.meshes import read_mesh
    path = "test/model/adf_models/ambf/meshes/blender_afmb/psm/low_res/tool pitch link.STL"
    whole = TriangleMesh.build(*read_mesh(path))
    parts, _ = solid_parts(whole)
    assert sorted(len(p.faces) for p in parts) == [80, 1920]
    pin = min(parts, key=lambda p: len(p.faces))
    rng = np.random.default_rng(1)
    lo, hi = pin.vertices.min(0), pin.vertices.max(0)
    P = rng.uniform(lo - 0.2 * (hi - lo), hi + 0.2 * (hi - lo), (4000, 3))
    inside = winding_numbers(whole.vertices, whole.faces, P) > 0.5
    assert np.all((union_phi(parts, P) < 0) == inside)
