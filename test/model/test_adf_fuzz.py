"""Fuzz: mutated AMBF example files (key deletions, junk values, NaN/negative numbers, corrupted
YAML text) make ``load_adf_files`` / ``Model.from_files`` raise ``AdfError`` or succeed; nothing
else escapes, and a model that loads evaluates to finite distances."""

from __future__ import annotations

import copy
import math
import tempfile
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EXAMPLES, examples
from ambf_collision.model.adf import AdfError, AdfWarning, load_adf_files
from ambf_collision.model.adf_yaml import AdfYamlLoader
from ambf_collision.model import Model
pytestmark = pytest.mark.skipif(not EXAMPLES.is_dir(), reason=f"AMBF examples absent: {EXAMPLES}")
NAMES = ["ScrewDriverEnv_env.yaml", "blender-kuka-tip-sphere.yaml", "blender-toy-car.yaml",
         "checkered_floor.yaml", "peg_and_base.yaml", "pr2 gripper.yaml", "puzzle2.yaml",
         "gripper4/gripper.yaml"]
_TEXT = {n: (EXAMPLES / n).read_text() for n in NAMES} if EXAMPLES.is_dir() else {}
_DOCS = {n: yaml.safe_load(t) for n, t in _TEXT.items()}

JUNK = st.sampled_from([None, "abc", "", [], {}, [1, 2], {"x": 1}, -1, -0.5, 0, 1e308, -1e308,
                        float("nan"), float("inf"), -float("inf"), True, 10**400, "BODY nowhere",
                        "JOINT nowhere", {"x": float("nan"), "y": 0, "z": 0}, [[[]]], 1001, "revolute"])


def _slots(node, out, depth=0):
    """All (container, key) places inside a YAML document."""
    if depth > 12:
        return
    if isinstance(node, dict):
        for k in list(node):
            out.append((node, k))
            _slots(node[k], out, depth + 1)
    elif isinstance(node, list):
        for i in range(len(node)):
            out.append((node, i))
            _slots(node[i], out, depth + 1)


def _load_and_eval(path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            m = Model.from_files([path])
        except AdfError as e:
            assert e.file == str(path) and "\n" not in str(e)
            return
    d = m.create_data()
    r = m.evaluate(d)
    assert np.all(np.isfinite(r.distances))
    assert np.all(np.isfinite(r.body_t)) and not math.isnan(r.min_distance)


_OWN_DIR = Path(__file__).resolve().parent / "adf_models"
_OWN = {p.name: yaml.load(p.read_text(), Loader=AdfYamlLoader) for p in sorted(_OWN_DIR.glob("*.yaml"))}


@st.composite
def mutated_doc(draw, docs=None):
    docs = docs or _DOCS
    name = draw(st.sampled_from(sorted(docs)))
    doc = copy.deepcopy(docs[name])
    for _ in range(draw(st.integers(1, 3))):
        slots = []
        _slots(doc, slots)
        if not slots:
            break
        cont, key = slots[draw(st.integers(0, len(slots) - 1))]
        if draw(st.booleans()):
            del cont[key]
        else:
            cont[key] = copy.deepcopy(draw(JUNK))  # JUNK values are shared objects
    return name, doc


@pytest.mark.slow
@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_doc())
def test_structural_mutations(case):
    name, doc = case
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / Path(name).name
        try:
            text = yaml.safe_dump(doc, sort_keys=False)
        except (yaml.YAMLError, OverflowError):
            return
        p.write_text(text)
        _load_and_eval(p)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(mutated_doc(_OWN))
def test_own_models_mutated_load_or_refuse(case):
    """This project's own models (loops, string booleans, dangling joints...), mutated: the
    loader returns a world of finite poses, warning only with AdfWarning, or raises AdfError."""
    name, doc = case
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / name
        try:
            p.write_text(yaml.safe_dump(doc, sort_keys=False))
        except (yaml.YAMLError, OverflowError):
            return
        (Path(tmp) / "meshes").symlink_to(_OWN_DIR / "meshes")
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            try:
                w = load_adf_files([p])
            except AdfError as e:
                assert e.file == str(p) and "\n" not in str(e)
                return
        assert all(isinstance(r.message, AdfWarning) for r in rec)
        for b in w.bodies:
            assert np.all(np.isfinite(b.R)) and np.all(np.isfinite(b.t))
        for j in w.joints:
            assert j.parent != j.child and 0 <= j.parent < len(w.bodies) and 0 <= j.child < len(w.bodies)


@settings(max_examples=examples(200), deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(NAMES), st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40),
                                                    st.text(alphabet="{}[]:,&*!|>-'\"\n\t #%@`?x0.9e",
                                                            max_size=6)), min_size=1, max_size=4))
def test_text_corruption(name, edits):
    text = _TEXT[name]
    for where, cut, ins in edits:
        k = int(where * len(text))
        text = text[:k] + ins + text[k + cut:]
    with tempfile.TemporaryDirectory() as tmp:
        p = Path(tmp) / Path(name).name
        p.write_text(text)
        _load_and_eval(p)
