"""`LogIndex`: the one per-seq store of a log, filled during the loader's one pass while each
event is in hand. Layer: core (stdlib, numpy; no pandas, no pyarrow).

Every per-event value that only needs the event itself (and the turn/step it sits in) is taken
here, once, so a 1.3M-event log is parsed once, not once per consumer: type, time, structural
turn and step, surface op and replace range, ``sourceEventSeqs``, the carried message's role,
source kind and id, a preview (`workbench.core.preview`), the DSH heuristic node price (v0 spec
§6.4) of every surface-eligible event, the tool-call facts pairing reads
(`workbench.core.tool_facts.ToolFacts`) and the first stream time of each v4 assistant
message or attempt (request timing). The frames and the views read these columns.

Storage is compact, because the index lives as long as the session: numbers are int64 arrays
with a missing-mask (`MaskedInts`; a missing time holds int64 min, NumPy's NaT, so the frames
read the column as datetime64 without a copy), small vocabularies (type, role, source kind) are int32
codes (`Vocab`), seq lists are one flat array plus offsets (the Arrow list layout), and
previews and message ids are UTF-8 buffers plus offsets (`Texts`; the frames layer hands them
to Arrow without a copy). Stream starts are two arrays (seq, time) for the events that have one.

Turn and step are *structural*: the turn opened by the latest `turn/start` and not yet closed by
its `turn/end` (both boundary events included), likewise for steps (v0 spec §3.3). That is what
a reader groups by; it differs from `data.turn` only on pruned tool-result copies, which keep
the turn of the original result (v0 spec §5.9), and on between-turn events.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.core.events import surface_types
from workbench.core.index_columns import GrowColumn, MaskedInts, TextColumn, Texts, Vocab
from workbench.core.preview import event_preview
from workbench.core.tokens.heuristic import node_price
from workbench.core.tool_facts import (FACT_TYPES, INT_LIMIT, ToolFacts, ToolFactsBuilder,
                                       as_int, stream_start)
from workbench.errors import InternalError
from workbench.io.generations import nested_streams

_NONE = -(2**63)


def seq_list(value: Any) -> list[int] | None:
    """A ``sourceEventSeqs``-like value as ints; v4 range pairs ``[a, b]`` expanded (v4 §1.4)."""
    if not isinstance(value, list):
        return None
    out: list[int] = []
    for item in value:
        if isinstance(item, list) and len(item) == 2:
            a, b = as_int(item[0]), as_int(item[1])
            if a is not None and b is not None and a <= b:
                out.extend(range(a, b + 1))
            continue
        v = as_int(item)
        if v is not None:
            out.append(v)
    return out


def message_of(event: Mapping[str, Any]) -> Any:
    """The message dict an event carries (user/message: `data`; others: `data.message`)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    if event.get("type") == "user/message":
        return data
    return data.get("message")


