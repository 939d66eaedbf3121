"""Small helpers shared by the message writers and the CDR serializers (``convert.py``,
``convert_probes.py``): sanitising numbers for messages, CDR strings and alignment."""

from __future__ import annotations

import math
import struct

import numpy as np

HEAD = struct.Struct("<iI")  # stamp sec, nanosec
U32 = struct.Struct("<I")


def finite_rows(a) -> list:
    """``a`` as nested Python lists with every non-finite value replaced by 0."""
    a = np.asarray(a, dtype=float)
    if not np.isfinite(a).all():
        a = np.where(np.isfinite(a), a, 0.0)
    return a.tolist()


def message_distance(d: float) -> float:
    """A distance for a message: finite or +inf (NaN and -inf become +inf: "nothing known")."""
    return d if (d == d and d != -math.inf) else math.inf


def align(x: int, a: int) -> int:
    return (x + a - 1) // a * a


def cdr_string(s: str) -> bytes:
    b = s.encode("utf-8")
    return len(b + b"\0").to_bytes(4, "little") + b + b"\0"
