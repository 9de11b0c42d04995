"""A tiny script for compaction test logs, as plain event lists (v4 by default, v0 too).

Each method appends one event with the next seq and returns its seq. `compact()` writes a whole
bracket the way the reference does (start, summary with the current surface span and its
heuristic price, the framed checkpoint citing `[start, summary, ...shadowed]`, end) and takes
keyword overrides to break exactly one rule.
"""
from __future__ import annotations

from typing import Any

from workbench.core.compaction.brackets import frame_summary
from workbench.core.surface import fold_surface
from workbench.core.tokens.heuristic import node_price

_ABSENT = object()


class Script:
    def __init__(self, version: int = 4) -> None:
        self.version = version
        self.events: list[dict[str, Any]] = []
        self.turn = 0
        self.step = 0

    # -- plumbing ----------------------------------------------------------------------------
    def add(self, etype: str, data: Any, *, op: Any = None, sources: Any = None) -> int:
        seq = len(self.events)
        event: dict[str, Any] = {"type": etype, "seq": seq, "time": 1000 + 10 * seq, "data": data}
        if op is not None:
            event["surfaceOp"] = op
        if sources is not None:
            event["sourceEventSeqs"] = sources
        self.events.append(event)
        return seq

    def replace_op(self, start: int, end: int) -> dict:
        if self.version >= 4:
            return {"op": "replace", "startSeq": start, "endSeq": end}
        return {"op": "replace", "start": start, "end": end}

    def surface(self) -> tuple[int, ...]:
        return fold_surface(self.events, version=self.version).nodes

    def price(self, seq: int) -> int:
        return node_price(self.events[seq], version=self.version)

    # -- lifecycle ---------------------------------------------------------------------------
    def turn_start(self) -> int:
        self.turn += 1
        self.step = 0
        return self.add("turn/start", {"turn": self.turn})

    def turn_end(self, kind: str = "completed") -> int:
        return self.add("turn/end", {"turn": self.turn, "reason": {"kind": kind}})

    def step_start(self) -> int:
        self.step += 1
        return self.add("step/start", {"turn": self.turn, "step": self.step})

    def step_end(self) -> int:
        return self.add("step/end", {"turn": self.turn, "step": self.step})

    def end_seed(self) -> int:
        return self.add("session/end-seed", {})

    # -- messages ----------------------------------------------------------------------------
    def system(self, text: str) -> int:
        return self.add("system/message", {"turn": self.turn, "step": self.step, "message": {
            "id": "sys", "role": "system", "content": [{"type": "text", "text": text}],
            "source": {"kind": "system-prompt"}}}, op="append")

    def user(self, text: str) -> int:
        seq = len(self.events)
        return self.add("user/message", {"id": f"u-{seq}", "role": "user",
                                         "content": [{"type": "text", "text": text}],
                                         "source": {"kind": "user"}}, op="append")

    def assistant(self, text: str, calls: tuple[str, ...] = ()) -> int:
        seq = len(self.events)
        content: list[dict] = [{"type": "text", "text": text}]
        content += [{"type": "tool-call", "id": c, "name": "read", "arguments": "{}"}
                    for c in calls]
        data: dict[str, Any] = {"turn": self.turn, "step": self.step, "message": {
            "id": f"a-{seq}", "role": "assistant", "content": content,
            "source": {"kind": "model", "provider": "mock", "model": "mock"}}}
        if self.version >= 4:
            data["stream"] = []
        return self.add("assistant/message", data, op="append")

    def tool_result(self, call: str, text: str) -> int:
        seq = len(self.events)
        call_seq = self.add("tool/call", {"turn": self.turn, "step": self.step, "callId": call,
                                          "name": "read", "arguments": "{}"})
        if self.version >= 4:
            message = {"id": f"t-{seq}", "role": "tool", "toolCallId": call,
                       "source": {"kind": "tool", "callId": call},
                       "content": [{"type": "text", "text": text}], "isError": False}
        else:
            message = {"id": f"t-{seq}", "role": "user", "source": {"kind": "tool", "callId": call},
                       "content": [{"type": "tool-result", "toolCallId": call, "isError": False,
                                    "content": [{"type": "text", "text": text}]}]}
        return self.add("tool/result", {"turn": self.turn, "step": self.step, "message": message},
                        op="append", sources=[call_seq])

    # -- compaction --------------------------------------------------------------------------
    def compact(self, start: int, end: int, summary: str, *, cid: str = "cmp-1",
                owner: Any = _ABSENT, shadowed: list[int] | None = None,
                token_count: int | None = None, sources: list[int] | None = None,
                close: bool = True, error: str | None = None, summarize: bool = True,
                command: str | None = None) -> dict[str, int | None]:
        """One bracket; returns the seqs {start, summary, replacement, end}."""
        owner = (self.turn if self.turn and self._turn_open() else None) if owner is _ABSENT \
            else owner
        lifecycle: dict[str, Any] = {"compactionId": cid}
        if command is not None:
            lifecycle["sourceCommandId"] = command
        out: dict[str, int | None] = {"summary": None, "replacement": None, "end": None}
        out["start"] = self.add("compaction/start", {**lifecycle, "turn": owner})
        if summarize:
            surface = list(self.surface())
            span = surface[surface.index(start):surface.index(end) + 1]
            shadowed = span if shadowed is None else shadowed
            count = sum(self.price(s) for s in span) if token_count is None else token_count
            blocks = [{"type": "text", "text": summary}]
            out["summary"] = self.add("compaction/summary", {
                **lifecycle, "summary": blocks, "shadowedRange": {"start": shadowed[0],
                                                                  "end": shadowed[-1]},
                "shadowedSeqs": shadowed, "shadowedTokenCount": count,
                "provider": "mock", "model": "summary-model"})
            kind = ({"kind": "compact-checkpoint", "compactionId": cid} if self.version >= 4
                    else {"kind": "plugin", "plugin": "compact", "compactionId": cid})
            if command is not None:
                kind["sourceCommandId"] = command
            cites = [out["start"], out["summary"], *span] if sources is None else sources
            seq = len(self.events)
            out["replacement"] = self.add("user/message", {
                "id": f"checkpoint-{seq}", "role": "user", "source": kind,
                "content": frame_summary(blocks)}, op=self.replace_op(start, end), sources=cites)
        if close:
            data = {**lifecycle, "turn": owner}
            if error is not None:
                data["error"] = error
            out["end"] = self.add("compaction/end", data)
        return out

    def _turn_open(self) -> bool:
        for event in reversed(self.events):
            if event["type"] == "turn/end":
                return False
            if event["type"] == "turn/start":
                return True
        return False
