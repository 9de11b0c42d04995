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
messages in v4; v0's chunks too, which its anchors assemble), once, in seq order
(`workbench.io.payloads.read_events`); step events are built from the index's turn and step.

Invariant: equal, at every seq, to a `TokenMeter` replay measuring after each event (tested on
every corpus log).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.core.index import LogIndex
from workbench.core.tokens.measure import TokenMeter
from workbench.core.tokens.surface_prices import SurfacePlan
from workbench.errors import MeterError
from workbench.io.generations import nested_streams
from workbench.io.payloads import read_events

STATE_TYPES = frozenset({"request/header", "step/start", "step/end", "assistant/message"})
"""Event types (besides v0's chunks) after which the measure's offset may change."""
_STEP_NAMES = ("step/start", "step/end")
_STEP_TYPES = frozenset(_STEP_NAMES)


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


def measure_series(events: Sequence[dict], index: LogIndex, totals: np.ndarray,
                   prices: np.ndarray, *, version: int) -> tuple[np.ndarray, str | None]:
    """`totalTokens` after each event of `events` (float, NaN after a refusal) and the meter's
    message when it refused the log. `index` is the log's index (type, structural turn and step
    per seq), `totals[i]` the surface total after event i and `prices[i]` its node price (-1
    when log-only). The state events are read once, in seq order (`read_events`); a step
    event is not read: its ``(turn, step)`` is the index's."""
    n = index.n
    chunks = not nested_streams(version)
    codes = index.types.codes
    read_kinds = (STATE_TYPES - _STEP_TYPES) | ({"assistant/chunk"} if chunks else set())
    kinds = np.full(len(index.types.values) + 1, -1, dtype=np.int8)  # code -> 0 read, 1/2 step
    for name in read_kinds:
        if name in codes:
            kinds[codes[name]] = 0
    for k, name in enumerate(_STEP_NAMES, 1):
        if name in codes:
            kinds[codes[name]] = k
    of_seq = kinds[index.type_codes]            # a missing type (-1) reads the table's last entry
    state = np.flatnonzero(of_seq >= 0)
    steps = of_seq[state].tolist()
    turns, step_nos = (np.where(c.mask[state], None, c.values[state].astype(object)).tolist()
                       for c in (index.turn, index.step))
    reader = read_events(events, state[of_seq[state] == 0].tolist())
    meter = TokenMeter(version=version)
    surface = KnownSurface(np.asarray(totals, dtype=np.int64), np.asarray(prices))
    meter.surface = surface   # type: ignore[assignment]
    at_seq = np.zeros(n, dtype=bool)
    offsets = np.zeros(n, dtype=np.float64)
    error = None
    stop = n
    measured: tuple[Any, Any] = (None, None)    # the (header, anchor) of the latest offset
    for seq, step, turn, step_no in zip(state.tolist(), steps, turns, step_nos):
        if step:
            event = {"type": _STEP_NAMES[step - 1], "seq": seq,
                     "data": {"turn": turn, "step": step_no}}
        else:
            event = next(reader)[1]
        surface.at(seq)
        try:   # DSH's meter refuses what it cannot read (a usage that is no number): the stop
            meter.fold(event)
            if meter.header is measured[0] and meter.anchor is measured[1]:
                continue    # the offset is a function of the header and the anchor (module doc)
            measured = meter.header, meter.anchor
            m = meter.measure(nodes=False)
        except MeterError as exc:
            error, stop = str(exc), seq
            break
        at_seq[seq] = True
        offsets[seq] = m.baseline.tokens + m.surface_delta_tokens - m.surface_tokens
    # every event takes the offset of the latest state event at or before it (0 before any)
    last = np.maximum.accumulate(np.where(at_seq, np.arange(n), -1)) if n else np.zeros(0, int)
    offset = np.where(last >= 0, offsets[np.maximum(last, 0)], 0.0)
    out = np.maximum(0.0, offset + np.asarray(totals, dtype=np.float64))
    out[stop:] = np.nan
    return out, error


__all__ = ["KnownSurface", "STATE_TYPES", "measure_series"]
