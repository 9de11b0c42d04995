"""One pass over a log's events into plain per-event arrays. Layer: frames (stdlib, numpy).

Every per-event frame column that only needs the event itself (and the turn/step it sits in)
comes from this single pass, so a 1.3M-event log is walked once, not once per column. Surface
facts (on the surface at the end, shadowed by whom) come from the core fold, prices from the core
meter; this module only reads envelopes and a few payload fields.

Turn and step are *structural*: the turn opened by the latest `turn/start` and not yet closed by
its `turn/end` (both boundary events included), likewise for steps (v0 spec §3.3). That is what
a reader groups by; it differs from `data.turn` only on pruned tool-result copies, which keep
the turn of the original result (v0 spec §5.9), and on between-turn events.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.frames.preview import event_preview


def as_int(value: Any) -> int | None:
    """A JS-number integer as a Python int (``3.0`` → 3); None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def seq_list(value: Any) -> list[int] | None:
    """A ``sourceEventSeqs``-like value as ints; v4 range pairs ``[a, b]`` expanded (v4 §1.4)."""
    if not isinstance(value, list):
        return None
    out: list[int] = []
    for item in value:
        if isinstance(item, list) and len(item) == 2:
            a, b = as_int(item[0]), as_int(item[1])
            if a is not None and b is not None and a <= b:
                out.extend(range(a, b + 1))
            continue
        v = as_int(item)
        if v is not None:
            out.append(v)
    return out


def message_of(event: Mapping[str, Any]) -> Any:
    """The message dict an event carries (user/message: `data`; others: `data.message`)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if event.get("type") == "user/message":
        return data
    return data.get("message")


@dataclass(frozen=True, slots=True)
class EventScan:
    """Per-event values of one pass, index = seq. Lists hold None where a value is missing."""

    n: int
    time: list[int | None]
    type: list[str]
    turn: list[int | None]
    step: list[int | None]
    role: list[str | None]
    message_id: list[str | None]
    source_kind: list[str | None]
    surface_op: list[str | None]
    replace_start: list[int | None]
    replace_end: list[int | None]
    source_seqs: list[list[int] | None]
    preview: list[str | None]

    @property
    def seq(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64)


def scan_events(events: Sequence[Mapping[str, Any]], *, has_times: bool = True) -> EventScan:
    """Walk `events` once. `has_times=False` (implicit seq/time, v0 §1.11) leaves times None."""
    n = len(events)
    time: list[int | None] = [None] * n
    types: list[str] = [""] * n
    turn: list[int | None] = [None] * n
    step: list[int | None] = [None] * n
    role: list[str | None] = [None] * n
    message_id: list[str | None] = [None] * n
    source_kind: list[str | None] = [None] * n
    surface_op: list[str | None] = [None] * n
    rstart: list[int | None] = [None] * n
    rend: list[int | None] = [None] * n
    sources: list[list[int] | None] = [None] * n
    preview: list[str | None] = [None] * n
    open_turn: int | None = None
    open_step: int | None = None
    for i, event in enumerate(events):
        etype = event.get("type")
        etype = etype if isinstance(etype, str) else str(etype)
        types[i] = etype
        if has_times:
            time[i] = as_int(event.get("time"))
        if etype == "turn/start":
            open_turn = as_int(_data(event).get("turn"))
            open_step = None
        elif etype == "step/start":
            open_step = as_int(_data(event).get("step"))
        turn[i] = open_turn
        step[i] = open_step
        if etype == "turn/end":
            open_turn = open_step = None
        elif etype == "step/end":
            open_step = None
        op = event.get("surfaceOp")
        if op is not None:
            if op == "append":
                surface_op[i] = "append"
            elif isinstance(op, dict) and op.get("op") == "replace":
                surface_op[i] = "replace"
                rstart[i] = as_int(op.get("startSeq", op.get("start")))
                rend[i] = as_int(op.get("endSeq", op.get("end")))
            message = message_of(event)
            if isinstance(message, dict):
                r, mid, src = message.get("role"), message.get("id"), message.get("source")
                role[i] = r if isinstance(r, str) else None
                message_id[i] = mid if isinstance(mid, str) else None
                if isinstance(src, dict) and isinstance(src.get("kind"), str):
                    source_kind[i] = src["kind"]
        if "sourceEventSeqs" in event:
            sources[i] = seq_list(event["sourceEventSeqs"])
        preview[i] = event_preview(event)
    return EventScan(n, time, types, turn, step, role, message_id, source_kind, surface_op,
                     rstart, rend, sources, preview)


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}
