"""Call frames: tool calls (call paired with result) and model calls (requests).
Layer: frames.

`tool_calls_frame`: one row per tool call id occurrence, paired in one pass (v0 spec §3.8, v4
§3.8): the `tool-call` block of the `assistant/message` that advertised it, the `tool/call` that
started it and the appended `tool/result` that answered it, matched by call id (the latest open
occurrence of that id, so ids repeated across steps pair within their step). A pruned copy of
the result (a `tool/result` replace, §5.9) is recorded as `pruned_seq`. Synthetic crash-repair
closers (`interrupted-tool-result-` / `forked-tool-result-` ids, §1.7) are flagged: their
outcome is unknown, not an error of the tool.

`requests_frame`: one row per model-call attempt (`workbench.core.requests.iter_attempts`,
§7.1) with its envelope (the canonical `request/header` in force before it, §7.2), the surface
it was built from (§7.3: nodes and heuristic tokens just before the attempt), its finish and
the provider usage that settled it (`workbench.core.tokens.usage`).
"""
from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.header import canonical_header
from workbench.core.preview import clip
from workbench.core.tokens.heuristic import estimate_header
from workbench.core.tool_facts import ADVERTISED, STARTED, as_int
from workbench.frames.columns import DURATION, TIME, Column, Columns, frame
from workbench.io.generations import nested_streams

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

OUTCOME = pd.CategoricalDtype(["ok", "error", "interrupted", "no-result"])
"""How a tool call ended: result without/with the model-facing error flag, a synthetic
crash-repair closer (outcome unknown), or no result in the log."""
ATTEMPT_KIND = pd.CategoricalDtype(["message", "attempt", "chunks"])
"""v4 `assistant/message` / `assistant/attempt` event, or a v0 run of `assistant/chunk`s."""
FINISH = pd.CategoricalDtype(["stop", "tool-calls", "max-tokens", "aborted", "error"])
"""`finish.reason.kind` of the attempt's stream (v0 spec §3.6); NA when no finish was logged."""

_SYNTHETIC_PREFIXES = ("interrupted-tool-result-", "forked-tool-result-")
_PRUNED = -1   # a row of `_pair_tool_calls` standing for a pruned tool-result copy


def _r(name: str):
    return lambda rows: rows[name]


def _col(name: str, dtype: Any, doc: str) -> Column:
    return Column(name, dtype, _r(name), doc)


def _data(event: Any) -> dict:
    data = event.get("data") if isinstance(event, dict) else None
    return data if isinstance(data, dict) else {}


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


# -- tool calls ----------------------------------------------------------------------------------

@dataclass(slots=True)
class _Call:
    call_id: str | None
    name: str | None = None
    turn: int | None = None
    step: int | None = None
    assistant_seq: int | None = None
    call_seq: int | None = None
    result_seq: int | None = None
    pruned_seq: int | None = None
    arguments: str | None = None
    is_error: bool | None = None
    error_name: str | None = None
    error_code: str | None = None
    synthetic: bool = False


