"""`workbench info`: summaries, JSON shape, exit codes, session roots."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.cli.info import clean
from workbench.cli.main import main

needs_loader = pytest.mark.skipif((importlib.util.find_spec("workbench.core.load") is None
                                 and importlib.util.find_spec("workbench.io.read") is None),
                                  reason="no loader yet (workbench.core.load / workbench.io.read)")


def _log(version: int = 4, session_id: str = "session-info", **kw) -> LogBuilder:
    b = LogBuilder(version=version, session_id=session_id, **kw)
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("hello")
            b.request_header()
            a = b.assistant("calling", tool_calls=[("read", {"path": "a"})])
            b.tool_result(a.call_ids[0], text="contents")
        with b.step():
            b.assistant("done")
        b.compact(summary="short")
    return b


@pytest.mark.parametrize(("raw", "shown"), [
    ("plain", "plain"), ("a\nb", "a\\nb"), ("\x1b[31mred", "\\x1b[31mred"),
    ("bidi\u202eevil", "bidi\\u202eevil"),
], ids=["plain", "newline", "ansi-escape", "bidi-override"])
def test_clean_escapes_control_characters(raw: str, shown: str) -> None:
    assert clean(raw) == shown


@needs_loader
@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
def test_json_summary_of_a_clean_log(version: int, tmp_path: Path, capsys) -> None:
    b = _log(version)
    path = b.write(tmp_path / "log.zstd", compression="zstd")
    assert main(["info", "--json", str(path)]) == 0
    (obj,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {"path", "format_version", "session_id", "parent_session", "events", "event_types",
            "defects"} <= set(obj)
    assert obj["format_version"] == version and obj["session_id"] == "session-info"
    assert obj["events"] == len(b.events) and obj["defects"] == []
    assert obj["event_types"]["turn/start"] == 1 and obj["turns"] == 1 and obj["steps"] == 2
    assert obj["compaction_events"] == 3


@needs_loader
def test_text_summary_and_root_with_children(tmp_path: Path, capsys) -> None:
    parent = _log(session_id="session-parent")
    with parent.turn():
        child = parent.spawn_subagent("child-1")
    with child.turn():
        pass
    parent.write_to_root(tmp_path)
    child.write_to_root(tmp_path)
    assert main(["info", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.index("session session-parent") < out.index("session child-1, parent session-parent")
    assert "defects: none" in out


@needs_loader
def test_defects_exit_one(tmp_path: Path, capsys) -> None:
    path = _log().write(tmp_path / "log.jsonl")
    data = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(b"".join(data[:3] + [b"{broken\n"] + data[3:]))
    assert main(["info", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0]


@needs_loader
def test_refused_version_exits_two(tmp_path: Path, capsys) -> None:
    path = tmp_path / "session.v4.jsonl"
    path.write_text('{"type":"session","version":9,"id":"s","createdAt":1,"isSeeded":false,'
                    '"delegationDepth":0}\n')
    assert main(["info", str(path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and str(path) in err[0]


def test_missing_path_exits_two(tmp_path: Path, capsys) -> None:
    assert main(["info", str(tmp_path / "absent.jsonl")]) == 2
    assert capsys.readouterr().err.strip() == \
        f"workbench info: {tmp_path / 'absent.jsonl'}: no such file or directory"


@needs_loader
def test_real_corpus_root(shared_dir: Path, capsys) -> None:
    code = main(["info", "--json", str(shared_dir / "corpus" / "dsh-real-v4")])
    objs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len(objs) == 11 and code in (0, 1)
    large = next(o for o in objs if o["path"].endswith("dev-large-multistep__session.v4.jsonl"))
    assert large["events"] == 5263 and large["defects"] == []


@needs_loader
def test_not_a_log_exits_two_without_claiming_a_version(tmp_path: Path, capsys) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("# not a session log\n", encoding="utf-8")
    assert main(["info", "--json", str(path)]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["format_version"] is None and out["readable"] is False
    assert out["defects"][0]["rule"] == "header_not_json"


@needs_loader
def test_open_turn_reports_repair_closers(tmp_path: Path, capsys) -> None:
    b = LogBuilder(version=4, session_id="session-open")
    b.turn_start()
    b.step_start()
    b.system("sys")
    b.user("hello")
    path = b.write(tmp_path / "session.v4.jsonl")
    assert main(["info", str(path)]) == 0
    out = capsys.readouterr().out
    assert "crash repair would append 2 closer event(s)" in out
