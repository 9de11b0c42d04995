"""The surface replay and compaction-bracket rules of the v4 lifecycle state machine
(`workbench.core.lifecycle`). Layer: core (pure; imports io only).

`SurfaceRules` is a mixin of `Lifecycle`: it keeps the machine's own copy of the surface (its
`workbench.core.surface_order.SurfaceOrder`, the protected system head) and checks each replacement against it (range on the
current surface, every shadowed node cited, the head never shadowed), and the compaction brackets
(owned by the open turn, no overlap, at most one summary, spans naming an exact current surface
span). State lives on the `Lifecycle` instance.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.core.lifecycle_values import (
    Violation,
    array,
    count,
    earlier,
    get,
    record,
    same,
    strict_list_equal,
    text,
)
from workbench.core.surface_order import SurfaceOrder
from workbench.io.jsjson import ABSENT


class SurfaceRules:
    """Surface replay and compaction brackets (module doc)."""

    order: SurfaceOrder
    protected_head: Any
    compaction: dict | None
    turn: Any

    def _fold_surface(self, event: Mapping[str, Any], kind: str, seq: Any) -> None:
        order = self.order
        surface = order.nodes
        if kind == "system/message" and surface and self.protected_head is ABSENT:
            raise Violation("system/message requires a protected first surface head")
        op = event.get("surfaceOp", ABSENT)
        if type(op) is str and op == "append":
            if kind == "system/message" and not surface:
                self.protected_head = seq
            order.append(seq)
            return
        operation = record(op, f"{kind} surfaceOp")
        first = order.get(earlier(get(operation, "startSeq"), seq, "replacement start"), -1)
        last = order.get(earlier(get(operation, "endSeq"), seq, "replacement end"), -1)
        if first < 0 or last < first:
            raise Violation(f"{kind} replacement range is not on the current surface")
        removed = surface[first:last + 1]
        sources = array(event.get("sourceEventSeqs", ABSENT), "replacement sourceEventSeqs")
        cited = {s for s in sources if type(s) in (int, float)}
        if any(s not in cited for s in removed):
            raise Violation("replacement sourceEventSeqs omit a shadowed surface node")
        head = self.protected_head
        if head is not ABSENT and head in removed:
            if kind != "system/message" or len(removed) != 1:
                raise Violation("surface replacement cannot shadow the protected system head")
            self.protected_head = seq
        order.replace(first, last, seq)

    def _compact(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if kind in ("compaction/prune", "compaction/summary"):
            self._span(kind, seq, data)
        if kind == "compaction/prune":
            return
        if kind == "compaction/start":
            if self.compaction is not None:
                raise Violation("compaction/start overlaps an open compaction")
            turn = get(data, "turn")
            owner = None if turn is None else count(turn, "compaction turn")
            if not same(owner, self.turn):
                raise Violation("compaction/start does not match the open turn")
            self.compaction = {"id": text(get(data, "compactionId"), "compactionId"),
                               "command": get(data, "sourceCommandId"), "turn": owner, "seq": seq,
                               "summarized": False}
            return
        current = self._compaction_owner(data, kind)
        if not same(current["turn"], self.turn):
            raise Violation(f"{kind} does not match the open turn")
        if kind == "compaction/summary":
            if current["summarized"]:
                raise Violation("compaction/summary repeats")
            current["summarized"] = True
        else:
            if not same(get(data, "turn"), current["turn"]):
                raise Violation("compaction/end changes its owner turn")
            if "error" not in data and not current["summarized"]:
                raise Violation("successful compaction/end requires one summary")
            self.compaction = None

    def _compaction_owner(self, data: dict, subject: str) -> dict:
        current = self.compaction
        if (current is None or not same(current["id"], get(data, "compactionId"))
                or not same(current["command"], get(data, "sourceCommandId"))):
            raise Violation(f"{subject} has no matching compaction/start")
        return current

    def _span(self, kind: str, seq: Any, data: dict) -> None:
        span = record(get(data, "shadowedRange"), "compaction shadowedRange")
        start = self.order.get(earlier(get(span, "start"), seq, "compaction range start"), -1)
        end = self.order.get(earlier(get(span, "end"), seq, "compaction range end"), -1)
        seqs = array(get(data, "shadowedSeqs"), "compaction shadowedSeqs")
        if start < 0 or end < start or not strict_list_equal(self.order.nodes[start:end + 1], seqs):
            raise Violation(f"{kind} shadowedSeqs do not name an exact current surface span")
        if self.protected_head is not ABSENT and any(same(s, self.protected_head) for s in seqs):
            raise Violation("compaction cannot shadow the protected system head")
