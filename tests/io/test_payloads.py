"""`workbench.io.payloads`: `read_events` hands back exactly the events of the distinct seqs asked
for, in ascending seq order, whatever the storage (a list, a store parsing on demand, raw or
zstd, a v0 log with packed rows) and whatever the density of the seqs;
`seqs_of_type` and `type_reader` answer from the type codes; an `Overlay` serves its kept
events."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.errors import SeqOutOfRange
from workbench.io.payloads import (
    RANDOM_FRACTION,
    Overlay,
    read_events,
    seqs_of_type,
    type_reader,
)
from workbench.io.read import scan_path
from workbench.io.store import EventStore

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT.parent / "shared" / "corpus"
LOGS = sorted(ROOT.glob("sample_logs/*.jsonl*"))
if CORPUS.is_dir():
    LOGS += [min(sorted((CORPUS / d).glob("*.jsonl*")), key=lambda p: p.stat().st_size)
             for d in ("dsh-0.1.2-v0", "dsh-0.1.5-v3") if (CORPUS / d).is_dir()]


def _logs(path: Path) -> tuple[list, EventStore]:
    store = scan_path(path).log.events
    assert isinstance(store, EventStore)
    return list(store), store


@pytest.fixture(scope="module", params=LOGS, ids=[p.name for p in LOGS])
def log(request):
    return _logs(request.param)


def _seq_sets(n: int) -> list[list[int]]:
    return [list(range(n)), list(range(0, n, 2)), list(range(n - 1, -1, -3)),
            [0, n - 1, n // 2, 0], list(range(0, n, 2 * RANDOM_FRACTION)), []]


def test_every_storage_reads_the_same_events_in_seq_order(log) -> None:
    plain, store = log
    n = len(plain)
    for seqs in _seq_sets(n):
        want = [(s, plain[s]) for s in sorted(set(seqs))]
        for events in (plain, store):
            assert list(read_events(events, seqs)) == want
        assert list(read_events(store, range(n))) == [(s, plain[s]) for s in range(n)]


def test_types_come_from_the_type_codes(log) -> None:
    plain, store = log
    kinds = {"assistant/message", "request/header", "compaction/start"}
    want = [s for s, e in enumerate(plain) if e.get("type") in kinds]
    for events in (plain, store, Overlay(store, {})):
        assert seqs_of_type(events, kinds) == want
        type_of = type_reader(events)
        assert [type_of(s) for s in range(len(plain))] == [e.get("type") for e in plain]


def test_an_overlay_serves_its_kept_events(log) -> None:
    plain, store = log
    n = len(plain)
    marker = {"type": "kept", "seq": -1}
    kept = {s: marker for s in range(1, n, 5)}
    view = Overlay(store, kept)
    want = [(s, kept.get(s, plain[s])) for s in range(0, n, 3)]
    assert list(read_events(view, range(0, n, 3))) == want
    assert [view[s] for s in range(0, n, 3)] == [e for _, e in want]
    assert list(read_events(Overlay(view, {0: marker}), [0, 1])) == [(0, marker), (1, marker)]


def test_a_seq_outside_the_log_raises() -> None:
    events = [{"type": "t", "seq": i} for i in range(5)]
    for seqs in ([5], [-1, 2], range(3, 7)):
        with pytest.raises(SeqOutOfRange):
            list(read_events(events, seqs))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=29)),
       st.dictionaries(st.integers(min_value=0, max_value=29), st.none()))
def test_any_seqs_any_overlay(seqs, kept) -> None:
    events = [{"type": "t", "seq": i} for i in range(30)]
    marks = {s: {"type": "kept", "seq": s} for s in kept}
    want = [(s, marks.get(s, events[s])) for s in sorted(set(seqs))]
    assert list(read_events(Overlay(events, marks), seqs)) == want
