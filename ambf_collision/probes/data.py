"""Per-cycle probe data: the buffers one evaluation writes, and the result view of them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ambf_collision.probes.layout import data_sizes, data_views

__all__ = ["ProbeData", "ProbeResult"]


@dataclass
class ProbeResult:
    """Per-probe and per-patch state of the last evaluation (world frame unless stated; SI).

    The arrays are views of one :class:`ProbeData`'s buffers, overwritten by its next
    evaluation (copy what you keep; do not write into them). Probe ``i`` is ``names[i]`` on
    body ``body[i]``; patch ``j`` is ``patch_names[j]``. Semantics: ``probes/spec.py``.
    """

    names: list
    body: list  # qualified body name per probe
    position: np.ndarray  # (N, 3) m, probe centre
    normal: np.ndarray  # (N, 3) unit sensor normal
    in_contact: np.ndarray  # (N,) bool, the contact state (thresholds, kept between cycles)
    depth: np.ndarray  # (N,) m, largest d_pen (0 when nothing touches)
    area: np.ndarray  # (N,) m^2
    force: np.ndarray  # (N, 3) N
    force_body: np.ndarray  # (N, 3) N, in the probe's body frame
    contact_normal: np.ndarray  # (N, 3) unit normal of the deepest contact (0 when none)
    touching_shape: np.ndarray  # (N,) int64 shape index of the deepest contact, -1 none
    touching_body: np.ndarray  # (N,) int64 body index of the deepest contact, -1 none
    distance: np.ndarray  # (N,) m, smallest gap d_surf - r within range, +inf beyond
    patch_names: list
    patch_force: np.ndarray  # (Q, 3) N
    patch_area: np.ndarray  # (Q,) m^2
    patch_in_contact: np.ndarray  # (Q,) int64, number of probes in contact
    patch_force_body: np.ndarray  # (Q, 3) N, in the patch body's frame
    patch_torque_body: np.ndarray  # (Q, 3) N m about the patch origin, patch body's frame
    pairs_checked: int = 0  # exact (probe, shape) distance queries of the evaluation
    # float buffers of which every float field but ``distance`` is a view, and nothing else:
    # finite buffers <=> finite fields (the monitor's NaN guard tests one isfinite per buffer)
    finite_buffers: tuple = ()


class ProbeData:
    """The buffers of one evaluation of a :class:`~ambf_collision.probes.compiled.ProbeModel`
    (``probes.create_data()``): two ProbeData of one model never interfere. ``result`` is the
    :class:`ProbeResult` view of them; ``in_contact`` is also the contact state that the
    thresholds carry from one evaluation to the next. Buffer layout: ``probes/layout.py``."""

    def __init__(self, probes):
        n, c, s, q = (int(v) for v in probes.ints[:4])
        n_floats, n_distance, n_ints, n_contact, n_scratch = data_sizes.py_func(n, c, s, q)
        self.floats = np.zeros(n_floats)
        self.distance = np.full(n_distance, np.inf)
        self.ints = np.zeros(n_ints, dtype=np.int64)
        self.in_contact = np.zeros(n_contact, dtype=bool)
        self.scratch = np.zeros(n_scratch)
        v = data_views.py_func(probes.ints, self.floats, self.distance, self.ints, self.in_contact,
                       self.scratch)
        v.touching_shape[:] = -1
        v.touching_body[:] = -1
        self.result = ProbeResult(
            names=probes.names, body=probes.bodies, position=v.position, normal=v.normal,
            in_contact=v.in_contact, depth=v.depth, area=v.area, force=v.force,
            force_body=v.force_body, contact_normal=v.contact_normal,
            touching_shape=v.touching_shape, touching_body=v.touching_body,
            distance=v.distance, patch_names=probes.patch_names, patch_force=v.patch_force,
            patch_area=v.patch_area, patch_in_contact=v.patch_in_contact,
            patch_force_body=v.patch_force_body, patch_torque_body=v.patch_torque_body,
            finite_buffers=(self.floats,))

    def reset_contact_state(self):
        """Forget the contact state: the next evaluation enters contact by
        ``contact_threshold`` alone."""
        self.in_contact[:] = False
