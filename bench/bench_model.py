"""Time ``Model.evaluate`` on AMBF example worlds, against coal called per pair from Python.

Worlds: the KUKA arm with the floor (AMBF filtering: arm-vs-floor only), the KUKA arm with
every self pair checked (``--check '*:*'``) plus the floor, and all eight example files in one
world. For each: pairs checked, time per ``evaluate`` (joint positions changed every cycle),
the same with ``near_only=True`` (what the node runs: far pairs bounded, not computed), the
share of the kinematics, and the reference: the same body poses, then ``coal.distance``
called once per pair from Python (coal geometries built once). Ratio = reference / evaluate.

Run: ``.venv/bin/python bench/bench_model.py``
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ambf_collision.geometry import shapes as S  # noqa: E402
from ambf_collision.model.filtering import Overrides  # noqa: E402
from ambf_collision.model import Model  # noqa: E402
from ambf_collision.geometry.transforms import quat_to_matrix  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
EX = REPO.parent / "shared" / "adf-examples"
ALL = ["ScrewDriverEnv_env.yaml", "blender-kuka-tip-sphere.yaml", "blender-toy-car.yaml",
       "checkered_floor.yaml", "peg_and_base.yaml", "pr2 gripper.yaml", "puzzle2.yaml",
       "gripper4/gripper.yaml"]


def _coal_local(coal, s):
    """(geometry, R_local, t_local) of a body-frame shape; None for planes."""
    if s.kind == S.SPHERE:
        return coal.Sphere(s.radius), np.eye(3), s.center
    if s.kind == S.CAPSULE:
        u = s.b - s.a
        L = float(np.linalg.norm(u))
        z = u / L if L > 0 else np.array([0.0, 0.0, 1.0])
        x = np.cross(z, [1.0, 0, 0]) if abs(z[0]) < 0.9 else np.cross(z, [0, 1.0, 0])
        x /= np.linalg.norm(x)
        return coal.Capsule(s.radius, L), np.column_stack([x, np.cross(z, x), z]), 0.5 * (s.a + s.b)
    if s.kind == S.PLANE:
        return coal.Halfspace(s.normal, s.offset), np.eye(3), np.zeros(3)
    R = quat_to_matrix(s.orientation)
    if s.kind == S.BOX:
        return coal.Box(*s.size), R, s.position
    if s.kind == S.CYLINDER:
        return coal.Cylinder(s.radius, s.height), R, s.position
    if s.kind == S.CONE:
        return coal.Cone(s.radius, s.height), R, s.position
    if s.kind == S.CONVEX:
        raise NotImplementedError("convex")
    raise ValueError(s.kind)


def reference(model, body_R, body_t, geoms):
    import coal

    req, res = coal.DistanceRequest(), coal.DistanceResult()
    req.enable_signed_distance = True
    out = np.empty(len(model.pairs))
    for k, (s1, s2) in enumerate(model.pairs):
        b1, b2 = model.shape_body[s1], model.shape_body[s2]
        g1, R1, t1 = geoms[s1]
        g2, R2, t2 = geoms[s2]
        T1 = coal.Transform3s(body_R[b1] @ R1, body_R[b1] @ t1 + body_t[b1])
        T2 = coal.Transform3s(body_R[b2] @ R2, body_R[b2] @ t2 + body_t[b2])
        res.clear()
        out[k] = coal.distance(g1, T1, g2, T2, req, res)
    return out


def bench(label, files, overrides=None, cycles=200):
    import coal

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = Model.from_files([EX / f for f in files], overrides=overrides)
    d = m.create_data()
    rng = np.random.default_rng(0)
    qs = rng.uniform(-0.3, 0.3, (cycles, len(m.joint_names)))
    names = m.joint_names
    m.evaluate(d)  # warm-up (and the kinematics' own kernel, timed alone below)
    m.kinematics.forward(d.kinematics)
    t0 = time.perf_counter()
    for q in qs:
        m.set_joint_positions(d, names, q)
        r = m.evaluate(d)
    t_eval = (time.perf_counter() - t0) / cycles
    t0 = time.perf_counter()
    for q in qs:
        m.set_joint_positions(d, names, q)
        m.evaluate(d, near_only=True)
    t_near = (time.perf_counter() - t0) / cycles
    t0 = time.perf_counter()
    for q in qs:
        d.q[...] = q
        m.kinematics.forward(d.kinematics)
    t_kin = (time.perf_counter() - t0) / cycles
    geoms = [_coal_local(coal, s) for s in m.shapes]
    ncyc = max(5, cycles // 10)
    t0 = time.perf_counter()
    for q in qs[:ncyc]:
        d.q[...] = q
        m.kinematics.forward(d.kinematics)
        ref = reference(m, d.body_R, d.body_t, geoms)
    t_ref = (time.perf_counter() - t0) / ncyc
    m.set_joint_positions(d, names, qs[ncyc - 1])
    r = m.evaluate(d)
    planes = np.array([m.shapes[a].kind == S.PLANE or m.shapes[b].kind == S.PLANE for a, b in m.pairs], bool)
    err = np.max(np.abs(ref - r.distances)[~planes]) if (~planes).any() else 0.0
    print(f"{label:<38} pairs {len(m.pairs):5d}  evaluate {t_eval * 1e3:8.3f} ms  "
          f"near_only {t_near * 1e3:8.3f} ms  "
          f"(kinematics {t_kin * 1e6:6.1f} us)  coal per pair {t_ref * 1e3:8.3f} ms  "
          f"ratio {t_ref / t_eval:6.2f}x  max |diff| (non-plane) {err:.1e} m")


def main():
    if not EX.is_dir():
        print(f"AMBF examples absent: {EX}")
        return 0
    bench("kuka + floor (AMBF filtering)", ["blender-kuka-tip-sphere.yaml", "checkered_floor.yaml"])
    bench("kuka all self pairs + floor", ["blender-kuka-tip-sphere.yaml", "checkered_floor.yaml"],
          Overrides(check=[("*", "*")]))
    bench("all 8 example files", ALL, cycles=40)
    bench("demo arm (examples/demo, bundled)", [str(REPO / "examples" / "demo" / "demo_arm.yaml")],
          cycles=400)
    return 0


if __name__ == "__main__":
    sys.exit(main())
