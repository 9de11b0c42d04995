"""`Memo` and `Recent`: the bounded caches, the one rule every cache of the package that only
saves work follows. Layer: io (stdlib; read by every layer above).

A memo holds at most `limit` entries and is emptied when a new key would pass that: what it
remembers never changes an answer, so emptying costs one refill and keeps memory bounded on any
input, with no bookkeeping per read (a read is a plain `dict.get`).

Entries of untrusted size are bounded in bytes as well as in number (a count alone lets 64
frames of 256 MiB each, or 1024 parsed 200 MB messages, be kept): a `Memo` given a `budget`
holds at most that many bytes of entries (each `remember` names its cost) and `Recent`, an LRU
for caches read in a pattern (the event store's parsed events, a zstd log's frames), keeps the
most recently used entries within `limit` entries and `budget` bytes; the newest entry is always
kept (its caller holds it anyway), so what they hold is at most ``budget`` plus one entry.
"""
from __future__ import annotations

from collections import OrderedDict
from itertools import islice
from typing import Any


class Memo(dict):
    """A dict of at most `limit` entries (module doc): `remember(key, value)` stores and
    returns `value`, emptying the memo first when `key` is new and it is full. With a `budget`,
    also at most that many bytes: ``remember(key, value, cost)`` empties it first when the cost
    would pass the budget, and does not keep a value costing more than the whole budget."""

    __slots__ = ("limit", "budget", "held")

    def __init__(self, limit: int, budget: int | None = None) -> None:
        super().__init__()
        self.limit = limit
        self.budget = budget
        self.held = 0

    def remember(self, key: Any, value: Any, cost: int = 0) -> Any:
        if self.budget is not None and cost > self.budget:
            self.pop(key, None)
            return value
        self._room(0 if key in self else 1, cost)
        self[key] = value
        return value

    def remember_many(self, entries: dict, cost: int = 0) -> None:
        """`remember` every entry (one check: the memo is emptied first when they could pass
        the limit; only the first `limit` are kept of more). With a budget, `cost` is what the
        entries cost together: none is kept when that is more than the whole budget."""
        if self.budget is not None and cost > self.budget:
            for key in entries:
                self.pop(key, None)
            return
        self._room(len(entries), cost)
        if len(entries) > self.limit:
            entries = dict(islice(entries.items(), self.limit))
        self.update(entries)

    def _room(self, count: int, cost: int) -> None:
        """Empty the memo when `count` more entries costing `cost` would pass a bound; count
        the cost."""
        if len(self) + count > self.limit or (
                self.budget is not None and self.held + cost > self.budget):
            self.clear()
        self.held += cost

    def clear(self) -> None:
        super().clear()
        self.held = 0


class Recent(OrderedDict):
    """An LRU of at most `limit` entries and `budget` bytes (module doc). A read is
    ``get(key)`` plus ``move_to_end(key)`` on a hit; `keep(key, value, cost)` stores an entry
    and drops the least recently used ones past either bound (never the one just kept)."""

    __slots__ = ("limit", "budget", "held", "_costs")

    def __init__(self, limit: int, budget: int) -> None:
        super().__init__()
        self.limit = limit
        self.budget = budget
        self.held = 0
        self._costs: dict[Any, int] = {}

    def keep(self, key: Any, value: Any, cost: int) -> Any:
        costs = self._costs
        old = costs.get(key)
        if old is not None:
            self.held -= old
            self.move_to_end(key)
        self[key] = value
        costs[key] = cost
        self.held += cost
        if self.held > self.budget or len(costs) > self.limit:
            self._evict()
        return value

    def _evict(self) -> None:
        costs = self._costs
        while len(costs) > 1 and (len(costs) > self.limit or self.held > self.budget):
            old, _ = self.popitem(last=False)
            self.held -= costs.pop(old)

    def clear(self) -> None:
        super().clear()
        self._costs.clear()
        self.held = 0


__all__ = ["Memo", "Recent"]
