"""The DSH token-meter heuristic, reproduced exactly. Layer: core.

Constants (v0 spec §6.1, v4 §6.1): 4 UTF-16 code units per token (rounded up), 4 tokens of block
overhead, 4 of role overhead. Content pricing (§6.2, reference `estimateContent` /
`estimateStructuralBlock`):

* `text`, `reasoning`: `ceil(len(text)/4) + 4`;
* `tool-call`: `ceil(len(name)/4) + ceil(len(arguments)/4) + 4` (two ceilings);
* v0 `tool-result`: `estimateContent(inner) + 4` (recursive; v4 has no such arm);
* v4 `image`: `4 + ceil(len(JSON.stringify(block without "offloaded"))/4)`;
* anything else: `4 + ceil(len(JSON.stringify(block))/4)`.

Messages (§6.3): `estimateContent(content) + 4`; in v4 a `system`-role message prices as
`estimateSystemMessage` (0 for empty content, else `ceil(C/4) + 4` with C the summed text lengths
and full JSON lengths of other blocks, no per-block overhead). Envelope: v0 `system + tools`, v4
tools only (`ceil(len(JSON.stringify(tools))/4) + 4`, 0 without tools).

Node prices (§6.4) are pure functions of one event: 0 when its projection is none (v4 §4.8: empty
system/developer/assistant content; v0 §4.8: empty assistant content; non-message events).

Hot path: `node_price` runs over every event of 1.3M-event logs, so text lengths take an ASCII fast
path and JSON is only built for structural blocks. Deviation from the reference, for robustness on
damaged logs only: a non-string `text`/`name`/`arguments` prices its block structurally and a
non-array `content` prices as empty (the reference would produce NaN or throw).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.io.generations import nested_streams, system_node, tool_role
from workbench.io.jsjson import ABSENT, js_len, stringify, stringify_recalled

CHARS_PER_TOKEN = 4
BLOCK_OVERHEAD = 4
ROLE_OVERHEAD = 4


def _ulen(text: str) -> int:
    return len(text) if text.isascii() else js_len(text)


def _ceil4(n: int) -> int:
    return (n + 3) // 4


def structural_json(block: Any, *, version: int) -> str:
    """The JSON text the structural arm measures (v4 images without their `offloaded` key)."""
    if nested_streams(version) and type(block) is dict and block.get("type") == "image" and "offloaded" in block:
        block = {k: v for k, v in block.items() if k != "offloaded"}
    return stringify(block)


def content_pieces(blocks: Any, version: int, out: list[str]) -> int:
    """Append to `out` the texts a content array is measured by, in order, and return its
    number of blocks (nested v0 `tool-result` blocks included). The one walk of §6.2 shared by
    the heuristic and the real tokenizers (`pieces`): a `text`/`reasoning` block is its text, a
    `tool-call` its name then its arguments, a v0 `tool-result` the pieces of its content, and
    any other block (or one whose text, name or arguments is not a string) its
    `structural_json`."""
    if type(blocks) is not list:
        return 0
    count = 0
    append = out.append
    for block in blocks:
        count += 1
        if type(block) is dict:
            btype = block.get("type")
            if btype == "text" or btype == "reasoning":
                text = block.get("text")
                if type(text) is str:
                    append(text)
                    continue
            elif btype == "tool-call":
                name, arguments = block.get("name"), block.get("arguments")
                if type(name) is str and type(arguments) is str:
                    append(name)
                    append(arguments)
                    continue
            elif btype == "tool-result" and not tool_role(version):
                count += content_pieces(block.get("content"), version, out)
                continue
        append(structural_json(block, version=version))
    return count


def estimate_content(blocks: Any, *, version: int) -> int:
    """Heuristic tokens of a content array: `ceil(len/4)` of each piece (`content_pieces`)
    plus `BLOCK_OVERHEAD` per block."""
    pieces: list[str] = []
    total = BLOCK_OVERHEAD * content_pieces(blocks, version, pieces)
    for piece in pieces:
        total += ((len(piece) if piece.isascii() else js_len(piece)) + 3) // 4
    return total


def estimate_system_message(message: Any) -> int:
    """v4 `estimateSystemMessage`: 0 for empty content, else ceil(characters/4) + 4."""
    content = message.get("content") if type(message) is dict else None
    if type(content) is not list or not content:
        return 0
    characters = 0
    for block in content:
        if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
            characters += _ulen(block["text"])
        else:
            characters += js_len(stringify(block))
    return _ceil4(characters) + ROLE_OVERHEAD


def estimate_message(message: Any, *, version: int) -> int:
    """`estimateMessage`: content + role overhead; v4 system-role messages use the system rule."""
    if type(message) is not dict:
        return ROLE_OVERHEAD
    if system_node(version) and message.get("role") == "system":
        return estimate_system_message(message)
    return estimate_content(message.get("content"), version=version) + ROLE_OVERHEAD


def estimate_system_text(system: Any) -> int:
    """v0 `estimateSystemTokens`: `ceil(len(system)/4) + 4`, 0 without a system string."""
    if type(system) is not str:
        return 0
    return _ceil4(_ulen(system)) + ROLE_OVERHEAD


def estimate_tools(tools: Any) -> int:
    """`estimateToolsTokens`: `ceil(len(JSON.stringify(tools))/4) + 4`, 0 when absent or empty."""
    if tools is ABSENT or tools is None:
        return 0
    if (type(tools) is list and not tools) or (type(tools) is str and not tools):
        return 0
    return _ceil4(js_len(stringify_recalled(tools))) + BLOCK_OVERHEAD


def estimate_header(header: Any, *, version: int) -> int:
    """Envelope price of a header as given (canonicalize first for the meter's view):
    v0 system + tools, v4 tools only; 0 for no header."""
    if type(header) is not dict:
        return 0
    tools = estimate_tools(header.get("tools", ABSENT))
    if system_node(version):
        return tools
    return estimate_system_text(header.get("system", ABSENT)) + tools


_V0_MESSAGE_TYPES = frozenset({"assistant/message"})
_V4_MESSAGE_TYPES = frozenset({"assistant/message", "system/message", "developer/message"})


def message_types(version: int) -> frozenset[str]:
    """Event types that can project to a model message (every other event prices 0)."""
    return (_V4_MESSAGE_TYPES if nested_streams(version) else _V0_MESSAGE_TYPES) | {"user/message", "tool/result"}


def derive_message(event: Any, *, version: int) -> dict | None:
    """The model message an event projects to (reference `deriveEventMessage` without
    `image/offload` projections; v0 §4.8, v4 §4.8), or None."""
    if type(event) is not dict:
        return None
    data = event.get("data")
    if type(data) is not dict:
        return None
    etype = event.get("type")
    return slot_message(etype, data if etype == "user/message" else data.get("message"),
                        version=version)


def slot_message(etype: Any, message: Any, *, version: int) -> dict | None:
    """`derive_message` of an event of type `etype` whose message slot (its `data` for a
    `user/message`, else `data.message`; None without a `data` object) holds `message`."""
    if type(message) is not dict:
        return None
    if etype == "user/message" or etype == "tool/result":
        return message
    if etype in (_V4_MESSAGE_TYPES if nested_streams(version) else _V0_MESSAGE_TYPES):
        content = message.get("content")
        return None if type(content) is list and not content else message
    return None


def node_price(event: Any, *, version: int) -> int:
    """Heuristic price of the node an event would place on the surface (§6.4); 0 when its
    projection is none. v4 prices each event's own message (no `image/offload` projection)."""
    message = derive_message(event, version=version)
    if message is None:
        return 0
    return estimate_message(message, version=version)


def slot_price(etype: Any, message: Any, *, version: int) -> int:
    """`node_price` of an event of type `etype` whose message slot holds `message`
    (`slot_message`)."""
    derived = slot_message(etype, message, version=version)
    return 0 if derived is None else estimate_message(derived, version=version)


def price_events(events: Sequence[Any], *, version: int) -> list[int]:
    """`node_price` of every event."""
    return [node_price(event, version=version) for event in events]


__all__ = [
    "BLOCK_OVERHEAD", "CHARS_PER_TOKEN", "ROLE_OVERHEAD", "content_pieces", "derive_message", "estimate_content",
    "estimate_header", "estimate_message", "estimate_system_message", "estimate_system_text",
    "estimate_tools", "message_types", "node_price", "price_events", "slot_message", "slot_price",
    "structural_json",
]
