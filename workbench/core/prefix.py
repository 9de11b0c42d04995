"""`Prefix`: the first items of a list that only grows, as a read-only sequence; `ItemView`, what
every such read-only sequence of core shares. Layer: core.

A followed log's collectors (usage samples, model-call attempts) keep appending to their lists
after a session read them; handing out `Prefix(items, n)` costs nothing per read, where a tuple
copy would cost the whole log at every refresh. `extra` items (the open attempt closed on a copy
of the collector) follow the prefix.

Invariants: `len` is fixed at creation; items past `n` are never seen. A collector may replace
an item it owns in place (usage: the last sample is re-marked `replaced_by` when a retry of the
same turn/step arrives), and a prefix made earlier shows the item as it is now.
"""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import chain, islice
from typing import Any, TypeVar

from workbench.errors import SeqOutOfRange, Unimplemented

T = TypeVar("T")


class ItemView(Sequence[T]):
    """A read-only sequence over storage it does not copy: a subclass gives `__len__`, `_item`
    (a row in range) and `__iter__`. Indexing is a tuple's (negative from the end, a slice gives
    a tuple, out of range raises `SeqOutOfRange`); it equals any list or tuple of equal items."""

    __slots__ = ()
    noun = "item"

    def _item(self, index: int) -> T:
        raise Unimplemented

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        size = len(self)
        if index < 0:
            index += size
        if not 0 <= index < size:
            raise SeqOutOfRange(f"no {self.noun} {index} of {size}")
        return self._item(index)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} {self.noun}s)"


class Prefix(ItemView[T]):
    """`items[:n] + extra`, without copying `items` (module doc)."""

    __slots__ = ("_items", "_n", "_extra")

    def __init__(self, items: Sequence[T], n: int | None = None, extra: Sequence[T] = ()) -> None:
        self._items = items
        self._n = len(items) if n is None else n
        self._extra = tuple(extra)

    def __len__(self) -> int:
        return self._n + len(self._extra)

    def _item(self, index: int) -> T:
        return self._items[index] if index < self._n else self._extra[index - self._n]

    def __iter__(self) -> Iterator[T]:
        return chain(islice(self._items, self._n), self._extra)


__all__ = ["ItemView", "Prefix"]
