"""Bounded reading past the first defect, the named limits, long lines, deep nesting, and one
line number per defect (message and field agree)."""
from __future__ import annotations

import json
import re

import pytest

from tour_script import tour_script
from workbench.core.load import load_bytes
from workbench.io import deepjson, jsjson, scan, tail, zstd


@pytest.fixture(scope="module")
def clean_lines(tmp_path_factory) -> list[bytes]:
    path = tour_script(4, session_id="session-limits").write(
        tmp_path_factory.mktemp("limits") / "base.session.v4.jsonl")
    return path.read_bytes().rstrip(b"\n").split(b"\n")


def _log(lines: list[bytes], name: str = "x.session.v4.jsonl", encoding: str | None = None):
    return load_bytes(b"\n".join(lines) + b"\n", name=name, encoding=encoding)


def _rules(log) -> list[str]:
    return [d.rule for d in log.defects]


TURN_END = {"type": "turn/end", "seq": 10**6, "time": 1, "data": {"turn": 9, "reason": {"kind": "completed"}}}


@pytest.mark.parametrize("spelling", [
    b'"turn/end"', b'"turn\\/end"', b'"\\u0074urn/end"', b'"turn/\\u0065nd"'])
def test_a_later_turn_end_is_found_however_it_is_spelled(clean_lines, spelling):
    line = json.dumps(TURN_END, separators=(",", ":")).encode().replace(b'"turn/end"', spelling)
    cut = len(clean_lines) // 2
    lines = clean_lines[:cut] + [b"{bad"] + [b"garbage"] * 5_000 + [line]
    log = _log(lines)
    assert log.verdict == "corrupt", log.defects  # damage inside committed history
    assert _rules(log)[0] == "unparsable_committed"


def test_garbage_after_the_issue_is_a_tolerated_tail(clean_lines):
    cut = len(clean_lines) // 2
    log = _log(clean_lines[:cut] + [b"{bad"] + [b"x", b"/", b"\\", b"[]"] * 20_000)
    assert log.verdict == "repairable"
    assert _rules(log) == ["unparsable_committed"]
    assert len(log.events) == cut - 1


def test_admission_still_screens_rows_after_the_issue(clean_lines):
    retired = next(json.loads(x) for x in clean_lines if b'"user/message"' in x)
    retired["data"]["source"] = {"kind": "plugin", "plugin": "x"}
    cut = len(clean_lines) // 2
    log = _log(clean_lines[:cut] + [b"{bad", b"noise/\\", json.dumps(retired).encode()])
    assert log.verdict in ("corrupt", "refused")
    assert any(d.rule == "retired_or_forbidden_syntax" or "plugin" in d.message
               for d in log.defects), log.defects


@pytest.mark.parametrize("limit, value, lines", [
    ("AFTER_ISSUE_LINES", 50, [b'{"type":"user/message"}'] * 200),
    ("AFTER_ISSUE_BYTES", 1_000, [b'{"type":"user/message","x":"' + b"a" * 100 + b'"}'] * 200),
    ("AFTER_ISSUE_INPUT", 10_000, [b"garbage line"] * 5_000),
])
def test_reading_stops_at_a_named_limit(clean_lines, monkeypatch, limit, value, lines):
    monkeypatch.setattr(tail, limit, value)
    log = _log(clean_lines[:5] + [b"{bad"] + lines + [json.dumps(TURN_END).encode()])
    assert log.verdict == "corrupt"
    stop = next(d for d in log.defects if d.rule == "scan_limit_after_issue")
    assert limit in stop.message and f"line {stop.line}" in stop.message


def test_zstd_after_a_bad_line_reports_the_bad_line_not_a_torn_record(clean_lines):
    body = clean_lines[1:6] + [b"{bad"] + [b"more garbage"] * 1_000
    frames = [clean_lines[0] + b"\n"] + [b"\n".join(body[k:k + 50]) + b"\n"
                                        for k in range(0, len(body), 50)]
    log = load_bytes(zstd.compress_frames(frames), name="x.session.v4.jsonl.zstd")
    assert _rules(log) == ["unparsable_committed"]
    assert log.verdict == "repairable"
    torn = zstd.compress_frames([clean_lines[0] + b"\n", b"\n".join(body[:5]) + b"\n{half"])
    assert "zstd_torn_record_in_complete_frame" in _rules(
        load_bytes(torn, name="x.session.v4.jsonl.zstd"))


