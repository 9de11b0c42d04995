"""Conformance handler for `loading/*.json` of both formats (v0 and v4 INDEX "loading").

The bytes come from the sidecar's `file` (next to it) or inline `base64`; they are read through
`workbench.core.load.evaluate_bytes` with the reader the folder implies (v0 folder: generation 0,
file `session.jsonl`; v4 folder: generation 4, file `session.v4.jsonl[.zstd]`) and the raw-log
placeholder ``<raw log>`` the v4 vectors use for the backend's ``(raw log: <path>)`` suffix.

Compared (each only when the case gives it): the scan error (v0 ``{kind, name, message}``; v4
``{stage: "scan", class, kind, name, message}``), or ``meta``, ``inheritedEventCount``,
``eventSeqs``, ``events``, ``committedBytes``, ``tornTail``, ``truncateTo``, ``toleratedIssue``,
``recoveredTailSeqs``, ``storedValidation``, ``closers`` and ``resume``. Messages are compared
exactly.
"""
from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from vectors._compare import diff
from workbench.core.load import LoadReport, evaluate_bytes
from workbench.core.restore import RestoreError

RAW_LOG = "<raw log>"


def _bytes(case: dict, path: Path) -> bytes:
    if "base64" in case:
        return base64.b64decode(case["base64"])
    return (path.parent / case["file"]).read_bytes()


def _scan_error(report: LoadReport, want: dict, version: int) -> list[str]:
    got = report.scan_error
    if got is None:
        return [f"scan error: got none, want {want}"]
    actual: dict[str, Any] = {"kind": got.kind, "name": got.name, "message": got.message}
    if version >= 4:
        actual.update(stage="scan", **{"class": got.klass})
    expected = {k: v for k, v in want.items() if k != "message_contains"}
    problems = diff("error", actual, expected)
    contains = want.get("message_contains")
    if contains is not None and contains not in got.message:
        problems.append(f"error.message lacks {contains!r}: {got.message!r}")
    return problems


def _stored(report: LoadReport) -> dict:
    first = report.stored_error
    if first is None:
        return {"ok": True}
    return {"error": {"kind": first.kind, "class": first.klass, "name": first.name, "message": first.message}}


def _resume(report: LoadReport) -> dict:
    if isinstance(report.resume, RestoreError):
        return {"error": {"message": report.resume.message}}
    if report.resume is None:
        return {"unavailable": True}
    return {"ok": True, "nodes": list(report.resume.nodes), "appended": report.resume_appended}


def _tolerated(report: LoadReport, version: int) -> Any:
    issue = report.read.tolerated
    if issue is None:
        return None
    return issue.message if version >= 4 else {"kind": issue.kind, "message": issue.message}


def check(case: dict, path: Path, version: int) -> list[str]:
    data = _bytes(case, path)
    problems: list[str] = []
    if "byteLength" in case and case["byteLength"] != len(data):
        problems.append(f"byteLength of the input: {len(data)} != {case['byteLength']}")
    encoding = case.get("encoding", "jsonl")
    name = "session.jsonl" if version < 4 else "session.v4.jsonl"
    if encoding == "zstd":
        name += ".zstd"
    report = evaluate_bytes(data, name=name, encoding=encoding, generation=0 if version < 4 else 4,
                            location=RAW_LOG)
    expect = case["expect"]
    if "error" in expect:
        return problems + _scan_error(report, expect["error"], version)
    if report.scan_error is not None:
        err = report.scan_error
        return problems + [f"unexpected scan error {err.kind}: {err.message}"]
    log = report.log
    events = list(log.events)
    got: dict[str, Any] = {
        "meta": log.meta,
        "inheritedEventCount": log.inherited_event_count,
        "eventSeqs": [e.get("seq") for e in events],
        "events": events,
        "committedBytes": log.committed_bytes,
        "tornTail": log.torn_tail,
        "truncateTo": log.truncate_to,
        "toleratedIssue": _tolerated(report, version),
        "recoveredTailSeqs": log.recovered_tail_seqs,
        "storedValidation": _stored(report),
        "closers": report.closers,
        "resume": _resume(report),
    }
    for key, want in expect.items():
        if key not in got:
            problems.append(f"{key}: not compared by this handler")
            continue
        if key == "events" and len(want) < len(events):
            problems += diff(key, events[:len(want)], want)
            continue
        problems += diff(key, got[key], want)
    return problems
