"""Request envelopes: canonical form and equality. Layer: core.

The header in force at any point is the canonical form of the latest `request/header` at or before
it (whole snapshot, no deltas; v0 spec §3.4, v4 §3.4). Canonical form (reference `canonicalHeader`):

* keep `config` as given;
* keep `adapterDefaults` only when one of its markers (`reasoningEffort`, `maxTokens`) is `true`;
* v0 only: keep `system` only when it is a non-empty string (v4 forbids the field);
* keep `tools` only when non-empty (a list, or the fixture placeholder string `{{tools}}`, v0 §6.8);
* drop everything else (for example the legacy `messagePrefix`).

Equality (reference `headerEquals` / `callConfigEquals`, v4 §6.6) is *not* JSON equality: config is
compared on provider, model, reasoningEffort, temperature, maxTokens and stop only (with JavaScript
`===`), adapterDefaults by its two markers, v0 system by value, and tools element by element by
their `JSON.stringify` text (so reordered keys make a different header).
"""
from __future__ import annotations

from typing import Any

from workbench.io.generations import system_node
from workbench.io.jsjson import ABSENT, js_len, same_text

_CONFIG_FIELDS = ("provider", "model", "reasoningEffort", "temperature", "maxTokens")


def _length(value: Any) -> int | None:
    """`value.length` for the JSON values that have one (arrays and strings), else None."""
    if type(value) is list:
        return len(value)
    if type(value) is str:
        return js_len(value)
    return None


def canonical_header(header: Any, *, version: int) -> dict | None:
    """The canonical form of a logged header; None for no header (`null` or absent)."""
    if type(header) is not dict:
        return None
    out: dict[str, Any] = {}
    config = header.get("config", ABSENT)
    if config is not ABSENT:
        out["config"] = config
    defaults = header.get("adapterDefaults", ABSENT)
    if type(defaults) is dict and (defaults.get("reasoningEffort") is True or defaults.get("maxTokens") is True):
        out["adapterDefaults"] = defaults
    if not system_node(version):
        system = header.get("system", ABSENT)
        if type(system) is str and system:
            out["system"] = system
    tools = header.get("tools", ABSENT)
    if (_length(tools) or 0) > 0:
        out["tools"] = tools
    return out


def _js_strict_eq(a: Any, b: Any) -> bool:
    """JavaScript `===` on parsed JSON values (objects equal only to themselves)."""
    if a is ABSENT or b is ABSENT or a is None or b is None:
        return a is b
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return a is b
    if ta in (int, float) and tb in (int, float):
        return a == b
    if ta is str and tb is str:
        return a == b
    return a is b


def _field(obj: Any, key: str) -> Any:
    return obj.get(key, ABSENT) if type(obj) is dict else ABSENT


def config_equals(a: Any, b: Any) -> bool:
    """Reference `callConfigEquals`: the five scalar fields with `===`, `stop` element-wise."""
    if not all(_js_strict_eq(_field(a, k), _field(b, k)) for k in _CONFIG_FIELDS):
        return False
    sa, sb = _field(a, "stop"), _field(b, "stop")
    if sa is ABSENT or sb is ABSENT:
        return sa is sb
    if type(sa) is not list or type(sb) is not list:
        return sa == sb if type(sa) is str and type(sb) is str else _js_strict_eq(sa, sb)
    return len(sa) == len(sb) and all(_js_strict_eq(x, y) for x, y in zip(sa, sb))


def _tools_equal(at: Any, bt: Any) -> bool:
    at = [] if at is ABSENT else at
    bt = [] if bt is ABSENT else bt
    if type(at) is list and type(bt) is list:
        return len(at) == len(bt) and all(same_text(x, y) for x, y in zip(at, bt))
    return type(at) is type(bt) and at == bt


def header_equals(a: dict | None, b: dict | None) -> bool:
    """Equality of two canonical headers (None = no header; two Nones are equal)."""
    if a is None or b is None:
        return a is b
    if not config_equals(a.get("config", ABSENT), b.get("config", ABSENT)):
        return False
    da, db = a.get("adapterDefaults", ABSENT), b.get("adapterDefaults", ABSENT)
    for marker in ("reasoningEffort", "maxTokens"):
        if not _js_strict_eq(_field(da, marker), _field(db, marker)):
            return False
    if a.get("system", ABSENT) != b.get("system", ABSENT):
        return False
    return _tools_equal(a.get("tools", ABSENT), b.get("tools", ABSENT))


__all__ = ["canonical_header", "config_equals", "header_equals"]
