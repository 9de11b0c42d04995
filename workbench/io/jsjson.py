"""JSON with JavaScript semantics. Layer: io (stdlib + orjson only).

DSH reads logs with `JSON.parse` and measures with `JSON.stringify` and `string.length`, so a
faithful reader must see what JavaScript sees:

* numbers are doubles: ``1.0`` is the integer 1, ``1e400`` is Infinity, ``-0`` is negative zero
  (kept as the float ``-0.0``; Python's ``json`` makes it 0); ``NaN``, ``Infinity`` are not JSON;
* a line is decoded as UTF-8 *with replacement* (``Buffer#toString``) and a BOM is not stripped;
* string lengths are UTF-16 code units (an astral character counts 2, a lone surrogate 1);
* booleans are not numbers: ``True == 1`` must never leak into a check.

`loads` takes a fast path through orjson and falls back to the stdlib parser only for the rare
lines orjson cannot represent exactly (negative zero, infinities, lone surrogates, invalid UTF-8),
and to `workbench.io.deepjson` for a text nested deeper than `deepjson.MATERIALISED_DEPTH`
levels: no value `loads` hands out holds a dict or list deeper (`deepjson.bounded`).
"""
from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any

import orjson

from workbench.errors import UnsupportedValue, WorkbenchError
from workbench.io.deepjson import bounded, loads_deep, normalize
from workbench.io.memo import Memo

MAX_SAFE_INTEGER = 2**53 - 1
"""`Number.MAX_SAFE_INTEGER`: a format constant, not a tunable."""

class JSONError(WorkbenchError, ValueError):
    """The text is not JSON as `JSON.parse` reads it."""


class _Absent:
    """Marker for a key that is absent (JavaScript `undefined`), distinct from JSON null."""

    _instance: _Absent | None = None

    def __new__(cls) -> _Absent:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "ABSENT"

    def __bool__(self) -> bool:
        return False


ABSENT: Any = _Absent()
"""Value of a missing key; `obj.get(key, ABSENT)` keeps absent and null apart."""


