"""The spanning tree that poses the bodies, chosen from the joint graph by one deterministic rule.

AMBF's joints are physics constraints, so a file may close loops (the dVRK parallelograms, the MTM's
parallel arm, linkages, bead chains). Bodies are posed along a spanning tree of the joint graph
(bodies are nodes, joints are undirected edges); every joint left out of the tree is a *closure
joint*: a constraint whose mismatch is reported, never used to pose a body.

The rule, per connected component of the graph:

1. **Root**: the first body (in file order, then listing order) that is no joint's child; when
   every body of the component is some joint's child (the component is all loops), its first body.
   The root sits at its ADF ``location`` times its file's root pose.
2. **Each other body** is reached by the chain from the root with, in this order of preference,
   (a) the fewest joints that hold a pose instead of defining a relation (``p2p``, springs,
   ``cone twist``, ``six dof``: revolute, prismatic and fixed joints define one), then (b) the
   fewest joints. Among equal chains, the last joint walked from its parent to its child wins
   over one walked backwards, then the joint listed first (file order, then the file's
   ``joints`` list) wins.
3. A tree joint walked from its child to its parent (when a component has a second body that is
   no joint's child, or by rule 2) poses the body through the inverse of the joint's relation
   (``reversed``).

Graph work only (no poses): plain Python at compile time.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

__all__ = ["SpanningTree", "spanning_tree"]


@dataclass(frozen=True)
class SpanningTree:
    """Result of :func:`spanning_tree` for ``B`` bodies and ``J`` joints.

    ``order (B,)``: body indices, every body after the body it is posed from (roots first in
    their component). Per body (``(B,)``): ``parent_joint`` (the tree joint that poses it, -1 for
    a root), ``parent_body`` (the body it is posed from, -1 for a root), ``reversed`` (True when
    the body is the joint's *parent* side, posed through the inverse relation). ``roots``: root
    body indices, ascending. ``closure (J,) bool``: joints not in the tree. All index arrays int64.
    """

    order: np.ndarray
    parent_joint: np.ndarray
    parent_body: np.ndarray
    reversed: np.ndarray
    roots: np.ndarray
    closure: np.ndarray


def _components(n_bodies: int, ends) -> list:
    """Component label (its smallest body index) per body, joints taken as undirected edges."""
    label = list(range(n_bodies))

    def find(x):
        while label[x] != x:
            label[x] = label[label[x]]
            x = label[x]
        return x

    for p, c in ends:
        a, b = find(p), find(c)
        if a != b:
            label[max(a, b)] = min(a, b)
    return [find(x) for x in range(n_bodies)]


def spanning_tree(n_bodies: int, parent, child, defines_relation) -> SpanningTree:
    """The spanning tree of the module docstring.

    ``parent (J,)``, ``child (J,)``: body indices of each joint (in joint order);
    ``defines_relation (J,) bool``: True for revolute, prismatic and fixed joints.
    """
    parent = [int(x) for x in parent]
    child = [int(x) for x in child]
    relation = [bool(x) for x in defines_relation]
    n_joints = len(parent)
    incident = [[] for _ in range(n_bodies)]  # (joint, other body, reversed) in joint order
    for k in range(n_joints):
        incident[parent[k]].append((k, child[k], False))
        incident[child[k]].append((k, parent[k], True))
    is_child = [False] * n_bodies
    for c in child:
        is_child[c] = True
    label = _components(n_bodies, zip(parent, child))
    root_of: dict = {}
    for b in range(n_bodies):  # ascending: the first body of a component comes first
        if label[b] not in root_of or (is_child[root_of[label[b]]] and not is_child[b]):
            root_of[label[b]] = b
    roots = sorted(root_of.values())

    parent_joint = np.full(n_bodies, -1, dtype=np.int64)
    parent_body = np.full(n_bodies, -1, dtype=np.int64)
    reversed_ = np.zeros(n_bodies, dtype=bool)
    in_tree = [False] * n_joints
    order = []
    done = [False] * n_bodies
    # Dijkstra over the lexicographic cost (held joints, joints); the heap key then holds the
    # last joint's direction (False: parent to child) and index, which decide equal-cost chains.
    heap = [(0, 0, False, -1, r, -1) for r in roots]
    heapq.heapify(heap)
    while heap:
        held, depth, rev, k, b, via = heapq.heappop(heap)
        if done[b]:
            continue
        done[b] = True
        order.append(b)
        if k >= 0:
            parent_joint[b], parent_body[b], reversed_[b] = k, via, rev
            in_tree[k] = True
        for j, other, rev_j in incident[b]:
            if not done[other]:
                heapq.heappush(heap, (held + (not relation[j]), depth + 1, rev_j, j, other, b))
    return SpanningTree(
        order=np.array(order, dtype=np.int64),
        parent_joint=parent_joint,
        parent_body=parent_body,
        reversed=reversed_,
        roots=np.array(roots, dtype=np.int64),
        closure=~np.array(in_tree, dtype=bool).reshape(n_joints),
    )
