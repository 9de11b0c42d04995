"""`SurfaceOrder` answers exactly as the reference's own position maps do, on any entries.

The references are the two dict forms of `workbench.core.surface_order` (renumbered from a
splice that changes the length, or each node at its first occurrence), run beside the order on
random appends and splices: mostly increasing int seqs (the keyed form), with repeated seqs,
floats equal to ints, booleans and strings mixed in (the reference form from there on).
"""
from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.surface_order import SurfaceOrder

_ODD = (3, 3.0, True, 1, "a", 0.5, -1)
"""Entries that break the keyed form's invariant (repeats, non-ints, smaller ints)."""


class _Reference:
    def __init__(self, first: bool) -> None:
        self.nodes: list[Any] = []
        self.map: dict[Any, int] = {}
        self.first = first

    def append(self, node: Any) -> None:
        self.map.setdefault(node, len(self.nodes))
        self.nodes.append(node)

    def replace(self, i: int, j: int, node: Any) -> None:
        removed = self.nodes[i:j + 1]
        self.nodes[i:j + 1] = [node]
        if self.first:
            self.map = {}
            for k, s in enumerate(self.nodes):
                self.map.setdefault(s, k)
            return
        for gone in removed:
            self.map.pop(gone, None)
        if len(removed) != 1:
            for k in range(i, len(self.nodes)):
                self.map[self.nodes[k]] = k
        else:
            self.map[node] = i


_OPS = st.lists(st.tuples(st.sampled_from("aaar"), st.integers(0, 40), st.integers(0, 40),
                          st.integers(0, 30)), max_size=60)


@settings(max_examples=400, deadline=None)
@given(ops=_OPS, first=st.booleans())
def test_the_order_answers_as_the_reference(ops: list[tuple[str, int, int, int]], first: bool) -> None:
    order, reference = SurfaceOrder(first=first), _Reference(first)
    seq = 0
    asked: set[Any] = set(_ODD)
    for kind, a, b, odd in ops:
        seq += 1
        node = _ODD[odd] if odd < len(_ODD) else seq
        asked.add(node)
        if kind == "a" or not reference.nodes:
            order.append(node)
            reference.append(node)
        else:
            i, j = sorted((a % len(reference.nodes), b % len(reference.nodes)))
            order.replace(i, j, node)
            reference.replace(i, j, node)
        assert order.nodes == reference.nodes and len(order) == len(reference.nodes)
        for value in asked | set(reference.nodes):
            assert order.get(value) == reference.map.get(value, -1), (value, ops)
            assert (value in order) == (value in reference.map)
        copied = order.copy()
        assert copied.nodes == order.nodes and copied.nodes is not order.nodes
        assert all(copied.get(v) == order.get(v) for v in asked)


def test_front_splices_keep_the_keyed_form() -> None:
    """Replacing the first two nodes of a long surface again and again never renumbers it."""
    order = SurfaceOrder()
    for s in range(1000):
        order.append(s)
    seq = 1000
    for _ in range(300):
        order.replace(0, 1, seq)
        seq += 1
    assert order._keyed and len(order) == 700
    assert order.get(seq - 1) == 0 and order.get(999) == 699 and order.get(0) == -1
    assert [order.get(n) for n in order.nodes] == list(range(700))


def test_an_unhashable_node_raises_as_a_dict_does() -> None:
    order = SurfaceOrder()
    order.append(1)
    try:
        order.get([1])
    except TypeError as exc:
        assert "unhashable" in str(exc)
    else:  # pragma: no cover
        raise AssertionError("a list looked up")
