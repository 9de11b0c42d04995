"""Meters over a lazily parsed store: `iter_positions` yields what reading by position yields,
whatever the positions (dense or sparse, ascending or not, duplicates, out of range), and
`LogTokens` counts a lazy log exactly like the same log kept in memory."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from workbench.core.load import evaluate_path
from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.meters import iter_positions

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
REAL_V4 = sorted((CORPUS / "dsh-real-v4").glob("*.jsonl*")) if CORPUS.is_dir() else []
FIXTURES = sorted((CORPUS / "dsh-fixtures").glob("*.jsonl*")) if CORPUS.is_dir() else []
PICKED = [max(REAL_V4, key=lambda p: p.stat().st_size)] if REAL_V4 else []
PICKED += [max(FIXTURES, key=lambda p: p.stat().st_size)] if FIXTURES else []
needs_corpus = pytest.mark.skipif(not PICKED, reason="../shared/corpus is absent")


class _Lazy(Sequence):
    """A list posing as a lazily parsed store, counting reads by position and in order."""

    lazy = True

    def __init__(self, items: list) -> None:
        self._items = items
        self.random_reads = 0
        self.iterated = 0

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, index):  # type: ignore[override]
        self.random_reads += 1
        return self._items[index]

    def __iter__(self):
        for item in self._items:
            self.iterated += 1
            yield item


ITEMS = [{"seq": i} for i in range(40)]


@pytest.mark.parametrize("positions", [
    pytest.param(None, id="all"),
    pytest.param(list(range(0, 40, 2)), id="dense-ascending"),
    pytest.param(range(5, 40, 3), id="range"),
    pytest.param([39], id="sparse"),
    pytest.param([7, 3, 9, 1, 30, 2], id="unsorted"),
    pytest.param([1, 1, 2, 3, 5, 8], id="duplicates"),
    pytest.param([], id="none"),
])
def test_iter_positions_matches_reads_by_position(positions) -> None:
    want = [(p, ITEMS[p]) for p in (range(40) if positions is None else positions)]
    assert list(iter_positions(ITEMS, positions)) == want
    assert list(iter_positions(_Lazy(ITEMS), positions)) == want


def test_dense_ascending_positions_read_a_lazy_store_in_order() -> None:
    lazy = _Lazy(ITEMS)
    list(iter_positions(lazy, range(0, 40, 2)))
    assert (lazy.random_reads, lazy.iterated) == (0, 40)
    lazy = _Lazy(ITEMS)
    list(iter_positions(lazy, [3, 30]))  # sparse: read by position
    assert (lazy.random_reads, lazy.iterated) == (2, 0)


def test_out_of_range_position_raises_like_a_read() -> None:
    with pytest.raises(IndexError):
        list(iter_positions(_Lazy(ITEMS), list(range(0, 40, 2)) + [40]))


@needs_corpus
@pytest.mark.parametrize("path", PICKED, ids=[p.name for p in PICKED])
@pytest.mark.parametrize("meter", ["dsh", "o200k"])
def test_lazy_log_counts_equal_kept(path: Path, meter: str) -> None:
    counts = []
    for keep in (None, {"keep_events": 0, "keep_bytes": 0}):
        log = evaluate_path(path, keep=keep).log
        assert bool(getattr(log.events, "lazy", False)) is (keep is not None)
        counts.append(LogTokens(log.events, version=log.format_version, progress=False).prices(meter))
    assert np.array_equal(counts[0], counts[1])
    assert counts[0].sum() > 0


@needs_corpus
@pytest.mark.parametrize("path", PICKED, ids=[p.name for p in PICKED])
@pytest.mark.parametrize("meter", ["dsh", "o200k"])
@pytest.mark.parametrize("step", [1, 2, 9])
def test_chosen_positions_only_are_counted(path: Path, meter: str, step: int) -> None:
    """Every other (or every ninth) message event: the same counts read in order from a lazy
    store or by position from a list, and 0 for the events not chosen."""
    from workbench.core.tokens.counts import positions_of_types
    from workbench.core.tokens.heuristic import message_types
    from workbench.core.tokens.meters import get_meter
    log = evaluate_path(path).log
    events = list(log.events)
    chosen = positions_of_types(events, message_types(log.format_version))[::step]
    m = get_meter(meter, version=log.format_version)
    kept = m.count_events(events, positions=chosen)
    lazy_events = _Lazy(events)
    lazy = m.count_events(lazy_events, positions=chosen)
    assert np.array_equal(kept, lazy)
    assert lazy_events.random_reads == (0 if len(chosen) * 10 >= len(events) else len(chosen))
    others = np.ones(len(events), dtype=bool)
    others[chosen] = False
    assert not kept[others].any()
    assert kept[chosen].sum() > 0


@pytest.mark.parametrize("reads", [
    pytest.param(list(range(40)), id="every"),
    pytest.param([0, 5, 6, 39], id="gaps"),
    pytest.param([3, 3, 4], id="repeat"),
    pytest.param([10, 2, 11, 12, 1], id="backwards"),
    pytest.param([-1, 5, -40], id="negative"),
    pytest.param([39, 39], id="last"),
])
def test_ascending_reads_view_reads_like_the_store(reads) -> None:
    from workbench.core.tokens.counts import AscendingReads
    lazy = _Lazy(ITEMS)
    view = AscendingReads(lazy)
    assert len(view) == 40
    assert [view[i] for i in reads] == [ITEMS[i] for i in reads]
    assert lazy.iterated <= 40
    with pytest.raises(IndexError):
        view[40]


@needs_corpus
@pytest.mark.parametrize("path", PICKED, ids=[p.name for p in PICKED])
def test_lazy_log_shape_and_usage_equal_kept(path: Path) -> None:
    results = []
    for keep in (None, {"keep_events": 0, "keep_bytes": 0}):
        log = evaluate_path(path, keep=keep).log
        tokens = LogTokens(log.events, version=log.format_version, progress=False)
        results.append((tokens.surface_totals("dsh").tolist(), tokens.shape.ops, tokens.usage()))
    assert results[0] == results[1]
