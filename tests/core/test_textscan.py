"""`core.compaction.textscan.TextScan`, the one reading of message text for the lost-fact probe
and the quality anchors: on generated messages (prose, reasoning, tool calls with JSON, nested
or broken arguments, tool results, boilerplate and checkpoint sources; texts with non-ASCII,
the U+001C..U+001F separators, CRLF, lines and texts longer than the memos keep) it gives
exactly the probe's facts of `probe.message_text` and the anchors of `anchors.anchor_keys`
over `message_texts`, whatever its memos hold (small memos that overflow, schema words changed
between messages, one scan shared by both measures or one per measure, results handed back at
once or after a batch of new lines is scanned)."""
from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.compaction.anchor_texts import message_texts, message_views
from workbench.core.compaction.anchors import anchor_keys
from workbench.core.compaction.probe import message_parts, message_text, text_facts
from workbench.core.compaction.textscan import TextScan

_WORDS = list("aAeEfFxz:/._-@+~$ \t\r\n0123456789,;()[]<>\"'`") + [
    "\u00a0", "\u2003", "\u2028", "\x0b", "\x1c", "\x1d", "\x1e", "\x1f", "é", "ß", "ı", "ſ",
    "K", "µ", "\u0660", "日本", "\r\n", "http://x.io/a", "https://", "Error", "ValueError",
    "Exception", "Warning", "exit code: ", "exit code 2", "exit status 1", "error: ", "Traceback",
    "FATAL", "panic ", ".py", ".json", "../", "~/", "src/app/main.py", "ERR_X", "EACCES",
    "parseConfig", "snake_case", "port 8080", "size: 17", "12 ms", "30s", "1, 2, 3", "line 4",
    "$ ls -la", "deadbeef12", "0123abcd-0000-4000-8000-0123456789ab", "<path>", "</content>",
    "  12: ", "[exit code: 0]", '"key": ', "must not", "never", "always use", "file_path",
    "Bash", "tool_x", "<compacted-summary>", "fn()"]
_LINE = st.lists(st.sampled_from(_WORDS), max_size=30).map("".join)
_TEXT = st.one_of(_LINE, st.tuples(_LINE, st.integers(1, 400)).map(lambda t: t[0] * t[1]))
"""A text; sometimes one repeated past `LINE_CHARS` / `TEXT_CHARS`."""
_ARGUMENTS = st.one_of(
    st.dictionaries(st.sampled_from(["command", "cmd", "path", "file_path", "q", "x"]), _TEXT,
                    max_size=3).map(json.dumps),
    st.dictionaries(st.sampled_from(["script", "args", "opts"]),
                    st.one_of(_TEXT, st.lists(_TEXT, max_size=2),
                              st.dictionaries(st.sampled_from(["shell", "y"]), _TEXT,
                                              max_size=2), st.integers()),
                    max_size=3).map(json.dumps),
    _TEXT, st.dictionaries(st.sampled_from(["command", "z"]), _TEXT, max_size=2), st.none())
_LEAF = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _TEXT),
    st.builds(lambda t: {"type": "reasoning", "text": t}, _TEXT),
    st.builds(lambda n, a: {"type": "tool-call", "id": "c1", "name": n, "arguments": a},
              st.one_of(st.sampled_from(["Bash", "read_file", "parseConfig"]), st.none()),
              _ARGUMENTS),
    st.builds(lambda t: {"type": "image", "text": t}, _TEXT), st.just("not a block"))
_BLOCKS = st.recursive(st.lists(_LEAF, max_size=4), lambda inner: st.lists(st.one_of(
    _LEAF, st.builds(lambda c: {"type": "tool-result", "toolCallId": "c1", "content": c},
                     st.one_of(inner, _TEXT))), max_size=4), max_leaves=8)
_SOURCE = st.sampled_from([None, {"kind": "user"}, {"kind": "runtime-context"},
                           {"kind": "time-context"}, {"kind": "compact-checkpoint"},
                           {"kind": "plugin"}, {"plugin": "compact"}, "user"])


@st.composite
def _messages(draw) -> dict:
    message = {"role": draw(st.sampled_from(["user", "assistant", "tool", "developer"])),
               "content": draw(st.one_of(_TEXT, _BLOCKS, st.none()))}
    source = draw(_SOURCE)
    if source is not None:
        message["source"] = source
    return message


_STOPS = st.sampled_from([frozenset(), frozenset({"tool_x", "Bash"}),
                          frozenset({"snake_case", "parseConfig", "src/app/main.py"})])


