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


STDOUT_COMMANDS = ["info", "fold", "audit", "tokens", "whatif", "probes", "migrate"]


@pytest.mark.skipif(not (os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)),
                    reason="no /dev/full device here")
@pytest.mark.parametrize("command", STDOUT_COMMANDS)
def test_stdout_on_a_full_disk_is_one_line_and_a_closed_pipe_is_quiet(log, command):
    """Every subcommand: stdout that cannot be written is one line, exit 2; `| head` exit 0."""
    import subprocess
    import sys
    run = [sys.executable, "-c", "import sys; from workbench.cli.main import main; "
           "sys.exit(main(sys.argv[1:]))", command, str(log)]
    with open("/dev/full", "w") as full:
        done = subprocess.run(run, stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "notice:" not in line]
    assert lines == [f"workbench {command}: {log}: stdout: cannot write: No space left on device"]
    piped = subprocess.Popen(run, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    piped.stdout.read(1)
    piped.stdout.close()
    assert piped.wait(timeout=120) == 0 and b"Traceback" not in piped.stderr.read()
