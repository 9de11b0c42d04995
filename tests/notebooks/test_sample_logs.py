"""The bundled sample logs: up to date with their script, clean, folding, auditing as documented."""
from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from workbench.core.compaction.audit import audit_log
from workbench.core.load import load_log
from workbench.core.timeline import SurfaceTimeline
from workbench.io.discover import find_sessions
from workbench.io.jsjson import js_len

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs"
LOGS = sorted(SAMPLES.rglob("*.jsonl*"))

# bracket statuses per log, in log order; prunes per log
EXPECTED = {
    "seed-story__session.jsonl": (["completed"], 0),
    "multi-day__session.v4.jsonl.zstd": (["completed"] * 4, 0),
    "failed-summaries__session.v4.jsonl": (["failed", "failed", "failed", "completed"], 0),
    "crash-mid-compaction__session.v4.jsonl": (["completed", "interrupted"], 0),
    "crash-then-resume__session.v4.jsonl": (["completed", "stale", "completed"], 1),
    "pruning__session.v4.jsonl": (["completed"], 4),
    "chinese__session.v4.jsonl": (["completed"], 0),
    "hostile-payloads__session.v4.jsonl": (["completed"], 0),
    "session.v4.jsonl.zstd": ([], 0),       # the three sessions of the --work-shop-- root
}


def _id(path: Path) -> str:
    return path.name if path.parent == SAMPLES else f"{path.parent.name}/{path.name}"


def test_samples_are_up_to_date_with_their_script() -> None:
    done = subprocess.run([sys.executable, str(SAMPLES / "make_samples.py"), "--check"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr


def test_every_sample_is_listed_in_the_readme() -> None:
    readme = (SAMPLES / "README.md").read_text(encoding="utf-8")
    for path in LOGS:
        name = path.name if path.parent == SAMPLES else "--work-shop--/"
        assert f"`{name}" in readme


@pytest.mark.parametrize("path", LOGS, ids=_id)
def test_sample_loads_clean_folds_and_audits_as_documented(path: Path) -> None:
    log = load_log(path)
    assert log.verdict == "clean" and log.defects == []
    timeline = SurfaceTimeline(log.events, version=log.format_version or 0)
    assert timeline.errors == ()
    report = audit_log(log)
    statuses, prunes = EXPECTED[path.name]
    assert [c.record.status for c in report.compactions] == statuses
    assert len(report.prunes) == prunes
    assert report.fold_error is None and report.protocol == ()
    for audit in report.compactions:
        failing = [c.name for c in audit.checks if not c.ok]
        assert failing == (["bracket_closed"] if audit.record.status == "interrupted" else [])
    assert all(p.ok for p in report.prunes)


def test_seed_story_is_the_story() -> None:
    log = load_log(SAMPLES / "seed-story__session.jsonl")
    timeline = SurfaceTimeline(log.events, version=0)
    assert timeline.surface_at(10) == (10, 6, 7)
    assert [e["type"] for e in log.events[8:12]] == [
        "compaction/start", "compaction/summary", "user/message", "compaction/end"]
    text = log.events[2]["data"]["message"]["content"][0]["content"][0]["text"]
    assert js_len(text) == 80_000                      # about 20,000 tokens, still in the log
    assert timeline.shadowed_by(2).hidden_at == 10


def test_session_root_links_parent_and_children() -> None:
    refs = find_sessions(SAMPLES / "--work-shop--")
    parent, *children = refs
    assert parent.session_id == "session-parent" and parent.depth == 0
    assert sorted(parent.children) == sorted(c.session_id for c in children)
    assert Counter((c.origin, c.depth, c.is_seeded) for c in children) == Counter(
        {("subagent", 1, False): 1, ("subagent", 1, True): 1})


def test_hostile_log_carries_every_payload() -> None:
    sys.path.insert(0, str(SAMPLES))
    import sample_texts
    log = load_log(SAMPLES / "hostile-payloads__session.v4.jsonl")
    texts = []

    def strings(value: object) -> None:
        if isinstance(value, str):
            texts.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                strings(item)
        elif isinstance(value, list):
            for item in value:
                strings(item)

    for event in log.events:
        strings(event)
    joined = "\n".join(texts)
    for payload in sample_texts.PAYLOADS:
        assert payload in joined
