"""Every log of the shared corpus builds every frame, and the frames agree with the CLI outputs
of the earlier subcommands: `info` (counts, verdict, defects), `fold` (surface, replacements),
`audit` (compaction statuses, prices, verdicts) and `tokens` (surface token totals).

The CLI runs in-process (`workbench.cli.main.main`) with `--json`; each log is compared field
by field. Reads ../shared; skipped with a reason when it is absent."""
from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli.main import main
from workbench.frames.schema import FRAME_NAMES
from workbench.session import Session, load

CORPUS = Path(__file__).resolve().parents[2].parent / "shared" / "corpus"


def corpus_logs() -> list:
    if not CORPUS.is_dir():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="../shared/corpus is absent: the corpus agreement tests are skipped"))]
    files = sorted(p for p in CORPUS.rglob("*") if p.name.endswith((".jsonl", ".jsonl.zstd")))
    return [pytest.param(p, id=f"{p.parent.name}/{p.name}") for p in files]


def cli_json(capsys, *args: str) -> tuple[int, dict]:
    code = main([*args, "--json"])
    out = capsys.readouterr().out.strip()
    return code, json.loads(out.splitlines()[-1]) if out else {}


@pytest.mark.slow
@pytest.mark.parametrize("path", corpus_logs())
def test_frames_agree_with_the_cli(path: Path, capsys) -> None:
    session: Session = load(path)
    frames = session.frames()
    assert set(frames) == set(FRAME_NAMES)
    events, turns = frames["events"], frames["turns"]

    # info: counts, verdict, defects
    code, info = cli_json(capsys, "info", str(path))
    assert info["events"] == len(events)
    assert info["turns"] == len(turns)
    assert info["steps"] == int(turns["steps"].sum()) + int(
        ((events["type"] == "step/start") & events["turn"].isna()).sum())
    assert info["event_types"] == {k: int(v) for k, v in
                                   events["type"].astype(str).value_counts().items()}
    assert info["verdict"] == session.verdict
    assert len(info["defects"]) == len(frames["defects"])
    assert [d["rule"] for d in info["defects"]] == frames["defects"]["rule"].tolist()

    # fold: the surface at the end and every replacement (the CLI stops at a fold error)
    code, fold = cli_json(capsys, "fold", str(path))
    rejected = events.loc[events["surface_status"] == "rejected", "seq"].tolist()
    if "error" in fold:
        assert rejected and rejected[0] == fold["error"]["seq"]
    else:
        assert not rejected
        assert fold["nodes"] == frames["surface"]["seq"].tolist()
        reps = frames["replacements"]
        assert [r["seq"] for r in fold["replacements"]] == reps["seq"].tolist()
        assert [r["shadowed_seqs"] for r in fold["replacements"]] == [
            list(s) for s in reps["shadowed_seqs"]]
        last = frames["timeline"]["replace_generation"]
        assert fold["replace_generation"] == (int(last.iloc[-1]) if len(last) else 0)

    # audit: one row per attempt with the same status, prices and verdicts
    code, audit = cli_json(capsys, "audit", str(path))
    compactions, prunes = frames["compactions"], frames["prunes"]
    assert [c["status"] for c in audit.get("compactions", [])] == \
        compactions["status"].astype(str).tolist()
    assert [c["start_seq"] for c in audit.get("compactions", [])] == \
        compactions["start_seq"].tolist()
    assert [c["computed_shadowed_tokens"] for c in audit.get("compactions", [])] == \
        [None if pd.isna(x) else int(x) for x in compactions["shadowed_tokens"]]
    assert [c["ok"] for c in audit.get("compactions", [])] == compactions["audit_ok"].tolist()
    assert [p["prune_seq"] for p in audit.get("prunes", [])] == prunes["prune_seq"].tolist()

    # tokens: the heuristic surface total at the end
    if not rejected and len(events):
        code, tokens = cli_json(capsys, "tokens", str(path), "--meter", "dsh")
        dsh = tokens["meters"]["dsh"]
        surface = frames["surface"]
        assert dsh["surface"] == int(surface["tokens_dsh"].sum())
        assert dsh["surface"] == int(frames["timeline"]["surface_tokens_dsh"].iloc[-1])
        assert [n["tokens"] for n in dsh["nodes"]] == surface["tokens_dsh"].tolist()


def manifest_entries() -> list:
    path = CORPUS / "dsh-real-v4" / "manifest.json"
    if not path.is_file():
        return [pytest.param(None, marks=pytest.mark.skip(
            reason="../shared/corpus/dsh-real-v4/manifest.json is absent"))]
    return [pytest.param(e, id=e["file"]) for e in json.loads(path.read_text())]


@pytest.mark.parametrize("entry", manifest_entries())
def test_real_logs_match_their_manifest(entry: dict) -> None:
    """The counts the corpus manifest states, read back from the frames."""
    session = load(CORPUS / "dsh-real-v4" / entry["file"])
    compactions = session.compactions_df()
    assert len(session.events_df()) == entry["events"]
    assert len(compactions) == entry["compaction_start"]
    assert int(compactions["summary_seq"].notna().sum()) == entry["compaction_summary"]
    assert int(compactions["end_seq"].notna().sum()) == entry["compaction_end"]
    assert compactions["error"].dropna().tolist() == entry["compaction_end_errors"]
    assert compactions.loc[compactions["end_seq"].isna(), "start_seq"].tolist() == \
        entry["compaction_unclosed_start_seqs"]
    assert int((compactions["trigger"] == "manual").sum()) == entry["compaction_manual_starts"]
    assert len(session.prunes_df()) == entry["compaction_prune"]
    assert len(session.replacements_df()) == entry["surface_replace_ops"]
    calls = session.tool_calls_df()
    assert int(calls["call_seq"].notna().sum()) == entry["tool_calls"]
    results = int(calls["result_seq"].notna().sum()) + int(calls["pruned_seq"].notna().sum())
    assert results == entry["tool_results"]  # the manifest counts pruned copies too
    assert int((session.events_df()["type"] == "session/end-seed").sum()) == entry["end_seeds"]
