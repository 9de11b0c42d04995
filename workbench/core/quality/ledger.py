"""The net cost ledger of every compaction, by each token meter and in money. Layer: core.

One `LedgerRow` per compaction attempt and meter (the same definitions for ``dsh``, ``o200k``,
``deepseek``; node prices come from the caller's `price(meter, seqs)`):

* ``hidden_tokens``: the nodes the replacement removed (0 when it did not land);
* ``summary_tokens``: the checkpoint node that took their place (0 when it did not land);
* ``call_input_tokens`` / ``call_cache_read_tokens`` / ``call_output_tokens``: the summary call's
  own usage — the provider's (``compaction/summary.usage``: uncached input + cache read + cache
  write, cache read, output) when logged (``call_source`` ``logged``), else ``estimated``: the
  surface at the start as input and the checkpoint as output, by the meter;
* the prefix-cache break: the node lists of the last request before the attempt and the first
  after it are compared; ``break_position`` is the first differing node and ``resent_tokens``
  the price of the after-request's nodes from there on (sent uncached). When that request's
  logged usage has cache fields (``cacheReadTokens``), ``resent_tokens`` is its uncached prompt
  (``inputTokens + cacheWriteTokens``) and ``resent_source`` is ``logged``; else ``estimated``.
  No request on either side: 0 and ``none``. A request's cache break is charged once: when
  several compactions land between the same two requests (the same first request after them,
  e.g. nested compactions of one pre-step phase), the last of them (the one that request
  follows) carries ``resent_tokens``; the earlier ones keep ``break_position`` and the request
  seqs but show ``resent_tokens`` 0 and ``resent_source`` ``none``, so session totals count it
  once;
* ``refetch_tokens``: the result nodes of the re-fetches in its window (`refetch`);
* ``net_tokens = hidden_tokens − summary_tokens − resent_tokens − refetch_tokens``: what the
  first request after the compaction saved (positive) or paid (negative) in tokens.

Money (`prices.PriceTable`, per token): ``cost = call_cost + resent_cost + refetch_cost −
saving`` where ``call_cost`` prices the summary call (uncached input at the cache-miss price,
cache reads at the hit price, output at the output price), ``resent_cost`` the re-sent tokens at
the miss − hit difference (they would have been cache hits), ``refetch_cost`` the re-fetched
tokens at the miss price and ``saving`` the removed tokens (hidden − summary) at the hit price
on that first request. Positive cost: the compaction cost more than it saved there.
A session's ledger is the sum of its rows per meter (`session_totals`).
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from workbench.core.quality.prices import PriceTable
from workbench.core.quality.refetch import Refetch
from workbench.core.surface_arrays import surface_array
from workbench.core.timeline import SurfaceTimeline

Price = Callable[[str, Sequence[int] | np.ndarray], np.ndarray]
"""`price(meter, seqs)`: the node price of each seq by `meter` (seqs and prices int64 arrays;
an audit prices whole surfaces, one per compaction)."""


@dataclass(frozen=True, slots=True)
class LedgerRow:
    index: int
    compaction_id: Any
    meter: str
    hidden_tokens: int
    summary_tokens: int
    call_input_tokens: int
    call_cache_read_tokens: int
    call_output_tokens: int
    call_source: str
    request_before_seq: int | None
    request_after_seq: int | None
    break_position: int | None
    resent_tokens: int
    resent_source: str
    refetches: int
    refetch_tokens: int
    net_tokens: int
    call_cost: float
    resent_cost: float
    refetch_cost: float
    saving: float
    cost: float

    def as_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _num(value: Any) -> int:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        and value == value and 0 <= value < 2 ** 63 else 0


def _logged_call(usage: Any) -> tuple[int, int, int] | None:
    if not isinstance(usage, Mapping) or "inputTokens" not in usage:
        return None
    read = _num(usage.get("cacheReadTokens"))
    return (_num(usage.get("inputTokens")) + read + _num(usage.get("cacheWriteTokens")), read,
            _num(usage.get("outputTokens")))


def _logged_resent(usage: Any) -> int | None:
    if not isinstance(usage, Mapping) or "cacheReadTokens" not in usage:
        return None
    return _num(usage.get("inputTokens")) + _num(usage.get("cacheWriteTokens"))


def _common(a: np.ndarray, b: np.ndarray) -> int:
    """The length of the common prefix of two node arrays."""
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _sum(prices: Any) -> int:
    return int(np.sum(prices, dtype=np.int64))


def _charged(records: Sequence[Any], around: Sequence[tuple[Any, Any]]) -> set[int]:
    """The records that carry their request's cache break (module doc): of the landed records
    with requests on both sides, the last one per first-request-after."""
    last: dict[Any, int] = {}
    for index, record in enumerate(records):
        before, after = around[index]
        if (before is not None and after is not None and record.replacement_seq is not None
                and record.fold_shadowed_seqs is not None):
            last[(after.seq, after.before)] = index
    return set(last.values())


def ledger(records: Sequence[Any], timeline: SurfaceTimeline, around: Sequence[tuple[Any, Any]],
           after_usage: Callable[[Any], Any], found_refetches: Sequence[Refetch], price: Price,
           meters: Sequence[str], table: PriceTable) -> list[LedgerRow]:
    """Rows for every record and meter (module doc). `around[i]` is the (before, after) model
    attempt of record i (`requests.Attempt`, None when absent); `after_usage(attempt)` its
    logged usage mapping (None when not logged)."""
    by_record: dict[int, list[Refetch]] = {}
    for r in found_refetches:
        by_record.setdefault(r.index, []).append(r)
    charged = _charged(records, around)
    rows: list[LedgerRow] = []
    for index, record in enumerate(records):
        landed = record.replacement_seq is not None and record.fold_shadowed_seqs is not None
        hidden = record.fold_shadowed_seqs if landed else ()
        before, after = around[index]
        surface_b = surface_a = None
        position = None
        if before is not None and after is not None and landed:
            surface_b = surface_array(timeline, before.before - 1)
            surface_a = surface_array(timeline, after.before - 1)
            position = _common(surface_b, surface_a)
        logged_resent = _logged_resent(after_usage(after)) if position is not None else None
        call = _logged_call(record.usage) if record.summary_seq is not None else None
        refetch = [r.result_seq for r in by_record.get(index, ()) if r.result_seq is not None]
        for meter in meters:
            hidden_tokens = _sum(price(meter, hidden))
            summary_tokens = _sum(price(meter, [record.replacement_seq])) if landed else 0
            if call is not None:
                call_in, call_read, call_out = call
                call_source = "logged"
            elif record.summary_seq is not None:
                call_in = _sum(price(meter, surface_array(timeline, record.start_seq)))
                call_read, call_out, call_source = 0, summary_tokens, "estimated"
            else:
                call_in = call_read = call_out = 0
                call_source = "none"
            if position is None or index not in charged:
                resent, resent_source = 0, "none"
            elif logged_resent is not None:
                resent, resent_source = logged_resent, "logged"
            else:
                resent = _sum(price(meter, surface_a[position:]))  # type: ignore[index]
                resent_source = "estimated"
            refetch_tokens = _sum(price(meter, refetch))
            net = hidden_tokens - summary_tokens - resent - refetch_tokens
            call_cost = ((call_in - call_read) * table.cache_miss + call_read * table.cache_hit
                         + call_out * table.output)
            resent_cost = resent * (table.cache_miss - table.cache_hit)
            refetch_cost = refetch_tokens * table.cache_miss
            saving = (hidden_tokens - summary_tokens) * table.cache_hit
            rows.append(LedgerRow(
                index, record.compaction_id, meter, hidden_tokens, summary_tokens, call_in,
                call_read, call_out, call_source, None if before is None else before.seq,
                None if after is None else after.seq, position, resent, resent_source,
                len(by_record.get(index, ())), refetch_tokens, net, call_cost, resent_cost,
                refetch_cost, saving, call_cost + resent_cost + refetch_cost - saving))
    return rows


SUMMED = ("hidden_tokens", "summary_tokens", "call_input_tokens", "call_cache_read_tokens",
          "call_output_tokens", "resent_tokens", "refetches", "refetch_tokens", "net_tokens",
          "call_cost", "resent_cost", "refetch_cost", "saving", "cost")
"""Ledger fields a session total sums."""


def session_totals(rows: Sequence[LedgerRow],
                   meters: Sequence[str] = ()) -> dict[str, dict[str, float]]:
    """Per meter: the sum of every compaction's row (`SUMMED` fields) and the row count; each of
    `meters` has its totals (zeros for a session without compactions)."""
    out: dict[str, dict[str, float]] = {
        meter: {name: 0 for name in SUMMED} | {"compactions": 0} for meter in meters}
    for row in rows:
        total = out.setdefault(row.meter, {name: 0 for name in SUMMED} | {"compactions": 0})
        for name in SUMMED:
            total[name] += getattr(row, name)
        total["compactions"] += 1
    return out
