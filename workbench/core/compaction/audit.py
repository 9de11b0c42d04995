"""The compaction audit: an acceptance table per compaction attempt and per prune. Layer: core.

Every check is a pass/fail with evidence (seqs, numbers) in its detail. A check that does not
apply to an attempt (for example the replacement checks of an attempt without one, or "the next
request sees the checkpoint" when the log ends first) is left out rather than passed. Checks per
attempt (spec v0 §5, v4 §5; the hidden set is what the fold removed, or would have removed when
it rejected the replacement):

* `bracket_closed` — a `compaction/end` exists. A stale attempt (never closed, then released by a
  later `session/end-seed`: a crash in an earlier process lifecycle, v0 §5.2) passes with that
  evidence; an interrupted one (no end, lock still held) fails.
* `inside_bracket` — start < summary < replacement < end; a clean end needs both.
* `replacement_cites_sources` — `sourceEventSeqs` contains the start, the summary and every hidden
  node, and is exactly `[startSeq, summarySeq, ...shadowedSeqs]` (v0 §5.1 step 4, v4 §5.1(b);
  compared as logical seqs: range pairs expanded, `3.0` is seq 3); a fold rejection of the
  replacement is reported here with the fold's own message.
* `checkpoint_after_summary` — the checkpoint is the event right after its summary (v0 §5.1
  step 4).
* `checkpoint_is_framed_summary` — the checkpoint's content is the preamble block with the
  opening tag, the summary's blocks verbatim, then the closing tag (v0 §5.5, v4 §5.5).
* `shadowed_seqs_match_fold` — logged `shadowedSeqs` equal the hidden set, in surface order.
* `shadowed_tokens_match` — logged `shadowedTokenCount` equals the heuristic price of the hidden
  set (v0 §6.5, v4 §6.5).
* `checkpoint_smaller` — the checkpoint's price is below the hidden price (without a
  checkpoint: the framed summary's; the shrink check runs before a summary is logged, v0 §5.4).
* `tool_pairing_after` — after the replacement no tool result lacks its call and the cuts around
  the checkpoint are balanced (v0 §5.3).
* `newest_tool_result_visible` — the newest tool result on the surface is not hidden.
* `next_request_sees_checkpoint` — the first model request after the attempt contains the
  checkpoint (or a later checkpoint that absorbed it).
* `originals_preserved` — every hidden node is still in the log, and each one is either an
  append-origin event of the human transcript (v0 §4.9) or an earlier replacement whose own
  originals its own row covers (one level, so long chains of nested checkpoints stay linear).

A failed attempt is checked as far as it got: with a summary logged, the checks up to
`checkpoint_smaller` apply (its hidden set is the span the summary names); the node checks from
`tool_pairing_after` on need a replacement.

Prune checks: `prune_replacement_adjacent`, `prune_price_matches`, `prune_target`,
`prune_smaller`. The log-level protocol layer (v0 compaction invariant, v4 relationships) and a
fold violation are reported beside the tables and make the audit fail as well. Replacements that
belong to no compaction and no prune are listed as unpriced (v0 §5.10 step 5): a finding, not a
failure, since the format does not forbid them.

Cost: what the checks read from the events is a small pure function of each event
(`eventfacts.EventFacts`). When the audit folds the log itself, those facts are collected in the
fold's own pass (`brackets.compactions`), so `workbench audit` on a 1.3M-event v4 log parses it
once; on a caller's timeline (`found=`) the audit plans the seqs it needs (`sweep.AuditPlan`) and
reads them once, in seq order. Either way: no random read per node and attempt.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.compaction.brackets import (
    CompactionRecord,
    Compactions,
    PruneRecord,
    compactions,
    replace_range,
)
from workbench.core.compaction.checks import (
    Check,
    compaction_checks,
    first_errors,
    prune_checks,
)
from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.compaction.invariant import check_compaction_invariant
from workbench.core.compaction.probe import CacheBreak, LostProbe
from workbench.core.compaction.sweep import AuditFacts, AuditPlan
from workbench.core.relationships import check_relationships
from workbench.core.requests import Attempt, AttemptCollector
from workbench.core.surface_arrays import nodes_seen_at, position_of, surface_array
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import FoldError
from workbench.io.generations import nested_streams, rules_for
from workbench.io.jsjson import ABSENT
from workbench.io.payloads import read_events, seqs_of_type, type_reader
from workbench.io.reader import paused_gc


@dataclass(frozen=True, slots=True)
class CompactionAudit:
    """The audit of one attempt: its record, checks and measurements."""

    record: CompactionRecord
    checks: tuple[Check, ...]
    hidden_seqs: tuple[int, ...] | None
    computed_shadowed_tokens: int | None
    summary_tokens: int | None
    lost: LostProbe | None
    cache_break: CacheBreak | None

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def compression_ratio(self) -> float | None:
        """Tokens hidden per token added (None without both numbers)."""
        if self.computed_shadowed_tokens is None or not self.summary_tokens:
            return None
        return self.computed_shadowed_tokens / self.summary_tokens

    def as_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.compaction_id, "status": r.status, "trigger": r.trigger.as_json(),
            "start_seq": r.start_seq, "summary_seq": r.summary_seq,
            "replacement_seq": r.replacement_seq, "end_seq": r.end_seq,
            "end_seed_seq": r.end_seed_seq, "start_time": r.start_time, "end_time": r.end_time,
            "duration_ms": r.duration_ms, "provider": r.provider, "model": r.model,
            "max_tokens": r.max_tokens, "usage": r.usage,
            "shadowed_range": None if r.logged_range is None else list(r.logged_range),
            "shadowed_seqs": None if r.logged_shadowed_seqs is None
            else list(r.logged_shadowed_seqs),
            "hidden_seqs": None if self.hidden_seqs is None else list(self.hidden_seqs),
            "logged_shadowed_tokens": r.logged_shadowed_tokens,
            "computed_shadowed_tokens": self.computed_shadowed_tokens,
            "summary_tokens": self.summary_tokens, "compression_ratio": self.compression_ratio,
            "error": None if r.error is ABSENT else r.error,
            "checks": [c.as_json() for c in self.checks],
            "lost": None if self.lost is None else self.lost.as_json(),
            "cache_break": None if self.cache_break is None else self.cache_break.as_json(),
            "ok": self.ok,
        }


@dataclass(frozen=True, slots=True)
class PruneAudit:
    record: PruneRecord
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def as_json(self) -> dict[str, Any]:
        p = self.record
        return {"prune_seq": p.prune_seq, "original_seq": p.original_seq,
                "replacement_seq": p.replacement_seq, "call_id": p.call_id,
                "logged_shadowed_tokens": p.logged_shadowed_tokens,
                "original_tokens": p.original_tokens, "replacement_tokens": p.replacement_tokens,
                "chars_before": p.chars_before, "chars_after": p.chars_after,
                "checks": [c.as_json() for c in self.checks], "ok": self.ok}


@dataclass(frozen=True, slots=True)
class ProtocolViolation:
    """A log-level violation: the v0 compaction invariant or a v4 relationship rule."""

    seq: int | None
    name: str
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "name": self.name, "message": self.message}


@dataclass(frozen=True, slots=True)
class AuditReport:
    session_id: str | None
    format_version: int
    compactions: tuple[CompactionAudit, ...]
    prunes: tuple[PruneAudit, ...]
    fold_error: FoldError | None
    protocol: tuple[ProtocolViolation, ...]
    unpriced_replacements: tuple[int, ...] = ()

    @property
    def ok(self) -> bool:
        return (self.fold_error is None and not self.protocol
                and all(c.ok for c in self.compactions) and all(p.ok for p in self.prunes))

    def as_json(self) -> dict[str, Any]:
        fold = None if self.fold_error is None else {
            "seq": self.fold_error.seq, "kind": self.fold_error.kind,
            "message": self.fold_error.message}
        return {"session_id": self.session_id, "format_version": self.format_version,
                "compactions": [c.as_json() for c in self.compactions],
                "prunes": [p.as_json() for p in self.prunes], "fold_error": fold,
                "protocol": [v.as_json() for v in self.protocol],
                "unpriced_replacements": list(self.unpriced_replacements), "ok": self.ok}


def _hidden_set(record: CompactionRecord, timeline: SurfaceTimeline,
                events: Sequence[Mapping[str, Any]], version: int) -> tuple[int, ...] | None:
    """What the fold removed; else what it would have removed at the replacement; else the span
    the summary names on the surface."""
    if record.fold_shadowed_seqs is not None:
        return record.fold_shadowed_seqs
    if record.replacement_seq is not None:
        rng = replace_range(events[record.replacement_seq], version=version)
        if rng is not None:
            surface = surface_array(timeline, record.replacement_seq - 1)
            i, j = position_of(surface, rng[0]), position_of(surface, rng[1])
            if i is not None and j is not None and i <= j:
                return tuple(surface[i:j + 1].tolist())
    return record.span_seqs


def _attempt_around(attempts: Sequence[Attempt], befores: Sequence[int],
                    record: CompactionRecord) -> tuple[Attempt | None, Attempt | None]:
    """The last request built before the start and the first built after the attempt."""
    last_seq = max(s for s in (record.start_seq, record.summary_seq, record.replacement_seq,
                               record.end_seq) if s is not None)
    i = bisect_right(befores, record.start_seq)
    before = attempts[i - 1] if i > 0 else None
    j = bisect_right(befores, last_seq)
    after = attempts[j] if j < len(attempts) else None
    return before, after


_V0_INVARIANT_TYPES = frozenset({"compaction/start", "compaction/summary", "compaction/end",
                                 "turn/start", "turn/end", "session/end-seed"})


def _protocol(events: Sequence[Mapping[str, Any]], version: int, meta: Mapping[str, Any] | None,
              inherited_event_count: int, timeline: SurfaceTimeline,
              facts: EventFacts | None = None) -> tuple[ProtocolViolation, ...]:
    if not nested_streams(version):
        failure = check_compaction_invariant(_invariant_events(events, timeline, facts))
        if failure is None:
            return ()
        return (ProtocolViolation(failure.seq, "compaction-invariant", failure.message),)
    return tuple(ProtocolViolation(v.seq, v.name, v.message)
                 for v in check_relationships(meta, events, version=version,
                                              inherited_event_count=inherited_event_count))


def _invariant_events(events: Sequence[Mapping[str, Any]], timeline: SurfaceTimeline,
                      facts: EventFacts | None) -> Sequence[Mapping[str, Any]]:
    """What the v0 invariant reads: only the events it acts on (bracket events, turn
    boundaries, end-seeds, replacing user messages; every other event leaves its state alone),
    kept during the fold or read in order."""
    replaced = timeline.replacement_by_seq
    if facts is not None and facts.complete:
        return [event for seq, event in facts.kept.items()
                if event.get("type") in _V0_INVARIANT_TYPES
                or (event.get("type") == "user/message" and seq in replaced)]
    type_of = type_reader(events)
    seqs = set(seqs_of_type(events, _V0_INVARIANT_TYPES))
    seqs.update(s for s in replaced if type_of(s) == "user/message")
    return [event for _, event in read_events(events, seqs)]


def model_requests(events: Sequence[Mapping[str, Any]], *, version: int) -> list[Attempt]:
    """Every model-call attempt ordered by the seq its request was built before.

    v4 (§7.1): every `assistant/message` / `assistant/attempt` event is one attempt, found by
    type without parsing (turn, step and finish are left unset: only `seq` and `before` are read
    here). v0 attempts need their chunks: a `requests.AttemptCollector` fed the events of the
    types it reads."""
    if nested_streams(version):
        messages = set(seqs_of_type(events, ("assistant/message",)))
        return [Attempt(seq, seq, "message", None, None, message_seq=seq) if seq in messages
                else Attempt(seq, seq, "attempt", None, None)  # type: ignore[arg-type]
                for seq in seqs_of_type(events, ("assistant/message", "assistant/attempt"))]
    collector = AttemptCollector(version=version)
    found = [attempt for seq, event in read_events(events, seqs_of_type(events, collector.types))
             for attempt in collector.feed(seq, event)]
    found += collector.finish()
    return sorted(found, key=lambda a: a.before)


def _plan(found: Compactions, events: Sequence[Mapping[str, Any]], version: int,
          probes: bool = True) -> tuple[AuditPlan, list[tuple[int, ...] | None]]:
    """What each attempt's checks and probes will read (`sweep.AuditPlan`), but the requests."""
    timeline = found.timeline
    plan = AuditPlan(len(events))
    hidden_sets = []
    after: list[int] = []   # the seqs whose surfaces the pairing check reads
    replacements: list[int] = []
    for index, record in enumerate(found.records):
        hidden = _hidden_set(record, timeline, events, version)
        checked = record.status != "failed" or record.replacement_seq is not None
        if checked and hidden:
            plan.surface(hidden)
            seq = record.replacement_seq
            if seq is not None:   # the pairing check's surface: at seq, or at seq - 1 and seq
                after.append(seq if record.replacement_landed else seq - 1)
                replacements.append(seq)
        if probes and record.summary_seq is not None and hidden is not None:
            plan.probe(index, hidden, record.summary_seq, record.summary)
        hidden_sets.append(hidden)
    plan.surface(replacements)
    plan.surface(nodes_seen_at(timeline, after))
    return plan, hidden_sets


