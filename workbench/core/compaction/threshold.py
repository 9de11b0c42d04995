"""DSH's automatic-compaction threshold (v4 spec §5.8). Layer: core (stdlib only).

``messageBudget = ctxWindow − maxTokens``, ``pressureBudget = messageBudget − headroomTokens``,
``threshold = floor(min(ctxWindow × thresholdRatio, pressureBudget))``; a budget ≤ 0 means no
pressure compaction ever (None). The ratio and headroom are deployment settings that the log does
not record (§10 item 10): callers pass them as assumptions and show them as such; `maxTokens`
is the logged `request/header.header.config.maxTokens` when there is one.
"""
from __future__ import annotations

import math
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
