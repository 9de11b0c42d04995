"""What-if on the real v4 corpus: a policy replay with the settings each log was written with
and DSH's own summaries reproduces the log (every byte, so every trigger point, range, shadowed
seq and price); every counterfactual loads clean, folds and passes the audit; `replace_summary`
with the logged text writes the input back byte for byte. Skips when ../shared is absent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import workbench
from workbench.core.whatif import WhatIfError

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REAL = SHARED / "corpus" / "dsh-real-v4"

COMMON = {"threshold_ratio": 0.75, "headroom_tokens": 1024, "retain_tokens": 2500}
"""The corpus README's common deployment settings (inputs: they are not in the log). The
context window (20 000) and the request maxTokens (2048) are in the log itself."""
PER_LOG = {
    "dev-summary-errors": {"compaction_retries": 0},
    "dev-tool-result-prune-then-compaction": {
        "pruner": {"thresholdChars": 6000, "headChars": 1500, "tailChars": 700}},
}


def _entries() -> list[dict]:
    path = REAL / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []


def _settings(file: str) -> dict:
    return {**COMMON, **PER_LOG.get(file.split("__")[0], {})}


def _load(file: str) -> workbench.Session:
    path = REAL / file
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared corpus not available)")
    return workbench.load(path)


COMPACTING = [e for e in _entries() if e["compaction_start"]]


@pytest.mark.parametrize("entry", COMPACTING, ids=lambda e: e["file"].split("__")[0])
def test_logged_replay_reproduces_the_real_compactions(entry: dict) -> None:
    real = _load(entry["file"])
    cf = real.whatif.policy(summarizer="logged", **_settings(entry["file"]))
    assert cf.verdict == "clean" and cf.label == "logged"
    columns = ["start_seq", "summary_seq", "replacement_seq", "end_seq", "status", "trigger"]
    present = [c for c in columns if c in real.compactions_df().columns]
    assert cf.compactions_df()[present].equals(real.compactions_df()[present])
    real_records = [(r.start_seq, r.status, r.trigger.kind) for r in real.compactions.records]
    assert [(r.start_seq, r.status, r.trigger.kind) for r in cf.compactions.records] == real_records
    assert list(cf.events) == list(real.events)     # shadowed seqs, prices, times: everything


@pytest.mark.parametrize("entry", COMPACTING, ids=lambda e: e["file"].split("__")[0])
def test_other_settings_change_where_compactions_fire(entry: dict) -> None:
    real = _load(entry["file"])
    settings = {**_settings(entry["file"]), "threshold_ratio": 0.5}
    for summarizer in ("truncate", "mask"):
        cf = real.whatif.policy(summarizer=summarizer, **settings)
        assert cf.verdict == "clean", cf.defects[:3]
        report = cf.audit
        assert report.fold_error is None and report.protocol == ()
        assert report.ok
        completed = [f for f in cf.fired if f.get("status") == "completed" and f["trigger"] != "prune"]
        if summarizer == "truncate":
            assert completed, "a lower threshold with a tiny summary compacts"
        for record in completed:
            assert record["summarizer"] == summarizer


@pytest.mark.parametrize("entry", [e for e in _entries() if not e["file"].endswith(".zstd")],
                         ids=lambda e: e["file"].split("__")[0])
def test_replace_summary_with_the_logged_text_writes_the_input_back(entry: dict, tmp_path: Path) -> None:
    real = _load(entry["file"])
    summaries = [e for e in real.events if e["type"] == "compaction/summary"]
    if not summaries:
        cf = real.whatif.policy(summarizer="logged", **_settings(entry["file"]))
    else:
        data = summaries[-1]["data"]
        (block,) = data["summary"]
        cf = real.whatif.replace_summary(data["compactionId"], block["text"])
    out = cf.write(tmp_path / "copy.jsonl")
    assert Path(out).read_bytes() == (REAL / entry["file"]).read_bytes()


def test_replace_summary_with_another_text_keeps_the_bracket() -> None:
    real = _load("dev-long-auto-compaction__session.v4.jsonl")
    first = real.compactions.records[0]
    cid = first.compaction_id
    cf = real.whatif.replace_summary(cid, "Files: src/app.py. Next: run the tests.", label="mine")
    assert cf.verdict == "clean" and cf.audit.ok
    assert len(cf) == len(real)
    summary = cf.events[first.summary_seq]["data"]
    assert summary["summary"] == [{"type": "text", "text": "Files: src/app.py. Next: run the tests."}]
    assert (summary["provider"], summary["model"]) == ("workbench", "mine")
    assert "rawOutput" not in summary and "usage" not in summary
    assert summary["shadowedSeqs"] == real.events[first.summary_seq]["data"]["shadowedSeqs"]
    checkpoint = cf.events[first.replacement_seq]["data"]["content"]
    assert checkpoint[1]["text"] == "Files: src/app.py. Next: run the tests."
    # the nested compaction that hides this checkpoint is re-priced over the new surface
    nested = real.compactions.records[1]
    logged = real.events[nested.summary_seq]["data"]["shadowedTokenCount"]
    assert cf.events[nested.summary_seq]["data"]["shadowedTokenCount"] < logged


def test_replace_summary_refuses_a_summary_dsh_would_reject() -> None:
    real = _load("dev-long-auto-compaction__session.v4.jsonl")
    cid = real.compactions.records[0].compaction_id
    with pytest.raises(WhatIfError, match="shrink check"):
        real.whatif.replace_summary(cid, "x" * 100_000)
    with pytest.raises(WhatIfError, match="no completed compaction"):
        real.whatif.replace_summary("no-such-id", "text")


def test_write_never_overwrites_the_input(tmp_path: Path) -> None:
    source = REAL / "dev-subagent-spawn-child__session.v4.jsonl"
    real = _load(source.name)
    cf = real.whatif.policy(summarizer="truncate", **COMMON)
    before = source.read_bytes()
    with pytest.raises(WhatIfError, match="refusing to write over the input"):
        cf.write(source)
    with pytest.raises(WhatIfError, match="refusing"):
        real.write(source)
    assert source.read_bytes() == before
    zstd = cf.write(tmp_path / "cf.v4.jsonl.zstd")
    again = workbench.load(zstd)
    assert again.verdict == "clean" and list(again.events) == list(cf.events)


def test_default_dsh_settings_never_compact_a_small_window() -> None:
    real = _load("dev-long-auto-compaction__session.v4.jsonl")
    cf = real.whatif.policy(summarizer="truncate")   # headroom 65536 > a 20k window (v4 §5.8)
    assert [f for f in cf.fired if f["trigger"] == "pressure"] == []
    assert cf.compactions.records == ()
