"""RViz markers: counts, types, poses against hand-derived shape poses, namespaces, colours, no NaN.

Expectations are derived by hand (a 3-4-5 capsule, the shortest-arc quaternion written out, the
demo ADF file's own `location` + `collision offset`), never read back from the builder.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("visualization_msgs.msg", reason="ROS 2 messages not importable: run via `make test`")
from rclpy.serialization import deserialize_message  # noqa: E402
from visualization_msgs.msg import Marker, MarkerArray  # noqa: E402

from conftest import REPO
from ambf_collision.geometry.world_shapes import WorldShapes  # noqa: E402
from ambf_collision.model.contact_rows import contact_row, contact_row_width  # noqa: E402
from ambf_collision.ros.marker_geometry import (GREEN, GREY, PROBE_FREE, RED, SWEPT, distance_rgb,  # noqa: E402
                                                force_rgb)
from ambf_collision.ros.markers import MarkerBuilder, build_markers  # noqa: E402
from ambf_collision.geometry.shapes import Box, Capsule, Cone, ConvexHull, Cylinder, Plane, Sphere  # noqa: E402
from ambf_collision.geometry.transforms import quat_to_matrix  # noqa: E402
DEMO = REPO / "examples" / "demo" / "demo_arm.yaml"
R_CAP = 0.05


def _scene():
    shapes = [
        Capsule([0.1, 0.2, 0.3], [0.1, 0.5, 0.7], R_CAP),     # 0: segment (0, .3, .4), length .5
        Sphere([1.0, 2.0, 3.0], 0.2),                        # 1
        Box([0.2, 0.4, 0.6], [1, 1, 1], [0, 0, math.sin(0.3), math.cos(0.3)]),  # 2: yaw 0.6
        Cylinder(0.1, 0.3, [0, 0, 1], [0, 0, 0, 1]),         # 3
        Cone(0.1, 0.2, [0, 1, 0], [0, 0, 0, 1]),              # 4
        Plane([0, 0, 1], 0.0),                               # 5: floor z = 0
        Plane([0, 0, -1], -2.0),                             # 6: ceiling z = 2, normal down
        Capsule([0.3, 0.3, 0.3], [0.3, 0.3, 0.3], 0.0),      # 7: fully degenerate capsule
    ]
    labels = ["arm", "ball", "box", "cyl", "cone", "floor", "ceiling", "dot"]
    return WorldShapes.from_shapes(shapes), labels


def _decode(raw: bytes) -> MarkerArray:
    """The builder's serialized array, read by rclpy's own deserializer."""
    assert isinstance(raw, bytes)
    return deserialize_message(raw, MarkerArray)


def _walk_numbers(msg, path="m"):
    """Every float field of a message tree, with its path."""
    if isinstance(msg, float):
        yield path, msg
        return
    if isinstance(msg, (list, tuple)):
        for i, x in enumerate(msg):
            yield from _walk_numbers(x, f"{path}[{i}]")
        return
    fields = getattr(msg, "get_fields_and_field_types", None)
    if fields is None:
        return
    for name in fields():
        yield from _walk_numbers(getattr(msg, name), f"{path}.{name}")


def _assert_no_nan(array):
    bad = [(p, v) for p, v in _walk_numbers(list(array.markers)) if not math.isfinite(v)]
    assert not bad, bad[:5]


def _by_ns(array):
    out = {}
    for m in array.markers:
        out.setdefault(m.ns, []).append(m)
    return out


def _pos(m):
    return np.array([m.pose.position.x, m.pose.position.y, m.pose.position.z])


def _quat(m):
    o = m.pose.orientation
    return np.array([o.x, o.y, o.z, o.w])


def _scale(m):
    return np.array([m.scale.x, m.scale.y, m.scale.z])


def _same_rotation(q1, q2):
    q1, q2 = np.asarray(q1, float), np.asarray(q2, float)
    return min(np.abs(q1 - q2).max(), np.abs(q1 + q2).max()) < 1e-9


def test_layout_counts_types_and_deleteall_first():
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, pairs=[[0, 1]])
    arr = _decode(b.build(world, [0.3], stamp=12.5))
    assert arr.markers[0].action == Marker.DELETEALL
    ns = _by_ns(arr)
    # 8 main markers + 2 caps for each of the 2 capsules
    assert sum(len(v) for k, v in ns.items() if k.startswith("shapes/")) == 8 + 4
    assert [m.type for m in ns["shapes/arm"]] == [Marker.CYLINDER, Marker.SPHERE, Marker.SPHERE]
    assert [m.id for m in ns["shapes/arm"]] == [0, 1, 2]
    assert ns["shapes/ball"][0].type == Marker.SPHERE
    assert ns["shapes/box"][0].type == Marker.CUBE
    assert ns["shapes/cyl"][0].type == Marker.CYLINDER
    assert ns["shapes/cone"][0].type == Marker.TRIANGLE_LIST
    assert ns["shapes/floor"][0].type == Marker.CUBE
    for m in arr.markers[1:]:
        assert m.header.frame_id == "world"
        assert (m.header.stamp.sec, m.header.stamp.nanosec) == (12, 500_000_000)
        assert 0 < m.lifetime.sec + 1e-9 * m.lifetime.nanosec <= 1.0  # stale markers vanish
    _assert_no_nan(arr)


def test_capsule_cylinder_along_segment_with_caps():
    world, labels = _scene()
    arr = _decode(MarkerBuilder.from_world_shapes(world, labels).build(world))
    cyl, cap_a, cap_b = _by_ns(arr)["shapes/arm"]
    np.testing.assert_allclose(_pos(cyl), [0.1, 0.35, 0.5], atol=1e-12)  # midpoint
    np.testing.assert_allclose(_scale(cyl), [2 * R_CAP, 2 * R_CAP, 0.5], atol=1e-12)
    # shortest arc from +z to (0, .6, .8): rotation about x by -asin(0.6)
    th = -math.asin(0.6)
    assert _same_rotation(_quat(cyl), [math.sin(th / 2), 0, 0, math.cos(th / 2)])
    np.testing.assert_allclose(quat_to_matrix(_quat(cyl))[:, 2], [0, 0.6, 0.8], atol=1e-12)
    np.testing.assert_allclose(_pos(cap_a), [0.1, 0.2, 0.3], atol=1e-12)
    np.testing.assert_allclose(_pos(cap_b), [0.1, 0.5, 0.7], atol=1e-12)
    np.testing.assert_allclose(_scale(cap_a), [0.1, 0.1, 0.1], atol=1e-12)


def test_solid_poses_and_planes():
    world, labels = _scene()
    ns = _by_ns(_decode(MarkerBuilder.from_world_shapes(world, labels, plane_size=4.0,
                                                        plane_thickness=0.01).build(world)))
    ball = ns["shapes/ball"][0]
    np.testing.assert_allclose(_pos(ball), [1, 2, 3])
    np.testing.assert_allclose(_scale(ball), [0.4, 0.4, 0.4])
    box = ns["shapes/box"][0]
    np.testing.assert_allclose(_pos(box), [1, 1, 1])
    np.testing.assert_allclose(_scale(box), [0.2, 0.4, 0.6])
    assert _same_rotation(_quat(box), [0, 0, math.sin(0.3), math.cos(0.3)])
    cyl = ns["shapes/cyl"][0]
    np.testing.assert_allclose(_scale(cyl), [0.2, 0.2, 0.3])
    np.testing.assert_allclose(_pos(cyl), [0, 0, 1])
    cone = ns["shapes/cone"][0]
    pts = np.array([[p.x, p.y, p.z] for p in cone.points])
    assert len(pts) % 3 == 0 and len(pts) > 0
    assert np.isclose(pts[:, 2].max(), 0.1) and np.isclose(pts[:, 2].min(), -0.1)  # apex +h/2
    assert np.isclose(np.hypot(pts[:, 0], pts[:, 1]).max(), 0.1)
    np.testing.assert_allclose(_pos(cone), [0, 1, 0])
    floor = ns["shapes/floor"][0]
    np.testing.assert_allclose(_pos(floor), [0, 0, -0.005], atol=1e-12)  # top face at z = 0
    np.testing.assert_allclose(_scale(floor), [4, 4, 0.01])
    ceiling = ns["shapes/ceiling"][0]  # solid where -z < -2, i.e. above z = 2; box just above it
    np.testing.assert_allclose(_pos(ceiling), [0, 0, 2.005], atol=1e-12)
    np.testing.assert_allclose(quat_to_matrix(_quat(ceiling))[:, 2], [0, 0, -1], atol=1e-12)


def test_degenerate_capsule_is_finite_and_visible():
    world, labels = _scene()
    arr = _decode(MarkerBuilder.from_world_shapes(world, labels).build(world, stamp=float("nan")))
    dot = _by_ns(arr)["shapes/dot"]
    for m in dot:
        assert np.all(_scale(m) > 0)
        np.testing.assert_allclose(_pos(m), [0.3, 0.3, 0.3])
    _assert_no_nan(arr)


def test_colours_by_smallest_pair_distance():
    world, labels = _scene()
    # arm-ball in contact, ball-box near, cyl-cone far, floor unchecked elsewhere
    pairs = [[0, 1], [1, 2], [3, 4], [2, 4]]
    b = MarkerBuilder.from_world_shapes(world, labels, pairs=pairs, near=0.05)
    ns = _by_ns(_decode(b.build(world, [-0.003, 0.02, 0.4, 1.0])))

    def rgb(label, i=0):
        c = ns[f"shapes/{label}"][i].color
        return (c.r, c.g, c.b)

    assert rgb("arm") == pytest.approx(RED) and rgb("arm", 2) == pytest.approx(RED)  # caps too
    assert rgb("ball") == pytest.approx(RED)      # its smallest distance is the contact
    r, g, bl = rgb("box")                          # 0.02 m < near: orange..yellow
    assert r == 1.0 and 0.5 < g < 1.0 and bl == 0.0
    assert rgb("cyl") == pytest.approx(GREEN)
    assert rgb("floor") == pytest.approx(GREY)     # no pair of it is checked


def test_distance_and_force_colour_maps():
    def colour(d):
        out = np.zeros(3)
        distance_rgb(d, 0.05, out)
        return out

    c = [colour(d) for d in (-1.0, 0.0, 0.025, 0.05, 1.0, math.inf, math.nan, -math.inf)]
    np.testing.assert_allclose(c[0], RED)
    np.testing.assert_allclose(c[1], RED)            # touching counts as contact
    np.testing.assert_allclose(c[2], [1.0, 0.75, 0.0])  # halfway orange (1,.5,0) -> yellow (1,1,0)
    np.testing.assert_allclose(c[3], GREEN)
    np.testing.assert_allclose(c[4], GREEN)
    np.testing.assert_allclose(c[5], GREY)
    np.testing.assert_allclose(c[6], RED)            # NaN is never shown as safe
    np.testing.assert_allclose(c[7], RED)

    def force(f, touching, full_scale=2.0):
        out = np.zeros(3)
        force_rgb(*f, touching, full_scale, out)
        return out

    np.testing.assert_allclose(force((0.0, 0.0, 0.0), False), PROBE_FREE)
    np.testing.assert_allclose(force((0.0, 0.0, 1.0), True), [1.0, 0.5, 0.0])  # half scale
    np.testing.assert_allclose(force((0.0, 3.0, 4.0), True), RED)  # |f| = 5 N > 2 N
    np.testing.assert_allclose(force((math.nan, 0.0, 0.0), True), [1.0, 1.0, 0.0])  # NaN as 0
    np.testing.assert_allclose(force((math.inf, 0.0, 0.0), True), RED)
    np.testing.assert_allclose(force((0.0, 0.0, 1.0), True, 0.0), RED)  # no scale: full


def _build(builder, world, contacts):
    """``builder.build`` of contacts given as records (body_1, body_2, distance, point_1,
    point_2, normal), as their info and rows."""
    info = [(c.body_1, c.body_2, -1, -1) for c in contacts]
    rows = [contact_row(c.distance, c.point_1, c.point_2, (c.point_1 + c.point_2) / 2, c.normal)
            for c in contacts]
    return builder.build(world, contact_info=info,
                         contact_rows=np.reshape(rows, (len(contacts), contact_row_width(0))))


def test_contact_arrows_and_namespaces():
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, arrow_length=0.05)
    contacts = [
        SimpleNamespace(body_1="/a/x", body_2="/a/y", distance=-0.002, point_1=np.array([0, 0, 1.0]),
                        point_2=np.array([0, 0, 0.998]), normal=np.array([0, 0, -1.0])),
        SimpleNamespace(body_1="/a/x", body_2="/a/y", distance=0.01, point_1=np.array([1, 0, 0.0]),
                        point_2=np.array([1.01, 0, 0]), normal=np.array([1.0, 0, 0])),
        SimpleNamespace(body_1="/a/x", body_2="/a/z", distance=0.03, point_1=np.array([np.nan, 0, 0]),
                        point_2=np.array([0, 0, 0.0]), normal=np.array([0, 1.0, 0])),
    ]
    arr = _decode(_build(b, world, contacts))
    ns = _by_ns(arr)
    xy = ns["/a/x=/a/y"]
    assert [(m.type, m.id) for m in xy] == [(Marker.ARROW, 0), (Marker.SPHERE_LIST, 1),
                                           (Marker.ARROW, 2), (Marker.SPHERE_LIST, 3)]
    start, end = [np.array([p.x, p.y, p.z]) for p in xy[0].points]
    np.testing.assert_allclose(start, [0, 0, 1])
    np.testing.assert_allclose(end, [0, 0, 0.95])   # along the normal, body_1 -> body_2
    assert (xy[0].color.r, xy[0].color.g) == (1.0, 0.0)  # penetrating: red
    np.testing.assert_allclose([[p.x, p.y, p.z] for p in xy[1].points], [[0, 0, 1], [0, 0, 0.998]])
    assert len(ns["/a/x=/a/z"]) == 2
    _assert_no_nan(arr)   # the NaN witness point is not passed on


def test_a_swept_contact_is_violet_the_others_by_distance():
    """Two contacts at about 0 m, the second swept (continuous mode): its arrow and witnesses
    are violet (``SWEPT``), the first keeps the contact red; the flags follow their contacts
    through the drawing order (namespaces sorted: the swept one is given first)."""
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, arrow_length=0.05)
    z = np.zeros(3)
    contacts = [SimpleNamespace(body_1="/a/y", body_2="/a/z", distance=1e-9, point_1=z,
                                point_2=z, normal=np.array([0, 0, 1.0])),
                SimpleNamespace(body_1="/a/x", body_2="/a/y", distance=0.0, point_1=z,
                                point_2=z, normal=np.array([0, 0, 1.0]))]
    info = [(c.body_1, c.body_2, -1, -1) for c in contacts]
    rows = np.array([contact_row(c.distance, c.point_1, c.point_2, z, c.normal) for c in contacts])
    ns = _by_ns(_decode(b.build(world, contact_info=info, contact_rows=rows,
                                contact_swept=np.array([True, False]))))
    for mk in ns["/a/y=/a/z"]:
        np.testing.assert_allclose([mk.color.r, mk.color.g, mk.color.b], SWEPT, atol=1e-6)
    for mk in ns["/a/x=/a/y"]:
        np.testing.assert_allclose([mk.color.r, mk.color.g, mk.color.b], RED, atol=1e-6)


def test_probe_sphere_list_coloured_by_force():
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, probe_diameter=0.004, force_full_scale=2.0)
    pr = SimpleNamespace(names=["p0", "p1", "p2"],
                         position=np.array([[0, 0, 0], [0.01, 0, 0], [0.02, 0, 0.0]]),
                         force=np.array([[0, 0, 0], [0, 0, 2.0], [0, 0, 0.0]]),
                         in_contact=np.array([False, True, True]))
    m = _by_ns(_decode(b.build(world, probe_result=pr)))["probes"]
    assert len(m) == 1 and m[0].type == Marker.SPHERE_LIST
    assert len(m[0].points) == 3 and len(m[0].colors) == 3
    assert m[0].scale.x == pytest.approx(0.004)
    assert (m[0].colors[1].r, m[0].colors[1].g, m[0].colors[1].b) == pytest.approx(RED)
    assert m[0].colors[2].g == pytest.approx(1.0)  # touching with no force: yellow
    assert m[0].points[1].x == pytest.approx(0.01)


def test_arrays_that_do_not_match_the_layout_are_refused():
    """The marker kernels index without bounds checks: a short or long array is a ValueError
    naming it, never a read or write past its end."""
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, pairs=[[0, 1], [1, 2]])
    with pytest.raises(ValueError, match="pair_distances: 1 row"):
        b.build(world, [0.1])
    other = WorldShapes.from_shapes([Sphere([0, 0, 0], 0.1)])
    with pytest.raises(ValueError, match="world shapes: 1 row"):
        b.build(other, [0.1, 0.2])
    pr = SimpleNamespace(names=["p0", "p1"], position=np.zeros((1, 3)), force=np.zeros((2, 3)),
                         in_contact=np.zeros(2, bool))
    with pytest.raises(ValueError, match="probe position: 1 row"):
        b.build(world, [0.1, 0.2], probe_result=pr)


def test_convex_hull_marker_draws_the_cube_faces_outward():
    cube = np.array([[x, y, z] for x in (0, 1) for y in (0, 1) for z in (0, 1)], float)
    hull = ConvexHull(np.vstack([cube, [[0.5, 0.5, 0.5]]]), [0, 0, 0], [0, 0, 0, 1])
    w = WorldShapes.from_shapes([hull])
    m = _decode(MarkerBuilder.from_world_shapes(w, ["h"]).build(w)).markers[1]
    assert m.type == Marker.TRIANGLE_LIST
    tris = np.array([[p.x, p.y, p.z] for p in m.points]).reshape(-1, 3, 3)
    n = np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0])
    c = tris.mean(axis=1) - 0.5  # from the cube's centre (the interior point is not a vertex)
    assert np.all(np.einsum("ij,ij->i", n, c) > 0)  # every triangle faces outward
    assert 0.5 * np.linalg.norm(n, axis=1).sum() == pytest.approx(6.0)  # the surface, once
    assert np.all(np.isin(tris.reshape(-1, 3), [0.0, 1.0]))  # the cube's corners only


def test_demo_model_markers_match_adf_locations():
    if not DEMO.exists():
        pytest.skip(f"{DEMO} missing")
    from ambf_collision.demo.trajectory import PHASES, demo_joint_positions
    from ambf_collision.model import Model

    model = Model.from_files([str(DEMO)])
    data = model.create_data()
    result = model.evaluate(data)
    arr = _decode(build_markers(model, result, None, "world", 0.0))
    ns = _by_ns(arr)
    # demo_arm.yaml: upper_arm location z 0.35, collision offset z 0.2, CAPSULE height 0.4 r 0.045
    # (AMBF capsule height is the full length including the caps: segment 0.4 - 2*0.045)
    cyl = ns["shapes//ambf/env/upper_arm"][0]
    np.testing.assert_allclose(_pos(cyl), [0, 0, 0.55], atol=1e-12)
    assert cyl.scale.x == pytest.approx(0.09)
    n_caps = sum(1 for s in model.shapes if s.kind == 1)
    assert len(arr.markers) == 1 + len(model.shapes) + 2 * n_caps
    # fingertip SPHERE r 0.025 at location z 1.26
    tip = ns["shapes//ambf/env/fingertip"][0]
    np.testing.assert_allclose(_pos(tip), [0, 0, 1.26], atol=1e-12)
    assert tip.scale.x == pytest.approx(0.05)

    # self-contact pose: contact namespaces and red shapes appear, all finite
    t = 0.5 * sum(PHASES["self_contact"])
    pos = demo_joint_positions(t)
    model.set_joint_positions(data, list(pos), list(pos.values()))
    result = model.evaluate(data, report_distance=0.05)
    arr = _decode(build_markers(model, result, None, "world", 1.0))
    assert result.contacts and result.min_distance < 0
    c = result.contacts[0]
    ns = _by_ns(arr)
    assert f"{c.body_1}={c.body_2}" in ns
    assert len(arr.markers) == 1 + len(model.shapes) + 2 * n_caps + 2 * len(result.contacts)
    red = [m for m in arr.markers[1:] if m.ns.startswith("shapes/") and m.color.g == 0.0]
    assert {m.ns for m in red} >= {f"shapes/{c.body_1}", f"shapes/{c.body_2}"}
    _assert_no_nan(arr)


def test_contacts_that_come_and_go_keep_their_own_markers():
    """Each cycle's array carries that cycle's contacts, whatever the builder built before (its
    layouts are kept per contact set: a set seen again reuses its layout with new numbers)."""
    world, labels = _scene()
    b = MarkerBuilder.from_world_shapes(world, labels, arrow_length=0.05)

    def contact(b1, b2, p1, d=-0.001):
        p1 = np.asarray(p1, float)
        return SimpleNamespace(body_1=b1, body_2=b2, distance=d, point_1=p1,
                               point_2=p1 + [0, 0, 0.001], normal=np.array([0, 0, 1.0]))

    cycles = [[contact("/a/x", "/a/y", [0, 0, 1])],
              [contact("/a/x", "/a/z", [1, 0, 0]), contact("/a/x", "/a/y", [0, 1, 0])],
              [],
              [contact("/a/x", "/a/y", [0, 0, 2], d=0.02)],
              # the second cycle's pairs in the other order, at other points: the same layout
              [contact("/a/x", "/a/y", [0, 2, 0]), contact("/a/x", "/a/z", [2, 0, 0])]]
    layouts = []
    for contacts in cycles:
        arr = _decode(_build(b, world, contacts))
        layouts.append(len(b._templates))
        arrows = [m for m in arr.markers if m.type == Marker.ARROW and m.action == Marker.ADD]
        contacts = sorted(contacts, key=lambda c: f"{c.body_1}={c.body_2}")  # drawn by namespace
        assert [m.ns for m in arrows] == [f"{c.body_1}={c.body_2}" for c in contacts]
        for m, c in zip(arrows, contacts):
            np.testing.assert_array_equal([m.points[0].x, m.points[0].y, m.points[0].z], c.point_1)
            assert m.points[1].z == c.point_1[2] + 0.05  # arrow_length along +z
        assert len(arr.markers) == 1 + 8 + 4 + 2 * len(contacts)
    assert layouts == [1, 2, 3, 3, 3]  # sets seen before reuse their layouts
    far = _decode(_build(b, world, cycles[3]))
    assert far.markers[-1].color.g > 0.0  # 2 cm: orange-yellow, no longer the first cycle's red


def _mesh_scene(tmp_path):
    """A mesh read from an STL file at a path with a space (scale 0.5, turned about z and moved)
    and a mesh of arrays (two triangles of a square), each with a pair."""
    from ambf_collision.geometry.shapes import shape_from_json
    tri = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
    faces = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]]
    path = tmp_path / "tet mesh.stl"
    path.write_text("solid t\n" + "".join(
        "facet normal 0 0 0\nouter loop\n" + "".join(f"vertex {x} {y} {z}\n" for x, y, z in tri[f])
        + "endloop\nendfacet\n" for f in faces) + "endsolid t\n")
    q = [0, 0, math.sin(0.25), math.cos(0.25)]
    from_file = shape_from_json({"mesh": {"file": str(path), "scale": 0.5,
                                          "position": [1, 2, 3], "orientation": q}})
    sheet = shape_from_json({"mesh": {"vertices": [[0, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0]],
                                      "triangles": [[0, 1, 2], [0, 2, 3]]}})
    shapes = [from_file, sheet, Sphere([0, 0, 5], 0.1)]
    return shapes, WorldShapes.from_shapes(shapes), path


def test_mesh_from_a_file_is_a_mesh_resource_at_its_pose_and_scale(tmp_path):
    """A MESH shape read from a file: MESH_RESOURCE, ``file://`` + the absolute path (the space
    percent-encoded), scale 0.5 on all three axes, the shape's pose, coloured by its pair
    distance like any shape (red in contact); a mesh of arrays: TRIANGLE_LIST of its two
    triangles at scale 1, grey when in no pair."""
    shapes, world, path = _mesh_scene(tmp_path)
    b = MarkerBuilder.from_world_shapes(world, ["organ", "sheet", "ball"], pairs=[[0, 2]],
                                        shapes=shapes)
    arr = _decode(b.build(world, [-0.01]))
    ns = _by_ns(arr)
    m = ns["shapes/organ"][0]
    assert m.type == Marker.MESH_RESOURCE
    assert m.mesh_resource == "file://" + str(path.resolve()).replace(" ", "%20")
    assert m.mesh_resource.startswith("file:///")
    np.testing.assert_allclose(_scale(m), [0.5, 0.5, 0.5])
    np.testing.assert_allclose(_pos(m), [1, 2, 3])
    assert _same_rotation(_quat(m), [0, 0, math.sin(0.25), math.cos(0.25)])
    assert (m.color.r, m.color.g, m.color.b) == pytest.approx(RED)
    assert not m.mesh_use_embedded_materials       # the marker's colour, not the file's
    s = ns["shapes/sheet"][0]
    assert s.type == Marker.TRIANGLE_LIST
    np.testing.assert_allclose(_scale(s), [1, 1, 1])
    tris = np.array([[p.x, p.y, p.z] for p in s.points]).reshape(-1, 3, 3)
    assert len(tris) == 2
    area = 0.5 * np.linalg.norm(np.cross(tris[:, 1] - tris[:, 0], tris[:, 2] - tris[:, 0]), axis=1)
    assert area.sum() == pytest.approx(1.0)        # the unit square, once
    assert np.all(np.isin(tris.reshape(-1, 3), [0.0, 1.0]))
    assert (s.color.r, s.color.g, s.color.b) == pytest.approx(GREY)
    _assert_no_nan(arr)


def test_mesh_resource_follows_its_body_and_without_shape_objects_draws_triangles(tmp_path):
    """The pose of a mesh resource marker is the shape's world pose of each cycle (moved by a
    body pose); without the shape objects (no file known) the mesh is a TRIANGLE_LIST of its
    4 faces in its own frame (the file's vertices scaled by 0.5)."""
    from ambf_collision.geometry.world_shapes import LinkShapes
    from ambf_collision.geometry.transforms import axis_angle_to_matrix
    shapes, _, _ = _mesh_scene(tmp_path)
    link = LinkShapes(shapes, np.array([0, 0, 0]))
    R, t = axis_angle_to_matrix([1, 1, 0], 0.7), np.array([0.5, -0.5, 0.2])
    world = link.to_world(R[None], t[None])
    b = MarkerBuilder.from_world_shapes(world, ["organ", "sheet", "ball"], shapes=shapes)
    m = _decode(b.build(world)).markers[1]
    assert m.type == Marker.MESH_RESOURCE
    np.testing.assert_allclose(_pos(m), R @ [1, 2, 3] + t, atol=1e-12)
    R_shape = R @ quat_to_matrix([0, 0, math.sin(0.25), math.cos(0.25)])
    np.testing.assert_allclose(quat_to_matrix(_quat(m)), R_shape, atol=1e-12)
    plain = _decode(MarkerBuilder.from_world_shapes(world, ["organ", "sheet", "ball"]).build(world))
    m = plain.markers[1]
    assert m.type == Marker.TRIANGLE_LIST
    pts = np.array([[p.x, p.y, p.z] for p in m.points])
    assert len(pts) == 12 and np.all(np.isin(pts, [0.0, 0.5]))


def test_psm_links_are_mesh_resources_of_their_adf_files():
    """AMBF's dVRK PSM (concave meshes): through ``build_markers``, each link is one
    MESH_RESOURCE whose URI names an existing file, the body's ``mesh`` in the file's ``low
    resolution path``, at the body's ``scale`` (a file split into solids: drawn once)."""
    import warnings
    from urllib.parse import unquote, urlparse

    import yaml
    from ambf_collision.model import Model
    psm = (REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies"
           / "robots" / "blender-psm.yaml")
    doc = yaml.safe_load(psm.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = Model.from_files([psm])
    result = model.evaluate(model.create_data())
    arr = _decode(build_markers(model, result, None, "world", 0.0))
    low = (psm.parent / doc["low resolution path"]).resolve()
    meshes = {m.ns: m for m in arr.markers
              if m.type == Marker.MESH_RESOURCE and m.action == Marker.ADD}
    assert len(meshes) == len(doc["bodies"]) == 14
    for key in doc["bodies"]:
        body = doc[key]
        m = meshes["shapes/" + model.body_names[model.body_index(body["name"])]]
        uri = urlparse(m.mesh_resource)
        assert uri.scheme == "file"
        assert Path(unquote(uri.path)) == low / body["mesh"]
        assert Path(unquote(uri.path)).is_file()
        np.testing.assert_allclose(_scale(m), [body.get("scale", 1.0)] * 3)
    _assert_no_nan(arr)


def test_parts_of_one_file_are_drawn_once_coloured_by_their_closest_part(tmp_path):
    """Two MESH shapes of one body from one file (the solids of a file split in parts): the
    first part's marker draws the file, red by the second part's contact; the second's marker is
    a DELETE. The same file on another body is drawn by that body's own marker (grey: no
    pair)."""
    from ambf_collision.geometry.shapes import shape_from_json
    shapes, _, path = _mesh_scene(tmp_path)
    shapes = [shape_from_json({"mesh": {"file": str(path), "scale": 0.5}}) for _ in range(3)]
    shapes.append(Sphere([0, 0, 5], 0.1))
    world = WorldShapes.from_shapes(shapes)
    b = MarkerBuilder.from_world_shapes(world, ["organ", "organ", "other", "ball"],
                                        pairs=[[1, 3]], shapes=shapes)
    ns = _by_ns(_decode(b.build(world, [-0.01])))
    first, second = ns["shapes/organ"]
    assert first.type == Marker.MESH_RESOURCE and first.action == Marker.ADD
    assert (first.color.r, first.color.g, first.color.b) == pytest.approx(RED)
    assert second.action == Marker.DELETE and (first.id, second.id) == (0, 1)
    other = ns["shapes/other"][0]
    assert other.type == Marker.MESH_RESOURCE and other.action == Marker.ADD
    assert (other.color.r, other.color.g, other.color.b) == pytest.approx(GREY)
