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
from collections.abc import Callable, Iterable, Sequence
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
    if type(value) is int and 0 <= value < 1 << 63:   # the common case, as below
        return value, True
    if value is ABSENT or value is None:
        return 0, True
    if is_number(value) and value >= 0 and value == value:
        return _whole(value), True
    return 0, False


def make_sample(usage: Any, *, seq: Any, turn: Any, step: Any, source: str) -> UsageSample:
    """A `UsageSample` from one logged `TokenUsage` object."""
    return UsageSample(*sample_fields(usage, seq, turn, step, source))


_COUNT_KEYS = ("inputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")


def sample_fields(usage: Any, seq: Any, turn: Any, step: Any, source: str) -> tuple:
    """The `UsageSample` fields (in order, `replaced_by` left out) of one logged `TokenUsage`."""
    ok = type(usage) is dict
    get = usage.get if ok else {}.get
    counts = [get(key, ABSENT) for key in _COUNT_KEYS]
    for i, value in enumerate(counts):
        if type(value) is int and 0 <= value < 1 << 63:   # the common cases first, as `_count`
            continue
        if value is ABSENT:
            counts[i] = 0
            continue
        counts[i], good = _count(value)
        ok = ok and good
    reasoning, total = get("reasoningTokens", ABSENT), get("totalTokens", ABSENT)
    return (seq, turn, step, source, *counts,
            _whole(reasoning) if is_number(reasoning) and reasoning == reasoning else None,
            _whole(total) if is_number(total) and total == total else None, not ok)


def _same(a: Any, b: Any) -> bool:
    if type(a) is int and type(b) is int:
        return a == b
    if is_number(a) and is_number(b):
        return a == b
    return type(a) is type(b) and a == b


USAGE_TYPES = frozenset({"assistant/message", "assistant/attempt", "assistant/chunk", "llm/retry-started"})
"""The only event types `usage_samples` reads."""


class UsageCollector:
    """Usage samples, one event at a time: the step of each type it reads (`steps`,
    `workbench.core.steps`; `feed` for any event) in log order, then `samples()`.
    `usage_samples` is this over a sequence; `workbench.load` runs it while the loader scans
    the log."""

    def __init__(self, *, version: int) -> None:
        self.version = version
        self._table = UsageTable()
        self._last: tuple[int, Any, Any] | None = None
        """The latest sample's row, turn and step (as logged: the table reads them back so)."""
        self._steps = self.steps()

    def feed(self, event: Any) -> None:
        etype = event.get("type") if type(event) is dict else None
        step = self._steps.get(etype) if type(etype) is str else None
        if step is not None:
            step(0, event)

    def steps(self) -> dict[str, Callable[[int, Any], None]]:
        """`assistant/message` (its `data.usage`, else on nested-stream formats the last usage
        chunk of its stream), `assistant/attempt` and `llm/retry-started` on nested-stream
        formats, a top-level `assistant/chunk` otherwise (module doc)."""
        table = self._table
        add = table.add
        nested = nested_streams(self.version)

        def sample(event: Any, data: dict, usage: Any, source: str) -> None:
            turn, step, last = data.get("turn"), data.get("step"), self._last
            fields = sample_fields(usage, event.get("seq"), turn, step, source)
            if last is not None and _same(last[1], turn) and _same(last[2], step):
                table.set_replaced_by(last[0], fields[0])
            self._last = (add(fields), turn, step)

        def message(seq: int, event: Any) -> None:
            data = event.get("data")
            if type(data) is not dict:
                return
            usage = data.get("usage", ABSENT)
            if usage is ABSENT and nested:
                usage = _last_stream_usage(data.get("stream"))
            if usage is not ABSENT:
                sample(event, data, usage, "message")

        def attempt(seq: int, event: Any) -> None:
            data = event.get("data")
            if type(data) is dict:
                usage = _last_stream_usage(data.get("stream"))
                if usage is not ABSENT:
                    sample(event, data, usage, "attempt")

        def chunk(seq: int, event: Any) -> None:
            data = event.get("data")
            found = data.get("chunk") if type(data) is dict else None
            if type(found) is dict and found.get("type") == "usage":
                sample(event, data, found.get("usage", ABSENT), "chunk")  # type: ignore[arg-type]

        def retry(seq: int, event: Any) -> None:
            data, last = event.get("data"), self._last
            if last is not None and type(data) is dict and _same(last[1], data.get("turn")) \
                    and _same(last[2], data.get("step")):
                self._last = None

        if nested:
            return {"assistant/message": message, "assistant/attempt": attempt,
                    "llm/retry-started": retry}
        return {"assistant/message": message, "assistant/chunk": chunk}

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
