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


def _ranged(clean_lines: list[bytes], count: int, sources) -> list[bytes]:
    """`clean_lines` then `count` more rows, row k citing `sources(k)` (its seq k)."""
    first = len(clean_lines) - 1      # the header is line 0: the next seq
    rows = [json.dumps({"type": "session/title", "seq": k, "time": 1, "data": {"title": "t"},
                        "sourceEventSeqs": sources(k)}, separators=(",", ":")).encode()
            for k in range(first, first + count)]
    return clean_lines + rows


def test_range_pairs_citing_every_earlier_seq_stop_at_the_named_bound(clean_lines):
    """Each row of n is a few bytes and expands to all earlier seqs: n²/2 in all (gigabytes at
    n = 40,000). Reading stops at the line that passes `MAX_RANGE_SEQS` + 8 per event; the rows
    before it load."""
    from workbench.io import rows_v4
    lines = _ranged(clean_lines, 40_000, lambda k: [[0, k - 1]])
    log = _log(lines)
    stop = next(d for d in log.defects if d.rule == "sources_limit")
    assert "MAX_RANGE_SEQS" in stop.message and f"line {stop.line}" in stop.message
    assert log.verdict == "corrupt"
    assert len(log.events) == stop.line - 1 < 4_000
    expanded = sum(range(len(clean_lines) - 1, len(log.events)))   # what the loaded rows hold
    assert expanded <= rows_v4.MAX_RANGE_SEQS + rows_v4.RANGE_SEQS_PER_EVENT * len(log.events)


def test_range_pairs_citing_the_events_since_the_last_never_meet_the_bound(clean_lines):
    """DSH 0.1.2's pattern: each message cites the range since the previous one."""
    step = 50
    lines = _ranged(clean_lines, 2_000, lambda k: [[max(0, k - step), k - 1]])
    log = _log(lines)
    assert not any(d.rule == "sources_limit" for d in log.defects)
    assert len(log.events) == len(lines) - 1


def test_v0_range_pairs_share_the_bound_and_an_undecodable_pair_is_no_range(tmp_path, monkeypatch):
    """A v0 (DSH 0.1.2) row's pairs are charged to the same bound; a pair that does not decode
    (``[0, 10**12]``: not earlier than its row) stays a list entry the fold names, and no
    consumer expands it (the index once did: MemoryError in `workbench.load`)."""
    from workbench.io import rows_v4
    from workbench.session import Session
    path = tour_script(0, session_id="session-ranges", pack_rows=False).write(tmp_path / "x.session.jsonl")
    lines = path.read_bytes().rstrip(b"\n").split(b"\n")
    at = next(i for i, x in enumerate(lines) if b'"sourceEventSeqs"' in x)
    row = json.loads(lines[at])

    def with_sources(sources) -> list[bytes]:
        return lines[:at] + [json.dumps({**row, "sourceEventSeqs": sources}).encode()] + lines[at + 1:]

    log = _log(with_sources([[0, 10**12]]), name="x.session.jsonl")
    seq = next(e["seq"] for e in log.events if e.get("sourceEventSeqs") == [[0, 10**12]])
    assert any("sourceEventSeqs" in d.message for d in log.defects), log.defects
    session = Session(log)
    assert list(session.events_df()["source_seqs"].iloc[seq]) == []
    session.compactions_df()
    monkeypatch.setattr(rows_v4, "MAX_RANGE_SEQS", 0)
    monkeypatch.setattr(rows_v4, "RANGE_SEQS_PER_EVENT", 0)
    stopped = _log(with_sources([[0, 1]]), name="x.session.jsonl")
    assert [d.rule for d in stopped.defects][:1] == ["sources_limit"], stopped.defects
    assert len(stopped.events) == seq
