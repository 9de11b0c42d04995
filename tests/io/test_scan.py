"""The line scanner and header dispatch (v0/v4 spec §1.3, §1.7; reference SessionLogScanner,
consumeEventLine, parseHeaderRecord): committed prefix, torn tail, first issue only, a later
committed turn/end makes the issue fatal; exact reference texts."""
from __future__ import annotations

import json

import pytest

from workbench.io import jsjson
from workbench.io.header import parse_header_record
from workbench.io.layout import generation_from_name
from workbench.io.legacy import V0Codec
from workbench.io.read import scan_bytes
from workbench.io.rows_v4 import V4Codec
from workbench.io.scan import LineScanner

V4_HEADER = (b'{"type":"session","version":4,"id":"s4","createdAt":1,"isSeeded":false,'
             b'"delegationDepth":0}\n')
V0_HEADER = b'{"type":"session","version":0,"id":"s0","createdAt":1,"delegationDepth":0}\n'


def ev(seq: object, kind: str = "todo/write", **extra: object) -> bytes:
    data = extra.pop("data", {"todos": []})
    return json.dumps({"type": kind, "seq": seq, "time": 5, "data": data, **extra},
                      separators=(",", ":")).encode() + b"\n"


TURN_END = ev(9, "turn/end", data={"turn": 1, "reason": {"kind": "completed"}})


def scan(body: bytes, version: int = 4):
    header = V4_HEADER if version == 4 else V0_HEADER
    return scan_bytes(header + body, name="session.v4.jsonl" if version == 4 else "session.jsonl",
                      generation=version)


@pytest.mark.parametrize(("version", "body", "fatal", "tolerated"), [
    pytest.param(4, ev(0) + b"{oops\n", None,
                 "corrupt session log: unparsable committed event at line 2", id="v4-unparsable-tail"),
    pytest.param(4, ev(0) + b"\n" + TURN_END, "corrupt session log: unparsable committed event at line 2", None,
                 id="v4-empty-line-then-turn-end"),
    pytest.param(4, ev(0) + ev(2), None, "corrupt session log: invalid committed event at line 2: "
                 "released v2 row 1 has seq gap (expected 1, got 2)", id="v4-gap-tail"),
    pytest.param(4, ev(0) + ev("1"), None, "corrupt session log: invalid committed event at line 2: "
                 "released v2 row 1 has seq gap (expected 1, got 1)", id="v4-string-seq"),
    pytest.param(4, ev(0) + ev(2) + b"{x\n" + TURN_END, "corrupt session log: invalid committed event at line 2: "
                 "released v2 row 1 has seq gap (expected 1, got 2)", None, id="v4-first-issue-only"),
    pytest.param(4, ev(0) + ev(1, extra=1), None, "corrupt session log: invalid committed event at line 2: "
                 "released v2 row 1 has unexpected field extra", id="v4-extra-key"),
    pytest.param(0, ev(0) + b"{oops\n", None,
                 {"kind": "unparsable_committed_event", "message": "corrupt session log: unparsable committed "
                  "event at line 2"}, id="v0-unparsable-tail"),
    pytest.param(0, ev(0) + ev(2), None, {"kind": "seq_gap_committed", "message": "corrupt session log: seq gap "
                 "in committed region at line 2 (expected 1, got 2)"}, id="v0-gap-tail"),
    pytest.param(0, ev(0) + b"42\n", None, {"kind": "seq_gap_committed", "message": "corrupt session log: seq gap "
                 "in committed region at line 2 (expected 1, got undefined)"}, id="v0-scalar"),
    pytest.param(0, ev(0) + ev(1).replace(b'"seq":1', b'"seq":5', 1).replace(b"todo/write", b"turn/end"),
                 "corrupt session log: seq gap in committed region at line 2 (expected 1, got 5)", None,
                 id="v0-gap-on-turn-end"),
    pytest.param(0, ev(0) + b"null\n", "Cannot read properties of null (reading 'seq')", None, id="v0-null"),
])
def test_committed_prefix_issues(version: int, body: bytes, fatal: str | None, tolerated: object) -> None:
    result = scan(body, version)
    assert (result.fatal.message if result.fatal else None) == fatal
    got = result.tolerated
    if version == 0 and got is not None:
        got = {"kind": got.kind, "message": got.message}
    elif got is not None:
        got = got.message
    assert got == tolerated
    assert [e["seq"] for e in result.log.events] == [0]


def test_torn_fragment_is_never_parsed_or_committed() -> None:
    body = ev(0) + ev(1)[:-1]  # a complete JSON value, but no newline
    result = scan(body)
    assert result.fatal is None and result.tolerated is None
    assert len(result.log.events) == 1
    assert result.log.committed_bytes == len(V4_HEADER) + len(ev(0))
    assert result.log.torn_tail and result.log.truncate_to == result.log.committed_bytes


def test_crlf_lines_parse_and_count_their_carriage_returns() -> None:
    body = ev(0).replace(b"\n", b"\r\n") + ev(1).replace(b"\n", b"\r\n")
    result = scan(body)
    assert [e["seq"] for e in result.log.events] == [0, 1]
    assert result.log.committed_bytes == len(V4_HEADER) + len(body)
    assert not result.log.torn_tail


