"""Tokens hidden and added by each compaction, by every meter. Layer: core.

A summary compaction (v0 §5.1, v4 §5.1) logs `compaction/start`, `compaction/summary` (with
`shadowedSeqs`, `shadowedRange` and the heuristic `shadowedTokenCount`, §6.5), the replacement
surface event whose replace op names exactly `shadowedRange`, and `compaction/end` (with `error`
when it failed). A prune (§5.9) logs `compaction/prune` and then its `tool/result` replacement.

For each one, `compaction_tokens` reports the logged count beside each meter's count of the
shadowed nodes (*hidden*) and of the replacement node (*added*). For completed brackets the
`dsh` meter's hidden count equals the logged `shadowedTokenCount` (§6.5).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.surface_prices import replace_bounds
from workbench.errors import MeterError
from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import is_scalar


@dataclass(frozen=True)
class CompactionTokens:
    kind: str  # "summary" | "prune"
    compaction_id: Any
    seq: Any  # the compaction/summary or compaction/prune event
    replacement_seq: Any  # None when no replacement was logged
    status: str  # "completed" | "failed" | "interrupted" (summary); "completed" | "unreplaced" (prune)
    shadowed_seqs: tuple[Any, ...]
    logged_shadowed_tokens: Any
    hidden: dict[str, int] = field(default_factory=dict)
    added: dict[str, int] = field(default_factory=dict)


def _replacement_after(tokens: LogTokens, start_position: int, shadowed_range: Any) -> int | None:
    """Position of the first surface replace after `start_position` over exactly `shadowed_range`."""
    events = tokens.events
    if type(shadowed_range) is not dict:
        return None
    want = (shadowed_range.get("start", ABSENT), shadowed_range.get("end", ABSENT))
    surface = tokens.shape.surface
    for position in range(start_position + 1, len(events)):
        event = events[position]
        if type(event) is not dict:
            continue
        if event.get("type") in ("compaction/summary", "compaction/prune"):
            return None
        op = event.get("surfaceOp", ABSENT)
        if not surface[position] or op == "append" or op is ABSENT:
            continue
        try:
            bounds = replace_bounds(op, version=tokens.version)
        except MeterError:
            continue
        if bounds == want:
            return position
    return None


def compaction_tokens(tokens: LogTokens, meters: tuple[str, ...] = ("dsh",)) -> list[CompactionTokens]:
    """One row per `compaction/summary` and `compaction/prune`, in log order."""
    events = tokens.events
    ends: dict[Any, Any] = {}
    for event in events:
        if type(event) is dict and event.get("type") == "compaction/end":
            data = event.get("data") if type(event.get("data")) is dict else {}
            cid = data.get("compactionId")
            if is_scalar(cid):
                ends.setdefault(cid, data)
    rows: list[CompactionTokens] = []
    for position, event in enumerate(events):
        if type(event) is not dict or event.get("type") not in ("compaction/summary", "compaction/prune"):
            continue
        data = event.get("data") if type(event.get("data")) is dict else {}
        shadowed = data.get("shadowedSeqs")
        shadowed = tuple(shadowed) if type(shadowed) is list else ()
        replacement = _replacement_after(tokens, position, data.get("shadowedRange"))
        if event["type"] == "compaction/summary":
            kind, cid = "summary", data.get("compactionId")
            end = ends.get(cid) if is_scalar(cid) else None
            if end is None:
                status = "interrupted"
            else:
                status = "failed" if end.get("error", ABSENT) is not ABSENT else "completed"
        else:
            kind, cid = "prune", None
            status = "completed" if replacement is not None else "unreplaced"
        hidden, added = {}, {}
        for name in meters:
            prices = tokens.prices(name)
            total = 0
            for seq in shadowed:
                try:
                    total += int(prices[tokens.position_of(seq)])
                except MeterError:
                    continue
            hidden[name] = total
            if replacement is not None:
                added[name] = int(prices[replacement])
        rows.append(CompactionTokens(
            kind, cid, event.get("seq"), None if replacement is None else tokens.seq_of(replacement),
            status, shadowed, data.get("shadowedTokenCount"), hidden, added))
    return rows


__all__ = ["CompactionTokens", "compaction_tokens"]
