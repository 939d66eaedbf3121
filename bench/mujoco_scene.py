"""The same scene in MuJoCo: an MJCF model built from a compiled ``Model`` (bench peer only).

Bodies become MuJoCo bodies in the spanning tree of the model's kinematics, each placed at its pose
relative to its tree parent at q = 0; revolute joints become hinges and prismatic joints slides,
located at the parent pivot (the AMBF joint relation, rewritten in the child frame); every other
joint is rigid. Shapes become geoms in their body frame: sphere, capsule (``fromto``), box, cylinder,
plane, and convex hulls as meshes (MuJoCo takes the convex hull of a mesh for collisions). Cones
have no MuJoCo primitive; a scene with a cone is refused.

``MujocoScene(model)`` compiles the MJCF once; ``set_q(q)`` writes the model's joint positions
(model joint order) into ``qpos``; ``distances(out, fromto)`` runs ``mj_kinematics`` and one
``mj_geomDistance`` per checked pair, as a user calling MuJoCo from Python would.

Used by ``bench/bench_vs_mujoco.py``; ``mujoco`` is a bench dependency only.
"""

from __future__ import annotations

import math

import numpy as np

from ambf_collision.geometry import shapes as S
from ambf_collision.geometry.transforms import matrix_to_quat

# mj_geomDistance looks for the distance up to this bound (m): far above any scene here.
DISTMAX = 1e3


def _wxyz(R) -> str:
    x, y, z, w = (float(c) for c in matrix_to_quat(np.asarray(R, float)))
    return f"{w!r} {x!r} {y!r} {z!r}"


def _vec(v) -> str:
    return " ".join(repr(float(c)) for c in v)


def _geom_xml(name: str, shape, meshes: list) -> str:
    """MJCF geom of a body-frame shape (exact sizes and poses, no margins)."""
    common = f'name="{name}" contype="0" conaffinity="0"'
    if shape.kind == S.SPHERE:
        return f'<geom {common} type="sphere" size="{float(shape.radius)!r}" pos="{_vec(shape.center)}"/>'
    if shape.kind == S.CAPSULE:
        a, b = np.asarray(shape.a, float), np.asarray(shape.b, float)
        if np.linalg.norm(b - a) == 0.0:
            return f'<geom {common} type="sphere" size="{float(shape.radius)!r}" pos="{_vec(a)}"/>'
        return f'<geom {common} type="capsule" size="{float(shape.radius)!r}" fromto="{_vec(a)} {_vec(b)}"/>'
    if shape.kind == S.PLANE:
        n = np.asarray(shape.normal, float)
        z = np.array([0.0, 0.0, 1.0])
        axis = np.cross(z, n)
        s, c = np.linalg.norm(axis), float(z @ n)
        if s < 1e-15:
            R = np.eye(3) if c > 0 else np.diag([1.0, -1.0, -1.0])
        else:
            k = axis / s
            K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
            R = np.eye(3) + s * K + (1 - c) * K @ K
        return (f'<geom {common} type="plane" size="0 0 1" pos="{_vec(float(shape.offset) * n)}" '
                f'quat="{_wxyz(R)}"/>')
    pose = f'pos="{_vec(shape.position)}" quat="{_wxyz(shape.rotation)}"'
    if shape.kind == S.BOX:
        return f'<geom {common} type="box" size="{_vec(0.5 * np.asarray(shape.size))}" {pose}/>'
    if shape.kind == S.CYLINDER:
        return f'<geom {common} type="cylinder" size="{float(shape.radius)!r} {0.5 * float(shape.height)!r}" {pose}/>'
    if shape.kind == S.CONVEX:
        mesh = f"hull{len(meshes)}"
        meshes.append(f'<mesh name="{mesh}" vertex="{_vec(np.asarray(shape.vertices).ravel())}"/>')
        return f'<geom {common} type="mesh" mesh="{mesh}" {pose}/>'
    raise ValueError(f"MuJoCo has no {S.KIND_NAMES[shape.kind]} primitive")


