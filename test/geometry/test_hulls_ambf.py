"""Every collision mesh of AMBF's own robots gets a valid hull (optional: needs AMBF's models).

Set ``AMBF_MODELS`` to AMBF's ``ambf_models/descriptions/multi-bodies`` folder. The meshes used for
collision are found by reading the ADF files here (a body without a primitive ``collision shape``
collides with its ``collision mesh`` or ``mesh``, in its low resolution path), and read with coal's
mesh loader (assimp), independent of this package's reader. Issue 11 named five meshes that the old
hand-written hull broke; they are checked by name.
"""

import os
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml

from ambf_collision.geometry.hulls import HullSet

MODELS = os.environ.get("AMBF_MODELS")
pytestmark = pytest.mark.skipif(not MODELS, reason="AMBF_MODELS (AMBF's multi-bodies folder) is not set")

#: (ADF file, body) of the meshes issue 11 found broken, and qhull's vertex count for the first.
NAMED = [("robots/blender-suj.yaml", "BODY suj ecm L1"), ("robots/blender-suj.yaml", "BODY suj psm1 L4"),
         ("robots/blender-suj.yaml", "BODY suj psm3 L3"), ("robots/blender-ecm.yaml", "BODY base link"),
         ("robots/blender-neuro-robot.yaml", "BODY axial_translation_link")]


def collision_meshes(root: Path):
    """{mesh path: [(ADF file, body), ...]} of every mesh an ADF file under root collides with
    (files that are not valid YAML are left out; AMBF cannot read them either)."""
    meshes = {}
    for adf in sorted(root.rglob("*.yaml")):
        try:
            doc = yaml.load(adf.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError:
            continue
        if not isinstance(doc, dict) or not isinstance(doc.get("bodies"), list):
            continue
        for name in doc["bodies"]:
            body = doc.get(name)
            if not isinstance(body, dict) or body.get("collision shape") or body.get("compound collision shape"):
                continue
            mesh = body.get("collision mesh") or body.get("mesh")
            folder = (body.get("low resolution path") or body.get("high resolution path")
                      or doc.get("low resolution path") or doc.get("high resolution path") or "")
            if mesh:
                path = (adf.parent / folder / mesh).resolve()
                if path.is_file():
                    meshes.setdefault(path, []).append((adf.relative_to(root).as_posix(), name))
    return meshes


def test_every_ambf_collision_mesh_gets_a_valid_hull():
    coal = pytest.importorskip("coal", reason="coal's mesh loader reads the meshes here")
    meshes = collision_meshes(Path(MODELS))
    assert len(meshes) > 100
    loader = coal.MeshLoader(coal.BV_AABB)  # the cheapest bounding volume: only vertices are used
    clouds = [np.asarray(loader.load(str(p), np.ones(3)).vertices(), dtype=float) for p in meshes]
    hulls = HullSet.from_clouds(clouds).validate()
    assert (hulls.dimension == 3).all()
    users = {use: h for h, uses in enumerate(meshes.values()) for use in uses}
    assert all(use in users for use in NAMED)
    for use in NAMED:  # the same vertices as coal's own qhull hull
        h = users[use]
        pts = coal.StdVec_Vec3s()
        for p in clouds[h]:
            pts.append(p)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            ref = np.array(coal.Convex.convexHull(pts, True, None).points())
        assert sorted(map(tuple, hulls.hull_vertices(h))) == sorted(map(tuple, ref)), use
    assert len(hulls.hull_vertices(users[NAMED[0]])) == 144  # issue 11: qhull's 144-point hull
