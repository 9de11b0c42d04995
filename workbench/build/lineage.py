"""Builder scripts that rewrite or branch a log: compaction, pruning, crash repair, forks and
subagents. Layer: build. Mixed into `LogBuilder` (it uses the builder's `_emit`, `state`, `ids`).

Shapes (v0 spec §5.1, §5.9, §1.7, §3.11; v4 spec §5.1, §5.9, §1.7, §3.11):

* a completed compaction is ``compaction/start`` → (v4: ``delivery-accepted``) →
  ``compaction/summary`` → the checkpoint ``user/message`` replacing the span, citing
  ``[startSeq, summarySeq, ...shadowedSeqs]`` → ``compaction/end``; ``shadowedSeqs`` is the
  current surface span between the endpoints and ``shadowedTokenCount`` the sum of its
  heuristic prices; a failed one ends with ``error`` (optionally after a logged summary); an
  interrupted one has no end (a later ``session/end-seed`` makes it stale);
* a prune is ``compaction/prune`` immediately followed by the replacement ``tool/result``
  (identical data except the result content);
* repair closers of an open turn: a synthetic result per unanswered call, ``step/end``,
  ``turn/end {interrupted}``, all at the last event's time (the loader's own closer tracker);
* a fork child copies events ``0..B`` (clipped to the parent's last ``turn/end`` when a turn is
  open) and marks the seed (v4: ``session/end-seed {inherited: true}``, ``isSeeded``; v0:
  ``seedLength`` and a ``session/end-seed {}``); a spawned subagent child starts empty with a
  ``subagent/descriptor`` (v4 parents log a ``subagent/catalog`` entry for it).
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from workbench.build import shapes
from workbench.build.state import BuildError

if TYPE_CHECKING:
    from workbench.build.builder import LogBuilder


@dataclass(frozen=True, slots=True)
class Compaction:
    """What one `compact()` call logged."""

    compaction_id: str
    status: Literal["completed", "failed", "interrupted"]
    start_seq: int
    summary_seq: int | None
    replacement_seq: int | None
    end_seq: int | None
    shadowed_seqs: tuple[int, ...]
    shadowed_token_count: int


@dataclass(frozen=True, slots=True)
class Prune:
    """What one `prune()` call logged."""

    prune_seq: int
    replacement_seq: int
    target_seq: int
    shadowed_token_count: int


class LineageScript:
    """Compaction, pruning, repair, forks and subagents for `LogBuilder`."""

    # -- compaction ----------------------------------------------------------------------------

    def compact(self: LogBuilder, start_seq: int | None = None, end_seq: int | None = None,
                summary: str | list[str] = "Summary of the earlier conversation.", *,
                error: str | None = None, summary_logged: bool = False,
                interrupted: bool = False, command: bool = False,
                delivery: bool | None = None, max_tokens: int = 2048) -> Compaction:
        """One compaction bracket over the surface span `start_seq..end_seq` (default: every node
        after a v4 system head). Owner = the open turn, or null between turns. `error` logs a
        failed bracket (after a summary when `summary_logged`), `interrupted` leaves it open (after
        a summary when `summary_logged`),
        `command` wraps a standalone bracket in `command/run` … `command/done` (manual
        /compact)."""
        state = self.state
        if state.open_compaction is not None:
            raise BuildError(f"compaction {state.open_compaction.compaction_id} is still open")
        first = state.first_compactable()
        if start_seq is None or end_seq is None:
            if len(state.nodes) <= first:
                raise BuildError("nothing to compact: the surface has no compactable node")
            start_seq = state.nodes[first] if start_seq is None else start_seq
            end_seq = state.nodes[-1] if end_seq is None else end_seq
        shadowed = state.span(start_seq, end_seq)
        if self.version >= 4 and state.system_head in shadowed:
            raise BuildError("a compaction range may not include the protected system head")
        price = sum(state.prices[s] for s in shadowed)
        turn = state.open_turn
        command_id = None
        if command:
            if turn is not None:
                raise BuildError("a manual /compact runs between turns")
            command_id = f"cmd-{self.ids.uuid()[:8]}-1"
            self._emit("command/run", {"commandId": command_id, "name": "compact", "args": "",
                                       "source": {"kind": "user"}})
        cid = self.ids.uuid()
        ident: dict[str, Any] = {"compactionId": cid}
        if command_id is not None:
            ident["sourceCommandId"] = command_id
        start = self._emit("compaction/start", {**ident, "turn": turn})
        if delivery if delivery is not None else self.version >= 4:
            self.delivery_accepted()
        texts = [summary] if isinstance(summary, str) else list(summary)
        summary_seq = replacement = None
        if (error is None and not interrupted) or summary_logged:
            provider, model = state.route or self.default_route
            usage = {"inputTokens": price + 200, "outputTokens": shapes.approx_tokens(
                sum(len(t) for t in texts)) + 1}
            if self.version >= 4:
                usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
            blocks = [{"type": "text", "text": t} for t in texts]
            summary_seq = self._emit("compaction/summary", {
                **ident, "summary": blocks, "rawOutput": [dict(b) for b in blocks],
                "llmStreamCall": True, "shadowedRange": {"start": start_seq, "end": end_seq},
                "shadowedSeqs": list(shadowed), "shadowedTokenCount": price,
                "provider": provider, "model": model, "maxTokens": max_tokens, "usage": usage})
        if error is None and not interrupted:
            source: dict[str, Any] = ({"kind": "compact-checkpoint", **ident} if self.version >= 4
                                      else {"kind": "plugin", "plugin": "compact", **ident})
            replacement = self._emit(
                "user/message",
                shapes.user_message(shapes.checkpoint_content(texts), source, self.ids.uuid()),
                surface_op=self._replace_op(start_seq, end_seq),
                sources=[start, summary_seq, *shadowed])
        end = None
        if not interrupted:
            end_data: dict[str, Any] = {"compactionId": cid, "turn": turn}
            if error is not None:
                end_data["error"] = error
            if command_id is not None:
                end_data["sourceCommandId"] = command_id
            end = self._emit("compaction/end", end_data)
            self.flush()
        if command_id is not None and not interrupted:
            done: dict[str, Any] = {"commandId": command_id}
            if error is None:
                done.update(kind="success", text=f"Compacted {len(shadowed)} history items "
                            f"(~{price} tokens).", sourceEventSeq=summary_seq)
            else:
                done.update(kind="error", text="Compaction could not produce a useful summary. "
                            "The attempt is recorded in the session log.")
            self._emit("command/done", done)
        status = "interrupted" if interrupted else "failed" if error is not None else "completed"
        return Compaction(cid, status, start, summary_seq, replacement, end, tuple(shadowed),
                          price)

    def prune(self: LogBuilder, seq: int, *, head: int = 4096, tail: int = 1024) -> Prune:
        """Tool-result pruning of the current `tool/result` node `seq`: ``compaction/prune`` and
        the replacement result keeping `head` + marker + `tail` code points."""
        state = self.state
        if self.version >= 4 and state.open_turn is None:
            raise BuildError("a v4 replacement tool/result needs an open turn (v4 §3.3)")
        event = state.node_events.get(seq)
        if event is None or event["type"] != "tool/result":
            raise BuildError(f"seq {seq} is not a current tool/result node")
        price = state.prices[seq]
        prune = self._emit("compaction/prune", {"shadowedRange": {"start": seq, "end": seq},
                                                "shadowedSeqs": [seq], "shadowedTokenCount": price})
        message = event["data"]["message"]
        content = shapes.prune_content(shapes.result_content(message, version=self.version),
                                       head=head, tail=tail)
        data = {**event["data"], "message": shapes.with_result_content(
            message, content, version=self.version)}
        replacement = self._emit("tool/result", data, surface_op=self._replace_op(seq, seq),
                                 sources=[seq])
        return Prune(prune, replacement, seq, price)

    # -- crash repair --------------------------------------------------------------------------

    def repair(self: LogBuilder, *, cause: Literal["interrupted", "forked"] = "interrupted") -> int:
        """Synthetic closers of the open turn, exactly as the loader derives them (reference:
        interruptedTurnClosers, `workbench.core.repair.CloserTracker`); returns the `turn/end`
        seq."""
        if self.state.open_turn is None:
            raise BuildError("no open turn to repair")
        seq = -1
        for event in self._closer_tracker.closers(cause):
            seq = self._push(event)
        self.flush()
        return seq

    # -- forks and subagents -------------------------------------------------------------------

    def _child(self: LogBuilder, session_id: str | None, **header: Any) -> LogBuilder:
        from workbench.build.builder import LogBuilder
        provider, model = self.state.route or self.default_route
        child = LogBuilder(version=self.version, session_id=session_id, cwd=self.cwd,
                           created_at=self.clock + 1, provider=provider, model=model,
                           seed=zlib.crc32(self.session_id.encode()) + self.state.seq,
                           tick_ms=self.tick_ms, batch_events=self.batch_events,
                           pack_rows=self.pack_rows, **header)
        if session_id is None and self.version >= 4:
            child.session_id = child.ids.uuid()  # live child ids are bare UUIDs
        return child

    def fork(self: LogBuilder, session_id: str | None = None, *, at: int | None = None,
             subagent: bool = False) -> LogBuilder:
        """A fork child seeded with this log's events ``0..at`` (default: everything, clipped to
        the last `turn/end` while a turn is open). `subagent=True` is an in-process subagent
        fork (`origin: subagent`, depth + 1)."""
        events = self._memory("fork()")
        cut = len(events) - 1 if at is None else at
        if at is None and self.state.open_turn is not None:
            if self.state.last_turn_end is None:
                raise BuildError("cannot fork inside the first turn: no completed turn to clip to")
            cut = self.state.last_turn_end
        if not 0 <= cut < len(events):
            raise BuildError(f"fork point {cut} is outside the log (0..{len(events) - 1})")
        extra: dict[str, Any] = {"parent_session": self.session_id}
        if subagent:
            extra.update(origin="subagent", delegation_depth=self.delegation_depth + 1)
        else:
            extra.update(origin=self.origin, delegation_depth=self.delegation_depth)
        child = self._child(session_id, **extra)
        for event in events[:cut + 1]:
            child._push(dict(event))
        child.clock = max(child.clock, events[cut]["time"])
        child.flush()
        if self.version >= 4:
            child.is_seeded = True
            child.end_seed(inherited=True)
        else:
            child.seed_length = cut + 1
            child.end_seed()
        return child

    def spawn_subagent(self: LogBuilder, session_id: str | None = None, *,
                       label: str = "Helper", mode: str = "one-shot") -> LogBuilder:
        """A spawned subagent child (empty log, `origin: subagent`, depth + 1). v4 parents log a
        `subagent/catalog` entry; the child's first turn starts with its `subagent/descriptor`."""
        child = self._child(session_id, parent_session=self.session_id, origin="subagent",
                            delegation_depth=self.delegation_depth + 1)
        if self.version >= 4:
            self._emit("subagent/catalog", {"version": 1, "childId": child.session_id,
                                            "childCreatedAt": child.created_at, "mode": mode,
                                            "label": label})
        provider, model = child.default_route
        descriptor: dict[str, Any] = {"version": 3 if self.version >= 4 else 2, "mode": mode,
                                      "provider": "spawn", "label": label}
        if self.version >= 4:
            descriptor.update(agentProvider=provider, agentModel=model)
        child._pending_descriptor = descriptor
        return child