def _around(found: Compactions, attempts: Sequence[Attempt]
            ) -> list[tuple[Attempt | None, Attempt | None]]:
    befores = [a.before for a in attempts]
    return [_attempt_around(attempts, befores, record) for record in found.records]


def _read_facts(found: Compactions, events: Sequence[Mapping[str, Any]], version: int,
                attempts: Sequence[Attempt] | None, probes: bool = True
                ) -> tuple[AuditFacts, list[tuple[int, ...] | None], list[Attempt]]:
    """The facts the audit reads (collected during the fold when `found` has them, else from
    one in-order pass) and the model attempts sorted by the seq their request was built before
    (computed when not given)."""
    timeline, price = found.timeline, found.price
    plan, hidden_sets = _plan(found, events, version, probes)
    if attempts is None and found.facts is not None and found.facts.attempts is not None:
        attempts = found.facts.attempts   # found during the fold (v0)
    if attempts is None:
        attempts = model_requests(events, version=version)
    attempts = sorted(attempts, key=lambda a: a.before)
    if found.facts is None:
        built: list[int] = []   # the seqs the cache break's requests were built after
        for record, (before, after) in zip(found.records, _around(found, attempts)):
            if before is not None and after is not None and record.replacement_seq is not None:
                built += (before.before - 1, after.before - 1)
        if built:
            plan.request(nodes_seen_at(timeline, built))
    facts = AuditFacts.read(events, timeline, plan, version=version, price=price,
                            facts=found.facts)
    return facts, hidden_sets, attempts


