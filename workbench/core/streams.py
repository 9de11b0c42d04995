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

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import (
    ABSENT,
    MAX_SAFE_INTEGER,
    is_neg_zero,
    is_safe_int,
    js_str,
    stringify,
)

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


class AssemblyError(WorkbenchError):
    """Chunks that a `BlockAssembler` cannot assemble (an unknown chunk type, an unclosed block of a
    type that has no delta form); `message` is the reference's exact text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


# -- assembly (reference BlockAssembler)

_JS_SPACE = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_JS_BLANK = re.compile(f"[{_JS_SPACE}]*")


def js_is_blank(text: str) -> bool:
    """`text.trim() === ""` with JavaScript's whitespace set."""
    return _JS_BLANK.fullmatch(text) is not None


def _map_key(value: Any) -> Any:
    """A Python key with JavaScript `Map` (SameValueZero) identity: 1 and 1.0 and -0/0 collide,
    true and 1 do not, objects are distinct by identity."""
    kind = type(value)
    if kind is int or kind is float:
        return ("n", value + 0)
    if kind is str:
        return ("s", value)
    if kind is bool:
        return ("b", value)
    if value is None or value is ABSENT:
        return ("u", repr(value))
    return ("o", id(value))


def _js_truthy(value: Any) -> bool:
    if value is ABSENT or value is None or value is False:
        return False
    if type(value) is str:
        return value != ""
    if type(value) is int or type(value) is float:
        return value == value and value != 0
    return True


def _prop(obj: Any, key: str) -> Any:
    """`obj[key]` with JavaScript's TypeError on null/undefined."""
    if type(obj) is dict:
        return obj.get(key, ABSENT)
    if obj is None or obj is ABSENT:
        raise AssemblyError(f"Cannot read properties of {js_str(obj)} (reading '{key}')")
    return ABSENT


class _Partial:
    __slots__ = ("block_type", "text", "tool_id", "tool_name", "arguments", "block")

    def __init__(self, block_type: Any) -> None:
        self.block_type = block_type
        self.text = ""
        self.tool_id: Any = ABSENT
        self.tool_name: Any = ABSENT
        self.arguments = ""
        self.block: Any = ABSENT


class BlockAssembler:
    """Stateful assembly of one attempt's chunks (reference `BlockAssembler`)."""

    def __init__(self) -> None:
        self._partials: dict[Any, _Partial] = {}
        self._order: list[tuple[Any, _Partial]] = []
        self.usage: Any = ABSENT
        self._finish: Any = ABSENT
        self._replay: Any = ABSENT

    def _ensure(self, index: Any, block_type: Any) -> _Partial:
        key = _map_key(index)
        partial = self._partials.get(key)
        if partial is None:
            partial = _Partial(block_type)
            self._partials[key] = partial
            self._order.append((index, partial))
        return partial

    def push(self, chunk: Any) -> None:
        ctype = _prop(chunk, "type")
        if ctype == "block-start":
            index = _prop(chunk, "index")
            if _map_key(index) not in self._partials:
                self._ensure(index, _prop(chunk, "blockType"))
        elif ctype == "text-delta" or ctype == "reasoning-delta":
            partial = self._ensure(_prop(chunk, "index"), "text" if ctype == "text-delta" else "reasoning")
            if partial.block is ABSENT:
                text = chunk["text"] if type(chunk.get("text")) is str else js_str(_prop(chunk, "text"))
                partial.text += text
        elif ctype == "tool-call-delta":
            partial = self._ensure(_prop(chunk, "index"), "tool-call")
            if partial.block is ABSENT:
                partial.tool_id = _prop(chunk, "id")
                name = _prop(chunk, "name")
                if _js_truthy(name):
                    partial.tool_name = name
                delta = _prop(chunk, "argumentsDelta")
                partial.arguments += delta if type(delta) is str else js_str(delta)
        elif ctype == "block-end":
            block = _prop(chunk, "block")
            partial = self._ensure(_prop(chunk, "index"), _prop(block, "type"))
            if partial.block is ABSENT:
                partial.block = block
        elif ctype == "usage":
            self.usage = _prop(chunk, "usage")
        elif ctype == "finish":
            self._finish = _prop(chunk, "reason")
            self._replay = _prop(chunk, "replayState")
        else:
            raise AssemblyError(f"unreachable variant in BlockAssembler.push: {stringify(chunk)}")

    @staticmethod
    def _assemble(partial: _Partial, index: Any) -> Any:
        if partial.block is not ABSENT:
            return partial.block
        btype = partial.block_type
        if btype == "text" or btype == "reasoning":
            return {"type": btype, "text": partial.text}
        if btype == "tool-call":
            tool_id = partial.tool_id
            if tool_id is ABSENT or tool_id is None:
                tool_id = f"call-{js_str(index)}"
            name = "" if partial.tool_name is ABSENT or partial.tool_name is None else partial.tool_name
            return {"type": "tool-call", "id": tool_id, "name": name, "arguments": partial.arguments}
        raise AssemblyError(f'cannot assemble incomplete block of type "{js_str(btype)}"')

    @property
    def finish(self) -> Any:
        """The finish reason; `{kind: "stop"}` when the stream ended without one."""
        return {"kind": "stop"} if self._finish is ABSENT or self._finish is None else self._finish

    def _assembled(self) -> tuple[list, Any]:
        every = [self._assemble(p, i) for i, p in self._order]
        finish = self.finish
        truncated = type(finish) is dict and finish.get("kind") == "max-tokens"
        kept = [_prop(b, "type") != "tool-call" for b in every] if truncated else None
        blocks = every if kept is None else [b for b, k in zip(every, kept) if k]
        envelope = self._replay
        env_blocks = envelope.get("blocks", ABSENT) if type(envelope) is dict else ABSENT
        if envelope is ABSENT or envelope is None or env_blocks is ABSENT:
            return blocks, envelope
        length = len(env_blocks) if type(env_blocks) in (list, str) else None
        if length != len(every):
            return blocks, ABSENT
        if kept is None or len(blocks) == len(every):
            return blocks, envelope
        pruned = {"response": envelope.get("response", ABSENT),
                  "blocks": [b for b, k in zip(env_blocks, kept) if k]}
        return blocks, pruned

    def blocks(self) -> list:
        """Assembled blocks in first-seen index order (max-tokens drops tool calls)."""
        return self._assembled()[0]

    @property
    def replay_state(self) -> Any:
        """The finish chunk's replay state, pruned in step with `blocks()`; ABSENT when misaligned."""
        return self._assembled()[1]

    def interrupted_blocks(self) -> list:
        """The prefix an interrupted stream can finalize: non-blank text/reasoning blocks."""
        out = []
        for index, partial in self._order:
            btype = partial.block_type
            if partial.block is not ABSENT:
                btype = _prop(partial.block, "type")
                if btype is ABSENT or btype is None:
                    btype = partial.block_type
            if btype != "text" and btype != "reasoning":
                continue
            block = self._assemble(partial, index)
            if type(block) is dict and block.get("type") in ("text", "reasoning"):
                text = block.get("text")
                if type(text) is str and not js_is_blank(text):
                    out.append(block)
        return out


