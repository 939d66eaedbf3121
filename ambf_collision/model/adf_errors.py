"""The loader's error and warning: both name the file, the entry and the key they concern."""

from __future__ import annotations

__all__ = ["AdfError", "AdfWarning"]


class _Located:
    """``file``, ``entry`` (e.g. ``BODY Wrist``), ``key`` (e.g. ``'collision geometry'.radius``)
    and ``message``; ``str()`` is one line naming the parts that are not empty. Picklable (a
    loader run in another process hands its errors and warnings back)."""

    def __init__(self, file: str, entry: str, key: str, message: str):
        self.file, self.entry, self.key, self.message = str(file), str(entry), str(key), str(message)
        parts = [p for p in (self.file, self.entry, self.key) if p]
        super().__init__(": ".join(parts + [self.message]))

    def __reduce__(self):
        return type(self), (self.file, self.entry, self.key, self.message)


class AdfError(_Located, ValueError):
    """Bad ADF input: something AMBF refuses too, or that makes the geometry meaningless."""


class AdfWarning(_Located, UserWarning):
    """Something in an ADF file that this project cannot honour, reads leniently as AMBF does,
    or that leaves a body without collision. Issued through :func:`warnings.warn` once per file,
    key and message, when the file has loaded; ``entry`` then names every entry it concerns (the
    first four and the count of the others: ``BODY a, BODY b, BODY c, BODY d and 17 more``)."""
