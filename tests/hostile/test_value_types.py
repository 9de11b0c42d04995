"""A log value of an unexpected JSON type where a consumer keys a set or dict by it, and text a
tokenizer cannot take: found by a fuzz that puts values of every JSON type at random paths of
real logs' events. Each case loads, builds every frame and runs every read-only subcommand with
no internal error (each failed before its fix: TypeError from a set or dict lookup, or from the
DeepSeek tokenizer)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hostile_checks import every_command, every_frame
from tour_script import tour_script

COMMANDS = ("info", "fold", "audit", "tokens")


def _edited(tmp_path: Path, version: int, edit) -> Path:
    name = "x.session.v4.jsonl" if version == 4 else "x.session.jsonl"
    path = tour_script(version, session_id="session-types").write(tmp_path / f"base-{name}")
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    out = [lines[0]]
    for line in lines[1:]:
        edited = edit(json.loads(line))
        out.append(line if edited is None else json.dumps(edited).encode())
    target = tmp_path / name
    target.write_bytes(b"\n".join(out) + b"\n")
    return target


def _message(event: dict) -> dict | None:
    data = event.get("data")
    if not isinstance(data, dict):
        return None
    return data if event.get("type") == "user/message" else data.get("message")


@pytest.mark.parametrize("version", [0, 4])
@pytest.mark.parametrize("kind", [{}, [], [[1]]], ids=["object", "array", "nested"])
def test_a_message_source_kind_of_any_type(tmp_path, capsys, version, kind):
    def edit(event: dict) -> dict | None:
        message = _message(event)
        if not isinstance(message, dict):
            return None
        message["source"] = {"kind": kind}
        return event
    path = _edited(tmp_path, version, edit)
    every_frame(path)
    every_command(path, tmp_path, capsys, COMMANDS)


@pytest.mark.parametrize("entry", [{}, [1], {"seq": 1}], ids=["object", "list", "keyed"])
def test_replacement_sources_holding_any_type(tmp_path, capsys, entry):
    """v0 keeps a `sourceEventSeqs` list that does not decode as written (the fold names it)."""
    def edit(event: dict) -> dict | None:
        op = event.get("surfaceOp")
        if not (isinstance(op, dict) and op.get("op") == "replace"):
            return None
        event["sourceEventSeqs"] = [*event.get("sourceEventSeqs", []), entry]
        return event
    path = _edited(tmp_path, 0, edit)
    every_frame(path)
    every_command(path, tmp_path, capsys, COMMANDS)


@pytest.mark.parametrize("version", [0, 4])
def test_message_text_with_a_lone_surrogate_is_counted(tmp_path, capsys, version):
    """JSON allows ``"\\ud800"``; UTF-8 cannot hold it. Every meter counts it as U+FFFD, as
    tiktoken does."""
    from workbench.core.tokens.meters import get_meter

    def edit(event: dict) -> dict | None:
        message = _message(event)
        content = message.get("content") if isinstance(message, dict) else None
        if not (isinstance(content, list) and content and isinstance(content[0], dict)
                and isinstance(content[0].get("text"), str)):
            return None
        content[0]["text"] = "lone \ud800 surrogate " + content[0]["text"]
        return event
    path = _edited(tmp_path, version, edit)
    every_frame(path)
    every_command(path, tmp_path, capsys, COMMANDS)
    for name in ("deepseek", "o200k"):
        meter = get_meter(name, version=version)
        assert meter.count_text("a\ud800b") == meter.count_text("a\ufffdb")


@pytest.mark.parametrize("members", [[1, None, {}], "joined", {"a": 1}], ids=["mixed", "string", "object"])
def test_stream_runs_whose_members_are_not_strings(tmp_path, capsys, members):
    """A v4 stream record's ``texts`` / ``args`` joined as JavaScript's ``join("")`` joins an
    array; another value makes DSH's measure stop with a message. The widget (which replays the
    measure on small logs) builds either way."""
    pytest.importorskip("ipywidgets")
    from workbench.session import load
    from workbench.views import Workbench

    def edit(event: dict) -> dict | None:
        stream = event.get("data", {}).get("stream") if event.get("type") == "assistant/message" else None
        if not isinstance(stream, list):
            return None
        for record in stream:
            for key in ("texts", "args"):
                if key in record:
                    record[key] = members
        return event
    path = _edited(tmp_path, 4, edit)
    every_frame(path)
    every_command(path, tmp_path, capsys, COMMANDS)
    session = load(path)
    wb = Workbench(session)
    wb.state.step = len(session) - 1


@pytest.mark.parametrize("version", [0, 4])
@pytest.mark.parametrize("value", [{}, [1]], ids=["object", "array"])
def test_ids_of_any_type(tmp_path, capsys, version, value):
    """Command, compaction and call ids are matched between events by value; an array or an
    object matches nothing (and once ended grouping, token rows and the what-if in a
    TypeError)."""
    from workbench.cli.main import main

    def edit(event: dict) -> dict | None:
        data = event.get("data")
        if not isinstance(data, dict):
            return None
        hit = False
        for key in ("commandId", "compactionId", "sourceCommandId", "callId"):
            if key in data:
                data[key], hit = value, True
        source = data.get("source")
        if isinstance(source, dict) and "compactionId" in source:
            source["compactionId"], hit = value, True
        return event if hit else None
    path = _edited(tmp_path, version, edit)
    every_frame(path)
    every_command(path, tmp_path, capsys, COMMANDS)
    if version == 4:
        for summarizer in ("logged", "mask"):
            main(["whatif", "--json", "--summarizer", summarizer, str(path)])
            captured = capsys.readouterr()
            assert "internal error" not in captured.err + captured.out, captured.err[-2000:]


@pytest.mark.parametrize("version", [0, 4])
def test_a_lone_surrogate_in_an_event_type_prints(tmp_path, capsys, version):
    """Text output names log strings (event types here); one holding a lone surrogate prints it
    as an escape instead of ending the command in a UnicodeEncodeError."""
    from workbench.cli.main import main

    def edit(event: dict) -> dict | None:
        if event.get("type") != "command/done":
            return None
        event["type"] = "x\ud800"
        return event
    path = _edited(tmp_path, version, edit)
    for command in ("info", "fold", "audit", "tokens"):
        assert main([command, str(path)]) in (0, 1, 2)
        captured = capsys.readouterr()
        assert "internal error" not in captured.err, captured.err[-2000:]
    main(["info", str(path)])
    assert "x\\ud800" in capsys.readouterr().out


_PRUNING = Path(__file__).resolve().parents[2] / "sample_logs" / "pruning__session.v4.jsonl"
_NUMBER_FIELDS = {   # the digits each field's value is written with, replaced by the literal
    "usage": r'(?<="inputTokens":)\d+', "context-window": r'(?<="contextWindow":)\d+',
    "max-tokens": r'(?<="maxTokens":)\d+', "shadowed-tokens": r'(?<="shadowedTokenCount":)\d+',
    "shadowed-seq": r'(?<="shadowedSeqs":\[)\d+', "shadowed-start": r'(?<="shadowedRange":\{"start":)\d+'}


@pytest.mark.parametrize("literal", ["1e400", "1e20", "true", '"7"', "-1"])
@pytest.mark.parametrize("field", list(_NUMBER_FIELDS))
def test_a_logged_count_or_seq_that_is_no_int64(tmp_path, capsys, field, literal):
    """Every count and seq a log states, written as JSON numbers beyond int64 (``1e400`` reads
    as Infinity, as in JavaScript), a boolean, a string or a negative number: the load, every
    frame, the widget (which replays DSH's measure and draws the fill as a share of the window),
    every read-only command and the what-if run with no internal error and no numpy warning (a
    value DSH's own rules refuse is reported as a finding). Before
    the fix: a ``true`` shadowed seq of a prune ended the audit in a TypeError (a boolean is an
    int to `isinstance`), a usage of 1e400 the widget in pandas' IntCastingNaNError, a context
    window or maxTokens of 1e400 the widget in an OverflowError, a string usage the widget in
    DSH's MeterError, and usages beyond int64 the what-if's comparison in an OverflowError."""
    import re
    import warnings

    pytest.importorskip("ipywidgets")
    from workbench.cli.main import main
    from workbench.session import load
    from workbench.views import Workbench

    text, count = re.subn(_NUMBER_FIELDS[field], literal, _PRUNING.read_text(encoding="utf-8"))
    assert count, field
    path = tmp_path / "numbers.session.v4.jsonl"
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)   # e.g. an overflow drawing the fill
        every_frame(path)
        for meters in ("dsh", ("dsh", "o200k")):
            Workbench(load(path), meters=meters)._repr_mimebundle_()
    every_command(path, tmp_path, capsys)   # with the report and the export
    for summarizer in ("logged", "truncate"):
        assert main(["whatif", "--json", "--summarizer", summarizer, "--policy",
                     "headroom_tokens=1024", str(path)]) in (0, 1, 2)
        captured = capsys.readouterr()
        assert "internal error" not in captured.err + captured.out, captured.err[-2000:]
