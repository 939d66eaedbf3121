"""Shape construction, validation errors, JSON round trip, rigid transforms."""

import math

import numpy as np
import pytest

from ambf_collision.geometry.shapes import (BOX, CAPSULE, CONE, CONVEX, CYLINDER, PLANE, SPHERE, Box,
                                   Capsule, Cone, ConvexHull, Cylinder, Plane, ShapeError,
                                   Sphere, shape_from_json, shape_to_json)
from ambf_collision.geometry.transforms import axis_angle_to_matrix


def test_kind_codes():
    assert (SPHERE, CAPSULE, BOX, CYLINDER, CONE, PLANE, CONVEX) == tuple(range(7))
    assert Cone(1, 1).kind == CONE and Cylinder(1, 1).kind == CYLINDER
    assert ConvexHull([[0, 0, 0]]).kind == CONVEX


@pytest.mark.parametrize("make, message", [
    (lambda: Capsule([0, 0, 0], [1, 1, 1], -1), "capsule.radius: must be >= 0, got -1.0"),
    (lambda: Sphere([0, 0, math.nan], 1), "sphere.center: must be finite"),
    (lambda: Sphere([0, 0], 1), "sphere.center: must be a list of 3 numbers"),
    (lambda: Box([1, -2, 1]), "box.size: must be >= 0, got [1.0, -2.0, 1.0]"),
    (lambda: Box([1, 1, 1], orientation=[0, 0, 0, 0]), "box.orientation: quaternion must be non-zero"),
    (lambda: Cylinder(1, math.inf), "cylinder.height: must be finite"),
    (lambda: Cone(-0.5, 1), "cone.radius: must be >= 0, got -0.5"),
    (lambda: Plane([0, 0, 0], 1), "plane.normal: must be non-zero"),
    (lambda: Plane([0, 0, 1], "x"), "plane.offset: must be a number"),
    (lambda: ConvexHull([[0, 0, 0], [1, math.nan, 0]]), "convex.vertices[1]: must be finite"),
])
def test_constructor_errors_name_field_and_value(make, message):
    with pytest.raises(ShapeError, match=None) as err:
        make()
    assert message in str(err.value)
    assert isinstance(err.value, ValueError)


def test_validate_rechecks_mutated_shape():
    s = Capsule([0, 0, 0], [1, 0, 0], 0.1)
    s.radius = -2.0
    with pytest.raises(ShapeError, match=r"capsule.radius: must be >= 0, got -2.0"):
        s.validate()


def test_plane_normal_is_normalised_and_quaternion_normalised():
    p = Plane([0, 0, 2], 1.0)
    np.testing.assert_array_equal(p.normal, [0, 0, 1])
    b = Box([1, 1, 1], orientation=[0, 0, 0, 2])
    np.testing.assert_array_equal(b.orientation, [0, 0, 0, 1])


@pytest.mark.parametrize("obj", [
    {"sphere": {"center": [1, 2, 3], "radius": 0.5}},
    {"capsule": {"a": [0, 0, 0], "b": [0, 0, 1], "radius": 0.1}},
    {"box": {"size": [1, 2, 3], "position": [1, 0, 0], "orientation": [0, 0, 0.6, 0.8]}},
    {"cylinder": {"radius": 0.2, "height": 1.0, "position": [0, 1, 0], "orientation": [0, 0, 0, 1]}},
    {"cone": {"radius": 0.2, "height": 1.0, "position": [0, 1, 0], "orientation": [0.6, 0, 0, 0.8]}},
    {"plane": {"normal": [0, 0, 1], "offset": -0.5}},
])
def test_json_round_trip(obj):
    s = shape_from_json(obj)
    back = shape_to_json(s)
    again = shape_from_json(back)
    assert shape_to_json(again) == back
    (tag, body), = obj.items()
    for key, value in body.items():
        np.testing.assert_allclose(back[tag][key], value)


def test_json_orientation_optional_and_errors_name_index_and_field():
    s = shape_from_json({"box": {"size": [1, 1, 1]}}, 0)
    np.testing.assert_array_equal(s.orientation, [0, 0, 0, 1])
    cases = [
        ({"capsule": {"a": [0, 0, 0], "b": [0, 0, 1], "radius": -1}}, "shapes[3].capsule.radius: must be >= 0, got -1.0"),
        ({"capsule": {"a": [0, 0, 0], "radius": 1}}, "shapes[3].capsule.b: missing"),
        ({"sphere": {"center": [0, 0, 0], "radius": 1, "colour": 1}}, "shapes[3].sphere.colour: unknown field"),
        ({"torus": {}}, "shapes[3]: unknown shape type 'torus'"),
        ({"box": {"size": [1, 1]}}, "shapes[3].box.size: must be a list of 3 numbers"),
        ([1, 2], "shapes[3]: must be an object"),
    ]
    for obj, msg in cases:
        with pytest.raises(ShapeError) as err:
            shape_from_json(obj, 3)
        assert msg in str(err.value)


def test_transformed_moves_points_and_planes():
    R = axis_angle_to_matrix([0, 0, 1], np.pi / 2)
    t = np.array([1.0, 2.0, 3.0])
    c = Capsule([1, 0, 0], [2, 0, 0], 0.1).transformed(R, t)
    np.testing.assert_allclose(c.a, [1, 3, 3], atol=1e-15)
    np.testing.assert_allclose(c.b, [1, 4, 3], atol=1e-15)
    p = Plane([1, 0, 0], 0.5).transformed(R, t)       # x < 0.5 -> y' < 0.5 + 2
    np.testing.assert_allclose(p.normal, [0, 1, 0], atol=1e-15)
    assert p.offset == pytest.approx(2.5)
    b = Box([1, 2, 3]).transformed(R, t)
    np.testing.assert_allclose(b.rotation, R, atol=1e-15)
    np.testing.assert_allclose(b.position, t)
