"""One pass over a log's events into compact per-event arrays. Layer: frames (stdlib, numpy,
core heuristic prices).

Every per-event frame column that only needs the event itself (and the turn/step it sits in)
comes from this single pass, so a 1.3M-event log is parsed once here, not once per column: a
large log's events are parsed on demand by the io store, so every extra pass costs a parse.
The pass also prices every surface-eligible event with the DSH heuristic (v0 spec §6.4) while
its dict is at hand, and keeps the few fields tool-call pairing and request timing need
(`tool_fact`, `stream_start`), so those frames never parse the log again. Surface facts (current, shadowed by whom) come from the core timeline.

Storage is compact, because the scan is cached for the session's lifetime: numbers are int64
arrays with a missing-mask, small vocabularies (type, role, source kind) are int32 codes, seq
lists are one flat array plus offsets (the Arrow list layout), and previews and message ids are
one UTF-8 buffer each (`columns.TextBuilder`), handed to the frame without a copy.

Turn and step are *structural*: the turn opened by the latest `turn/start` and not yet closed by
its `turn/end` (both boundary events included), likewise for steps (v0 spec §3.3). That is what
a reader groups by; it differs from `data.turn` only on pruned tool-result copies, which keep
the turn of the original result (v0 spec §5.9), and on between-turn events.
"""
from __future__ import annotations

from array import array
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from workbench.core.events import surface_types
from workbench.core.tokens.heuristic import node_price
from workbench.errors import InternalError
from workbench.frames.columns import TextBuilder
from workbench.frames.facts import INT_LIMIT, as_int, stream_start, tool_fact
from workbench.frames.preview import event_preview
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


def _masked(raw: array) -> MaskedInts:
    values = np.frombuffer(raw, dtype=np.int64) if len(raw) else np.zeros(0, np.int64)
    mask = values == _NONE
    return MaskedInts(np.where(mask, 0, values), mask)


@dataclass(frozen=True, slots=True)
class EventScan:
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
    replace_start: MaskedInts
    replace_end: MaskedInts
    source_offsets: np.ndarray      # int64, n + 1 entries
    source_values: np.ndarray       # int64, flat
    source_present: np.ndarray      # bool
    price: np.ndarray               # int64 heuristic node price; -1 for log-only types
    message_id: pd.arrays.ArrowStringArray
    preview: pd.arrays.ArrowStringArray
    tool_facts: dict[int, tuple]    # seq -> `tool_fact` of that event
    stream_start: dict[int, int]    # v4 assistant message/attempt seq -> first stream time

    @property
    def seq(self) -> np.ndarray:
        return np.arange(self.n, dtype=np.int64)

    @property
    def type(self) -> np.ndarray:
        """Object array of event type strings."""
        return self.types.decode(self.type_codes)

    def preview_at(self, seq: int) -> str | None:
        value = self.preview[seq]
        return value if isinstance(value, str) else None

    def message_id_at(self, seq: int) -> str | None:
        value = self.message_id[seq]
        return value if isinstance(value, str) else None

    def type_at(self, seq: int) -> str | None:
        code = int(self.type_codes[seq])
        return self.types.values[code] if code >= 0 else None

    def source_kind_at(self, seq: int) -> str | None:
        code = int(self.source_kind_codes[seq])
        return self.source_kinds.values[code] if code >= 0 else None

    def sources_at(self, seq: int) -> list[int] | None:
        if not self.source_present[seq]:
            return None
        return self.source_values[self.source_offsets[seq]:self.source_offsets[seq + 1]].tolist()

    def seq_of_type(self, etype: str) -> np.ndarray:
        """Seqs of every event of type `etype` (ascending)."""
        code = self.types.codes.get(etype)
        if code is None:
            return np.zeros(0, dtype=np.int64)
        return np.nonzero(self.type_codes == code)[0]

    def source_lists(self, seqs: np.ndarray | None = None) -> pa.Array:
        """``sourceEventSeqs`` of `seqs` (default: every event) as an Arrow list<int64> array."""
        offsets = pa.array(self.source_offsets, type=pa.int64())
        values = pa.array(self.source_values, type=pa.int64())
        mask = pa.array(~self.source_present)
        full = pa.LargeListArray.from_arrays(offsets, values, mask=mask).cast(
            pa.list_(pa.int64()))
        return full if seqs is None else full.take(pa.array(seqs, type=pa.int64()))


