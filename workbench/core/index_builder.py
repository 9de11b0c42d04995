"""`LogIndexBuilder`: the log index (`workbench.core.index.LogIndex`) filled one event at a
time during the log's one pass. Layer: core (stdlib, numpy).

What each column holds is `workbench.core.index`'s; how a row is filled is here: the type and
time of every event, its surface op and sources when it carries them, and per event type only
the work that type needs (`workbench.core.steps`), the other consumers of the pass beside it.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from workbench.core.events import surface_types
from workbench.core.index import LogIndex, seq_list
from workbench.core.index_columns import (
    GrowColumn,
    MaskedInts,
    SparseInts,
    TextColumn,
    Vocab,
)
from workbench.core.preview import PREVIEWS
from workbench.core.steps import Step, merged
from workbench.core.tokens.heuristic import node_price, slot_price
from workbench.core.tool_facts import ToolFactsBuilder, as_int, stream_start
from workbench.errors import InternalError
from workbench.io.generations import nested_streams

_NONE = -(2**63)
_COLUMNS = (("_time", np.int64), ("_turn", np.int64), ("_step", np.int64), ("_type", np.int32),
            ("_role", np.int32), ("_kind", np.int32), ("_ops", np.int8), ("_offsets", np.int64),
            ("_values", np.int64), ("_price", np.int64))
_MASKED = frozenset({"_time", "_turn", "_step"})
_FLUSH_MASK = (1 << 16) - 1
_STREAM_TYPES = frozenset({"assistant/message", "assistant/attempt"})


class LogIndexBuilder:
    """The index, one event at a time, then `finish`.

    Incremental so it fills while the loader scans the log (`workbench.core.load.Feeder`): a
    large log's events are parsed once. Per event the pass calls `row(seq, event, etype)` (the
    type and time every event has, and the surface op and sources any event may carry), then
    the step `steps` names for its type (`workbench.core.steps`: boundaries, price, preview,
    tool facts, stream start), merged with the other consumers' steps; `feed(event)` is both
    for the next seq. The other columns hold only the rows that have a value (`SparseInts`,
    `TextColumn`) and are made dense when sealed. `n` (optional) is the count `finish` checks."""

    def __init__(self, n: int | None = None, *, version: int, has_times: bool = True,
                 spare: bool = False) -> None:
        self.n = n
        self._tools = ToolFactsBuilder(version)
        self._stream_seq, self._stream_time = array("q"), array("q")
        self._rseq, self._rstart, self._rend = array("q"), array("q"), array("q")
        self.types, self.roles, self.source_kinds = Vocab(), Vocab(), Vocab()
        self._type, self._time, self._values = array("i"), array("q"), array("q")
        self._sparse = {"_turn": SparseInts("q", _NONE, held=True),
                        "_step": SparseInts("q", _NONE, held=True), "_role": SparseInts("i", -1),
                        "_kind": SparseInts("i", -1), "_ops": SparseInts("b", -1),
                        "_price": SparseInts("q", -1)}
        self._sources = SparseInts("q", -1)   # how many seqs a row lists (-1: none)
        self._grown = {name: GrowColumn(dtype, spare=spare) for name, dtype in _COLUMNS}
        self._masks = {name: GrowColumn(bool, spare=spare) for name in _MASKED}
        self._present_col = GrowColumn(bool, spare=spare)
        self._message_id, self._preview = TextColumn(), TextColumn()
        self._spare = spare
        self._sealed = False
        self._base = [0, 0]   # events and source values moved into the growing columns
        self.row = self._row(has_times)
        self.steps: dict[str, tuple[Step, ...]] = self._own_steps(version, has_times)

    @property
    def count(self) -> int:
        """Events indexed so far (the seq the next `feed` must be)."""
        return self._base[0] + len(self._type)

    def feed(self, event: Mapping[str, Any]) -> None:
        """Index the next event (`row` and its type's step; the pass merges the steps)."""
        seq, etype = self.count, event.get("type")
        etype = etype if type(etype) is str else str(etype)
        self.row(seq, event, etype)
        for step in self.steps.get(etype, ()):
            step(seq, event)

    def _row(self, has_times: bool) -> Callable[[int, Mapping[str, Any], str], None]:
        time_, type_ = self._time.append, self._type.append
        type_codes = self.types.codes
        sparse = self._sparse
        op_row, op_ = sparse["_ops"].rows.append, sparse["_ops"].values.append
        role_row, role_ = sparse["_role"].rows.append, sparse["_role"].values.append
        kind_row, kind_ = sparse["_kind"].rows.append, sparse["_kind"].values.append
        role_codes, kind_codes = self.roles.codes, self.source_kinds.codes
        rseq_, rstart_, rend_ = self._rseq.append, self._rstart.append, self._rend.append
        id_row, id_ = self._message_id.rows.append, self._message_id.pending.append
        source_row, source_count = self._sources.rows.append, self._sources.values.append
        values = self._values
        flush_ids, flush_previews = self._message_id.flush, self._preview.flush

        def surface(i: int, event: Mapping[str, Any], op: Any, etype: str) -> None:
            if op == "append":
                op_row(i)
                op_(0)
            elif type(op) is dict and op.get("op") == "replace":
                op_row(i)
                op_(1)
                a = as_int(op.get("startSeq", op.get("start")))
                b = as_int(op.get("endSeq", op.get("end")))
                rseq_(i)
                rstart_(_NONE if a is None else a)
                rend_(_NONE if b is None else b)
            data = event.get("data")
            if type(data) is not dict:
                return
            message = data if etype == "user/message" else data.get("message")
            if type(message) is not dict:
                return
            role, mid, src = message.get("role"), message.get("id"), message.get("source")
            if type(mid) is str:
                id_row(i)
                id_(mid)
            if type(role) is str:
                role_row(i)
                role_(role_codes[role])
            kind = src.get("kind") if type(src) is dict else None
            if type(kind) is str:
                kind_row(i)
                kind_(kind_codes[kind])

        def row(i: int, event: Mapping[str, Any], etype: str) -> None:
            type_(type_codes[etype])
            time_(_int_or_none(event.get("time")) if has_times else _NONE)
            op = event.get("surfaceOp")
            if op is not None:
                surface(i, event, op, etype)
            if "sourceEventSeqs" in event:
                listed = seq_list(event["sourceEventSeqs"])
                if listed is not None:
                    source_row(i)
                    source_count(len(listed))
                    values.extend(listed)
            if i & _FLUSH_MASK == _FLUSH_MASK:
                flush_ids()
                flush_previews()

        return row

    def _own_steps(self, version: int, has_times: bool) -> dict[str, tuple[Step, ...]]:
        """The index's work per event type (the class doc)."""
        sparse = self._sparse
        turn_row, turn_ = sparse["_turn"].rows.append, sparse["_turn"].values.append
        step_row, step_ = sparse["_step"].rows.append, sparse["_step"].values.append
        preview_row, preview_ = self._preview.rows.append, self._preview.pending.append
        stream_seq_, stream_time_ = self._stream_seq.append, self._stream_time.append
        price_row, price_ = sparse["_price"].rows.append, sparse["_price"].values.append

        def turn_start(i: int, event: Mapping[str, Any]) -> None:
            v = as_int(_data(event).get("turn"))
            turn_row(i)
            turn_(_NONE if v is None else v)
            step_row(i)
            step_(_NONE)

        def step_start(i: int, event: Mapping[str, Any]) -> None:
            v = as_int(_data(event).get("step"))
            step_row(i)
            step_(_NONE if v is None else v)

        def turn_end(i: int, event: Mapping[str, Any]) -> None:   # the next row is outside
            turn_row(i + 1)
            turn_(_NONE)
            step_row(i + 1)
            step_(_NONE)

        def step_end(i: int, event: Mapping[str, Any]) -> None:
            step_row(i + 1)
            step_(_NONE)

        advertised, started, answered = self._tools.appenders()
        streams = nested_streams(version) and has_times

        def stream(i: int, data: Any) -> None:
            at = stream_start(data)
            if at is not None:
                stream_seq_(i)
                stream_time_(at)

        def node(etype: str) -> Step:
            """A surface type's step: the event's data and message slot read once for its
            node price, its preview and (an assistant message) its tool calls and stream
            start."""
            user, assistant = etype == "user/message", etype == "assistant/message"
            result, timed = etype == "tool/result", assistant and streams
            make = PREVIEWS.get(etype, _no_preview)

            def step(i: int, event: Mapping[str, Any]) -> None:
                data = event.get("data")
                if type(data) is dict:
                    message = data if user else data.get("message")
                else:
                    data = message = None
                price_row(i)
                price_(slot_price(etype, message, version=version))
                text = make({} if data is None else data)
                if text is not None:
                    preview_row(i)
                    preview_(text)
                if assistant:
                    advertised(i, message)
                    if timed:
                        stream(i, data)
                elif result and data is not None:
                    answered(i, event, data)
            return step

        def preview(etype: str, make: Callable[[dict], str | None]) -> Step:
            call, timed = etype == "tool/call", streams and etype in _STREAM_TYPES

            def step(i: int, event: Mapping[str, Any]) -> None:
                data = event.get("data")
                text = make(data if type(data) is dict else {})
                if text is not None:
                    preview_row(i)
                    preview_(text)
                if call:
                    if type(data) is dict:
                        started(i, data)
                elif timed:
                    stream(i, data)
            return step

        nodes = surface_types(version)
        return merged((
            {"turn/start": turn_start, "step/start": step_start, "turn/end": turn_end,
             "step/end": step_end},
            {etype: node(etype) for etype in nodes},
            {etype: preview(etype, make) for etype, make in PREVIEWS.items() if etype not in nodes}))

    def _move(self) -> None:
        """Move the rows indexed since the last move into the growing columns. Without `spare`
        the arrays are handed over as they are (no copy) and the builder is done; with it they
        are copied into room to grow and emptied in place, so `feed` goes on."""
        if self._sealed:
            msg = "an index without spare room was finished; it takes no more events"
            raise InternalError(msg)
        chunk = len(self._type)
        if not len(self._grown["_offsets"]):
            self._grown["_offsets"].extend(np.zeros(1, np.int64))
        elif not chunk:
            return
        stop = self._base[0] + chunk
        columns = {name: column.dense(stop) for name, column in self._sparse.items()}
        for name in ("_type", "_time", "_values"):
            raw = getattr(self, name)
            dtype = np.int32 if name == "_type" else np.int64
            columns[name] = (np.array(raw, dtype=dtype) if self._spare   # emptied below
                             else np.frombuffer(raw, dtype=dtype)) if len(raw) else np.zeros(0, dtype)
        counts = self._sources.dense(stop)
        present = counts >= 0
        np.maximum(counts, 0, out=counts)
        columns["_offsets"] = np.cumsum(counts) + self._base[1]
        for name, _dtype in _COLUMNS:
            values = columns.pop(name)
            if name in _MASKED:
                mask = values == _NONE
                self._masks[name].extend(mask)
                if name != "_time":   # a missing time keeps int64 min: NaT as datetime64
                    values[mask] = 0
            self._grown[name].extend(values)
            del values
        self._present_col.extend(present)
        if self._spare:   # copied: the buffers are emptied for the next rows
            for name in ("_type", "_time", "_values"):
                del getattr(self, name)[:]
        self._base[0] = stop
        self._base[1] = int(self._grown["_offsets"].view()[-1])
        self._sealed = not self._spare

    def finish(self, *, has_times: bool = True) -> LogIndex:
        """The index of every event fed so far; ``has_times=False`` drops the times fed
        (positional seq/time, v0 §1.11). More events may be fed afterwards (a followed log):
        `finish` again returns the index of all of them; an earlier index stays unchanged."""
        n = self.count
        if self.n is not None and self.n != n:
            msg = f"indexed {n} of {self.n} events"
            raise InternalError(msg)
        self._move()
        g, m = {k: v.view() for k, v in self._grown.items()}, {k: v.view() for k, v in self._masks.items()}
        time = MaskedInts(g["_time"], m["_time"]) if has_times else MaskedInts(
            np.full(n, _NONE, np.int64), np.ones(n, dtype=bool))

        def masked(name: str) -> MaskedInts:
            return MaskedInts(g[name], m[name])

        def sparse(raw: array) -> MaskedInts:
            values = np.array(raw, dtype=np.int64)
            mask = values == _NONE
            values[mask] = 0
            return MaskedInts(values, mask)

        return LogIndex(
            n, time, g["_type"], self.types, masked("_turn"), masked("_step"),
            g["_role"], self.roles, g["_kind"], self.source_kinds, g["_ops"],
            np.array(self._rseq, dtype=np.int64), sparse(self._rstart), sparse(self._rend),
            g["_offsets"], g["_values"],
            self._present_col.view(), g["_price"], self._message_id.texts(n),
            self._preview.texts(n), self._tools.facts(),
            np.array(self._stream_seq, dtype=np.int64), np.array(self._stream_time, dtype=np.int64),
            np.arange(n, dtype=np.int64))


def price_steps(column: SparseInts, version: int) -> dict[str, Step]:
    """The step putting each surface-type event's node price (`heuristic.node_price`, v0 spec
    §6.4) into `column` (-1, its default, for a log-only type)."""
    row_, price_ = column.rows.append, column.values.append

    def price(i: int, event: Mapping[str, Any]) -> None:
        row_(i)
        price_(node_price(event, version=version))
    return dict.fromkeys(surface_types(version), price)


def _no_preview(data: dict) -> None:
    return None


def _int_or_none(value: Any) -> int:
    v = as_int(value)
    return _NONE if v is None else v


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


__all__ = ["LogIndexBuilder", "price_steps"]
