"""A torn seeded fork child, decided from the spec.

v4 (spec §1.3, §1.9 step 3; vector ``load-seeded-without-marker``): ``isSeeded: true`` holds iff
the log contains a ``session/end-seed {"inherited": true}``, and the reference checks it on the
events it read, after cutting the torn tail (§1.7: the torn final record is never parsed). So:

* torn *after* the inherited marker: the marker is committed, the tail is cut: **repairable**;
* torn *inside* the inherited prefix (before the marker was written): the committed events hold no
  marker, which the reference rejects ("released v2 seeded Session lacks an inherited end-seed
  marker"): **corrupt**, with the torn tail listed as tolerated beside it.

v0 (v0 spec §3.11): ``seedLength`` is the durable fork boundary and nothing checks it against the
events read, so a v0 child torn anywhere is **repairable**.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.core.load import load_bytes

MARKER = b'"type":"session/end-seed"'


def _cuts(data: bytes):
    """Byte offsets in the middle of every record after the header."""
    start = data.index(b"\n") + 1
    while start < len(data):
        end = data.index(b"\n", start)
        yield start, (start + end) // 2 + 1, data[start:end]
        start = end + 1


def _verdicts(data: bytes, name: str) -> list[tuple[bool, str, set]]:
    out, marker_seen = [], False
    for _, cut, record in _cuts(data):
        log = load_bytes(data[:cut], name=name)
        out.append((marker_seen, log.verdict, {d.rule for d in log.defects}))
        marker_seen = marker_seen or (MARKER in record and b'"inherited":true' in record)
    return out


def test_real_v4_fork_child_torn_before_and_after_its_marker(shared_dir: Path):
    path = shared_dir / "corpus" / "dsh-real-v4" / "dev-subagent-fork-child__session.v4.jsonl"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    results = _verdicts(path.read_bytes(), path.name)
    before = [r for r in results if not r[0]]
    after = [r for r in results if r[0]]
    assert before and after
    for _, verdict, rules in before:
        assert verdict == "corrupt" and {"torn_tail", "inherited_marker"} <= rules
    for _, verdict, rules in after:
        assert verdict == "repairable" and rules == {"torn_tail"}


def _child(version: int, tmp: Path) -> tuple[bytes, str]:
    parent = LogBuilder(version=version, session_id="session-parent" if version else None)
    for k in range(3):
        with parent.turn(), parent.step():
            if k == 0:
                parent.system("You are a coding agent.")
            parent.user(f"task {k}")
            parent.request_header()
            parent.assistant(f"done {k}")
    child = parent.fork()
    with child.turn(), child.step():
        child.user("child task")
        child.request_header()
        child.assistant("child done")
    name = "child.session.v4.jsonl" if version else "child.session.jsonl"
    return child.write(tmp / name).read_bytes(), name


def test_built_v4_fork_child_follows_the_same_rule(tmp_path: Path):
    data, name = _child(4, tmp_path)
    for marker_seen, verdict, rules in _verdicts(data, name):
        assert verdict == ("repairable" if marker_seen else "corrupt"), rules


def test_v0_fork_child_torn_anywhere_is_repairable(tmp_path: Path):
    data, name = _child(0, tmp_path)
    for _, verdict, rules in _verdicts(data, name):
        assert verdict == "repairable" and rules == {"torn_tail"}
