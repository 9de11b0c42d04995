"""JavaScript value checks of the v4 lifecycle state machine (`workbench.core.lifecycle`).
Layer: core (pure; imports io only).

Each check raises `Violation` with the reference's message when a field is not what the
reference's ``Relationships`` class accepts: `same` is JavaScript ``===`` for JSON values,
`strict_list_equal` ``isDeepStrictEqual`` of number arrays, the others type and range checks.
"""
from __future__ import annotations

from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import ABSENT, is_neg_zero, is_safe_int

_MAX = 2**53 - 1


class Violation(WorkbenchError):
    """A broken relationship with the reference's message."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message



def same(a: Any, b: Any) -> bool:
    """JavaScript ``a === b`` for JSON values (``ABSENT`` is undefined; objects by identity)."""
    if a is b:
        return True
    ta, tb = type(a), type(b)
    if (ta is int or ta is float) and (tb is int or tb is float):
        return a == b
    if ta is str and tb is str:
        return a == b
    return False


def strict_list_equal(a: list, b: Any) -> bool:
    """``isDeepStrictEqual`` of two number arrays (``-0`` differs from ``0``)."""
    if type(b) is not list or len(a) != len(b):
        return False
    return all(same(x, y) and is_neg_zero(x) == is_neg_zero(y) for x, y in zip(a, b))


def record(value: Any, subject: str) -> dict:
    if type(value) is not dict:
        raise Violation(f"{subject} requires an object")
    return value


def text(value: Any, subject: str) -> str:
    if type(value) is not str or not value:
        raise Violation(f"{subject} requires a nonempty string")
    return value


def array(value: Any, subject: str) -> list:
    if type(value) is not list:
        raise Violation(f"{subject} requires an array")
    return value


def count(value: Any, label: str) -> Any:
    if type(value) is int and 0 <= value <= _MAX:
        return value
    if not is_safe_int(value) or value < 0 or is_neg_zero(value):
        raise Violation(f"{label} must be a non-negative safe integer")
    return value


def earlier(value: Any, seq: Any, subject: str) -> Any:
    coordinate = count(value, subject)
    if coordinate >= seq:
        raise Violation(f"{subject} must name an earlier event")
    return coordinate


def get(data: dict, key: str) -> Any:
    """`data[key]`, or ``ABSENT`` (JavaScript undefined)."""
    return data.get(key, ABSENT)
