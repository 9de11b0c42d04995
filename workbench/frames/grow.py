"""Columns that only grow: what a followed log's per-event arrays are kept in, and the two
column forms of the event scan (`MaskedInts`, `Vocab` codes). Layer: frames.

A `GrowColumn` is a numpy buffer with spare capacity; `view()` is the filled prefix, read-only. A
view handed out earlier stays valid and unchanged when the column grows (rows are only added past
its end; a reallocation leaves the old buffer to the old view), so a frame built from a view never
sees later events. A `GrowText` is an Arrow string column as a few chunks merged like a binary
counter (a chunk is merged into the one before it once it is as long), so appending k rows costs
O(k) amortised and the number of chunks stays logarithmic.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa


class GrowColumn:
    """A growing 1-d numpy column (module doc). The first `extend` adopts its array without a
    copy (a plain, one-time load keeps its arrays as they were built), unless `spare`: a followed
    log copies it once into a buffer with room to grow, so its first refresh does not."""

    __slots__ = ("_buf", "n", "spare")

    def __init__(self, dtype: type | str, *, spare: bool = False) -> None:
        self._buf = np.zeros(0, dtype=dtype)
        self.n = 0
        self.spare = spare

    def extend(self, values: np.ndarray) -> None:
        count = len(values)
        if not count:
            return
        if not self.n and not self.spare:
            self._buf = values
            self.n = count
            return
        need = self.n + count
        if need > len(self._buf) or not self._buf.flags.writeable:
            grown = np.empty(max(need + need // 4 + 1024, 2 * len(self._buf)), dtype=self._buf.dtype)
            grown[:self.n] = self._buf[:self.n]
            self._buf = grown
        self._buf[self.n:need] = values
        self.n = need

    def view(self) -> np.ndarray:
        out = self._buf[:self.n]
        out.flags.writeable = False
        return out

    def __len__(self) -> int:
        return self.n


class GrowText:
    """A growing Arrow string column (module doc)."""

    __slots__ = ("_chunks",)

    def __init__(self) -> None:
        self._chunks: list[pa.Array] = []

    def extend(self, chunk: pa.Array) -> None:
        if not len(chunk):
            return
        chunks = self._chunks
        chunks.append(chunk)
        while len(chunks) > 1 and len(chunks[-1]) >= len(chunks[-2]):
            last = chunks.pop()
            chunks[-1] = pa.concat_arrays([chunks[-1], last])

    def array(self) -> pd.arrays.ArrowStringArray:
        chunks = self._chunks
        if not chunks:
            return pd.arrays.ArrowStringArray(pa.array([], type=pa.large_string()))
        data = chunks[0] if len(chunks) == 1 else pa.chunked_array(chunks)
        return pd.arrays.ArrowStringArray(data)


class Vocab:
    """Strings as small int codes (first seen, first coded); -1 is missing."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.codes: dict[str, int] = {}

    def code(self, value: Any) -> int:
        if not isinstance(value, str):
            return -1
        code = self.codes.get(value)
        if code is None:
            code = self.codes[value] = len(self.values)
            self.values.append(value)
        return code

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Object array of the strings (None where missing)."""
        table = np.array([*self.values, None], dtype=object)
        return table[np.where(codes < 0, len(self.values), codes)]


@dataclass(frozen=True, slots=True)
class MaskedInts:
    """int64 values with a missing-mask (what a nullable ``Int64`` column is made of)."""

    values: np.ndarray
    mask: np.ndarray

    def __getitem__(self, index: int) -> int | None:
        return None if self.mask[index] else int(self.values[index])

    def take(self, index: Any) -> MaskedInts:
        return MaskedInts(self.values[index], self.mask[index])

    def __len__(self) -> int:
        return len(self.values)


__all__ = ["GrowColumn", "GrowText", "MaskedInts", "Vocab"]
