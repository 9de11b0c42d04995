"""`UsageTable`: the provider usage samples of a log as columns, one row per sample. Layer: core.

`workbench.core.tokens.usage.UsageCollector` appends a row per sample while the loader scans the
log. A large log has one sample per model call (173k on a 1.3M-event log), so a row is a few
machine integers, not a `UsageSample` object holding the parsed ints; `UsageSample`s are made on
read (`table[row]`, iteration), and column readers (the timeline frame) read `ints(field)`
without making one.

Invariants: a field reads back exactly the value the sample was made with. A plain int within
int64 is stored in the field's int64 array, None as a missing flag, anything else (a float such
as Infinity, an integer beyond int64, a non-int seq/turn/step) as it is in the field's `odd` map
by row. Rows only grow; `replaced_by` of a row may be set later (a retry of the same turn/step).
A `view()` is the first rows as of now (a followed log's collector goes on appending). Rows are
added as the tuples the collector builds and moved into the columns a batch at a time (one
`extend` per column instead of an append per field), before any read.
"""
from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

import numpy as np

from workbench.core.prefix import ItemView


@dataclass(frozen=True, slots=True)
class UsageSample:
    """One provider report. `replaced_by` is the seq of the later sample that replaced it."""

    seq: Any
    turn: Any
    step: Any
    source: str  # "message" | "attempt" | "chunk"
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int | None
    reported_total: int | None
    malformed: bool = False
    replaced_by: Any = None

    @property
    def prompt_tokens(self) -> int:
        """Prompt side of the call: input + cache read + cache write (the context it saw)."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    @property
    def total_tokens(self) -> int:
        """Disjoint-bucket total (reference `usageTokens`): prompt + output."""
        return self.prompt_tokens + self.output_tokens

    @property
    def counted(self) -> bool:
        return self.replaced_by is None


SOURCES = ("message", "attempt", "chunk")
"""Where a sample was read, by code."""
_SOURCE_CODES = {name: code for code, name in enumerate(SOURCES)}
FIELDS = ("seq", "turn", "step", "input_tokens", "cache_read_tokens", "cache_write_tokens",
          "output_tokens", "reasoning_tokens", "reported_total", "replaced_by")
"""The `UsageSample` fields kept as int64 columns (`source` and `malformed` are codes)."""
_LOW, _HIGH = -2**63, 2**63
_AT = ((0, "seq"), (1, "turn"), (2, "step"), (4, "input_tokens"), (5, "cache_read_tokens"),
       (6, "cache_write_tokens"), (7, "output_tokens"), (8, "reasoning_tokens"),
       (9, "reported_total"))
"""Where each column's value is in a row `UsageTable.add` is given."""
PENDING_ROWS = 4096
"""Rows a `UsageTable` holds as given before it moves them into its columns."""


class IntColumn:
    """int64 values, a missing flag (None) and the rows holding anything else (module doc)."""

    __slots__ = ("values", "missing", "odd")

    def __init__(self) -> None:
        self.values = array("q")
        self.missing = bytearray()
        self.odd: dict[int, Any] = {}

    def append(self, value: Any) -> None:
        if type(value) is int and _LOW <= value < _HIGH:
            self.values.append(value)
            self.missing.append(0)
            return
        if value is not None:
            self.odd[len(self.values)] = value
        self.values.append(0)
        self.missing.append(value is None)

    def extend(self, values: list[Any]) -> None:
        """`append` each of `values` (a list of plain int64 ints, or of Nones, in one step)."""
        kinds = set(map(type, values))
        if kinds == {int}:
            try:
                packed = array("q", values)
            except OverflowError:
                pass
            else:
                self.values.extend(packed)
                self.missing.extend(bytes(len(values)))
                return
        elif kinds == {type(None)}:
            self.values.frombytes(bytes(8 * len(values)))
            self.missing.extend(b"\x01" * len(values))
            return
        for value in values:
            self.append(value)

    def set(self, row: int, value: Any) -> None:
        self.odd.pop(row, None)
        plain = type(value) is int and _LOW <= value < _HIGH
        self.values[row] = value if plain else 0
        self.missing[row] = value is None
        if not plain and value is not None:
            self.odd[row] = value

    def __getitem__(self, row: int) -> Any:
        if self.missing[row]:
            return None
        odd = self.odd
        if odd and row in odd:
            return odd[row]
        return self.values[row]

    def tolist(self, stop: int) -> list[Any]:
        out: list[Any] = self.values[:stop].tolist()
        for row in np.flatnonzero(np.frombuffer(self.missing, dtype=np.uint8)[:stop]).tolist():
            out[row] = None
        for row, value in self.odd.items():
            if row < stop:
                out[row] = value
        return out


