#!/usr/bin/env python3
"""docs/velocity_damper.png: the demo arm's closest distance over time along its scripted
self-contact approach, with and without the velocity damper of ``examples/velocity_damper.py``.

The library in the loop, no ROS: each 10 ms step evaluates the model at the commanded
positions (as the monitor does), scales the script's velocity with the same
:func:`velocity_damper.damper_scale` and integrates. Same parameters as the example node's
defaults (d_i 0.08 m, d_s 0.01 m, xi 0.3 m/s; contacts reported below 0.1 m).

    python3 examples/plot_velocity_damper.py [OUT.png]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from velocity_damper import damper_scale  # noqa: E402

from ambf_collision.demo.trajectory import JOINT_NAMES, demo_joint_array  # noqa: E402
from ambf_collision.model import Model  # noqa: E402

D_I, D_S, XI, REPORT = 0.08, 0.01, 0.3, 0.1
START, END, DT = 2.0, 5.0, 0.01  # s of the script: free pose, through the self-contact hold


def run(model, damped: bool):
    """``(times (n,), min distance (n,), scale (n,))`` of one run."""
    data = model.create_data()
    q = demo_joint_array(START).copy()
    times, dist, scales = [], [], []
    t = START
    while t < END - 1e-9:
        model.set_joint_positions(data, JOINT_NAMES, q)
        r = model.evaluate(data, report_distance=REPORT)
        step = demo_joint_array(t + DT) - demo_joint_array(t)
        full = np.zeros(len(model.joint_names))
        plain = [n.rsplit("/", 1)[-1] for n in model.joint_names]
        cols = [plain.index(n) for n in JOINT_NAMES]
        full[cols] = step / DT
        s = (damper_scale(r.distances[r.contact_index], r.jacobians, full, D_I, D_S, XI)
             if damped else 1.0)
        times.append(t - START)
        dist.append(r.min_distance)
        scales.append(s)
        q = q + s * step
        t += DT
    return np.array(times), np.array(dist), np.array(scales)


def main(out=None) -> int:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out = Path(out or HERE.parent / "docs" / "velocity_damper.png")
    model = Model.from_files([str(HERE / "demo" / "demo_arm.yaml")])
    t0, d0, _ = run(model, damped=False)
    t1, d1, s1 = run(model, damped=True)
    fig, (ax, bx) = plt.subplots(2, 1, figsize=(7, 5), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1]})
    ax.plot(t0, 1e3 * d0, label="without damper (script followed)", color="tab:red")
    ax.plot(t1, 1e3 * d1, label="with velocity damper", color="tab:blue")
    ax.axhline(1e3 * D_S, ls="--", color="k", lw=0.8, label=f"d_s = {1e3 * D_S:g} mm")
    ax.axhline(1e3 * D_I, ls=":", color="grey", lw=0.8, label=f"d_i = {1e3 * D_I:g} mm")
    ax.axhline(0.0, color="k", lw=0.5)
    ax.set_ylabel("closest distance (mm)")
    ax.set_title("demo arm, fingertip folding onto the upper arm (script 2-5 s)")
    ax.legend(loc="upper right", fontsize=8)
    bx.plot(t1, s1, color="tab:blue")
    bx.set_ylabel("scale s")
    bx.set_xlabel("time (s)")
    fig.tight_layout()
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)
    print(f"{out}: min distance without {1e3 * d0.min():.2f} mm, with {1e3 * d1.min():.2f} mm "
          f"(d_s {1e3 * D_S:g} mm)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(*sys.argv[1:2]))