def model_to_mjcf(model) -> tuple[str, list]:
    """``(MJCF text, joint map)``: the joint map lists, per MuJoCo joint, the model joint index."""
    data = model.create_data()
    model.evaluate(data)  # q = 0: body poses in world
    R0, t0 = data.body_R.copy(), data.body_t.copy()
    parent_joint = _tree_parent_joints(model)
    joints = model.world.joints
    children = {b: [] for b in range(len(model.body_names))}
    roots = []
    for b, k in enumerate(parent_joint):
        (roots if k < 0 else children[joints[k].parent]).append(b)
    shapes_of = {b: [] for b in range(len(model.body_names))}
    for s, b in enumerate(model.shape_body):
        shapes_of[int(b)].append(s)
    meshes: list = []
    joint_map: list = []

    def body_xml(b, parent) -> str:
        if parent < 0:
            Rr, tr = R0[b], t0[b]
        else:
            Rr, tr = R0[parent].T @ R0[b], R0[parent].T @ (t0[b] - t0[parent])
        out = [f'<body name="b{b}" pos="{_vec(tr)}" quat="{_wxyz(Rr)}">']
        k = parent_joint[b]
        if k >= 0 and joints[k].type in ("revolute", "prismatic"):
            j = joints[k]
            p = model.world.bodies[j.parent]
            pivot_world = R0[parent] @ (p.scale * np.asarray(j.parent_pivot)) + t0[parent]
            axis_world = R0[parent] @ (np.asarray(j.parent_axis) / np.linalg.norm(j.parent_axis))
            pos = R0[b].T @ (pivot_world - t0[b])
            axis = R0[b].T @ axis_world
            kind = "hinge" if j.type == "revolute" else "slide"
            out.append(f'<joint name="j{k}" type="{kind}" pos="{_vec(pos)}" axis="{_vec(axis)}" '
                       f'limited="false"/>')
            joint_map.append(k)
        for s in shapes_of[b]:
            out.append(_geom_xml(f"g{s}", model.shapes[s], meshes))
        out += [body_xml(c, b) for c in children[b]]
        out.append("</body>")
        return "\n".join(out)

    bodies = "\n".join(body_xml(b, -1) for b in roots)
    xml = (f'<mujoco><option><flag contact="disable"/></option>'
           f'<asset>{"".join(meshes)}</asset><worldbody>{bodies}</worldbody></mujoco>')
    return xml, joint_map


def _tree_parent_joints(model) -> list:
    """Per body the index of its parent joint in the model's spanning tree, -1 for a root."""
    return [int(k) for k in model.kinematics.tree_parent_joint]


class MujocoScene:
    """A MuJoCo model and data of ``model``'s scene, and its checked pairs as geom ids."""

    def __init__(self, model):
        import mujoco

        self.mujoco = mujoco
        xml, joint_map = model_to_mjcf(model)
        self.m = mujoco.MjModel.from_xml_string(xml)
        self.d = mujoco.MjData(self.m)
        self.qpos_adr = np.array([self.m.jnt_qposadr[self.m.joint(f"j{k}").id] for k in joint_map],
                                 dtype=np.intp)
        self.joint_index = np.array(joint_map, dtype=np.intp)
        self.pairs = [(self.m.geom(f"g{a}").id, self.m.geom(f"g{b}").id)
                      for a, b in np.asarray(model.pairs).tolist()]

    def set_q(self, q) -> None:
        """Model joint positions (model joint order, rad / m) into ``qpos``."""
        self.d.qpos[self.qpos_adr] = np.asarray(q, float)[self.joint_index]

    def distances(self, out, fromto) -> None:
        """``mj_kinematics``, then one ``mj_geomDistance`` per pair into ``out (P,)``; the last
        pair's witness points are left in ``fromto (6,)``."""
        mj, m, d = self.mujoco, self.m, self.d
        mj.mj_kinematics(m, d)
        for k, (g1, g2) in enumerate(self.pairs):
            out[k] = mj.mj_geomDistance(m, d, g1, g2, DISTMAX, fromto)

    def witnesses(self, k: int):
        """``(distance, point_1, point_2)`` of pair ``k`` at the current kinematics."""
        fromto = np.zeros(6)
        g1, g2 = self.pairs[k]
        dist = self.mujoco.mj_geomDistance(self.m, self.d, g1, g2, DISTMAX, fromto)
        return dist, fromto[:3].copy(), fromto[3:].copy()


def tighten(scene: MujocoScene, tolerance: float = 1e-12, iterations: int = 1000) -> None:
    """MuJoCo's convex collider stops at ``opt.ccd_tolerance`` (1e-6 by default): tightened so
    that the comparison measures both at full precision."""
    scene.m.opt.ccd_tolerance = tolerance
    scene.m.opt.ccd_iterations = iterations


__all__ = ["MujocoScene", "model_to_mjcf", "tighten", "DISTMAX", "math"]