class Deep:
    """A container nested too deep to materialise (`workbench.io.deepjson`): its exact JSON text.
    It is neither a dict nor a list to a consumer (nothing recurses into it); `stringify` prints
    what `JSON.stringify` would."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Deep({len(self.text)} chars)"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Deep) and other.text == self.text

    def __hash__(self) -> int:
        return hash(self.text)


def _parse_int(text: str) -> int | float:
    if text == "-0":
        return -0.0
    value = int(text)
    if -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return value
    return float(text)  # JS rounds large integers to the nearest double


def _parse_constant(name: str) -> Any:
    msg = f"{name} is not valid JSON"
    raise JSONError(msg)


_slow_decoder = json.JSONDecoder(parse_int=_parse_int, parse_constant=_parse_constant)


INT_NEG_ZERO = re.compile(rb"-0(?![.0-9eE])")
"""The integer literal ``-0``, which orjson reads as ``0`` (it keeps ``-0.0``)."""
_INT_NEG_ZERO_TEXT = re.compile(INT_NEG_ZERO.pattern.decode())


def loads(data: bytes | bytearray | memoryview | str) -> Any:
    """Parse one JSON text exactly as `JSON.parse(buffer.toString("utf8"))` would, bounded in
    depth (`deepjson.bounded`): one orjson pass unless the text may hold the literal ``-0`` or
    orjson refuses it (lone surrogates, Infinity, invalid UTF-8)."""
    if not isinstance(data, str):
        data = bytes(data)
        if b"-" not in data or INT_NEG_ZERO.search(data) is None:  # one byte: a memchr pass
            try:
                return bounded(orjson.loads(data), data)
            except orjson.JSONDecodeError:
                pass
        text = data.decode("utf-8", "replace")
    else:
        if "-" not in data or _INT_NEG_ZERO_TEXT.search(data) is None:
            try:
                return bounded(orjson.loads(data), data)
            except (orjson.JSONDecodeError, UnicodeEncodeError):
                pass
        text = data
    try:
        value = slow_loads(text)
    except RecursionError:  # deeper than the stdlib parser goes
        return loads_deep(text)
    return bounded(value, text)


def slow_loads(text: str) -> Any:
    """The exact stdlib path of `loads` for a text, unbounded (raises `JSONError`, or
    `RecursionError` when the text is nested too deep for it)."""
    try:
        value, end = _slow_decoder.raw_decode(text, _skip_ws(text, 0))
    except json.JSONDecodeError as exc:
        raise JSONError(str(exc)) from None
    if _skip_ws(text, end) != len(text):
        msg = f"unexpected data after JSON value at char {end}"
        raise JSONError(msg)
    return value


_WS = " \t\n\r"


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


# -- number predicates (JavaScript `typeof x === "number"`, `Number.isSafeInteger`, `Object.is(x,-0)`)

def is_number(value: Any) -> bool:
    """`typeof value === "number"` (booleans excluded)."""
    return (type(value) is int or type(value) is float)


def is_safe_int(value: Any) -> bool:
    """`Number.isSafeInteger(value)`: integral floats such as 4.0 count, -0 counts."""
    if type(value) is int:
        return -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER
    if type(value) is float:
        return math.isfinite(value) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER
    return False


def is_neg_zero(value: Any) -> bool:
    """`Object.is(value, -0)`."""
    return type(value) is float and value == 0.0 and math.copysign(1.0, value) < 0


def is_nonneg_safe_int(value: Any) -> bool:
    """A seq-like value: a safe integer >= 0 (negative zero passes, as `-0 >= 0` in JS)."""
    return is_safe_int(value) and value >= 0


def as_double(value: int | float) -> int | float:
    """The double JavaScript holds for a JSON number. The parsers keep integer literals up to
    2**64 exact, where `JSON.parse` rounds every literal to the nearest double: an integer past
    the safe range becomes that double (a safe one is already exact)."""
    if type(value) is int and not -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        try:
            return float(value)
        except OverflowError:
            return math.inf if value > 0 else -math.inf
    return value


# -- strings

def js_len(text: str) -> int:
    """`text.length`: UTF-16 code units (astral characters count 2, lone surrogates 1)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


# -- JSON.stringify

def number_to_str(value: int | float) -> str:
    """`Number.prototype.toString()` / `String(number)` for a JSON number."""
    value = as_double(value)
    if type(value) is int:
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    text = repr(value)   # the shortest digits that read back: those JavaScript picks
    if "e" not in text:   # 1e-4 <= |value| < 1e16, positional in both languages
        return text[:-2] if text.endswith(".0") else text
    sign = "-" if value < 0 else ""
    digits_tuple = Decimal(text.lstrip("-")).as_tuple()
    digits = "".join(map(str, digits_tuple.digits)).rstrip("0") or "0"
    exponent = int(digits_tuple.exponent) + (len(digits_tuple.digits) - len(digits))
    k = len(digits)
    n = k + exponent  # value = 0.digits * 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_NEEDS_ESCAPE = re.compile('["\\\\\x00-\x1f\ud800-\udfff]')


def _escape_char(match: re.Match[str]) -> str:
    char = match.group(0)
    return _ESCAPES.get(char) or f"\\u{ord(char):04x}"


def _string(text: str) -> str:
    if text.isprintable() and '"' not in text and "\\" not in text:   # nothing to escape
        return '"' + text + '"'
    return '"' + _NEEDS_ESCAPE.sub(_escape_char, text) + '"'


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or key[0] != "0") and int(key) < 2**32 - 1


def _members(value: dict) -> Any:
    """An object's `(key, value)` pairs in JavaScript's order: integer-like keys ("0", "12")
    first, ascending, then the other keys in insertion order (as they stand when no key starts
    with a digit)."""
    for key in value:
        if key[:1].isdigit():
            break
    else:
        return value.items()
    index_keys = sorted((k for k in value if _is_array_index(k)), key=int)
    return [(k, value[k]) for k in index_keys + [k for k in value if not _is_array_index(k)]]