class EventScanner:
    """The scan, one event at a time: `feed` each event in seq order, then `finish`.

    Incremental so the pass can run while the loader scans the log (see `frames.source.LogPass`): a large
    log's events are parsed once. `feed` is a closure over the output arrays' bound methods: it
    runs 1.3M times, so it avoids attribute lookups. `n` (optional) is the count `finish`
    checks."""

    def __init__(self, n: int | None = None, *, version: int, has_times: bool = True) -> None:
        self.n = n
        self._time, self._turn, self._step = array("q"), array("q"), array("q")
        self._rstart, self._rend = array("q"), array("q")
        self._type, self._role, self._kind = array("i"), array("i"), array("i")
        self._ops = array("b")
        self._offsets, self._values = array("q", [0]), array("q")
        self._present = bytearray()
        self._price = array("q")
        self._message_id = TextBuilder()
        self._preview = TextBuilder()
        self._tool_facts: dict[int, tuple] = {}
        self._stream_start: dict[int, int] = {}
        self.types, self.roles, self.source_kinds = Vocab(), Vocab(), Vocab()
        self.feed = self._feeder(version, has_times)

    @property
    def count(self) -> int:
        """Events scanned so far (the seq the next `feed` must be)."""
        return len(self._type)

    def _feeder(self, version: int, has_times: bool) -> Callable[[Mapping[str, Any]], None]:
        kinds = surface_types(version)
        time_, turn_, step_ = self._time.append, self._turn.append, self._step.append
        rstart_, rend_, ops_ = self._rstart.append, self._rend.append, self._ops.append
        type_, role_, kind_ = self._type.append, self._role.append, self._kind.append
        offsets_, values, price_ = self._offsets.append, self._values, self._price.append
        present_ = self._present.append
        message_id_, preview_ = self._message_id.append, self._preview.append
        type_codes, type_code = self.types.codes, self.types.code
        role_code, kind_code = self.roles.code, self.source_kinds.code
        state = [_NONE, _NONE]  # open turn, open step
        facts, starts = self._tool_facts, self._stream_start
        fact_types = frozenset({"assistant/message", "tool/call", "tool/result"})
        stream_types = frozenset({"assistant/message", "assistant/attempt"}) if nested_streams(version) \
            and has_times else frozenset()

        def feed(event: Mapping[str, Any]) -> None:
            i = len(self._type)
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
                rstart_(_NONE)
                rend_(_NONE)
                role_(-1)
                kind_(-1)
                message_id_(None)
            else:
                s = e = _NONE
                if op == "append":
                    ops_(0)
                elif type(op) is dict and op.get("op") == "replace":
                    ops_(1)
                    a = as_int(op.get("startSeq", op.get("start")))
                    b = as_int(op.get("endSeq", op.get("end")))
                    s = _NONE if a is None else a
                    e = _NONE if b is None else b
                else:
                    ops_(-1)
                rstart_(s)
                rend_(e)
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
            offsets_(len(values))
            price_(node_price(event, version=version) if etype in kinds else -1)
            preview_(event_preview(event))
            if etype in fact_types:
                fact = tool_fact(event, etype, version)
                if fact is not None:
                    facts[i] = fact
            if etype in stream_types:
                started = stream_start(event)
                if started is not None:
                    starts[i] = started

        return feed

    def finish(self, *, has_times: bool = True) -> EventScan:
        """The scan; ``has_times=False`` drops the times fed (positional seq/time, v0 §1.11)."""
        n = self.count
        if self.n is not None and self.n != n:
            msg = f"scanned {n} of {self.n} events"
            raise InternalError(msg)
        if not has_times:
            self._time = array("q", [_NONE]) * n
        return EventScan(
            n, _masked(self._time), _codes(self._type), self.types, _masked(self._turn),
            _masked(self._step), _codes(self._role), self.roles, _codes(self._kind),
            self.source_kinds,
            np.frombuffer(self._ops, dtype=np.int8) if n else np.zeros(0, np.int8),
            _masked(self._rstart), _masked(self._rend),
            np.frombuffer(self._offsets, dtype=np.int64),
            np.frombuffer(self._values, dtype=np.int64) if len(self._values)
            else np.zeros(0, np.int64),
            np.frombuffer(bytes(self._present), dtype=bool),
            np.frombuffer(self._price, dtype=np.int64) if n else np.zeros(0, np.int64),
            self._message_id.array(), self._preview.array(), self._tool_facts,
            self._stream_start)


def _int_or_none(value: Any) -> int:
    v = as_int(value)
    return _NONE if v is None else v


def scan_events(events: Sequence[Mapping[str, Any]], *, version: int,
                has_times: bool = True) -> EventScan:
    """Walk `events` once. `has_times=False` (implicit seq/time, v0 §1.11) leaves times missing."""
    scanner = EventScanner(len(events), version=version, has_times=has_times)
    for event in events:
        scanner.feed(event)
    return scanner.finish()


def _codes(raw: array) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.int32) if len(raw) else np.zeros(0, np.int32)


def _data(event: Mapping[str, Any]) -> Mapping[str, Any]:
    data = event.get("data")
    return data if isinstance(data, dict) else {}
