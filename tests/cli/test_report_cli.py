"""`workbench report` and `workbench lab` from the command line: exit codes and what is written."""
from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.cli.main import main

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample_logs"


def _two_turns(tmp_path: Path, name: str = "session.v4.jsonl") -> Path:
    b = LogBuilder(version=4, session_id="session-cli")
    for n in range(2):
        with b.turn():
            with b.step():
                if n == 0:
                    b.system("sys")
                b.user(f"prompt {n}")
                if n == 0:
                    b.request_header()
                b.assistant(f"answer {n}")
    return b.write(tmp_path / name)


def _corrupt(tmp_path: Path) -> Path:
    """Damage inside committed history: a garbage line before a later `turn/end`."""
    path = _two_turns(tmp_path)
    lines = path.read_bytes().split(b"\n")
    lines[3] = b"{not json"
    path.write_bytes(b"\n".join(lines))
    return path


def _torn(tmp_path: Path) -> Path:
    path = _two_turns(tmp_path)
    with path.open("ab") as fh:
        fh.write(b'{"type":"turn/start","se')
    return path


def _refused(tmp_path: Path) -> Path:
    path = tmp_path / "session.v4.jsonl"
    path.write_text('{"type":"session","version":99,"id":"x","createdAt":0,"delegationDepth":0}\n')
    return path


@pytest.mark.parametrize(("make", "code", "written", "message"), [
    (lambda t: SAMPLES / "seed-story__session.jsonl", 0, True, ""),
    (lambda t: SAMPLES / "crash-mid-compaction__session.v4.jsonl", 1, True,
     "report written with findings: audit findings"),
    (_corrupt, 1, True, "report written with findings: "),
    (_torn, 1, True, "verdict repairable"),
    (_refused, 2, False, "refused: session \"x\" uses log format v99"),
    (lambda t: t / "missing.jsonl", 2, False, "no such file or directory"),
    (lambda t: SAMPLES / "--work-shop--", 2, False, "holds 3 sessions"),
    (lambda t: SAMPLES / "--work-shop--" / "session-parent", 0, True, ""),
], ids=["clean", "interrupted-bracket", "corrupt", "torn-tail", "refused", "missing",
        "root-with-three-sessions", "session-directory"])
def test_report_exit_codes(make, code: int, written: bool, message: str, tmp_path: Path,
                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out" / "r.html"
    out.parent.mkdir()
    assert main(["report", str(make(tmp_path)), "-o", str(out)]) == code
    captured = capsys.readouterr()
    assert out.exists() is written
    assert message in captured.err
    if written:
        assert "wrote " in captured.out and " MB in " in captured.out
        assert out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_default_output_goes_to_the_current_directory(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    log = shutil.copy(SAMPLES / "multi-day__session.v4.jsonl.zstd", tmp_path / "in.jsonl.zstd")
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    assert main(["report", str(log), "-q"]) == 0
    assert [p.name for p in work.iterdir()] == ["in.report.html"]


@pytest.mark.parametrize(("args", "message"), [
    (["--meter", "dsh,nope"], "nope"),
    (["--max-steps", "-1"], "--max-steps must be >= 0"),
], ids=["unknown-meter", "negative-steps"])
def test_bad_options_are_unusable(args: list[str], message: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "r.html"
    assert main(["report", str(SAMPLES / "seed-story__session.jsonl"), "-o", str(out),
                 *args]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_report_never_overwrites_its_input(tmp_path: Path, capsys) -> None:
    log = _two_turns(tmp_path)
    before = log.read_bytes()
    assert main(["report", str(log), "-o", str(log)]) == 2
    assert "refusing to write over the input log" in capsys.readouterr().err
    assert log.read_bytes() == before


def test_unwritable_output_is_unusable(tmp_path: Path, capsys) -> None:
    out = tmp_path / "no-such-dir" / "r.html"
    assert main(["report", str(SAMPLES / "seed-story__session.jsonl"), "-o", str(out)]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_sampling_is_reported_on_the_terminal(tmp_path: Path, capsys) -> None:
    assert main(["report", str(SAMPLES / "multi-day__session.v4.jsonl.zstd"), "-o",
                 str(tmp_path / "r.html"), "--max-steps", "5"]) == 0
    out = capsys.readouterr().out
    assert "step viewer 5 of 48 requests" in out
    assert "sampled: The step viewer shows 5 of 48 model requests" in out


# -- lab --------------------------------------------------------------------------------------

def test_lab_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["lab", "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    for option in ("--no-browser", "--port", "--root", "--notebook"):
        assert option in out


def test_lab_dry_run_opens_the_first_notebook(capsys) -> None:
    assert main(["lab", "--dry-run", "--no-browser", "--port", "8899"]) == 0
    cmd = capsys.readouterr().out.split()
    assert cmd[:3] == [sys.executable, "-m", "jupyterlab"]
    assert f"--ServerApp.root_dir={REPO}" in cmd and "--ServerApp.ip=127.0.0.1" in cmd
    assert "--ServerApp.port=8899" in cmd and "--no-browser" in cmd
    assert cmd[-1] == "notebooks/01_surface_replace.ipynb"


def test_lab_without_notebooks_is_unusable(tmp_path: Path, capsys) -> None:
    assert main(["lab", "--root", str(tmp_path), "--dry-run"]) == 2
    assert "not found" in capsys.readouterr().err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_lab_serves_the_notebooks(tmp_path: Path) -> None:
    """`workbench lab --no-browser` starts a Lab whose contents API lists the three notebooks."""
    port, token = _free_port(), "wbtest" + os.urandom(8).hex()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp_path / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp_path / "runtime"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp_path / "ws"), JUPYTER_PLATFORM_DIRS="1",
               JUPYTER_TOKEN=token, PYTHONPATH=str(REPO))
    proc = subprocess.Popen([sys.executable, "-m", "workbench.cli.main", "lab", "--no-browser",
                             "--port", str(port)], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                req = urllib.request.Request(f"http://127.0.0.1:{port}/api/contents/notebooks",
                                             headers={"Authorization": f"token {token}"})
                with urllib.request.urlopen(req, timeout=5) as resp:
                    listing = resp.read().decode()
                break
            except OSError:
                assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
                assert time.monotonic() < deadline, "lab did not start in 60 s"
                time.sleep(0.3)
        for name in ("01_surface_replace.ipynb", "02_compaction_quality.ipynb",
                     "03_replay_debugging.ipynb"):
            assert name in listing
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=20)
