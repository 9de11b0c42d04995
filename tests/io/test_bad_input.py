"""Hostile and broken inputs through `workbench info`: one clear line, bounded memory, no traceback,
and the input file byte-identical afterwards.

Each case runs the real CLI in a fresh subprocess that reports its own peak RSS (`VmHWM` of
``/proc/self/status``; `ru_maxrss` would include the pytest parent's high-water mark, which
Linux carries into a child through fork + exec). Inputs are generated in tmp dirs (the 200 MB
line and the zstd bomb are written in about a second and never held whole in the test's memory).
"""
from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from workbench.build import LogBuilder

pytestmark = pytest.mark.skipif((importlib.util.find_spec("workbench.core.load") is None
                                 and importlib.util.find_spec("workbench.io.read") is None),
                                reason="no loader yet (workbench.core.load / workbench.io.read)")

REPO = Path(__file__).resolve().parents[2]
RSS_LIMIT_MIB = 1024
HEADER = (b'{"type":"session","version":4,"id":"session-bad","createdAt":1,'
          b'"isSeeded":false,"delegationDepth":0}\n')


WRAPPER = """
import os, sys
from workbench.cli.main import main
try:
    code = main(sys.argv[1:])
finally:
    with open("/proc/self/status") as fh:
        hwm = next(line.split()[1] for line in fh if line.startswith("VmHWM:"))
    with open(os.environ["H1_HWM_FILE"], "w") as out:
        out.write(hwm)
sys.exit(code)
"""


def run_info(*args: str) -> tuple[int, str, str, float]:
    """(exit code, stdout, stderr, peak RSS MiB) of `workbench info ARGS` in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        hwm = Path(tmp) / "hwm"
        proc = subprocess.run([sys.executable, "-c", WRAPPER, "info", *args], cwd=REPO,
                              capture_output=True, env={**os.environ, "H1_HWM_FILE": str(hwm)},
                              check=False)
        rss = int(hwm.read_text()) / 1024 if hwm.exists() else float("inf")
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"), rss)


def sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _empty(d: Path) -> Path:
    (d / "empty.jsonl").write_bytes(b"")
    return d / "empty.jsonl"


def _binary(d: Path) -> Path:
    (d / "binary.jsonl").write_bytes(bytes(range(256)) * 64 + b"\n\x00\x01\n")
    return d / "binary.jsonl"


def _json_array(d: Path) -> Path:
    b = LogBuilder(version=4, session_id="session-array")
    with b.turn():
        with b.step():
            b.user("hello")
    import json
    (d / "array.jsonl").write_text(json.dumps([b.header(), *b.events], indent=2))
    return d / "array.jsonl"


def _json_array_one_line(d: Path) -> Path:
    import json
    b = LogBuilder(version=0, session_id="session-array")
    (d / "array1.jsonl").write_text(json.dumps([b.header(), {"type": "turn/start"}]) + "\n")
    return d / "array1.jsonl"


def _huge_line(d: Path) -> Path:
    """A valid header, then one 200 MB line that never becomes JSON."""
    path = d / "huge.jsonl"
    with open(path, "wb") as fh:
        fh.write(HEADER)
        fh.write(b'{"type":"user/message","seq":0,"time":1,"data":{"text":"')
        block = b"a" * (1 << 20)
        for _ in range(200):
            fh.write(block)
        fh.write(b"\n")
    return path


def _zstd_bomb(d: Path) -> Path:
    """A header frame, then one small frame that expands to 4 GiB of spaces."""
    path = d / "bomb.jsonl.zstd"
    cctx = zstandard.ZstdCompressor(level=1, write_checksum=True, write_content_size=False)
    with open(path, "wb") as fh:
        fh.write(cctx.compress(HEADER))
        with cctx.stream_writer(fh, closefd=False) as writer:
            block = b" " * (4 << 20)
            for _ in range(1024):
                writer.write(block)
    return path


def _invalid_utf8(d: Path) -> Path:
    """A line of bytes that are not UTF-8 (and so not JSON) inside committed history."""
    b = LogBuilder(version=4, session_id="session-bad")
    with b.turn():
        with b.step():
            b.system("sys")
    path = b.write(d / "utf8.jsonl")
    lines = path.read_bytes().splitlines(keepends=True)
    lines.insert(2, b"\xff\xfe\xc3\x28 not utf-8 \xa0\xa1\n")
    path.write_bytes(b"".join(lines))
    return path


def _no_sessions(d: Path) -> Path:
    root = d / "no-sessions"
    (root / "--proj--" / "s1").mkdir(parents=True)
    (root / "--proj--" / "s1" / "notes.txt").write_text("not a log")
    return root


CASES: list[tuple[str, Callable[[Path], Path], tuple[int, ...], str]] = [
    ("empty-file", _empty, (1, 2), "empty.jsonl"),
    ("binary-file", _binary, (1, 2), "binary.jsonl"),
    ("json-array", _json_array, (1, 2), "array.jsonl"),
    ("json-array-one-line", _json_array_one_line, (1, 2), "array1.jsonl"),
    ("200mb-single-line", _huge_line, (1, 2), "huge.jsonl"),
    ("zstd-bomb", _zstd_bomb, (1, 2), "bomb.jsonl.zstd"),
    ("invalid-utf8", _invalid_utf8, (1, 2), "utf8.jsonl"),
    ("no-sessions", _no_sessions, (2,), "no-sessions"),
]


@pytest.mark.parametrize(("make", "codes", "name"), [c[1:] for c in CASES],
                         ids=[c[0] for c in CASES])
def test_bad_input_gives_one_line_and_bounded_memory(tmp_path: Path, make, codes, name) -> None:
    path = make(tmp_path)
    before = sha(path) if path.is_file() else None
    code, out, err, rss = run_info(str(path))
    assert code in codes, (code, out, err)
    assert "Traceback" not in out + err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("workbench info: ") and name in lines[0]
    assert rss < RSS_LIMIT_MIB, f"peak RSS {rss:.0f} MiB"
    if before is not None:
        assert sha(path) == before


def test_json_mode_keeps_one_object_per_session(tmp_path: Path) -> None:
    import json
    path = _invalid_utf8(tmp_path)
    code, out, err, _ = run_info("--json", str(path))
    (obj,) = [json.loads(line) for line in out.splitlines()]
    assert obj["path"] == str(path) and code in (1, 2)
    assert "Traceback" not in err