def _pair_tool_calls(session: AnalysedLog) -> list[_Call]:
    """Pair the scan's tool facts in seq order (module doc): the latest open occurrence of an
    id takes the next start or result; an unmatched one opens a new row."""
    calls: list[_Call] = []
    open_by_id: dict[str | None, list[_Call]] = {}
    by_result: dict[int, _Call] = {}
    scan = session.index

    def latest(cid: str | None, missing: str) -> _Call | None:
        for call in reversed(open_by_id.get(cid, ())):
            if getattr(call, missing) is None:
                return call
        return None

    def new(cid: str | None) -> _Call:
        call = _Call(cid)
        calls.append(call)
        open_by_id.setdefault(cid, []).append(call)
        return call

    pruned = scan.seq_of_type("tool/result")
    pruned = pruned[scan.surface_op[pruned] == 1].tolist() if len(pruned) else []
    facts = scan.tools
    # every fact row, then every pruned copy, in seq order (a seq has facts or is a pruned copy)
    rows = sorted([*facts.rows(), *((seq, _PRUNED) for seq in pruned)], key=lambda row: row[0])
    for row in rows:
        seq, kind = row[0], row[1]
        if kind == _PRUNED:  # a pruned copy (tool/result replace, §5.9) of an earlier result
            start = scan.replace_range_at(seq)[0]
            original = by_result.get(start) if start is not None else None
            if original is not None:
                original.pruned_seq = seq
                by_result[seq] = original
            continue
        _, _, cid, name, arguments, is_error, error_name, error_code = row
        if kind == ADVERTISED:
            call = new(cid)
            call.name, call.arguments = name, arguments
            call.assistant_seq = seq
            call.turn, call.step = scan.turn[seq], scan.step[seq]
        elif kind == STARTED:
            call = latest(cid, "call_seq") or new(cid)
            call.call_seq = seq
            call.name = call.name or name
            call.arguments = call.arguments or arguments
            if call.turn is None:
                call.turn, call.step = scan.turn[seq], scan.step[seq]
        else:
            call = latest(cid, "result_seq") or new(cid)
            call.result_seq = seq
            call.is_error = is_error
            call.error_name, call.error_code = error_name, error_code
            call.synthetic = (scan.message_id_at(seq) or "").startswith(_SYNTHETIC_PREFIXES)
            if call.turn is None:
                call.turn, call.step = scan.turn[seq], scan.step[seq]
            by_result[seq] = call
    return calls


def _outcome(call: _Call) -> str:
    if call.result_seq is None:
        return "no-result"
    if call.synthetic:
        return "interrupted"
    return "error" if call.is_error else "ok"


ToolCallColumns: Columns = (
    _col("call_id", "string", "tool call id (the tool-call block id)"),
    _col("name", "string", "tool name"),
    _col("turn", "Int64", "turn of the call"),
    _col("step", "Int64", "step of the call"),
    _col("assistant_seq", "Int64", "assistant/message that advertised the call"),
    _col("call_seq", "Int64", "tool/call that started it (NA: never started)"),
    _col("result_seq", "Int64", "tool/result that answered it (NA: no result)"),
    _col("pruned_seq", "Int64", "pruned copy of the result (tool/result replace), if any"),
    _col("call_time", TIME, "time of tool/call"),
    _col("result_time", TIME, "time of tool/result"),
    _col("duration", DURATION, "result_time - call_time"),
    _col("outcome", OUTCOME, "ok / error / interrupted (synthetic closer) / no-result"),
    _col("is_error", "boolean", "the model-facing isError flag of the result"),
    _col("error_name", "string", "tool/result data.error.name (internal failure identity)"),
    _col("error_code", "string", "tool/result data.error.code"),
    _col("synthetic", "boolean", "the result is a crash-repair / fork closer (§1.7)"),
    _col("result_tokens", "Int64", "heuristic price of the result node"),
    _col("result_on_surface", "boolean", "the result (or its pruned copy) is on the final surface"),
    _col("arguments_preview", "string", "the call's arguments, clipped"),
    _col("result_preview", "string", "the result text, clipped"),
)
"""One tool call, paired with its result."""


