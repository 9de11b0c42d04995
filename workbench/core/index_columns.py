"""The column forms of the per-seq log index (`workbench.core.index`). Layer: core (stdlib and
numpy; no pandas, no pyarrow).

* `MaskedInts` — int64 values with a missing-mask (what a nullable ``Int64`` column is made of);
* `Vocab` — strings as small int codes (first seen, first coded; -1 is missing);
* `Texts` — strings as UTF-8 bytes plus int64 offsets and a validity array, in a few chunks:
  the Arrow ``large_string`` layout, which the frames layer hands to Arrow without a copy
  (`workbench.frames.columns.strings`); `TextColumn` collects them row by row;
* `SparseInts` — the values of the few rows that have one, made a dense column when sealed (a
  per-seq column most events leave at its default costs nothing per such event);
* `GrowColumn` — a numpy column with spare capacity, for a followed log's arrays.

Growth never changes what was handed out: a `GrowColumn.view()` or a `Texts` taken earlier
stays valid and unchanged when the column grows (rows are only added past its end; a
reallocation or a merge of chunks leaves the old buffers to the old views), so a frame built
from a view never sees later events. A `TextColumn`'s chunks merge like a binary counter (a
chunk is merged into the one before it once it is as long), so appending k rows costs O(k)
amortised and the number of chunks stays logarithmic.

An `array.array` or `bytearray` that is appended to or emptied later is read into numpy by a
copy (`np.array`), never by a `np.frombuffer` view bound to a name: a frame object kept alive
after its function returned (a sampling profiler's, such as Dask's workers run, or a
traceback's) keeps such a view, and the next resize of the buffer raises ``BufferError``.
"""
from __future__ import annotations

from array import array
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.errors import SeqOutOfRange


def safe_text(text: str) -> str:
    """`text` as valid Unicode: a lone surrogate (JSON allows one; `workbench.io.jsjson` keeps
    it) becomes U+FFFD, because UTF-8 (and Arrow strings) cannot hold it."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text


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


class _Codes(dict):
    """String → code; a string looked up (``codes[s]``) for the first time gets the next code,
    while ``codes.get(s)`` only reads."""

    __slots__ = ("values",)

    def __init__(self, values: list[str]) -> None:
        super().__init__()
        self.values = values

    def __missing__(self, value: str) -> int:
        code = self[value] = len(self.values)
        self.values.append(value)
        return code


class Vocab:
    """Strings as small int codes (first seen, first coded); -1 is missing."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self.codes: dict[str, int] = _Codes(self.values)

    def code(self, value: Any) -> int:
        return self.codes[value] if isinstance(value, str) else -1

    def decode(self, codes: np.ndarray) -> np.ndarray:
        """Object array of the strings (None where missing)."""
        table = np.array([*self.values, None], dtype=object)
        return table[np.where(codes < 0, len(self.values), codes)]


@dataclass(frozen=True, slots=True)
class TextChunk:
    """Rows of strings in the Arrow ``large_string`` layout: `offsets` (int64, rows + 1, from
    0), `data` (uint8, the UTF-8 bytes), `valid` (bool per row; False: missing)."""

    offsets: np.ndarray
    data: np.ndarray
    valid: np.ndarray

    def __len__(self) -> int:
        return len(self.valid)


def _merged(a: TextChunk, b: TextChunk) -> TextChunk:
    return TextChunk(np.concatenate([a.offsets, b.offsets[1:] + a.offsets[-1]]),
                     np.concatenate([a.data, b.data]), np.concatenate([a.valid, b.valid]))


class Texts:
    """One string (or None) per row, read-only, as `TextChunk`s (module doc)."""

    __slots__ = ("_starts", "chunks")

    def __init__(self, chunks: tuple[TextChunk, ...]) -> None:
        self.chunks = chunks
        starts, at = [], 0
        for chunk in chunks:
            starts.append(at)
            at += len(chunk)
        self._starts = (*starts, at)

    def __len__(self) -> int:
        return self._starts[-1]

    def __getitem__(self, row: int) -> str | None:
        row = int(row)
        if row < 0:
            row += len(self)
        if not 0 <= row < len(self):
            raise SeqOutOfRange(f"row {row} of {len(self)}")
        k = bisect_right(self._starts, row) - 1
        chunk, i = self.chunks[k], row - self._starts[k]
        if not chunk.valid[i]:
            return None
        return chunk.data[chunk.offsets[i]:chunk.offsets[i + 1]].tobytes().decode("utf-8")

    def __iter__(self):
        return (self[i] for i in range(len(self)))


