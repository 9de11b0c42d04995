"""A real session and a counterfactual side by side, as frames. Layer: frames.

`comparison(real, cf, meters=...)` returns a `Comparison` with three frames (declared dtypes,
stable when a side has no compaction):

* `timeline` — one row per seq of each side: ``side`` (``real`` or the counterfactual's label),
  ``real_seq`` (the shared x axis: a counterfactual seq is placed at the real seq it follows,
  `Session.origin`), ``seq``, ``surface_tokens_<meter>`` per meter;
* `compactions` — one row per compaction attempt of each side: trigger, status, where it fired
  (``real_seq``: the real seq it stands at, one rule for both sides, so sides join on it),
  shadowed nodes and tokens, summary tokens, the **prefix-cache break** of the
  audit (`workbench.core.compaction.probe.CacheBreak`: ``cache_break_position``, the first
  message the requests before and after differ in; ``cached_prefix_tokens``, the prefix a cache
  can reuse; ``resent_tokens``, the rest of the first request after it) and the anchors the
  summary kept / lost / invented (the citation audit, `Session.citations_df`) and the net tokens
  of the cost ledger (`Session.ledger_df`, dsh meter), when the session has them;
* `sessions` — one row per side: compactions by status, the prompt tokens of every model call
  (the surface each `assistant/message`/`attempt` was sent, by meter), final and peak surface
  tokens, provider usage totals, the anchors and the ledger's net tokens summed.

Prices are the DSH heuristic unless other meters are asked for (`workbench.frames.meters`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from workbench.frames.columns import as_array

SessionLike = Any
"""A `workbench.session.Session` (the frames layer never imports it: `tests/test_layering.py`)."""

_MODEL_CALLS = ("assistant/message", "assistant/attempt")

COMPACTION_COLUMNS = {
    "side": "string", "compaction_id": "string", "trigger": "string", "status": "string",
    "summarizer": "string", "start_seq": "Int64", "real_seq": "Int64", "shadowed_count": "Int64",
    "shadowed_tokens": "Int64", "summary_tokens": "Int64", "cache_break_position": "Int64",
    "cached_prefix_tokens": "Int64", "resent_tokens": "Int64", "anchors_kept": "Int64",
    "anchors_lost": "Int64", "anchors_invented": "Int64", "recall": "Float64",
    "net_tokens": "Int64",
}
SESSION_COLUMNS = {
    "side": "string", "summarizer": "string", "events": "Int64", "compactions": "Int64",
    "completed": "Int64", "failed": "Int64", "prunes": "Int64", "model_calls": "Int64",
    "final_surface_tokens": "Int64", "peak_surface_tokens": "Int64", "usage_input": "Int64",
    "usage_output": "Int64", "anchors_kept": "Int64", "anchors_lost": "Int64",
    "anchors_invented": "Int64", "net_tokens": "Int64",
}


@dataclass
class Comparison:
    """The frames of one comparison (module doc) and the two sessions."""

    real: SessionLike
    counterfactual: SessionLike
    meters: tuple[str, ...]
    timeline: pd.DataFrame
    compactions: pd.DataFrame
    sessions: pd.DataFrame

    def frame(self) -> pd.DataFrame:
        """The per-compaction frame (what `compare` prints)."""
        return self.compactions.copy(deep=False)

    def as_json(self) -> dict[str, Any]:
        def rows(df: pd.DataFrame) -> list[dict]:
            return [{k: (None if pd.isna(v) else (v.item() if hasattr(v, "item") else v))
                     for k, v in row.items()} for row in df.to_dict("records")]
        return {"meters": list(self.meters), "sessions": rows(self.sessions),
                "compactions": rows(self.compactions)}

    def _repr_html_(self) -> str:
        return (self.sessions.to_html(index=False, escape=True)
                + self.compactions.to_html(index=False, escape=True))


def _origin(session: SessionLike) -> np.ndarray:
    origin = getattr(session, "origin", None)
    n = len(session)
    return np.asarray(origin if origin is not None else range(n), dtype=np.int64)[:n]


def _real_seq(origin: np.ndarray, start: int) -> int:
    """Where a compaction starting at seq `start` stands on the real log, by one rule for both
    sides: one past the real seq its previous event follows. A real bracket: its own start; a
    counterfactual one: the real event it was written before (a byte-identical replay's brackets
    stand where the real ones do; `origin` of an inserted event is the real seq before it)."""
    return int(origin[start - 1]) + 1 if start > 0 else 0


def _timeline(side: str, session: SessionLike, meters: Sequence[str]) -> pd.DataFrame:
    t = session.timeline_df(meters=meters)
    out = pd.DataFrame({"side": pd.array([side] * len(t), dtype="string"),
                        "real_seq": pd.array(_origin(session)[: len(t)], dtype="Int64"),
                        "seq": t["seq"].astype("Int64")})
    for m in meters:
        out[f"surface_tokens_{m}"] = t[f"surface_tokens_{m}"].astype("Int64")
    return out


def _citations(session: SessionLike) -> dict[Any, tuple[int, int, int, float | None]]:
    """Per compaction id: (kept, lost, invented, recall) from the citation audit, if present."""
    build = getattr(session, "citations_df", None)
    if build is None:
        return {}
    df = build()
    out = {}
    for row in df.to_dict("records"):
        def num(key: str) -> Any:
            value = row.get(key)
            return None if value is None or pd.isna(value) else value
        out[row.get("compaction_id")] = (num("kept"), num("lost"), num("invented"), num("recall"))
    return out


def _ledger(session: SessionLike) -> dict[Any, int | None]:
    """Per compaction id: net tokens (dsh meter) of the cost ledger, if the session has it."""
    build = getattr(session, "ledger_df", None)
    if build is None:
        return {}
    df = build(meters=("dsh",))
    return {row["compaction_id"]: (None if pd.isna(row["net_tokens"]) else int(row["net_tokens"]))
            for row in df.to_dict("records")}


def _compactions(side: str, session: SessionLike) -> list[dict[str, Any]]:
    if not len(session):
        return []
    label = getattr(session, "label", "real")
    origin = _origin(session)
    cites = _citations(session)
    nets = _ledger(session)
    breaks = {a.record.start_seq: a.cache_break for a in session.audit.compactions
              if a.cache_break is not None}
    rows = []
    for r in session.compactions.records:
        hidden = list(r.fold_shadowed_seqs or r.logged_shadowed_seqs or ())
        row: dict[str, Any] = {
            "side": side, "compaction_id": str(r.compaction_id), "trigger": r.trigger.kind,
            "status": r.status, "summarizer": label if side != "real" else "dsh",
            "start_seq": r.start_seq, "real_seq": _real_seq(origin, r.start_seq),
            "shadowed_count": len(hidden) or None, "shadowed_tokens": r.logged_shadowed_tokens,
            "summary_tokens": r.replacement_tokens}
        cut = breaks.get(r.start_seq)
        if cut is not None:
            row.update(cache_break_position=cut.position, cached_prefix_tokens=cut.prefix_tokens,
                       resent_tokens=cut.tokens_after - cut.prefix_tokens)
        kept, lost, invented, recall = cites.get(str(r.compaction_id), (None,) * 4)
        row.update(anchors_kept=kept, anchors_lost=lost, anchors_invented=invented, recall=recall,
                   net_tokens=nets.get(str(r.compaction_id)))
        rows.append(row)
    return rows


def _session_row(side: str, session: SessionLike, compactions: pd.DataFrame) -> dict[str, Any]:
    mine = compactions[compactions["side"] == side]
    n = len(session)
    events = session.events
    calls = [s for s in range(n) if events[s].get("type") in _MODEL_CALLS] if n else []
    totals = session.surface.totals(np.maximum(np.asarray(session.prices), 0)) if n else np.zeros(0)
    sent = [int(totals[s - 1]) for s in calls if s > 0]
    usage_in = usage_out = 0   # the logged numbers added up; a sum beyond int64 (or Infinity) is NA
    for sample in session.usage if n else ():
        usage_in += sample.prompt_tokens or 0
        usage_out += sample.output_tokens or 0
    net = mine["net_tokens"].sum(min_count=1) if "net_tokens" in mine else None
    return {
        "side": side, "summarizer": "dsh" if side == "real" else getattr(session, "label", side),
        "events": n, "compactions": len(mine), "completed": int((mine["status"] == "completed").sum()),
        "failed": int((mine["status"] == "failed").sum()),
        "prunes": len(session.compactions.prunes) if n else 0, "model_calls": len(calls),
        "prompt_tokens_dsh": int(sum(sent)),
        "final_surface_tokens": int(totals[-1]) if n else 0,
        "peak_surface_tokens": int(totals.max()) if n else 0,
        "usage_input": usage_in, "usage_output": usage_out,
        "anchors_kept": mine["anchors_kept"].sum(min_count=1),
        "anchors_lost": mine["anchors_lost"].sum(min_count=1),
        "anchors_invented": mine["anchors_invented"].sum(min_count=1), "net_tokens": net}


def _typed(rows: list[dict[str, Any]], columns: dict[str, str]) -> pd.DataFrame:
    """`rows` as a frame of the declared `columns` (then any other key of the first row), each
    cell by the frames' rule for its dtype (`columns.as_array`: an Int64 cell beyond int64, or
    no integer, is NA)."""
    names = list(columns) + [k for r in rows[:1] for k in r if k not in columns]
    df = pd.DataFrame(rows, columns=names)
    for name, dtype in columns.items():
        df[name] = as_array([r.get(name) for r in rows], dtype, len(rows), name)
    return df


def comparison(real: SessionLike, cf: SessionLike, *, meters: Sequence[str] = ("dsh",)) -> Comparison:
    """Compare `real` with the counterfactual `cf` (module doc)."""
    from workbench.frames.meters import check_meters
    names = check_meters(meters)
    side = getattr(cf, "label", "counterfactual")
    side = "counterfactual" if side == "real" else f"whatif:{side}"
    timeline = pd.concat([_timeline("real", real, names), _timeline(side, cf, names)],
                         ignore_index=True)
    compactions = _typed(_compactions("real", real) + _compactions(side, cf), COMPACTION_COLUMNS)
    sessions = _typed([_session_row("real", real, compactions),
                       _session_row(side, cf, compactions)],
                      {**SESSION_COLUMNS, "prompt_tokens_dsh": "Int64"})
    return Comparison(real, cf, names, timeline, compactions, sessions)
