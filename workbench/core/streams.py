"""Assistant streams: expansion, packing, block assembly and settlement. Layer: core.

Format v4 keeps the complete stream of one model-call attempt inside `assistant/message.data.stream`
and `assistant/attempt.data.stream` as *stream records* (v4 spec §2.1): raw `chunk` records and
packed `text-chunks` / `reasoning-chunks` / `tool-call-chunks` runs. This module reproduces

* `expand_stream`: the validating expansion into timed chunks (reference `expandAssistantStream`,
  `validateRecord`, `validateRun`; v4 §2.2, §2.4). Errors carry the reference's exact `TypeError`
  text plus a stable `kind` (the conformance suite's classification);
* `pack_chunks` / `StreamPacker`: the writer's compaction of timed chunks into records
  (reference `AssistantStreamAccumulator`; v4 §2.3);
* `assemble` / `assemble_stream` / `BlockAssembler`: assembly of chunks into content blocks (reference
  `BlockAssembler`, `assembleAssistantStream`; v0 §3.6). v0 logs feed it their top-level
  `assistant/chunk` events' `data.chunk` values;
* `verify_settlement`: the check a migrated generation undergoes (reference
  `assertCurrentAssistantStreams`): content, usage and replay state equal the re-assembled stream.

Expanded chunks have no seq: key them by (event seq, ordinal). Raw chunk objects are returned as
they were parsed (not copied): callers must not mutate them.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.core.assembly import (
    Assembly,
    AssemblyError,
    BlockAssembler,
    assemble,
    assemble_stream,
    js_get,
    js_is_blank,
)
from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int, stringify
from workbench.io.jsvalues import js_str

RUN_TYPES = ("text-chunks", "reasoning-chunks", "tool-call-chunks")
_TEXT_KEYS = ("type", "time0", "index", "dt", "texts")
_TOOL_KEYS = ("type", "time0", "index", "dt", "id", "args")
_TOOL_KEYS_NAMED = ("type", "time0", "index", "dt", "id", "name", "args")
_CHUNK_KEYS = ("type", "time", "chunk")


class StreamError(WorkbenchError):
    """An invalid stream record or chunk: `name` is the reference error class (`TypeError`),
    `message` its exact text, `kind` the stable classification of `conformance-v4/INDEX.md`."""

    def __init__(self, kind: str, name: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.message = message

    def __repr__(self) -> str:
        return f"StreamError(kind={self.kind!r}, name={self.name!r}, message={self.message!r})"


class SettlementError(WorkbenchError):
    """An `assistant/message` or `assistant/attempt` that disagrees with its embedded stream;
    `cause` is the message of the underlying stream error, when there is one."""

    def __init__(self, message: str, cause: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.cause = cause


def _type_error(kind: str, message: str) -> StreamError:
    return StreamError(kind, "TypeError", message)


# -- lossless JSON (reference snapshotJsonValue: finite numbers, no -0, plain values only)

def is_lossless_json(value: Any) -> bool:
    """Whether `value` survives a JSON round trip unchanged (no -0, no non-finite number)."""
    stack = [value]
    while stack:
        current = stack.pop()
        kind = type(current)
        if current is None or kind is bool or kind is str or kind is int:
            continue
        if kind is float:
            if current != current or current in (float("inf"), float("-inf")) or is_neg_zero(current):
                return False
            continue
        if kind is list:
            stack.extend(current)
        elif kind is dict:
            stack.extend(current.values())
        else:
            return False
    return True


def _safe_time(value: Any) -> Any:
    if not is_safe_int(value):
        raise _type_error("time", f"Assistant stream time must be a safe integer, got {js_str(value)}")
    return value


def _safe_index(value: Any, label: str) -> Any:
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise _type_error("index", f"{label} index must be a non-negative safe integer")
    return value


# -- expansion (reference expandAssistantStream / validateRecord / validateRun)

def _exact_keys(record: dict, keys: tuple[str, ...], label: str) -> None:
    if len(record) != len(keys) or not all(k in record for k in keys):
        raise _type_error("record_keys",
                          f"{label} Assistant stream record must contain exactly {', '.join(keys)}")


def _string_array(value: Any, label: str) -> list:
    if type(value) is not list or any(type(m) is not str for m in value):
        raise _type_error("members_not_strings", f"{label} must be a string array")
    return value


def _validate_run(record: dict, members: int, label: str) -> None:
    _safe_time(record["time0"])
    _safe_index(record["index"], label)
    dt = record["dt"]
    if type(dt) is not list or not all(is_safe_int(g) for g in dt):
        raise _type_error("dt", f"{label} dt must contain safe integers")
    if len(dt) != members - 1:
        raise _type_error("dt_arity", f"{label} dt length must be one less than its members")
    time = record["time0"]
    for gap in dt:
        time += gap
        if not is_safe_int(time):
            raise _type_error("member_time", f"{label} member times must stay safe integers")


def validate_record(value: Any) -> dict:
    """Check one stream record (reference `validateRecord`); returns it, or raises `StreamError`."""
    if type(value) is not dict:
        raise _type_error("record_not_object", "Assistant stream record must be an object")
    rtype = value.get("type", ABSENT)
    if rtype == "text-chunks" or rtype == "reasoning-chunks":
        _exact_keys(value, _TEXT_KEYS, rtype)
        texts = _string_array(value["texts"], f"{rtype} texts")
        if not texts:
            raise _type_error("members_empty", f"{rtype} texts must be non-empty")
        _validate_run(value, len(texts), rtype)
        return value
    if rtype == "tool-call-chunks":
        _exact_keys(value, _TOOL_KEYS_NAMED if "name" in value else _TOOL_KEYS, rtype)
        args = _string_array(value["args"], "tool-call-chunks args")
        if not args:
            raise _type_error("members_empty", "tool-call-chunks args must be non-empty")
        rid = value["id"]
        if type(rid) is not str or not rid:
            raise _type_error("tool_id", "tool-call-chunks id must be a non-empty string")
        name = value.get("name", ABSENT)
        if name is not ABSENT and (type(name) is not str or not name):
            raise _type_error("tool_name", "tool-call-chunks name must be a non-empty string")
        _validate_run(value, len(args), rtype)
        return value
    if rtype == "chunk":
        _exact_keys(value, _CHUNK_KEYS, "chunk")
        _safe_time(value["time"])
        chunk = value["chunk"]
        if type(chunk) is not dict or not is_lossless_json(chunk):
            raise _type_error("raw_chunk", "Assistant stream raw chunk must be a lossless JSON object")
        return value
    shown = "undefined" if rtype is ABSENT else stringify(rtype)
    raise _type_error("unknown_record_type", f"Unsupported Assistant stream record {shown}")


def _iterate(stream: Any) -> Iterable[Any]:
    """`for (const candidate of stream)`: arrays and strings iterate, anything else is a TypeError."""
    if type(stream) is list:
        return stream
    if type(stream) is str:
        return list(stream)
    if stream is None or stream is ABSENT:
        raise _type_error("not_iterable", f"{js_str(stream)} is not iterable "
                          "(cannot read property Symbol(Symbol.iterator))")
    raise _type_error("not_iterable", "stream is not iterable")


def expand_stream(stream: Any) -> list[tuple[Any, dict]]:
    """Expand one `data.stream` into `(time, chunk)` pairs (reference `expandAssistantStream`).

    Records are validated in order and the first failure raises `StreamError`.
    """
    out: list[tuple[Any, dict]] = []
    append = out.append
    for candidate in _iterate(stream):
        record = validate_record(candidate)
        rtype = record["type"]
        if rtype == "chunk":
            append((record["time"], record["chunk"]))
            continue
        time = record["time0"]
        index = record["index"]
        dt = record["dt"]
        if rtype == "tool-call-chunks":
            rid = record["id"]
            if "name" in record:
                name = record["name"]
                make = lambda m: {"type": "tool-call-delta", "index": index, "id": rid,  # noqa: E731
                                  "name": name, "argumentsDelta": m}
            else:
                make = lambda m: {"type": "tool-call-delta", "index": index, "id": rid,  # noqa: E731
                                  "argumentsDelta": m}
            members = record["args"]
        else:
            delta = "text-delta" if rtype == "text-chunks" else "reasoning-delta"
            make = lambda m: {"type": delta, "index": index, "text": m}  # noqa: E731
            members = record["texts"]
        for k, member in enumerate(members):
            if k:
                time = time + dt[k - 1]
            append((time, make(member)))
    return out


# -- packing (reference AssistantStreamAccumulator)

def _safe_gap(previous: Any, nxt: Any) -> Any:
    gap = nxt - previous
    return gap if is_safe_int(gap) and previous + gap == nxt else None


class StreamPacker:
    """The writer's incremental compaction of one attempt's timed chunks into stream records."""

    def __init__(self) -> None:
        self._records: list[dict] = []
        self._last_time: list[Any] = []

    def push(self, time: Any, chunk: Any) -> None:
        """Add one timed chunk; raises `StreamError` for a chunk the writer refuses."""
        time = _safe_time(time)
        if not is_lossless_json(chunk):
            raise _type_error("chunk_not_lossless", "Assistant stream chunk must be losslessly JSON-serializable")
        records = self._records
        previous = records[-1] if records else None
        ctype = chunk.get("type", ABSENT) if type(chunk) is dict else ABSENT
        if ctype == "text-delta" or ctype == "reasoning-delta":
            _safe_index(chunk.get("index", ABSENT), ctype)
            if type(chunk.get("text")) is not str:
                raise _type_error("delta_text", f"{ctype} text must be a string")
            rtype = "text-chunks" if ctype == "text-delta" else "reasoning-chunks"
            same = previous is not None and previous["type"] == rtype
            gap = _safe_gap(self._last_time[-1], time) if same else None
            if same and previous["index"] == chunk["index"] and gap is not None:
                previous["dt"].append(gap)
                previous["texts"].append(chunk["text"])
                self._last_time[-1] = time
            else:
                self._open({"type": rtype, "time0": time, "index": chunk["index"], "dt": [],
                            "texts": [chunk["text"]]}, time)
            return
        if ctype == "tool-call-delta":
            _safe_index(chunk.get("index", ABSENT), ctype)
            cid = chunk.get("id", ABSENT)
            if type(cid) is not str:
                raise _type_error("delta_id", "tool-call-delta id must be a string")
            has_name = "name" in chunk
            if has_name and type(chunk["name"]) is not str:
                raise _type_error("delta_name", "tool-call-delta name must be a string")
            if type(chunk.get("argumentsDelta")) is not str:
                raise _type_error("delta_arguments", "tool-call-delta argumentsDelta must be a string")
            if not cid or (has_name and chunk["name"] == ""):
                self._open({"type": "chunk", "time": time, "chunk": chunk}, time)
                return
            run = previous is not None and previous["type"] == "tool-call-chunks"
            gap = _safe_gap(self._last_time[-1], time) if run else None
            same_name = run and ("name" in previous) == has_name and previous.get("name") == chunk.get("name")
            if (run and previous["index"] == chunk["index"] and previous["id"] == cid and same_name
                    and gap is not None):
                previous["dt"].append(gap)
                previous["args"].append(chunk["argumentsDelta"])
                self._last_time[-1] = time
            else:
                record = {"type": "tool-call-chunks", "time0": time, "index": chunk["index"], "dt": [],
                          "id": cid}
                if has_name:
                    record["name"] = chunk["name"]
                record["args"] = [chunk["argumentsDelta"]]
                self._open(record, time)
            return
        if ctype in ("block-start", "block-end", "usage", "finish"):
            self._open({"type": "chunk", "time": time, "chunk": chunk}, time)
            return
        raise StreamError("unknown_chunk_type", "Error",
                          f"unreachable variant in AssistantStreamAccumulator.push: {stringify(chunk)}")

    def _open(self, record: dict, time: Any) -> None:
        self._records.append(record)
        self._last_time.append(time)

    def snapshot(self) -> list[dict]:
        """The records so far (detached copies)."""
        out = []
        for record in self._records:
            copy = dict(record)
            if "dt" in copy:
                copy["dt"] = list(copy["dt"])
                key = "args" if copy["type"] == "tool-call-chunks" else "texts"
                copy[key] = list(copy[key])
            out.append(copy)
        return out


def _timed(item: Any) -> tuple[Any, Any]:
    if type(item) is dict:
        return item.get("time", ABSENT), item.get("chunk", ABSENT)
    time, chunk = item
    return time, chunk


def pack_chunks(chunks: Iterable[Any]) -> list[dict]:
    """Pack timed chunks (`(time, chunk)` pairs or `{time, chunk}` objects) into stream records."""
    packer = StreamPacker()
    for item in chunks:
        packer.push(*_timed(item))
    return packer.snapshot()


# -- settlement (reference assertCurrentAssistantStreams)

def _strict_equal(a: Any, b: Any) -> bool:
    """Node's `isDeepStrictEqual` on parsed JSON: key-order free, -0 differs from 0, absent != null."""
    if a is ABSENT or b is ABSENT:
        return a is b
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool or a is None or b is None:
        return a is b
    if ta in (int, float) or tb in (int, float):
        return (ta in (int, float) and tb in (int, float) and a == b
                and is_neg_zero(a) == is_neg_zero(b))
    if ta is str or tb is str:
        return ta is tb and a == b
    if ta is list or tb is list:
        return ta is tb and len(a) == len(b) and all(_strict_equal(x, y) for x, y in zip(a, b))
    if ta is dict and tb is dict:
        return len(a) == len(b) and all(k in b and _strict_equal(v, b[k]) for k, v in a.items())
    return False


