"""A flat axis-aligned bounding-box tree over triangles, built top-down with vectorised NumPy.

Layout (:class:`Bvh`), node 0 the root, children after their parent:

- ``boxes`` (n, 6) float64: ``(lo_x, lo_y, lo_z, hi_x, hi_y, hi_z)`` in m, the mesh frame; each
  box is the exact min/max of its triangles' vertex coordinates (no rounding: the boxes contain
  their triangles exactly);
- ``nodes`` (n, 2) int32: ``(first, count)``. ``count == 0``: an inner node whose children are
  ``first`` and ``first + 1``; ``count > 0``: a leaf of the triangles ``first .. first + count - 1``
  (rows of the faces once reordered by the ``order`` :func:`build_bvh` returns).

Build: a node of more than ``LEAF_SIZE`` triangles splits at the median of its triangles'
centroids along the widest axis of their centroid box, left half ``size // 2``. All nodes of one
level split at once: their triangle ranges are gathered into one padded (nodes, widest) matrix
and partitioned by ``numpy.argpartition`` along its rows (with ``kth`` every distinct half and
last valid position, so that each row's own median is in place and the padding stays at the
end). The tree is balanced: depth ``ceil(log2(M / LEAF_SIZE)) + 1`` at most (23 for 5,000,000
triangles), which the queries' fixed stacks rely on (``MAX_DEPTH``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["Bvh", "build_bvh", "LEAF_SIZE", "MAX_DEPTH"]

LEAF_SIZE = 4
"""Triangles per leaf at most (a leaf has ``(LEAF_SIZE + 1) // 2`` or more, unless the mesh is
smaller): 4 balances the box tests against the triangle tests of a point query."""

MAX_DEPTH = 48
"""Levels the queries' stacks are sized for; a balanced tree of 2**40 triangles has fewer."""


class Bvh:
    """``boxes`` (n, 6) float64 and ``nodes`` (n, 2) int32 (module docstring), and ``depth``."""

    def __init__(self, boxes: np.ndarray, nodes: np.ndarray, depth: int):
        self.boxes = boxes
        self.nodes = nodes
        self.depth = depth
        boxes.flags.writeable = False
        nodes.flags.writeable = False

    def nbytes(self) -> int:
        """Bytes of the two arrays."""
        return self.boxes.nbytes + self.nodes.nbytes


def build_bvh(V: np.ndarray, F: np.ndarray, leaf_size: int = LEAF_SIZE) -> tuple[Bvh, np.ndarray]:
    """The tree over triangles ``F`` (M, 3) of vertices ``V`` (N, 3), and ``order`` (M,) int64:
    row ``i`` of the reordered faces is ``F[order[i]]``. Raises ``ValueError`` for M = 0."""
    M = len(F)
    if M == 0:
        raise ValueError("no triangles")
    # 3 x the centroids, rounded to float32: they only choose the splits (any split is valid)
    cent = (V[F[:, 0]] + V[F[:, 1]] + V[F[:, 2]]).astype(np.float32)
    order = np.arange(M, dtype=np.int64)
    firsts, counts, levels = [], [], []
    start, size, ids = np.zeros(1, np.int64), np.full(1, M, np.int64), np.zeros(1, np.int64)
    next_id = 1
    while len(ids):
        levels.append(ids)
        split = size > leaf_size
        n_split = int(split.sum())
        first = np.where(split, 0, start)
        first[split] = next_id + 2 * np.arange(n_split)
        firsts.append(first)
        counts.append(np.where(split, 0, size))
        next_id += 2 * n_split
        if n_split == 0:
            break
        s, n = start[split], size[split]
        _partition_level(cent, order, s, n)
        half = n // 2
        start = np.stack([s, s + half], axis=1).ravel()
        size = np.stack([half, n - half], axis=1).ravel()
        ids = np.stack([first[split], first[split] + 1], axis=1).ravel()
    n_nodes = next_id
    nodes = np.zeros((n_nodes, 2), dtype=np.int32)
    for ids, first, count in zip(levels, firsts, counts):
        nodes[ids, 0] = first
        nodes[ids, 1] = count
    boxes = _boxes(V, F[order], nodes, levels)
    return Bvh(boxes, nodes, len(levels)), order


def _partition_level(cs: np.ndarray, order: np.ndarray, start: np.ndarray, size: np.ndarray):
    """Reorder ``order[start_i : start_i + size_i]`` of every node ``i`` (ranges ascending,
    disjoint), and the centroids ``cs`` (rows in ``order``'s order) with it, so that its first
    ``size_i // 2`` triangles have centroids at or below the median along the node's widest
    centroid axis, the rest at or above it (in place)."""
    n, total = len(size), int(size.sum())
    offset = np.cumsum(size) - size                      # where each node starts in `pos`
    pos = np.arange(total) + np.repeat(start - offset, size) if total < len(order) else slice(None)
    c = cs[pos]                                          # (total, 3), node by node
    lo = np.minimum.reduceat(c, offset, axis=0)
    hi = np.maximum.reduceat(c, offset, axis=0)
    axis = np.repeat(np.argmax(hi - lo, axis=1), size)
    key = c.ravel()[3 * np.arange(total) + axis]
    W = int(size.max())
    if W * n == total:                                   # equal sizes: no padding
        p = np.argpartition(key.reshape(n, W), W // 2, axis=1) + offset[:, None]
        perm = p.ravel()
    else:                                                # sizes W and W - 1: pad with +inf
        short = np.flatnonzero(size < W)
        padded = np.insert(key, offset[short] + size[short], np.inf).reshape(n, W)
        p = np.argpartition(padded, np.unique(np.r_[size // 2, size - 1]), axis=1)
        perm = (p + offset[:, None])[np.arange(W)[None, :] < size[:, None]]
    order[pos] = order[pos][perm]
    cs[pos] = c[perm]


def _boxes(V: np.ndarray, F: np.ndarray, nodes: np.ndarray, levels: list) -> np.ndarray:
    """Exact boxes: leaves from their triangles' vertices, inner nodes from their children."""
    a, b, c = V[F[:, 0]], V[F[:, 1]], V[F[:, 2]]
    tlo = np.minimum(np.minimum(a, b), c)
    thi = np.maximum(np.maximum(a, b), c)
    boxes = np.empty((len(nodes), 6))
    leaves = np.flatnonzero(nodes[:, 1] > 0)
    leaves = leaves[np.argsort(nodes[leaves, 0])]
    starts = nodes[leaves, 0]
    boxes[leaves, :3] = np.minimum.reduceat(tlo, starts, axis=0)
    boxes[leaves, 3:] = np.maximum.reduceat(thi, starts, axis=0)
    for ids in reversed(levels):
        inner = ids[nodes[ids, 1] == 0]
        left = nodes[inner, 0]
        boxes[inner, :3] = np.minimum(boxes[left, :3], boxes[left + 1, :3])
        boxes[inner, 3:] = np.maximum(boxes[left, 3:], boxes[left + 1, 3:])
    return boxes
