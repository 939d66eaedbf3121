"""The probe file (probes/spec.py): validation errors naming file, entry and key, body names,
patch geometry by hand, thresholds, and the bundled examples."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import REPO
from ambf_collision.probes.probe_file import ProbeError, load_probe_file, parse_probe_document
from ambf_collision.probes.spec import resolve_body


def _doc_error(doc, body_names=("/ambf/env/finger", "/ambf/env/floor")):
    with pytest.raises(ProbeError) as e:
        parse_probe_document(doc, "hand.probes.yaml", list(body_names))
    return str(e.value)


GOOD_PROBE = {"name": "tip", "body": "finger", "position": [0, 0, 0.02], "normal": [0, 0, 1],
              "radius": 0.004, "stiffness": 2000.0}
GOOD_PATCH = {"name": "pad", "body": "finger", "origin": [0, 0, 0.02], "normal": [0, 0, 1],
              "direction": [1, 0, 0], "spacing": 0.003, "rows": 4, "cols": 4, "radius": 0.002,
              "stiffness": 2000.0}


@pytest.mark.parametrize("section, base, key, value, expect", [
    ("probes", GOOD_PROBE, "radius", None, "missing required key"),
    ("probes", GOOD_PROBE, "radius", -1.0, "must be > 0"),
    ("probes", GOOD_PROBE, "stiffness", "hard", "finite number"),
    ("probes", GOOD_PROBE, "position", [0, 0], "3 finite numbers"),
    ("probes", GOOD_PROBE, "position", [0, 0, float("nan")], "3 finite numbers"),
    ("probes", GOOD_PROBE, "normal", [0, 0, 0], "non-zero"),
    ("probes", GOOD_PROBE, "body", "thumb", "no body named 'thumb'"),
    ("probes", GOOD_PROBE, "range", -0.1, "must be >= 0"),
    ("probes", GOOD_PROBE, "sense", ["tabel"], "'tabel' matches no body"),
    ("probes", GOOD_PROBE, "sense", {"groups": ["a"]}, "list of integers"),
    ("probes", GOOD_PROBE, "include_own_body", "yes", "true or false"),
    ("probes", GOOD_PROBE, "colour", "red", "unknown key"),
    ("patches", GOOD_PATCH, "direction", [0, 0, 2], "must not be parallel"),
    ("patches", GOOD_PATCH, "rows", 0, "integer >= 1"),
    ("patches", GOOD_PATCH, "cols", 2.5, "integer >= 1"),
    ("patches", GOOD_PATCH, "spacing", 0, "must be > 0"),
    ("patches", GOOD_PATCH, "shape", "hexagon", "'rectangle' or 'circle'"),
    ("patches", GOOD_PATCH, "disc_radius", 0.01, "only used with 'shape: circle'"),
    ("patches", GOOD_PATCH, "direction", [0, 0, 0], "non-zero"),
    ("probes", GOOD_PROBE, "contact_threshold", 0.008, "must be below 2 radius"),
    ("probes", GOOD_PROBE, "contact_threshold", -0.001, "must be >= 0"),
    ("probes", GOOD_PROBE, "release_threshold", 0.001, "must be <= contact_threshold (0.0)"),
    ("patches", GOOD_PATCH, "release_threshold", "low", "finite number"),
    ("patches", GOOD_PATCH, "contact_threshold", 0.004, "must be below 2 radius"),
])
def test_validation_errors_name_file_entry_and_key(section, base, key, value, expect):
    entry = dict(base)
    if value is None:
        del entry[key]
    else:
        entry[key] = value
    msg = _doc_error({section: [dict(base, name="ok"), entry]})
    name = base["name"]
    assert msg.startswith(f"hand.probes.yaml: {section}[1] '{name}': {key}: "), msg
    assert expect in msg, msg


def test_validation_structure_and_names():
    assert "top-level key" in _doc_error({"probe": []})
    assert "probes: must be a list" in _doc_error({"probes": {"a": 1}})
    assert "probes[0]: must be a mapping" in _doc_error({"probes": ["tip"]})
    dup = _doc_error({"probes": [GOOD_PROBE], "patches": [dict(GOOD_PATCH, name="tip")]})
    assert "patches[0] 'tip': name: probe name 'tip' already used by probes[0] 'tip'" in dup
    clash = _doc_error({"probes": [dict(GOOD_PROBE, name="pad/3")], "patches": [GOOD_PATCH]})
    assert "already used" in clash
    msg = _doc_error({"patches": [dict(GOOD_PATCH, shape="circle", disc_radius=0.001)]})
    assert "patches[0] 'pad': rows: not used by a circular patch" in msg


def test_ambiguous_and_qualified_body_names():
    names = ["/ambf/env/left/finger", "/ambf/env/right/finger", "/ambf/env/palm"]
    with pytest.raises(KeyError, match="ambiguous.*left/finger.*right/finger"):
        resolve_body("finger", names)
    assert resolve_body("palm", names) == "/ambf/env/palm"
    assert resolve_body("right/finger", names) == "/ambf/env/right/finger"
    assert resolve_body("/ambf/env/left/finger", names) == "/ambf/env/left/finger"
    # AMBF strips spaces from names: the spelling with spaces finds the stripped body
    assert resolve_body("base link", names + ["/ambf/env/baselink"]) == "/ambf/env/baselink"
    with pytest.raises(KeyError, match="no body named 'thumb'"):
        resolve_body("thumb", names)
    msg = _doc_error({"probes": [GOOD_PROBE]}, names)
    assert "probes[0] 'tip': body: " in msg and "ambiguous" in msg


def test_load_file_errors(tmp_path):
    bad = tmp_path / "bad.probes.yaml"
    bad.write_text("probes: [ {name: a\n")
    with pytest.raises(ProbeError, match=r"bad\.probes\.yaml: invalid YAML"):
        load_probe_file(bad, ["/ambf/env/finger"])
    with pytest.raises(ProbeError, match="missing.probes.yaml: cannot read"):
        load_probe_file(tmp_path / "missing.probes.yaml", ["/ambf/env/finger"])


def test_rectangular_patch_geometry():
    """4 x 4 grid of pitch 3 mm centred on the origin, in the plane normal to `normal`;
    columns along `direction`, rows along normal x direction."""
    doc = {"patches": [dict(GOOD_PATCH, normal=[0, 0, 2], direction=[1, 0, 0.5])]}
    (patch,) = parse_probe_document(doc, "f.yaml", ["/ambf/env/finger"])
    probes = patch.probes()
    assert [p.name for p in probes] == [f"pad/{i}" for i in range(16)]
    pos = np.array([p.position for p in probes])
    np.testing.assert_allclose(pos.mean(0), [0, 0, 0.02], atol=1e-15)
    np.testing.assert_allclose(pos[:, 2], 0.02, atol=1e-15)
    np.testing.assert_allclose(pos[1] - pos[0], [0.003, 0, 0], atol=1e-15)
    np.testing.assert_allclose(pos[4] - pos[0], [0, 0.003, 0], atol=1e-15)
    np.testing.assert_allclose(pos[0], [-0.0045, -0.0045, 0.02], atol=1e-15)
    for p in probes:
        np.testing.assert_allclose(p.normal, [0, 0, 1])
        assert p.patch == "pad" and p.radius == 0.002 and p.stiffness == 2000.0


def test_circular_patch_geometry():
    """disc_radius 5 mm, pitch 2 mm: lattice points (i, j) with 4(i^2 + j^2) <= 25 mm^2:
    the 5 x 5 block minus its 4 corners = 21 probes, all within the disc."""
    doc = {"patches": [dict(GOOD_PATCH, shape="circle", rows=None, cols=None, spacing=0.002,
                            disc_radius=0.005, normal=[1, 0, 0], direction=[0, 1, 0])]}
    (patch,) = parse_probe_document(doc, "f.yaml", ["/ambf/env/finger"])
    pos = patch.local_positions()
    assert len(pos) == 21 and len(patch.probes()) == 21
    rel = pos - [0, 0, 0.02]
    np.testing.assert_allclose(rel[:, 0], 0, atol=1e-15)
    assert np.all(np.linalg.norm(rel, axis=1) <= 0.005 + 1e-15)
    assert len({tuple(np.round(p / 0.002).astype(int)) for p in rel}) == 21


def test_demo_probe_files_load():
    """The bundled probe examples load against their ADF body names."""
    names = ["/ambf/env/" + b for b in ("base", "turret", "upper_arm", "forearm", "hand",
                                          "fingertip", "floor", "table")]
    files = sorted((REPO / "examples").rglob("*probes*.yaml"))
    assert files
    for f in files:
        specs = load_probe_file(f, names)
        assert specs and all(s.body in names for s in specs)




def test_thresholds_default_and_reach_every_patch_probe():
    """contact_threshold defaults to 0 and release_threshold to contact_threshold (no
    hysteresis unless asked); a patch's thresholds are those of each of its probes."""
    doc = {"probes": [GOOD_PROBE, dict(GOOD_PROBE, name="gate", contact_threshold=0.001)],
           "patches": [dict(GOOD_PATCH, contact_threshold=0.002, release_threshold=0.0005)]}
    plain, gate, patch = parse_probe_document(doc, "f.yaml", ["/ambf/env/finger"])
    assert (plain.contact_threshold, plain.release_threshold) == (0.0, 0.0)
    assert (gate.contact_threshold, gate.release_threshold) == (0.001, 0.001)
    assert {(p.contact_threshold, p.release_threshold) for p in patch.probes()} == {(0.002, 0.0005)}
