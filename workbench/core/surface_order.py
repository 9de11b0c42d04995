"""`SurfaceOrder`: a surface's nodes in order, and each node's position. Layer: core (stdlib).

Every surface replay of the package (the fold, the lifecycle's replay, the token meter's price
fold, the log builder) keeps the model's surface as a list of nodes and asks for a node's
position: a replacement's endpoints, "is it on the surface". A replacement splices one node in
place of a range of positions. A seq → position map has to renumber every later node whenever
that range is not one node long, which is Python work proportional to the surface per
replacement (quadratic on a log of compactions at the front of a long surface). Here each node
has a *key* instead, and keys increase along the surface: an appended node's key is its seq, a
replacing node takes the key of the first node it replaces. A position is then a bisection of
the nodes by key, and a splice one list slice assignment (a memmove).

Invariant of that keyed form: the nodes on the surface are distinct, and an appended node is an
`int` greater than every key, as the seqs of any log that passed the seq rule are. The first
entry that would break it turns the order, for good, into the reference's own form: a node →
position dict kept as the reference keeps it. With `first=False` (the fold's and the
lifecycle's ``applySurfacePlan``) a splice that changes the length renumbers every node from
the splice on (the last of equal nodes winning) and an append keeps a node already mapped; with
`first=True` (the token meter's fold) each node maps to its first occurrence. While the nodes
are distinct the two forms give every answer alike (`tests/core/test_surface_order.py`).
"""
from __future__ import annotations

from bisect import bisect_left
from typing import Any


class SurfaceOrder:
    """The nodes of a surface in order (`nodes`: read it, change it only through this class)."""

    __slots__ = ("_first", "_keyed", "_map", "nodes")

    def __init__(self, *, first: bool = False) -> None:
        self.nodes: list[Any] = []
        self._map: dict[Any, int] = {}   # node → key (keyed form) or → position (reference form)
        self._keyed = True
        self._first = first

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: object) -> bool:
        return node in self._map

    def get(self, node: Any, default: int = -1) -> int:
        """The position of `node` on the surface, or `default` (an unhashable node raises
        `TypeError`, as a dict lookup does)."""
        at = self._map.get(node)
        if at is None:
            return default
        if not self._keyed:
            return at
        return bisect_left(self.nodes, at, key=self._map.__getitem__)

    def append(self, node: Any) -> None:
        """Put `node` at the end of the surface."""
        nodes, mapped = self.nodes, self._map
        if self._keyed:
            if type(node) is int and node not in mapped and (not nodes or node > mapped[nodes[-1]]):
                mapped[node] = node
                nodes.append(node)
                return
            mapped = self._unkey()
        mapped.setdefault(node, len(nodes))
        nodes.append(node)

    def replace(self, i: int, j: int, node: Any) -> None:
        """Put `node` in place of the nodes at positions `i..j` (``0 <= i <= j < len``)."""
        nodes, mapped = self.nodes, self._map
        removed = nodes[i:j + 1]
        if self._keyed:
            if node not in mapped or node in removed:
                key = mapped[removed[0]]
                for gone in removed:
                    del mapped[gone]
                nodes[i:j + 1] = [node]
                mapped[node] = key
                return
            mapped = self._unkey()
        nodes[i:j + 1] = [node]
        if self._first:
            mapped.clear()
            for k, s in enumerate(nodes):
                mapped.setdefault(s, k)
            return
        for gone in removed:
            mapped.pop(gone, None)
        if len(removed) != 1:
            for k in range(i, len(nodes)):
                mapped[nodes[k]] = k
        else:
            mapped[node] = i

    def copy(self) -> SurfaceOrder:
        """An independent copy."""
        other = SurfaceOrder(first=self._first)
        other.nodes, other._map, other._keyed = list(self.nodes), dict(self._map), self._keyed
        return other

    def _unkey(self) -> dict[Any, int]:
        """Turn to the reference form of the same surface (its nodes are distinct: module doc)."""
        self._map = {node: k for k, node in enumerate(self.nodes)}
        self._keyed = False
        return self._map


__all__ = ["SurfaceOrder"]
