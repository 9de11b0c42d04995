"""`timeline_df`: the surface over time, one row per seq. Layer: frames.

Row `i` describes the state right after event `i`: how many nodes the surface holds, what they
cost by each requested meter (v0 spec §6.4: appends add a node's price, a replacement removes the
shadowed prices and adds its own), the replace generation (§4.1), and — on rows where a model
call was settled — what the provider reported (`workbench.core.tokens.usage`: v4 one sample per
`assistant/message`/`assistant/attempt`, v0 per `usage` chunk and `assistant/message.usage`;
buckets are disjoint, §3.6). `usage_counted` is False for a sample that a later one of the same
turn/step replaced (a failed attempt overwritten by its retry, §6.7), so summing the counted
samples gives the session's usage totals.

All series are computed with vectorised passes over the core timeline's replacement record;
nothing is refolded per seq.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from workbench.core.tokens.usage_table import SOURCES, UsageTable
from workbench.frames.columns import (
    EVENT_TYPE,
    TIME,
    Column,
    Columns,
    coded,
    frame,
    int64_or_none,
)
from workbench.frames.meters import (
    DEFAULT_METERS,
    check_meters,
    fill_log_prices,
    log_prices,
    meter_columns,
)

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

SURFACE_CHANGE = pd.CategoricalDtype(["append", "replace", "rejected"])
"""What the event did to the surface; NA when nothing (log-only events)."""

USAGE_SOURCE = pd.CategoricalDtype(["message", "attempt", "chunk"])
"""Where a usage sample was read: an assistant/message, a v4 assistant/attempt, a v0 chunk."""

_SOURCE_TABLE = np.array([USAGE_SOURCE.categories.get_loc(name) for name in SOURCES], dtype=np.int8)
"""`USAGE_SOURCE` code of each `usage_table.SOURCES` code."""
_USAGE_FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
                 "reasoning_tokens", "total_tokens")


def _change(session: AnalysedLog) -> pd.Categorical:
    s = session.surface
    codes = np.full(len(session), -1, dtype=np.int8)
    codes[s.node] = 0
    codes[s.replaced] = 1
    codes[s.rejected] = 2
    return pd.Categorical.from_codes(codes, dtype=SURFACE_CHANGE)


_TOTAL_PARTS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
_SAFE_PART = 1 << 60
"""Four parts below this sum within int64, so `total_tokens` is added as int64 arrays."""


def _cells(samples: UsageTable, name: str) -> tuple[np.ndarray, np.ndarray]:
    """(data, missing) of one usage field per sample, by `int64_or_none` (the one cell rule)."""
    if name == "total_tokens":
        return _totals(samples)
    values, missing, odd = samples.ints(name)
    for row, value in odd.items():
        cell = int64_or_none(value)
        values[row], missing[row] = (0, True) if cell is None else (cell, False)
    return values, missing


def _totals(samples: UsageTable) -> tuple[np.ndarray, np.ndarray]:
    """`UsageSample.total_tokens` per sample: the four parts added as int64 where that is exact
    (plain ints below `_SAFE_PART`), as the samples' Python numbers elsewhere."""
    parts = [samples.ints(name) for name in _TOTAL_PARTS]
    exact = np.ones(len(samples), dtype=bool)
    for values, _missing, odd in parts:
        exact &= values < _SAFE_PART
        exact[list(odd)] = False
    total = np.zeros(len(samples), dtype=np.int64)
    for values, _missing, _odd in parts:
        total += np.where(exact, values, 0)
    missing = np.zeros(len(samples), dtype=bool)
    for row in np.flatnonzero(~exact).tolist():
        cell = int64_or_none(samples[row].total_tokens)
        total[row], missing[row] = (0, True) if cell is None else (cell, False)
    return total, missing


def _sample_seqs(samples: UsageTable) -> np.ndarray:
    """The row of each sample: its seq (as `int(seq)` reads it)."""
    values, missing, odd = samples.ints("seq")
    if missing.any() or odd:
        return np.array([int(s.seq) for s in samples], dtype=np.int64)   # type: ignore[arg-type]
    return values