def audit_events(events: Sequence[Mapping[str, Any]], *, version: int,
                 meta: Mapping[str, Any] | None = None, session_id: str | None = None,
                 inherited_event_count: int = 0, found: Compactions | None = None,
                 protocol: Sequence[ProtocolViolation] | None = None,
                 attempts: Sequence[Attempt] | None = None, probes: bool = True) -> AuditReport:
    """Audit every compaction and prune of a seq-indexed log (module doc).

    Pass `found` (the `compactions()` of the same events) to reuse its timeline and price cache,
    `protocol` when the log-level violations are already known (the loader runs the v4
    relationships while it scans) and `attempts` when the model calls are (`requests.
    iter_attempts`, any order); otherwise they are computed here. `probes=False` leaves out the
    lost-fact probe (`CompactionAudit.lost` None: it needs the hidden messages' text, which
    `found.facts` may not keep). Everything the checks read from the events is read once, in
    seq order (`sweep`), or was collected during the load (`found.facts`)."""
    with paused_gc():
        return _audit(events, version, meta, session_id, inherited_event_count, found, protocol,
                      attempts, probes)


def _audit(events: Sequence[Mapping[str, Any]], version: int, meta: Mapping[str, Any] | None,
           session_id: str | None, inherited_event_count: int, found: Compactions | None,
           protocol: Sequence[ProtocolViolation] | None, attempts: Sequence[Attempt] | None,
           probes: bool = True) -> AuditReport:
    if found is None:
        found = compactions(events, version=version)
    timeline, price = found.timeline, found.price
    facts, hidden_sets, attempts = _read_facts(found, events, version, attempts, probes)
    rejected = first_errors(timeline)
    audits = []
    rows = zip(found.records, hidden_sets, _around(found, attempts))
    for index, (record, hidden, (before, after)) in enumerate(rows):
        computed = None if hidden is None else price.total(hidden)
        added = (record.replacement_tokens if record.replacement_seq is not None
                 else record.framed_summary_tokens)
        checks = compaction_checks(record, events, timeline, price, version=version,
                                   hidden=hidden, computed=computed, next_request=after,
                                   facts=facts, rejected=rejected)
        breaks = None
        if before is not None and after is not None and record.replacement_seq is not None:
            breaks = facts.cache_break(before, after)
        audits.append(CompactionAudit(record, checks, hidden, computed, added,
                                      facts.probes.get(index), breaks))
    prunes = tuple(PruneAudit(p, prune_checks(p)) for p in found.prunes)
    fold_error = timeline.errors[0] if timeline.errors else None
    priced = {r.replacement_seq for r in found.records} | {p.replacement_seq
                                                            for p in found.prunes}
    unpriced = tuple(r.seq for r in timeline.replacements if r.seq not in priced)
    if protocol is None:
        protocol = _protocol(events, version, meta, inherited_event_count, timeline,
                             found.facts)
    return AuditReport(session_id, version, tuple(audits), prunes, fold_error, tuple(protocol),
                       unpriced)


def loader_protocol(log: Any) -> tuple[ProtocolViolation, ...] | None:
    """The v4 relationship violations `workbench.core.load.load_log` recorded as defects (rule
    ``relationships``; it runs them once while scanning); None for v0, whose compaction
    invariant the loader does not run."""
    if not nested_streams(rules_for(log.format_version)):
        return None
    return tuple(ProtocolViolation(d.seq, "SessionFormatError", d.message)
                 for d in log.defects if d.rule == "relationships")


def audit_log(log: Any, *, found: Compactions | None = None,
              attempts: Sequence[Attempt] | None = None, probes: bool = True) -> AuditReport:
    """Audit a `Log` from `workbench.core.load.load_log` (its relationship defects are reused;
    for events from elsewhere use `audit_events`, which checks them itself). `found` and
    `attempts` and `probes` as in `audit_events`."""
    return audit_events(log.events, version=log.format_version or 0, meta=log.meta,
                        session_id=log.session_id,
                        inherited_event_count=getattr(log, "inherited_event_count", 0),
                        found=found, protocol=loader_protocol(log), attempts=attempts,
                        probes=probes)
