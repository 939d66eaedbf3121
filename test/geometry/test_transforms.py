"""matrix_to_quat / rotation_quaternion against hand-derived quaternions and axis-angle (each of
the four branches, the half turns where the w branch fails, and batches)."""

import math

import numpy as np
import pytest

from ambf_collision.geometry.transforms import (axis_angle_to_matrix, matrix_to_quat,
                                                quat_to_matrix, rotation_quaternion, transform_rows)

S = math.sqrt(0.5)


@pytest.mark.parametrize("R, q", [
    (np.eye(3), (0.0, 0.0, 0.0, 1.0)),
    (np.diag([1.0, -1.0, -1.0]), (1.0, 0.0, 0.0, 0.0)),   # half turn about x: the x branch
    (np.diag([-1.0, 1.0, -1.0]), (0.0, 1.0, 0.0, 0.0)),   # about y
    (np.diag([-1.0, -1.0, 1.0]), (0.0, 0.0, 1.0, 0.0)),   # about z
    ([[0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]], (0.0, 0.0, S, S)),  # +90 deg about z
    ([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]], (-S, 0.0, 0.0, S)),  # -90 deg about x
])
def test_hand_derived_quaternions(R, q):
    np.testing.assert_allclose(matrix_to_quat(R), q, atol=1e-15)
    out = np.zeros(4)
    rotation_quaternion(np.asarray(R, float), out)  # the compiled scalar form, called alone
    np.testing.assert_allclose(out, q, atol=1e-15)


def test_axis_angle_gives_sin_and_cos_of_the_half_angle_with_w_positive():
    rng = np.random.default_rng(7)
    axes = rng.normal(size=(500, 3))
    axes /= np.linalg.norm(axes, axis=1, keepdims=True)
    # any angle in (-pi, pi), with a cluster next to the half turn where w -> 0
    angles = np.concatenate([rng.uniform(-math.pi, math.pi, 400),
                             math.pi - np.geomspace(1e-12, 1e-2, 100)])
    R = np.stack([axis_angle_to_matrix(a, t) for a, t in zip(axes, angles)])
    q = matrix_to_quat(R)
    sign = np.where(np.cos(angles / 2) < 0, -1.0, 1.0)[:, None]
    expected = sign * np.concatenate([axes * np.sin(angles / 2)[:, None],
                                      np.cos(angles / 2)[:, None]], axis=1)
    np.testing.assert_allclose(q, expected, atol=2e-15 * 8)
    assert (q[:, 3] >= 0).all()
    np.testing.assert_allclose(quat_to_matrix(q), R, atol=1e-14)


def test_batch_shape_is_kept():
    R = np.broadcast_to(np.diag([1.0, -1.0, -1.0]), (2, 5, 3, 3))
    q = matrix_to_quat(R)
    assert q.shape == (2, 5, 4)
    np.testing.assert_array_equal(q, np.broadcast_to([1.0, 0.0, 0.0, 0.0], (2, 5, 4)))


def test_transform_rows_points_and_directions():
    """Each row moved by its own frame's pose: ``R_f x + t_f`` for points, ``R_f x`` for
    directions, against the matrix product row by row (a frame index used twice, one unused)."""
    rng = np.random.default_rng(7)
    q = rng.normal(size=(3, 4))
    R = quat_to_matrix(q / np.linalg.norm(q, axis=1, keepdims=True))
    t = rng.normal(size=(3, 3))
    frame = np.array([2, 0, 2, 1], np.int64)
    x = rng.normal(size=(4, 3))
    points, directions = np.zeros((4, 3)), np.zeros((4, 3))
    transform_rows(R, t, frame, x, points, True)
    transform_rows(R, t, frame, x, directions, False)
    for i, f in enumerate(frame):
        np.testing.assert_allclose(points[i], R[f] @ x[i] + t[f], rtol=0, atol=1e-15)
        np.testing.assert_allclose(directions[i], R[f] @ x[i], rtol=0, atol=1e-15)
    transform_rows(R, t, frame[:0], x[:0], points[:0], True)  # no rows: nothing to do
