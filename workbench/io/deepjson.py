"""Depth: no value a reader hands out holds a dict or list more than `MATERIALISED_DEPTH`
levels down, and JSON nested deeper than recursive parsers go is read as `JSON.parse` reads it.
Layer: io.

orjson materialises 1,024 levels, more than a recursive walker (`jsjson.stringify`, schema and
content walks, the report's renderers: a few frames per level) can recurse under the
interpreter's default limit of 1,000 frames, while the reference (`JSON.parse` in Node) accepts
millions of levels. So:

* `bounded` is the one rule every reader applies (`jsjson.loads`, and the loader's batched lane
  by way of `crowded_lines`): a value holding a container `MATERIALISED_DEPTH` levels down is
  read again by `loads_deep`. 128 levels keep every walker far inside the interpreter's limit;
* `loads_deep` validates the whole text with one iterative tokenizer with a one-byte-per-level
  stack, so a valid text is accepted and an invalid one refused exactly as `JSON.parse` would, in
  memory proportional to the text and in time linear in it; runs of ``[`` / ``{"key":`` openers
  and of closers are one token each, so ``[[[[…]]]]`` ten million levels deep costs a few regex
  passes, not ten million steps;
* the value is materialised as ordinary dicts and lists down to `MATERIALISED_DEPTH` levels;
  every container below that is a `workbench.io.jsjson.Deep` holding its exact JSON text (no
  Python object per level). `jsjson.stringify` of a `Deep` is what `JSON.stringify` prints for
  it (`normalize`), so lengths and prices stay exact.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import islice
from typing import Any

import orjson

MATERIALISED_DEPTH = 128
"""Levels of dicts and lists a reader hands out; a container below them is a `Deep` value."""

_WS = r"[ \t\n\r]*"
_STR = r'"(?:[^"\\\x00-\x1f]++|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*+"'
"""A JSON string, possessive: a key's `:` or a value's `,` missing after it never makes the engine
retry the string split another way (exponential in its length)."""
_NUM = r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?"
_OPENER = rf"(?:\[|\{{{_WS}{_STR}{_WS}:)"
_TOKEN = re.compile(
    rf"{_WS}(?:(?P<empty>\{{{_WS}\}})|(?P<open>\[+|{_OPENER}(?:{_WS}{_OPENER})*)"
    rf"|(?P<close>[\]}}]+|[\]}}](?:{_WS}[\]}}])*)|(?P<key>,{_WS}{_STR}{_WS}:)|(?P<comma>,)"
    rf"|(?P<scalar>{_STR}|{_NUM}|true|false|null))")
_OPENER_RE = re.compile(_OPENER)
_CLOSER_RE = re.compile(r"[\]}]")
_STR_RE = re.compile(_STR)
_STR_OR_WS = re.compile(rf"{_STR}|[ \t\n\r]+")
_TRAILING_WS = re.compile(_WS)
_NOT_CANONICAL = re.compile(r"[ \t\n\r\\]|[0-9][.eE]|-0|[0-9]{16}")  # 16 digits: maybe past the safe range
_KINDS = str.maketrans({"]": "[", "}": "{"})

_VALUE, _VALUE_OR_CLOSE, _AFTER = 0, 1, 2


def _openers(run: str) -> str:
    """The ``[``/``{`` kinds of an opener run, outermost first."""
    if '"' not in run:
        return run.replace(" ", "").replace("\t", "").replace("\n", "").replace("\r", "")
    return "".join(c for c in _STR_RE.sub("", run) if c in "[{")


def scan(text: str, cap: int = MATERIALISED_DEPTH) -> list[tuple[int, int]]:
    """Validate `text` as one JSON value; return the ``[start, end)`` spans of the containers
    that begin at depth `cap` (0 = top level). Raises `workbench.io.jsjson.JSONError`."""
    from workbench.io.jsjson import JSONError
    depth = 0
    kinds = bytearray()            # the open containers' kinds, one byte per level
    state = _VALUE
    spans: list[tuple[int, int]] = []
    span_start = -1
    pos, size = 0, len(text)
    match = _TOKEN.match
    while True:
        m = match(text, pos)
        if m is None or m.end() == m.start() and pos < size:
            if state == _AFTER and depth == 0 and _TRAILING_WS.match(text, pos).end() == size:
                break
            raise JSONError(f"unexpected token at char {pos}")
        group = m.lastgroup
        start, pos = m.start(group), m.end()
        if group == "scalar" or group == "empty":
            if state == _AFTER:
                raise JSONError(f"unexpected value at char {start}")
            if group == "empty" and depth == cap:
                spans.append((start, pos))
            state = _AFTER
        elif group == "open":
            if state == _AFTER:
                raise JSONError(f"unexpected container at char {start}")
            run = m.group(group)
            opened = _openers(run)
            if depth <= cap < depth + len(opened):
                nth = next(islice(_OPENER_RE.finditer(run), cap - depth, None))
                span_start = start + nth.start()
            kinds += opened.encode("ascii")
            depth += len(opened)
            state = _VALUE_OR_CLOSE if opened[-1] == "[" else _VALUE
        elif group == "close":
            if state == _VALUE:
                raise JSONError(f"unexpected close at char {start}")
            run = m.group(group)
            closed = run.translate(_KINDS).replace(" ", "").replace("\t", "").replace(
                "\n", "").replace("\r", "")
            if state == _VALUE_OR_CLOSE and closed[0] != "[":
                raise JSONError(f"unexpected close at char {start}")
            count = len(closed)
            if count > depth or kinds[depth - count:].decode("ascii") != closed[::-1]:
                raise JSONError(f"mismatched close at char {start}")
            if depth - count <= cap < depth:
                nth = next(islice(_CLOSER_RE.finditer(run), depth - 1 - cap, None))
                spans.append((span_start, start + nth.end()))
            del kinds[depth - count:]
            depth -= count
            state = _AFTER
        elif group == "key":
            if state != _AFTER or depth == 0 or kinds[-1] != ord("{"):
                raise JSONError(f"unexpected key at char {start}")
            state = _VALUE
        else:  # comma
            if state != _AFTER or depth == 0 or kinds[-1] != ord("["):
                raise JSONError(f"unexpected comma at char {start}")
            state = _VALUE
        if depth == 0 and state == _AFTER:
            if _TRAILING_WS.match(text, pos).end() != size:
                raise JSONError(f"unexpected data after JSON value at char {pos}")
            break
    return spans


def bounded(value: Any, raw: bytes | str) -> Any:
    """`value`, parsed from the text `raw`, as a reader hands it out: when it holds a container
    `MATERIALISED_DEPTH` levels down, `raw` read by `loads_deep` instead. Only a text with more
    openers (``[`` or ``{`` bytes, in strings too) than that can; no other is walked
    (`crowded_lines` finds them in bulk)."""
    if type(value) is not dict and type(value) is not list:
        return value
    if type(raw) is str:
        openers = raw.count("[") + raw.count("{")
    else:
        openers = raw.count(b"[") + raw.count(b"{")
    if openers <= MATERIALISED_DEPTH or not too_deep(value):
        return value
    return loads_deep(raw if type(raw) is str else raw.decode("utf-8", "replace"))


_NOT_OPENERS = bytes(c for c in range(256) if c not in b"[{\n")
_CROWDED = re.compile(rb"(?m)^[^\n]{%d}" % (MATERIALISED_DEPTH + 1))


def crowded_lines(data: bytes) -> Iterator[int]:
    """The indexes (0 = the text before the first newline) of the lines of `data` with more
    openers than `MATERIALISED_DEPTH`: `bounded`'s test for every line at once, in one pass over
    the bytes, so a reader of many lines can hand the rest straight on."""
    kept = data.translate(None, _NOT_OPENERS)
    line = at = 0
    for match in _CROWDED.finditer(kept):
        line += kept.count(b"\n", at, match.start())
        at = match.start()
        yield line


PRINTED_DEPTH = 254
"""Levels `orjson.dumps` prints: it raises on a deeper value (its recursion guard)."""


def too_deep(value: dict | list) -> bool:
    """Whether a container lies `MATERIALISED_DEPTH` levels below `value`: under
    ``PRINTED_DEPTH - MATERIALISED_DEPTH`` lists it prints only if not (one pass in C, where a
    walk in Python costs more than the parse). A value orjson cannot print for another reason
    (a lone surrogate) counts as deep: `loads_deep` reads it exactly either way."""
    wrapped: Any = value
    for _ in range(PRINTED_DEPTH - MATERIALISED_DEPTH):
        wrapped = [wrapped]
    try:
        orjson.dumps(wrapped)
    except orjson.JSONEncodeError:
        return True
    return False


def loads_deep(text: str) -> Any:
    """`JSON.parse(text)` for a text too deep for the recursive parsers (see the module doc)."""
    from workbench.io import jsjson
    spans = scan(text)
    if not spans:
        return jsjson.slow_loads(text)
    marker = "\x00deep\x00"
    while marker in text:
        marker += "\x00"
    pieces, deep, last = [], {}, 0
    for k, (start, end) in enumerate(spans):
        key = f"{marker}{k}"
        deep[key] = jsjson.Deep(text[start:end])
        pieces += [text[last:start], jsjson.stringify(key)]
        last = end
    pieces.append(text[last:])
    value = jsjson.slow_loads("".join(pieces))
    return _restore(value, deep)


def _restore(value: Any, deep: dict[str, Any]) -> Any:
    """Put the `Deep` values back where their markers are (at most `MATERIALISED_DEPTH` levels)."""
    if type(value) is str:
        return deep.get(value, value)
    if type(value) is list:
        return [_restore(v, deep) for v in value]
    if type(value) is dict:
        return {k: _restore(v, deep) for k, v in value.items()}
    return value


def normalize(text: str) -> str:
    """`JSON.stringify(JSON.parse(text))` for a valid container text, iteratively: whitespace
    dropped, strings and numbers in JavaScript's spelling. (Duplicate keys are kept as written.)"""
    from workbench.io import jsjson
    if _NOT_CANONICAL.search(text) is None:
        return text  # no whitespace, escape or number JavaScript would spell differently
    out: list[str] = []
    pos, size = 0, len(text)
    while pos < size:
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        group = m.lastgroup
        token = m.group(group)
        if group == "scalar":
            if token[0] == '"':
                out.append(jsjson.stringify(jsjson.slow_loads(token)))
            elif token[0] in "-0123456789":
                out.append(jsjson.stringify(jsjson.slow_loads(token)))
            else:
                out.append(token)
        elif group == "comma":
            out.append(",")
        else:
            out.append(_STR_OR_WS.sub(_minify, token))
        pos = m.end()
    return "".join(out)


def _minify(m: re.Match[str]) -> str:
    from workbench.io import jsjson
    token = m.group(0)
    return jsjson.stringify(jsjson.slow_loads(token)) if token[0] == '"' else ""


__all__ = ["MATERIALISED_DEPTH", "bounded", "crowded_lines", "loads_deep", "normalize", "scan",
           "too_deep"]
