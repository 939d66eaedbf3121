"""bench/coal_peer.py: coal's geometries built once, posed from the model's body poses, give
coal's own answer for the shapes posed one by one (``coal_bridge.solid_pair_distance`` on
``shape.transformed``, an independent pose path) and this project's distances."""

import sys

import numpy as np
import pytest

from conftest import DEMO_ARM, REPO

pytest.importorskip("coal")
sys.path.insert(0, str(REPO / "bench"))

from ambf_collision.geometry.coal_bridge import solid_pair_distance  # noqa: E402
from ambf_collision.model import Model  # noqa: E402
from coal_peer import CoalPeer  # noqa: E402


def test_coal_peer_poses_from_body_poses():
    model = Model.from_files([DEMO_ARM])
    data = model.create_data()
    peer = CoalPeer(model)
    assert len(peer.keep) and len(peer.keep) < len(model.pairs)  # the floor plane's pairs are left out
    out = np.zeros(len(peer.keep))
    rng = np.random.default_rng(5)
    for q in rng.uniform(-1.5, 1.5, size=(4, len(model.joint_names))):
        model.set_joint_positions(data, model.joint_names, q)
        model.evaluate(data, report_distance=np.inf)
        peer.set_poses(data.body_R, data.body_t)
        peer.distances(out)
        posed = [s.transformed(data.body_R[b], data.body_t[b])
                 for s, b in zip(model.shapes, model.shape_body)]
        for k, p in enumerate(peer.keep.tolist()):
            s1, s2 = model.pair_shapes[p]
            assert out[k] == pytest.approx(solid_pair_distance(posed[s1], posed[s2])[0], abs=1e-12)
        np.testing.assert_allclose(out, data.distance[peer.keep], atol=1e-9, rtol=0)
