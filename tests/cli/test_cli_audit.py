"""`workbench audit PATH [--json]`: exit codes 0/1/2, the JSON report and the plain table."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.cli.main import main

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"


def _real(name: str) -> str:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared corpus not available)")
    return str(path)


def test_clean_log_exits_0_with_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", _real("dev-long-auto-compaction__session.v4.jsonl"), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["ok"] is True
    assert data["session_id"] == "session-006b1789-7f24-4ea7-9ddf-f7237d912bc0"
    assert [c["start_seq"] for c in data["compactions"]] == [145, 255, 356]
    first = data["compactions"][0]
    assert first["logged_shadowed_tokens"] == first["computed_shadowed_tokens"] == 6274
    assert all(check["ok"] for c in data["compactions"] for check in c["checks"])


def test_interrupted_compaction_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", _real("dev-killed-mid-compaction__session.v4.jsonl")])
    out = capsys.readouterr().out
    assert code == 1
    assert "[interrupted; pressure, turn 13] start 255" in out
    assert "FAIL bracket_closed" in out and "start 255 has no compaction/end" in out


def test_zstd_log_and_prunes_in_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", _real("dev-tool-result-prune-then-compaction__session.v4.jsonl")])
    out = capsys.readouterr().out
    assert code == 0
    assert "prune 59: original 40 -> replacement 60" in out
    assert "2 compactions, 3 prunes: all checks pass" in out


@pytest.mark.parametrize("content", [None, b"not a session log\n"], ids=["missing", "garbage"])
def test_unreadable_log_exits_2(tmp_path: Path, content: bytes | None,
                                capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "session.v4.jsonl"
    if content is not None:
        path.write_bytes(content)
    assert main(["audit", str(path)]) == 2
    assert str(path) in capsys.readouterr().err
