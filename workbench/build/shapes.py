"""Payload shapes a DSH writer produces, per format version. Layer: build.

Pure constructors (no state): messages of each role (v0 spec §3.5–3.8, v4 spec §3.5–3.8), the
timed stream chunks of one model-call attempt (v0 §3.6), checkpoint framing (v0 §5.5, v4 §5.5)
and tool-result pruning (v0 §5.9, v4 §5.9). Key orders follow what the real writer emits (observed
in the corpus), so `JSON.stringify` lengths of generated logs match real ones.
"""
from __future__ import annotations

import json
import math
import uuid
from collections.abc import Sequence
from typing import Any

CHECKPOINT_PREAMBLE = (
    "This is an automatically generated checkpoint condensing an earlier span of the conversation "
    "to free up context. Treat the captured context as established background and build on it "
    "without restating it. Continue the task directly from the messages that follow, without "
    "acknowledging this checkpoint.\n\n<compacted-summary>")
"""First checkpoint block (321 UTF-16 units, both formats)."""
CHECKPOINT_CLOSE = "</compacted-summary>"
PRUNE_MARKER = "\n\n[... tool result middle pruned ...]\n\n"
"""Inserted by the tool-result pruner (39 code points)."""


class Ids:
    """Deterministic UUID-shaped ids: the same script always writes the same bytes."""

    def __init__(self, seed: int = 0) -> None:
        self._seed = seed & 0xFFFFFFFF
        self._n = 0

    def uuid(self) -> str:
        self._n += 1
        return str(uuid.UUID(int=(self._seed << 96) | (0x5EED << 64) | self._n, version=4))


def text_content(value: str | Sequence[dict]) -> list[dict]:
    """A content array from a string (one text block) or blocks given as they are."""
    if isinstance(value, str):
        return [{"type": "text", "text": value}]
    return [dict(block) for block in value]


def arguments_text(args: Any) -> str:
    """Tool-call arguments as the raw JSON string a model emits (dicts like Python's json.dumps)."""
    return args if isinstance(args, str) else json.dumps(args, ensure_ascii=False)


def user_message(content: list[dict], source: dict, message_id: str) -> dict:
    return {"content": content, "source": source, "role": "user", "id": message_id}


def system_message(text: str | Sequence[dict], message_id: str) -> dict:
    content = [] if text == "" else text_content(text)
    return {"role": "system", "content": content, "source": {"kind": "system-prompt"},
            "id": message_id}


def assistant_message(content: list[dict], source: dict, message_id: str) -> dict:
    return {"role": "assistant", "content": content, "source": source, "id": message_id}


def tool_message(call_id: str, content: list[dict], is_error: bool, message_id: str, *,
                 version: int) -> dict:
    """A tool result message: v4 tool role; v0 a user message wrapping one `tool-result` block."""
    source = {"kind": "tool", "callId": call_id}
    if version >= 4:
        return {"role": "tool", "source": source, "toolCallId": call_id, "content": content,
                "isError": is_error, "id": message_id}
    block = {"type": "tool-result", "toolCallId": call_id, "content": content, "isError": is_error}
    return {"source": source, "content": [block], "role": "user", "id": message_id}


def result_content(message: dict, *, version: int) -> list[dict]:
    """The content a pruner measures: v4 `message.content`, v0 the wrapped block's content."""
    return message["content"] if version >= 4 else message["content"][0]["content"]


def with_result_content(message: dict, content: list[dict], *, version: int) -> dict:
    """A copy of a tool result message with other result content (everything else identical)."""
    if version >= 4:
        return {**message, "content": content}
    block = {**message["content"][0], "content": content}
    return {**message, "content": [block]}


def assistant_content(*, reasoning: str | None, text: str | None,
                      calls: Sequence[tuple[str, str, str]]) -> list[dict]:
    """Content blocks in stream order: reasoning, text, then one tool-call block per call."""
    blocks: list[dict] = []
    if reasoning:
        blocks.append({"type": "reasoning", "text": reasoning})
    if text:
        blocks.append({"type": "text", "text": text})
    for call_id, name, arguments in calls:
        blocks.append({"type": "tool-call", "id": call_id, "name": name, "arguments": arguments})
    return blocks


def _pieces(text: str, size: int) -> list[str]:
    if not text:
        return [""]
    return [text[i:i + size] for i in range(0, len(text), size)]


def stream_chunks(blocks: Sequence[dict], *, usage: dict | None, finish: dict | None,
                  time0: int, piece_chars: int = 24) -> list[tuple[int, dict]]:
    """The timed chunks of one attempt that streamed `blocks` (v0 §3.6): per block a
    `block-start`, its deltas, a `block-end` carrying the block; then `usage` and `finish`.
    A tool call's first delta carries `name` (with an empty argument string, as DeepSeek streams
    it), the later ones only argument fragments. Times advance 1 ms per piece."""
    out: list[tuple[int, dict]] = []
    t = time0
    for index, block in enumerate(blocks):
        btype = block["type"]
        out.append((t, {"type": "block-start", "index": index, "blockType": btype}))
        if btype in ("text", "reasoning"):
            delta = "text-delta" if btype == "text" else "reasoning-delta"
            for piece in _pieces(block["text"], piece_chars):
                t += 1
                out.append((t, {"type": delta, "index": index, "text": piece}))
        elif btype == "tool-call":
            out.append((t, {"type": "tool-call-delta", "index": index, "id": block["id"],
                            "name": block["name"], "argumentsDelta": ""}))
            for piece in _pieces(block["arguments"], piece_chars):
                t += 1
                out.append((t, {"type": "tool-call-delta", "index": index, "id": block["id"],
                                "argumentsDelta": piece}))
        out.append((t, {"type": "block-end", "index": index, "block": block}))
    if usage is not None:
        out.append((t, {"type": "usage", "usage": usage}))
    if finish is not None:
        out.append((t, {"type": "finish", "reason": finish}))
    return out


def checkpoint_content(summary: Sequence[str]) -> list[dict]:
    """Checkpoint framing: preamble + opening tag, the summary text blocks, the closing tag."""
    return ([{"type": "text", "text": CHECKPOINT_PREAMBLE}]
            + [{"type": "text", "text": s} for s in summary]
            + [{"type": "text", "text": CHECKPOINT_CLOSE}])


def prune_content(content: list[dict], *, head: int, tail: int) -> list[dict]:
    """The pruner's rewrite (v0 §5.9): keep the first `head` and last `tail` code points of the
    concatenated text blocks, insert `PRUNE_MARKER` in the first text block that intersects the
    removed middle, drop text blocks that became empty, keep other blocks in place."""
    total = sum(len(b["text"]) for b in content if b.get("type") == "text")
    if total <= head + tail:
        return [dict(b) for b in content]
    cut_start, cut_end = head, total - tail
    out: list[dict] = []
    offset = 0
    marked = False
    for block in content:
        if block.get("type") != "text":
            out.append(dict(block))
            continue
        text = block["text"]
        lo, hi = offset, offset + len(text)
        offset = hi
        keep_head = text[:max(0, min(hi, cut_start) - lo)]
        keep_tail = text[len(text) - max(0, hi - max(lo, cut_end)):] if hi > cut_end else ""
        intersects = lo < cut_end and hi > cut_start
        new = keep_head + (PRUNE_MARKER if intersects and not marked else "") + keep_tail
        marked = marked or intersects
        if new:
            out.append({**block, "text": new})
    return out


def approx_tokens(chars: int) -> int:
    return math.ceil(chars / 4)
