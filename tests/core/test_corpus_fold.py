"""Every corpus log folds (v0 fixtures and real v4 logs), with the one known exception; the fold
agrees with what the harness itself logged about its compactions and prunes; the worked examples
of the specs (v0 §4.10, v4 §4.10) come out as written."""
from __future__ import annotations

import random
from pathlib import Path

import pytest
from walk_check import assert_walk_matches

from workbench.core.surface import fold_surface
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import FoldError
from workbench.io.generations import rules_for
from workbench.io.read import read_log

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FILES = sorted(p for p in CORPUS.rglob("*.jsonl*") if p.is_file()) if CORPUS.is_dir() else []
REAL_V4 = [p for p in FILES if p.parent.name == "dsh-real-v4"]
needs_corpus = pytest.mark.skipif(not FILES, reason="../shared/corpus is absent")

# v0 §1.11 item 5 / §8: a hand-edited web fixture whose sourceEventSeqs point past the trimmed
# chunk stream; the reference refuses it.
KNOWN_BROKEN = {"apps--web--cordis-tool-round--session.jsonl": "source_seqs_not_earlier"}


def _load(path: Path):
    log = read_log(path)
    return log.events, rules_for(log.format_version)


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_corpus_log_folds(path: Path) -> None:
    events, version = _load(path)
    timeline = SurfaceTimeline(events, version=version)
    assert_walk_matches(timeline, random.Random(path.name))
    want_kind = KNOWN_BROKEN.get(path.name)
    if want_kind is None:
        fold = fold_surface(events, version=version)
        assert timeline.errors == ()
        assert timeline.final_nodes == fold.nodes
        assert [r.to_json() for r in timeline.replacements] == [
            r.to_json() for r in fold.replacements]
    else:
        with pytest.raises(FoldError) as info:
            fold_surface(events, version=version)
        assert info.value.kind == want_kind
        assert timeline.errors[0].kind == want_kind


def test_known_broken_fixture_is_in_the_corpus() -> None:
    if not FILES:
        pytest.skip("../shared/corpus is absent")
    assert {p.name for p in FILES} >= set(KNOWN_BROKEN)


@needs_corpus
@pytest.mark.parametrize("path", REAL_V4, ids=[p.name for p in REAL_V4])
def test_logged_shadowed_seqs_equal_what_the_fold_removed(path: Path) -> None:
    """compaction/summary and compaction/prune name the nodes their replacement shadows."""
    events, version = _load(path)
    timeline = SurfaceTimeline(events, version=version)
    checked = 0
    for seq, event in enumerate(events):
        if event["type"] == "compaction/summary":
            # the checkpoint cites [startSeq, summarySeq, ...shadowedSeqs] (v4 §4.10)
            reps = [r for r in timeline.replacements
                    if seq in (events[r.seq].get("sourceEventSeqs") or ())]
        elif event["type"] == "compaction/prune":
            reps = [timeline.replacement_by_seq[seq + 1]]   # the pruned tool/result follows it
        else:
            continue
        assert len(reps) == 1, f"seq {seq}: one replacement per logged shadow set"
        assert list(reps[0].shadowed) == event["data"]["shadowedSeqs"], f"seq {seq}"
        # the surface just before the replacement held exactly that span
        before = timeline.surface_at(reps[0].seq - 1)
        i = before.index(reps[0].shadowed[0])
        assert before[i:i + len(reps[0].shadowed)] == reps[0].shadowed
        checked += 1
    assert checked == len(timeline.replacements)


@needs_corpus
def test_v4_worked_example_nested_checkpoints() -> None:
    events, version = _load(CORPUS / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl")
    timeline = SurfaceTimeline(events, version=version)
    first = timeline.replacement_by_seq[148]
    assert (first.start, first.end, len(first.shadowed)) == (8, 115, 27)
    assert timeline.surface_at(148)[:2] == (7, 148)      # the system head stays node 0
    second = timeline.replacements[1]
    assert (second.start, second.end, second.shadowed[0]) == (148, 216, 148)
    assert set(first.shadowed) <= set(timeline.lineage(second.seq))
    assert timeline.status_at_end(7) == "current"


@needs_corpus
def test_v0_worked_example_compaction_recovery() -> None:
    path = CORPUS / "dsh-fixtures" / "examples--headless-agent--compaction-recovery--session.jsonl"
    events, version = _load(path)
    fold = fold_surface(events, version=version)
    assert fold.nodes == (21, 13, 15, 28)
    assert [r.to_json() for r in fold.replacements] == [
        {"seq": 21, "start": 4, "end": 4, "shadowedSeqs": [4]}]
