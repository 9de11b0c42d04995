"""New compaction brackets and prunes written onto a counterfactual. Layer: core (no pandas).
Mixed into `workbench.core.whatif.replay.Replay` (it uses the replay's `emit`, `nodes`, `out`,
`fired`, `label`, `new_id`).

* `compaction(seqs, ...)` emits one bracket as DSH writes it (v4 §5.1, §5.5): start → summary →
  checkpoint replace → end, or start → end{error}; a summary whose framed price is not below the
  shadowed price fails with DSH's shrink-check text (v4 §5.4);
* `unclosed(logged, ...)`: a logged attempt that never closed keeps only its start and the
  delivery markers inside it;
* `prune(config)`: one `compaction/prune` + replacing `tool/result` pair per tool result over
  the budget (v4 §5.9).

A summary's text follows one rule (`summary_text`, v4 §5.6): a str with some text. A blank one
(empty, or only whitespace) from a summarizer is a failed attempt, logged as DSH logs it
(`BLANK_SUMMARY`); a text the caller gives directly must follow it (`WhatIfError`).

Every emitted event reuses the logged event's time (and ids, model fields) when one is given,
so an unchanged bracket writes back as it was logged; `fired` gets one record per bracket.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.compaction.brackets import frame_summary, framed_summary_tokens
from workbench.core.compaction.pruner import PruneConfig, prune_content
from workbench.core.tokens.heuristic import estimate_message
from workbench.core.whatif.remap import WhatIfError

if TYPE_CHECKING:
    from workbench.core.whatif.replay import Replay

BLANK_SUMMARY = "summarization produced no text summary content"
"""DSH's failure text for a summarization without text (v4 §5.6; corpus dev-summary-errors)."""


def summary_text(text: Any, *, given: bool) -> str | None:
    """The one rule for a summary's text (module doc): a text that is not a str raises
    `WhatIfError`; a blank one raises it too when the caller gave it (`given`), and from a
    summarizer is DSH's failure: returns `BLANK_SUMMARY`, the attempt's error. None: a summary."""
    if not isinstance(text, str):
        who = "a summary text" if given else "a summarizer's result"
        raise WhatIfError(f"{who} must be a str, not {type(text).__name__}")
    if text.strip():
        return None
    if given:
        raise WhatIfError(f"blank summary: a summary needs some text; DSH fails a blank one "
                          f"('{BLANK_SUMMARY}', v4 §5.6)")
    return BLANK_SUMMARY


