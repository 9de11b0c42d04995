"""Read a large log's events by type without parsing the ones a pass does not need. Layer: core.

A 1.3M-event log is kept on disk by `workbench.io.store.EventStore`: `events[i]` reads and parses
one line (a `pread` and an LRU entry: tens of microseconds), while iterating the store reads ahead
in large windows and parses each line once (a few microseconds per event). The store knows each
event's type without parsing (`type_of`), and the compaction passes only look inside a few types
(compaction events, turn boundaries, checkpoints, model requests) or a planned set of seqs:

* `SparseEvents` is a read-only view of the same log that parses an event only when
  `keep(seq, type)` says so and otherwise yields the stub ``{"type": t, "seq": seq}``: exactly
  what a pass that only switches on the type would read. Iterating it reads the kept events in
  order (`read_in_order`).
* `read_in_order(events, seqs)` yields `(seq, event)` for ascending `seqs`: by index when the log
  is in memory or the seqs are few, else from one in-order pass over the store (skipped events
  are parsed by the store but cost no Python work here).
* `seqs_of_type(events, kinds)`: the seqs of some types, from the type codes when the store has
  them.

For an in-memory list nothing is gained, so `sparse()` returns the list itself.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

Keep = Callable[[int, Any], bool]

RANDOM_FRACTION = 16
"""Read planned seqs by index when they are fewer than 1/16 of a lazily parsed log's events (an
in-order pass parses every line, about a tenth of the cost of one random read per line)."""


def type_reader(events: Sequence[Mapping[str, Any]]) -> Callable[[int], Any]:
    """`seq -> type` without parsing when the container allows it."""
    type_of = getattr(events, "type_of", None)
    if callable(type_of) and getattr(events, "lazy", False):
        return type_of
    return lambda seq: events[seq].get("type")


def _is_lazy(events: Sequence[Mapping[str, Any]]) -> bool:
    return bool(getattr(events, "lazy", False))


def read_in_order(events: Sequence[Mapping[str, Any]], seqs: Sequence[int]
                  ) -> Iterator[tuple[int, Mapping[str, Any]]]:
    """`(seq, events[seq])` for each of the ascending, distinct `seqs` (module doc)."""
    if not _is_lazy(events) or len(seqs) * RANDOM_FRACTION < len(events):
        for seq in seqs:
            yield seq, events[seq]
        return
    stream = iter(events)
    position = 0
    for seq in seqs:
        if seq > position:
            deque(islice(stream, seq - position), maxlen=0)   # skip in C
        yield seq, next(stream)
        position = seq + 1


def seqs_of_type(events: Sequence[Mapping[str, Any]], kinds: Collection[str]) -> list[int]:
    """Ascending seqs of the events whose type is in `kinds` (no parsing on a lazy store)."""
    index = getattr(events, "indexes_of_type", None)
    if _is_lazy(events) and callable(index):
        return sorted(seq for kind in kinds for seq in index(kind))
    return [seq for seq, event in enumerate(events) if event.get("type") in kinds]


class SparseEvents(Sequence):
    """`events` with the events `keep` rejects replaced by type-only stubs (module doc)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], keep: Keep) -> None:
        self._events = events
        self._keep = keep
        self._type_of = type_reader(events)

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, seq: Any) -> Any:
        if isinstance(seq, slice):
            return [self[i] for i in range(*seq.indices(len(self)))]
        kind = self._type_of(seq)
        if self._keep(seq, kind):
            return self._events[seq]
        return {"type": kind, "seq": seq}

    def __iter__(self) -> Iterator[Any]:
        type_of, keep = self._type_of, self._keep
        kinds = [type_of(seq) for seq in range(len(self._events))]
        kept = [seq for seq, kind in enumerate(kinds) if keep(seq, kind)]
        read = read_in_order(self._events, kept)
        upcoming = next(read, None)
        for seq, kind in enumerate(kinds):
            if upcoming is not None and upcoming[0] == seq:
                yield upcoming[1]
                upcoming = next(read, None)
            else:
                yield {"type": kind, "seq": seq}


def sparse(events: Sequence[Mapping[str, Any]], keep: Keep) -> Sequence[Mapping[str, Any]]:
    """A `SparseEvents` view for a lazily parsed log, the log itself otherwise."""
    if getattr(events, "lazy", False) and callable(getattr(events, "type_of", None)):
        return SparseEvents(events, keep)
    return events

