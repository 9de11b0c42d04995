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

Large logs parse events on demand (`workbench.io.store.EventStore`), so every pass here visits only
the events of the types it needs, found with the store's `indexes_of_type` (no parsing), and each
pass runs once per log. When those events are a good share of the log (message, surface or usage
types), the pass reads them through one in-order pass of the store (`AscendingReads`: its
read-ahead iterator, ~3 us per event) rather than one random read each (~12-30 us).
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import islice
from typing import Any

import numpy as np

from workbench.core.events import surface_types
from workbench.core.header import canonical_header
from workbench.core.tokens.heuristic import message_types
from workbench.core.tokens.meters import STREAM_SHARE, Meter, get_meter
from workbench.core.tokens.surface_prices import SurfaceShape, surface_shape
from workbench.core.tokens.usage import USAGE_TYPES, UsageSample, usage_samples
from workbench.errors import MeterError


def positions_of_types(events: Sequence[Any], types: Iterable[str]) -> list[int]:
    """Positions of the events whose type is in `types`, in log order (by type codes when the
    container offers `indexes_of_type`, so nothing is parsed)."""
    wanted = frozenset(types)
    finder = getattr(events, "indexes_of_type", None)
    if finder is not None:
        out: list[int] = []
        for kind in wanted:
            out.extend(finder(kind))
        out.sort()
        return out
    return [i for i, e in enumerate(events) if type(e) is dict and e.get("type") in wanted]


class AscendingReads(Sequence):
    """A view of a lazily parsed store for one pass that reads ascending positions: a read at or
    after the previous one comes from a single in-order pass of the store's iterator (the events
    in between are parsed and dropped); any other read goes to the store itself. The iterator
    never reads past `len(events)`."""

    def __init__(self, events: Sequence[Any]) -> None:
        self._events = events
        self._n = len(events)
        self._iter = iter(zip(range(self._n), events))
        self._next = 0                       # position the iterator yields next
        self._last: tuple[int | None, Any] = (None, None)   # (position, event) read last

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, index: Any) -> Any:
        if type(index) is int:
            if self._next <= index < self._n:
                skip = index - self._next
                if skip:
                    next(islice(self._iter, skip - 1, None))
                self._last = next(self._iter)
                self._next = index + 1
                return self._last[1]
            if index == self._last[0]:
                return self._last[1]
        return self._events[index]


def _pass_view(events: Sequence[Any], positions: list[int]) -> Sequence[Any]:
    """`events` for a pass reading `positions` (ascending): an `AscendingReads` view of a lazily
    parsed store when they are at least 1/`STREAM_SHARE` of it, else the events themselves."""
    if getattr(events, "lazy", False) and len(positions) * STREAM_SHARE >= len(events):
        return AscendingReads(events)
    return events


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
                if type(event) is dict:
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
                positions=positions_of_types(self.events, message_types(self.version)))
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
            positions = positions_of_types(self.events, surface_types(self.version))
            self._shape = surface_shape(_pass_view(self.events, positions), version=self.version,
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
            self._header_positions = positions_of_types(self.events, ("request/header",))
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
            positions = positions_of_types(self.events, USAGE_TYPES)
            self._usage = usage_samples(_pass_view(self.events, positions), version=self.version,
                                        positions=positions)
        return self._usage

    def usage_at(self, seq: Any = None) -> UsageSample | None:
        """The newest provider sample at or before `seq`."""
        limit = len(self.events) - 1 if seq is None else self.position_of(seq)
        best = None
        for sample in self.usage():
            try:
                if self.position_of(sample.seq) <= limit:
                    best = sample
            except MeterError:
                continue
        return best


__all__ = ["AscendingReads", "LogTokens", "positions_of_types"]
