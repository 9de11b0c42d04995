"""`workbench probes` and the audit CLI's quality numbers on the built log of
`quality_script` (every anchor known in advance) and on a real log."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from quality_script import SUMMARY_1, quality_script

from workbench.cli.main import main

REAL = (Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"
        / "dev-long-auto-compaction__session.v4.jsonl")


@pytest.fixture(scope="module", params=[4, 0], ids=["v4", "v0"])
def written(request, tmp_path_factory):
    b = quality_script(request.param)
    name = "session.v4.jsonl" if request.param >= 4 else "session.jsonl"
    path = tmp_path_factory.mktemp("probes") / name
    b.write(path)
    return b, path


def test_probe_samples(written, tmp_path: Path, capsys) -> None:
    b, path = written
    out = tmp_path / "probes.jsonl"
    assert main(["probes", str(path), "-o", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    got = {(s["metadata"]["compaction_id"], s["metadata"]["kind"], s["metadata"]["status"],
            s["target"]) for s in samples}
    c1, c2 = b.first.compaction_id, b.second.compaction_id
    assert got == {
        (c1, "path", "kept", "src/app.py"), (c1, "path", "lost", "setup.cfg"),
        (c1, "constraint", "lost", "Never edit setup.cfg by hand."),
        (c1, "identifier", "kept", "parse_config"), (c1, "error", "kept", "KeyError"),
        (c1, "command", "kept", "pytest -q tests"), (c1, "number", "lost", "3"),
        (c1, "error", "lost", "exit code 1"),
        (c2, "path", "lost", "src/app.py"), (c2, "identifier", "kept", "parse_config"),
        (c2, "error", "lost", "KeyError"), (c2, "command", "lost", "pytest -q tests"),
        (c2, "url", "lost", "https://docs.example.com/fix"),
        (c2, "identifier", "lost", "9f8e7d6c"), (c2, "path", "kept", "README.md")}
    ids = [s["id"] for s in samples]
    assert len(set(ids)) == len(ids)
    first = next(s for s in samples if s["metadata"]["compaction_id"] == c1)
    assert SUMMARY_1 in first["input"]                  # the surface after the compaction
    assert set(first) == {"input", "target", "id", "metadata"}
    number = next(s for s in samples if s["metadata"]["kind"] == "number")
    assert "collected _____ items" in number["input"]
    assert main(["probes", str(path), "-o", str(out), "--status", "lost", "--per-kind", "1",
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["samples"] == len(out.read_text(encoding="utf-8").splitlines())
    assert {json.loads(x)["metadata"]["status"] for x in out.read_text().splitlines()} == {"lost"}


def test_probes_usage_errors(written, capsys) -> None:
    _, path = written
    before = path.read_bytes()
    assert main(["probes", str(path), "-o", str(path)]) == 2
    assert path.read_bytes() == before
    assert main(["probes", str(path), "--json"]) == 2
    assert main(["probes", str(path.parent / "missing.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err


@pytest.mark.parametrize("argv, message", [
    (["--per-kind", "0"], "--per-kind must be at least 1 (got 0)"),
    (["--json"], "--json needs -o (the samples go to the file)")])
def test_probes_bad_options_print_the_usage_line(written, capsys, argv, message) -> None:
    """README: a usage error prints the subcommand's usage line, then one error line."""
    _, path = written
    assert main(["probes", str(path), *argv]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].startswith("usage: workbench probes ")
    assert lines[-1] == f"workbench probes: error: {message}"


def test_audit_json_quality(written, capsys) -> None:
    b, path = written
    assert main(["audit", str(path), "--json", "--meter", "dsh,o200k"]) == 0
    report = json.loads(capsys.readouterr().out)
    quality = report["quality"]
    assert quality["prices"]["name"] == "deepseek-v4-flash"
    first = quality["compactions"][0]
    assert first["compaction_id"] == b.first.compaction_id
    assert first["citation"]["kinds"]["path"] == {"kept": 1, "lost": 1, "invented": 0,
                                                  "recall": 0.5}
    assert [r["meter"] for r in first["ledger"]] == ["dsh", "o200k"]
    assert first["ledger"][0]["hidden_tokens"] == b.first.shadowed_token_count
    assert [r["text"] for r in first["refetches"]] == ["src/app.py"]
    totals = quality["session"]["dsh"]
    assert totals["net_tokens"] == sum(c["ledger"][0]["net_tokens"]
                                       for c in quality["compactions"])
    assert main(["audit", str(path), "--prices", "1,2,3"]) == 0
    text = capsys.readouterr().out
    assert "citation score" in text and "ledger (dsh)" in text and "session ledger" in text
    assert main(["audit", str(path), "--prices", "nope"]) == 2
    assert main(["audit", str(path), "--meter", "nope"]) == 2


def test_real_log_probes(tmp_path: Path) -> None:
    if not REAL.is_file():
        pytest.skip(f"{REAL} is absent (../shared corpus not available)")
    out = tmp_path / "p.jsonl"
    assert main(["probes", str(REAL), "-o", str(out)]) == 0
    samples = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert samples and all(s["target"] and "_____" not in s["target"] for s in samples)
    assert all(s["target"] in s["metadata"]["anchor"] for s in samples)
