"""Tool-pairing balance of the cuts between surface nodes. Layer: core.

Spec v0 §5.3 ("Tool balance of the cut before position p"); reference `eventDelta`,
`extendCache`, `cutBalance`, `toolPairingBalancedBefore/After` (dsh-compaction tool-pairing).

A compaction may only cut the surface where no advertised tool call is still waiting for its
result: walking the surface in order, an `assistant/message` node adds its number of `tool-call`
blocks, a `tool/result` node subtracts one, and a cut is balanced when the running sum is 0.
Turn and step markers play no part. A negative sum means a result whose call is no longer on the
surface (for example the fold let a user/message replace the assistant node): the reference
treats the whole surface as corrupt and raises, and so do we.

`cut_balanced(nodes, events)[p]` is the cut *before* node `p`; the last entry is the cut after
the last node, so the list has `len(nodes) + 1` entries and always starts with True.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError


class ToolPairingError(WorkbenchError):
    """The surface is corrupt for tool pairing; `message` is the reference's exact text."""

    def __init__(self, seq: Any, message: str) -> None:
        super().__init__(message)
        self.seq = seq
        self.message = message


def event_delta(event: Mapping[str, Any]) -> int:
    """How one surface event changes the number of open tool calls (reference `eventDelta`)."""
    kind = event.get("type")
    if kind == "tool/result":
        return -1
    if kind != "assistant/message":
        return 0
    data = event.get("data")
    message = data.get("message") if isinstance(data, dict) else None
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if isinstance(b, dict) and b.get("type") == "tool-call")


def cut_balanced(nodes: Sequence[int], events: Sequence[Mapping[str, Any]]) -> tuple[bool, ...]:
    """Balance of every cut of the surface `nodes` (seqs into the seq-indexed `events`).

    Raises `ToolPairingError` with the reference's message for a node without its event or a
    result without an open call.
    """
    count = len(events)

    def delta(seq: Any) -> int | None:
        event = events[seq] if isinstance(seq, int) and 0 <= seq < count else None
        return None if event is None or event.get("seq") != seq else event_delta(event)
    return cuts_from_deltas(nodes, delta)


def cuts_from_deltas(nodes: Sequence[int], delta: Callable[[Any], int | None]
                     ) -> tuple[bool, ...]:
    """`cut_balanced` of `nodes` given each node's `event_delta` (`delta(seq)`; None: no
    matching session event): the one walk of the rule, whatever holds the deltas."""
    out = [True]
    open_calls = 0
    for seq in nodes:
        step = delta(seq)
        if step is None:
            msg = (f"tool-pairing balance: surface seq {seq} has no matching session event "
                   "(corrupt surface)")
            raise ToolPairingError(seq, msg)
        open_calls += step
        if open_calls < 0:
            msg = (f"tool-pairing balance: tool/result at surface seq {seq} has no matching "
                   "tool-call (corrupt surface)")
            raise ToolPairingError(seq, msg)
        out.append(open_calls == 0)
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ToolPairing:
    """Cut balance of one surface with O(1) lookups by seq (reference balance cache)."""

    nodes: tuple[int, ...]
    balanced: tuple[bool, ...]
    index: Mapping[int, int]

    @classmethod
    def of(cls, nodes: Sequence[int], events: Sequence[Mapping[str, Any]]) -> ToolPairing:
        nodes = tuple(nodes)
        return cls(nodes, cut_balanced(nodes, events), {s: i for i, s in enumerate(nodes)})

    def _cut(self, seq: int, offset: int) -> bool:
        index = self.index.get(seq)
        if index is None:
            raise ToolPairingError(seq, f"tool-pairing balance: surface seq {seq} not found")
        return self.balanced[index + offset]

    def balanced_before(self, seq: int) -> bool:
        """`toolPairingBalancedBefore`: no unanswered call crosses the cut before `seq`."""
        return self._cut(seq, 0)

    def balanced_after(self, seq: int) -> bool:
        """`toolPairingBalancedAfter`: no unanswered call crosses the cut after `seq`."""
        return self._cut(seq, 1)
