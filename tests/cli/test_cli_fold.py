"""`workbench fold`: table and JSON output, `--at`, fold violations (exit 1), unusable input
(exit 2), and escaping of untrusted log text."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli.main import main

HEADER = {"type": "session", "version": 4, "id": "session-cli", "createdAt": 1790000000000,
          "cwd": "/srv/x", "isSeeded": False, "delegationDepth": 0}


def _user(seq, text, op="append", sources=None):
    ev = {"type": "user/message", "seq": seq, "time": 1790000000000 + seq, "surfaceOp": op,
          "data": {"id": f"u-{seq}", "role": "user", "source": {"kind": "user"},
                   "content": [{"type": "text", "text": text}]}}
    if sources is not None:
        ev["sourceEventSeqs"] = sources
    return ev


def _write(tmp_path: Path, events: list[dict]) -> str:
    path = tmp_path / "session.v4.jsonl"
    lines = [json.dumps(HEADER)] + [json.dumps(e) for e in events]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def _events():
    return [_user(0, "first"), _user(1, "second\x1b[31m red"),
            _user(2, "summary", {"op": "replace", "startSeq": 0, "endSeq": 1}, [0, 1])]


def test_table_at_end_and_at_seq(tmp_path, capsys):
    path = _write(tmp_path, _events())
    assert main(["fold", path]) == 0
    out = capsys.readouterr().out
    assert "surface at seq 2: 1 nodes, 1 replacements" in out
    assert "summary" in out and "first" not in out.split("\n", 2)[2]
    assert main(["fold", path, "--at", "1"]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\\x1b" in out          # control characters are escaped
    rows = out.splitlines()[2:]
    assert [r.split()[:3] for r in rows] == [["0", "0", "user/message"], ["1", "1", "user/message"]]


def test_json_output(tmp_path, capsys):
    path = _write(tmp_path, _events())
    assert main(["fold", path, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {
        "at": 2, "nodes": [2], "replacements": [
            {"seq": 2, "start": 0, "end": 1, "shadowed_seqs": [0, 1]}],
        "replace_generation": 1, "content_generation": 1}


def test_fold_violation_exits_1(tmp_path, capsys):
    events = _events()
    events[2]["sourceEventSeqs"] = [1]
    path = _write(tmp_path, events)
    assert main(["fold", path, "--json"]) == 1
    assert json.loads(capsys.readouterr().out) == {"error": {
        "kind": "source_seqs_missing_shadowed", "seq": 2,
        "message": "surface replace: sourceEventSeqs must include every shadowed surface node; "
                   "missing 0"}}
    assert main(["fold", path]) == 1
    captured = capsys.readouterr()
    assert "fold error at seq 2: source_seqs_missing_shadowed" in captured.out
    err = captured.err.splitlines()   # and, as every finding, one stderr line
    assert len(err) == 1 and err[0].startswith(f"workbench fold: {path}: fold error at seq 2: "), err
    # the prefix folds fine, but the log itself is damaged: still a finding
    assert main(["fold", path, "--at", "1", "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["nodes"] == [0, 1]
    assert "verdict corrupt" in captured.err


@pytest.mark.parametrize("at", ["7", "-5"])
def test_at_outside_the_log_exits_2(tmp_path, capsys, at):
    path = _write(tmp_path, _events())
    assert main(["fold", path, "--at", at]) == 2
    assert "outside the log" in capsys.readouterr().err


def test_missing_file_exits_2(tmp_path, capsys):
    missing = str(tmp_path / "nope.jsonl")
    assert main(["fold", missing]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and missing in err


@pytest.mark.parametrize(("first_line", "words"), [
    (b"garbage\n", "not a session log"),
    (b'{"type":"session","version":5,"id":"x"}\n', "refused"),
])
def test_unusable_logs_exit_2(tmp_path, capsys, first_line, words):
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(first_line)
    assert main(["fold", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and words in err
