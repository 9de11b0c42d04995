"""An unexpected exception inside a subcommand is one stderr line naming the file, the seq and
"internal error, please report", exit 2; the global --debug flag shows the traceback instead."""
from __future__ import annotations

import pytest
from tour_script import tour_script

import workbench.core.load
from workbench.cli.main import main


def _broken(path, **kwargs):
    seq = 7  # noqa: F841 - the seq the failing code was working on
    raise ValueError("boom")


@pytest.mark.parametrize("command", ["fold", "audit", "tokens", "report"])
def test_internal_error_is_one_line(command, tmp_path, monkeypatch, capsys):
    path = tour_script(4).write(tmp_path / "x.session.v4.jsonl")
    monkeypatch.setattr(workbench.core.load, "load_log", _broken)
    extra = ["-o", str(tmp_path / "r.html")] if command == "report" else []
    assert main([command, str(path), *extra]) == 2
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    assert lines[0].startswith(f"workbench {command}: {path}: seq 7: internal error, please report")
    assert "ValueError: boom" in lines[0] and "Traceback" not in lines[0]


def test_debug_shows_the_traceback(tmp_path, monkeypatch):
    path = tour_script(4).write(tmp_path / "x.session.v4.jsonl")
    monkeypatch.setattr(workbench.core.load, "load_log", _broken)
    with pytest.raises(ValueError, match="boom"):
        main(["--debug", "fold", str(path)])
