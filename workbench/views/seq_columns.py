"""Per-seq readers of `ViewData` over a session's own arrays. Layer: views.

A view reads a few seqs per step, so these read the log index's and the fold's columns where
they live (codes, a text buffer, prices) instead of keeping an object per seq: `Previews`
(preview text, "" when missing), `Coded` (a code column read as its names), `NodePrices`
(DSH node prices, 0 for log-only events) and `AttemptLookup` (model-call attempts by seq).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from workbench.core.index_columns import Texts
from workbench.errors import NotAnAttempt, SeqOutOfRange


class Previews:
    """The index's preview column read one seq at a time, "" when missing (no copy of it)."""

    __slots__ = ("_texts",)

    def __init__(self, texts: Texts) -> None:
        self._texts = texts

    def __len__(self) -> int:
        return len(self._texts)

    def __getitem__(self, seq: int) -> str:
        return self._texts[seq] or ""


class Coded:
    """A per-seq code column read one seq at a time as its name (`table[code]`; -1: the
    table's last entry), so the views keep the index's codes, not an object array per seq."""

    __slots__ = ("_codes", "_table")

    def __init__(self, codes: np.ndarray, table: Sequence[Any]) -> None:
        self._codes, self._table = codes, tuple(table)

    def __len__(self) -> int:
        return len(self._codes)

    def __getitem__(self, seq: int) -> Any:
        if not -len(self._codes) <= seq < len(self._codes):
            raise SeqOutOfRange(f"no event with seq {seq} in a log of {len(self._codes)} events")
        return self._table[self._codes[seq]]


class NodePrices:
    """The index's DSH node prices, 0 for a log-only event (-1 in the index), read by seq or
    by an array of seqs without a per-seq copy of the column."""

    __slots__ = ("_price",)

    def __init__(self, price: np.ndarray) -> None:
        self._price = price

    def __len__(self) -> int:
        return len(self._price)

    def __getitem__(self, seqs: Any) -> Any:
        value = self._price[seqs]
        return np.maximum(value, 0) if isinstance(value, np.ndarray) else max(int(value), 0)


class AttemptLookup:
    """`get(seq)`: the first model-call attempt whose seq, or message seq, is `seq` (None:
    none). Two sorted int64 arrays, not a dict entry and int per attempt."""

    __slots__ = ("_attempts", "_keys", "_which")

    def __init__(self, attempts: Sequence[Any]) -> None:
        n = len(attempts)
        keys = np.empty((n, 2), dtype=np.int64)      # per attempt: its seq, its message seq
        keys[:, 0] = np.fromiter((a.seq for a in attempts), dtype=np.int64, count=n)
        keys[:, 1] = np.fromiter((-1 if a.message_seq is None else a.message_seq
                                  for a in attempts), dtype=np.int64, count=n)
        which = np.repeat(np.arange(n, dtype=np.int64), 2)
        kept = keys.ravel() >= 0                     # an attempt without a message: its seq only
        self._keys, first = np.unique(keys.ravel()[kept], return_index=True)  # the earliest entry
        self._which = which[kept][first]
        self._attempts = attempts

    def get(self, seq: int) -> Any:
        k = int(np.searchsorted(self._keys, seq))
        if k < len(self._keys) and self._keys[k] == seq:
            return self._attempts[int(self._which[k])]
        return None

    def __getitem__(self, seq: int) -> Any:
        attempt = self.get(seq)
        if attempt is None:
            raise NotAnAttempt(f"no model-call attempt at seq {seq}")
        return attempt
