"""Compaction frames: one row per compaction attempt and one per tool-result prune.
Layer: frames. Selects and types the core compaction audit
(`workbench.core.compaction.audit`): the bracket record (v0 spec §5.10: start / summary /
checkpoint / end, status, trigger), the audit's measurements, and one nullable boolean column
per audit check (``check_<name>``; NA where the check does not apply to that attempt, e.g. the
replacement checks of an attempt without a replacement).

Statuses are the core's: ``completed`` (closed without error), ``failed`` (closed with an
error), ``interrupted`` (never closed; the lock is still held), ``stale`` (never closed, released
by a later ``session/end-seed``, v0 §5.2).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench.core.compaction.checks import (  # noqa: F401 - re-exported
    COMPACTION_CHECKS,
    PRUNE_CHECKS,
)
from workbench.core.compaction.shapes import error_kind
from workbench.core.preview import content_text
from workbench.frames.columns import DURATION, SEQ_LIST, TIME, Column, Columns, frame
from workbench.io.jsjson import ABSENT

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

STATUS = pd.CategoricalDtype(["completed", "failed", "interrupted", "stale"])
"""Bracket status (core `CompactionRecord.status`)."""
TRIGGER = pd.CategoricalDtype(["pressure", "overflow", "manual"])
"""What opened the attempt (v0 spec §5.8)."""
ERROR_KIND = pd.CategoricalDtype(["summary-not-smaller", "surface-changed", "empty-summary",
                                  "cancelled", "other"])
"""Classification of `compaction/end.error` (the conformance suite's, not a reference enum)."""


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None


def _usage(usage: Any, key: str) -> int | None:
    return _int(usage.get(key)) if isinstance(usage, dict) else None


def _seqs(values: Any) -> list[int] | None:
    """The integral values of logged `values` (`_int` of each), in order (None: none logged)."""
    if values is None:
        return None
    ints = [x if type(x) is int else _int(x) for x in values]
    return [v for v in ints if v is not None] if None in ints else ints


def _duration(start: Any, end: Any) -> int | None:
    a, b = _int(start), _int(end)
    return b - a if a is not None and b is not None else None


def _checks(audit: Any, names: tuple[str, ...]) -> dict[str, bool | None]:
    found: dict[str, bool | None] = dict.fromkeys(names)
    for check in audit.checks:
        if check.name in found:
            found[check.name] = bool(check.ok) and found[check.name] is not False
    return found


def _failed(audit: Any) -> str | None:
    names = ", ".join(dict.fromkeys(c.name for c in audit.checks if not c.ok))
    return names or None


def _r(name: str):
    return lambda rows: rows[name]


def _col(name: str, dtype: Any, doc: str) -> Column:
    return Column(name, dtype, _r(name), doc)


CompactionIdentity: Columns = (
    _col("compaction_id", "string", "compactionId of the attempt"),
    _col("status", STATUS, "completed / failed / interrupted / stale"),
    _col("trigger", TRIGGER, "pressure (pre-step), overflow (in-step retry), manual (/compact)"),
    _col("owner_turn", "Int64", "owning turn (NA for a manual attempt between turns)"),
    _col("command", "string", "the command that started a manual attempt (e.g. /compact)"),
    _col("start_seq", "Int64", "compaction/start seq"),
    _col("summary_seq", "Int64", "compaction/summary seq (NA: no summary logged)"),
    _col("replacement_seq", "Int64", "checkpoint user/message seq (NA: none)"),
    _col("end_seq", "Int64", "compaction/end seq (NA: never closed)"),
    _col("end_seed_seq", "Int64", "session/end-seed that released a never-closed attempt"),
    _col("start_time", TIME, "time of compaction/start"),
    _col("end_time", TIME, "time of compaction/end"),
    _col("duration", DURATION, "end_time - start_time"),
    _col("error", "string", "compaction/end.error, verbatim"),
    _col("error_kind", ERROR_KIND, "classification of the error text"),
)
"""The bracket: which events make up the attempt and how it ended."""

CompactionSummary: Columns = (
    _col("provider", "string", "summarizer provider (compaction/summary)"),
    _col("model", "string", "summarizer model"),
    _col("max_tokens", "Int64", "summary maxTokens"),
    _col("usage_input", "Int64", "summarizer usage: uncached input tokens"),
    _col("usage_output", "Int64", "summarizer usage: output tokens"),
    _col("logged_shadowed_start", "Int64", "logged shadowedRange.start"),
    _col("logged_shadowed_end", "Int64", "logged shadowedRange.end"),
    _col("logged_shadowed_seqs", SEQ_LIST, "logged shadowedSeqs (surface order)"),
    _col("shadowed_seqs", SEQ_LIST, "what the fold actually shadowed (or would have shadowed)"),
    _col("shadowed_count", "Int64", "number of shadowed nodes"),
    _col("logged_shadowed_tokens", "Int64", "logged shadowedTokenCount"),
    _col("shadowed_tokens", "Int64", "heuristic price of the shadowed nodes"),
    _col("summary_tokens", "Int64", "price of the checkpoint (or of the framed summary)"),
    _col("compression_ratio", "Float64", "shadowed_tokens / summary_tokens"),
    _col("replacement_landed", "boolean", "the checkpoint replaced the range on the surface"),
    _col("summary_preview", "string", "preview of the summary text"),
)
"""What was summarized, and what it cost and saved."""

CompactionAudit: Columns = (
    _col("audit_ok", "boolean", "every applicable audit check passed"),
    _col("checks_failed", "string", "names of the failing checks, comma-separated (NA: none failed)"),
) + tuple(_col(f"check_{name}", "boolean", f"audit check {name} (NA: not applicable)")
          for name in COMPACTION_CHECKS)
"""The audit verdicts."""

COMPACTION_COLUMNS: Columns = CompactionIdentity + CompactionSummary + CompactionAudit


def _compaction_rows(session: AnalysedLog) -> dict[str, list]:
    rows: dict[str, list] = {c.name: [] for c in COMPACTION_COLUMNS}
    for audit in session.audit.compactions:
        r = audit.record
        error = r.error if r.error is not ABSENT else None
        values = {
            "compaction_id": _str(r.compaction_id), "status": r.status,
            "trigger": r.trigger.kind, "owner_turn": _int(r.owner),
            "command": _str(r.trigger.command), "start_seq": r.start_seq,
            "summary_seq": r.summary_seq, "replacement_seq": r.replacement_seq,
            "end_seq": r.end_seq, "end_seed_seq": r.end_seed_seq,
            "start_time": _int(r.start_time) if session.has_times else None,
            "end_time": _int(r.end_time) if session.has_times else None,
            "duration": _duration(r.start_time, r.end_time) if session.has_times else None,
            "error": _str(error), "error_kind": error_kind(error) if error is not None else None,
            "provider": _str(r.provider), "model": _str(r.model),
            "max_tokens": _int(r.max_tokens),
            "usage_input": _usage(r.usage, "inputTokens"),
            "usage_output": _usage(r.usage, "outputTokens"),
            "logged_shadowed_start": _int(r.logged_range[0]) if r.logged_range else None,
            "logged_shadowed_end": _int(r.logged_range[1]) if r.logged_range else None,
            "logged_shadowed_seqs": _seqs(r.logged_shadowed_seqs),
            "shadowed_seqs": None if audit.hidden_seqs is None else list(audit.hidden_seqs),
            "shadowed_count": None if audit.hidden_seqs is None else len(audit.hidden_seqs),
            "logged_shadowed_tokens": _int(r.logged_shadowed_tokens),
            "shadowed_tokens": audit.computed_shadowed_tokens,
            "summary_tokens": audit.summary_tokens,
            "compression_ratio": audit.compression_ratio,
            "replacement_landed": r.replacement_landed,
            "summary_preview": content_text(r.summary) if r.summary is not None else None,
            "audit_ok": audit.ok, "checks_failed": _failed(audit),
        }
        values.update({f"check_{k}": v for k, v in _checks(audit, COMPACTION_CHECKS).items()})
        for name, column in rows.items():
            column.append(values[name])
    return rows


def compactions_frame(session: AnalysedLog) -> pd.DataFrame:
    """One row per `compaction/start`, in log order."""
    rows = _compaction_rows(session) if len(session) else None
    return frame(COMPACTION_COLUMNS, rows, len(rows["start_seq"]) if rows else 0)


PRUNE_COLUMNS: Columns = (
    _col("prune_seq", "Int64", "compaction/prune seq"),
    _col("time", TIME, "its time"),
    _col("shadowed_seq", "Int64", "the tool/result that was pruned (the one node a prune shadows)"),
    _col("replacement_seq", "Int64", "the pruned copy (tool/result replace) (NA: missing)"),
    _col("call_id", "string", "tool call id of the result"),
    _col("logged_shadowed_tokens", "Int64", "logged shadowedTokenCount"),
    _col("shadowed_tokens", "Int64", "heuristic price of the pruned result"),
    _col("replacement_tokens", "Int64", "heuristic price of the pruned copy"),
    _col("saved_tokens", "Int64", "shadowed_tokens - replacement_tokens"),
    _col("chars_before", "Int64", "result text length before pruning (code points, §5.9)"),
    _col("chars_after", "Int64", "result text length after pruning"),
    _col("chars_removed", "Int64", "chars_before - chars_after"),
    _col("replacement_landed", "boolean", "the pruned copy replaced the original on the surface"),
    _col("audit_ok", "boolean", "every applicable prune check passed"),
    _col("checks_failed", "string", "names of the failing checks, comma-separated (NA: none failed)"),
) + tuple(_col(f"check_{name}", "boolean", f"audit check {name} (NA: not applicable)")
          for name in PRUNE_CHECKS)
"""One tool-result prune (v0 spec §5.9)."""


def _diff(a: int | None, b: int | None) -> int | None:
    return a - b if a is not None and b is not None else None


def prunes_frame(session: AnalysedLog) -> pd.DataFrame:
    """One row per `compaction/prune`, in log order."""
    if not len(session):
        return frame(PRUNE_COLUMNS, None, 0)
    rows: dict[str, list] = {c.name: [] for c in PRUNE_COLUMNS}
    times = session.index.time
    for audit in session.audit.prunes:
        p = audit.record
        values = {
            "prune_seq": p.prune_seq, "time": times[p.prune_seq],
            "shadowed_seq": _int(p.original_seq), "replacement_seq": p.replacement_seq,
            "call_id": _str(p.call_id), "logged_shadowed_tokens": _int(p.logged_shadowed_tokens),
            "shadowed_tokens": p.original_tokens, "replacement_tokens": p.replacement_tokens,
            "saved_tokens": _diff(p.original_tokens, p.replacement_tokens),
            "chars_before": p.chars_before, "chars_after": p.chars_after,
            "chars_removed": _diff(p.chars_before, p.chars_after),
            "replacement_landed": p.fold_shadowed_seqs is not None,
            "audit_ok": audit.ok, "checks_failed": _failed(audit),
        }
        values.update({f"check_{k}": v for k, v in _checks(audit, PRUNE_CHECKS).items()})
        for name, column in rows.items():
            column.append(values[name])
    return frame(PRUNE_COLUMNS, rows, len(rows["prune_seq"]))
