"""Compaction-quality frames: anchors, lifelines, re-fetches, the cost ledger, citation scores.
Layer: frames. Types the core measures of `workbench.core.quality` (definitions there: the anchor
rules in `workbench.core.compaction.anchors`, statuses and the score in `citation`, re-fetches in
`refetch`, every ledger field in `ledger`, prices in `prices`).

`QualityFrames` is mixed into `Session`: ``anchors_df()``, ``lifelines_df()``, ``refetch_df()``,
``ledger_df(meters=, prices=)``, ``citations_df()`` and ``lifeline(text)``. Every frame has
declared dtypes and the same columns on an empty log.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.core.compaction.anchors import KINDS
from workbench.core.quality import LedgerRow, Quality, session_totals
from workbench.core.quality.citation import STATUSES
from workbench.core.quality.ledger import SUMMED
from workbench.errors import InvalidArgument
from workbench.frames.columns import Column, Columns, empty, frame
from workbench.frames.meters import check_meters, log_prices
from workbench.io.reader import paused_gc

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

KIND = pd.CategoricalDtype(list(KINDS))
"""Anchor kinds (`anchors.KINDS`)."""
LIFELINE_KIND = pd.CategoricalDtype([*KINDS, "text"])
"""Anchor kinds, and ``text`` for any other text a user follows (`Session.lifeline`)."""
STATUS = pd.CategoricalDtype(list(STATUSES))
METER = pd.CategoricalDtype(["dsh", "o200k", "cl100k", "deepseek"])
SOURCE = pd.CategoricalDtype(["logged", "estimated", "none"])
LEDGER_METERS = ("dsh", "o200k", "deepseek")
"""Meters `ledger_df()` shows unless told otherwise."""


def _c(name: str, dtype: Any, doc: str) -> Column:
    return Column(name, dtype, lambda source: source[name], doc)


AnchorColumns: Columns = (
    _c("compaction_id", "string", "compactionId of the compaction whose summary is judged"),
    _c("kind", KIND, "path / command / error / identifier / url / number / constraint"),
    _c("text", "string", "the anchor's literal text (numbers: '<context> <number>')"),
    _c("born_seq", "Int64", "seq of the first event that carried it"),
    _c("status", STATUS, "kept (the summary states it) / lost / invented (candidate)"),
    _c("level", "Int64", "1: the compaction that first hid it; 2: the next summary in the chain"),
    _c("summary_seq", "Int64", "the compaction/summary event"),
    _c("replacement_seq", "Int64", "the checkpoint that hid it (NA: the replacement did not land)"),
)
LifelineColumns: Columns = (
    _c("text", "string", "the anchor (or searched text)"),
    _c("kind", LIFELINE_KIND, "anchor kind; 'text' for a free-text search"),
    _c("born_seq", "Int64", "seq of the first event that carried it"),
    _c("compaction_id", "string", "a compaction of its replacement chain"),
    _c("replacement_seq", "Int64", "that compaction's checkpoint (the text left the surface)"),
    _c("level", "Int64", "position in the chain (1: first shadowed)"),
    _c("stated", "boolean", "whether that summary still states it"),
)
RefetchColumns: Columns = (
    _c("compaction_id", "string", "the compaction whose window holds the repeated call"),
    _c("seq", "Int64", "the message making the repeated tool call"),
    _c("text", "string", "what it fetches again (path, command, query, pattern, URL)"),
    _c("tokens", "Int64", "dsh price of its result node (0 without a result)"),
    _c("tool", "string", "tool name"),
    _c("call_id", "string", "tool-call id"),
    _c("shadowed_seq", "Int64", "the message of the earlier call whose answer was shadowed"),
    _c("result_seq", "Int64", "the repeated call's result node"),
)
LedgerColumns: Columns = (
    _c("compaction_id", "string", "compactionId of the attempt"),
    _c("meter", METER, "token meter of every token column of the row"),
    _c("shadowed_tokens", "Int64", "tokens of the nodes the replacement shadowed"),
    _c("summary_tokens", "Int64", "tokens of the checkpoint node that replaced them"),
    _c("resent_tokens", "Int64", "tokens after the prefix-cache break of the next request "
       "(charged once per request: to the last compaction before it, ledger doc)"),
    _c("refetch_tokens", "Int64", "tokens of re-fetched results in its window"),
    _c("net_tokens", "Int64", "shadowed - summary - resent - refetch"),
    _c("cost", "Float64", "call + resent + refetch cost - saving (money, see ledger doc)"),
    _c("call_input_tokens", "Int64", "summary call input (uncached + cache read + write)"),
    _c("call_cache_read_tokens", "Int64", "summary call cache-read input"),
    _c("call_output_tokens", "Int64", "summary call output"),
    _c("call_source", SOURCE, "logged (compaction/summary.usage) / estimated / none"),
    _c("request_before_seq", "Int64", "last model request before the attempt"),
    _c("request_after_seq", "Int64", "first model request after it"),
    _c("break_position", "Int64", "first differing surface node of the two requests"),
    _c("resent_source", SOURCE, "logged (usage cache fields) / estimated / none (no request "
       "on a side, or charged to a later compaction)"),
    _c("refetches", "Int64", "re-fetch calls in its window"),
    _c("call_cost", "Float64", "money: the summary call"),
    _c("resent_cost", "Float64", "money: re-sent tokens at (miss - hit)"),
    _c("refetch_cost", "Float64", "money: re-fetched tokens at the miss price"),
    _c("saving", "Float64", "money: (shadowed - summary) tokens at the hit price"),
)
CitationColumns: Columns = (
    _c("compaction_id", "string", "compactionId of the attempt"),
    _c("summary_seq", "Int64", "the compaction/summary event"),
    _c("replacement_seq", "Int64", "its checkpoint (NA: did not land)"),
    _c("score", "Float64", "harmonic mean of recall and precision (citation module doc)"),
    _c("recall", "Float64", "mean over kinds present of kept / (kept + lost)"),
    _c("precision", "Float64", "1 - invented / stated"),
    _c("kept", "Int64", "anchors kept"), _c("lost", "Int64", "anchors lost"),
    _c("invented", "Int64", "candidate inventions"),
) + tuple(c for kind in KINDS for c in (
    _c(f"recall_{kind}", "Float64", f"kept / (kept + lost) of {kind} anchors"),
    _c(f"kept_{kind}", "Int64", f"{kind} anchors kept"),
    _c(f"lost_{kind}", "Int64", f"{kind} anchors lost"),
    _c(f"invented_{kind}", "Int64", f"{kind} anchors invented")))

SCHEMAS: dict[str, Columns] = {"anchors": AnchorColumns, "lifelines": LifelineColumns,
                               "refetch": RefetchColumns, "ledger": LedgerColumns,
                               "citations": CitationColumns}
"""The quality frames' columns (registered in `workbench.frames.schema`)."""


