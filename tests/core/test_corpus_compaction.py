"""The compaction audit over real logs: every attempt of `shared/corpus/dsh-real-v4` (driven by
its manifest) and of the v0 fixture `compaction-recovery` gets the right status, and for every
completed compaction the logged `shadowedTokenCount` equals the heuristic over what the fold hid
(v0/v4 spec §6.5). Skips when ../shared is absent."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from workbench.core.compaction.audit import AuditReport, audit_log
from workbench.core.load import load_log
from workbench.io.store import EventStore

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REAL = SHARED / "corpus" / "dsh-real-v4"
RECOVERY = (SHARED / "corpus" / "dsh-fixtures"
            / "examples--headless-agent--compaction-recovery--session.jsonl")


def _manifest() -> list[dict]:
    path = REAL / "manifest.json"
    if not path.is_file():
        return []
    return json.loads(path.read_text(encoding="utf-8"))


def _audit(path: Path) -> AuditReport:
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared corpus not available)")
    return audit_log(load_log(path))


@pytest.mark.parametrize("entry", _manifest(), ids=lambda e: e["file"].split("__")[0])
def test_real_v4_log_statuses_and_prices(entry: dict) -> None:
    report = _audit(REAL / entry["file"])
    records = [c.record for c in report.compactions]
    assert len(records) == entry["compaction_start"]
    assert [r.error for r in records if r.status == "failed"] == entry["compaction_end_errors"]
    assert [r.start_seq for r in records if r.status in ("interrupted", "stale")] == \
        entry["compaction_unclosed_start_seqs"]
    assert sum(r.trigger.kind == "manual" for r in records) == entry["compaction_manual_starts"]
    assert len(report.prunes) == entry["compaction_prune"]
    for audit in report.compactions:
        if audit.record.status == "completed":
            assert audit.record.replacement_landed
            assert audit.computed_shadowed_tokens == audit.record.logged_shadowed_tokens
    for prune in report.prunes:
        assert prune.record.original_tokens == prune.record.logged_shadowed_tokens
    assert report.fold_error is None and report.protocol == ()
    failing = [(a.record.start_seq, c.name) for a in report.compactions for c in a.checks
               if not c.ok]
    killed = entry["file"].startswith("dev-killed-mid-compaction__")
    expected = [(255, "bracket_closed")] if killed else []
    assert failing == expected
    assert report.ok == (not expected)


def test_killed_mid_compaction_is_interrupted_then_stale_after_resume() -> None:
    killed = _audit(REAL / "dev-killed-mid-compaction__session.v4.jsonl")
    resumed = _audit(REAL / "dev-killed-mid-compaction-then-resumed__session.v4.jsonl")
    before = killed.compactions[1].record
    after = resumed.compactions[1].record
    assert (before.start_seq, before.status, before.end_seed_seq) == (255, "interrupted", None)
    assert (after.start_seq, after.status, after.end_seed_seq) == (255, "stale", 258)
    assert resumed.compactions[2].record.status == "completed"


def test_overflow_recovery_in_the_large_log() -> None:
    report = _audit(REAL / "dev-large-multistep__session.v4.jsonl")
    overflow = [a.record for a in report.compactions if a.record.trigger.kind == "overflow"]
    assert [(r.start_seq, r.end_seq) for r in overflow] == [(4290, 4294)]


def test_v0_compaction_recovery_fixture() -> None:
    report = _audit(RECOVERY)
    (audit,) = report.compactions
    r = audit.record
    assert (r.start_seq, r.summary_seq, r.replacement_seq, r.end_seq, r.status) == (
        19, 20, 21, 22, "completed")
    assert r.trigger.kind == "overflow"
    assert r.fold_shadowed_seqs == (4,) and r.logged_shadowed_tokens == 266
    assert audit.computed_shadowed_tokens == 266 and audit.summary_tokens == 116
    assert report.ok


@pytest.mark.parametrize("name", [
    "dev-web-manual-and-auto-compaction__session.v4.jsonl",
    "dev-tool-result-prune-then-compaction__session.v4.jsonl",
    "dev-zstd-auto-compaction__session.v4.jsonl.zstd",
], ids=["web-manual", "prune", "zstd"])
def test_the_audit_does_not_depend_on_the_storage(name: str) -> None:
    """A loaded log keeps its events on disk and the audit reads them through the store's type
    codes and payload reads; the same events in a plain list (a rebuilt log) give the same
    report, field for field."""
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared corpus not available)")
    stored = load_log(path)
    assert isinstance(stored.events, EventStore)
    listed = dataclasses.replace(stored, events=list(stored.events))
    assert audit_log(stored).as_json() == audit_log(listed).as_json()


def test_v0_fixture_audit_does_not_depend_on_the_storage() -> None:
    if not RECOVERY.is_file():
        pytest.skip(f"{RECOVERY} is absent (../shared corpus not available)")
    stored = load_log(RECOVERY)
    listed = dataclasses.replace(stored, events=list(stored.events))
    assert audit_log(stored).as_json() == audit_log(listed).as_json()
