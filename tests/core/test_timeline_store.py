"""The timeline over a loaded log's store (events parsed on demand, read in order through the
store's iterator) equals the timeline over the same events in a plain list, and a sequence
whose iterator runs past its length is never read beyond it."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from workbench.core.load import evaluate_path
from workbench.core.timeline import SurfaceTimeline
from workbench.io.store import EventStore

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FILES = sorted(p for p in CORPUS.rglob("*.jsonl*") if p.is_file()) if CORPUS.is_dir() else []
# the three largest logs of each corpus (v0 fixtures, real v4 logs with compactions and prunes)
PICKED = [p for d in sorted({f.parent for f in FILES})
          for p in sorted((f for f in FILES if f.parent == d), key=lambda f: f.stat().st_size)[-3:]]
needs_corpus = pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")


@needs_corpus
@pytest.mark.parametrize("path", PICKED, ids=[p.name for p in PICKED])
def test_store_timeline_equals_the_listed_events(path: Path) -> None:
    log = evaluate_path(path).log
    assert isinstance(log.events, EventStore)
    n = len(log.events)
    lazy = SurfaceTimeline(log.events, version=log.format_version)
    kept = SurfaceTimeline(list(log.events), version=log.format_version)
    assert [r.to_json() for r in lazy.replacements] == [r.to_json() for r in kept.replacements]
    assert [e.message for e in lazy.errors] == [e.message for e in kept.errors]
    assert lazy.final_nodes == kept.final_nodes
    for seq in range(n):
        assert lazy.surface_at(seq) == kept.surface_at(seq), seq
        assert lazy.status_at_end(seq) == kept.status_at_end(seq), seq


class _OverReading(Sequence):
    """A sequence whose iterator fails when asked for an element past `len` (like a reader that
    feeds a scanner as the fold reads in order)."""

    def __init__(self, events: list[dict]) -> None:
        self._events = events

    def __len__(self) -> int:
        return len(self._events)

    def __getitem__(self, index):  # type: ignore[override]
        return self._events[index]

    def __iter__(self):
        yield from self._events
        raise AssertionError("read past the end")


def test_fold_reads_no_further_than_the_length() -> None:
    events = [{"seq": 0, "type": "user/message", "surfaceOp": "append",
               "data": {"role": "user", "content": [{"type": "text", "text": "hi"}]}}]
    timeline = SurfaceTimeline(_OverReading(events), version=4)
    assert timeline.final_nodes == (0,)