def stringify(value: Any, indent: int = 0) -> str:
    """`JSON.stringify(value, null, indent)`: non-ASCII raw, lone surrogates escaped, JS
    number format (`number_to_str`), JS key order (`_members`; only that affects the text, never
    its length); `indent` > 0 is the spaced form, one member per line (a container nested past
    `deepjson.MATERIALISED_DEPTH` levels stays compact there)."""
    if indent > 0:
        return _spaced(value, " " * min(indent, 10), "")
    kind = type(value)
    if kind is str:
        return _string(value)
    if kind is int and -MAX_SAFE_INTEGER <= value <= MAX_SAFE_INTEGER:
        return str(value)
    if kind is int or kind is float:
        return "null" if kind is float and not math.isfinite(value) else number_to_str(value)
    if isinstance(value, dict):
        return "{" + ",".join([_string(k) + ":" + stringify(v) for k, v in _members(value)
                               if v is not ABSENT]) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(["null" if v is ABSENT else stringify(v) for v in value]) + "]"
    if value is None or kind is bool:
        return "null" if value is None else "true" if value else "false"
    if kind is Deep:
        return normalize(value.text)
    msg = f"cannot stringify {kind.__name__}"
    raise UnsupportedValue(msg)


RECALL_MIN_BYTES = 512
"""`stringify_recalled` remembers the texts of values whose orjson form is at least this long."""
RECALL_ENTRIES = 32
RECALL_BYTES = 16 * 1024 * 1024
"""Bytes of fingerprints and texts those entries may hold (a value may be a 200 MB message)."""
_RECALLED = Memo(RECALL_ENTRIES, RECALL_BYTES)


def _fingerprint(value: Any) -> bytes | None:
    """The orjson bytes of `value` (None: orjson refuses it: a lone surrogate, an integer past
    64 bits, a value that is not JSON). Equal bytes mean the same keys in the same order and
    the same strings, booleans, nulls and numbers, so the same `stringify` text; the converse
    fails only where orjson and JavaScript format numbers differently (``1.0``)."""
    try:
        return orjson.dumps(value)
    except TypeError:
        return None


def stringify_recalled(value: Any) -> str:
    """`stringify(value)`, remembered by fingerprint for a large value met again (the tool
    schemas an envelope repeats at every step); at most `RECALL_ENTRIES` texts are kept, of
    `RECALL_BYTES` in all."""
    key = _fingerprint(value)
    if key is None or len(key) < RECALL_MIN_BYTES:
        return stringify(value)
    text = _RECALLED.get(key)
    if text is None:
        text = stringify(value)
        _RECALLED.remember(key, text, len(key) + len(text))
    return text


def same_text(a: Any, b: Any) -> bool:
    """`stringify(a) == stringify(b)`, without building either text when the fingerprints
    agree (`_fingerprint`)."""
    if a is b:
        return True
    key = _fingerprint(a)
    if key is not None and key == _fingerprint(b):
        return True
    return stringify(a) == stringify(b)


def _spaced(value: Any, gap: str, outer: str) -> str:
    inner = outer + gap
    if isinstance(value, (list, tuple)):
        items = ["null" if v is ABSENT else _spaced(v, gap, inner) for v in value]
    elif isinstance(value, dict):
        items = [_string(k) + ": " + _spaced(v, gap, inner)
                 for k, v in _members(value) if v is not ABSENT]
    else:  # a scalar, or a `Deep` value: compact (its spaced form grows with the square of its depth)
        return stringify(value)
    ends = "[]" if isinstance(value, (list, tuple)) else "{}"
    if not items:
        return ends
    return ends[0] + "\n" + inner + (",\n" + inner).join(items) + "\n" + outer + ends[1]


