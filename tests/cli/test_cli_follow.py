"""`workbench fold --follow` and `workbench info --follow` in a real subprocess while the log
grows: each surface change is printed as it happens, Ctrl-C exits 130 without a traceback."""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
LOG = SHARED / "corpus" / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl"
pytestmark = pytest.mark.skipif(not LOG.exists(), reason=f"{LOG} is absent (../shared)")
TIMEOUT = 120.0
CLI = [sys.executable, "-c", "import sys; from workbench.cli.main import main; sys.exit(main())"]


def _start(*args: str) -> subprocess.Popen:
    proc = subprocess.Popen([*CLI, *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    proc.lines = queue.Queue()  # type: ignore[attr-defined]

    def pump() -> None:
        for line in proc.stdout:
            proc.lines.put(line.rstrip("\n"))  # type: ignore[attr-defined]
    threading.Thread(target=pump, daemon=True).start()
    return proc


def _wait_for(proc: subprocess.Popen, lines: list[str], done) -> None:
    """Collect stdout lines until `done(lines)` (or a generous deadline: the machine is shared)."""
    deadline = time.monotonic() + TIMEOUT
    while not done(lines) and time.monotonic() < deadline:
        try:
            lines.append(proc.lines.get(timeout=0.5))  # type: ignore[attr-defined]
        except queue.Empty:
            if proc.poll() is not None:
                break


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    finally:
        proc.kill()
    return proc.returncode, proc.stderr.read()


def _split(tmp_path: Path) -> tuple[Path, bytes]:
    """The log cut before its first compaction (prefix written), and the rest."""
    data = LOG.read_bytes()
    lines = data.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if b'"compaction/start"' in line)
    target = tmp_path / LOG.name
    target.write_bytes(b"".join(lines[:first]))
    return target, b"".join(lines[first:])


def test_fold_follow_prints_appends_replacements_and_brackets(tmp_path):
    target, rest = _split(tmp_path)
    proc = _start("fold", str(target), "--follow")
    lines: list[str] = []
    _wait_for(proc, lines, lambda ls: any("following" in line for line in ls))
    with open(target, "ab") as fh:
        fh.write(rest[:len(rest) // 2] + rest[len(rest) // 2:len(rest) // 2 + 10])   # ends torn
        fh.flush()
        time.sleep(0.6)
        fh.write(rest[len(rest) // 2 + 10:])
    _wait_for(proc, lines, lambda ls: sum(line.startswith("]") for line in ls) >= 2)
    code, err = _stop(proc)
    assert code == 130 and "Traceback" not in err, err
    assert any(line.startswith("+ ") for line in lines)
    opened = [line for line in lines if line.startswith("[ ")]
    closed = [line for line in lines if line.startswith("] ")]
    assert opened and closed and "completed" in closed[0]
    replaced = next(i for i, line in enumerate(lines) if line.startswith("~ "))
    count = int(lines[replaced].split("replaces ")[1].split(" nodes")[0])
    assert count > 0 and all(line.startswith("  - ") for line in lines[replaced + 1:replaced + 1 + count])


def _replayed(lines: list[str]) -> list[int]:
    """The surface the first line shows, with every later change applied."""
    nodes = list(json.loads(lines[0])["nodes"])
    for record in map(json.loads, lines[1:]):
        if record["op"] == "append":
            nodes.append(record["seq"])
        elif record["op"] == "replace":
            hidden = record["hidden"]
            at = nodes.index(hidden[0]) if hidden else len(nodes)
            nodes[at:at + len(hidden)] = [record["seq"]]
    return nodes


def test_fold_follow_json_matches_a_fresh_fold(tmp_path):
    target, rest = _split(tmp_path)
    proc = _start("fold", str(target), "--follow", "--json")
    lines: list[str] = []
    _wait_for(proc, lines, lambda ls: len(ls) >= 1)
    with open(target, "ab") as fh:
        fh.write(rest)
    fresh = subprocess.run([*CLI, "fold", str(target), "--json"],
                           capture_output=True, text=True, check=False)
    expected = json.loads(fresh.stdout)["nodes"]
    _wait_for(proc, lines, lambda ls: _replayed(ls) == expected)
    code, err = _stop(proc)
    assert code == 130 and "Traceback" not in err
    assert _replayed(lines) == expected
    ops = {json.loads(x)["op"] for x in lines[1:]}
    assert {"append", "replace", "compaction-open", "compaction-close"} <= ops


def test_info_follow_keeps_a_status_line(tmp_path):
    target, rest = _split(tmp_path)
    proc = _start("info", str(target), "--follow")
    lines: list[str] = []
    _wait_for(proc, lines, lambda ls: len(ls) >= 1)
    assert lines[0].startswith("live · ")
    with open(target, "ab") as fh:
        fh.write(rest[:rest.index(b"\n", rest.index(b'"compaction/start"')) + 1])
    _wait_for(proc, lines, lambda ls: any("compaction running" in line for line in ls))
    code, err = _stop(proc)
    assert code == 130 and "Traceback" not in err
    assert any("compaction running" in line for line in lines)


def test_follow_usage_errors_exit_2(tmp_path):
    for args in (["fold", str(tmp_path / "missing.jsonl"), "--follow"],
                 ["fold", str(LOG), "--follow", "--at", "3"], ["info", str(LOG), str(LOG), "--follow"]):
        done = subprocess.run([*CLI, *args], capture_output=True,
                              text=True, timeout=TIMEOUT, check=False)
        assert done.returncode == 2 and "Traceback" not in done.stderr and done.stderr.count("\n") == 1
        assert "internal error" not in done.stderr, done.stderr   # a usage error, said as one


V3 = SHARED / "corpus" / "dsh-0.1.5-v3" / "dev-subagent-spawn-child__session.v3.jsonl"


@pytest.mark.skipif(not V3.exists(), reason=f"{V3} is absent (../shared)")
def test_follow_names_a_newer_generation_when_dsh_migrates_the_log(tmp_path):
    import workbench
    target = tmp_path / "session.v3.jsonl"
    target.write_bytes(V3.read_bytes())
    info = _start("info", str(target), "--follow")
    fold = _start("fold", str(target), "--follow", "--json")
    info_lines: list[str] = []
    fold_lines: list[str] = []
    _wait_for(info, info_lines, lambda ls: len(ls) >= 1)
    _wait_for(fold, fold_lines, lambda ls: len(ls) >= 1)
    assert not any("newer" in line for line in info_lines + fold_lines)
    newer = tmp_path / "session.v4.jsonl"
    workbench.load(target).migrated(4).write(newer)   # the v4 view DSH 0.2.1 writes beside it
    _wait_for(info, info_lines, lambda ls: any("newer generation" in line for line in ls))
    _wait_for(fold, fold_lines, lambda ls: any('"newer-generation"' in line for line in ls))
    for proc in (info, fold):
        code, err = _stop(proc)
        assert code == 130 and "Traceback" not in err
    line = next(line for line in info_lines if "newer generation" in line)
    assert str(newer) in line and "--follow" in line
    record = next(json.loads(x) for x in fold_lines if '"newer-generation"' in x)
    assert record == {"op": "newer-generation", "path": str(newer)}