def tool_calls_frame(session: AnalysedLog) -> pd.DataFrame:
    """One row per tool call, in order of first appearance."""
    if not len(session):
        return frame(ToolCallColumns, None, 0)
    calls = _pair_tool_calls(session)
    times = session.index.time
    status = session.surface

    def at(values: Any, seq: int | None) -> Any:
        return values[seq] if seq is not None else None

    def on_surface(call: _Call) -> bool | None:
        if call.result_seq is None:
            return None
        seqs = [s for s in (call.result_seq, call.pruned_seq) if s is not None]
        return any(status.node[s] and status.shadowed_by[s] < 0 for s in seqs)

    rows: dict[str, list] = {c.name: [] for c in ToolCallColumns}
    for c in calls:
        t0, t1 = at(times, c.call_seq), at(times, c.result_seq)
        values = {
            "call_id": c.call_id, "name": c.name, "turn": c.turn, "step": c.step,
            "assistant_seq": c.assistant_seq, "call_seq": c.call_seq,
            "result_seq": c.result_seq, "pruned_seq": c.pruned_seq, "call_time": t0,
            "result_time": t1, "duration": t1 - t0 if t0 is not None and t1 is not None else None,
            "outcome": _outcome(c), "is_error": c.is_error, "error_name": c.error_name,
            "error_code": c.error_code, "synthetic": c.synthetic if c.result_seq is not None
            else None,
            "result_tokens": session.price(c.result_seq) if c.result_seq is not None else None,
            "result_on_surface": on_surface(c),
            "arguments_preview": c.arguments,
            "result_preview": session.index.preview_at(c.result_seq)
            if c.result_seq is not None else None,
        }
        for name, column in rows.items():
            column.append(values[name])
    return frame(ToolCallColumns, rows, len(calls))


# -- model calls ---------------------------------------------------------------------------------

def _stream_start(session: AnalysedLog, seq: int, chunk_seqs: tuple[int, ...]) -> int | None:
    if not session.has_times:
        return None
    if not nested_streams(session.version):
        return session.index.time[chunk_seqs[0]] if chunk_seqs else None
    return session.index.stream_start_at(seq)


RequestColumns: Columns = (
    _col("seq", "Int64", "the attempt: v4 its settling event, v0 its first chunk"),
    _col("kind", ATTEMPT_KIND, "message / attempt (v4) or chunks (v0)"),
    _col("turn", "Int64", "turn of the attempt"),
    _col("step", "Int64", "step of the attempt"),
    _col("message_seq", "Int64", "assistant/message that settled it (NA: failed or cancelled)"),
    _col("chunks", "Int64", "v0: assistant/chunk events of the attempt"),
    _col("stream_start", TIME, "time of the first streamed chunk"),
    _col("settled", TIME, "time of the settling event (v4) or last chunk (v0)"),
    _col("stream_duration", DURATION, "settled - stream_start"),
    _col("finish", FINISH, "finish reason kind"),
    _col("failure_code", "string", "finish failure code (error / aborted)"),
    _col("failure_message", "string", "finish failure message, clipped"),
    _col("header_seq", "Int64", "request/header in force (NA: unknown envelope, §7.6)"),
    _col("provider", "string", "envelope provider"),
    _col("model", "string", "envelope model"),
    _col("reasoning_effort", "string", "envelope reasoningEffort"),
    _col("max_tokens", "Int64", "envelope maxTokens"),
    _col("tools", "Int64", "number of tool schemas in the envelope"),
    _col("envelope_tokens", "Int64", "heuristic price of the envelope (v0 system+tools, v4 tools)"),
    _col("surface_size", "Int64", "surface nodes the request was built from"),
    _col("surface_tokens", "Int64", "heuristic price of that surface"),
    _col("estimated_prompt_tokens", "Int64", "envelope_tokens + surface_tokens"),
    _col("usage_input", "Int64", "provider: uncached input tokens"),
    _col("usage_cache_read", "Int64", "provider: cached input read"),
    _col("usage_cache_write", "Int64", "provider: cached input written"),
    _col("usage_output", "Int64", "provider: output tokens"),
    _col("usage_total", "Int64", "provider: input + cache read + cache write + output"),
    _col("usage_counted", "boolean", "the sample counts in the session totals (not replaced)"),
)
"""One model-call attempt with envelope, surface and usage."""


