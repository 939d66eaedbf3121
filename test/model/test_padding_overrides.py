"""Per-body padding (Minkowski ball, glob patterns) and pair overrides at run time
(``Model.with_overrides``). Oracles: the unpadded model's distances and witnesses shifted by
the paddings given here; a Model compiled from the files with the same overrides."""

import math

import numpy as np
import pytest
from conftest import DEMO_ARM

from ambf_collision.model import Model
from ambf_collision.model.filtering import Overrides

PADDING = {"*": 0.001, "fingertip": 0.02, "*arm": 0.005}   # later entries win


def _evaluate(model, q, **kw):
    data = model.create_data()
    model.set_joint_positions(data, model.joint_names, q)
    return data, model.evaluate(data, **kw)


def _expected_padding(model):
    out = []
    for name in model.body_plain_names:
        pad = 0.001
        if name == "fingertip":
            pad = 0.02
        elif name.endswith("arm"):
            pad = 0.005
        out.append(pad)
    return np.array(out)


@pytest.mark.parametrize("seed", [0, 1])
def test_padding_lowers_distances_and_moves_witnesses_along_the_normal(seed):
    plain = Model.from_files([DEMO_ARM])
    padded = Model.from_files([DEMO_ARM], padding=PADDING)
    pad = _expected_padding(plain)
    assert np.array_equal(padded.body_padding, pad) and np.array_equal(plain.body_padding, 0 * pad)
    q = np.random.default_rng(seed).uniform(-1.0, 1.0, len(plain.joint_names))
    d0, _ = _evaluate(plain, q)
    d1, _ = _evaluate(padded, q)
    p1, p2 = pad[plain.pair_bodies[:, 0]], pad[plain.pair_bodies[:, 1]]
    np.testing.assert_allclose(d1.distance, d0.distance - p1 - p2, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(d1.normal, d0.normal)
    np.testing.assert_allclose(d1.point_1, d0.point_1 + p1[:, None] * d0.normal, rtol=0, atol=1e-15)
    np.testing.assert_allclose(d1.point_2, d0.point_2 - p2[:, None] * d0.normal, rtol=0, atol=1e-15)


def test_padding_with_near_only_reports_the_same_contacts():
    m = Model.from_files([DEMO_ARM], padding={"*": 0.03})
    q = np.random.default_rng(5).uniform(-1.0, 1.0, len(m.joint_names))
    _, exact = _evaluate(m, q, report_distance=0.05)
    _, near = _evaluate(m, q, report_distance=0.05, near_only=True)
    assert exact.contact_index.tolist() == near.contact_index.tolist()
    assert exact.min_distance == near.min_distance


@pytest.mark.parametrize("padding, message", [
    ({"link*": -0.01}, r"padding\['link\*'\]: must be a finite number"),
    ({"*": math.nan}, r"padding\['\*'\]: must be a finite number"),
    ({"nobody*": 0.01}, r"padding\['nobody\*'\]: matches no body"),
])
def test_bad_padding_names_the_entry(padding, message):
    with pytest.raises(ValueError, match=message):
        Model.from_files([DEMO_ARM], padding=padding)


def test_with_overrides_equals_a_model_compiled_with_them_and_shares_the_constants():
    base = Model.from_files([DEMO_ARM])
    ov = Overrides(check=[("*", "*")], ignore=[("table", "*")])
    fresh = Model.from_files([DEMO_ARM], overrides=ov, padding={"*arm": 0.002})
    derived = base.with_overrides(ov, padding={"*arm": 0.002})
    assert np.array_equal(derived.pairs, fresh.pairs) and not np.array_equal(derived.pairs, base.pairs)
    assert derived.ignored == fresh.ignored
    assert derived.kinematics is base.kinematics and derived.link_shapes is base.link_shapes
    assert derived.hulls is base.hulls and derived.shapes is base.shapes
    q = np.random.default_rng(3).uniform(-1.0, 1.0, len(base.joint_names))
    (da, ra), (db, rb) = _evaluate(derived, q, report_distance=0.1), _evaluate(fresh, q, report_distance=0.1)
    assert da.results.tobytes() == db.results.tobytes()
    assert [c.to_json() for c in ra.contacts] == [c.to_json() for c in rb.contacts]
    # the base Model did not change and still evaluates as a freshly loaded one
    (d0, _), (d1, _) = _evaluate(base, q), _evaluate(Model.from_files([DEMO_ARM]), q)
    assert d0.results.tobytes() == d1.results.tobytes()


# ------------------------------------------------------- self and robot-environment report distances

def test_self_and_environment_pairs_of_the_demo_arm():
    """The arm's six bodies are one kinematic tree (base to fingertip); floor and table are
    bodies of their own: a pair is an environment pair exactly when one side is floor or table."""
    model = Model.from_files([DEMO_ARM])
    names = [(model.body_plain_names[i], model.body_plain_names[j]) for i, j in model.pair_bodies]
    expected = [("floor" in pair) or ("table" in pair) for pair in names]
    assert model.pair_environment.tolist() == expected
    assert any(expected) and not all(expected)


@pytest.mark.parametrize("near_only", [False, True])
def test_environment_report_distance_reports_each_kind_at_its_own_distance(near_only):
    """Reported with (self, environment) = (d_s, d_e) equals the all-pairs distances filtered by
    each pair's own threshold, closest first; the default (None) is one distance for both."""
    model = Model.from_files([DEMO_ARM])
    data = model.create_data()
    model.set_joint_positions(data, ["shoulder_pitch", "elbow"], [0.9, 1.2])
    everything = model.evaluate(data, report_distance=math.inf).distances.copy()
    for d_self, d_env in [(0.05, 0.3), (0.3, 0.05), (-1.0, 1.0), (0.1, None)]:
        r = model.evaluate(data, report_distance=d_self, environment_report_distance=d_env,
                           near_only=near_only)
        limit = np.where(model.pair_environment, d_self if d_env is None else d_env, d_self)
        expected = np.flatnonzero(everything < limit)
        expected = expected[np.argsort(everything[expected], kind="stable")]
        assert r.contact_index.tolist() == expected.tolist(), (d_self, d_env)
