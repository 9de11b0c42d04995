"""The one way to read a log's events by seq. Layer: io.

`Log.events` is a `workbench.io.store.EventStore`, a plain list (fixtures, tests, a rebuilt log)
or an `Overlay` of either. Every pass outside io that reads events it does not already hold
goes through this module, so no caller asks how the log is stored:

* `read_events(events, seqs)` yields ``(seq, event)`` for each distinct seq of `seqs` (any order,
  duplicates read once), in ascending seq order. How is decided here: an in-memory log is read
  by index; a store (parsed on demand) answers a few seqs (fewer than 1/`RANDOM_FRACTION`
  of its events) with one random read each, more through one windowed in-order pass that parses
  only those lines (`EventStore.iter_at`), and every seq through its own sequential iterator.
  A seq outside the log raises `SeqOutOfRange`.
* `seqs_of_type(events, kinds)`: the ascending seqs of the events whose ``type`` is in `kinds`;
  `type_reader(events)`: ``seq -> type``. A store answers both from its type codes, without
  parsing.
* `Overlay(events, kept)`: the log with some events already at hand (read once by an earlier
  pass): those are served from `kept`, the rest read as above.

Events are shared, never copied: callers must not mutate them. Seqs are positions (index ==
seq); a log whose ``seq`` fields disagree is addressed by position all the same.
"""
from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from workbench.errors import SeqOutOfRange
from workbench.io.store import EventStore

RANDOM_FRACTION = 16
"""A store reads planned seqs one random read each (a pread and a parse, tens
of microseconds) when they are fewer than 1/16 of its events; otherwise one windowed in-order
pass over their lines (a few microseconds each) is cheaper."""

Event = Mapping[str, Any]


def _ascending(seqs: Iterable[int], n: int) -> Sequence[int]:
    """The distinct `seqs` in ascending order, each checked to lie inside a log of `n` events."""
    if type(seqs) is range and seqs.step == 1:
        chosen: Sequence[int] = seqs
    else:
        chosen = sorted(set(seqs))
    if chosen and (chosen[0] < 0 or chosen[-1] >= n):
        bad = chosen[0] if chosen[0] < 0 else chosen[-1]
        raise SeqOutOfRange(f"no event with seq {bad} in a log of {n} events")
    return chosen


def read_events(events: Sequence[Event], seqs: Iterable[int]) -> Iterator[tuple[int, Event]]:
    """``(seq, event)`` for every distinct seq of `seqs`, ascending (module doc)."""
    n = len(events)
    chosen = _ascending(seqs, n)
    if isinstance(events, Overlay) and events.kept:
        kept = events.kept
        todo = [seq for seq in chosen if seq not in kept]
        if len(todo) == len(chosen):
            return _read(events.events, chosen, n)
        return _merged(_read(events.events, todo, n), [(s, kept[s]) for s in chosen if s in kept])
    return _read(events.events if isinstance(events, Overlay) else events, chosen, n)


def _read(events: Sequence[Event], chosen: Sequence[int], n: int) -> Iterator[tuple[int, Event]]:
    """The choice of the module doc, over a store or a list (no overlay)."""
    if not isinstance(events, EventStore):
        return ((seq, events[seq]) for seq in chosen)
    if len(chosen) == n:
        return zip(range(n), iter(events))
    if len(chosen) * RANDOM_FRACTION < n:
        return ((seq, events[seq]) for seq in chosen)
    return events.iter_at(chosen)


def _merged(read: Iterator[tuple[int, Event]], kept: list[tuple[int, Event]]
            ) -> Iterator[tuple[int, Event]]:
    """Two ascending streams of ``(seq, event)`` with distinct seqs, as one."""
    at_hand = iter(kept)
    pending = next(at_hand, None)
    for seq, event in read:
        while pending is not None and pending[0] < seq:
            yield pending
            pending = next(at_hand, None)
        yield seq, event
    if pending is not None:
        yield pending
        yield from at_hand


def seqs_of_type(events: Sequence[Event], kinds: Collection[str]) -> list[int]:
    """Ascending seqs of the events whose type is in `kinds` (no parsing on a store)."""
    base = events.events if isinstance(events, Overlay) else events
    if isinstance(base, EventStore):
        return sorted(seq for kind in set(kinds) for seq in base.indexes_of_type(kind))
    wanted = frozenset(kinds)
    return [seq for seq, event in enumerate(base)
            if type(event) is dict and event.get("type") in wanted]


def type_reader(events: Sequence[Event]) -> Callable[[int], Any]:
    """``seq -> type`` of the event (from the type codes of a store, without parsing)."""
    base = events.events if isinstance(events, Overlay) else events
    if isinstance(base, EventStore):
        return base.type_of

    def type_of(seq: int) -> Any:
        event = base[seq]
        return event.get("type") if type(event) is dict else None
    return type_of


class Overlay(Sequence):
    """`events` with the events of `kept` at hand (module doc); read-only."""

    def __init__(self, events: Sequence[Event], kept: Mapping[int, Event]) -> None:
        if isinstance(events, Overlay):
            kept = {**events.kept, **kept}
            events = events.events
        self.events = events
        self.kept = kept

    def __len__(self) -> int:
        return len(self.events)

    def __getitem__(self, index: Any) -> Any:
        event = self.kept.get(index) if type(index) is int else None
        return self.events[index] if event is None else event

    def __iter__(self) -> Iterator[Event]:
        return iter(self.events)


__all__ = ["Overlay", "RANDOM_FRACTION", "read_events", "seqs_of_type", "type_reader"]