def _build(columns: Columns, rows: list[dict[str, Any]]) -> pd.DataFrame:
    if not rows:
        return empty(columns)
    with paused_gc():   # many small containers: no rescans of the loaded heap
        source = {c.name: [r.get(c.name) for r in rows] for c in columns}
        return frame(columns, source, len(rows))


def _id(value: Any) -> str | None:
    return value if isinstance(value, str) else None if value is None else str(value)


def anchors_rows(q: Quality) -> list[dict[str, Any]]:
    return [{"compaction_id": _id(c.compaction_id), "kind": r.kind, "text": r.text,
             "born_seq": r.born_seq, "status": r.status, "level": r.level,
             "summary_seq": c.summary_seq, "replacement_seq": c.replacement_seq}
            for c in q.citations for r in c.rows]


def citation_rows(q: Quality) -> list[dict[str, Any]]:
    out = []
    for c in q.citations:
        row: dict[str, Any] = {"compaction_id": _id(c.compaction_id),
                               "summary_seq": c.summary_seq,
                               "replacement_seq": c.replacement_seq, "score": c.score,
                               "recall": c.recall, "precision": c.precision,
                               "kept": 0, "lost": 0, "invented": 0}
        for kind in KINDS:
            counts = c.counts(kind)
            row[f"recall_{kind}"] = c.recall_of(kind)
            for status, n in zip(STATUSES, counts):
                row[f"{status}_{kind}"] = n
                row[status] += n
        out.append(row)
    return out


