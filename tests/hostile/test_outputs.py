"""An output path never reaches an input log or a file that is not a regular file: not through
a hard link, not through a temporary name, not by replacing a FIFO (`workbench.io.output`)."""
from __future__ import annotations

import hashlib
import os
import shutil
import stat
from pathlib import Path

import pytest

from workbench.cli.main import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "pruning__session.v4.jsonl"
COMMANDS = {"report": ["-q"], "probes": [], "whatif": [], "migrate": ["--to", "4"]}


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def log(tmp_path: Path) -> Path:
    copy = tmp_path / "in" / "session.v4.jsonl"
    copy.parent.mkdir()
    shutil.copyfile(SAMPLE, copy)
    return copy


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_hard_link_to_the_input_is_the_input(log, tmp_path, command, capsys):
    alias = tmp_path / "alias.out"
    os.link(log, alias)
    before = _digest(log)
    code = main([command, str(log), *COMMANDS[command], "-o", str(alias)])
    assert code == 2
    assert _digest(log) == before and _digest(alias) == before
    assert "refusing to write over the input log" in capsys.readouterr().err


def test_the_input_may_bear_any_name_beside_the_output(tmp_path):
    log = tmp_path / "out.jsonl.tmp-workbench"      # the temporary name a fixed scheme would use
    shutil.copyfile(SAMPLE, log)
    before = _digest(log)
    assert main(["whatif", str(log), "-o", str(tmp_path / "out.jsonl")]) in (0, 1)
    assert _digest(log) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl", "out.jsonl.tmp-workbench"]


@pytest.mark.parametrize("command", ["whatif", "migrate"])
def test_a_fifo_is_not_replaced(log, tmp_path, command):
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    assert main([command, str(log), *COMMANDS[command], "-o", str(fifo)]) == 2
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)


@pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                    reason="no /dev/full device here")
def test_a_full_disk_is_one_line(log, capsys):
    assert main(["probes", str(log), "-o", "/dev/full"]) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and "internal error" not in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
