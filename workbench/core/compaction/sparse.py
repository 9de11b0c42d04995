"""Read a large log's events by type without parsing the ones a pass does not need. Layer: core.

A 1.3M-event log is kept on disk by `workbench.io.store.EventStore` and every `events[i]` parses
its line again (a full pass costs tens of seconds). The store knows each event's type without
parsing (`type_of`), and the compaction passes only look inside a few types (compaction events,
turn boundaries, checkpoints, model requests). `SparseEvents` is a read-only view of the same log
that parses an event only when `keep(seq, type)` says so and otherwise yields the stub
``{"type": t, "seq": seq}``: exactly what a pass that only switches on the type would read.
For an in-memory list nothing is gained, so `sparse()` returns the list itself.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

Keep = Callable[[int, Any], bool]


def type_reader(events: Sequence[Mapping[str, Any]]) -> Callable[[int], Any]:
    """`seq -> type` without parsing when the container allows it."""
    type_of = getattr(events, "type_of", None)
    if callable(type_of) and getattr(events, "lazy", False):
        return type_of
    return lambda seq: events[seq].get("type")


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
        for seq in range(len(self._events)):
            yield self[seq]


def sparse(events: Sequence[Mapping[str, Any]], keep: Keep) -> Sequence[Mapping[str, Any]]:
    """A `SparseEvents` view for a lazily parsed log, the log itself otherwise."""
    if getattr(events, "lazy", False) and callable(getattr(events, "type_of", None)):
        return SparseEvents(events, keep)
    return events