@pytest.mark.parametrize("size", [1, 2, 7, 64, 10_000])
def test_chunking_never_changes_the_outcome(size: int) -> None:
    """The scanner is fed plaintext in arbitrary pieces (zstd frames); records may span them."""
    body = ev(0) + ev(1) + b"{bad\n" + ev(3) + ev(4)[:10]
    got = []
    scanner = LineScanner(V4Codec(), lambda events, line, start, end: got.append((line, start, end)),
                          base=len(V4_HEADER))
    for i in range(0, len(body), size):
        scanner.write(body[i:i + size])
    assert scanner.finish() is True
    whole = []
    reference = LineScanner(V4Codec(), lambda events, line, start, end: whole.append((line, start, end)),
                            base=len(V4_HEADER))
    reference.write(body)
    reference.finish()
    assert got == whole == [(1, len(V4_HEADER), len(V4_HEADER) + len(ev(0)) - 1),
                            (2, len(V4_HEADER) + len(ev(0)), len(V4_HEADER) + len(ev(0) + ev(1)) - 1)]
    assert scanner.issue.message == "corrupt session log: unparsable committed event at line 3"
    assert scanner.committed_bytes == reference.committed_bytes


def test_retired_syntax_is_refused_even_after_a_tolerated_issue() -> None:
    wrapper = ev(2, "user/message", data={"id": "u", "role": "user", "source": {"kind": "user"},
                                          "content": [{"type": "tool-result", "toolCallId": "c", "content": []}]},
                 surfaceOp="append")
    result = scan(ev(0) + b"{bad\n" + wrapper)
    assert result.fatal.kind == "retired_or_forbidden_syntax"
    assert result.fatal.name == "SessionFormatError"
    assert result.fatal.message == ("format v4 user/message at seq 2 content must not contain a released "
                                    "tool-result wrapper")


def test_loads_keeps_negative_zero_and_js_numbers() -> None:
    assert str(jsjson.loads(b'{"a":-0}')["a"]) == "-0.0"
    assert jsjson.loads(b'{"a":"2026-01-02","b":-0.0}') == {"a": "2026-01-02", "b": -0.0}
    assert jsjson.loads(b'[1e400]') == [float("inf")]
    assert jsjson.loads(b'"\\ud800"') == "\ud800"


@pytest.mark.parametrize(("name", "generation"), [
    pytest.param("session.jsonl", 0, id="v0"),
    pytest.param("/root/--p--/s/session.v4.jsonl.zstd", 4, id="v4-zstd"),
    pytest.param("dev-large__session.v4.jsonl", 4, id="corpus-name"),
    pytest.param("session.v12.jsonl", 12, id="future"),
    pytest.param("session.v04.jsonl", None, id="leading-zero"),
    pytest.param("session.v0.jsonl", None, id="explicit-v0-tag"),
    pytest.param("child.expected.jsonl", None, id="fixture-name"),
    pytest.param("apps--web--round--session.jsonl", 0, id="flattened-fixture-name"),
    pytest.param("load-delivery-wrong-session.jsonl", None, id="name-merely-ending-in-session"),
    pytest.param("notes.session.v4.jsonl", None, id="dotted-prefix"),
    pytest.param("my_session.v4.jsonl", None, id="underscore-prefix"),
])
def test_generation_from_name(name: str, generation: int | None) -> None:
    assert generation_from_name(name) == generation


@pytest.mark.parametrize(("header", "generation", "kind", "message"), [
    pytest.param(b'{"type":"session","version":5,"id":"x"}\n', 4, "unsupported_newer",
                 'session "x" uses log format v5, but this harness reads only v4: the log was written by a newer '
                 "harness \u2014 upgrade the harness to open it", id="v4-newer"),
    pytest.param(b'{"type":"session","version":3,"id":7}\n', 4, "unsupported_older",
                 'session "7" uses log format v3, older than the supported v4, and this build ships no upgrade '
                 "path for it", id="v4-older-numeric-id"),
    pytest.param(b'{"type":"session","version":4,"id":"x"}\n', 0, "unsupported_version",
                 'session "x" uses log format v4, but this harness reads only v0: the log was written by a newer '
                 "harness \u2014 upgrade the harness to open it", id="v0-reader"),
    pytest.param(b'{"type":"session","version":2,"id":"x"}\n', None, "unsupported_older",
                 'session "x" uses log format v2, older than the supported v4, and this build ships no upgrade '
                 "path for it", id="unnamed-v2"),
    pytest.param(b"[1]\n", 4, "header_not_object", "corrupt session log: first line is not a JSON object",
                 id="v4-array"),
    pytest.param(b"[1]\n", 0, "header_invalid", "corrupt session log: first line is not a session header",
                 id="v0-array"),
    pytest.param(b"\xef\xbb\xbf{}\n", 4, "header_not_json", "corrupt session log: header line is not valid JSON",
                 id="bom"),
    pytest.param(b'{"type":"session","version":4}', 4, "header_missing", "empty or header-less session log",
                 id="no-newline"),
])
def test_header_refusals_and_corruption(header: bytes, generation: int | None, kind: str, message: str) -> None:
    result = parse_header_record(header, generation=generation)
    assert result.issue.kind == kind
    assert result.issue.message == message


