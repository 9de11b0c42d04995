"""`workbench migrate`: the v3 shapes DSH 0.2.1 refuses to migrate (v4 spec §0.4 step v3→v4) exit 2
with one stderr line naming the file, the seq and the reason; the closing stderr line of a damaged
log counts the events it printed (kept and inserted closers)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import pytest

from workbench.cli.main import main

SPAWN_CHILD = (Path(__file__).resolve().parents[3] / "shared" / "corpus" / "dsh-0.1.5-v3"
               / "dev-subagent-spawn-child__session.v3.jsonl")


def _defer(event: dict) -> bool:
    if event.get("type") != "request/header" or not event["data"]["header"].get("tools"):
        return False
    event["data"]["header"]["tools"][0]["deferLoading"] = True
    return True


def _delivery_v4(event: dict) -> bool:
    if event.get("type") != "session/title":
        return False
    session = json.loads(SPAWN_CHILD.read_text(encoding="utf-8").splitlines()[0])["id"]
    event["type"] = "session-log-deepseek/delivery-accepted"
    event["data"] = {"sessionId": session, "sessionFormatVersion": 4, "throughSeq": event["seq"] - 1}
    return True


def _nested(event: dict) -> bool:
    if event.get("type") != "tool/result":
        return False
    block = event["data"]["message"]["content"][0]
    block["content"] = [{"type": "tool-result", "toolCallId": block["toolCallId"],
                         "content": [{"type": "text", "text": "x"}]}]
    return True


def _edited(tmp: Path, edit: Callable[[dict], bool]) -> tuple[Path, int]:
    """The corpus log with its first event that `edit` changes changed; that event's seq."""
    lines = SPAWN_CHILD.read_text(encoding="utf-8").splitlines()
    for index, line in enumerate(lines[1:], 1):
        event = json.loads(line)
        if edit(event):
            lines[index] = json.dumps(event, separators=(",", ":"), ensure_ascii=False)
            path = tmp / "edited__session.v3.jsonl"
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            return path, event["seq"]
    raise AssertionError("the corpus log has no event to edit")


@pytest.mark.skipif(not SPAWN_CHILD.is_file(), reason=f"{SPAWN_CHILD} (the shared corpus) is absent")
@pytest.mark.parametrize(("edit", "reason"), [
    (_defer, "deferLoading on the request/header tool schema"),
    (_delivery_v4, "a delivery marker claiming format v4"),
    (_nested, "a nested tool result"),
])
def test_refused_v3_shapes_exit_2_naming_file_seq_and_reason(
        edit: Callable[[dict], bool], reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path, seq = _edited(tmp_path, edit)
    assert main(["info", str(path)]) == 0   # a clean v3 log: only its migration is refused
    capsys.readouterr()
    before = path.read_bytes()
    assert main(["migrate", str(path), "--to", "4"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert captured.err.startswith(f"workbench migrate: {path}: not migrated: seq {seq}: {reason}")
    assert 'refuses to migrate it (format "unsupported")' in captured.err
    assert path.read_bytes() == before


def test_a_damaged_log_says_how_many_events_it_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    header = {"type": "session", "version": 3, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
    rows = [header, {"type": "turn/start", "seq": 0, "time": 10, "data": {"turn": 1}},
            {"type": "turn/start", "seq": 1, "time": 11, "data": {"turn": 2}},   # turn 1 left open
            {"type": "user/message", "seq": 2, "time": 12, "surfaceOp": "append",
             "data": {"content": [], "source": {"kind": "user"}, "role": "user", "id": "m1"}}]
    path = tmp_path / "torn__session.v3.jsonl"
    path.write_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in rows) + b'{"type":"turn/end"')
    assert main(["migrate", str(path), "--to", "4"]) == 1
    captured = capsys.readouterr()
    printed = captured.out.splitlines()
    # the 3 kept events, the closer of turn 1 before turn 2 starts and the closer of turn 2 at the end
    assert [json.loads(line)["type"] for line in printed] == ["turn/start", "turn/end", "turn/start",
                                                              "user/message", "turn/end"]
    assert captured.err == (f"workbench migrate: {path}: migrated the 3 events the reference keeps and "
                            "inserted 2 closer event(s), 5 in all (verdict repairable)\n")