@dataclass(frozen=True, slots=True)
class LogIndex:
    """Per-event values of one pass (index = seq); see the module docstring."""

    n: int
    time: MaskedInts
    type_codes: np.ndarray
    types: Vocab
    turn: MaskedInts
    step: MaskedInts
    role_codes: np.ndarray
    roles: Vocab
    source_kind_codes: np.ndarray
    source_kinds: Vocab
    surface_op: np.ndarray          # int8: -1 none, 0 append, 1 replace
    replace_seqs: np.ndarray        # int64 ascending: the events with a replace op ...
    replace_starts: MaskedInts      # ... its start (startSeq) and end (endSeq), one per row
    replace_ends: MaskedInts
    source_offsets: np.ndarray      # int64, n + 1 entries
    source_values: np.ndarray       # int64, flat
    source_present: np.ndarray      # bool
    price: np.ndarray               # int64 heuristic node price; -1 for log-only types
    message_id: Texts
    preview: Texts
    tools: ToolFacts
    stream_seqs: np.ndarray         # int64 ascending: v4 assistant message/attempt seqs ...
    stream_times: np.ndarray        # int64: ... and the time of their first stream record
    seq: np.ndarray                 # int64 0..n-1, one array every frame's seq column shares

    @property
    def replace_start(self) -> MaskedInts:
        """The replace op's start (startSeq) per seq; missing where there is none."""
        return self._dense(self.replace_starts)

    @property
    def replace_end(self) -> MaskedInts:
        """The replace op's end (endSeq) per seq; missing where there is none."""
        return self._dense(self.replace_ends)

    def _dense(self, rows: MaskedInts) -> MaskedInts:
        values, mask = np.zeros(self.n, dtype=np.int64), np.ones(self.n, dtype=bool)
        values[self.replace_seqs], mask[self.replace_seqs] = rows.values, rows.mask
        return MaskedInts(values, mask)

    def replace_range_at(self, seq: int) -> tuple[int | None, int | None]:
        """(start, end) of the replace op at `seq`; (None, None) without one."""
        k = int(np.searchsorted(self.replace_seqs, seq))
        if k < len(self.replace_seqs) and self.replace_seqs[k] == seq:
            return self.replace_starts[k], self.replace_ends[k]
        return None, None

    @property
    def type(self) -> np.ndarray:
        """Object array of event type strings."""
        return self.types.decode(self.type_codes)

    def preview_at(self, seq: int) -> str | None:
        return self.preview[seq]

    def message_id_at(self, seq: int) -> str | None:
        return self.message_id[seq]

    def stream_start_at(self, seq: int) -> int | None:
        """Time of the first stream record of the v4 assistant message/attempt at `seq`."""
        k = int(np.searchsorted(self.stream_seqs, seq))
        if k < len(self.stream_seqs) and self.stream_seqs[k] == seq:
            return int(self.stream_times[k])
        return None

    def seq_of_type(self, etype: str) -> np.ndarray:
        """Seqs of every event of type `etype` (ascending)."""
        code = self.types.codes.get(etype)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.nonzero(self.type_codes == code)[0]


_COLUMNS = (("_time", "q"), ("_turn", "q"), ("_step", "q"), ("_type", "i"), ("_role", "i"),
            ("_kind", "i"), ("_ops", "b"), ("_offsets", "q"), ("_values", "q"), ("_price", "q"))
_MASKED = frozenset({"_time", "_turn", "_step"})
_DTYPES = {"q": np.int64, "i": np.int32, "b": np.int8}
_FLUSH_MASK = (1 << 16) - 1