class UsageTable(ItemView):
    """The samples' columns (module doc): a `Sequence` of `UsageSample`s made on read."""

    noun = "usage sample"

    def __init__(self, columns: dict[str, IntColumn] | None = None, source: array | None = None,
                 malformed: bytearray | None = None, stop: int | None = None) -> None:
        self.columns = {name: IntColumn() for name in FIELDS} if columns is None else columns
        self.source = array("b") if source is None else source
        self.malformed = bytearray() if malformed is None else malformed
        self._stop = stop
        self._pending: list[tuple] = []
        """Rows added and not yet in the columns (`add`; every read moves them: `_flush`)."""
        self._replaced: dict[int, Any] = {}   # `replaced_by` of pending rows

    def view(self) -> UsageTable:
        """The rows so far, sharing the columns (later rows are not seen)."""
        self._flush()
        return UsageTable(self.columns, self.source, self.malformed, len(self))

    def append(self, sample: UsageSample) -> None:
        """Add the row of a sample (the collector's table, not a view)."""
        row = self.add((sample.seq, sample.turn, sample.step, sample.source, sample.input_tokens,
                        sample.cache_read_tokens, sample.cache_write_tokens, sample.output_tokens,
                        sample.reasoning_tokens, sample.reported_total, sample.malformed))
        if sample.replaced_by is not None:
            self.set_replaced_by(row, sample.replaced_by)

    def add(self, fields: tuple) -> int:
        """Add a row of the `UsageSample` fields in order but `replaced_by` (None until
        `set_replaced_by`); returns its row. Rows are kept as they are given and moved into
        the columns a batch at a time (`PENDING_ROWS`), one `extend` per column."""
        pending = self._pending
        pending.append(fields)
        row = len(self.source) + len(pending) - 1
        if len(pending) >= PENDING_ROWS:
            self._flush()
        return row

    def set_replaced_by(self, row: int, seq: Any) -> None:
        if row >= len(self.source):
            self._replaced[row] = seq
        else:
            self.columns["replaced_by"].set(row, seq)

    def _flush(self) -> None:
        pending = self._pending
        if not pending:
            return
        c = self.columns
        for at, name in _AT:
            c[name].extend([fields[at] for fields in pending])
        c["replaced_by"].extend([None] * len(pending))
        self.source.extend([_SOURCE_CODES[fields[3]] for fields in pending])
        self.malformed.extend([fields[10] for fields in pending])
        pending.clear()
        for row, seq in self._replaced.items():
            c["replaced_by"].set(row, seq)
        self._replaced.clear()

    def field(self, name: str, row: int) -> Any:
        """One field of one row, without making the sample."""
        self._flush()
        return self.columns[name][row]

    def ints(self, name: str) -> tuple[np.ndarray, np.ndarray, dict[int, Any]]:
        """An int field of every row: (int64 values, missing (None), the odd rows' values as
        they are); copies, so later changes do not show."""
        column, n = self.columns[name], len(self)
        values = np.array(column.values[:n], dtype=np.int64)
        missing = np.frombuffer(column.missing, dtype=np.bool_)[:n].copy()   # no view kept: it grows
        return values, missing, {row: v for row, v in column.odd.items() if row < n}

    def source_codes(self) -> np.ndarray:
        """int8 codes into `SOURCES`, one per row (a copy)."""
        self._flush()
        return np.array(self.source[:len(self)], dtype=np.int8)

    def __len__(self) -> int:
        return len(self.source) + len(self._pending) if self._stop is None else self._stop

    def _item(self, row: int) -> UsageSample:
        self._flush()
        c = self.columns
        return UsageSample(
            c["seq"][row], c["turn"][row], c["step"][row], SOURCES[self.source[row]],
            c["input_tokens"][row], c["cache_read_tokens"][row], c["cache_write_tokens"][row],
            c["output_tokens"][row], c["reasoning_tokens"][row], c["reported_total"][row],
            bool(self.malformed[row]), c["replaced_by"][row])

    def __iter__(self) -> Iterator[UsageSample]:
        self._flush()
        n = len(self)
        c = {name: column.tolist(n) for name, column in self.columns.items()}
        sources = [SOURCES[code] for code in islice(self.source, n)]
        malformed = [bool(b) for b in islice(self.malformed, n)]
        return map(UsageSample, c["seq"], c["turn"], c["step"], sources, c["input_tokens"],
                   c["cache_read_tokens"], c["cache_write_tokens"], c["output_tokens"],
                   c["reasoning_tokens"], c["reported_total"], malformed, c["replaced_by"])


__all__ = ["FIELDS", "SOURCES", "IntColumn", "UsageSample", "UsageTable"]
