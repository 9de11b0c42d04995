"""The manifests of a session store (`workbench.frames.store`): one JSON file per exported log,
``STORE/_manifest/<log>.json``, and the one rule for what counts as one. Layer: frames.

A manifest is exactly the object `workbench.frames.store.export_log` writes: the keys of
`FIELDS`, each of its type (an integer is never a bool; counts are not negative), ``log`` the
id its file is named by, ``rows`` the row count of every frame of the store. Anything else (not
JSON, a list, a string, a missing or extra key, a count that is text) is unreadable: readers
skip it, and an export removes it and exports its log again (`read_manifests`), so a damaged
manifest never stops the store and never stands for rows it does not describe.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

MANIFESTS = "_manifest"
"""The folder of the manifests, under the store."""

_INT, _TEXT, _NUMBER = (int,), (str,), (int, float)
FIELDS: dict[str, tuple[tuple[type, ...], bool]] = {
    "store_format": (_INT, False), "schemas": (_TEXT, False), "log": (_TEXT, False),
    "session": (_TEXT, False), "path": (_TEXT, False), "size": (_INT, False),
    "mtime_ns": (_INT, False), "blake2b": (_TEXT, False), "format_version": (_INT, True),
    "verdict": (_TEXT, True), "session_id": (_TEXT, True), "events": (_INT, True),
    "defects": (_INT, False), "error": (_TEXT, True), "rows": ((dict,), False),
    "seconds": (_NUMBER, True),
}
"""Key → (types, may be null) of a manifest; ``rows`` maps every store frame to a count."""
_COUNTS = ("size", "events", "defects")


def _typed(value: Any, types: tuple[type, ...]) -> bool:
    return isinstance(value, types) and not isinstance(value, bool)


def manifest_problem(value: Any, ident: str) -> str | None:
    """Why `value` (parsed JSON of ``<ident>.json``) is not a manifest; None when it is one."""
    from workbench.frames.store import STORE_FRAMES
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    if set(value) != set(FIELDS):
        odd = sorted(set(value) ^ set(FIELDS))
        return f"not the manifest's keys (differs in {', '.join(map(str, odd))})"
    for key, (types, nullable) in FIELDS.items():
        if not (_typed(value[key], types) or (nullable and value[key] is None)):
            return f"{key} is {type(value[key]).__name__}, not {types[0].__name__}"
    if any(value[key] is not None and value[key] < 0 for key in _COUNTS):
        return "a negative count"
    if value["log"] != ident:
        return f"log {value['log']!r} is not its file's name"
    rows = value["rows"]
    if set(rows) != set(STORE_FRAMES) or not all(_typed(n, _INT) and n >= 0
                                                 for n in rows.values()):
        return "rows is not a count for every frame of the store"
    return None


def read_json(path: str | os.PathLike) -> Any:
    """The JSON value of a store file; None when it cannot be read or is not JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError):
        return None


def read_manifests(store: str | os.PathLike,
                   unreadable: list[Path] | None = None) -> dict[str, dict[str, Any]]:
    """Every manifest of the store, by log id. A file that is not a manifest (`manifest_problem`,
    or not JSON, or unreadable) is skipped and, when `unreadable` is a list, appended to it."""
    out = {}
    for entry in os.scandir(Path(store) / MANIFESTS):
        if entry.name.endswith(".json") and not entry.name.startswith("."):
            ident = entry.name.removesuffix(".json")
            value = read_json(entry.path)
            if manifest_problem(value, ident) is None:
                out[ident] = value
            elif unreadable is not None:
                unreadable.append(Path(entry.path))
    return out


__all__ = ["FIELDS", "MANIFESTS", "manifest_problem", "read_json", "read_manifests"]
