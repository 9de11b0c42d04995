"""Which head-anchored span the next compaction would replace. Layer: core.

Spec v0 §5.3 / v4 §5.3; reference `selectCompactableRange` and `systemHead`
(dsh-compaction-basic region).

Walk the priced surface from the newest node backwards until the retained tail reaches
`retain_tokens` (so with 0 at least the last node stays), then move the cut earlier until it is
tool-balanced. Everything before the cut is the range. In v4 a `system/message` at node 0 is
the protected system head: the range starts after it, and reaching it means nothing to compact.
v0 has no system head, so the range may start at node 0.

The tool-balance cache covers the whole surface, so an orphan tool result anywhere raises
`ToolPairingError` as soon as the walk needs a balance (the reference behaves the same); a
retained tail that already swallows the whole surface returns None without asking.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.compaction.pairing import ToolPairing
from workbench.errors import InvalidArgument
from workbench.io.generations import system_node


@dataclass(frozen=True, slots=True)
class CompactableRange:
    """Inclusive positional span: first and last shadowed node seqs (start may be > end)."""

    start: int
    end: int

    def as_json(self) -> dict[str, int]:
        return {"start": self.start, "end": self.end}


def first_compactable_index(nodes: Sequence[int], events: Sequence[Mapping[str, Any]], *,
                            version: int) -> int:
    """1 when node 0 is a v3/v4 `system/message` (the protected head), else 0."""
    if system_node(version) and nodes and events[nodes[0]].get("type") == "system/message":
        return 1
    return 0


def select_compactable_range(nodes: Sequence[int], prices: Sequence[int],
                             events: Sequence[Mapping[str, Any]], *, version: int,
                             retain_tokens: int | float,
                             pairing: ToolPairing | None = None) -> CompactableRange | None:
    """The range a compaction with retained budget `retain_tokens` would select, or None.

    `prices[i]` is the meter's price of `nodes[i]` (heuristic node prices, v0 §6.4 / v4 §6.4).
    Raises `ToolPairingError` for a corrupt surface (see module doc).
    """
    if len(prices) != len(nodes):
        msg = "compaction: token-meter surface does not match the current session surface"
        raise InvalidArgument(msg)
    if not nodes:
        return None
    first = first_compactable_index(nodes, events, version=version)
    accumulated = 0
    keep_from = len(nodes)
    for index in range(len(nodes) - 1, -1, -1):
        accumulated += prices[index]
        keep_from = index
        if accumulated >= retain_tokens:
            break
    if keep_from <= first:
        return None
    if pairing is None:
        pairing = ToolPairing.of(nodes, events)
    while keep_from > first:
        if pairing.balanced_before(nodes[keep_from]):
            break
        keep_from -= 1
    if keep_from <= first:
        return None
    return CompactableRange(nodes[first], nodes[keep_from - 1])
