"""AMBF's dVRK arms (PSM, ECM, MTM) posed over their spanning trees, when ``AMBF_MODELS`` names a
copy of AMBF's ``ambf_models/descriptions/multi-bodies`` folder (skipped otherwise; locally
``/work/ambf/ambf_models/descriptions/multi-bodies``).

Oracles: the files' own ``location``s (read here with plain PyYAML, R = Rz(y) Ry(p) Rx(r) written
out here) at q = 0; the loop residuals, 0 for a linkage whose passive joints are right; the joints
AMBF's own dVRK controllers set (ambf_controller/dvrk/scripts/test*IK.py) as the actuated ones.
"""

from __future__ import annotations

import math
import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from conftest import REPO

from ambf_collision.model.adf import load_adf_files
from ambf_collision.model.kinematics import Kinematics

AMBF_MODELS = os.environ.get("AMBF_MODELS", "")
ROBOTS = Path(AMBF_MODELS) / "robots" if AMBF_MODELS else None
pytestmark = pytest.mark.skipif(not (ROBOTS and ROBOTS.is_dir()),
                                reason="AMBF_MODELS is not set (path to AMBF's ambf_models/descriptions/multi-bodies)")
COUPLINGS = REPO / "config" / "couplings"

# The joints AMBF's own controllers command (set_joint_pos in testpsmIK.py, testecmIK.py,
# testmtmIK.py), AMBF's names.
ACTUATED = {
    "psm": ["baselink-yawlink", "yawlink-pitchbacklink", "pitchendlink-maininsertionlink",
            "maininsertionlink-toolrolllink", "toolrolllink-toolpitchlink",
            "toolpitchlink-toolgripper1link", "toolpitchlink-toolgripper2link"],
    "ecm": ["baselink-yawlink", "yawlink-pitchbacklink", "pitchendlink-maininsertionlink",
            "maininsertionlink-toollink"],
    "mtm": ["TopPanel-OutPitchShoulder", "OutPitchShoulder-ArmParallel", "ArmParallel-BottomArm",
            "BottomArm-WristPlatform", "WristPlatform-WristPitch", "WristPitch-WristYaw",
            "WristYaw-WristRoll"],
}
PITCH = {"psm": "yawlink-pitchbacklink", "ecm": "yawlink-pitchbacklink", "mtm": "ArmParallel-BottomArm"}
# Largest loop residual (m, rad) over the pitch range with the shipped couplings, per closure
# joint; what AMBF's rounded geometry allows (config/couplings/*.yaml say why).
BOUNDS = {
    "psm": {"pitchfrontlink-pitchbottomlink": (1e-4, 5e-4), "pitchtoplink-pitchendlink": (5e-4, 1e-6),
            "yawlink-pitchendlink": (4e-4, 0.0)},
    "ecm": {"pitchfrontlink-pitchbottomlink": (4e-4, 1e-6), "pitchtoplink-pitchendlink": (6e-4, 1e-6),
            "baselink-pitchendlink": (2.2e-3, 0.0)},
    "mtm": {"ArmFront-BottomArm": (8.5e-4, 4.5e-3)},
}