@dataclass(frozen=True)
class Assembly:
    """The assembled attempt. `error` holds the reference error text when `blocks()` (and with it
    the replay state) cannot be assembled; then `blocks` and `replay_state` are None."""

    blocks: tuple | None
    interrupted_blocks: tuple
    finish: Any
    usage: Any
    replay_state: Any
    error: str | None = None

    def to_json(self) -> dict:
        """The conformance shape `{blocks, interruptedBlocks, finish, usage?, replayState?}`."""
        if self.error is not None:
            return {"error": {"message": self.error}}
        out: dict[str, Any] = {"blocks": list(self.blocks or ()),
                               "interruptedBlocks": list(self.interrupted_blocks), "finish": self.finish}
        if self.usage is not ABSENT:
            out["usage"] = self.usage
        if self.replay_state is not ABSENT:
            out["replayState"] = self.replay_state
        return out


def _finish_assembly(assembler: BlockAssembler) -> Assembly:
    interrupted = tuple(assembler.interrupted_blocks())
    try:
        blocks, replay = assembler._assembled()
    except AssemblyError as exc:
        return Assembly(None, interrupted, assembler.finish, assembler.usage, None, exc.message)
    return Assembly(tuple(blocks), interrupted, assembler.finish, assembler.usage, replay)


def assemble(chunks: Iterable[Any]) -> Assembly:
    """Assemble raw chunks (dicts, or `(time, chunk)` pairs from `expand_stream`).

    Raises `AssemblyError` for a chunk the assembler refuses (unknown type); an unclosed block
    that cannot be built from deltas is reported in `Assembly.error`.
    """
    assembler = BlockAssembler()
    for chunk in chunks:
        assembler.push(chunk[1] if type(chunk) is tuple else chunk)
    return _finish_assembly(assembler)


def assemble_stream(stream: Iterable[Any]) -> Assembly:
    """Assemble stored records without expanding them (reference `assembleAssistantStream`): each
    run contributes one delta of its joined members. Records are trusted, not validated."""
    assembler = BlockAssembler()
    for record in stream:
        rtype = _prop(record, "type")
        if rtype == "chunk":
            assembler.push(record.get("chunk", ABSENT))
        elif rtype == "text-chunks" or rtype == "reasoning-chunks":
            delta = "text-delta" if rtype == "text-chunks" else "reasoning-delta"
            assembler.push({"type": delta, "index": record.get("index", ABSENT),
                            "text": "".join(record.get("texts") or ())})
        elif rtype == "tool-call-chunks":
            chunk = {"type": "tool-call-delta", "index": record.get("index", ABSENT),
                     "id": record.get("id", ABSENT)}
            if record.get("name", ABSENT) is not ABSENT:
                chunk["name"] = record["name"]
            chunk["argumentsDelta"] = "".join(record.get("args") or ())
            assembler.push(chunk)
        else:
            raise AssemblyError(f"unreachable variant in assembleAssistantStream: {stringify(record)}")
    return _finish_assembly(assembler)


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
    message = _prop(data, "message")
    try:
        interrupted = data.get("interrupted", ABSENT) is True
        content = assembler.interrupted_blocks() if interrupted else assembler.blocks()
        if not _strict_equal(_prop(message, "content"), content):
            raise SettlementError(f"seed assistant/message at index {index} content disagrees with its embedded stream")
        if not _strict_equal(data.get("usage", ABSENT), assembler.usage):
            raise SettlementError(f"seed assistant/message at index {index} usage disagrees with its embedded stream")
        source = _prop(message, "source")
        if not _strict_equal(_prop(source, "replayState"), assembler.replay_state):
            raise SettlementError(
                f"seed assistant/message at index {index} replay state disagrees with its embedded stream")
    except AssemblyError as exc:
        raise SettlementError(exc.message) from exc


__all__ = [
    "MAX_SAFE_INTEGER", "RUN_TYPES", "Assembly", "AssemblyError", "BlockAssembler", "SettlementError",
    "StreamError", "StreamPacker", "assemble", "assemble_stream", "expand_stream", "is_lossless_json",
    "js_is_blank", "pack_chunks", "validate_record", "verify_settlement",
]
