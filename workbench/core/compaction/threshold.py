"""DSH's automatic-compaction threshold (v4 spec §5.8). Layer: core (stdlib only).

``messageBudget = ctxWindow − maxTokens``, ``pressureBudget = messageBudget − headroomTokens``,
``threshold = floor(min(ctxWindow × thresholdRatio, pressureBudget))``; a budget ≤ 0 means no
pressure compaction ever (None). The ratio and headroom are deployment settings that the log does
not record (§10 item 10): callers pass them as assumptions and show them as such; `maxTokens`
is the logged `request/header.header.config.maxTokens` when there is one. `implied_threshold`
reads the bounds the log's own pressure decisions put on the threshold, so assumed settings can
be checked against the log.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

DEFAULT_RATIO = 0.8
DEFAULT_HEADROOM = 65_536


@dataclass(frozen=True, slots=True)
class PressureSettings:
    """The assumed compaction settings (spec defaults unless the user knows better)."""

    threshold_ratio: float = DEFAULT_RATIO
    headroom_tokens: int = DEFAULT_HEADROOM

    def threshold(self, context_window: int | None, max_tokens: int | None) -> int | None:
        """The surface size at which a pre-step check compacts (None: never, or unknown)."""
        if not context_window or context_window <= 0:
            return None
        budget = context_window - (max_tokens if max_tokens and max_tokens > 0 else 0)
        pressure = budget - self.headroom_tokens
        if budget <= 0 or pressure <= 0:
            return None
        return math.floor(min(context_window * self.threshold_ratio, pressure))

    def describe(self) -> str:
        return (f"assumed thresholdRatio {self.threshold_ratio:g}, headroomTokens "
                f"{self.headroom_tokens:,}")


@dataclass(frozen=True, slots=True)
class ImpliedThreshold:
    """What a log's own pressure decisions say about the threshold DSH used (§5.8: compact iff
    the pre-step measure ≥ threshold): ``low < threshold ≤ high``, from the largest measure at a
    pre-step point that went on to its step and the smallest measure right before a pressure
    `compaction/start`; `low` is None when no pre-step stayed quiet."""

    low: int | None
    high: int

    def describe(self) -> str:
        quiet = (f", quiet pre-steps peaked at {self.low:,}" if self.low is not None else "")
        return f"pressure compactions fired at ≥ {self.high:,} tokens{quiet}"

    def admits(self, threshold: int | None) -> bool:
        """Whether `threshold` explains every pressure decision of the log."""
        return threshold is not None and threshold <= self.high and (
            self.low is None or self.low < threshold)


PRE_STEP_AFTER = ("turn/start", "step/end")
"""A pre-step pressure check runs after these events, before the next ``step/start`` (§5.8)."""


def implied_threshold(types: Sequence[str], totals: Sequence[float],
                      pressure_starts: Sequence[int]) -> ImpliedThreshold | None:
    """The threshold bounds a log's pressure compactions imply (None: no pressure compaction,
    or decisions no single threshold explains, e.g. settings changed mid-session). `types[i]`
    is the type of event `i`, `totals[i]` the measure right after it (NaN: unknown; Infinity, as
    JavaScript reads a logged usage of ``1e400``, bounds no finite threshold from above),
    `pressure_starts` the seqs of the pressure compactions' `compaction/start`."""
    fired = [totals[s - 1] for s in pressure_starts
             if 0 < s <= len(totals) and totals[s - 1] == totals[s - 1]]
    if not fired:
        return None
    n = min(len(types) - 1, len(totals))
    quiet = [totals[i] for i in range(n)
             if types[i] in PRE_STEP_AFTER and types[i + 1] == "step/start" and totals[i] == totals[i]]
    high, low = min(fired), max(quiet) if quiet else None
    if (low is not None and low >= high) or not math.isfinite(high):
        return None
    return ImpliedThreshold(None if low is None else int(low), int(high))
