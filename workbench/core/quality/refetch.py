"""Re-fetch after compaction: tool calls that ask again for what a compaction hid. Layer: core.

A compaction *hid the answer* of a tool call when the call's message and its result are both
among the nodes it hid (directly, or inside a checkpoint it hid: the answers hidden by the
earlier compactions of its chain). Its *window* is every node appended after its replacement
and before the next compaction attempt starts (or the log ends). A **re-fetch** is a tool call
in the window whose tool and target (`facts.REFETCH_KEYS`: the path, command, query, pattern or
URL it names; the canonical arguments otherwise) equal those of a call whose answer it hid.
Its cost is its result node (what came back onto the surface), priced by each meter in the
ledger; a call without a logged result costs nothing.
"""
from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.quality.facts import NodeFacts
from workbench.core.timeline import SurfaceTimeline


@dataclass(frozen=True, slots=True)
class Refetch:
    """One repeated tool call: the compaction whose window holds it, the message `seq` making
    it, the tool and target, the call it repeats (`hidden_seq`: the message that made it) and
    its result node (None when none was logged)."""

    index: int
    compaction_id: Any
    seq: int
    call_id: str | None
    tool: str
    text: str
    hidden_seq: int
    result_seq: int | None


def windows(records: Sequence[Any], timeline: SurfaceTimeline
            ) -> list[tuple[int, tuple[int, ...]]]:
    """(record index, nodes appended in its window) for every landed compaction."""
    starts = sorted(r.start_seq for r in records)
    appended = timeline.appended_through(timeline.end_seq)
    out = []
    for index, record in enumerate(records):
        if record.replacement_seq is None or record.fold_shadowed_seqs is None:
            continue
        after = record.replacement_seq
        nxt = bisect_left(starts, after + 1)
        stop = starts[nxt] if nxt < len(starts) else timeline.end_seq + 1
        lo, hi = bisect_left(appended, after + 1), bisect_left(appended, stop)
        out.append((index, tuple(appended[lo:hi])))
    return out


def refetches(records: Sequence[Any], facts: NodeFacts, timeline: SurfaceTimeline,
              spans: Sequence[tuple[int, tuple[int, ...]]]) -> list[Refetch]:
    """Every re-fetch of every landed compaction, in compaction then seq order (module doc);
    `spans` are `windows(records, timeline)` whose nodes `facts` has read."""
    hidden_calls: dict[int, dict[tuple[str, str], int]] = {}
    out: list[Refetch] = []
    by_window = dict(spans)
    for index, record in enumerate(records):
        if index not in by_window:
            continue
        hidden = record.fold_shadowed_seqs
        hidden_set = set(hidden)
        keys: dict[tuple[str, str], int] = {}
        for seq in hidden:
            carried = hidden_calls.pop(seq, None)    # a checkpoint is hidden at most once
            if carried is not None:
                if len(carried) > len(keys):
                    carried, keys = keys, carried
                for key, value in carried.items():
                    keys.setdefault(key, value)
        for seq in hidden:
            for call in facts.calls.get(seq, ()):
                result = facts.result_of.get(call.call_id) if call.call_id else None
                if result is not None and result in hidden_set:
                    keys.setdefault((call.name, call.target), seq)
        hidden_calls[record.replacement_seq] = keys
        for seq in by_window[index]:
            for call in facts.calls.get(seq, ()):
                origin = keys.get((call.name, call.target))
                if origin is None:
                    continue
                result = facts.result_of.get(call.call_id) if call.call_id else None
                out.append(Refetch(index, record.compaction_id, seq, call.call_id, call.name,
                                   call.target, origin, result))
    return out
