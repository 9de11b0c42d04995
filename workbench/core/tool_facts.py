"""The few payload fields tool-call pairing and request timing read, taken while the log index
has each event parsed (so tool-call and request frames never parse a large log again), and the
small field rules the index shares. Layer: core (stdlib, numpy).

Pairing key (v0 spec §3.8, v4 §3.8): `tool/call.data.callId` = the result's call id (v4:
`message.toolCallId`, v0: the wrapped block's `toolCallId`; both fall back to
`message.source.callId`) = the `tool-call` block id of the advertising assistant message.

`ToolFacts` are columns, one row per fact in seq order: an assistant message advertises one row
per `tool-call` block (kind `ADVERTISED`: id, name, arguments preview), a `tool/call` starts one
(`STARTED`: id, name, arguments preview), an appended `tool/result` answers one (`ANSWERED`:
id, model-facing isError, error name and code). An event with none has no row.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.index_columns import FLUSH_ROWS, TextColumn, Texts
from workbench.core.preview import clip
from workbench.io.generations import tool_role

INT_LIMIT = 2**62
"""Integers kept in int64 arrays; anything larger (never a real seq, time or turn) is missing."""

ADVERTISED, STARTED, ANSWERED = 0, 1, 2
FACT_TYPES = frozenset({"assistant/message", "tool/call", "tool/result"})
"""Event types that may hold a tool-call fact."""


def as_int(value: Any) -> int | None:
    """A JS-number integer as a Python int (``3.0`` → 3); None for anything else, and for
    integers too large for the int64 columns."""
    if type(value) is int:   # a bool is not a number
        return value if -INT_LIMIT < value < INT_LIMIT else None
    if isinstance(value, float) and value.is_integer() and abs(value) < INT_LIMIT:
        return int(value)
    return None


def result_fields(message: Any, version: int) -> tuple[str | None, bool | None]:
    """(call id, model-facing isError) of a tool-result message (v4: a tool-role message,
    v4 §3.8; v0: the one wrapped `tool-result` block, v0 §3.8)."""
    if type(message) is not dict:
        return None, None
    if tool_role(version):
        cid, err = message.get("toolCallId"), message.get("isError")
    else:
        content = message.get("content")
        block = content[0] if type(content) is list and content else None
        block = block if type(block) is dict else {}
        cid, err = block.get("toolCallId"), block.get("isError")
    if type(cid) is not str:
        source = message.get("source")
        cid = source.get("callId") if type(source) is dict else None
    return (cid if type(cid) is str else None), (err if type(err) is bool else None)


def stream_start(data: Any) -> int | None:
    """Time of the first record of a v4 assistant stream (v4 §2.1), if any, of an event's
    `data` (None without one)."""
    stream = data.get("stream") if type(data) is dict else None
    if type(stream) is list and stream and type(stream[0]) is dict:
        first = stream[0]
        return as_int(first.get("time", first.get("time0")))
    return None


@dataclass(frozen=True, slots=True)
class ToolFacts:
    """Tool-call facts as columns (module doc); `is_error` is -1 when the log states none."""

    seq: np.ndarray         # int64, ascending
    kind: np.ndarray        # int8: ADVERTISED, STARTED, ANSWERED
    call_id: Texts
    name: Texts
    arguments: Texts
    is_error: np.ndarray    # int8: -1 missing, 0 false, 1 true
    error_name: Texts
    error_code: Texts

    def __len__(self) -> int:
        return len(self.seq)

    def rows(self) -> Iterator[tuple]:
        """``(seq, kind, call_id, name, arguments, is_error, error_name, error_code)`` per row,
        as Python values (`is_error` None when missing)."""
        errors = [None, False, True]
        return zip(self.seq.tolist(), self.kind.tolist(), self.call_id, self.name, self.arguments,
                   [errors[e + 1] for e in self.is_error.tolist()], self.error_name,
                   self.error_code, strict=True)


class ToolFactsBuilder:
    """`appenders()`: what the log index's step of each `FACT_TYPES` type calls with the
    event's fields it has read (`workbench.core.index_builder`), in seq order; `facts()`
    returns every row so far (more may be added afterwards: a followed log). The appenders are
    closures over the columns' bound appends: they run for a third of a large log's events."""

    def __init__(self, version: int) -> None:
        self.version = version
        self._seq, self._kind, self._error = array("q"), array("b"), array("b")
        self._texts = tuple(TextColumn() for _ in range(5))

    def appenders(self) -> tuple[Callable[[int, Any], None], Callable[[int, dict], None],
                                 Callable[[int, Mapping[str, Any], dict], None]]:
        """``(advertised(seq, message), started(seq, data), answered(seq, event, data))``:
        the rows of an `assistant/message` (its `data.message`, any value), a `tool/call` and
        a `tool/result` (their `data` objects)."""
        version = self.version
        seqs, kind_, error_ = self._seq, self._kind.append, self._error.append
        seq_ = seqs.append
        texts = self._texts
        (cid_r, cid_), (name_r, name_), (args_r, args_), (ename_r, ename_), (ecode_r, ecode_) = (
            (t.rows.append, t.pending.append) for t in texts)

        def row(seq: int, kind: int, error: int, cid: Any, name: Any, args: Any) -> int:
            k = len(seqs)
            seq_(seq)
            kind_(kind)
            error_(error)
            if type(cid) is str:
                cid_r(k)
                cid_(cid)
            if type(name) is str:
                name_r(k)
                name_(name)
            if type(args) is str:
                args_r(k)
                args_(clip(args))
            if k % FLUSH_ROWS == FLUSH_ROWS - 1:
                for column in texts:
                    column.flush()
            return k

        def advertised(seq: int, message: Any) -> None:
            content = message.get("content") if type(message) is dict else None
            if type(content) is not list:
                return
            for b in content:
                if type(b) is dict and b.get("type") == "tool-call":
                    row(seq, ADVERTISED, -1, b.get("id"), b.get("name"), b.get("arguments"))

        def started(seq: int, data: dict) -> None:
            row(seq, STARTED, -1, data.get("callId"), data.get("name"), data.get("arguments"))

        def answered(seq: int, event: Mapping[str, Any], data: dict) -> None:
            if event.get("surfaceOp") != "append":
                return
            cid, is_error = result_fields(data.get("message"), version)
            k = row(seq, ANSWERED, -1 if is_error is None else int(is_error), cid, None, None)
            error = data.get("error")
            if type(error) is dict:
                name, code = error.get("name"), error.get("code")
                if type(name) is str:
                    ename_r(k)
                    ename_(name)
                if type(code) is str:
                    ecode_r(k)
                    ecode_(code)

        return advertised, started, answered

    def facts(self) -> ToolFacts:
        n = len(self._seq)
        cid, name, args, ename, ecode = (t.texts(n) for t in self._texts)
        return ToolFacts(np.array(self._seq, dtype=np.int64), np.array(self._kind, dtype=np.int8),
                         cid, name, args, np.array(self._error, dtype=np.int8), ename, ecode)


__all__ = ["ADVERTISED", "ANSWERED", "FACT_TYPES", "INT_LIMIT", "STARTED", "ToolFacts",
           "ToolFactsBuilder", "as_int", "result_fields", "stream_start"]
