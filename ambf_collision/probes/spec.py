"""Kinematic tactile probes: what a probe is, what it measures, and the probe file.

A probe is a point ``position`` with an outward sensor normal ``normal`` (both in its
body's frame, metres), a sensing radius ``radius`` (m), a stiffness ``stiffness`` (N/m)
and a proximity ``range`` (m). Probes never take part in collision checking: they only
read the world shapes that the model computed for the cycle.

For every sensed shape s the probe centre c has the signed distance ``d_surf`` to the
surface of s (negative inside) and the outward normal ``n_c`` there (surface -> c). A triangle
mesh has an inside when it is closed; an open mesh has none: ``d_surf`` is then the unsigned
distance and ``n_c`` points from the mesh to c on either side.

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

The probe file that declares them is read by :mod:`.probe_file`.
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass

import numpy as np

from ambf_collision.geometry.tolerances import (PROBE_GRID_SLACK)
from ambf_collision.model.names import NameIndex, ambf_name

__all__ = [
    "DEFAULT_RANGE",
    "ProbeSpec",
    "PatchSpec",
    "resolve_body",
    "body_matches",
    "plain_body_name",
    "expand_specs",
    "sensed_bodies",
]

DEFAULT_RANGE = 0.05
"""Default proximity range of a probe (m)."""


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

def plain_body_name(name: str) -> str:
    """Last component of a qualified body name, spaces removed (as AMBF does)."""
    return ambf_name(name.rsplit("/", 1)[-1])


def body_matches(body_name: str, pattern: str) -> bool:
    """True when a qualified body name matches a name or shell pattern (plain or qualified)."""
    return fnmatch.fnmatchcase(body_name, pattern) or fnmatch.fnmatchcase(
        plain_body_name(body_name), ambf_name(pattern)
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
            mask[b] = any(body_matches(name, pat) for pat in spec.sense_bodies)
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
