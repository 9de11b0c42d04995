"""What the anchor extractor scans: the text pieces of a message and the vocabulary that is never
an anchor. Layer: core (pure).

`message_texts` splits a model message into `(how, text)` pieces: ``text`` (prose, reasoning, tool
results), ``command`` (the value of a shell-like tool argument, `COMMAND_KEYS`) and ``user`` (the
user's own words, also scanned for constraints). Tool-call arguments are parsed from their JSON
(`tool_arguments`) and only their values are scanned. Left out: the harness's own snapshots
(`BOILERPLATE_SOURCES`) and a checkpoint's framing (`strip_checkpoint`). `SCHEMA_WORDS` and the
log's advertised tool vocabulary (`schema_words`) are never anchors. The rules that find anchors
in these pieces live in `workbench.core.compaction.anchors`.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from workbench.io import jsjson

if TYPE_CHECKING:
    from workbench.core.compaction.textscan import Pieces

COMMAND_KEYS = frozenset({"command", "cmd", "script", "shell"})
"""Tool-call argument names whose string value is a command."""

SCHEMA_WORDS = frozenset({
    "file_path", "filePath", "sandbox_permissions", "old_string", "new_string", "replace_all",
    "workdir", "timeout_ms", "run_in_background", "todo_write", "todos", "activeForm",
    "output_mode", "head_limit", "multiline", "callId", "toolCallId", "rootCallId",
    "compactionId", "sessionId", "surfaceOp", "sourceEventSeqs", "shadowedSeqs",
    "shadowedRange", "shadowedTokenCount", "inputTokens", "outputTokens", "totalTokens",
    "cacheReadTokens", "cacheWriteTokens", "reasoningTokens", "maxTokens", "reasoningEffort"})
"""DSH's own argument and field names: vocabulary, not facts of the session."""

BOILERPLATE_SOURCES = frozenset({"runtime-context", "time-context"})
"""User-message source kinds the harness writes itself (snapshots, not the user's words)."""

def strip_checkpoint(text: str) -> str:
    """A checkpoint's or summary's text without DSH's framing (preamble and summary tags)."""
    from workbench.core.compaction.brackets import (
        CHECKPOINT_PREAMBLE,
        SUMMARY_CLOSE_TAG,
        SUMMARY_OPEN_TAG,
    )
    for fixed in (CHECKPOINT_PREAMBLE, SUMMARY_OPEN_TAG, SUMMARY_CLOSE_TAG):
        text = text.replace(fixed, "")
    return text


@lru_cache(maxsize=4096)
def _parsed(raw: str) -> Any:
    try:
        return jsjson.loads(raw)  # JSON.parse, as DSH reads them; depth bounded (io.jsjson)
    except ValueError:
        return raw


def tool_arguments(raw: Any) -> Any:
    """A tool call's arguments parsed from their JSON text (the text itself when it is not
    JSON; memoised: the same arguments are read by several measures)."""
    return _parsed(raw) if isinstance(raw, str) else raw


def argument_values(arguments: Any, key: str | None = None
                    ) -> Iterable[tuple[str | None, str]]:
    """`(argument name, value)` of every string in parsed tool-call arguments (a list's items
    keep the name of the list)."""
    if isinstance(arguments, str):
        yield key, arguments
    elif isinstance(arguments, dict):
        for k, v in arguments.items():
            yield from argument_values(v, str(k))
    elif isinstance(arguments, list):
        for v in arguments:
            yield from argument_values(v, key)


def message_texts(message: Any) -> list[tuple[str, str]]:
    """The scannable pieces of a model message as `(how, text)`: ``text`` (prose, reasoning,
    tool results), ``command`` (a command argument), ``user`` (the user's own words: also
    scanned for constraints). Boilerplate is left out (module doc)."""
    return message_views(message, parts=False)[1]


