"""Renumbering real events into a counterfactual log. Layer: core (stdlib only).

A counterfactual drops some real events (compaction brackets it re-decides) and inserts new ones,
so every later real event gets a new seq, and every field that names a seq must follow: the
envelope `seq`, `sourceEventSeqs` (logical: its codec expanded the range pairs), replace
`surfaceOp` endpoints, and in `data`: `shadowedRange`, `shadowedSeqs`, `sourceEventSeq`
(`command/done`), `throughSeq` (delivery markers), `messageSeqs` (titles), `headerSeq`
(developer messages) and the `seq` of each `image/offload` target. These are all the seq references of format v4 (spec §1.4, §3, §4).

Invariant: an event whose new seq equals its old one and whose references all map to themselves is
returned as the same object (so an unchanged log writes back byte for byte); otherwise only the
dicts on the changed paths are copied, never the payloads. A reference to a dropped event is an
error (`DroppedReference`), except `throughSeq`, which names a log prefix and so maps to the
newest kept event at or before it.
"""
from __future__ import annotations

import bisect
from collections.abc import Mapping
from typing import Any

from workbench.errors import WorkbenchError


class WhatIfError(WorkbenchError):
    """A counterfactual that DSH could not have produced; the message names the rule."""


class DroppedReference(WhatIfError):
    """A kept event cites an event the counterfactual dropped."""


class SeqMap:
    """Real seq → counterfactual seq, filled in log order (`keep`, `drop`)."""

    def __init__(self) -> None:
        self._new: dict[int, int] = {}
        self._kept_old: list[int] = []
        self._kept_new: list[int] = []
        self.identity = True

    def keep(self, old: int, new: int) -> None:
        self._new[old] = new
        self._kept_old.append(old)
        self._kept_new.append(new)
        if old != new:
            self.identity = False

    def drop(self, old: int) -> None:
        self.identity = False

    def get(self, old: Any) -> Any:
        if type(old) is not int:
            return old
        new = self._new.get(old)
        if new is None:
            raise DroppedReference(f"a kept event cites seq {old}, which the counterfactual dropped")
        return new

    def floor(self, old: Any) -> Any:
        """The new seq of the newest kept event at or before `old` (for log-prefix references)."""
        if type(old) is not int:
            return old
        if old in self._new:
            return self._new[old]
        i = bisect.bisect_right(self._kept_old, old) - 1
        return self._kept_new[i] if i >= 0 else 0

    def has(self, old: int) -> bool:
        return old in self._new


def remap_event(event: Mapping[str, Any], new_seq: int, seqs: SeqMap) -> dict[str, Any]:
    """`event` renumbered to `new_seq` with every seq reference mapped (module doc)."""
    if seqs.identity and event.get("seq") == new_seq:
        return event  # type: ignore[return-value]
    out = dict(event)
    out["seq"] = new_seq
    get = seqs.get
    sources = event.get("sourceEventSeqs")
    if isinstance(sources, list):
        out["sourceEventSeqs"] = [get(s) for s in sources]
    op = event.get("surfaceOp")
    if isinstance(op, dict):
        out["surfaceOp"] = {k: (get(v) if k in ("startSeq", "endSeq") else v) for k, v in op.items()}
    data = event.get("data")
    if isinstance(data, dict):
        new_data = _remap_data(event.get("type"), data, seqs)
        if new_data is not data:
            out["data"] = new_data
    return out


def _remap_data(kind: Any, data: dict[str, Any], seqs: SeqMap) -> dict[str, Any]:
    get = seqs.get
    changes: dict[str, Any] = {}
    span = data.get("shadowedRange")
    if isinstance(span, dict):
        changes["shadowedRange"] = {k: (get(v) if k in ("start", "end") else v)
                                    for k, v in span.items()}
    if isinstance(data.get("shadowedSeqs"), list):
        changes["shadowedSeqs"] = [get(s) for s in data["shadowedSeqs"]]
    if kind == "command/done" and "sourceEventSeq" in data:
        changes["sourceEventSeq"] = get(data["sourceEventSeq"])
    if "throughSeq" in data:
        changes["throughSeq"] = seqs.floor(data["throughSeq"])
    if isinstance(data.get("messageSeqs"), list):
        changes["messageSeqs"] = [get(s) for s in data["messageSeqs"]]
    if kind == "developer/message" and "headerSeq" in data:
        changes["headerSeq"] = get(data["headerSeq"])
    if kind == "image/offload" and isinstance(data.get("targets"), list):
        changes["targets"] = [({**t, "seq": get(t.get("seq"))} if isinstance(t, dict) else t)
                              for t in data["targets"]]
    changes = {k: v for k, v in changes.items() if v != data[k]}
    return {**data, **changes} if changes else data


def shift_usage(event: Mapping[str, Any], delta: int) -> Mapping[str, Any]:
    """An `assistant/message` or `assistant/attempt` whose provider usage reports `delta` more
    prompt tokens (clamped at 0), in `data.usage` and in the stream's `usage` chunks alike, so
    the stream still assembles to the message. `delta == 0` returns the event itself."""
    data = event.get("data")
    if not delta or not isinstance(data, dict):
        return event

    def shifted(usage: Any) -> Any:
        if not isinstance(usage, dict) or type(usage.get("inputTokens")) is not int:
            return usage
        new_input = max(0, usage["inputTokens"] + delta)
        out = {**usage, "inputTokens": new_input}
        if type(usage.get("totalTokens")) is int:
            out["totalTokens"] = usage["totalTokens"] + new_input - usage["inputTokens"]
        return out

    new_data = dict(data)
    if "usage" in data:
        new_data["usage"] = shifted(data["usage"])
    stream = data.get("stream")
    if isinstance(stream, list):
        new_stream = []
        for record in stream:
            chunk = record.get("chunk") if isinstance(record, dict) else None
            if isinstance(chunk, dict) and chunk.get("type") == "usage":
                record = {**record, "chunk": {**chunk, "usage": shifted(chunk.get("usage"))}}
            new_stream.append(record)
        new_data["stream"] = new_stream
    return {**event, "data": new_data}
