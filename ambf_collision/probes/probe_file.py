"""The probe file: YAML read, validated and turned into :class:`~.spec.ProbeSpec` and
:class:`~.spec.PatchSpec` (what they measure: :mod:`.spec`). Every error names the file, the entry
and the key (:class:`ProbeError`).

Probe file (YAML; keys in the body frame, metres, N/m)::

    probes:
      - {name: tip, body: finger, position: [0, 0, 0.02], normal: [0, 0, 1],
         radius: 0.004, stiffness: 2000.0}
    patches:
      - {name: pad, body: finger, origin: [0, 0, 0.02], normal: [0, 0, 1],
         direction: [1, 0, 0], spacing: 0.003, rows: 4, cols: 4,
         radius: 0.002, stiffness: 2000.0}
      - {name: disc, body: finger, shape: circle, origin: [0, 0, 0.02], normal: [0, 0, 1],
         direction: [1, 0, 0], spacing: 0.002, disc_radius: 0.005,
         radius: 0.001, stiffness: 500.0}

Optional keys on probes and patches: ``range`` (m, default 0.05), ``sense`` (what the
probe feels: a list of body names or shell patterns, or a mapping ``{bodies: [...],
groups: [...]}`` where a body is sensed when it matches a name/pattern *or* shares a
collision group; default every body), ``include_own_body`` (default false),
``contact_threshold`` (m of depth to enter contact, default 0, below ``2 radius``) and
``release_threshold`` (m of depth at or below which contact is left, default
``contact_threshold``, at most ``contact_threshold``).

A rectangular patch (``shape: rectangle``, the default) is a ``rows x cols`` grid with
pitch ``spacing`` centred on ``origin``; columns run along ``direction`` (projected onto
the plane normal to ``normal``), rows along ``normal x direction``. A circular patch
(``shape: circle``) keeps the points of the same square grid (pitch ``spacing``) whose
in-plane distance to ``origin`` is at most ``disc_radius``. Patch probe ``i`` (row-major
order, starting at 0) is named ``<patch>/<i>``; all patch probes share the patch normal,
radius, stiffness, range, sense and thresholds.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import yaml

from ambf_collision.geometry.tolerances import PROBE_MIN_IN_PLANE, PROBE_MIN_VECTOR
from ambf_collision.probes.spec import (DEFAULT_RANGE, PatchSpec, ProbeSpec, body_matches,
                                        resolve_body)

__all__ = ["ProbeError", "load_probe_file", "parse_probe_document"]


class ProbeError(ValueError):
    """Bad probe file: the message names the file, the entry and the key."""

    def __init__(self, file, entry, key, message):
        self.file = str(file)
        self.entry = entry
        self.key = key
        self.message = message
        where = ": ".join(str(p) for p in (self.file, entry, key) if p)
        super().__init__(f"{where}: {message}")


_COMMON_KEYS = {"name", "body", "normal", "radius", "stiffness", "range", "sense",
                "include_own_body", "contact_threshold", "release_threshold"}
_PROBE_KEYS = _COMMON_KEYS | {"position"}
_PATCH_KEYS = _COMMON_KEYS | {"origin", "direction", "spacing", "shape", "rows", "cols",
                              "disc_radius"}


# ----------------------------------------------------------------------------- one entry


class _Entry:
    """Validation helper for one mapping entry of the file."""

    def __init__(self, file, entry, data, allowed):
        self.file, self.entry, self.data = file, entry, data
        if not isinstance(data, dict):
            raise ProbeError(file, entry, None, f"must be a mapping, got {type(data).__name__}")
        for k in data:
            if k not in allowed:
                raise ProbeError(file, entry, k, f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def err(self, key, message):
        return ProbeError(self.file, self.entry, key, message)

    def has(self, key):
        return key in self.data and self.data[key] is not None

    def string(self, key):
        if not self.has(key):
            raise self.err(key, "missing required key")
        v = self.data[key]
        if not isinstance(v, str) or not v.strip():
            raise self.err(key, f"must be a non-empty string, got {v!r}")
        return v.strip()

    def number(self, key, default=None, positive=False, nonneg=False):
        if not self.has(key):
            if default is None:
                raise self.err(key, "missing required key")
            return float(default)
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise self.err(key, f"must be a finite number, got {v!r}")
        if positive and not v > 0:
            raise self.err(key, f"must be > 0, got {v!r}")
        if nonneg and not v >= 0:
            raise self.err(key, f"must be >= 0, got {v!r}")
        return float(v)

    def integer(self, key, minimum=1):
        if not self.has(key):
            raise self.err(key, "missing required key")
        v = self.data[key]
        if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
            raise self.err(key, f"must be an integer >= {minimum}, got {v!r}")
        return int(v)

    def vector(self, key, unit=False):
        if not self.has(key):
            raise self.err(key, "missing required key")
        v = self.data[key]
        if isinstance(v, dict) and set(v) == {"x", "y", "z"}:
            v = [v["x"], v["y"], v["z"]]
        ok = isinstance(v, (list, tuple)) and len(v) == 3 and all(
            isinstance(c, (int, float)) and not isinstance(c, bool) and math.isfinite(c) for c in v
        )
        if not ok:
            raise self.err(key, f"must be 3 finite numbers [x, y, z], got {v!r}")
        a = np.array(v, dtype=float)
        if unit:
            n = float(np.linalg.norm(a))
            if not n > PROBE_MIN_VECTOR:
                raise self.err(key, f"must be a non-zero vector, got {v!r}")
            a = a / n
        return a

    def boolean(self, key, default):
        if not self.has(key):
            return default
        v = self.data[key]
        if not isinstance(v, bool):
            raise self.err(key, f"must be true or false, got {v!r}")
        return v

    def body(self, body_names):
        name = self.string("body")
        if body_names is None:
            return name
        try:
            return resolve_body(name, body_names)
        except KeyError as e:
            raise self.err("body", e.args[0]) from None

    def sense(self, body_names=None):
        """``(bodies, groups)`` from the optional ``sense`` key; each name/pattern must
        match at least one of ``body_names`` (when given)."""
        if not self.has("sense"):
            return (), ()
        v = self.data["sense"]
        if isinstance(v, str):
            v = [v]
        if isinstance(v, list):
            v = {"bodies": v}
        if not isinstance(v, dict):
            raise self.err("sense", f"must be a list of body names or {{bodies: [...], groups: [...]}}, got {v!r}")
        extra = set(v) - {"bodies", "groups"}
        if extra:
            raise self.err("sense", f"unknown key {sorted(extra)[0]!r} (allowed: bodies, groups)")
        bodies, groups = v.get("bodies") or [], v.get("groups") or []
        if not isinstance(bodies, list) or not all(isinstance(b, str) and b.strip() for b in bodies):
            raise self.err("sense", f"'bodies' must be a list of names or patterns, got {bodies!r}")
        if not isinstance(groups, list) or not all(
            isinstance(g, int) and not isinstance(g, bool) for g in groups
        ):
            raise self.err("sense", f"'groups' must be a list of integers, got {groups!r}")
        if not bodies and not groups:
            raise self.err("sense", "is empty: the probe would sense nothing (omit the key to sense all bodies)")
        bodies = tuple(b.strip() for b in bodies)
        if body_names is not None:
            for pat in bodies:
                if not any(body_matches(n, pat) for n in body_names):
                    raise self.err("sense", f"{pat!r} matches no body of the model")
        return bodies, tuple(int(g) for g in groups)

    def thresholds(self, radius):
        """``(contact_threshold, release_threshold)`` (m of depth): ``0 <= release <= contact
        < 2 radius`` (the depth never exceeds ``2 radius``)."""
        enter = self.number("contact_threshold", default=0.0, nonneg=True)
        if not enter < 2.0 * radius:
            raise self.err("contact_threshold", f"must be below 2 radius = {2.0 * radius!r} m "
                                                f"(the largest depth), got {enter!r}")
        leave = self.number("release_threshold", default=enter, nonneg=True)
        if not leave <= enter:
            raise self.err("release_threshold", f"must be <= contact_threshold ({enter!r}), got {leave!r}")
        return enter, leave

    def common(self, body_names) -> dict:
        """The keys probes and patches share, validated."""
        bodies, groups = self.sense(body_names)
        radius = self.number("radius", positive=True)
        enter, leave = self.thresholds(radius)
        return dict(
            name=self.string("name"),
            body=self.body(body_names),
            normal=self.vector("normal", unit=True),
            radius=radius,
            stiffness=self.number("stiffness", nonneg=True),
            range=self.number("range", default=DEFAULT_RANGE, nonneg=True),
            sense_bodies=bodies,
            sense_groups=groups,
            include_own_body=self.boolean("include_own_body", False),
            contact_threshold=enter,
            release_threshold=leave,
        )


def _probe_from(entry: _Entry, body_names) -> ProbeSpec:
    return ProbeSpec(position=entry.vector("position"), **entry.common(body_names))


def _patch_from(entry: _Entry, body_names) -> PatchSpec:
    common = entry.common(body_names)
    normal = common["normal"]
    direction = entry.vector("direction", unit=True)
    direction = direction - normal * float(direction @ normal)
    dn = float(np.linalg.norm(direction))
    if not dn > PROBE_MIN_IN_PLANE:
        raise entry.err("direction", "must not be parallel to 'normal' (it sets the in-plane column axis)")
    shape = entry.data.get("shape", "rectangle")
    if shape not in ("rectangle", "circle"):
        raise entry.err("shape", f"must be 'rectangle' or 'circle', got {shape!r}")
    spacing = entry.number("spacing", positive=True)
    if shape == "circle":
        for k in ("rows", "cols"):
            if entry.has(k):
                raise entry.err(k, "not used by a circular patch (give 'disc_radius')")
        rows = cols = 0
        disc_radius = entry.number("disc_radius", nonneg=True)
    else:
        if entry.has("disc_radius"):
            raise entry.err("disc_radius", "only used with 'shape: circle'")
        rows, cols, disc_radius = entry.integer("rows"), entry.integer("cols"), 0.0
    return PatchSpec(origin=entry.vector("origin"), direction=direction / dn, spacing=spacing,
                     shape=shape, rows=rows, cols=cols, disc_radius=disc_radius, **common)


# ----------------------------------------------------------------------------- documents


def parse_probe_document(doc, file, body_names=None) -> list:
    """Validate a loaded probe document; returns ``ProbeSpec``s then ``PatchSpec``s.

    ``body_names``: the model's body names to resolve ``body`` against (``None``: keep as
    written). Raises ``ProbeError`` naming ``file``, the entry and the key.
    """
    if doc is None:
        doc = {}
    if not isinstance(doc, dict):
        raise ProbeError(file, None, None, "top level must be a mapping with 'probes' and/or 'patches'")
    for k in doc:
        if k not in ("probes", "patches"):
            raise ProbeError(file, None, k, "unknown top-level key (allowed: probes, patches)")
    specs, seen = [], {}

    def claim(name, entry_label, key="name"):
        if name in seen:
            raise ProbeError(file, entry_label, key, f"probe name {name!r} already used by {seen[name]}")
        seen[name] = entry_label

    for section, allowed, build in (
        ("probes", _PROBE_KEYS, _probe_from),
        ("patches", _PATCH_KEYS, _patch_from),
    ):
        items = doc.get(section)
        if items is None:
            continue
        if not isinstance(items, list):
            raise ProbeError(file, None, section, f"must be a list, got {type(items).__name__}")
        for i, raw in enumerate(items):
            label = f"{section}[{i}]"
            if isinstance(raw, dict) and isinstance(raw.get("name"), str):
                label += f" {raw['name']!r}"
            spec = build(_Entry(file, label, raw, allowed), body_names)
            if isinstance(spec, PatchSpec):
                if "/" in spec.name:
                    raise ProbeError(file, label, "name", "a patch name must not contain '/'")
                claim(spec.name, label)
                for p in spec.probes():
                    claim(p.name, label)
            else:
                claim(spec.name, label)
            specs.append(spec)
    return specs


def load_probe_file(path, body_names=None) -> list:
    """Load and validate a probe YAML file; see the module docstring for the format.

    Returns ``ProbeSpec``/``PatchSpec`` objects whose ``body`` is resolved against
    ``body_names`` (plain or qualified names accepted). Raises ``ProbeError``.
    """
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise ProbeError(path, None, None, f"cannot read probe file ({e.strerror or e})") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ProbeError(path, None, None, f"invalid YAML: {e}") from None
    return parse_probe_document(doc, path, body_names)