def usage_columns(samples: UsageTable, n: int) -> dict[str, object]:
    """Per-seq columns of a log of `n` events from its usage samples (missing where no sample
    was settled; the columns missing exactly there share one mask)."""
    seqs = _sample_seqs(samples)
    out: dict[str, object] = {}
    unsampled = np.ones(n, dtype=bool)
    unsampled[seqs] = False
    for name in _USAGE_FIELDS:
        values, missing = _cells(samples, name)
        data = np.zeros(n, dtype=np.int64)
        data[seqs] = values
        mask = unsampled
        if missing.any():
            mask = unsampled.copy()
            mask[seqs] = missing
        out[name] = pd.arrays.IntegerArray(data, mask)
    counted = np.zeros(n, dtype=bool)
    counted[seqs] = samples.ints("replaced_by")[1]     # counted: never replaced (None)
    out["counted"] = pd.arrays.BooleanArray(counted, unsampled)
    codes = np.full(n, -1, dtype=np.int8)
    codes[seqs] = _SOURCE_TABLE[samples.source_codes()]
    out["source"] = pd.Categorical.from_codes(codes, dtype=USAGE_SOURCE)
    return out


def _usage(session: AnalysedLog) -> dict[str, object]:
    return usage_columns(session.usage, len(session))


TimelineBase: Columns = (
    Column("seq", "Int64", lambda s: s["scan"].seq, "the event"),
    Column("time", TIME, lambda s: s["scan"].time, "its time"),
    Column("type", EVENT_TYPE,
           lambda s: coded(s["scan"].type_codes, s["scan"].types.values, EVENT_TYPE), "its type"),
    Column("turn", "Int64", lambda s: s["scan"].turn, "turn open at this event"),
    Column("surface_change", SURFACE_CHANGE, lambda s: s["change"],
           "append / replace / rejected by the fold; NA: no surface change"),
    Column("surface_size", "Int64", lambda s: s["size"], "surface nodes after the event"),
    Column("replace_generation", "Int64", lambda s: s["generation"],
           "replacements applied so far (replaceGeneration, §4.1)"),
)
"""Surface shape after each event."""

TimelineUsage: Columns = (
    Column("usage_source", USAGE_SOURCE, lambda s: s["usage"]["source"],
           "what carried the provider usage sample at this seq; NA: no sample"),
    Column("usage_input", "Int64", lambda s: s["usage"]["input_tokens"],
           "uncached input tokens reported by the provider"),
    Column("usage_cache_read", "Int64", lambda s: s["usage"]["cache_read_tokens"],
           "cached input read"),
    Column("usage_cache_write", "Int64", lambda s: s["usage"]["cache_write_tokens"],
           "cached input written"),
    Column("usage_output", "Int64", lambda s: s["usage"]["output_tokens"],
           "output tokens (reasoning included)"),
    Column("usage_reasoning", "Int64", lambda s: s["usage"]["reasoning_tokens"],
           "reasoning tokens, when reported"),
    Column("usage_total", "Int64", lambda s: s["usage"]["total_tokens"],
           "input + cache read + cache write + output"),
    Column("usage_counted", "boolean", lambda s: s["usage"]["counted"],
           "False when a later sample of the same turn/step replaced it (§6.7)"),
)
"""Provider usage, on the rows where a model call was settled."""


def timeline_columns(meters: Sequence[str]) -> Columns:
    """`TimelineBase`, one ``surface_tokens_<meter>`` per meter, then `TimelineUsage`."""
    return TimelineBase + meter_columns(
        meters, "surface_tokens", "surface total by the {meter} meter after the event") \
        + TimelineUsage


def timeline_frame(session: AnalysedLog, *, meters: Sequence[str] = DEFAULT_METERS,
                   progress: bool = False) -> pd.DataFrame:
    meters = check_meters(meters)
    n = len(session)
    if not n:
        return frame(timeline_columns(meters), None, 0)
    s = session.surface
    source: dict[str, object] = {
        "n": n, "scan": session.index, "change": _change(session), "size": s.size,
        "generation": s.generation, "usage": _usage(session)}
    fill_log_prices(session, meters, progress=progress)
    for meter in meters:
        source[f"surface_tokens_{meter}"] = s.totals(log_prices(session, meter, progress=progress))
    return frame(timeline_columns(meters), source, n)