def _usage_by_attempt(session: AnalysedLog) -> dict[int, Any]:
    """The usage sample of each attempt, keyed by attempt seq (last matching sample wins)."""
    by_seq = {int(u.seq): u for u in session.usage if isinstance(u.seq, (int, float))}
    out: dict[int, Any] = {}
    for a in session.attempts:
        found = None
        for s in (*a.chunk_seqs, a.message_seq, a.seq):
            if s is not None and s in by_seq:
                found = by_seq[s]
        if found is not None:
            out[a.seq] = found
    return out


def _finish(reason: Any) -> tuple[str | None, str | None, str | None]:
    if not isinstance(reason, dict):
        return None, None, None
    failure = reason.get("failure")
    failure = failure if isinstance(failure, dict) else {}
    message = _str(failure.get("message"))
    return _str(reason.get("kind")), _str(failure.get("code")), (
        clip(message) if message is not None else None)


def requests_frame(session: AnalysedLog) -> pd.DataFrame:
    """One row per model-call attempt, in log order of the attempt seq."""
    attempts = sorted(session.attempts, key=lambda a: a.seq) if len(session) else []
    if not attempts:
        return frame(RequestColumns, None, 0)
    events, version = session.events, session.version
    header_seqs = session.index.seq_of_type("request/header").tolist()
    canon: dict[int, dict | None] = {}
    envelopes: dict[int, int] = {}
    usage = _usage_by_attempt(session)
    size, tokens = session.surface.size, session.surface.totals(np.maximum(session.prices, 0))
    times = session.index.time
    rows: dict[str, list] = {c.name: [] for c in RequestColumns}
    for a in attempts:
        k = bisect_left(header_seqs, a.before)
        hseq = header_seqs[k - 1] if k else None
        header = None
        if hseq is not None:
            if hseq not in canon:
                canon[hseq] = canonical_header(_data(events[hseq]).get("header"), version=version)
            header = canon[hseq]
        config = header.get("config") if isinstance(header, dict) else None
        config = config if isinstance(config, dict) else {}
        tools = header.get("tools") if isinstance(header, dict) else None
        envelope = None
        if header is not None:
            envelope = envelopes.get(hseq)
            if envelope is None:
                envelope = envelopes[hseq] = estimate_header(header, version=version)
        prior = a.before - 1
        surf_tokens = int(tokens[prior]) if prior >= 0 else 0
        start = _stream_start(session, a.seq, a.chunk_seqs)
        settled = times[a.chunk_seqs[-1] if a.chunk_seqs else a.seq]
        kind, code, message = _finish(a.finish)
        sample = usage.get(a.seq)
        values = {
            "seq": a.seq, "kind": a.kind, "turn": as_int(a.turn), "step": as_int(a.step),
            "message_seq": a.message_seq, "chunks": len(a.chunk_seqs) if not nested_streams(version) else None,
            "stream_start": start, "settled": settled,
            "stream_duration": settled - start if start is not None and settled is not None
            else None,
            "finish": kind, "failure_code": code, "failure_message": message,
            "header_seq": hseq, "provider": _str(config.get("provider")),
            "model": _str(config.get("model")),
            "reasoning_effort": _str(config.get("reasoningEffort")),
            "max_tokens": as_int(config.get("maxTokens")),
            "tools": len(tools) if isinstance(tools, list) else None,
            "envelope_tokens": envelope, "surface_size": int(size[prior]) if prior >= 0 else 0,
            "surface_tokens": surf_tokens,
            "estimated_prompt_tokens": envelope + surf_tokens if envelope is not None else None,
            "usage_input": sample.input_tokens if sample else None,
            "usage_cache_read": sample.cache_read_tokens if sample else None,
            "usage_cache_write": sample.cache_write_tokens if sample else None,
            "usage_output": sample.output_tokens if sample else None,
            "usage_total": sample.total_tokens if sample else None,
            "usage_counted": sample.counted if sample else None,
        }
        for name, column in rows.items():
            column.append(values[name])
    return frame(RequestColumns, rows, len(attempts))