def test_fixture_headers_dispatch_by_their_features() -> None:
    """A header without version (v0 fixtures) is corrupt but still read with the v0 rules."""
    result = parse_header_record(b'{"type":"session","id":"{{sessionId}}","createdAt":0}\n')
    assert result.issue.kind == "header_invalid" and result.readable and result.generation == 0


def test_v0_fixture_rows_get_implicit_seq_and_time() -> None:
    body = (b'{"type":"turn/start","data":{"turn":1}}\n'
            b'{"type":"text-chunks","data":{"turn":1,"step":1,"index":0,"dt":[4],"texts":["a","b"]}}\n'
            b'{"type":"turn/end","data":{"turn":1,"reason":{"kind":"aborted"}}}\n')
    result = scan_bytes(V0_HEADER + body, name="child.expected.jsonl")
    events = list(result.log.events)
    assert [(e["seq"], e["time"]) for e in events] == [(0, 0), (1, 0), (2, 4), (3, 0)]
    assert events[3]["data"]["reason"] == {"kind": "aborted", "reason": {"kind": "legacy"}}
    assert result.log.implicit_seqs and isinstance(result.codec, V0Codec)


@pytest.mark.parametrize("size", [7, 1000])
def test_records_beyond_the_line_limit_are_unparsable_without_being_held(
        monkeypatch: pytest.MonkeyPatch, size: int) -> None:
    from workbench.io import scan as scan_module
    monkeypatch.setattr(scan_module, "MAX_LINE", 200)
    long_line = ev(1, data={"todos": [{"content": "x" * 400, "status": "pending"}]})
    body = ev(0) + long_line + ev(2)
    got = []
    scanner = LineScanner(V4Codec(), lambda events, *_: got.extend(events), base=len(V4_HEADER))
    for i in range(0, len(body), size):
        scanner.write(body[i:i + size])
        assert scanner.held_bytes <= 200 + size
    assert scanner.finish() is False
    assert [e["seq"] for e in got] == [0]
    assert scanner.issue.message == "corrupt session log: unparsable committed event at line 2"
    scanner = LineScanner(V4Codec(), lambda *_: None, base=0)
    scanner.write(long_line[:-1])
    assert scanner.finish() is True and scanner.issue is None


@pytest.mark.parametrize("spelled", [b"tool-result", b"\\u0074ool-result", b"tool\\u002dresult", b"tool-r\\u0065sult",
                                     b"\\u0074\\u006f\\u006f\\u006c\\u002d\\u0072\\u0065\\u0073\\u0075\\u006c\\u0074"])
def test_a_wrapper_name_spelled_with_escapes_is_refused_as_spelled_out(spelled: bytes) -> None:
    """Row admission reads a row's content loops only when its bytes may spell a wrapper or
    tool-change name: literally or through a ``\\u00XX`` escape (`admission_v4._suspect`)."""
    line = (b'{"type":"user/message","seq":0,"time":0,"surfaceOp":"append","data":{"id":"u","role":"user",'
            b'"source":{"kind":"user"},"content":[{"type":"' + spelled + b'","toolCallId":"c","content":[]}]}}\n')
    result = scan(line)
    assert result.fatal is not None and result.fatal.kind == "retired_or_forbidden_syntax"
    assert result.fatal.message == ("format v4 user/message at seq 0 content must not contain a released "
                                    "tool-result wrapper")


@pytest.mark.parametrize(("name", "header"), [
    pytest.param("session.v5.jsonl", b'{"type":"session","version":4,"id":"x","createdAt":1,"isSeeded":false,'
                 b'"delegationDepth":0}\n', id="newer-name-v4-header"),
    pytest.param("a__session.v2.jsonl", b'{"type":"session","version":0,"id":"x","createdAt":1,'
                 b'"delegationDepth":0}\n', id="never-released-name-v0-header"),
])
def test_a_name_of_an_unread_generation_over_a_readable_header_is_corrupt(name: str, header: bytes) -> None:
    """Spec v4 §0.1 item 3: the name is a hint; a mismatch outside the readable generations'
    own refusals is corruption, and the rows are still read with the header's reader."""
    result = parse_header_record(header, name=name)
    claimed = generation_from_name(name)
    assert result.issue.kind == "header_name_mismatch" and result.readable and result.meta is not None
    assert f"generation {claimed}" in result.issue.message
    assert parse_header_record(header, name="session.jsonl" if b'"version":0' in header
                               else "session.v4.jsonl").issue is None
    version = 0 if b'"version":0' in header else 4
    assert parse_header_record(header.replace(b'"version":%d' % version, b'"version":%d' % claimed),
                               name=name).issue.kind.startswith("unsupported")
