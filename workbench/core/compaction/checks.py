"""The individual audit checks of one compaction attempt or prune. Layer: core.

Each function returns the applicable `Check`s (name, pass/fail, evidence); the list of checks and
what each one means is in `workbench.core.compaction.audit`. Details always name the seqs and the
numbers compared, so a failing row can be found in the log without rerunning anything.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.compaction.brackets import (
    SUMMARY_CLOSE_TAG,
    SUMMARY_OPEN_TAG,
    CompactionRecord,
)
from workbench.core.compaction.pairing import ToolPairingError, cut_balanced
from workbench.core.compaction.prunes import PruneRecord
from workbench.core.compaction.sweep import AuditFacts, newest_result
from workbench.core.requests import Attempt
from workbench.core.surface_arrays import position_of, surface_array
from workbench.core.timeline import SurfaceTimeline
from workbench.io.jsvalues import deep_equal, is_scalar, js_str

_TRANSCRIPT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})

COMPACTION_CHECKS = (
    "bracket_closed", "inside_bracket", "replacement_cites_sources", "checkpoint_after_summary",
    "checkpoint_is_framed_summary", "shadowed_seqs_match_fold", "shadowed_tokens_match",
    "checkpoint_smaller", "tool_pairing_after", "newest_tool_result_visible",
    "next_request_sees_checkpoint", "originals_preserved")
"""The checks of an attempt, in the order `compaction_checks` lists them (their meaning: the
`workbench.core.compaction.audit` docstring)."""
PRUNE_CHECKS = ("prune_replacement_adjacent", "prune_price_matches", "prune_target",
                "prune_smaller")
"""The checks of a prune (`prune_checks`)."""


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    ok: bool
    detail: str

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail}


def _seqs(seqs: Sequence[Any] | None, limit: int = 12) -> str:
    if seqs is None:
        return "none"
    if len(seqs) > limit:
        half = limit // 2
        items = [*map(js_str, seqs[:half]), "…", *map(js_str, seqs[len(seqs) - half:])]
    else:
        items = [js_str(s) for s in seqs]
    return "[" + ", ".join(items) + "]"


def _bracket_closed(r: CompactionRecord, events: Sequence[Mapping[str, Any]]) -> Check:
    if r.end_seq is not None:
        outcome = "cleanly" if r.status == "completed" else f"with error {r.error!r}"
        return Check("bracket_closed", True, f"start {r.start_seq} closed by compaction/end "
                     f"{r.end_seq} {outcome}")
    if r.status == "stale":
        return Check("bracket_closed", True, f"start {r.start_seq} never closed; released by "
                     f"session/end-seed {r.end_seed_seq} (an earlier process lifecycle): stale")
    return Check("bracket_closed", False, f"start {r.start_seq} has no compaction/end and no "
                 f"later session/end-seed (log ends at seq {len(events) - 1}): interrupted, "
                 "the compaction lock is still held")


def _inside_bracket(r: CompactionRecord) -> Check | None:
    if r.status == "failed" and r.summary_seq is None and r.replacement_seq is None:
        return None
    if r.status in ("interrupted", "stale") and r.summary_seq is None:
        return None
    chain = [("start", r.start_seq), ("summary", r.summary_seq),
             ("replacement", r.replacement_seq), ("end", r.end_seq)]
    if r.status != "completed":
        chain = [(n, s) for n, s in chain if s is not None]
    missing = [n for n, s in chain if s is None]
    shown = " < ".join(f"{n} {s}" for n, s in chain if s is not None)
    if missing:
        return Check("inside_bracket", False, f"{' and '.join(missing)} missing: {shown}")
    seqs = [s for _, s in chain]
    ok = all(a < b for a, b in zip(seqs, seqs[1:]))
    return Check("inside_bracket", ok, shown if ok else f"out of order: {shown}")


def first_errors(timeline: SurfaceTimeline) -> dict[Any, Any]:
    """The first fold error at each seq."""
    out: dict[Any, Any] = {}
    for error in timeline.errors:
        out.setdefault(error.seq, error)
    return out


def _cites_sources(r: CompactionRecord, timeline: SurfaceTimeline,
                   hidden: tuple[int, ...] | None, errors: Mapping[Any, Any] | None) -> Check:
    if errors is None:
        rejected = next((e for e in timeline.errors if e.seq == r.replacement_seq), None)
    else:
        rejected = errors.get(r.replacement_seq)
    sources = {s for s in r.replacement_sources or () if is_scalar(s)}
    wanted = [("start", r.start_seq), ("summary", r.summary_seq)]
    missing = [f"{n} {s}" for n, s in wanted if s is not None and s not in sources]
    missing_nodes = [s for s in hidden or () if s not in sources]
    if missing_nodes:
        missing.append(f"shadowed {_seqs(missing_nodes)}")
    cited = f"sources {_seqs(r.replacement_sources, 16)} of replacement {r.replacement_seq}"
    if rejected is not None:
        return Check("replacement_cites_sources", False, f"the fold rejects seq {rejected.seq} "
                     f"({rejected.kind}): {rejected.message}; {cited}")
    if missing:
        return Check("replacement_cites_sources", False, f"{cited} omit {', '.join(missing)}")
    expected = r.canonical_sources
    if expected is not None and not r.replacement_sources_canonical:
        wanted_set = {s for s in expected if is_scalar(s)}
        extra = [s for s in r.replacement_sources or () if not is_scalar(s) or s not in wanted_set]
        how = f"also cite {_seqs(extra)}" if extra else "cite them in another order"
        return Check("replacement_cites_sources", False, f"{cited} {how}: not [start, summary, "
                     f"...shadowedSeqs] = {_seqs(expected, 16)} (v0 §5.1 step 4, v4 §5.1)")
    return Check("replacement_cites_sources", True, f"{cited} cite start {r.start_seq}, summary "
                 f"{r.summary_seq} and all {len(hidden or ())} shadowed nodes")


def _checkpoint_follows_summary(r: CompactionRecord) -> Check | None:
    """The checkpoint is logged right after its summary (v0 §5.1 step 4; v4 §5.1 unchanged), and
    its content is the summary framed (v0 §5.5, v4 §5.5)."""
    if r.summary_seq is None or r.replacement_seq is None:
        return None
    if r.replacement_adjacent:
        return Check("checkpoint_after_summary", True, f"checkpoint {r.replacement_seq} "
                     f"immediately follows summary {r.summary_seq}")
    return Check("checkpoint_after_summary", False, f"checkpoint {r.replacement_seq} does not "
                 f"immediately follow summary {r.summary_seq} (v0 §5.1 step 4: the summary and "
                 "its checkpoint are adjacent)")


def _checkpoint_framed(r: CompactionRecord) -> Check | None:
    if r.summary_seq is None or r.replacement_seq is None:
        return None
    blocks = len(r.summary) if isinstance(r.summary, list) else 0
    framing = (f"preamble + {SUMMARY_OPEN_TAG}, the {blocks} summary block"
               f"{'' if blocks == 1 else 's'} verbatim, {SUMMARY_CLOSE_TAG}"
               + ("" if isinstance(r.summary, list) else "; the summary is not a block list"))
    if r.replacement_content_is_framed:
        return Check("checkpoint_is_framed_summary", True, f"checkpoint {r.replacement_seq} "
                     f"content is summary {r.summary_seq} framed ({framing})")
    return Check("checkpoint_is_framed_summary", False, f"checkpoint {r.replacement_seq} "
                 f"content is not summary {r.summary_seq} framed ({framing}; v0 §5.5, v4 §5.5)")


def _pairing_surface(r: CompactionRecord, timeline: SurfaceTimeline,
                     hidden: tuple[int, ...]) -> np.ndarray | None:
    """The surface right after the replacement (had the fold applied it, when it did not), as
    an int64 array; None when the hidden span is not on the surface before it."""
    seq = r.replacement_seq
    if r.replacement_landed:
        return surface_array(timeline, seq)
    surface = surface_array(timeline, seq - 1)
    found = np.flatnonzero(surface == hidden[0])
    if not len(found):
        return None
    i = int(found[0])
    return np.concatenate((surface[:i], np.array([seq], np.int64), surface[i + len(hidden):]))


def _pairing_after(r: CompactionRecord, events: Sequence[Mapping[str, Any]],
                   timeline: SurfaceTimeline, hidden: tuple[int, ...],
                   facts: AuditFacts | None) -> Check | None:
    seq = r.replacement_seq
    surface = _pairing_surface(r, timeline, hidden)
    if surface is None:
        return None
    try:
        cuts = (cut_balanced(surface.tolist(), events) if facts is None
                else facts.cut_balanced(surface))
    except ToolPairingError as exc:
        return Check("tool_pairing_after", False, f"after replacement {seq}: {exc.message}")
    at = int(np.flatnonzero(surface == seq)[0])
    before, after = bool(cuts[at]), bool(cuts[at + 1])
    if before and after:
        return Check("tool_pairing_after", True, f"cuts before and after checkpoint {seq} "
                     f"(surface position {at} of {len(surface)}) are balanced")
    side = " and ".join(n for n, ok in (("before", before), ("after", after)) if not ok)
    return Check("tool_pairing_after", False, f"the cut {side} checkpoint {seq} (surface "
                 f"position {at}) splits a tool call from its result")


def _newest_result(r: CompactionRecord, events: Sequence[Mapping[str, Any]],
                   timeline: SurfaceTimeline, hidden: tuple[int, ...],
                   facts: AuditFacts | None) -> Check | None:
    """Only a result of the owner turn matters: the model is still working from it. Results of
    finished turns may be condensed like any other history (an overflow or manual compaction
    with nothing retained hides them by design, v0 §5.3)."""
    if r.owner is None:
        return None
    if facts is not None:
        newest = facts.newest_result(surface_array(timeline, r.replacement_seq - 1))
    else:
        newest = newest_result(timeline.surface_at(r.replacement_seq - 1), events)
    if newest is None:
        return None
    data = events[newest].get("data")
    turn = data.get("turn") if isinstance(data, dict) else None
    if turn != r.owner or type(turn) is bool:
        return None
    if newest in hidden:
        return Check("newest_tool_result_visible", False, f"the newest tool result {newest} "
                     f"(turn {js_str(turn)}, the owner turn) is among the shadowed nodes "
                     f"{_seqs(hidden)}")
    return Check("newest_tool_result_visible", True, f"the newest tool result {newest} of owner "
                 f"turn {js_str(turn)} stays on the surface")


def _next_request(r: CompactionRecord, events: Sequence[Mapping[str, Any]],
                  timeline: SurfaceTimeline, attempt: Attempt | None) -> Check | None:
    if attempt is None or not r.replacement_landed:
        return None
    at = attempt.before - 1
    node = timeline.representative(r.replacement_seq, at)
    surface = surface_array(timeline, at)
    position = None if node is None else position_of(surface, node)
    if position is None:
        return Check("next_request_sees_checkpoint", False, f"request {attempt.seq} (built "
                     f"after seq {at}) does not contain checkpoint {r.replacement_seq}")
    via = "" if node == r.replacement_seq else f" through later checkpoint {node}"
    if timeline.message_at(node, at) is None:
        return Check("next_request_sees_checkpoint", False, f"checkpoint node {node} derives no "
                     f"message in request {attempt.seq}")
    return Check("next_request_sees_checkpoint", True, f"request {attempt.seq} holds checkpoint "
                 f"{r.replacement_seq}{via} at surface position {position} of {len(surface)}")


def _originals(r: CompactionRecord, events: Sequence[Mapping[str, Any]],
               timeline: SurfaceTimeline, hidden: tuple[int, ...],
               facts: AuditFacts | None) -> Check:
    """Hidden nodes are appended originals (in the transcript) or earlier replacements
    (checkpoints, pruned copies) whose own originals their own audit row covers; checking one
    level keeps the audit linear on logs with long chains of nested checkpoints."""
    problems = []
    nested = 0
    count = len(events)
    for seq in hidden:
        if facts is None:
            missing = not (0 <= seq < count) or events[seq].get("seq") != seq
        else:
            missing = not (0 <= seq < count) or facts.misplaced(seq)
        if missing:
            problems.append(f"{seq} is not in the log")
            continue
        if seq in timeline.replacement_by_seq:
            nested += 1
        elif (facts.rewritten(seq) if facts is not None else (
                events[seq].get("type") in _TRANSCRIPT_TYPES
                and events[seq].get("surfaceOp") != "append")):
            problems.append(f"{seq} is not an append-origin transcript event")
    if problems:
        return Check("originals_preserved", False, "; ".join(problems[:5]))
    via = f" ({nested} of them earlier replacements)" if nested else ""
    return Check("originals_preserved", True, f"all {len(hidden)} shadowed nodes{via} are in "
                 "the log; the appended ones are in the transcript")


def compaction_checks(r: CompactionRecord, events: Sequence[Mapping[str, Any]],
                      timeline: SurfaceTimeline, price: Callable[[int], int], *, version: int,
                      hidden: tuple[int, ...] | None, computed: int | None,
                      next_request: Attempt | None, facts: AuditFacts | None = None,
                      rejected: Mapping[int, Any] | None = None) -> tuple[Check, ...]:
    """The applicable checks of one attempt (see `workbench.core.compaction.audit`).

    `facts` (`sweep.AuditFacts` of a plan covering this attempt) replaces the event reads of
    the pairing and originals checks; `rejected` maps seqs to the timeline's first fold error
    there (default: searched)."""
    checks: list[Check | None] = [_bracket_closed(r, events), _inside_bracket(r)]
    if r.replacement_seq is not None:
        checks.append(_cites_sources(r, timeline, hidden, rejected))
        checks.append(_checkpoint_follows_summary(r))
        checks.append(_checkpoint_framed(r))
    if r.summary_seq is not None and hidden is not None:
        logged = r.logged_shadowed_seqs
        same = logged is not None and deep_equal(list(logged), list(hidden))
        checks.append(Check("shadowed_seqs_match_fold", same, f"logged {_seqs(logged)} vs "
                            f"hidden {_seqs(hidden)}" + ("" if same else " differ")))
        same = deep_equal(r.logged_shadowed_tokens, computed)
        checks.append(Check("shadowed_tokens_match", same, f"logged shadowedTokenCount "
                            f"{js_str(r.logged_shadowed_tokens)} vs heuristic {computed} over "
                            f"{len(hidden)} nodes"))
    if hidden and computed is not None and r.summary_seq is not None:
        added = (r.replacement_tokens if r.replacement_seq is not None
                 else r.framed_summary_tokens)
        what = (f"checkpoint {r.replacement_seq}" if r.replacement_seq is not None
                else "framed summary")
        smaller = added is not None and added < computed
        checks.append(Check("checkpoint_smaller", smaller, f"{what} prices {added} tokens "
                            f"{'<' if smaller else '>='} {computed} hidden"))
    if r.replacement_seq is not None and hidden:
        checks.append(_pairing_after(r, events, timeline, hidden, facts))
        checks.append(_newest_result(r, events, timeline, hidden, facts))
        checks.append(_next_request(r, events, timeline, next_request))
    if hidden and not (r.status == "failed" and r.replacement_seq is None):
        checks.append(_originals(r, events, timeline, hidden, facts))   # nothing was hidden
    return tuple(c for c in checks if c is not None)


def prune_checks(p: PruneRecord) -> tuple[Check, ...]:
    """Checks of one tool-result prune (v0 §5.9, v4 §5.9)."""
    checks = []
    if p.replacement_seq is None:
        return (Check("prune_replacement_adjacent", False,
                      f"compaction/prune {p.prune_seq} has no replacement tool/result"),)
    adjacent = p.replacement_seq == p.prune_seq + 1
    checks.append(Check("prune_replacement_adjacent", adjacent, f"prune {p.prune_seq} → "
                        f"replacement {p.replacement_seq}"))
    same = p.original_tokens is not None and deep_equal(p.logged_shadowed_tokens,
                                                        p.original_tokens)
    checks.append(Check("prune_price_matches", same, f"logged shadowedTokenCount "
                        f"{js_str(p.logged_shadowed_tokens)} vs heuristic {p.original_tokens} of "
                        f"original {js_str(p.original_seq)}"))
    target = p.fold_shadowed_seqs is not None and deep_equal(list(p.fold_shadowed_seqs),
                                                             list(p.logged_shadowed_seqs))
    checks.append(Check("prune_target", target, f"logged shadowedSeqs "
                        f"{_seqs(p.logged_shadowed_seqs)} vs fold {_seqs(p.fold_shadowed_seqs)}"))
    smaller = (p.chars_before is not None and p.chars_after is not None
               and p.chars_after < p.chars_before)
    checks.append(Check("prune_smaller", smaller, f"{p.chars_before} → {p.chars_after} code "
                        "points"))
    return tuple(checks)
