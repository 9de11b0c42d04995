"""Token counts from every source, side by side. Layer: core.

Modules:

* `heuristic`: the DSH token-meter heuristic, exact (spec §6.1–6.4);
* `surface_prices`: the meter's positional price fold and the meter-independent fold shape;
* `measure`: `TokenMeter.measure` replay (§6.6);
* `usage`: the provider's reported usage per model call (§6.7);
* `offline`: tiktoken and DeepSeek tokenizers from installed files, no network;
* `meters`: the `Meter` protocol and the `dsh`, `o200k`, `cl100k`, `deepseek` meters;
* `counts`: `LogTokens`, cached per-event / per-meter counts of one log;
* `compactions`: tokens hidden and added per compaction, by meter;
* `bias`: heuristic / real-tokenizer ratios by content kind.

Tokenizer files are only read when a real meter is first used.
"""
from __future__ import annotations

from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.heuristic import (
    estimate_content,
    estimate_header,
    estimate_message,
    estimate_system_message,
    estimate_tools,
    node_price,
    price_events,
)
from workbench.core.tokens.meters import (
    METER_NAMES,
    Meter,
    get_meter,
    parse_meter_names,
)

__all__ = [
    "METER_NAMES", "LogTokens", "Meter", "estimate_content", "estimate_header", "estimate_message",
    "estimate_system_message", "estimate_tools", "get_meter", "node_price", "parse_meter_names",
    "price_events",
]
