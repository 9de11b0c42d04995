"""Provider-reported token usage, one sample per model call. Layer: core.

What the provider said it counted, read from the log (v0 spec §3.6 and §6.7, v4 §3.6 and §6.7;
reference `tokenUsageProjectionDefinition`):

* v4: one sample per `assistant/message` (its `data.usage`, else the last `usage` chunk of its
  stream) and per `assistant/attempt` (the last `usage` chunk of its stream);
* v0: every top-level `assistant/chunk` whose chunk is a `usage` chunk, and `assistant/message.usage`.

A sample for the same `(turn, step)` as the *latest* sample replaces it (a failed attempt's report
is overwritten by the retry's; the message repeating its own usage chunk changes nothing), except in
v4 when an `llm/retry-started` for that turn/step came in between: then the retried attempt adds.

Buckets are disjoint (§3.6): `input` is uncached input only, `cache_read`/`cache_write` are the
cached parts, `reasoning` is already inside `output`. A bucket that is absent counts 0; a value that
is not a non-negative number also counts 0 and marks the sample `malformed`.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.core.tokens.usage_table import UsageSample, UsageTable
from workbench.io.generations import nested_streams
from workbench.io.jsjson import ABSENT, is_number
from workbench.io.payloads import read_events


@dataclass(frozen=True)
class UsageTotals:
    input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    output_tokens: int
    reasoning_tokens: int
    calls: int

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens + self.output_tokens


def _last_stream_usage(stream: Any) -> Any:
    """Reference `lastAssistantStreamChunk(stream, "usage")?.usage`, scanning backwards."""
    if type(stream) is not list:
        return ABSENT
    for record in reversed(stream):
        if type(record) is dict and record.get("type") == "chunk":
            chunk = record.get("chunk")
            if type(chunk) is dict and chunk.get("type") == "usage":
                return chunk.get("usage", ABSENT)
    return ABSENT


def _whole(value: int | float) -> int | float:
    """A logged count as an int; Infinity (``1e400`` parses to it, as in JavaScript) stays a float."""
    return int(value) if math.isfinite(value) else value


def _count(value: Any) -> tuple[int | float, bool]:
    if value is ABSENT or value is None:
        return 0, True
    if is_number(value) and value >= 0 and value == value:
        return _whole(value), True
    return 0, False


def make_sample(usage: Any, *, seq: Any, turn: Any, step: Any, source: str) -> UsageSample:
    """A `UsageSample` from one logged `TokenUsage` object."""
    fields = usage if type(usage) is dict else {}
    values, ok = {}, type(usage) is dict
    for key in ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens"):
        values[key], good = _count(fields.get(key, ABSENT))
        ok = ok and good
    reasoning = fields.get("reasoningTokens", ABSENT)
    total = fields.get("totalTokens", ABSENT)
    return UsageSample(
        seq, turn, step, source, values["inputTokens"], values["cacheReadTokens"],
        values["cacheWriteTokens"], values["outputTokens"],
        _whole(reasoning) if is_number(reasoning) and reasoning == reasoning else None,
        _whole(total) if is_number(total) and total == total else None, not ok)


def _sample_of(event: dict, version: int) -> tuple[Any, str] | None:
    etype = event.get("type")
    data = event.get("data")
    if type(data) is not dict:
        return None
    if etype == "assistant/message":
        usage = data.get("usage", ABSENT)
        if usage is ABSENT and nested_streams(version):
            usage = _last_stream_usage(data.get("stream"))
        return (usage, "message") if usage is not ABSENT else None
    if etype == "assistant/attempt" and nested_streams(version):
        usage = _last_stream_usage(data.get("stream"))
        return (usage, "attempt") if usage is not ABSENT else None
    if etype == "assistant/chunk" and not nested_streams(version):
        chunk = data.get("chunk")
        if type(chunk) is dict and chunk.get("type") == "usage":
            return chunk.get("usage", ABSENT), "chunk"
    return None


def _same(a: Any, b: Any) -> bool:
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b


USAGE_TYPES = frozenset({"assistant/message", "assistant/attempt", "assistant/chunk", "llm/retry-started"})
"""The only event types `usage_samples` reads."""


class UsageCollector:
    """Usage samples, one event at a time: `feed` each event of a type in `USAGE_TYPES` in log
    order (others change nothing), then `samples()`. `usage_samples` is this over a sequence;
    `workbench.load` runs it while the loader scans the log."""

    def __init__(self, *, version: int) -> None:
        self.version = version
        self._table = UsageTable()
        self._last: int | None = None

    def feed(self, event: Any) -> None:
        if type(event) is not dict:
            return
        table, last, version = self._table, self._last, self.version
        etype = event.get("type")
        if etype == "llm/retry-started" and nested_streams(version):
            data = event.get("data")
            if last is not None and type(data) is dict \
                    and _same(table.field("turn", last), data.get("turn")) \
                    and _same(table.field("step", last), data.get("step")):
                self._last = None
            return
        found = _sample_of(event, version)
        if found is None:
            return
        data = event["data"]
        sample = make_sample(found[0], seq=event.get("seq"), turn=data.get("turn"), step=data.get("step"),
                             source=found[1])
        if last is not None and _same(table.field("turn", last), sample.turn) \
                and _same(table.field("step", last), sample.step):
            table.set_replaced_by(last, sample.seq)
        table.append(sample)
        self._last = len(table) - 1

    def samples(self) -> UsageTable:
        """The samples so far, as a view of the collector's columns
        (`workbench.core.tokens.usage_table`: the collector may go on)."""
        return self._table.view()


def usage_samples(events: Sequence[dict], *, version: int,
                  positions: Iterable[int] | None = None) -> tuple[UsageSample, ...]:
    """Every provider usage sample of the log, in log order, with replacements marked.
    `positions` may restrict the pass to the events of `USAGE_TYPES` (read with
    `workbench.io.payloads.read_events`)."""
    collector = UsageCollector(version=version)
    feed = collector.feed
    for _, event in read_events(events, range(len(events)) if positions is None else positions):
        feed(event)
    return tuple(collector.samples())


def usage_totals(samples: Sequence[UsageSample]) -> UsageTotals:
    """Sum of the samples that were not replaced (reference `tokenUsage` totals)."""
    kept = [s for s in samples if s.counted]
    return UsageTotals(
        sum(s.input_tokens for s in kept), sum(s.cache_read_tokens for s in kept),
        sum(s.cache_write_tokens for s in kept), sum(s.output_tokens for s in kept),
        sum(s.reasoning_tokens or 0 for s in kept), len(kept))


__all__ = ["USAGE_TYPES", "UsageCollector", "UsageSample", "UsageTotals", "make_sample", "usage_samples", "usage_totals"]