def verify_settlement(event: dict, index: int = 0) -> None:
    """Raise `SettlementError` unless the assistant event agrees with its embedded stream.

    `index` is the event's position in the verified log (it appears in the message). Attempts only
    need a valid stream; a stream that expands to nothing is not compared with the message.
    """
    etype = event.get("type")
    if etype not in ("assistant/message", "assistant/attempt"):
        return
    data = event.get("data", ABSENT)
    if data is None or data is ABSENT:
        raise SettlementError(f"Cannot read properties of {js_str(data)} (reading 'stream')")
    if type(data) is not dict:
        data = {}
    try:
        timed = expand_stream(data.get("stream", ABSENT))
        assembler = BlockAssembler()
        for _, chunk in timed:
            assembler.push(chunk)
    except (StreamError, AssemblyError) as exc:
        raise SettlementError(f"seed {etype} at index {index} has an invalid embedded stream",
                              exc.message) from exc
    if etype == "assistant/attempt" or not timed:
        return
    message = js_get(data, "message")
    try:
        interrupted = data.get("interrupted", ABSENT) is True
        content = assembler.interrupted_blocks() if interrupted else assembler.blocks()
        if not _strict_equal(js_get(message, "content"), content):
            raise SettlementError(f"seed assistant/message at index {index} content disagrees with its embedded stream")
        if not _strict_equal(data.get("usage", ABSENT), assembler.usage):
            raise SettlementError(f"seed assistant/message at index {index} usage disagrees with its embedded stream")
        source = js_get(message, "source")
        if not _strict_equal(js_get(source, "replayState"), assembler.replay_state):
            raise SettlementError(
                f"seed assistant/message at index {index} replay state disagrees with its embedded stream")
    except AssemblyError as exc:
        raise SettlementError(exc.message) from exc


__all__ = [
    "RUN_TYPES", "Assembly", "AssemblyError", "BlockAssembler", "SettlementError",
    "StreamError", "StreamPacker", "assemble", "assemble_stream", "expand_stream", "is_lossless_json",
    "js_is_blank", "pack_chunks", "validate_record", "verify_settlement",
]
