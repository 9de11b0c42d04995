"""`Memo`: a bounded memo, the one rule every cache of the package that only saves work follows.
Layer: io (stdlib; read by every layer above).

A memo holds at most `limit` entries and is emptied when a new key would pass that: what it
remembers never changes an answer, so emptying costs one refill and keeps memory bounded on any
input, with no bookkeeping per read (a read is a plain `dict.get`).
"""
from __future__ import annotations

from itertools import islice
from typing import Any


class Memo(dict):
    """A dict of at most `limit` entries (module doc): `remember(key, value)` stores and
    returns `value`, emptying the memo first when `key` is new and it is full."""

    __slots__ = ("limit",)

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: Any, value: Any) -> Any:
        if len(self) >= self.limit and key not in self:
            self.clear()
        self[key] = value
        return value

    def remember_many(self, entries: dict) -> None:
        """`remember` every entry (one check: the memo is emptied first when they could pass
        the limit; only the first `limit` are kept of more)."""
        if len(self) + len(entries) > self.limit:
            self.clear()
            if len(entries) > self.limit:
                entries = dict(islice(entries.items(), self.limit))
        self.update(entries)


__all__ = ["Memo"]