class BracketScript:
    """Compaction brackets, unclosed attempts and prunes for `Replay`."""

    def compaction(self: Replay, seqs: Sequence[int], *, owner: Any, summary: Any = None,
                   error: str | None = None, logged: Sequence[Mapping[str, Any]] = (),
                   trigger: str = "pressure", command_id: Any = None) -> dict[str, Any]:
        """Emit one bracket over `seqs` (module doc) and return its record.

        `summary` is a string or a list of content blocks; `error` a logged failure text;
        `logged` the real bracket's own events (the summary's model fields, ids, times and the
        delivery markers inside are reused). A summary whose framed price is not below the
        shadowed price fails with DSH's shrink-check text (v4 §5.4)."""
        by_type = {e.get("type"): e for e in logged}
        start_real = by_type.get("compaction/start")
        cid = (start_real["data"].get("compactionId") if start_real else self.new_id())
        prices = dict(self.nodes())
        shadowed = sum(prices[s] for s in seqs)
        blocks = [{"type": "text", "text": summary}] if isinstance(summary, str) else summary
        if error is None and blocks is not None:
            framed = framed_summary_tokens(blocks, version=self.version)
            if framed >= shadowed:
                error = (f"summary is not smaller than the shadowed content ({framed} estimated "
                         f"framed tokens >= {shadowed})")
        head = {"compactionId": cid}
        if command_id is not None:
            head["sourceCommandId"] = command_id
        head["turn"] = owner
        start = self.emit(self._like(start_real, "compaction/start", head))
        for extra in logged:
            if extra.get("type") == "session-log-deepseek/delivery-accepted":
                self.emit({**extra, "data": {**extra["data"], "throughSeq": start}})
        record = {"compaction_id": cid, "trigger": trigger, "owner": owner, "start_seq": start,
                  "summarizer": self.label, "shadowed_seqs": list(seqs),
                  "shadowed_tokens": shadowed, "status": "failed" if error else "completed",
                  "error": error, "summary_seq": None, "replacement_seq": None}
        if error is None:
            summary_real = by_type.get("compaction/summary")
            span = {"shadowedRange": {"start": seqs[0], "end": seqs[-1]},
                    "shadowedSeqs": list(seqs), "shadowedTokenCount": shadowed}
            if summary_real is not None:   # the logged summary, keys in the logged order
                data = {**summary_real["data"], "summary": blocks, **span}
            else:
                data = {**head, "summary": blocks, **span, "provider": "workbench",
                        "model": self.label}
                data.pop("turn")
            summary_seq = self.emit(self._like(summary_real, "compaction/summary", data))
            checkpoint_real = by_type.get("user/message")
            source = {"kind": "compact-checkpoint", "compactionId": cid}
            if command_id is not None:
                source["sourceCommandId"] = command_id
            message = {"content": frame_summary(blocks), "source": source, "role": "user",
                       "id": checkpoint_real["data"]["id"] if checkpoint_real else self.new_id()}
            replacement = self._like(checkpoint_real, "user/message", message)
            replacement.update(sourceEventSeqs=[start, summary_seq, *seqs],
                               surfaceOp={"op": "replace", "startSeq": seqs[0], "endSeq": seqs[-1]})
            record["summary_seq"] = summary_seq
            record["replacement_seq"] = self.emit(replacement)
            record["summary_tokens"] = estimate_message(replacement["data"], version=self.version)
        end = dict(head)
        if error is not None:
            end["error"] = error
        record["end_seq"] = self.emit(self._like(by_type.get("compaction/end"), "compaction/end", end))
        self.fired.append(record)
        return record

    def unclosed(self: Replay, logged: Any, *, owner: Any, trigger: str) -> None:
        """A logged attempt that never closed (its process died): its start and the delivery
        markers inside, nothing else; the lock stays until the next `session/end-seed`."""
        events = [e for e in logged.events
                  if e.get("type") in ("compaction/start", "session-log-deepseek/delivery-accepted")]
        start_real = events[0]
        start = self.emit(self._like(start_real, "compaction/start", dict(start_real["data"])))
        for extra in events[1:]:
            self.emit({**extra, "data": {**extra["data"], "throughSeq": start}})
        self.fired.append({"compaction_id": start_real["data"].get("compactionId"),
                           "trigger": trigger, "owner": owner, "start_seq": start,
                           "summarizer": self.label, "status": "interrupted", "shadowed_seqs": []})

    def _like(self: Replay, real: Mapping[str, Any] | None, kind: str, data: dict) -> dict[str, Any]:
        """A new event of `kind`: the real one's time when reused, else the previous event's."""
        time = real.get("time") if real is not None else self._time()
        return {"type": kind, "seq": len(self.out), "time": time, "data": data}

    def prune(self: Replay, config: PruneConfig, logged: list[Mapping[str, Any]] | None = None) -> int:
        """Prune every current tool result over the budget (v4 §5.9); returns how many."""
        done = 0
        reuse = logged if logged is not None else []  # consumed: the logged pairs in order
        for seq, _ in list(self.nodes()):
            event = self.out[seq]
            if event.get("type") != "tool/result":
                continue
            message = (event.get("data") or {}).get("message") or {}
            content = message.get("content")
            pruned = prune_content(content, config) if isinstance(content, list) else None
            if pruned is None:
                continue
            real_prune = reuse.pop(0) if reuse else None
            real_copy = reuse.pop(0) if reuse else None
            data = {"shadowedRange": {"start": seq, "end": seq}, "shadowedSeqs": [seq],
                    "shadowedTokenCount": estimate_message(message, version=self.version)}
            at = self.emit(self._like(real_prune, "compaction/prune", data))
            copy = {"type": "tool/result", "seq": at + 1,
                    "time": real_copy.get("time") if real_copy else self._time(),
                    "data": {**event["data"], "message": {**message, "content": pruned}},
                    "sourceEventSeqs": [seq],
                    "surfaceOp": {"op": "replace", "startSeq": seq, "endSeq": seq}}
            self.emit(copy)
            self.fired.append({"trigger": "prune", "start_seq": at, "shadowed_seqs": [seq],
                               "summarizer": "pruner", "status": "completed"})
            done += 1
        return done


__all__ = ["BLANK_SUMMARY", "BracketScript", "summary_text"]
