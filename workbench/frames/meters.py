"""Token meters as frame columns. Layer: frames (core meters, numpy).

A frame that shows tokens shows one ``<prefix>_<meter>`` column per requested meter
(`workbench.core.tokens.meters`: ``dsh`` the DSH heuristic — the default and the one DSH itself
uses for compaction decisions, v0 spec §6 — and the real tokenizers ``o200k``, ``cl100k``,
``deepseek``). Meter names are validated before any counting, so a typo fails at once with the
list of known meters (`MeterError`).

Node prices of the ``dsh`` meter come from the session's cached price array (computed once per
log); other meters count only the events a frame needs, or the whole log once (cached per
session) for per-seq frames. The whole log is read once for every real meter asked together,
and only its candidate node events (a type that can derive a message: the index's node price is
not -1; every other event counts 0), through `workbench.io.payloads.read_events`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.core.tokens.meters import get_meter, node_pieces, parse_meter_names
from workbench.core.tokens.pieces import NodePieces
from workbench.frames.columns import Column, Columns
from workbench.io.payloads import read_events

if TYPE_CHECKING:
    from workbench.core.analysis import AnalysedLog

DEFAULT_METERS: tuple[str, ...] = ("dsh",)
"""Meters a frame shows unless told otherwise: the DSH heuristic (exact, fast, offline)."""


def check_meters(meters: str | Sequence[str]) -> tuple[str, ...]:
    """Validated, de-duplicated canonical meter names (``"dsh,o200k"`` or a sequence)."""
    return parse_meter_names(meters)


def meter_columns(meters: Sequence[str], prefix: str, doc: str) -> Columns:
    """One ``Int64`` column ``<prefix>_<meter>`` per meter, read from the source key of that name."""
    return tuple(Column(f"{prefix}_{m}", "Int64", _getter(f"{prefix}_{m}"), doc.format(meter=m))
                 for m in meters)


def _getter(key: str):
    return lambda source: source[key]


def node_prices(session: AnalysedLog, meter: str, seqs: Sequence[int]) -> np.ndarray:
    """Price of the node events `seqs` by `meter` (0 for events that project to no message)."""
    seqs = np.asarray(seqs, dtype=np.int64)
    if meter == "dsh":
        return np.maximum(session.prices[seqs], 0) if len(seqs) else np.zeros(0, np.int64)
    cached = session.meter_counts.get(meter)
    if cached is not None:
        return cached[seqs]
    m = get_meter(meter, version=session.version)
    events = session.events
    return np.fromiter((m.count_event(events[int(s)]) for s in seqs), dtype=np.int64,
                       count=len(seqs))


def log_prices(session: AnalysedLog, meter: str, *,
               progress: bool | Callable[[int, str], Any] = False) -> np.ndarray:
    """Per-seq node prices of the whole log by `meter` (computed once per session)."""
    if meter == "dsh":
        return np.maximum(session.prices, 0)
    fill_log_prices(session, (meter,), progress=progress)
    return session.meter_counts[meter]


def fill_log_prices(session: AnalysedLog, meters: Sequence[str], *,
                    progress: bool | Callable[[int, str], Any] = False) -> None:
    """Price the whole log by every real meter of `meters` not yet cached, reading the log's
    candidate node events once for all of them (see the module doc). `progress`: False, True
    (a tqdm bar on a long count) or a factory ``(total, desc) -> bar`` of objects with
    ``update(n)`` and ``close()`` (a widget's own bar)."""
    missing = [m for m in dict.fromkeys(meters) if m != "dsh" and m not in session.meter_counts]
    if not missing:
        return
    counters = [get_meter(m, version=session.version) for m in missing]   # a missing one fails now
    pieces = _node_pieces(session, 0, progress)
    for meter, counter in zip(missing, counters):
        session.meter_counts[meter] = counter.count_pieces(pieces, progress=progress)


def _node_pieces(session: AnalysedLog, start: int,
                 progress: bool | Callable[[int, str], Any] = False) -> NodePieces:
    """The pieces of the candidate node events from seq `start` on (module doc), read once;
    positions count from `start`."""
    nodes = np.flatnonzero(session.prices[start:] >= 0)
    items: Iterable[tuple[int, Any]] = (
        (seq - start, event) for seq, event in read_events(session.events, (nodes + start).tolist()))
    if callable(progress):
        items = _reported(items, progress(len(nodes), "messages read"))
    return node_pieces(items, len(session) - start, session.version)


def _reported(items: Iterable[Any], bar: Any, every: int = 1024) -> Iterator[Any]:
    """`items`, telling `bar` every `every` items read (closed at the end)."""
    done = 0
    try:
        for done, item in enumerate(items, 1):
            if done % every == 0:
                bar.update(every)
            yield item
        bar.update(done % every)
    finally:
        bar.close()


def extend_log_prices(session: AnalysedLog, start: int) -> None:
    """Extend every real meter's cached counts by the events from `start` on (a followed log
    grew: only the appended events' pieces are read)."""
    n = len(session)
    if not session.meter_counts or start >= n:
        return
    pieces = _node_pieces(session, start)
    for meter, counts in list(session.meter_counts.items()):
        added = get_meter(meter, version=session.version).count_pieces(pieces)
        session.meter_counts[meter] = np.concatenate([counts[:start], added])
