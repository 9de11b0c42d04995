"""Conformance handler for `chunk_rows/*.json` (v0 packed storage rows, spec v0 §2).

Modes:
* ``decode``: `decode_storage_record(row)` must give exactly ``expect.events`` (JSON-equal *and*
  the same `JSON.stringify` text, so the reference key order is checked too), or raise a
  `RowError` with ``expect.error.kind`` and the exact ``message``;
* ``pack``: `pack_chunk_runs(events)` must give exactly ``expect.records`` (key order included);
  with ``roundTrip`` the records must decode back to the input events.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vectors._compare import diff
from workbench.io.jsjson import stringify
from workbench.io.rows_v0 import RowError, decode_storage_record, pack_chunk_runs


def _exact(label: str, got: Any, want: Any) -> list[str]:
    problems = diff(label, got, want)
    if problems:
        return problems
    if stringify(got) != stringify(want):
        return [f"{label}: key order differs: got {stringify(got)[:400]}, "
                f"want {stringify(want)[:400]}"]
    return []


def _check_decode(case: dict) -> list[str]:
    expect = case["expect"]
    try:
        events = decode_storage_record(case["row"])
    except RowError as exc:
        if "error" not in expect:
            return [f"unexpected RowError {exc.kind}: {exc.message}"]
        want = expect["error"]
        problems = []
        if exc.kind != want["kind"]:
            problems.append(f"kind: got {exc.kind!r}, want {want['kind']!r}")
        if exc.message != want["message"]:
            problems.append(f"message: got {exc.message!r}, want {want['message']!r}")
        if want.get("message_contains", "") not in exc.message:
            problems.append(f"message lacks {want['message_contains']!r}")
        return problems
    if "error" in expect:
        return [f"expected RowError {expect['error']['kind']}, got {len(events)} events"]
    return _exact("events", events, expect["events"])


def _check_pack(case: dict) -> list[str]:
    expect = case["expect"]
    records = pack_chunk_runs(case["events"])
    problems = _exact("records", records, expect["records"])
    if expect.get("roundTrip"):
        decoded = [event for record in records for event in decode_storage_record(record)]
        problems += _exact("roundTrip", decoded, case["events"])
    return problems


def check(case: dict, path: Path, version: int) -> list[str]:
    mode = case.get("mode")
    if mode == "decode":
        return _check_decode(case)
    if mode == "pack":
        return _check_pack(case)
    return [f"unknown chunk_rows mode {mode!r} in {path.name}"]
