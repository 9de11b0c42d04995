"""The durable compaction lock as the runtime reads it before a new attempt. Layer: core.

Spec v0 §5.2 / v4 §5.2; reference `inspectCompactionEntryState` and `assertCompactionInactive`
(dsh-compaction-basic region).

The log itself is the lock: `compaction/start` is appended synchronously before summarization,
so the latest start/end marker says whether an attempt is open. A start that is still unmatched
but older than the latest `session/end-seed` belongs to an ended process lifecycle (a crash):
it is stale and does not block. The scan runs backwards and stops as soon as the three facts
(open turn, latest marker, latest end-seed) are known, as the reference does.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.io.generations import nested_streams


@dataclass(frozen=True, slots=True)
class EntryState:
    """What `inspectCompactionEntryState` reports for a log (prefix).

    `open_turn` is the raw `turn/start.data.turn` of an open turn (None when the latest turn
    boundary is a `turn/end` or there is none); `unmatched_start_seq` the seq of the latest marker
    when it is a `compaction/start`; `latest_end_seed_seq` the newest `session/end-seed`.
    """

    open_turn: Any
    unmatched_start_seq: int | None
    latest_end_seed_seq: int | None

    @property
    def lock_active(self) -> bool:
        """An unmatched start not followed by an end-seed: every entry point would say `busy`."""
        if self.unmatched_start_seq is None:
            return False
        return not (self.latest_end_seed_seq is not None
                    and self.latest_end_seed_seq > self.unmatched_start_seq)

    def as_json(self, *, version: int) -> dict[str, Any]:
        """The conformance shape (`unmatchedCompactionStartSeq` in v0, `...Start` in v4)."""
        key = "unmatchedCompactionStart" if nested_streams(version) else "unmatchedCompactionStartSeq"
        return {"openTurn": self.open_turn, key: self.unmatched_start_seq,
                "latestEndSeedSeq": self.latest_end_seed_seq, "lockActive": self.lock_active}


def inspect_compaction_entry_state(events: Sequence[dict[str, Any]],
                                   through: int | None = None) -> EntryState:
    """Scan `events[:through+1]` (default: all) backwards like the reference.

    `events` is seq-indexed (`events[i]["seq"] == i`); only event types and `turn/start.data.turn`
    are read.
    """
    last = len(events) - 1 if through is None else min(through, len(events) - 1)
    open_turn: Any = None
    turn_known = False
    unmatched: int | None = None
    marker_known = False
    end_seed: int | None = None
    for index in range(last, -1, -1):
        event = events[index]
        kind = event.get("type")
        if end_seed is None and kind == "session/end-seed":
            end_seed = index
        if not marker_known:
            if kind == "compaction/start":
                unmatched = index
                marker_known = True
            elif kind == "compaction/end":
                marker_known = True
        if not turn_known:
            if kind == "turn/start":
                data = event.get("data")
                open_turn = data.get("turn") if isinstance(data, dict) else None
                turn_known = True
            elif kind == "turn/end":
                turn_known = True
        if turn_known and marker_known and end_seed is not None:
            break
    return EntryState(open_turn, unmatched, end_seed)