class _Small(TextScan):
    TEXTS, TEXT_CHARS, LINES, LINE_CHARS = 3, 40, 4, 20
    TEXT_BUDGET, LINE_BUDGET = 50, 30
    BATCH, BATCH_CHARS = 3, 60


def _within_budgets(scan: TextScan) -> bool:
    """The characters a scan's memos remember stay within their budgets."""
    memos = ((scan._text_ids, scan.TEXT_BUDGET), (scan._text_anchors, scan.TEXT_BUDGET),
             (scan._line_ids, scan.LINE_BUDGET), (scan._line_anchors, scan.LINE_BUDGET))
    return all(sum(len(k if isinstance(k, str) else k[1]) for k in memo) <= memo.held <= budget
               for memo, budget in memos)


def _distinct_facts(message: dict) -> list[tuple[str, str]]:
    return list(dict.fromkeys(text_facts(message_text(message))))


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_messages(), _STOPS), max_size=6), st.booleans())
def test_one_scan_gives_each_measure_what_its_own_rules_give(batch, small: bool) -> None:
    shared = (_Small if small else TextScan)()
    probe_only = (_Small if small else TextScan)(anchors=False)
    anchors_only = (_Small if small else TextScan)(probe=False)
    rounds = batch + batch + [(m, s) for (m, _), (_, s) in zip(batch, batch[1:] + batch[:1])]
    for message, stop in rounds:   # later rounds read the memos, under other schema words
        shared.stop = anchors_only.stop = stop
        for scan in (shared, probe_only):
            chars, ids = scan.probe(message)
            assert chars == len(message_text(message))
            assert [scan.facts[i] for i in ids] == _distinct_facts(message)
        expected = tuple(anchor_keys(message_texts(message), stop))
        assert shared.anchors(message) == expected
        assert anchors_only.anchors(message) == expected
        assert shared.anchors(dict(message)) == expected   # a new object: walked again
        assert all(map(_within_budgets, (shared, probe_only, anchors_only)))


@settings(max_examples=400, deadline=None)
@given(_messages())
def test_one_walk_yields_both_views(message: dict) -> None:
    assert message_views(message) == (message_parts(message), message_texts(message))
    assert message_views(message, pieces=False) == (message_parts(message), [])
    assert message_views(message, parts=False) == ([], message_texts(message))


@settings(max_examples=300, deadline=None)
@given(st.lists(_TEXT, max_size=5), st.lists(st.tuples(st.sampled_from(
    ["text", "user", "command"]), _TEXT), max_size=5), _STOPS)
def test_texts_without_a_message(parts: list[str], pieces: list, stop) -> None:
    scan = _Small(stop=stop)
    for _ in range(2):
        assert [scan.facts[i] for i in scan.fact_ids(parts)] == list(
            dict.fromkeys(text_facts("\n".join(parts))))
        assert scan.anchor_keys(pieces) == tuple(anchor_keys(pieces, stop))



@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_messages(), _STOPS), max_size=8), st.booleans())
def test_a_batched_scan_hands_each_message_its_own_results(batch, small: bool) -> None:
    scan = (_Small if small else TextScan)(batch=True)
    got: list = []
    expected: list = []
    rounds = batch + [(m, s) for (m, _), (_, s) in zip(batch, batch[1:] + batch[:1])]
    for seq, (message, stop) in enumerate(rounds):   # a new stop scans the waiting batch first
        scan.stop = stop
        scan.probe_later(seq, message, lambda s, chars, ids: got.append(
            ("probe", s, chars, [scan.facts[i] for i in ids])))
        scan.anchors_later(seq, message, lambda s, anchors: got.append(("anchors", s, anchors)))
        expected.append(("probe", seq, len(message_text(message)), _distinct_facts(message)))
        expected.append(("anchors", seq, tuple(anchor_keys(message_texts(message), stop))))
    scan.flush()
    assert sorted(got, key=repr) == sorted(expected, key=repr)
    assert scan._probes == [] and scan._pieces == [] and scan._waiting_chars == 0


def _own_tool_blocks(message: dict) -> list:
    content = message.get("content")
    return [b for b in content if isinstance(b, dict) and (
        b.get("type") == "tool-call" and isinstance(b.get("name"), str)
        or b.get("type") == "tool-result" and isinstance(b.get("toolCallId"), str))
            ] if isinstance(content, list) else []


@settings(max_examples=300, deadline=None)
@given(_messages())
def test_the_walk_yields_the_contents_own_tool_blocks(message: dict) -> None:
    scan = TextScan()
    scan.anchors(message)
    assert scan.tool_blocks(message) == _own_tool_blocks(message)
    assert TextScan().tool_blocks(message) == _own_tool_blocks(message)
