"""Property test: valid logs written by `workbench.build`, then one hostile change (an out-of-range
number in any numeric field, deep nesting, a long string of odd unicode). Every frame, every CLI
subcommand and the report run without an exception or a traceback, and the verdicts follow the
rules:

* JavaScript reads a number as a double, so an integer literal too big for int64 and the shortest
  decimal of the same double are the same value: both logs get the same verdict and defects;
* a usage count of any size is a valid count (DSH writes back what JavaScript read): the log stays
  clean;
* `JSON.parse` accepts deep nesting: a value nested hundreds or thousands of levels deep, in
  place of any value under ``data`` (a tool schema, a message's content, an unknown field), gets
  the verdict the same value one level deep gets;
* text content is data: a long string of odd unicode keeps the verdict of the original log.

More examples: ``WORKBENCH_HYPOTHESIS_EXAMPLES=200``.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from hostile_checks import every_command, every_frame
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tour_script import tour_script

from workbench.core.load import load_log
from workbench.io.jsjson import number_to_str

EXAMPLES = int(os.environ.get("WORKBENCH_HYPOTHESIS_EXAMPLES", "12"))
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

BIG_INTS = st.one_of(st.integers(min_value=2**63, max_value=10**40),
                     st.integers(min_value=-(10**40), max_value=-(2**63)),
                     st.sampled_from([10**30 + 7, 2**64, 2**53 + 1, 10**308]))
ODD_TEXT = st.lists(st.sampled_from([
    "a", "é", "中文", "😀", "\u202e", "\u2028", "\u0000", "\u001b[31m", "<script>", "\\", '"',
    "\ufeff", "\u0301", "&amp;", "\U0010ffff"]), min_size=1, max_size=40).map("".join)


def _lines(version: int, tmp: Path) -> list[bytes]:
    path = tour_script(version, session_id="session-prop").write(tmp / f"base-v{version}.jsonl")
    return path.read_bytes().split(b"\n")


def _numeric_paths(value, path=()):
    if type(value) is bool:
        return
    if type(value) in (int, float):
        yield path
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _numeric_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numeric_paths(v, (*path, i))


def _value_paths(value, path=()):
    """Paths of every value under `value`, containers included."""
    yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(
        value, list) else ()
    for k, v in items:
        yield from _value_paths(v, (*path, k))


def _usage_paths(value, path=()):
    """Paths of the `usage` objects in an event (message usage, v0 usage chunks)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "usage" and isinstance(v, dict):
                yield (*path, k)
            else:
                yield from _usage_paths(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _usage_paths(v, (*path, i))


def _with_text(event: dict, path: tuple, literal: str) -> bytes:
    """The event's JSON with the value at `path` replaced by the literal JSON text `literal`."""
    target = event
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = "\x00MARK\x00"
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode().replace(
        b'"\\u0000MARK\\u0000"', literal.encode())


def _write(tmp: Path, name: str, lines: list[bytes]) -> Path:
    path = tmp / name
    path.write_bytes(b"\n".join(lines))
    return path


def _rules(path: Path) -> tuple:
    log = load_log(path)
    return log.verdict, tuple((d.rule, d.severity, d.seq) for d in log.defects)


def _check_all(path: Path, out: Path, capsys, commands=("info", "fold", "audit", "tokens", "report",
                                                         "export")) -> None:
    every_frame(path)
    every_command(path, out, capsys, commands)


@SETTINGS
@given(version=st.sampled_from([0, 4]), pick=st.integers(min_value=0, max_value=10**6),
       number=BIG_INTS)
def test_out_of_range_number_in_any_field(version, pick, number, tmp_path_factory, capsys):
    tmp = tmp_path_factory.mktemp("num")
    lines = _lines(version, tmp)
    events = [(i, json.loads(line)) for i, line in enumerate(lines) if line and i > 0]
    spots = [(i, p) for i, e in events for p in _numeric_paths(e)]
    index, path = spots[pick % len(spots)]
    as_int = _with_text(json.loads(lines[index]), path, str(number))
    as_double = _with_text(json.loads(lines[index]), path, number_to_str(float(number)))
    a = _write(tmp, "int.session.jsonl" if version == 0 else "int.session.v4.jsonl",
               lines[:index] + [as_int] + lines[index + 1:])
    b = _write(tmp, "dbl.session.jsonl" if version == 0 else "dbl.session.v4.jsonl",
               lines[:index] + [as_double] + lines[index + 1:])
    assert _rules(a) == _rules(b)
    _check_all(a, tmp, capsys)


@SETTINGS
@given(version=st.sampled_from([0, 4]), pick=st.integers(min_value=0, max_value=10**6),
       number=st.one_of(BIG_INTS.map(str), st.sampled_from(["1e308", "1e400", "1.5e300"])),
       bucket=st.sampled_from(["inputTokens", "outputTokens", "totalTokens", "cacheReadTokens"]))
@example(version=0, pick=1, number="1e400", bucket="inputTokens")  # the report's step viewer
def test_any_usage_count_keeps_a_clean_log_clean(version, pick, number, bucket, tmp_path_factory,
                                                 capsys):
    tmp = tmp_path_factory.mktemp("usage")
    lines = _lines(version, tmp)
    spots = [i for i, line in enumerate(lines) if b'"usage":{' in line]
    index = spots[pick % len(spots)]
    event = json.loads(lines[index])
    where = next(_usage_paths(event))
    usage = event
    for key in where:
        usage = usage[key]
    usage[bucket] = 0
    mutated = _with_text(event, (*where, bucket), number)
    name = "u.session.jsonl" if version == 0 else "u.session.v4.jsonl"
    path = _write(tmp, name, lines[:index] + [mutated] + lines[index + 1:])
    base = _write(tmp, "base-" + name, lines)
    assert _rules(path)[0] == _rules(base)[0]
    _check_all(path, tmp, capsys)


@SETTINGS
@given(version=st.sampled_from([0, 4]), pick=st.integers(min_value=0, max_value=10**6),
       depth=st.sampled_from([300, 1_000, 1_024, 1_100, 5_000, 200_000]),
       kind=st.sampled_from(["[", '{"k":']))
def test_deep_nesting_reads_like_shallow_nesting(version, pick, depth, kind, tmp_path_factory,
                                                 capsys):
    tmp = tmp_path_factory.mktemp("deep")
    lines = _lines(version, tmp)
    index = 1 + pick % (len([line for line in lines if line]) - 1)
    close = "]" if kind == "[" else "}"

    def nested(n: int) -> str:
        return kind * n + "0" + close * n

    name = "d.session.jsonl" if version == 0 else "d.session.v4.jsonl"
    event = json.loads(lines[index])
    event["data"]["zz"] = 0
    paths = list(_value_paths(event["data"], ("data",)))[1:]
    path = paths[pick // 101 % len(paths)]
    deep = _write(tmp, name, lines[:index] + [_with_text(json.loads(json.dumps(event)), path,
                                                         nested(depth))] + lines[index + 1:])
    shallow = _write(tmp, "s" + name, lines[:index] + [_with_text(event, path, nested(1))]
                     + lines[index + 1:])
    assert _rules(deep) == _rules(shallow)
    _check_all(deep, tmp, capsys, ("info", "fold", "audit", "report"))


@SETTINGS
@given(version=st.sampled_from([0, 4]), pick=st.integers(min_value=0, max_value=10**6),
       text=ODD_TEXT, repeat=st.sampled_from([1, 1_000, 50_000]))
def test_long_odd_unicode_text_keeps_the_verdict(version, pick, text, repeat, tmp_path_factory,
                                                 capsys):
    tmp = tmp_path_factory.mktemp("text")
    lines = _lines(version, tmp)
    spots = [i for i, line in enumerate(lines) if b'"text":"' in line and i > 0]
    index = spots[pick % len(spots)]
    event = json.loads(lines[index])

    def replace(value):
        if isinstance(value, dict):
            return {k: (text * repeat if k == "text" and type(v) is str else replace(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [replace(v) for v in value]
        return value

    mutated = json.dumps(replace(event), separators=(",", ":"), ensure_ascii=False).encode()
    name = "t.session.jsonl" if version == 0 else "t.session.v4.jsonl"
    path = _write(tmp, name, lines[:index] + [mutated] + lines[index + 1:])
    base = _write(tmp, "base-" + name, lines)
    assert _rules(path)[0] == _rules(base)[0]
    _check_all(path, tmp, capsys)
