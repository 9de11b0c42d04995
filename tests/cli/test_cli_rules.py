"""The rules every subcommand shares (`workbench.cli.common`): one `--meter` spelling, one
`--at` rule stated in `--help`, output paths checked before any work, usage on a usage error;
and `info` naming every compaction attempt that did not complete. Real DSH logs from
../shared/corpus where they matter."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.cli.common import AT_HELP, resolve_at
from workbench.cli.main import build_parser, main

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO.parent / "shared" / "corpus" / "dsh-real-v4"
KILLED = CORPUS / "dev-killed-mid-compaction__session.v4.jsonl"
ERRORS = CORPUS / "dev-summary-errors__session.v4.jsonl"
RESUMED = CORPUS / "dev-killed-mid-compaction-then-resumed__session.v4.jsonl"


def _log(tmp_path: Path) -> Path:
    b = LogBuilder(version=4, session_id="session-rules")
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("prompt")
            b.request_header()
            b.assistant("answer")
    return b.write(tmp_path / "session.v4.jsonl")


def _need(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"real DSH log {path} is absent (../shared/corpus)")


def _help(command: str) -> str:
    sub = build_parser()._subparsers._group_actions[0].choices[command]
    return " ".join(sub.format_help().split())


def test_one_meter_spelling_everywhere():
    for command in ("tokens", "report", "audit"):
        text = _help(command)
        assert "--meter NAMES" in text and "--meters" not in text, command
    for command in build_parser()._subparsers._group_actions[0].choices:
        assert "--meters" not in _help(command)


@pytest.mark.parametrize("command", ["fold", "tokens"])
def test_one_at_rule_stated_in_help_and_applied(tmp_path, capsys, command):
    assert " ".join(AT_HELP.split()) in _help(command)
    log = _log(tmp_path)
    last = sum(1 for line in log.read_text().splitlines()) - 2   # minus the header
    extra = ["--json"] + (["--meter", "dsh"] if command == "tokens" else [])
    results = {}
    for at in (0, last, -1, -(last + 1)):
        capsys.readouterr()
        assert main([command, str(log), "--at", str(at), *extra]) == 0, at
        results[at] = json.loads(capsys.readouterr().out)["at"]
    assert results == {0: 0, last: last, -1: last, -(last + 1): 0}
    for at in (last + 1, -(last + 2), 9999):
        assert main([command, str(log), "--at", str(at)]) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"usage: workbench {command}")
        assert f"workbench {command}: error: --at {at} is outside the log" in err


def test_resolve_at_is_a_python_index():
    seqs = list(range(5))
    for value in range(-7, 8):
        inside = -5 <= value < 5
        assert resolve_at(value, 4) == (seqs[value] if inside else None)
    assert resolve_at(None, 4) == 4 and resolve_at(None, -1) == -1


def test_report_checks_its_output_before_building(tmp_path, capsys, monkeypatch):
    log = _log(tmp_path)
    import workbench.session

    def no_build(*_args, **_kw):
        raise AssertionError("the log was loaded before the output path was checked")

    monkeypatch.setattr(workbench.session, "load", no_build)
    for out in (tmp_path / "missing" / "dir" / "x.html", tmp_path, log):
        assert main(["report", str(log), "-o", str(out)]) == 2, out
        err = capsys.readouterr().err
        assert err.startswith("usage: workbench report"), err
        assert "cannot write the report" in err
    assert log.read_text().startswith('{"type":"session"')      # never written over


def test_export_checks_its_output_before_building(tmp_path, capsys):
    log = _log(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["export", str(log), "-o", str(blocker)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("usage: workbench export") and "is not a directory" in err


@pytest.mark.parametrize("argv", [
    ["tokens", "{log}", "--meter", "nope"],
    ["report", "{log}", "--meter", "dsh,nope"],
    ["audit", "{log}", "--meter", "nope"],
    ["report", "{log}", "--max-steps", "-1"],
])
def test_a_usage_error_shows_the_subcommand_usage(tmp_path, capsys, argv):
    log = _log(tmp_path)
    assert main([a.replace("{log}", str(log)) for a in argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: workbench {argv[0]}")
    assert f"workbench {argv[0]}: error:" in err


def test_an_argparse_error_shows_the_subcommand_usage(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fold", "x.jsonl", "--at", "soon"])
    assert stop.value.code == 2
    assert capsys.readouterr().err.startswith("usage: workbench fold")


@pytest.mark.parametrize(("log", "expected", "words"), [
    (KILLED, {"completed": 1, "interrupted": 1},
     ["compaction #2 interrupted: compaction/start at seq 255 never closed"]),
    (RESUMED, {"completed": 2, "stale": 1},
     ["compaction #2 stale: compaction/start at seq 255 never closed; session/end-seed at seq"]),
    (ERRORS, {"failed": 3, "completed": 1},
     ["compaction #1 failed", "compaction #2 failed", "compaction #3 failed",
      "summary is not smaller than the shadowed content"]),
], ids=["interrupted", "stale", "failed"])
def test_info_names_every_compaction_that_did_not_complete(capsys, log, expected, words):
    _need(log)
    assert main(["info", str(log), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["compactions"] == expected
    assert [b["status"] for b in summary["unfinished_compactions"]] == [
        s for s in ("failed", "interrupted", "stale") for _ in range(expected.get(s, 0))]
    assert main(["info", str(log)]) == 0
    text = capsys.readouterr().out
    for phrase in words:
        assert phrase in text