class QualityFrames:
    """The compaction-quality part of `Session` (module doc): frames of its analysed log's
    `quality` (`workbench.core.analysis.AnalysedLog.quality`)."""

    def anchors_df(self: AnalysedLog) -> pd.DataFrame:  # type: ignore[misc]
        """One row per anchor per compaction: kind, text, birth, kept / lost / invented, level."""
        def build() -> pd.DataFrame:
            with paused_gc():
                return _build(AnchorColumns, anchors_rows(self.quality))
        return self._cached(("anchors",), build)

    def citations_df(self: AnalysedLog) -> pd.DataFrame:  # type: ignore[misc]
        """One row per compaction with a summary: the headline score, recall and precision,
        and kept / lost / invented and recall per kind (sort by ``score``)."""
        return self._cached(("citations",), lambda: _build(CitationColumns, citation_rows(
            self.quality)))

    def lifelines_df(self: AnalysedLog) -> pd.DataFrame:  # type: ignore[misc]
        """Every anchor's lifeline: one row per summary of its replacement chain, ``stated``
        while the chain still carries it (a chain ends at the first summary that drops it)."""
        def build() -> pd.DataFrame:
            rows = [{"text": r.text, "kind": r.kind, "born_seq": r.born_seq,
                     "compaction_id": _id(c.compaction_id), "replacement_seq": c.replacement_seq,
                     "level": r.level, "stated": r.status == "kept"}
                    for c in self.quality.citations for r in c.rows if r.status != "invented"]
            return _build(LifelineColumns, rows)
        return self._cached(("lifelines",), build)

    def lifeline(self: AnalysedLog, text: str) -> pd.DataFrame:  # type: ignore[misc]
        """The lifeline of any text (e.g. ``"src/app.py"``): when it was born, which checkpoint
        hid it and whether each summary of the chain still states it (columns of
        ``lifelines_df``; empty when no node carries it or nothing hid it)."""
        if not isinstance(text, str):
            raise InvalidArgument(f"a lifeline is asked for a text (a str), not {text!r}")
        steps = self.quality.lifeline(text) if len(self) else []
        return _build(LifelineColumns, [
            {"text": s.text, "kind": s.kind, "born_seq": s.born_seq,
             "compaction_id": _id(s.compaction_id), "replacement_seq": s.replacement_seq,
             "level": s.level, "stated": s.stated} for s in steps])

    def refetch_df(self: AnalysedLog) -> pd.DataFrame:  # type: ignore[misc]
        """One row per tool call after a compaction that fetches again what it hid."""
        def build() -> pd.DataFrame:
            found = self.quality.refetches
            tokens = self._quality_price("dsh", [r.result_seq for r in found
                                                 if r.result_seq is not None])
            it = iter(tokens)
            rows = [{"compaction_id": _id(r.compaction_id), "seq": r.seq, "text": r.text,
                     "tokens": int(next(it)) if r.result_seq is not None else 0,
                     "tool": r.tool, "call_id": r.call_id, "shadowed_seq": r.hidden_seq,
                     "result_seq": r.result_seq} for r in found]
            return _build(RefetchColumns, rows)
        return self._cached(("refetch",), build)

    def ledger_rows(self: AnalysedLog, meters: str | Sequence[str] = LEDGER_METERS,  # type: ignore[misc]
                    prices: Any = None) -> list[LedgerRow]:
        """The core ledger rows (`workbench.core.quality.ledger`)."""
        if not len(self):
            return []
        return self.quality.ledger(self._quality_price, check_meters(meters), prices)

    def ledger_df(self: AnalysedLog, meters: str | Sequence[str] = LEDGER_METERS,  # type: ignore[misc]
                  prices: Any = None, *, per: str = "compaction") -> pd.DataFrame:
        """The net cost ledger, one row per compaction and meter (``per="session"``: one row
        per meter, the sums). `prices`: a `PriceTable`, a model name or a mapping of
        ``cache_hit`` / ``cache_miss`` / ``output`` USD per 1M tokens (default: DeepSeek's
        dated list price, `workbench.core.quality.prices`)."""
        names = check_meters(meters)
        key = ("ledger", names, repr(prices), per)

        def build() -> pd.DataFrame:
            with paused_gc():
                rows = self.ledger_rows(names, prices)
            if per == "session":
                return _session_ledger(rows, names)
            df = _build(LedgerColumns, [_frame_names(r.as_json())
                                        | {"compaction_id": _id(r.compaction_id)} for r in rows])
            return df
        if per not in ("compaction", "session"):
            raise InvalidArgument(f"per must be 'compaction' or 'session', not {per!r}")
        return self._cached(key, build)

    def _quality_price(self: AnalysedLog, meter: str, seqs: Sequence[int]  # type: ignore[misc]
                       ) -> np.ndarray:
        """Node prices by `meter`: the dsh price array, else the meter's whole-log count
        (computed once per session: the ledger needs most nodes of a compacted log)."""
        index = np.fromiter((int(s) for s in seqs), dtype=np.int64)
        if meter == "dsh":     # the session's price array (-1: log-only), indexed first
            return np.maximum(self.prices[index], 0)
        return log_prices(self, meter, progress=True)[index]


_FRAME_NAMES = {"hidden_tokens": "shadowed_tokens"}
"""Core ledger field → frame column where the frames' vocabulary (`workbench.frames.columns`)
differs; the core's names stay those of `workbench audit --json`."""


def _frame_names(row: dict[str, Any]) -> dict[str, Any]:
    return {_FRAME_NAMES.get(k, k): v for k, v in row.items()}


LEDGER_SUMMED = tuple(_FRAME_NAMES.get(n, n) for n in SUMMED)
"""The columns of the session ledger (``per="session"``) that sum the compactions' rows."""


SessionLedgerColumns: Columns = (
    _c("meter", METER, "token meter"),
    _c("compactions", "Int64", "compaction attempts summed"),
) + tuple(_c(name, "Float64" if name.endswith(("cost", "saving")) else "Int64",
             f"sum of {name} over the session's compactions")
          for name in LEDGER_SUMMED)


def _session_ledger(rows: Sequence[LedgerRow], meters: Sequence[str]) -> pd.DataFrame:
    totals = session_totals(rows, meters)
    return _build(SessionLedgerColumns,
                  [{"meter": m, **_frame_names(v)} for m, v in totals.items()])
