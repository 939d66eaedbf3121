"""Nothing the monitor publishes is NaN (no ROS).

The compiled core returns finite values; these guards make sure that a fault there never reaches
a controller as NaN: a contact with a non-finite value in its row (distance, points, normal,
and the controller outputs: its Jacobian, distance rate, body-frame points) is dropped, a
non-finite minimum distance is recomputed from the finite pair distances, a probe with a
non-finite value is reported out of contact with zeros. The caller counts and logs what was
changed.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["PROBE_FIELDS", "finite_contacts", "finite_min_distance", "sanitize_probes"]

PROBE_FIELDS = ("depth", "area", "force", "force_body", "contact_normal", "position", "normal")
PATCH_FIELDS = ("patch_force", "patch_area", "patch_force_body", "patch_torque_body")


def finite_contacts(info: list, rows: np.ndarray, *per_contact) -> tuple:
    """``(info, rows, number dropped, *per_contact)`` of the contacts whose row is all finite:
    ``info`` their ``(body_1, body_2, shape_1, shape_2)``, ``rows (n, 20 + J)`` their values
    (distance, world vectors, Jacobian, rate, body-frame points: ``model/contact_rows.py``),
    ``per_contact``: more ``(n,)`` arrays kept alike (times, flags); the order is kept (closest
    first). The usual cycle, all finite, costs one sum: a finite sum has finite terms (a sum
    that overflows only sends finite rows the long way)."""
    if not len(info) or math.isfinite(np.add.reduce(rows, axis=None)):
        return (info, rows, 0, *per_contact)
    keep = np.isfinite(rows).all(axis=1)
    kept = [who for who, k in zip(info, keep.tolist()) if k]
    return (kept, rows[keep], len(info) - len(kept), *(a[keep] for a in per_contact))


def _number(x) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def finite_min_distance(min_distance, distances) -> tuple:
    """``(value, recomputed)``: ``min_distance`` (m) when it is a number or +inf, else the
    smallest finite value of ``distances`` (+inf when there is none)."""
    md = _number(min_distance)
    if not (math.isnan(md) or md == -math.inf):
        return md, False
    d = np.asarray(distances, dtype=float).ravel()
    d = d[np.isfinite(d)]
    return (float(d.min()) if d.size else math.inf), True


def _arrays(pr, names):
    return [(n, a) for n, a in ((n, getattr(pr, n, None)) for n in names)
            if isinstance(a, np.ndarray) and a.ndim >= 1]


def sanitize_probes(pr) -> int:
    """Zero the non-finite values of a probe result in place; returns how many probes and
    patches were touched.

    A probe with any non-finite value in :data:`PROBE_FIELDS` (or a NaN / -inf ``distance``;
    +inf means "beyond range" and is legal) gets zeros in those fields, ``distance`` +inf and
    ``in_contact`` False. A non-finite patch value (:data:`PATCH_FIELDS`) is zeroed. When the
    result names the few buffers its float fields are views of (``finite_buffers``), those are
    tested first: the usual all-finite cycle costs one sum per buffer.
    """
    buffers = getattr(pr, "finite_buffers", None)
    distance = getattr(pr, "distance", None)
    has_distance = isinstance(distance, np.ndarray) and distance.ndim == 1
    # a finite sum has finite terms (a sum that overflows only sends a finite buffer the long
    # way); NaN propagates through the minimum, and -inf is the minimum when present
    if buffers and all(math.isfinite(np.add.reduce(b, axis=None)) for b in buffers):
        lo = float(np.minimum.reduce(distance)) if has_distance and distance.size else 0.0
        if lo == lo and lo != -math.inf:
            return 0
    patches = 0
    for _, arr in _arrays(pr, PATCH_FIELDS):
        bad = ~np.isfinite(arr)
        if bad.any():
            patches += int(bad.reshape(arr.shape[0], -1).any(axis=1).sum())
            arr[bad] = 0.0
    fields = _arrays(pr, PROBE_FIELDS)
    n = len(distance) if has_distance else (fields[0][1].shape[0] if fields else 0)
    bad = np.zeros(n, dtype=bool)
    for _, arr in fields:
        if arr.shape[0] == n:
            bad |= ~np.isfinite(arr.reshape(n, -1)).all(axis=1)
    if has_distance:
        bad |= np.isnan(distance) | (distance == -np.inf)
    if not bad.any():
        return patches
    for _, arr in fields:
        if arr.shape[0] == n:
            arr[bad] = 0.0
    if has_distance:
        distance[bad] = np.inf
    in_contact = getattr(pr, "in_contact", None)
    if isinstance(in_contact, np.ndarray) and in_contact.shape[:1] == (n,):
        in_contact[bad] = False
    return int(bad.sum()) + patches
