#!/usr/bin/env python3
"""Draw the dVRK patient cart of config/dvrk_cart.yaml with its contacts (docs/dvrk_cart.png).

    python3 examples/plot_dvrk_cart.py [--ambf-models DIR] [--out docs/dvrk_cart.png]

The cart as dvrk.launch.py monitors it (the same parameters: ambf_collision/ros/dvrk_cart.py;
the meshes as hulls, as config/dvrk.yaml sets), placed by the cart file's static placements,
each arm at the CRTK joint values below: PSM1 pitched and yawed towards PSM3, so that their
instruments' insertion stages come within the report distance. No ROS needed. ``--ambf-models``: AMBF's robots
folder (default $AMBF_MODELS, else the copies of AMBF's PSM and ECM under test/).
"""

from __future__ import annotations

import argparse
import math
import os
import warnings
from pathlib import Path

import numpy as np

from ambf_collision.demo.scene_render import render_scene_png
from ambf_collision.model import Model
from ambf_collision.ros.dvrk_cart import load_cart, monitor_parameters

REPO = Path(__file__).resolve().parents[1]
TEST_ROBOTS = REPO / "test" / "model" / "adf_models" / "ambf" / "descriptions" / "multi-bodies" / "robots"
# CRTK joint values (rad, m) per arm, in the cart file's alias order
POSE = {"PSM1": [0.2, 0.25, 0.10, 0.0, 0.3, 0.2], "PSM2": [0.0, 0.0, 0.12, 0.4, -0.2, 0.0],
        "PSM3": [0.3, 0.2, 0.08, 0.0, 0.0, 0.0], "ECM": [0.0, 0.0, 0.0, 0.0]}


def cart_model(ambf_models: str, report_distance: float):
    """The whole cart (model, data, result) at :data:`POSE`."""
    cart = load_cart(REPO / "config" / "dvrk_cart.yaml")
    params = monitor_parameters(cart, list(cart.arms), ambf_models)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # AMBF's open meshes (named by the node's load warnings)
        model = Model.from_files(params["adf_files"], namespaces=params["adf_namespaces"],
                                 couplings=params["couplings"], hull_meshes=["*"])
    names, values = [], []
    for arm in cart.arms.values():
        aliases = [a.split("=", 1)[1] for a in cart.kinds[arm.kind]["aliases"]]
        names += [f"/{arm.name}/{joint.replace(' ', '')}" for joint in aliases]
        values += POSE[arm.name]
    poses = []
    for arm in cart.arms.values():
        _, xyz, rpy = arm.placement
        c, s = math.cos(rpy[2]), math.sin(rpy[2])
        poses.append((np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.array(xyz)))
    data = model.create_data()
    model.set_joint_positions(data, names, values)
    return model, data, model.evaluate(data, root_poses=poses, report_distance=report_distance)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ambf-models", default=os.environ.get("AMBF_MODELS", str(TEST_ROBOTS)))
    parser.add_argument("--out", default=str(REPO / "docs" / "dvrk_cart.png"))
    parser.add_argument("--report-distance", type=float, default=0.05)
    args = parser.parse_args(argv)
    model, _, result = cart_model(args.ambf_models, args.report_distance)
    render_scene_png(args.out, model, result, report_distance=args.report_distance,
                     title=f"dVRK cart: {len(model.pairs)} pairs, {len(result.contacts)} contacts "
                           f"within {args.report_distance * 100:g} cm, closest "
                           f"{result.min_distance * 1000:.1f} mm",
                     zoom_size=0.15, elev=35.0, azim=-120.0)
    for c in result.contacts[:5]:
        print(f"{c.body_1} - {c.body_2}: {c.distance * 1000:.1f} mm")
    print(args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
