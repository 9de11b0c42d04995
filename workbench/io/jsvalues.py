"""JavaScript's view of parsed JSON values: the reference's deep equality, `String(x)` and
`typeof`, and which values can key a lookup. Layer: io (stdlib only).
"""
from __future__ import annotations

from typing import Any

from workbench.io.jsjson import (
    ABSENT,
    MAX_SAFE_INTEGER,
    Deep,
    as_double,
    is_number,
    number_to_str,
    stringify,
)


def deep_equal(a: Any, b: Any) -> bool:
    """The reference's `isDeepEqualJson`: key-order free, numbers by value, `true !== 1`."""
    if type(a) is bool or type(b) is bool or a is None or b is None:
        return a is b
    if is_number(a) or is_number(b):
        return is_number(a) and is_number(b) and as_double(a) == as_double(b)
    if type(a) is str or type(b) is str:
        return a == b if type(a) is str and type(b) is str else False
    if isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list) and len(a) == len(b)):
            return False
        if _safe_ints(a) and _safe_ints(b):   # exact doubles: Python's == is the JS one
            return a == b
        return all(deep_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return len(a) == len(b) and all(k in b and deep_equal(v, b[k]) for k, v in a.items())
    if type(a) is Deep or type(b) is Deep:
        return type(a) is type(b) and stringify(a) == stringify(b)
    return False


def _safe_ints(items: list) -> bool:
    """Whether every item is an `int` (not a bool) within ±(2**53 - 1): numbers JavaScript holds
    exactly, so two such lists are deep-equal exactly when Python's `==` says so."""
    if not items:
        return True
    if set(map(type, items)) != {int}:
        return False
    return -MAX_SAFE_INTEGER <= min(items) and max(items) <= MAX_SAFE_INTEGER


def js_str(value: Any) -> str:
    """`String(value)` as a template literal would render it in a reference message."""
    if value is ABSENT:
        return "undefined"
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if type(value) is str:
        return value
    if type(value) is int or type(value) is float:
        return number_to_str(value)
    if isinstance(value, list):
        return ",".join("" if v is None or v is ABSENT else js_str(v) for v in value)
    return "[object Object]"


def js_typeof(value: Any) -> str:
    """`typeof value` for a parsed JSON value (ABSENT is "undefined")."""
    if value is ABSENT:
        return "undefined"
    if type(value) is bool:
        return "boolean"
    if is_number(value):
        return "number"
    if type(value) is str:
        return "string"
    return "object"


def is_scalar(value: Any) -> bool:
    """Whether a JSON value can key a dict: null, a boolean, a number or a string."""
    return value is None or type(value) in (str, int, float, bool)


__all__ = ["deep_equal", "is_scalar", "js_str", "js_typeof"]
