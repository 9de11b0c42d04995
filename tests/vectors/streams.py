"""Handler for `conformance-v4/streams/*.json` (nested assistant streams, v4 spec §2).

Modes (see `conformance-v4/INDEX.md`): `expand` (expansion, then assembly of the chunks), `pack`
(the writer's compaction, plus the round trip) and `settlement` (the migrated-generation check).
"""
from __future__ import annotations

from pathlib import Path

from vectors._compare import diff
from workbench.core.streams import (
    AssemblyError,
    SettlementError,
    StreamError,
    assemble,
    expand_stream,
    pack_chunks,
    verify_settlement,
)
from workbench.io.jsjson import stringify


def _key_order(label: str, got: object, want: object) -> list[str]:
    """Records and chunks must also keep the reference's key order (the JSON text is identical)."""
    if stringify(got) == stringify(want):
        return []
    return [f"{label}: same values, different key order: {stringify(got)[:300]}"]


def _timed_json(timed: list) -> list[dict]:
    return [{"time": time, "chunk": chunk} for time, chunk in timed]


def _assembly_json(timed: list) -> dict:
    try:
        return assemble(timed).to_json()
    except AssemblyError as exc:
        return {"error": {"message": exc.message}}


def _check_expand(case: dict) -> list[str]:
    want = case["expect"]
    try:
        timed = expand_stream(case["stream"])
    except StreamError as exc:
        got = {"error": {"kind": exc.kind, "name": exc.name, "message": exc.message}}
        return diff("expand", got, want)
    if "error" in want:
        return [f"expand: expected error {want['error']['message']!r}, got {len(timed)} chunks"]
    chunks = _timed_json(timed)
    problems = diff("chunks", chunks, want["chunks"]) or _key_order("chunks", chunks, want["chunks"])
    return problems + diff("assembly", _assembly_json(timed), want["assembly"])


def _check_pack(case: dict) -> list[str]:
    want = case["expect"]
    stream = pack_chunks(case["chunks"])
    problems = diff("stream", stream, want["stream"]) or _key_order("stream", stream, want["stream"])
    round_trip = not diff("", _timed_json(expand_stream(stream)), case["chunks"])
    return problems + diff("roundTrip", round_trip, want["roundTrip"])


def _check_settlement(case: dict) -> list[str]:
    try:
        verify_settlement(case["event"], 0)
        got: dict = {"ok": True}
    except SettlementError as exc:
        got = {"error": {"message": exc.message}}
        if exc.cause is not None:
            got["error"]["cause"] = exc.cause
    return diff("settlement", got, case["expect"])


def check(case: dict, path: Path, version: int) -> list[str]:
    mode = case.get("mode")
    if mode == "expand":
        return _check_expand(case)
    if mode == "pack":
        return _check_pack(case)
    if mode == "settlement":
        return _check_settlement(case)
    return [f"{path.name}: unknown streams mode {mode!r}"]
