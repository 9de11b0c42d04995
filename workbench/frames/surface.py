"""Surface frames: the surface at a seq, the replacements, and every hidden node.
Layer: frames. Everything here is read from the core `SurfaceTimeline` (one fold); nothing is
refolded.

* `surface_frame(session, seq)`: one row per node of the surface after `seq`, in model order
  (v0 spec §4.7): what the next request would contain, with each node's price per meter and its
  lineage (how many original appended events it stands for, through nested compactions).
* `replacements_frame(session)`: one row per applied replacement (v0 §4.1 `replacements`), with
  the positions it spliced, what it removed and what it cost or saved.
* `shadow_frame(session)`: one row per hidden node: hidden at which seq, by which node, and the
  *lineage root* — the node of the final surface that now stands for it (NA when the node that
  hid it was itself rejected, which a valid log never has).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.frames.columns import (
    EVENT_TYPE,
    ROLE,
    SEQ_LIST,
    TIME,
    Column,
    Columns,
    coded,
    coded_strings,
    frame,
    take,
)
from workbench.frames.meters import meter_columns, node_prices

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog
    from workbench.core.index import LogIndex

REPLACEMENT_KIND = pd.CategoricalDtype(["compaction", "prune", "other"])
"""What made a replacement: a compaction checkpoint, a tool-result prune, anything else
(an unpriced replacement, v0 §5.10 step 5)."""


def _pick(values: Any, seqs: Any) -> Any:
    return take(values, seqs)


def _type(scan: LogIndex, seqs: Any) -> pd.Categorical:
    return coded(take(scan.type_codes, seqs), scan.types.values, EVENT_TYPE)


def _role(scan: LogIndex, seqs: Any) -> pd.Categorical:
    return coded(take(scan.role_codes, seqs), scan.roles.values, ROLE)


def _kind(scan: LogIndex, seqs: Any) -> Any:
    return coded_strings(take(scan.source_kind_codes, seqs), scan.source_kinds.values)


# -- surface at a seq ----------------------------------------------------------------------------

SurfaceNode: Columns = (
    Column("position", "Int64", lambda s: np.arange(len(s["seqs"]), dtype=np.int64),
           "0-based position on the surface (model order)"),
    Column("seq", "Int64", lambda s: np.asarray(s["seqs"], dtype=np.int64), "the node's event seq"),
    Column("time", TIME, lambda s: _pick(s["scan"].time, s["seqs"]), "when the node was appended"),
    Column("type", EVENT_TYPE, lambda s: _type(s["scan"], s["seqs"]), "event type"),
    Column("role", ROLE, lambda s: _role(s["scan"], s["seqs"]), "message role"),
    Column("source_kind", "string", lambda s: _kind(s["scan"], s["seqs"]),
           "message source kind (compact-checkpoint marks a compaction checkpoint)"),
    Column("turn", "Int64", lambda s: _pick(s["scan"].turn, s["seqs"]), "turn it was added in"),
    Column("is_replacement", "boolean", lambda s: s["is_rep"],
           "the node replaced a range (checkpoint, pruned copy)"),
    Column("lineage_size", "Int64", lambda s: s["lineage"],
           "original appended events this node stands for (1 for an appended node)"),
    Column("preview", "string", lambda s: _pick(s["scan"].preview, s["seqs"]), "text preview"),
)
"""One node of the surface."""


def surface_columns(meters: Sequence[str]) -> Columns:
    """`SurfaceNode` plus one ``tokens_<meter>`` column per meter."""
    return SurfaceNode + meter_columns(meters, "tokens", "price of the node by the {meter} meter")


def surface_frame(session: AnalysedLog, seq: int, *, meters: Sequence[str] = ("dsh",)
                  ) -> pd.DataFrame:
    """The surface after `seq`, one row per node in model order."""
    timeline = session.timeline
    seqs = timeline.surface_at(seq) if len(session) else ()
    reps = timeline.replacement_by_seq
    source = {
        "seqs": seqs, "scan": session.index,
        "is_rep": np.fromiter((s in reps for s in seqs), dtype=bool, count=len(seqs)),
        "lineage": np.fromiter((len(timeline.lineage(s)) for s in seqs), dtype=np.int64,
                               count=len(seqs)),
    }
    for meter in meters:
        source[f"tokens_{meter}"] = node_prices(session, meter, seqs)
    return frame(surface_columns(meters), source, len(seqs))


# -- replacements --------------------------------------------------------------------------------

def _replacement_rows(session: AnalysedLog) -> dict:
    timeline = session.timeline
    prices = np.maximum(session.prices, 0)
    kinds = _replacement_kinds(session)
    rows: dict[str, list] = {k: [] for k in (
        "seq", "start", "end", "start_pos", "end_pos", "shadowed", "shadowed_tokens",
        "tokens", "kind", "compaction_id")}
    size_before = session.surface.size
    positions = _positions(session)
    for rep in timeline.replacements:
        rows["seq"].append(rep.seq)
        rows["start"].append(rep.start)
        rows["end"].append(rep.end)
        start_pos = positions.get(rep.seq)
        rows["start_pos"].append(start_pos)
        rows["end_pos"].append(None if start_pos is None else start_pos + len(rep.shadowed) - 1)
        rows["shadowed"].append(list(rep.shadowed))
        rows["shadowed_tokens"].append(int(prices[list(rep.shadowed)].sum()))
        rows["tokens"].append(int(prices[rep.seq]))
        kind, cid = kinds.get(rep.seq, ("other", None))
        rows["kind"].append(kind)
        rows["compaction_id"].append(cid)
    rows["size_after"] = [int(size_before[s]) for s in rows["seq"]]
    return rows


def _positions(session: AnalysedLog) -> dict[int, int]:
    """Start position of each replacement (where the new node landed)."""
    timeline = session.timeline
    return {rep.seq: i for rep, (i, _j) in zip(timeline.replacements, timeline.replacement_positions())}


def _replacement_kinds(session: AnalysedLog) -> dict[int, tuple[str, str | None]]:
    found: dict[int, tuple[str, str | None]] = {}
    comp = session.compactions
    for record in comp.records:
        if record.replacement_seq is not None:
            cid = record.compaction_id
            found[record.replacement_seq] = ("compaction", cid if isinstance(cid, str) else None)
    for prune in comp.prunes:
        if prune.replacement_seq is not None:
            found[prune.replacement_seq] = ("prune", None)
    return found


ReplacementColumns: Columns = (
    Column("seq", "Int64", lambda r: r["seq"], "seq of the replacing event (the new node)"),
    Column("time", TIME, lambda r: _pick(r["scan"].time, r["seq"]), "when it was appended"),
    Column("type", EVENT_TYPE, lambda r: _type(r["scan"], r["seq"]),
           "replacing event type (user/message checkpoint, tool/result pruned copy, ...)"),
    Column("kind", REPLACEMENT_KIND, lambda r: r["kind"],
           "compaction checkpoint, tool-result prune, or other (unpriced) replacement"),
    Column("compaction_id", "string", lambda r: r["compaction_id"],
           "the compaction attempt whose checkpoint this is"),
    Column("replace_start", "Int64", lambda r: r["start"], "first replaced node seq (op start)"),
    Column("replace_end", "Int64", lambda r: r["end"], "last replaced node seq (op end)"),
    Column("start_position", "Int64", lambda r: r["start_pos"],
           "surface position of the first replaced node"),
    Column("end_position", "Int64", lambda r: r["end_pos"],
           "surface position of the last replaced node (before the splice)"),
    Column("shadowed_seqs", SEQ_LIST, lambda r: r["shadowed"],
           "nodes removed, in surface order"),
    Column("shadowed_count", "Int64", lambda r: [len(s) for s in r["shadowed"]],
           "number of nodes removed"),
    Column("shadowed_tokens", "Int64", lambda r: r["shadowed_tokens"],
           "heuristic price of the removed nodes"),
    Column("replacement_tokens", "Int64", lambda r: r["tokens"],
           "heuristic price of the new node"),
    Column("saved_tokens", "Int64",
           lambda r: [a - b for a, b in zip(r["shadowed_tokens"], r["tokens"], strict=True)],
           "shadowed_tokens - replacement_tokens"),
    Column("replace_generation", "Int64", lambda r: np.arange(1, len(r["seq"]) + 1),
           "replaceGeneration after this replacement (1, 2, ...)"),
    Column("surface_size_after", "Int64", lambda r: r["size_after"],
           "surface nodes right after the replacement"),
)
"""One applied replacement (v0 spec §4.1, §5.10)."""


def replacements_frame(session: AnalysedLog) -> pd.DataFrame:
    rows = _replacement_rows(session) if len(session) else None
    n = len(rows["seq"]) if rows else 0
    if rows is not None:
        rows["scan"] = session.index
    return frame(ReplacementColumns, rows, n)


# -- shadowed nodes ------------------------------------------------------------------------------

ShadowColumns: Columns = (
    Column("seq", "Int64", lambda r: r["seq"], "the shadowed node"),
    Column("type", EVENT_TYPE, lambda r: _type(r["scan"], r["seq"]), "its event type"),
    Column("role", ROLE, lambda r: _role(r["scan"], r["seq"]), "its message role"),
    Column("time", TIME, lambda r: _pick(r["scan"].time, r["seq"]), "when it was appended"),
    Column("shadowed_by", "Int64", lambda r: r["by"],
           "seq of the replacement that shadowed it (the replacing event, which took its place)"),
    Column("shadowed_at", TIME, lambda r: _pick(r["scan"].time, r["by"]),
           "time of that replacement"),
    Column("shadowed_by_kind", REPLACEMENT_KIND, lambda r: r["kind"],
           "compaction, prune or other"),
    Column("compaction_id", "string", lambda r: r["cid"], "compaction that shadowed it, if any"),
    Column("lineage_root", "Int64", lambda r: r["root"],
           "node of the final surface that now stands for it (through nested replacements)"),
    Column("depth", "Int64", lambda r: r["depth"],
           "replacements between it and its lineage root (1: shadowed once)"),
    Column("tokens", "Int64", lambda r: r["tokens"], "its heuristic price"),
    Column("preview", "string", lambda r: _pick(r["scan"].preview, r["seq"]), "text preview"),
)
"""One shadowed node (removed from the surface by a replacement)."""


def shadow_frame(session: AnalysedLog) -> pd.DataFrame:
    if not len(session):
        return frame(ShadowColumns, None, 0)
    by = session.surface.shadowed_by
    seqs = np.nonzero(by >= 0)[0]
    kinds = _replacement_kinds(session)
    final = set(session.timeline.final_nodes)
    # a replacement always comes after what it hides (by[s] > s), so walking seqs downwards
    # finds every node's root and depth from its replacer's in O(n), however deep the nesting
    by_all = by.tolist()
    root = list(range(len(by_all)))
    depth = [0] * len(by_all)
    for s in seqs[::-1].tolist():
        b = by_all[s]
        root[s], depth[s] = root[b], depth[b] + 1
    roots = [root[s] if root[s] in final else None for s in seqs.tolist()]
    depths = [depth[s] for s in seqs.tolist()]
    by_list = by[seqs].tolist()
    rows = {
        "seq": seqs, "by": by_list, "scan": session.index, "root": roots, "depth": depths,
        "kind": [kinds.get(b, ("other", None))[0] for b in by_list],
        "cid": [kinds.get(b, ("other", None))[1] for b in by_list],
        "tokens": np.maximum(session.prices[seqs], 0),
    }
    return frame(ShadowColumns, rows, len(seqs))
