"""The texts a real tokenizer encodes for a message or an envelope (see
`workbench.core.tokens.meters` for the counting rules). Layer: core.

`node_pieces` reads a log once and keeps every node's pieces in order: the pieces depend on the
format version only, never on the meter, so one read serves every real meter of a log."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from workbench.core.header import canonical_header
from workbench.core.tokens.heuristic import content_pieces, derive_message
from workbench.io.generations import system_node
from workbench.io.jsjson import ABSENT, stringify, stringify_recalled


def _message_pieces(message: Any, version: int, out: list[str]) -> None:
    if type(message) is not dict:
        return
    if system_node(version) and message.get("role") == "system":
        content = message.get("content")
        for block in content if type(content) is list else ():
            if type(block) is dict and block.get("type") == "text" and type(block.get("text")) is str:
                out.append(block["text"])
            else:
                out.append(stringify(block))
        return
    content_pieces(message.get("content"), version, out)


def message_pieces(message: Any, *, version: int) -> list[str]:
    """The texts of one message a real tokenizer encodes (see the module docstring)."""
    out: list[str] = []
    _message_pieces(message, version, out)
    return out


def envelope_pieces(header: Any, *, version: int) -> list[str]:
    """Texts of a canonical envelope: v0 system prompt, then the tool schemas as JSON."""
    canonical = canonical_header(header, version=version)
    if canonical is None:
        return []
    out = []
    if not system_node(version) and type(canonical.get("system")) is str:
        out.append(canonical["system"])
    tools = canonical.get("tools", ABSENT)
    if tools is not ABSENT:
        out.append(stringify_recalled(tools))
    return out


@dataclass(frozen=True, slots=True)
class NodePieces:
    """The message pieces of a log's node events: `nodes` are the positions deriving a message,
    `texts` their pieces in order, `ends[i]` = len(texts) after node i; `n` events in all."""
    n: int
    nodes: list[int]
    texts: list[str]
    ends: list[int]


def node_pieces(items: Iterable[tuple[int, Any]], n: int, version: int) -> NodePieces:
    """The pieces every real meter encodes, from one read of `(position, event)` items of a log
    of `n` events (`workbench.io.payloads.read_events`)."""
    texts: list[str] = []
    nodes: list[int] = []
    ends: list[int] = []
    for position, event in items:
        message = derive_message(event, version=version)
        if message is None:
            continue
        nodes.append(position)
        _message_pieces(message, version, texts)
        ends.append(len(texts))
    return NodePieces(n, nodes, texts, ends)
