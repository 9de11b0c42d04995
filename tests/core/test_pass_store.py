"""The pass's one per-seq store (`core.log_pass`, `core.index_builder`, `core.index_columns`):
a sparse column sealed in any chunks is the dense column; the audit's facts that read the price
column and the index's tool facts equal the facts an `EventFacts` computes on its own."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.analysis import AnalysedLog
from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.index_columns import SparseInts
from workbench.core.log_pass import LogPass

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
LOGS = sorted(p for p in SAMPLES.glob("*.jsonl*") if p.is_file())


def _reference(n: int, puts: list[tuple[int, int]], default: int, held: bool) -> list[int]:
    out, state, given_ = [], default, dict(puts)
    for row in range(n):
        if held:
            state = given_.get(row, state)
            out.append(state)
        else:
            out.append(given_.get(row, default))
    return out


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 60), st.data(), st.booleans())
def test_sparse_ints_sealed_in_chunks_are_the_dense_column(n, data, held) -> None:
    rows = sorted(data.draw(st.sets(st.integers(0, max(n - 1, 0)), max_size=n)) if n else [])
    puts = [(row, data.draw(st.integers(-5, 5))) for row in rows]
    cuts = sorted(data.draw(st.sets(st.integers(0, n), max_size=4)) | {n})
    column = SparseInts("q", -9, held=held)
    pending = iter(puts)
    nxt = next(pending, None)
    got: list[int] = []
    for stop in cuts:
        while nxt is not None and nxt[0] < stop:   # rows are put before the seal past them
            column.rows.append(nxt[0])
            column.values.append(nxt[1])
            nxt = next(pending, None)
        got.extend(column.dense(stop).tolist())
    assert got == _reference(n, puts, -9, held)


@pytest.mark.parametrize("path", LOGS, ids=[p.name for p in LOGS])
@pytest.mark.parametrize("index", [True, False])
def test_facts_read_from_the_store_equal_their_own(path: Path, index: bool) -> None:
    """The pass's facts keep no message value where the node price holds it and (with the
    index) read the deltas from its tool facts: the same per-seq values as facts computed
    from every event alone (`EventFacts.feed`, no price given)."""
    log = AnalysedLog.load(path, ride=False)
    events, version = list(log.events), log.version
    passed = LogPass.run(events, version=version, index=index).finish(events)
    own = EventFacts.growing(events, version=version, texts=False)
    for seq, event in enumerate(events):
        own.feed(seq, event)
    own.finish()
    assert passed.facts.count == own.count == len(events)
    assert list(passed.facts.message) == list(own.message)
    assert list(passed.facts.delta) == list(own.delta)
    assert passed.facts.misplaced == own.misplaced and passed.facts.rewritten == own.rewritten
    assert list(passed.facts.marked) == list(own.marked) and passed.facts.kept == own.kept
    prices = np.asarray(passed.prices)
    assert prices.dtype == np.int64 and len(prices) == len(events)