class LogIndexBuilder:
    """The index, one event at a time: `feed` each event in seq order, then `finish`.

    Incremental so it fills while the loader scans the log (`workbench.core.load.Feeder`): a
    large log's events are parsed once. `feed` is a closure over the output arrays' bound
    methods: it runs 1.3M times, so it avoids attribute lookups; it returns the event's node
    price (-1 for a log-only type) for the consumers fed after it. `n` (optional) is the count
    `finish` checks."""

    def __init__(self, n: int | None = None, *, version: int, has_times: bool = True,
                 spare: bool = False) -> None:
        self.n = n
        self._version, self._has_times = version, has_times
        self._open = [_NONE, _NONE]  # open turn, open step
        self._tools = ToolFactsBuilder(version)
        self._stream_seq, self._stream_time = array("q"), array("q")
        self._rseq, self._rstart, self._rend = array("q"), array("q"), array("q")
        self.types, self.roles, self.source_kinds = Vocab(), Vocab(), Vocab()
        self._grown = {name: GrowColumn(_DTYPES[code], spare=spare) for name, code in _COLUMNS}
        self._masks = {name: GrowColumn(bool, spare=spare) for name in _MASKED}
        self._present_col = GrowColumn(bool, spare=spare)
        self._message_id, self._preview = TextColumn(), TextColumn()
        self._spare = spare
        self._sealed = False
        self._base = [0, 0]   # events and source values moved into the growing columns
        for name, code in _COLUMNS:
            setattr(self, name, array(code))
        self._present = bytearray()
        self.feed = self._feeder(version, has_times)

    @property
    def count(self) -> int:
        """Events indexed so far (the seq the next `feed` must be)."""
        return self._base[0] + len(self._type)

    def _feeder(self, version: int, has_times: bool) -> Callable[[Mapping[str, Any]], int]:
        kinds = surface_types(version)
        time_, turn_, step_ = self._time.append, self._turn.append, self._step.append
        rseq_, rstart_, rend_ = self._rseq.append, self._rstart.append, self._rend.append
        ops_ = self._ops.append
        type_, role_, kind_ = self._type.append, self._role.append, self._kind.append
        offsets_, values, price_ = self._offsets.append, self._values, self._price.append
        present_ = self._present.append
        message_id_, preview_ = self._message_id.append, self._preview.append
        flush_ids, flush_previews = self._message_id.flush, self._preview.flush
        type_codes, type_code = self.types.codes, self.types.code
        role_code, kind_code = self.roles.code, self.source_kinds.code
        state = self._open
        tool_fact = self._tools.add
        stream_seq_, stream_time_ = self._stream_seq.append, self._stream_time.append
        base = self._base
        stream_types = frozenset({"assistant/message", "assistant/attempt"}) if nested_streams(version) \
            and has_times else frozenset()
        rows = self._type

        def feed(event: Mapping[str, Any]) -> int:
            i = base[0] + len(rows)
            etype = event.get("type")
            if type(etype) is not str:
                etype = str(etype)
            code = type_codes.get(etype)
            type_(type_code(etype) if code is None else code)
            t = event.get("time") if has_times else None
            time_(t if type(t) is int and -INT_LIMIT < t < INT_LIMIT else _int_or_none(t))
            if etype == "turn/start":
                v = as_int(_data(event).get("turn"))
                state[0] = _NONE if v is None else v
                state[1] = _NONE
            elif etype == "step/start":
                v = as_int(_data(event).get("step"))
                state[1] = _NONE if v is None else v
            turn_(state[0])
            step_(state[1])
            if etype == "turn/end":
                state[0] = state[1] = _NONE
            elif etype == "step/end":
                state[1] = _NONE
            op = event.get("surfaceOp")
            if op is None:
                ops_(-1)
                role_(-1)
                kind_(-1)
                message_id_(None)
            else:
                if op == "append":
                    ops_(0)
                elif type(op) is dict and op.get("op") == "replace":
                    ops_(1)
                    a = as_int(op.get("startSeq", op.get("start")))
                    b = as_int(op.get("endSeq", op.get("end")))
                    rseq_(i)
                    rstart_(_NONE if a is None else a)
                    rend_(_NONE if b is None else b)
                else:
                    ops_(-1)
                role = kind = mid = None
                message = message_of(event)
                if type(message) is dict:
                    role, mid, src = message.get("role"), message.get("id"), message.get("source")
                    if type(src) is dict:
                        kind = src.get("kind")
                message_id_(mid if type(mid) is str else None)
                role_(role_code(role))
                kind_(kind_code(kind))
            listed = seq_list(event["sourceEventSeqs"]) if "sourceEventSeqs" in event else None
            if listed is not None:
                values.extend(listed)
            present_(listed is not None)
            offsets_(base[1] + len(values))
            price = node_price(event, version=version) if etype in kinds else -1
            price_(price)
            preview_(event_preview(event))
            if etype in FACT_TYPES:
                tool_fact(i, event, etype)
            if etype in stream_types:
                started = stream_start(event)
                if started is not None:
                    stream_seq_(i)
                    stream_time_(started)
            if i & _FLUSH_MASK == _FLUSH_MASK:
                flush_ids()
                flush_previews()
            return price

        return feed

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
        for name, code in _COLUMNS:
            raw = getattr(self, name)
            values = np.frombuffer(raw, dtype=_DTYPES[code]) if len(raw) else np.zeros(0, _DTYPES[code])
            if name in _MASKED:
                mask = values == _NONE
                self._masks[name].extend(mask)
                if name != "_time":   # a missing time keeps int64 min: NaT as datetime64
                    values[mask] = 0   # in place: the column keeps the fed buffer
            self._grown[name].extend(values)
            del values
            if self._spare:
                del raw[:]
        self._present_col.extend(np.frombuffer(self._present, dtype=bool))
        if self._spare:   # copied: the buffer is emptied for the next rows
            del self._present[:]
        self._base[0] += chunk
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
            self._present_col.view(), g["_price"], self._message_id.texts(),
            self._preview.texts(), self._tools.facts(),
            np.array(self._stream_seq, dtype=np.int64), np.array(self._stream_time, dtype=np.int64),
            np.arange(n, dtype=np.int64))


def _int_or_none(value: Any) -> int:
    v = as_int(value)
    return _NONE if v is None else v


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}


__all__ = ["LogIndex", "LogIndexBuilder", "message_of", "seq_list"]
