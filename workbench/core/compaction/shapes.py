"""The bracket-analysis shapes of the `compaction/` conformance vectors. Layer: core.

`shared/conformance/INDEX.md` (v0) and `shared/conformance-v4/INDEX.md` (v4) define one JSON
object per bracket and per prune; these functions turn a `CompactionRecord` / `PruneRecord` into
exactly that object, so the vector handler compares every field and other callers (frames,
reports) can reuse the same view. The two generations differ:

* v0 attaches the surface comparison to the *replacement* (`foldShadowedSeqs` = what the fold's
  replacement record removed) and checks the shrink rule against the logged count
  (`summarySmallerHeld`); a failed bracket carries `errorKind` and `summaryLogged`.
* v4 attaches it to the *summary* (`foldShadowedSeqs` = the surface span between the logged
  endpoints when the summary was written) and checks the shrink rule against the meter
  (`summarySmallerThanMeter`); the replacement range keeps the on-disk `startSeq`/`endSeq` keys.

`error_kind` is the v0 suite's classification of the durable error text (not a reference enum).
"""
from __future__ import annotations

import re
from typing import Any

from workbench.core.compaction.brackets import CompactionRecord
from workbench.core.compaction.prunes import PruneRecord
from workbench.io.generations import nested_streams
from workbench.io.jsjson import ABSENT, is_number
from workbench.io.jsvalues import deep_equal

_SURFACE_CHANGED = ("session surface changed during summarization", "selected span",
                    "selected surface changed")
_EMPTY = ("produced no text summary content", "empty summary", "summary is empty")
_CANCELLED = re.compile(r"\b(abort(ed)?|cancel(l?ed)?|AbortError)\b", re.IGNORECASE)


def error_kind(error: Any) -> str:
    """`summary-not-smaller`, `surface-changed`, `empty-summary`, `cancelled` or `other`."""
    if not isinstance(error, str):
        return "other"
    if "summary is not smaller than the shadowed content" in error:
        return "summary-not-smaller"
    if any(fragment in error for fragment in _SURFACE_CHANGED):
        return "surface-changed"
    if any(fragment in error for fragment in _EMPTY):
        return "empty-summary"
    if _CANCELLED.search(error):
        return "cancelled"
    return "other"


def _lt(a: Any, b: Any) -> bool:
    return is_number(a) and is_number(b) and a < b   # a boolean is no number


def bracket_json(r: CompactionRecord, *, version: int) -> dict[str, Any]:
    """The vector object of one bracket (field list in the module doc)."""
    out: dict[str, Any] = {
        "compactionId": r.compaction_id, "owner": r.owner, "startSeq": r.start_seq,
        "summarySeq": r.summary_seq, "replacementSeq": r.replacement_seq, "endSeq": r.end_seq,
        "status": "interrupted" if r.status in ("interrupted", "stale") else r.status,
    }
    if r.source_command_id is not ABSENT:
        out["sourceCommandId"] = r.source_command_id
    if r.status in ("interrupted", "stale"):
        out["staleAfterEndSeed"] = r.status == "stale"
    if r.status == "failed":
        out["error"] = r.error
        numbers = r.not_smaller
        if nested_streams(version):
            if numbers is not None:
                out["notSmaller"] = {"framed": numbers[0], "shadowed": numbers[1]}
        else:
            out["errorKind"] = error_kind(r.error)
            out["summaryLogged"] = r.summary_seq is not None
            if numbers is not None:
                out.update(framedSummaryTokens=numbers[0], rejectedShadowedTokenCount=numbers[1],
                           summarySmallerHeld=False)
    if r.summary_seq is not None:
        start, end = r.logged_range or (None, None)
        out.update(shadowedRange={"start": start, "end": end},
                   shadowedSeqs=None if r.logged_shadowed_seqs is None
                   else list(r.logged_shadowed_seqs),
                   shadowedTokenCount=r.logged_shadowed_tokens)
        if nested_streams(version):
            span = list(r.span_seqs or ())
            out.update(
                foldShadowedSeqs=span, meterShadowedTokens=r.span_tokens,
                framedSummaryTokens=r.framed_summary_tokens,
                shadowedSeqsMatchFold=deep_equal(list(r.logged_shadowed_seqs or ()), span)
                and r.logged_shadowed_seqs is not None,
                shadowedTokenCountMatchesMeter=deep_equal(r.logged_shadowed_tokens,
                                                          r.span_tokens),
                summarySmallerThanMeter=_lt(r.framed_summary_tokens, r.span_tokens))
    if r.replacement_seq is not None:
        start, end = r.replacement_range or (None, None)
        adjacent = r.replacement_adjacent
        if nested_streams(version):
            out.update(replacementRange={"startSeq": start, "endSeq": end},
                       replacementAdjacentToSummary=adjacent,
                       replacementSourcesCanonical=r.replacement_sources_canonical)
        else:
            fold = None if r.fold_shadowed_seqs is None else list(r.fold_shadowed_seqs)
            out.update(
                replacementRange={"start": start, "end": end}, foldShadowedSeqs=fold,
                meterShadowedTokens=r.fold_tokens, replacementAdjacentToSummary=adjacent,
                shadowedSeqsMatchFold=fold is not None and r.logged_shadowed_seqs is not None
                and deep_equal(list(r.logged_shadowed_seqs), fold),
                shadowedTokenCountMatchesMeter=r.fold_tokens is not None
                and deep_equal(r.logged_shadowed_tokens, r.fold_tokens),
                replacementSourcesCanonical=r.replacement_sources_canonical)
            if r.summary_seq is not None:
                out.update(
                    framedSummaryTokens=r.framed_summary_tokens,
                    summarySmallerHeld=_lt(r.framed_summary_tokens, r.logged_shadowed_tokens),
                    replacementContentIsFramedSummary=bool(r.replacement_content_is_framed))
    return out


def prune_json(p: PruneRecord, *, version: int) -> dict[str, Any]:
    """The vector object of one prune (v0 `meterShadowedTokens`, v4 `originalPrice`)."""
    out: dict[str, Any] = {
        "pruneSeq": p.prune_seq, "shadowedSeqs": list(p.logged_shadowed_seqs),
        "shadowedTokenCount": p.logged_shadowed_tokens, "replacementSeq": p.replacement_seq,
        "shadowedTokenCountMatchesMeter": p.original_tokens is not None
        and deep_equal(p.logged_shadowed_tokens, p.original_tokens),
        "replacementTokens": p.replacement_tokens,
    }
    out["originalPrice" if nested_streams(version) else "meterShadowedTokens"] = p.original_tokens
    return out
