"""The column forms of the per-seq log index (`workbench.core.index`). Layer: core (stdlib and
numpy; no pandas, no pyarrow).

* `MaskedInts` — int64 values with a missing-mask (what a nullable ``Int64`` column is made of);
* `Vocab` — strings as small int codes (first seen, first coded; -1 is missing);
* `Texts` — strings as UTF-8 bytes plus int64 offsets and a validity array, in a few chunks:
  the Arrow ``large_string`` layout, which the frames layer hands to Arrow without a copy
  (`workbench.frames.columns.strings`); `TextColumn` appends them one by one;
* `GrowColumn` — a numpy column with spare capacity, for a followed log's arrays.

Growth never changes what was handed out: a `GrowColumn.view()` or a `Texts` taken earlier
stays valid and unchanged when the column grows (rows are only added past its end; a
reallocation or a merge of chunks leaves the old buffers to the old views), so a frame built
from a view never sees later events. A `TextColumn`'s chunks merge like a binary counter (a
chunk is merged into the one before it once it is as long), so appending k rows costs O(k)
amortised and the number of chunks stays logarithmic.
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
    """Strings appended one by one (`append`: a list's own append, None for missing), encoded
    into one UTF-8 buffer plus lengths by `flush` (the owner calls it every `FLUSH_ROWS` rows or
    so), so a million previews cost their bytes, not a million Python objects; `texts()` seals
    what was appended into a chunk (no copy of the bytes) and returns every row so far."""

    __slots__ = ("_chunks", "_data", "_lengths", "_valid", "append", "pending")

    def __init__(self) -> None:
        self._chunks: list[TextChunk] = []
        self._data = bytearray()
        self._lengths = array("q")
        self._valid = bytearray()
        self.pending: list[str | None] = []
        self.append = self.pending.append

    def flush(self) -> None:
        """Encode the pending strings (lone surrogates replaced: `safe_text`)."""
        pending = self.pending
        if not pending:
            return
        try:
            raw = [b"" if v is None else v.encode("utf-8") for v in pending]
        except UnicodeEncodeError:
            raw = [b"" if v is None else safe_text(v).encode("utf-8") for v in pending]
        self._data += b"".join(raw)
        self._lengths.extend(map(len, raw))
        self._valid.extend([v is not None for v in pending])
        del pending[:]

    def __len__(self) -> int:
        return sum(len(c) for c in self._chunks) + len(self._valid) + len(self.pending)

    def texts(self) -> Texts:
        self.flush()
        if self._valid or not self._chunks:
            lengths = np.frombuffer(self._lengths, dtype=np.int64)
            offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
            chunk = TextChunk(offsets, np.frombuffer(self._data, dtype=np.uint8),
                              np.frombuffer(self._valid, dtype=np.bool_))
            self._data, self._lengths, self._valid = bytearray(), array("q"), bytearray()
            chunks = self._chunks
            chunks.append(chunk)
            while len(chunks) > 1 and len(chunks[-1]) >= len(chunks[-2]):
                last = chunks.pop()
                chunks[-1] = _merged(chunks[-1], last)
        return Texts(tuple(self._chunks))


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


__all__ = ["FLUSH_ROWS", "GrowColumn", "MaskedInts", "TextChunk", "TextColumn", "Texts", "Vocab", "safe_text"]
