"""Values nested deep, where orjson materialises them (up to 1,024 levels) and beyond: no reader
hands out a dict or list more than `deepjson.MATERIALISED_DEPTH` levels down, so every command and
the notebook path walk them without a `RecursionError`, under the default recursion limit or a
lower one (hypothesis runs a test with its own).

A header's tool schema nested 1,000 levels deep loaded clean, then `audit`, `tokens`, `report`,
the widget and `compactions_df` ended in an internal `RecursionError`: orjson materialised all
its levels, more than the interpreter's default recursion limit lets a walker recurse."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from workbench.cli.main import main
from workbench.core.compaction.anchor_texts import argument_values, tool_arguments
from workbench.io import deepjson, jsjson

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


@pytest.fixture(autouse=True)
def _default_recursion_limit():
    """The interpreter's default limit (pytest runs with a higher one)."""
    import sys
    saved = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    yield
    sys.setrecursionlimit(saved)


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
    materialised = depth + 1 < deepjson.MATERIALISED_DEPTH   # else a Deep value below 128 levels
    assert list(argument_values(args)) == ([("path", "x")] if materialised else [])


def _levels(value) -> int:
    levels = 0
    while isinstance(value, (list, dict)) and value:
        value = value[0] if isinstance(value, list) else next(iter(value.values()))
        levels += 1
    return levels


READERS = {"text": jsjson.loads, "bytes": lambda text: jsjson.loads(text.encode())}


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("leaf", ["0", "-0", '"\\ud800"'])  # orjson's path, then the stdlib's
@pytest.mark.parametrize("depth", [127, 128, 129, 1024, 1025])
def test_no_reader_hands_out_a_value_deeper_than_materialised_depth(depth, leaf, reader):
    text = "[" * depth + leaf + "]" * depth
    value = READERS[reader](text)
    assert _levels(value) == min(depth, deepjson.MATERIALISED_DEPTH)
    assert jsjson.stringify(value) == text.replace("-0", "0")


_DEEP_STRINGS = """
from workbench.io import jsjson
depth, text = 2_000, "a" * 64
for body in ('1,"' + text + '"', '{"' + text + '":1}', '"' + text + '",{"k":"' + text + '"}'):
    value = jsjson.loads("[" * depth + body + "]" * depth)
    assert jsjson.stringify(value) == "[" * depth + body + "]" * depth
print("ok")
"""


def test_deep_texts_with_long_strings_parse_in_linear_time():
    """A string in a deep array once made the tokenizer retry every split of it (2**64 tries
    for 64 characters: a hang); the subprocess's timeout keeps a regression from hanging CI."""
    import subprocess
    import sys
    done = subprocess.run([sys.executable, "-c", _DEEP_STRINGS], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]
