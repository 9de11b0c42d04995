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
from itertools import islice
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.frames.columns import EVENT_TYPE, TIME, Column, Columns, coded, frame, int64_cells
from workbench.frames.meters import (
    DEFAULT_METERS, check_meters, fill_log_prices, log_prices, meter_columns)

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

SURFACE_CHANGE = pd.CategoricalDtype(["append", "replace", "rejected"])
"""What the event did to the surface; NA when nothing (log-only events)."""

USAGE_SOURCE = pd.CategoricalDtype(["message", "attempt", "chunk"])
"""Where a usage sample was read: an assistant/message, a v4 assistant/attempt, a v0 chunk."""

_SOURCE_CODES = {name: code for code, name in enumerate(USAGE_SOURCE.categories)}
_USAGE_FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
                 "reasoning_tokens", "total_tokens")


def _change(session: AnalysedLog) -> pd.Categorical:
    s = session.surface
    codes = np.full(len(session), -1, dtype=np.int8)
    codes[s.node] = 0
    codes[s.replaced] = 1
    codes[s.rejected] = 2
    return pd.Categorical.from_codes(codes, dtype=SURFACE_CHANGE)


class UsageRows:
    """The usage samples' values as numpy columns, one row per sample (`update` reads only the
    samples added since, and the last one again: a retry of the same turn/step re-marks it as
    replaced, §6.7). A followed session keeps one (`Live.usage_rows`) across refreshes."""

    def __init__(self) -> None:
        self.count = 0
        self._seq = np.zeros(0, dtype=np.int64)
        self._values = np.zeros((len(_USAGE_FIELDS), 0), dtype=np.int64)
        self._mask = np.ones((len(_USAGE_FIELDS), 0), dtype=bool)
        self._counted = np.zeros(0, dtype=bool)
        self._source = np.zeros(0, dtype=np.int8)

    def _reserve(self, count: int) -> None:
        if count <= len(self._seq):
            return
        size = max(count + count // 4 + 1024, 2 * len(self._seq))
        keep = self.count

        def grown(old: np.ndarray, fill: Any) -> np.ndarray:
            new = np.full((*old.shape[:-1], size), fill, dtype=old.dtype)
            new[..., :keep] = old[..., :keep]
            return new
        self._seq, self._values = grown(self._seq, 0), grown(self._values, 0)
        self._mask, self._counted = grown(self._mask, True), grown(self._counted, False)
        self._source = grown(self._source, -1)

    def update(self, samples: Sequence[Any]) -> UsageRows:
        total = len(samples)
        self._reserve(total)
        first = max(self.count - 1, 0)
        read = attrgetter("seq", "counted", "source", *_USAGE_FIELDS)
        seqs, counted, sources, *values = list(zip(*map(read, islice(samples, first, total)))) \
            or [()] * (3 + len(_USAGE_FIELDS))
        self._seq[first:total] = [int(seq) for seq in seqs]
        for k, column in enumerate(values):
            self._values[k, first:total], self._mask[k, first:total] = int64_cells(column)
        self._counted[first:total] = counted
        self._source[first:total] = [_SOURCE_CODES.get(source, -1) for source in sources]
        self.count = total
        return self

    def columns(self, n: int) -> dict[str, object]:
        """Per-seq columns of a log of `n` events (missing where no sample was settled; the
        columns missing exactly there share one mask)."""
        count = self.count
        seqs = self._seq[:count]
        out: dict[str, object] = {}
        unsampled = np.ones(n, dtype=bool)
        unsampled[seqs] = False
        for k, name in enumerate(_USAGE_FIELDS):
            data = np.zeros(n, dtype=np.int64)
            data[seqs] = self._values[k, :count]
            mask = unsampled
            if self._mask[k, :count].any():
                mask = unsampled.copy()
                mask[seqs] = self._mask[k, :count]
            out[name] = pd.arrays.IntegerArray(data, mask)
        counted = np.zeros(n, dtype=bool)
        counted[seqs] = self._counted[:count]
        out["counted"] = pd.arrays.BooleanArray(counted, unsampled)
        codes = np.full(n, -1, dtype=np.int8)
        codes[seqs] = self._source[:count]
        out["source"] = pd.Categorical.from_codes(codes, dtype=USAGE_SOURCE)
        return out


def _usage(session: AnalysedLog) -> dict[str, object]:
    live = getattr(session, "live", None)
    rows = getattr(live, "usage_rows", None) if live is not None else None
    if rows is None:
        rows = UsageRows()
        if live is not None:
            live.usage_rows = rows
    return rows.update(session.usage).columns(len(session))


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
