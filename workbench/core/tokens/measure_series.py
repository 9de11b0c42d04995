"""`measure_series`: DSH's `measure().totalTokens` after every event, from what one pass over the
log already holds. Layer: core (numpy).

The measure (`TokenMeter.measure`, v4 §6.6) changes in only two ways between the events that
move its state (``request/header``, ``step/start``/``step/end``, ``assistant/message`` and, in
format v0, ``assistant/chunk``): `totalTokens = max(0, offset + surfaceTokens)`, where `offset`
is a function of the current header and anchor alone (usage baseline − anchor surface, or the
envelope price, 0 without a header). So the series replays a real `TokenMeter` over those events
only, its surface fed from the known per-event surface totals and node prices (`KnownSurface`),
measures where the header or the anchor changed (a step event is folded for its checks only),
and takes every other event's total from the latest offset and the event's surface total: the
rule stays `TokenMeter`'s; the log is read again only for the state events (headers and model
messages in v4; v0's chunks too, which its anchors assemble).

Invariant: equal, at every seq, to a `TokenMeter` replay measuring after each event (tested on
every corpus log).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from workbench.core.tokens.measure import TokenMeter
from workbench.core.tokens.surface_prices import SurfacePlan
from workbench.errors import MeterError
from workbench.io.generations import nested_streams

STATE_TYPES = frozenset({"request/header", "step/start", "step/end", "assistant/message"})
"""Event types (besides v0's chunks) after which the measure's offset may change."""
_STEP_TYPES = frozenset({"step/start", "step/end"})


class KnownSurface:
    """The surface side of a `TokenMeter` from known totals: `surface_tokens` is the total
    right before the event being folded, a surface event's plan carries its known price and
    committing it moves to the total after it."""

    def __init__(self, totals: np.ndarray, prices: np.ndarray) -> None:
        self.totals, self.prices = totals, prices
        self.surface_tokens = 0
        self._seq = -1

    def at(self, seq: int) -> None:
        self._seq = seq
        self.surface_tokens = int(self.totals[seq - 1]) if seq > 0 else 0

    def is_surface_event(self, event: dict) -> bool:
        return self.prices[self._seq] >= 0 and "surfaceOp" in event

    def plan(self, event: dict, tokens: int | None = None) -> SurfacePlan:
        after = int(self.totals[self._seq])
        return SurfacePlan(self._seq, int(self.prices[self._seq]), after - self.surface_tokens,
                           None)

    def commit(self, plan: SurfacePlan, position: int = -1) -> list[int]:
        self.surface_tokens += plan.delta_tokens
        return []

    def nodes(self) -> list[tuple[Any, int]]:
        return []


def measure_series(types: Sequence[str], totals: np.ndarray, prices: np.ndarray,
                   event_at: Callable[[int], dict], step_of: Callable[[int], tuple[Any, Any]],
                   *, version: int) -> tuple[np.ndarray, str | None]:
    """`totalTokens` after each event (float, NaN after a refusal) and the meter's message when
    it refused the log. `types[i]`, `totals[i]` (surface total after event i) and `prices[i]`
    (its node price, -1 when log-only) describe event i; `event_at(i)` reads it; `step_of(i)`
    gives a step event's ``(turn, step)``, so step events are not read."""
    n = len(types)
    chunks = not nested_streams(version)
    meter = TokenMeter(version=version)
    surface = KnownSurface(np.asarray(totals, dtype=np.int64), np.asarray(prices))
    meter.surface = surface   # type: ignore[assignment]
    at_seq = np.zeros(n, dtype=bool)
    offsets = np.zeros(n, dtype=np.float64)
    error = None
    stop = n
    measured: tuple[Any, Any] = (None, None)    # the (header, anchor) of the latest offset
    for seq, kind in enumerate(types):
        if kind not in STATE_TYPES and not (chunks and kind == "assistant/chunk"):
            continue
        if kind in _STEP_TYPES:
            turn, step = step_of(seq)
            event = {"type": kind, "seq": seq, "data": {"turn": turn, "step": step}}
        else:
            event = event_at(seq)
        surface.at(seq)
        try:
            meter.fold(event)
        except MeterError as exc:
            error, stop = str(exc), seq
            break
        if meter.header is measured[0] and meter.anchor is measured[1]:
            continue    # the offset is a function of the header and the anchor (module doc)
        measured = meter.header, meter.anchor
        m = meter.measure(nodes=False)
        at_seq[seq] = True
        offsets[seq] = m.baseline.tokens + m.surface_delta_tokens - m.surface_tokens
    # every event takes the offset of the latest state event at or before it (0 before any)
    last = np.maximum.accumulate(np.where(at_seq, np.arange(n), -1)) if n else np.zeros(0, int)
    offset = np.where(last >= 0, offsets[np.maximum(last, 0)], 0.0)
    out = np.maximum(0.0, offset + np.asarray(totals, dtype=np.float64))
    out[stop:] = np.nan
    return out, error


__all__ = ["KnownSurface", "STATE_TYPES", "measure_series"]