FLUSH_ROWS = 1 << 16
"""Strings a `TextColumn` holds as Python objects before it encodes them (`flush`)."""


class TextColumn:
    """Strings of some rows, put in ascending row order (`put(row, text)`, or its two halves
    `rows.append(row)` and `pending.append(text)`; a row never put is missing), encoded into one
    UTF-8 buffer plus lengths by `flush` (the owner calls it every `FLUSH_ROWS` rows or so), so
    a million previews cost their bytes, not a million Python objects; `texts(n)` seals the first
    `n` rows (every row put is below `n`) into a chunk (no copy of the bytes) and returns them."""

    __slots__ = ("_chunks", "_data", "_lengths", "_sealed", "pending", "rows")

    def __init__(self) -> None:
        self._chunks: list[TextChunk] = []
        self._sealed = 0
        self._data = bytearray()
        self._lengths = array("q")
        self.rows = array("q")
        self.pending: list[str] = []

    def put(self, row: int, text: str) -> None:
        self.rows.append(row)
        self.pending.append(text)

    def flush(self) -> None:
        """Encode the pending strings (lone surrogates replaced: `safe_text`)."""
        pending = self.pending
        if not pending:
            return
        try:   # one encode; a string's bytes are its characters unless it is not ASCII
            self._data += "".join(pending).encode("utf-8")
            self._lengths.extend([len(v) if v.isascii() else len(v.encode("utf-8"))
                                  for v in pending])
        except UnicodeEncodeError:
            raw = [safe_text(v).encode("utf-8") for v in pending]
            self._data += b"".join(raw)
            self._lengths.extend(map(len, raw))
        del pending[:]

    def texts(self, n: int) -> Texts:
        self.flush()
        if n > self._sealed or not self._chunks:
            count = n - self._sealed
            rows = np.frombuffer(self.rows, dtype=np.int64) - self._sealed
            lengths = np.zeros(count, dtype=np.int64)
            lengths[rows] = np.frombuffer(self._lengths, dtype=np.int64)
            valid = np.zeros(count, dtype=np.bool_)
            valid[rows] = True
            offsets = np.zeros(count + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            chunk = TextChunk(offsets, np.frombuffer(self._data, dtype=np.uint8), valid)
            del rows   # emptied in place: the owner's bound append stays valid
            del self.rows[:]
            self._data, self._lengths = bytearray(), array("q")
            self._sealed = n
            chunks = self._chunks
            chunks.append(chunk)
            while len(chunks) > 1 and len(chunks[-1]) >= len(chunks[-2]):
                last = chunks.pop()
                chunks[-1] = _merged(chunks[-1], last)
        return Texts(tuple(self._chunks))


class SparseInts:
    """int values of some rows, put in ascending row order (`rows.append(row)` then
    `values.append(value)`); `dense(stop)` the rows from the last `dense` call to `stop` as one
    numpy column, `default` where nothing was put (with `held`: the last value put at or before
    the row, `default` before the first: a state that changes at the rows put)."""

    __slots__ = ("default", "dtype", "held", "rows", "start", "values")

    def __init__(self, code: str, default: int, *, held: bool = False) -> None:
        self.rows, self.values = array("q"), array(code)
        self.default, self.dtype, self.held = default, _DTYPES[code], held
        self.start = 0

    def dense(self, stop: int) -> np.ndarray:
        start, rows = self.start, np.array(self.rows, dtype=np.int64)   # copies: emptied below
        k = int(np.searchsorted(rows, stop)) if len(rows) else 0
        values = np.array(self.values[:k], dtype=self.dtype)
        if self.held:
            at = np.searchsorted(rows[:k], np.arange(start, stop), side="right")
            out = np.concatenate([np.array([self.default], self.dtype), values])[at]
            if k:
                self.default = int(values[-1])
        else:
            out = np.full(stop - start, self.default, dtype=self.dtype)
            out[rows[:k] - start] = values
        del self.rows[:k], self.values[:k]   # in place: their owners' appends stay bound
        self.start = stop
        return out


_DTYPES = {"q": np.int64, "i": np.int32, "b": np.int8}


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


__all__ = ["FLUSH_ROWS", "GrowColumn", "MaskedInts", "SparseInts", "TextChunk", "TextColumn", "Texts",
           "Vocab", "safe_text"]