def message_views(message: Any, *, parts: bool = True, pieces: bool = True,
                  blocks: list[dict] | None = None) -> tuple[list[str], list[tuple[str, str]]]:
    """The two views of a model message's text, from one walk of its content: the lost-fact
    probe's parts (`probe.message_parts`: every text and reasoning block, tool-call name and raw
    arguments, tool-result content; the boilerplate too) and the anchors' pieces
    (`message_texts`). A view not asked for is empty. `blocks`, when given, receives the
    content's own (not nested) tool-call blocks with a string ``name`` and tool-result blocks
    with a string ``toolCallId``, in order (what `quality.facts` reads of a node's calls)."""
    out_parts: list[str] = []
    out_pieces: list[tuple[str, str]] = []
    if isinstance(message, dict):
        source = message.get("source")
        kind = source.get("kind") if isinstance(source, dict) else None
        keep = pieces and not (type(kind) is str and kind in BOILERPLATE_SOURCES)
        prose = "user" if message.get("role") == "user" and kind in (None, "user") else "text"
        _walk(message.get("content"), prose, out_parts if parts else None,
              out_pieces if keep else None, blocks)
        if out_pieces and (kind in ("compact-checkpoint", "plugin") or (
                isinstance(source, dict) and source.get("plugin") == "compact")):
            out_pieces = [(how, strip_checkpoint(text)) for how, text in out_pieces]
    return out_parts, out_pieces


def _walk(content: Any, prose: str, parts: list[str] | None, pieces: Pieces | None,
          blocks: list[dict] | None = None) -> None:
    """The probe's parts, the anchors' pieces and the tool blocks (`message_views`) of a
    message's content (None: not wanted)."""
    if isinstance(content, str):
        if parts is not None:
            parts.append(content)
        if pieces is not None:
            pieces.append((prose, content))
        return
    if not isinstance(content, list):
        return
    for block in content:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "text" or kind == "reasoning":
            text = block.get("text")
            if isinstance(text, str):
                if parts is not None:
                    parts.append(text)
                if pieces is not None:
                    pieces.append((prose if kind == "text" else "text", text))
        elif kind == "tool-call":
            if blocks is not None and isinstance(block.get("name"), str):
                blocks.append(block)
            raw = block.get("arguments")
            if parts is not None:
                name = block.get("name")
                if isinstance(name, str):
                    parts.append(name)
                if isinstance(raw, str):
                    parts.append(raw)
            if pieces is not None:
                args = tool_arguments(raw)
                start = len(pieces)
                if type(args) is dict:   # the common case: flat string arguments
                    for key, value in args.items():
                        if type(value) is not str:
                            del pieces[start:]
                            break
                        pieces.append(("command" if key in COMMAND_KEYS else "text", value))
                    else:
                        continue
                pieces += [("command" if key in COMMAND_KEYS else "text", value)
                           for key, value in argument_values(args)]
        elif kind == "tool-result":
            if blocks is not None and isinstance(block.get("toolCallId"), str):
                blocks.append(block)
            _walk(block.get("content"), "text", parts, pieces)


def event_texts(event: Mapping[str, Any]) -> list[tuple[str, str]]:
    """`message_texts` of the message an event carries (v0 and v4 shapes: a user message is
    its `data`, the others carry `data.message`)."""
    data = event.get("data")
    if not isinstance(data, dict):
        return []
    message = data if event.get("type") == "user/message" else data.get("message")
    return message_texts(message)


def schema_words(tools: Any) -> frozenset[str]:
    """Tool names and parameter names (recursively) of advertised tool schemas."""
    words: set[str] = set()

    def walk(schema: Any) -> None:
        if isinstance(schema, Mapping):
            props = schema.get("properties")
            if isinstance(props, Mapping):
                for name, sub in props.items():
                    words.add(str(name))
                    walk(sub)
            for key in ("items", "additionalProperties"):
                walk(schema.get(key))
            for key in ("anyOf", "oneOf", "allOf"):
                subs = schema.get(key)
                if isinstance(subs, list):   # a log's header may hold any value there
                    for sub in subs:
                        walk(sub)

    for tool in tools if isinstance(tools, Sequence) and not isinstance(tools, str) else ():
        if isinstance(tool, Mapping):
            if isinstance(tool.get("name"), str):
                words.add(tool["name"])
            walk(tool.get("parameters") or tool.get("input_schema") or tool.get("inputSchema"))
    return frozenset(words)


