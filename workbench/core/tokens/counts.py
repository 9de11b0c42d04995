"""Token counts of one log by several meters, side by side, cached. Layer: core.

`LogTokens` wraps a log's events and answers, for any meter of `meters.get_meter`:

* `prices(meter)`: the count of every event's node (0 for events that are not nodes), computed once
  per meter and cached (a tqdm bar shows while a real tokenizer counts a large log);
* `surface_totals(meter)`: the surface total after every event, one vectorised pass over the cached
  prices and the meter-independent fold shape (`surface_prices.SurfaceShape`);
* `nodes_at(seq)` / `node_counts_at(seq, meters)`: the surface nodes in force after `seq`;
* `header_at(seq)` / `envelope_at(meter, seq)`: the canonical request envelope in force after `seq`
  (latest `request/header` at or before it, v0 §3.4) and its count;
* `usage()`: the provider's own samples (`usage`).

Events are addressed by seq; seqs are contiguous from the first event's (v0 §1.8), and a seq → position
map covers logs where they are not.

Every pass here visits only the events of the types it needs (`workbench.io.payloads`:
`seqs_of_type`, then `read_events`), and runs once per log.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from workbench.core.events import surface_types
from workbench.core.header import canonical_header
from workbench.core.tokens.heuristic import message_types
from workbench.core.tokens.meters import Meter, get_meter
from workbench.core.tokens.surface_prices import SurfaceShape, surface_shape
from workbench.core.tokens.usage import USAGE_TYPES, UsageSample, usage_samples
from workbench.errors import MeterError
from workbench.io.jsvalues import is_scalar
from workbench.io.payloads import seqs_of_type


class LogTokens:
    """Cached per-event, per-meter token counts of one log."""

    def __init__(self, events: Sequence[Any], *, version: int, progress: bool = True) -> None:
        self.events = events
        self.version = version
        self.progress = progress
        self._prices: dict[str, np.ndarray] = {}
        self._totals: dict[str, np.ndarray] = {}
        self._shape: SurfaceShape | None = None
        self._positions: dict[Any, int] | None = None
        self._header_positions: list[int] | None = None
        self._envelopes: dict[tuple[str, int], int] = {}
        self._usage: tuple[UsageSample, ...] | None = None

    # -- addressing

    def meter(self, name: str) -> Meter:
        return get_meter(name, version=self.version)

    def seq_of(self, position: int) -> Any:
        event = self.events[position]
        return event.get("seq", position) if type(event) is dict else position

    def position_of(self, seq: Any) -> int:
        """Position of the event with this seq; `MeterError` when the log has none."""
        if type(seq) is int and 0 <= seq < len(self.events):  # the normal case: seq == index
            event = self.events[seq]
            if type(event) is dict and event.get("seq") == seq:
                return seq
        if self._positions is None:
            self._positions = {}
            for position, event in enumerate(self.events):
                if type(event) is dict and is_scalar(event.get("seq", position)):
                    self._positions.setdefault(event.get("seq", position), position)
        position = self._positions.get(seq)
        if position is None or type(seq) is bool:
            raise MeterError(f"no event with seq {seq!r} in this log")
        return position

    @property
    def last_seq(self) -> Any:
        return self.seq_of(len(self.events) - 1) if self.events else None

    # -- per-event counts

    def prices(self, name: str) -> np.ndarray:
        """Node count of every event by meter `name` (int64, aligned with the events; cached)."""
        cached = self._prices.get(name)
        if cached is None:
            cached = self.meter(name).count_events(
                self.events, progress=self.progress,
                positions=seqs_of_type(self.events, message_types(self.version)))
            cached.setflags(write=False)
            self._prices[name] = cached
        return cached

    def count(self, name: str, seq: Any) -> int:
        """Count of one event's node (from the cache when the meter's log pass exists)."""
        position = self.position_of(seq)
        cached = self._prices.get(name)
        if cached is not None:
            return int(cached[position])
        event = self.events[position]
        meter = self.meter(name)
        return int(meter.count_events([event])[0])

    # -- surface

    @property
    def shape(self) -> SurfaceShape:
        if self._shape is None:
            positions = seqs_of_type(self.events, surface_types(self.version))
            self._shape = surface_shape(self.events, version=self.version,
                                        positions=positions)
        return self._shape

    def surface_totals(self, name: str) -> np.ndarray:
        """Surface total by meter `name` after every event (cached)."""
        cached = self._totals.get(name)
        if cached is None:
            cached = self.shape.totals(self.prices(name))
            cached.setflags(write=False)
            self._totals[name] = cached
        return cached

    def nodes_at(self, seq: Any = None) -> list[Any]:
        """Seqs of the surface nodes after `seq` (default: the end), in surface order."""
        position = len(self.events) - 1 if seq is None else self.position_of(seq)
        return [self.seq_of(p) for p in self.shape.nodes_at(position)]

    def node_counts_at(self, seq: Any, names: Iterable[str]) -> list[dict[str, Any]]:
        """`[{"seq": s, <meter>: tokens, ...}]` for the surface nodes after `seq`, in surface order.
        Only those nodes are counted (no whole-log pass) unless a meter's log pass is cached."""
        position = len(self.events) - 1 if seq is None else self.position_of(seq)
        positions = self.shape.nodes_at(position)
        rows = [{"seq": self.seq_of(p)} for p in positions]
        for name in names:
            cached = self._prices.get(name)
            if cached is not None:
                values = [int(cached[p]) for p in positions]
            else:
                values = [int(v) for v in self.meter(name).count_events([self.events[p] for p in positions])]
            for row, value in zip(rows, values):
                row[name] = value
        return rows

    # -- envelope

    def _header_source(self, seq: Any) -> int:
        """Position of the latest `request/header` at or before `seq` (-1 when none)."""
        if self._header_positions is None:
            self._header_positions = seqs_of_type(self.events, ("request/header",))
        position = len(self.events) - 1 if seq is None else self.position_of(seq)
        k = bisect_right(self._header_positions, position)
        return self._header_positions[k - 1] if k else -1

    def header_at(self, seq: Any = None) -> dict | None:
        """The canonical header in force after `seq` (default: the end), None before any."""
        if not self.events:
            return None
        source = self._header_source(seq)
        if source < 0:
            return None
        data = self.events[source].get("data")
        return canonical_header(data.get("header") if type(data) is dict else None, version=self.version)

    def envelope_at(self, name: str, seq: Any = None) -> int:
        """Count of the envelope in force after `seq` by meter `name` (cached per header event)."""
        if not self.events:
            return 0
        source = self._header_source(seq)
        if source < 0:
            return 0
        key = (name, source)
        if key not in self._envelopes:
            self._envelopes[key] = self.meter(name).count_envelope(self.header_at(self.seq_of(source)))
        return self._envelopes[key]

    # -- provider usage

    def usage(self) -> tuple[UsageSample, ...]:
        if self._usage is None:
            positions = seqs_of_type(self.events, USAGE_TYPES)
            self._usage = usage_samples(self.events, version=self.version,
                                        positions=positions)
        return self._usage

    def usage_at(self, seq: Any = None) -> UsageSample | None:
        """The newest provider sample at or before `seq` (None in a log with no events)."""
        if not self.events:
            return None
        limit = len(self.events) - 1 if seq is None else self.position_of(seq)
        best = None
        for sample in self.usage():
            try:
                if self.position_of(sample.seq) <= limit:
                    best = sample
            except MeterError:
                continue
        return best


__all__ = ["LogTokens"]
