"""Values nested deep, anywhere orjson accepts them (up to `jsjson.MAX_DEPTH` levels) or
beyond: every command and the notebook path walk them without a `RecursionError`.

A header's tool schema nested 1,000 levels deep loaded clean, then `audit`, `tokens`, `report`,
the widget and `compactions_df` ended in an internal `RecursionError`: orjson materialises up
to 1,024 levels, more than the interpreter's default recursion limit lets a walker recurse."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.core.compaction.anchor_texts import argument_values, tool_arguments
from workbench.io import jsjson

SAMPLE = Path(__file__).resolve().parents[2] / "sample_logs" / "chinese__session.v4.jsonl"
DEPTHS = (129, 600, 1000, 1020, 3000)


def _nested(depth: int) -> str:
    return '{"type":"array","items":' * depth + '{"type":"string"}' + "}" * depth


def _deep_log(tmp_path: Path, depth: int) -> Path:
    out = []
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        event = json.loads(line)
        header = event.get("data", {}).get("header") if event.get("type") == "request/header" else None
        if isinstance(header, dict) and header.get("tools"):
            header["tools"][0]["parameters"] = "@deep@"
            line = json.dumps(event, ensure_ascii=False).replace(
                '"@deep@"', '{"type":"object","properties":{"path":' + _nested(depth) + "}}")
        out.append(line)
    assert any(_nested(depth) in line for line in out)
    path = tmp_path / f"deep{depth}.session.v4.jsonl"
    path.write_text("\n".join(out) + "\n", encoding="utf-8")
    return path


def _run(*args: str) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        code = main(list(args))
    return code, stdout.getvalue(), stderr.getvalue()


@pytest.mark.parametrize("depth", DEPTHS)
def test_every_command_reads_a_deep_tool_schema(tmp_path, depth):
    log = _deep_log(tmp_path, depth)
    for command in ("info", "fold", "audit", "tokens"):
        code, out, err = _run(command, "--json", str(log))
        assert code == 0 and "internal error" not in err, (command, err)
        assert json.loads(out.splitlines()[0])
    code, _, err = _run("report", str(log), "-o", str(tmp_path / "r.html"))
    assert code == 0, err


@pytest.mark.parametrize("depth", (1000, 3000))
def test_the_notebook_path_reads_a_deep_tool_schema(tmp_path, depth):
    import workbench
    from workbench.views import Workbench
    session = workbench.load(_deep_log(tmp_path, depth))
    assert session.verdict == "clean"
    Workbench(session)
    for frame in (session.events_df, session.compactions_df, session.timeline_df):
        assert len(frame()) > 0


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_tool_arguments_are_walked(depth):
    raw = '{"path":' + '[' * depth + '"x"' + ']' * depth + "}"
    args = tool_arguments(raw)
    assert isinstance(args, dict)
    assert jsjson.stringify(args) == raw
    materialised = depth + 1 < jsjson.MAX_DEPTH            # orjson's levels; else Deep below 128
    assert list(argument_values(args)) == ([("path", "x")] if materialised else [])


def test_no_reader_hands_out_a_value_deeper_than_max_depth():
    text = "[" * (jsjson.MAX_DEPTH - 1) + "0" + "]" * (jsjson.MAX_DEPTH - 1)
    assert jsjson.stringify(jsjson.loads(text)) == text          # orjson: materialised
    minus_zero = "[" * 500 + "-0" + "]" * 500                      # the stdlib path
    value = jsjson.loads(minus_zero)
    for _ in range(500):
        if isinstance(value, jsjson.Deep):
            break
        value = value[0]
    assert isinstance(value, jsjson.Deep)                         # not 500 Python levels
    assert jsjson.stringify(jsjson.loads(minus_zero)) == minus_zero.replace("-0", "0")
