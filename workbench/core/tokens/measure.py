"""`TokenMeter.measure`: usage-anchored context pressure, replayed. Layer: core.

Replay state, event by event (v0 spec §6.6, v4 §6.6; reference `TokenMeter._foldEvent` /
`measure` / `_estimateProviderAssistant`):

1. `request/header` → the current header is its canonical form (`workbench.core.header`).
2. `step/start` opens a step (nested → error); `step/end` must match it.
3. Surface events → the positional price fold (`surface_prices`).
4. `assistant/message` (must belong to the open step) → a new anchor under the current header.
   With `usage` and a header, the assistant part of the anchor is the price of the content
   re-assembled from what the provider streamed (`estimateContent + 4`, 0 when empty); otherwise
   the message's own price.
   * v4: the anchor keeps the priced surface immediately *before* the message.
   * v0: the anchor keeps the surface total at `step/start`; the provider content is assembled
     from the `assistant/chunk` events the message cites in `sourceEventSeqs` (its own price when
     absent); the baseline is fixed at anchor time with `estimateHeader` = system + tools.

`measure(header?)`: with an anchor whose header equals the (canonical) header, the baseline is the
provider usage total (input + cacheRead + cacheWrite + output) when it is at least the estimated
anchor, else the estimate, and the delta is `surfaceTokens − anchorSurface`; with no header and an
empty surface the baseline is `none`; otherwise it is the envelope plus the whole surface.
`totalTokens = max(0, baseline + delta)`. Pricing is the heuristic (no LLM service: no route
image pricing). Every failing check raises `MeterError` with the reference text; the v0 citation
checks have no released reference text and use our own wording.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.assembly import AssemblyError, assemble, stream_blocks
from workbench.core.header import canonical_header, header_equals
from workbench.core.tokens.heuristic import (
    estimate_content,
    estimate_header,
    node_price,
)
from workbench.core.tokens.surface_prices import SurfacePriceFold
from workbench.errors import MeterError
from workbench.io.generations import nested_streams, system_node
from workbench.io.jsjson import ABSENT, is_number
from workbench.io.jsvalues import js_str

_USAGE_KEYS = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")


def usage_total(usage: Any) -> Any:
    """Reference `usageTokens`: input + cacheRead + cacheWrite + output (disjoint buckets)."""
    get = usage.get if type(usage) is dict else None
    total = 0
    for key in _USAGE_KEYS:
        value = get(key) if get is not None else None    # absent and null count 0
        if value is None:
            continue
        if not is_number(value):
            raise MeterError(f"token meter: usage {js_str(usage)} is not numeric")
        total += value
    return total


@dataclass(frozen=True)
class Baseline:
    kind: str  # "usage" | "estimated" | "none"
    tokens: Any
    usage: Any = ABSENT

    def to_json(self) -> dict:
        out = {"kind": self.kind, "tokens": self.tokens}
        if self.usage is not ABSENT:
            out["usage"] = self.usage
        return out


@dataclass(frozen=True)
class Measurement:
    """One `measure()` result; `nodes` are `(seq, tokens)` in surface order."""

    after_seq: Any
    log_revision: int
    baseline: Baseline
    surface_delta_tokens: Any
    total_tokens: Any
    surface_tokens: int
    nodes: tuple[tuple[Any, int], ...]

    def to_json(self) -> dict:
        """The reference result shape (`heuristicTokens` = `tokens` without route pricing)."""
        return {
            "afterSeq": self.after_seq, "logRevision": self.log_revision,
            "baseline": self.baseline.to_json(), "surfaceDeltaTokens": self.surface_delta_tokens,
            "totalTokens": self.total_tokens, "surfaceTokens": self.surface_tokens,
            "nodes": [{"seq": s, "tokens": t, "heuristicTokens": t} for s, t in self.nodes],
        }


@dataclass(frozen=True)
class _Anchor:
    header: dict | None
    surface: int  # v4: Σ nodes before the message; v0: surface at step start
    assistant_tokens: int
    usage: Any
    baseline: Baseline | None = None  # v0 fixes it at anchor time


def _field(obj: Any, key: str) -> Any:
    return obj.get(key, ABSENT) if type(obj) is dict else ABSENT


def _same(a: Any, b: Any) -> bool:
    """JavaScript `===` for turn/step numbers."""
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b if type(a) in (str, bool) else a is b


class TokenMeter:
    """Replay of one session log, fed in order with `fold(event)`; `measure()` at any point."""

    def __init__(self, *, version: int) -> None:
        self.version = version
        self.consumed_events = 0
        self.header: dict | None = None
        self.surface = SurfacePriceFold(version=version)
        self.step: dict | None = None
        self.step_surface = 0
        self.anchor: _Anchor | None = None
        self.last_seq: Any = -1
        self._step_chunks: dict[Any, dict] = {}
        self._memo: tuple[Any, Any, int, bool] | None = None

    # -- replay

    def fold(self, event: dict) -> None:
        """Consume one event; on a `MeterError` the state is unchanged."""
        etype = event.get("type")
        seq = event.get("seq", ABSENT)
        data = _field(event, "data")
        next_header, next_step = self.header, self.step
        if etype == "request/header":
            next_header = canonical_header(_field(data, "header"), version=self.version)
        elif etype == "step/start":
            if self.step is not None:
                msg = (f"token meter: step/start at seq {js_str(seq)} arrived before turn "
                       f"{js_str(_field(self.step, 'turn'))}/step {js_str(_field(self.step, 'step'))} ended")
                raise MeterError(msg)
            next_step = dict(data) if type(data) is dict else {}
        elif etype == "step/end":
            if (self.step is None or not _same(self.step.get("turn", ABSENT), _field(data, "turn"))
                    or not _same(self.step.get("step", ABSENT), _field(data, "step"))):
                raise MeterError(f"token meter: step/end at seq {js_str(seq)} has no matching step/start event")
            next_step = None
        plan = self.surface.plan(event) if self.surface.is_surface_event(event) else None
        next_anchor = self.anchor
        if etype == "assistant/message":
            next_anchor = self._anchor_for(event, data, seq, next_header, plan)
        if not nested_streams(self.version) and etype == "assistant/chunk":
            self._step_chunks[seq] = event
        # commit
        if etype == "step/start":
            self.step_surface = self.surface.surface_tokens
            self._step_chunks = {}
        self.header, self.step = next_header, next_step
        if plan is not None:
            self.surface.commit(plan, self.consumed_events)
        self.anchor = next_anchor
        self.consumed_events += 1
        self.last_seq = seq

    def _anchor_for(self, event: dict, data: Any, seq: Any, header: dict | None, plan: Any) -> _Anchor:
        step = self.step
        if (step is None or not _same(step.get("turn", ABSENT), _field(data, "turn"))
                or not _same(step.get("step", ABSENT), _field(data, "step"))):
            raise MeterError(f"token meter: assistant/message at seq {js_str(seq)} has no matching step/start event")
        own = plan.tokens if plan is not None else node_price(event, version=self.version)
        usage = _field(data, "usage")
        if system_node(self.version):
            if usage is not ABSENT and header is not None:
                return _Anchor(header, self.surface.surface_tokens, self._provider_v4(data), usage)
            return _Anchor(header, self.surface.surface_tokens, own, ABSENT)
        if usage is not ABSENT and header is not None:
            provider = self._provider_v0(event, data, seq, own)
            anchor_surface = self.step_surface + provider
            total = usage_total(usage)
            estimated = estimate_header(header, version=0) + anchor_surface
            baseline = (Baseline("usage", total, usage) if total >= estimated
                        else Baseline("estimated", estimated))
            return _Anchor(header, self.step_surface, provider, usage, baseline)
        anchor_surface = self.step_surface + own
        baseline = Baseline("estimated", estimate_header(header, version=0) + anchor_surface)
        return _Anchor(header, self.step_surface, own, ABSENT, baseline)

    def _provider_v4(self, data: dict) -> int:
        stream = data.get("stream")
        try:
            blocks = stream_blocks(stream if type(stream) is list else [])
        except AssemblyError as exc:
            raise MeterError(exc.message) from exc
        return estimate_content(blocks, version=4) + 4 if blocks else 0

    def _provider_v0(self, event: dict, data: dict, seq: Any, own: int) -> int:
        cited = event.get("sourceEventSeqs", ABSENT)
        if cited is ABSENT:
            return own
        if type(cited) is not list:
            raise MeterError(f"token meter: assistant/message at seq {js_str(seq)} sourceEventSeqs is not an array")
        chunks, seen = [], set()
        for src in cited:
            chunk_event = self._step_chunks.get(src) if is_number(src) else None
            if chunk_event is None or not (_same(_field(chunk_event.get("data"), "turn"), _field(data, "turn"))
                                           and _same(_field(chunk_event.get("data"), "step"), _field(data, "step"))):
                raise MeterError(f"token meter: assistant/message at seq {js_str(seq)} cites {js_str(src)}, "
                                 "which is not an earlier assistant/chunk of its step")
            if src in seen:
                raise MeterError(f"token meter: assistant/message at seq {js_str(seq)} cites {js_str(src)} twice")
            seen.add(src)
            chunks.append(_field(chunk_event.get("data"), "chunk"))
        try:
            assembly = assemble(chunks)
        except AssemblyError as exc:
            raise MeterError(exc.message) from exc
        if assembly.blocks is None:
            raise MeterError(assembly.error or "token meter: the cited chunks cannot be assembled")
        return estimate_content(list(assembly.blocks), version=0) + 4 if assembly.blocks else 0

    # -- measurement

    def _envelope(self, header: dict | None, anchor: _Anchor | None) -> tuple[int, bool]:
        """The envelope price of `header` and whether the anchor's header equals it, remembered
        for the last (header, anchor header) pair (both kept alive by the memo; pricing and
        comparing tools is the cost of a measure between two header changes)."""
        theirs = anchor.header if anchor is not None else None
        memo = self._memo
        if memo is not None and memo[0] is header and memo[1] is theirs:
            return memo[2], memo[3]
        envelope = estimate_header(header, version=self.version)
        same = anchor is not None and header_equals(theirs, header)
        self._memo = (header, theirs, envelope, same)
        return envelope, same

    def measure(self, request_header: Any = ABSENT, *, nodes: bool = True) -> Measurement:
        """Reference `measure(session, requestHeader?)` at the current replay point
        (``nodes=False``: without the per-node list, for a series of totals)."""
        if request_header is ABSENT:
            header = self.header
        else:
            header = canonical_header(request_header, version=self.version)
        surface_tokens = self.surface.surface_tokens
        anchor = self.anchor
        envelope, same = self._envelope(header, anchor)
        if same:
            if system_node(self.version):
                anchor_surface = anchor.surface + anchor.assistant_tokens
                estimated = envelope + anchor_surface
                reported = usage_total(anchor.usage) if anchor.usage is not ABSENT else None
                if reported is not None and reported >= estimated:
                    baseline = Baseline("usage", reported, anchor.usage)
                else:
                    baseline = Baseline("estimated", estimated)
            else:
                anchor_surface = anchor.surface + anchor.assistant_tokens
                baseline = anchor.baseline or Baseline("estimated", envelope + anchor_surface)
            delta = surface_tokens - anchor_surface
        elif header is None and surface_tokens == 0:
            baseline, delta = Baseline("none", 0), 0
        else:
            baseline, delta = Baseline("estimated", envelope + surface_tokens), 0
        return Measurement(self.last_seq, self.consumed_events, baseline, delta,
                           max(0, baseline.tokens + delta), surface_tokens,
                           tuple(self.surface.nodes()) if nodes else ())


def measure_log(events: Sequence[dict], *, version: int, after_seqs: Sequence[Any] | None = None,
                request_header: Any = ABSENT) -> list[Measurement]:
    """Measure the prefixes of `events` ending at each seq of `after_seqs` (default: the whole log)."""
    meter = TokenMeter(version=version)
    out: list[Measurement] = []
    if after_seqs is None:
        for event in events:
            meter.fold(event)
        return [meter.measure(request_header)]
    pending = list(after_seqs)
    for event in events:
        if not pending:
            break
        meter.fold(event)
        while pending and event.get("seq") == pending[0]:
            out.append(meter.measure(request_header))
            pending.pop(0)
    return out


__all__ = ["Baseline", "Measurement", "TokenMeter", "measure_log", "usage_total"]