def test_max_line_is_the_reference_limit_and_is_named_when_hit(clean_lines, monkeypatch):
    assert scan.MAX_LINE == 2**29 - 24  # V8's longest string: where buffer.toString() fails
    long_text = next(i for i, x in enumerate(clean_lines) if b'"text":"' in x and i > 3)
    line = clean_lines[long_text]
    at = line.index(b'"text":"') + 8
    big = line[:at] + b"y" * 300_000 + line[at:]
    lines = clean_lines[:long_text] + [big] + clean_lines[long_text + 1:]
    assert _log(lines).verdict == _log(clean_lines).verdict  # within the limit: parsed
    monkeypatch.setattr(scan, "MAX_LINE", 200_000)
    log = _log(lines)
    issue = next(d for d in log.defects if d.rule == "unparsable_committed")
    named = next(d for d in log.defects if d.rule == "line_limit")
    assert "MAX_LINE" in named.message and named.line == issue.line == long_text


@pytest.mark.parametrize("make", [
    lambda ls: ls[:4] + [b"{bad"] + ls[5:],
    lambda ls: ls[:4] + ls[5:],                                  # a seq gap
    lambda ls: ls[:6] + [re.sub(rb'"seq":\d+', b'"seq":"x"', ls[6], count=1)] + ls[7:],
    lambda ls: ls[:7] + [b"{bad"] + ls[7:] + [json.dumps(TURN_END).encode()],
])
def test_message_and_field_give_one_line_number(clean_lines, make):
    log = _log(make(list(clean_lines)))
    assert log.defects
    for d in log.defects:
        said = re.findall(r"\bline (\d+)", d.message)
        if said:
            assert d.line == int(said[0]), d
        if d.line is not None and d.seq is not None and d.line > 0:
            assert d.line == d.seq + 1 or said  # record line n holds event n - 1 here


@pytest.mark.parametrize("depth", [1_025, 100_000])
@pytest.mark.parametrize("open_, close", [("[", "]"), ('{"a":', "}"), ('[{"b":', "}]")])
def test_deep_nesting_parses_like_json_parse(depth, open_, close):
    text = '{"k":' + open_ * depth + '"v"' + close * depth + ',"n":1}'
    value = jsjson.loads(text.encode())
    assert value["n"] == 1
    assert jsjson.stringify(value) == text  # JSON.stringify prints it back unchanged
    inner, levels = value, 0
    while isinstance(inner, (list, dict)):
        inner = inner[0] if isinstance(inner, list) else next(iter(inner.values()))
        levels += 1
    assert isinstance(inner, jsjson.Deep)  # no Python object per level below the cap
    assert levels == deepjson.MATERIALISED_DEPTH


@pytest.mark.parametrize("text", [
    "[" * 2_000 + "]" * 1_999, "[" * 2_000 + "}" * 2_000, "[" * 2_000 + "]" * 2_000 + "]",
    '{"a":' * 2_000 + "}" * 2_000, "[" * 2_000 + "1 2" + "]" * 2_000,
    "[" * 2_000 + "01" + "]" * 2_000, "[" * 2_000 + '"\x01"' + "]" * 2_000])
def test_deep_invalid_json_is_unparsable(text):
    with pytest.raises(ValueError):
        jsjson.loads(text.encode())


def test_deep_values_print_as_json_stringify_would():
    text = "[" * 1_500 + ' 1.0 , -0 , 1e2 , "\\u0041\\/" , { "x" : [ ] } ' + "]" * 1_500
    assert jsjson.stringify(jsjson.loads(text.encode())) == \
        "[" * 1_500 + '1,0,100,"A/",{"x":[]}' + "]" * 1_500
