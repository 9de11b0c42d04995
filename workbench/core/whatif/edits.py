"""Single edits of a real log: another summary text, or a compaction the log does not have.
Layer: core.

* `replace_summary(id, text)`: the same bracket, range and checkpoint with another summary. A
  text that differs from the logged one is labelled as not written by the logged model
  (`provider: "workbench"`, `model: <label>`, no `rawOutput`/`usage`/`llmStreamCall`); the
  logged text gives back the log itself. DSH's shrink check applies (v4 §5.4).
* `compact(at, first, last, summary)`: a compaction right after real seq `at` (the one seq rule,
  `workbench.core.seqs`: negative from the end), over the surface there, with DSH's rules
  (`WhatIfError` names the broken one): no compaction is open (rule `compaction lock`, v4 §5.2), no step is open (rule `step open`: DSH compacts before a step or
  between turns, v4 §5.8), and `Replay.legal_span` (surface span, system head, tool-call pairing).
  Inside a turn it is a pressure-style bracket owned by the turn; between turns it is what a
  `/compact` command would write (`command/run` → bracket → `command/done`). Without `first`/
  `last` the range is DSH's own selection with `retain_tokens` (0, as `/compact`, by default).

Later real compactions stay where they are, over what the new surface holds (`Replay.carry`).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.compaction.brackets import frame_summary, framed_summary_tokens
from workbench.core.compaction.entry import inspect_compaction_entry_state
from workbench.core.compaction.selection import select_compactable_range
from workbench.core.seqs import resolve_seq, seq_int
from workbench.core.whatif.brackets import summary_text
from workbench.core.whatif.remap import WhatIfError
from workbench.core.whatif.replay import REMOVE, Replay
from workbench.errors import InvalidArgument
from workbench.io.payloads import read_events, seqs_of_type


def replace_summary(events: Sequence[Mapping[str, Any]], header: Mapping[str, Any],
                    compaction_id: str, text: str, *, label: str) -> Replay:
    """The log with compaction `compaction_id`'s summary replaced by `text` (module doc)."""
    summaries = [(seq, e) for seq, e in read_events(events, seqs_of_type(events, {"compaction/summary"}))
                 if (e.get("data") or {}).get("compactionId") == compaction_id]
    if not summaries:
        raise WhatIfError(f"no completed compaction with id {compaction_id!r} in this log")
    summary_text(text, given=True)
    at, summary = summaries[0]
    logged = summary["data"]
    blocks = [{"type": "text", "text": text}]
    same = logged.get("summary") == blocks
    r = Replay(events, header, label="logged" if same else label)
    for seq, event in enumerate(events):   # by seq: a store parses each read afresh
        patch = None
        if seq == at and not same:
            patch = {"summary": blocks, "rawOutput": REMOVE, "llmStreamCall": REMOVE,
                     "usage": REMOVE, "maxTokens": REMOVE, "provider": "workbench", "model": label}
        elif (not same and event.get("type") == "user/message"
              and ((event.get("data") or {}).get("source") or {}).get("compactionId") == compaction_id):
            patch = {"content": frame_summary(blocks)}
        out = r.carry(event, patch=patch)
        if patch is not None and "summary" in patch:
            data = r.out[out]["data"]
            framed = framed_summary_tokens(blocks, version=r.version)
            if framed >= data["shadowedTokenCount"]:
                raise WhatIfError(f"shrink check: summary is not smaller than the shadowed content "
                                  f"({framed} estimated framed tokens >= "
                                  f"{data['shadowedTokenCount']}); DSH would fail this compaction")
    r.fired.append({"compaction_id": compaction_id, "trigger": "replaced", "summarizer": r.label})
    return r


def compact(events: Sequence[Mapping[str, Any]], header: Mapping[str, Any], *, at: int,
            first: int | None, last: int | None, summary: Any, label: str,
            retain_tokens: int = 0) -> Replay:
    """The log with one more compaction right after real seq `at` (module doc)."""
    at = resolve_seq(at, len(events) - 1)
    first, last = (None if s is None else seq_int(s) for s in (first, last))
    if type(retain_tokens) is not int or retain_tokens < 0:
        msg = f"retain_tokens must be an integer of at least 0, not {retain_tokens!r}"
        raise InvalidArgument(msg)
    r = Replay(events, header, label=label)
    turn: Any = None
    step_open = False
    for event in events[:at + 1]:
        r.carry(event)
        kind, data = event.get("type"), event.get("data") or {}
        if kind == "turn/start":
            turn = data.get("turn")
        elif kind == "turn/end":
            turn = None
        elif kind == "step/start":
            step_open = True
        elif kind == "step/end":
            step_open = False
    if inspect_compaction_entry_state(r.out).lock_active:
        raise WhatIfError(f"compaction lock: a compaction is still open at seq {at} (v4 §5.2)")
    if step_open:
        raise WhatIfError(f"step open: seq {at} is inside a step; DSH compacts before a step "
                          "starts or between turns (v4 §5.8)")
    if first is None or last is None:
        nodes = r.nodes()
        found = select_compactable_range([s for s, _ in nodes], [p for _, p in nodes], r.out,
                                         version=r.version, retain_tokens=retain_tokens)
        if found is None:
            raise WhatIfError(f"nothing to compact at seq {at}: the retained tail of "
                              f"{retain_tokens} tokens covers the whole surface")
        first = found.start if first is None else first
        last = found.end if last is None else last
    seqs = r.legal_span(first, last)
    if turn is not None:
        results = [s for s, _ in r.nodes() if r.out[s].get("type") == "tool/result"
                   and (r.out[s].get("data") or {}).get("turn") == turn]
        if results and max(results) in seqs:
            raise WhatIfError(f"newest tool result: the span hides {max(results)}, the newest tool "
                              f"result of turn {turn}, which the model must still see to go on")
    text = summary(r.messages(seqs)) if callable(summary) else summary
    error = summary_text(text, given=not callable(summary))
    command_id = None
    if turn is None:
        command_id = r.new_id()
        r.emit({"type": "command/run", "seq": 0, "time": r.out[-1].get("time"),
                "data": {"commandId": command_id, "name": "compact", "args": "",
                         "source": {"kind": "user"}}})
    record = r.compaction(seqs, owner=turn, summary=text, error=error,
                          trigger="pressure" if turn is not None else "manual",
                          command_id=command_id)
    if command_id is not None:
        done: dict[str, Any] = {"commandId": command_id}
        if record["status"] == "completed":
            done.update(kind="success", text=f"Compacted {len(seqs)} history items "
                                             f"(~{record['shadowed_tokens']} tokens).",
                        sourceEventSeq=record["summary_seq"])
        else:
            done.update(kind="error", text="Compaction could not produce a useful summary. "
                                           "The attempt is recorded in the session log.")
        r.emit({"type": "command/done", "seq": 0, "time": r.out[-1].get("time"), "data": done})
    for event in events[at + 1:]:
        r.carry(event)
    return r
