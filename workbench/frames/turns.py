"""`turns_frame`: one row per turn (per `turn/start`), and `defects_frame`. Layer: frames.

A turn spans `turn/start` .. `turn/end` (v0 spec §3.3); a turn without `turn/end` is *open*
(a live session, or a crash that repair has not closed yet, §1.7). Counts come from the event
scan (structural turn of every event), the tool-call pairing, the model-call attempts and the
usage samples, so they agree with `tool_calls_df`, `requests_df` and `timeline_df`.

`end_reason` is `turn/end.reason.kind` (completed, aborted, blocked, error, max-tokens,
interrupted — written by crash repair —, forked — v4 fork seeds); the legacy v0 shapes are
normalized by the loader (§1.10).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.tool_facts import ANSWERED, as_int
from workbench.frames.columns import DURATION, TIME, Column, Columns, frame
from workbench.io.output import path_text

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

END_REASON = pd.CategoricalDtype(["completed", "aborted", "blocked", "error", "max-tokens",
                                  "interrupted", "forked"])
"""`turn/end.reason.kind`; NA while the turn is open."""
SEVERITY = pd.CategoricalDtype(["refused", "corrupt", "tolerated", "warning"])
"""What the reference would do about a defect (`workbench.io.model.Defect.severity`)."""


def _r(name: str):
    return lambda rows: rows[name]


def _col(name: str, dtype: Any, doc: str) -> Column:
    return Column(name, dtype, _r(name), doc)


TurnColumns: Columns = (
    _col("turn", "Int64", "turn number (turn/start data.turn)"),
    _col("start_seq", "Int64", "turn/start seq"),
    _col("end_seq", "Int64", "turn/end seq (NA: open)"),
    _col("start_time", TIME, "time of turn/start"),
    _col("end_time", TIME, "time of turn/end"),
    _col("duration", DURATION, "end_time - start_time"),
    _col("end_reason", END_REASON, "turn/end reason kind"),
    _col("error_code", "string", "failure code of an error end"),
    _col("events", "Int64", "events from turn/start to turn/end inclusive"),
    _col("steps", "Int64", "step/start events"),
    _col("requests", "Int64", "model-call attempts"),
    _col("failed_requests", "Int64", "attempts that no assistant/message settled"),
    _col("tool_calls", "Int64", "tool calls advertised or started"),
    _col("tool_errors", "Int64", "tool results with the model-facing error flag"),
    _col("compactions", "Int64", "compaction/start events inside the turn (attempts it owns)"),
    _col("usage_input", "Int64", "provider usage: uncached input (counted samples)"),
    _col("usage_output", "Int64", "provider usage: output (counted samples)"),
    _col("usage_total", "Int64", "provider usage: all buckets (counted samples)"),
    _col("surface_size_end", "Int64", "surface nodes after the turn's last event"),
    _col("surface_tokens_end", "Int64", "heuristic surface tokens after the turn's last event"),
    _col("prompt_preview", "string", "first human prompt (user/message, source kind user)"),
)
"""One turn."""


def _data(event: Any) -> dict:
    data = event.get("data") if isinstance(event, dict) else None
    return data if isinstance(data, dict) else {}


def turns_frame(session: AnalysedLog) -> pd.DataFrame:
    """One row per `turn/start`, in log order."""
    n = len(session)
    scan = session.index
    starts = scan.seq_of_type("turn/start").tolist() if n else []
    if not starts:
        return frame(TurnColumns, None, 0)
    events = session.events
    bounds = starts + [n]
    # turn index of every event: the latest turn/start at or before it, while that turn is open
    owner = np.full(n, -1, dtype=np.int64)
    turn_ends = scan.seq_of_type("turn/end")
    ends: list[int | None] = []
    for k, start in enumerate(starts):
        j = np.searchsorted(turn_ends, start)
        end = int(turn_ends[j]) if j < len(turn_ends) and turn_ends[j] < bounds[k + 1] else None
        owner[start:(end + 1 if end is not None else bounds[k + 1])] = k
        ends.append(end)
    rows: dict[str, list] = {c.name: [] for c in TurnColumns}
    counts: dict[str, Any] = {name: np.zeros(len(starts), dtype=np.int64) for name in (
        "steps", "requests", "failed_requests", "tool_calls", "tool_errors", "compactions")}
    for name in ("usage_input", "usage_output", "usage_total"):  # sums of logged numbers: any size
        counts[name] = [0] * len(starts)
    prompts: list[str | None] = [None] * len(starts)
    size_k = len(starts)

    def per_turn(seqs: np.ndarray) -> np.ndarray:
        k = owner[seqs]
        return np.bincount(k[k >= 0], minlength=size_k)

    counts["steps"] += per_turn(scan.seq_of_type("step/start"))
    counts["tool_calls"] += per_turn(scan.seq_of_type("tool/call"))
    counts["compactions"] += per_turn(scan.seq_of_type("compaction/start"))
    tools = scan.tools
    counts["tool_errors"] += per_turn(tools.seq[(tools.kind == ANSWERED) & (tools.is_error == 1)])
    user = scan.source_kinds.codes.get("user", -2)
    for i in scan.seq_of_type("user/message").tolist():
        k = owner[i]
        if k >= 0 and prompts[k] is None and scan.source_kind_codes[i] == user \
                and scan.surface_op[i] == 0:
            prompts[k] = scan.preview_at(i)
    for a in session.attempts:
        k = owner[a.seq]
        if k >= 0:
            counts["requests"][k] += 1
            counts["failed_requests"][k] += a.message_seq is None
    for u in session.usage:
        seq = as_int(u.seq)
        k = owner[seq] if seq is not None and 0 <= seq < n else -1
        if k >= 0 and u.counted:
            counts["usage_input"][k] += u.input_tokens
            counts["usage_output"][k] += u.output_tokens
            counts["usage_total"][k] += u.total_tokens
    size = session.surface.size
    tokens = session.surface.totals(np.maximum(session.prices, 0))
    for k, start in enumerate(starts):
        end = ends[k]
        last = end if end is not None else bounds[k + 1] - 1
        reason = _data(events[end]).get("reason") if end is not None else None
        reason = reason if isinstance(reason, dict) else {}
        error = reason.get("error")
        t0, t1 = scan.time[start], scan.time[end] if end is not None else None
        values = {
            "turn": as_int(_data(events[start]).get("turn")), "start_seq": start,
            "end_seq": end, "start_time": t0, "end_time": t1,
            "duration": t1 - t0 if t0 is not None and t1 is not None else None,
            "end_reason": reason.get("kind") if isinstance(reason.get("kind"), str) else None,
            "error_code": error.get("code") if isinstance(error, dict)
            and isinstance(error.get("code"), str) else None,
            "events": last - start + 1, "surface_size_end": int(size[last]),
            "surface_tokens_end": int(tokens[last]), "prompt_preview": prompts[k],
        }
        values.update({name: c[k] if isinstance(c, list) else int(c[k])
                       for name, c in counts.items()})
        for name, column in rows.items():
            column.append(values[name])
    return frame(TurnColumns, rows, len(starts))


DefectColumns: Columns = (
    _col("rule", "string", "stable kind of the problem (conformance kinds where one exists)"),
    _col("severity", SEVERITY, "refused / corrupt / tolerated / warning"),
    _col("message", "string", "the reference's text (or ours, naming the rule)"),
    _col("file", "string", "the log file"),
    _col("line", "Int64", "record line as in the messages: header = 0, first event = 1"),
    _col("frame", "Int64", "1-based zstd frame"),
    _col("seq", "Int64", "seq of the event concerned"),
    _col("byte_offset", "Int64", "byte offset in the file"),
)
"""One problem found while reading or validating a log (`workbench.io.model.Defect`)."""


def defects_frame(defects: list) -> pd.DataFrame:
    """One row per defect, in the order the loader reported them (a file as `path_text`)."""
    rows = {c.name: [getattr(d, c.name) for d in defects] for c in DefectColumns}
    rows["file"] = [path_text(f) for f in rows["file"]]
    return frame(DefectColumns, rows, len(defects))
