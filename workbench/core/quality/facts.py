"""What the compaction-quality measures read from each surface node, in one in-order pass.
Layer: core (pure).

Per node event: its anchors (`workbench.core.compaction.anchors`), the tool calls it makes and
the call its tool result answers. Every measure (citation audit, lifelines, re-fetches, ledger)
reads only these facts, the timeline and the compaction records, so the log is read once, in
seq order (`workbench.io.payloads.read_events`), whatever the number
of compactions. Anchors are read by `workbench.core.compaction.textscan.TextScan` (each distinct
text and line once; in the log's one pass the same scan reads the lost-fact probe's facts).
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.core.compaction.anchors import schema_words, tool_arguments
from workbench.core.compaction.textscan import TextScan
from workbench.io.jsjson import Deep
from workbench.io.payloads import read_events

REFETCH_KEYS = ("file_path", "filePath", "path", "command", "cmd", "query", "q", "pattern",
                "url", "glob")
"""Tool-call arguments that name what a call fetches (the first present one is its key)."""


@dataclass(frozen=True, slots=True)
class Call:
    """One tool call of a message: its id, tool name and what it fetches (`REFETCH_KEYS`; the
    canonical JSON of its arguments when none is present)."""

    call_id: str | None
    name: str
    target: str


@dataclass(slots=True)
class NodeFacts:
    """Per-seq facts of the nodes read: anchors `(kind, text)` in order of appearance, tool
    calls, and the call id a tool result answers."""

    anchors: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    calls: dict[int, tuple[Call, ...]] = field(default_factory=dict)
    results: dict[int, str] = field(default_factory=dict)
    result_of: dict[str, int] = field(default_factory=dict)


def _message(event: Mapping[str, Any]) -> Any:
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    return data if event.get("type") == "user/message" else data.get("message")


def _deep_text(value: Any) -> str:
    """`json.dumps`'s `default` for a log value: a `Deep` one (nested past
    `deepjson.MATERIALISED_DEPTH`) by its JSON text, anything else by its repr."""
    return value.text if isinstance(value, Deep) else repr(value)


def _target(arguments: Any) -> str:
    args = tool_arguments(arguments)
    if isinstance(args, dict):
        for key in REFETCH_KEYS:
            value = args.get(key)
            if isinstance(value, str) and value:
                return value
        return json.dumps(args, sort_keys=True, ensure_ascii=False, default=_deep_text)
    return str(arguments)


def _calls_and_result(message: Any, blocks: list[dict]) -> tuple[tuple[Call, ...], str | None]:
    """The calls a message makes and the call it answers, from its tool `blocks`
    (`TextScan.tool_blocks`): its own ``toolCallId``, else its first tool-result's."""
    if not isinstance(message, dict):
        return (), None
    answered = message.get("toolCallId") if isinstance(message.get("toolCallId"), str) else None
    calls = []
    for block in blocks:
        if block.get("type") == "tool-call":
            cid = block.get("id") if isinstance(block.get("id"), str) else None
            calls.append(Call(cid, block["name"], _target(block.get("arguments"))))
        else:
            answered = answered or block["toolCallId"]
    return tuple(calls), answered


class FactReader:
    """Reads `NodeFacts` for seqs of one log (module doc); `stop` are schema words; `scan`
    reads the anchors (a scan of its own when None)."""

    def __init__(self, events: Sequence[Mapping[str, Any]], stop: frozenset[str],
                 scan: TextScan | None = None) -> None:
        self.events = events
        self.scan = TextScan(probe=False) if scan is None else scan
        self.scan.stop = stop
        self.facts = NodeFacts()

    @property
    def stop(self) -> frozenset[str]:
        """Schema words (never anchors); setting others forgets the anchors remembered."""
        return self.scan.stop

    @stop.setter
    def stop(self, words: frozenset[str]) -> None:
        self.scan.stop = words

    def keys(self, pieces: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
        """Distinct anchors of `(how, text)` pieces, in order of first appearance."""
        return self.scan.anchor_keys(pieces)

    def read(self, seqs: Iterable[int]) -> NodeFacts:
        """Facts of `seqs` not read yet (one in-order pass over them)."""
        facts = self.facts
        todo = sorted({s for s in seqs if s not in facts.anchors and 0 <= s < len(self.events)})
        for seq, event in read_events(self.events, todo):
            self.feed(seq, event)
        self.scan.flush()
        return facts

    def feed(self, seq: int, event: Any) -> None:
        """Read the facts of the event at `seq` (each seq once; `read` and `core.log_pass.LogPass`)."""
        facts = self.facts
        if not isinstance(event, dict):
            facts.anchors[seq] = ()
            return
        message = _message(event)
        scan = self.scan
        scan.anchors_later(seq, message, self._put_anchors)
        calls, answered = _calls_and_result(message, scan.tool_blocks(message))
        if calls:
            facts.calls[seq] = calls
        if answered is not None:
            facts.results[seq] = answered
            facts.result_of.setdefault(answered, seq)

    def _put_anchors(self, seq: int, anchors: tuple[tuple[str, str], ...]) -> None:
        self.facts.anchors[seq] = anchors

    def forget(self, seqs: Iterable[int]) -> None:
        """Drop the anchors of `seqs` (read with an older `stop`) so `read` reads them again
        (their tool calls and results do not depend on `stop`)."""
        for seq in seqs:
            self.facts.anchors.pop(seq, None)


class SchemaWords:
    """Schema words of every tool a log advertises (`request/header` ``data.header.tools``),
    fed its header events in any order. Tools equal to the last ones fed (a log repeats its
    tools in every header) have the words already read: `schema_words` reads only names and
    the shape, which equal JSON values share."""

    def __init__(self) -> None:
        self._words: frozenset[str] = frozenset()
        self._seen: set[str] = set()
        self._last: Any = None

    def feed(self, event: Any) -> None:
        data = event.get("data") if isinstance(event, Mapping) else None
        header = data.get("header") if isinstance(data, Mapping) else None
        tools = header.get("tools") if isinstance(header, Mapping) else None
        if tools is None or tools == self._last:
            return
        fingerprint = json.dumps(tools, sort_keys=True, default=_deep_text)
        if fingerprint not in self._seen:
            self._words |= schema_words(tools)
            self._seen.add(fingerprint)
        self._last = tools

    @property
    def words(self) -> frozenset[str]:
        return self._words


def log_schema_words(events: Sequence[Mapping[str, Any]], header_seqs: Iterable[int]
                     ) -> frozenset[str]:
    """`SchemaWords` of the header events at `header_seqs`."""
    words = SchemaWords()
    for _, event in read_events(events, header_seqs):
        words.feed(event)
    return words.words
