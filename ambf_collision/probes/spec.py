"""Kinematic tactile probes: what a probe is, what it measures, and the probe file.

A probe is a point ``position`` with an outward sensor normal ``normal`` (both in its
body's frame, metres), a sensing radius ``radius`` (m), a stiffness ``stiffness`` (N/m)
and a proximity ``range`` (m). Probes never take part in collision checking: they only
read the world shapes that the model computed for the cycle.

For every sensed shape s the probe centre c has the signed distance ``d_surf`` to the
surface of s (negative inside) and the outward normal ``n_c`` there (surface -> c).

- s *faces* the probe when ``n_c . n_s < 0`` (``n_s``: sensor normal in world); a shape
  that does not face the probe is not seen at all (neither touch nor proximity).
- s *touches* the probe when it faces it and ``d_surf < radius``; then
  ``d_pen = clip(radius - d_surf, 0, 2 radius)``.
- per probe: ``depth = max d_pen``, ``force = sum stiffness * d_pen * n_c`` (N, world),
  ``area = sum pi (2 r d_pen - d_pen^2)`` (m^2), ``contact_normal``/``touching_body`` of
  the deepest contact (the touching shape with the smallest ``d_surf``; ties: the lowest
  shape index). Sums run over the touching shapes in ascending shape index.
- ``distance = min (d_surf - radius)`` over facing shapes with ``d_surf - radius <= range``,
  ``+inf`` when there is none. In contact it is the (negative) gap of the deepest contact,
  i.e. ``-depth`` as long as the penetration is below ``2 radius``.
- ``in_contact``: a Schmitt trigger on ``depth`` (m). A probe out of contact enters it when
  ``depth > contact_threshold``; a probe in contact leaves it when
  ``depth <= release_threshold``. Both default to 0: in contact exactly when touching. The
  state is kept per probe from one evaluation to the next (in the probe data); ``depth``,
  ``force``, ``area``, ``contact_normal`` and ``touching_*`` always describe the cycle itself.
- per patch (totals over its probes): ``force`` (N, world), ``area`` (m^2), the number of
  probes ``in_contact``, and the wrench in the patch body's frame: ``force_body`` (N) and
  ``torque_body = sum (p_i - origin) x f_i`` (N m) about the patch ``origin``, each probe's
  force applied at its centre ``p_i``.

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

import fnmatch
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ambf_collision.geometry.tolerances import (PROBE_GRID_SLACK, PROBE_MIN_IN_PLANE,
                                                PROBE_MIN_VECTOR)
from ambf_collision.model.names import NameIndex, ambf_name

__all__ = [
    "DEFAULT_RANGE",
    "ProbeError",
    "ProbeSpec",
    "PatchSpec",
    "load_probe_file",
    "parse_probe_document",
    "resolve_body",
    "expand_specs",
    "sensed_bodies",
]

DEFAULT_RANGE = 0.05
"""Default proximity range of a probe (m)."""


class ProbeError(ValueError):
    """Bad probe file: the message names the file, the entry and the key."""

    def __init__(self, file, entry, key, message):
        self.file = str(file)
        self.entry = entry
        self.key = key
        self.message = message
        where = ": ".join(str(p) for p in (self.file, entry, key) if p)
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class ProbeSpec:
    """One probe, in the frame of body ``body`` (a name from the model's ``body_names``)."""

    name: str
    body: str
    position: np.ndarray  # (3,) m, body frame
    normal: np.ndarray  # (3,) unit, body frame
    radius: float  # m
    stiffness: float  # N/m
    range: float = DEFAULT_RANGE  # m
    sense_bodies: tuple = ()  # names / fnmatch patterns; () with no groups = all bodies
    sense_groups: tuple = ()  # collision groups (ints)
    include_own_body: bool = False
    patch: str | None = None  # name of the patch this probe belongs to
    contact_threshold: float = 0.0  # m of depth above which the probe enters contact
    release_threshold: float = 0.0  # m of depth at or below which it leaves contact

    @property
    def senses_all(self) -> bool:
        """True when no ``sense`` limit was given."""
        return not self.sense_bodies and not self.sense_groups


@dataclass(frozen=True)
class PatchSpec:
    """A grid of probes on a face of body ``body`` (body frame, metres)."""

    name: str
    body: str
    origin: np.ndarray  # (3,)
    normal: np.ndarray  # (3,) unit
    direction: np.ndarray  # (3,) unit, orthogonal to normal
    spacing: float
    radius: float
    stiffness: float
    shape: str = "rectangle"  # or "circle"
    rows: int = 0
    cols: int = 0
    disc_radius: float = 0.0
    range: float = DEFAULT_RANGE
    sense_bodies: tuple = ()
    sense_groups: tuple = ()
    include_own_body: bool = False
    contact_threshold: float = 0.0
    release_threshold: float = 0.0

    def local_positions(self) -> np.ndarray:
        """Probe centres ``(M, 3)`` in the body frame, row-major order."""
        u = self.direction
        v = np.cross(self.normal, u)
        if self.shape == "circle":
            n = int(math.floor(self.disc_radius / self.spacing * (1 + PROBE_GRID_SLACK)))
            idx = np.arange(-n, n + 1, dtype=float)
            jj, ii = np.meshgrid(idx, idx)  # ii: row (v), jj: column (u)
            ii, jj = ii.ravel(), jj.ravel()
            keep = (ii * ii + jj * jj) * self.spacing**2 <= self.disc_radius**2 * (1 + PROBE_GRID_SLACK)
            ii, jj = ii[keep], jj[keep]
        else:
            rr, cc = np.meshgrid(np.arange(self.rows), np.arange(self.cols), indexing="ij")
            ii = rr.ravel() - (self.rows - 1) / 2.0
            jj = cc.ravel() - (self.cols - 1) / 2.0
        return (
            self.origin[None, :]
            + (jj * self.spacing)[:, None] * u[None, :]
            + (ii * self.spacing)[:, None] * v[None, :]
        )

    def probes(self) -> list[ProbeSpec]:
        """The patch's probes, named ``<patch>/<index>``."""
        return [
            ProbeSpec(
                name=f"{self.name}/{i}",
                body=self.body,
                position=p,
                normal=self.normal,
                radius=self.radius,
                stiffness=self.stiffness,
                range=self.range,
                sense_bodies=self.sense_bodies,
                sense_groups=self.sense_groups,
                include_own_body=self.include_own_body,
                patch=self.name,
                contact_threshold=self.contact_threshold,
                release_threshold=self.release_threshold,
            )
            for i, p in enumerate(self.local_positions())
        ]


# ----------------------------------------------------------------------------- body names

_COMMON_KEYS = {"name", "body", "normal", "radius", "stiffness", "range", "sense",
                "include_own_body", "contact_threshold", "release_threshold"}
_PROBE_KEYS = _COMMON_KEYS | {"position"}
_PATCH_KEYS = _COMMON_KEYS | {"origin", "direction", "spacing", "shape", "rows", "cols",
                              "disc_radius"}


def _plain(name: str) -> str:
    """Last component of a qualified body name, spaces removed (as AMBF does)."""
    return ambf_name(name.rsplit("/", 1)[-1])


def _matches(body_name: str, pattern: str) -> bool:
    """True when a qualified body name matches a name or shell pattern (plain or qualified)."""
    return fnmatch.fnmatchcase(body_name, pattern) or fnmatch.fnmatchcase(
        _plain(body_name), ambf_name(pattern)
    )


def resolve_body(name: str, body_names) -> str:
    """The qualified model body name that ``name`` designates, by the package's one naming
    rule (:class:`~ambf_collision.model.names.NameIndex`: qualified or plain, spaces as
    written or removed, a namespace tail). ``body_names``: the model's qualified names, or its
    ``NameIndex``. Raises ``KeyError`` with a readable message when it matches none or several.
    """
    index = body_names
    if not isinstance(index, NameIndex):
        split = [n.rsplit("/", 1) if "/" in n else ("", n) for n in body_names]
        index = NameIndex([ns for ns, _ in split], [plain for _, plain in split])
    return index.qualified[index.index(name)]


def sensed_bodies(spec: ProbeSpec, body_names, groups_of=None) -> np.ndarray:
    """Boolean mask ``(B,)`` of the bodies that probe ``spec`` senses.

    ``groups_of(body_name) -> iterable of int`` gives a body's collision groups; needed only
    when ``spec.sense_groups`` is set.
    """
    names = list(body_names)
    own = names.index(spec.body) if spec.body in names else -1
    if spec.senses_all:
        mask = np.ones(len(names), dtype=bool)
    else:
        mask = np.zeros(len(names), dtype=bool)
        for b, name in enumerate(names):
            mask[b] = any(_matches(name, pat) for pat in spec.sense_bodies)
            if not mask[b] and spec.sense_groups and groups_of is not None:
                if set(groups_of(name)) & set(spec.sense_groups):
                    mask[b] = True
    if own >= 0 and not spec.include_own_body:
        mask[own] = False
    return mask


def expand_specs(specs) -> list[ProbeSpec]:
    """Flatten specs into single probes (patches expanded in order)."""
    out = []
    for s in specs:
        out.extend(s.probes() if isinstance(s, PatchSpec) else [s])
    return out


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
                if not any(_matches(n, pat) for n in body_names):
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
