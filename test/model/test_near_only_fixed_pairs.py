"""near_only and pairs of two shapes fixed in the world (issue 36 §3): such a pair is computed once
and then kept, not bounded at every evaluation; its row has the bits of every pair computed."""

import numpy as np

from conftest import DEMO_ARM

from ambf_collision.model import Model


def test_a_pair_fixed_in_the_world_is_exact_and_kept_under_near_only():
    model = Model.from_files([DEMO_ARM])
    names = [model.body_names[b] for b in model.pair_bodies.ravel()]
    fixed = [p for p in range(len(model.pairs))
             if names[2 * p].endswith("/base") and names[2 * p + 1].endswith("/table")]
    assert len(fixed) == 1 and model.pair_distance.pair_table["boundable"][fixed[0]]  # a GJK pair
    p = fixed[0]
    near, every = model.create_data(), model.create_data()
    rng = np.random.default_rng(36)
    for k, q in enumerate(rng.uniform(-1.0, 1.0, size=(4, len(model.joint_names)))):
        for data, near_only in ((near, True), (every, False)):
            every.exact[:] = False   # every pair computed
            model.set_joint_positions(data, model.joint_names, q)
            model.evaluate(data, near_only=near_only)
        # the first evaluation moves every shape: the pair is bounded (far from everything); from
        # the second on its shapes did not move: computed once, then kept
        assert bool(near.exact[p]) == (k > 0), k
        if k > 0:
            assert near.results[p].tobytes() == every.results[p].tobytes()
            assert near.shape_moved[model.pairs[p]].tolist() == [0, 0]
        assert near.distance[p] <= every.distance[p]   # a bound or the distance itself