def load(arm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return load_adf_files([ROBOTS / f"blender-{arm}.yaml"])


def rpy(o):
    r, p, y = o["r"], o["p"], o["y"]
    Rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    Ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    Rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    return Rz @ Ry @ Rx


def mismatch_to_locations(arm, kin, buf):
    """{body plain name: (position error m, angle error rad)} against the file's locations."""
    doc = yaml.safe_load((ROBOTS / f"blender-{arm}.yaml").read_text())
    out = {}
    for ident in doc["bodies"]:
        loc = doc[ident]["location"]
        name = doc[ident]["name"].replace(" ", "")
        b = [i for i, n in enumerate(kin.body_plain_names) if n == name][0]
        p = loc["position"]
        dt = np.linalg.norm(buf.body_t[b] - [p["x"], p["y"], p["z"]])
        c = (np.trace(buf.body_R[b].T @ rpy(loc["orientation"])) - 1.0) / 2.0
        out[name] = (dt, math.acos(max(-1.0, min(1.0, c))))
    return out


def forward(kin, positions=None):
    buf = kin.new_buffers(np.eye(3)[None], np.zeros((1, 3)))
    for name, q in (positions or {}).items():
        buf.q[kin.joint_index(name)] = q
    kin.forward(buf)
    return buf


def kinematics(arm, couplings=None):
    kin = Kinematics(load(arm), couplings)
    kin.body_plain_names = [b.plain_name for b in load(arm).bodies]
    return kin


@pytest.mark.parametrize("arm", ["psm", "ecm", "mtm"])
def test_zero_pose_lands_on_the_locations_where_the_file_is_consistent(arm):
    """q = 0 without couplings: every body within 1 mm / 1 deg of its location, except the ECM's
    pitch end link and the links it carries, 0.0075 rad (0.43 deg) off about the pitch end hinge:
    the file writes that link turned by 0.0075 rad while the joint has no offset (the ECM
    couplings carry that offset). Loop residuals at q = 0: hinges under 0.4 mm (the most, 0.32 mm,
    the ECM's top-end hinge on that link), the ECM's p2p 2.3 mm."""
    kin = kinematics(arm)
    buf = forward(kin)
    off = {n: e for n, e in mismatch_to_locations(arm, kin, buf).items()
           if e[0] > 1e-3 or e[1] > math.radians(1.0)}
    assert off == ({"toollink": pytest.approx((1.06e-3, 0.0075), abs=2e-5)} if arm == "ecm" else {})
    if arm == "ecm":
        errors = mismatch_to_locations(arm, kin, buf)
        for name in ("pitchendlink", "maininsertionlink", "toollink"):
            assert errors[name][1] == pytest.approx(0.0075, abs=2e-5)
    residual = dict(zip(kin.closure_joint_names, buf.closure_residuals.tolist()))
    for name, (p, a) in residual.items():
        assert p < (2.4e-3 if name.endswith("baselink-pitchendlink") else 4e-4) and a < 5e-4, name


@pytest.mark.parametrize("arm", ["psm", "ecm", "mtm"])
def test_couplings_leave_the_actuated_joints_and_close_the_loops(arm):
    """With config/couplings/blender-<arm>.yaml the joints a state must give are exactly the ones
    AMBF's controllers set; at q = 0 every body is on its location (1 mm / 1 deg); with only the
    pitch joint set over its limits the loop residuals stay within what the file's rounding
    allows (BOUNDS); a coupling with the wrong sign opens a loop by centimetres."""
    kin = kinematics(arm, COUPLINGS / f"blender-{arm}.yaml")
    needed = sorted(kin.joint_plain_names[k] for k in np.flatnonzero(kin.needs_position))
    assert needed == sorted(ACTUATED[arm])
    buf = forward(kin)
    assert all(e[0] <= 1e-3 and e[1] <= math.radians(1.0) for e in mismatch_to_locations(arm, kin, buf).values())
    pitch = kin.joint_index(PITCH[arm])
    lo, hi = load(arm).joints[pitch].limits
    worst = np.zeros((len(kin.closure_joints), 2))
    for q in np.linspace(lo, hi, 25):
        worst = np.maximum(worst, forward(kin, {PITCH[arm]: q}).closure_residuals)
    for name, (p, a) in zip(kin.closure_joint_names, worst):
        bound = BOUNDS[arm][name.rsplit("/", 1)[1]]
        assert p <= bound[0] and a <= bound[1], (name, p, a)
    first = kin.couplings[0]
    flipped = [f"{c.joint} = {-c.multiplier if c is first else c.multiplier!r} * {c.source} + {c.offset!r}"
               for c in kin.couplings]
    bad = Kinematics(load(arm), flipped)
    assert forward(bad, {PITCH[arm]: hi}).closure_residuals[:, 0].max() > 0.01
