"""Block assembly of one model-call attempt's chunks. Layer: core.

Reference `BlockAssembler` / `assembleAssistantStream` (v0 spec §3.6): blocks in first-seen index
order (JavaScript `Map` identity: 1 and 1.0 are one index, `true` is not 1); a `block-end` block is
authoritative and later deltas for its index are ignored; an unclosed text/reasoning block is its
concatenated deltas; an unclosed tool call is `{id or "call-<index>", name or "", arguments}`; an
unclosed block of any other type cannot be assembled; a `max-tokens` finish drops tool-call blocks
and prunes the replay state's per-block entries in step. The interrupted prefix keeps the non-blank
text/reasoning blocks (JavaScript `trim` whitespace).

Used for v4 nested streams (`workbench.core.streams`) and v0 top-level `assistant/chunk` events.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT, stringify
from workbench.io.jsvalues import js_str, js_typeof


class AssemblyError(WorkbenchError):
    """Chunks that a `BlockAssembler` cannot assemble (an unknown chunk type, an unclosed block of a
    type that has no delta form); `message` is the reference's exact text."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


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


def js_get(obj: Any, key: str) -> Any:
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
        """The block at `index`, started with `block_type` when it is new (a started block
        keeps its type)."""
        key = _map_key(index)
        partial = self._partials.get(key)
        if partial is None:
            partial = self._partials[key] = _Partial(block_type)
            self._order.append((index, partial))
        return partial

    def push(self, chunk: Any) -> None:
        if type(chunk) is not dict:   # null/undefined throw; any other value has no known type
            js_get(chunk, "type")
            raise AssemblyError(f"unreachable variant in BlockAssembler.push: {stringify(chunk)}")
        get = chunk.get               # a dict chunk: js_get(chunk, key) is get(key, ABSENT)
        ctype = get("type", ABSENT)
        if ctype == "block-start":
            self._ensure(get("index", ABSENT), get("blockType", ABSENT))
        elif ctype == "text-delta" or ctype == "reasoning-delta":
            text = get("text", ABSENT)
            self.text_delta(get("index", ABSENT), "text" if ctype == "text-delta" else "reasoning",
                            text if type(text) is str else js_str(text))
        elif ctype == "tool-call-delta":
            delta = get("argumentsDelta", ABSENT)
            self.tool_delta(get("index", ABSENT), get("id", ABSENT), get("name", ABSENT),
                            delta if type(delta) is str else js_str(delta))
        elif ctype == "block-end":
            block = get("block", ABSENT)
            partial = self._ensure(get("index", ABSENT), js_get(block, "type"))
            if partial.block is ABSENT:
                partial.block = block
        elif ctype == "usage":
            self.usage = get("usage", ABSENT)
        elif ctype == "finish":
            self._finish = get("reason", ABSENT)
            self._replay = get("replayState", ABSENT)
        else:
            raise AssemblyError(f"unreachable variant in BlockAssembler.push: {stringify(chunk)}")

    def text_delta(self, index: Any, block_type: str, text: str) -> None:
        """A text or reasoning delta (ignored once the block at `index` has ended)."""
        partial = self._ensure(index, block_type)
        if partial.block is ABSENT:
            partial.text += text

    def tool_delta(self, index: Any, tool_id: Any, name: Any, arguments: str) -> None:
        """A tool-call delta: its id, its name when truthy, and its arguments text."""
        partial = self._ensure(index, "tool-call")
        if partial.block is ABSENT:
            partial.tool_id = tool_id
            if _js_truthy(name):
                partial.tool_name = name
            partial.arguments += arguments

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
        kept = [js_get(b, "type") != "tool-call" for b in every] if truncated else None
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
                btype = js_get(partial.block, "type")
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
    return _finish_assembly(_fed(stream))


def stream_blocks(stream: Iterable[Any]) -> list:
    """`assemble_stream(stream).blocks` alone (what a price needs): raises `AssemblyError` with
    the text `Assembly.error` would hold."""
    return _fed(stream).blocks()


def _fed(stream: Iterable[Any]) -> BlockAssembler:
    """An assembler fed the stored records of `stream` (`assemble_stream`)."""
    assembler = BlockAssembler()
    text_delta, tool_delta = assembler.text_delta, assembler.tool_delta
    push = assembler.push
    for record in stream:
        rtype = record.get("type", ABSENT) if type(record) is dict else js_get(record, "type")
        if rtype == "chunk":
            push(record.get("chunk", ABSENT))
        elif rtype == "text-chunks" or rtype == "reasoning-chunks":
            text_delta(record.get("index", ABSENT), "text" if rtype == "text-chunks" else "reasoning",
                       _joined(record.get("texts"), rtype))
        elif rtype == "tool-call-chunks":
            tool_delta(record.get("index", ABSENT), record.get("id", ABSENT),
                       record.get("name", ABSENT), _joined(record.get("args"), rtype))
        else:
            raise AssemblyError(f"unreachable variant in assembleAssistantStream: {stringify(record)}")
    return assembler


def _joined(members: Any, rtype: str) -> str:
    """A run's members joined as JavaScript's ``members.join("")`` joins them (null as empty, any
    other value as `String(value)`); a missing or empty run is empty; anything else that is not
    an array is refused (where the reference's ``join`` would throw)."""
    if type(members) is list:
        try:
            return "".join(members)
        except TypeError:
            return "".join("" if m is None else js_str(m) for m in members)
    if not members:
        return ""
    raise AssemblyError(f"stored {rtype} record: its members are a {js_typeof(members)}, not an array")


__all__ = ["Assembly", "AssemblyError", "BlockAssembler", "assemble", "assemble_stream", "js_get",
           "js_is_blank", "stream_blocks"]
