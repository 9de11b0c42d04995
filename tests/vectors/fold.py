"""fold/ vectors (both formats): the surface fold, its projections, and the restore/relationship
layers that the reference runs over the same events.

* `expect`: `fold_surface` (with `baseSeq` for window vectors) must give the nodes, replacement
  records, generations, derived seqs and v4 projected messages, or raise the FoldError with the
  exact `at_seq`, `kind` and `message`. The one-pass `SurfaceTimeline` must agree (final surface
  and first error).
* `session_restore`: `workbench.core.restore.restore_session` (nodes, v4 `appendedEndSeed`, or the
  error message and, in v0, its kind).
* `relationships` (v4): `workbench.core.relationships.check_relationships` with a valid v4 header.
"""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

from vectors._compare import diff
from workbench.core.projection import derive_message
from workbench.core.surface import fold_surface
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import FoldError

# A valid header for the layers that need one (the vectors' delivery markers name this id).
V4_META = {"version": 4, "id": "session-00000000-0000-4000-8000-000000000001",
           "createdAt": 1790000000000, "cwd": "/srv/sample/project", "isSeeded": False,
           "delegationDepth": 0}


def _optional(module: str):
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name == module:
            return None
        raise


def _check_fold(case: dict, version: int) -> list[str]:
    events = case["events"]
    base = case.get("baseSeq", 0)
    want = case["expect"]
    problems: list[str] = []
    try:
        fold = fold_surface(events, version=version, base_seq=base)
    except FoldError as err:
        if "error" not in want:
            return [f"fold raised {err!r}, want success"]
        w = want["error"]
        problems += diff("error.at_seq", err.seq, w["at_seq"])
        problems += diff("error.kind", err.kind, w["kind"])
        problems += diff("error.message", err.message, w["message"])
        if w.get("message_contains", "") not in err.message:
            problems.append(f"error.message lacks {w['message_contains']!r}")
        return problems
    if "error" in want:
        return [f"fold succeeded with nodes {list(fold.nodes)}, want error {want['error']}"]
    problems += diff("nodes", list(fold.nodes), want["nodes"])
    problems += diff("replacements", [r.to_json() for r in fold.replacements],
                     want["replacements"])
    problems += diff("replaceGeneration", fold.replace_generation, want["replaceGeneration"])
    if "contentGeneration" in want:
        problems += diff("contentGeneration", fold.content_generation, want["contentGeneration"])
    derived = [s for s in fold.nodes if derive_message(
        events[s - base], version=version, projected=fold.projected_messages) is not None]
    problems += diff("derivedSeqs", derived, want["derivedSeqs"])
    if "projectedMessages" in want:
        got = {str(k): v for k, v in fold.projected_messages.items()}
        problems += diff("projectedMessages", got, want["projectedMessages"])
    return problems


def _check_timeline(case: dict, version: int) -> list[str]:
    events = case["events"]
    base = case.get("baseSeq", 0)
    want = case["expect"]
    timeline = SurfaceTimeline(events, version=version, base_seq=base)
    if "error" in want:
        if not timeline.errors:
            return ["timeline recorded no error"]
        first = timeline.errors[0]
        return diff("timeline first error", [first.seq, first.kind, first.message],
                    [want["error"]["at_seq"], want["error"]["kind"], want["error"]["message"]])
    if not events:
        return diff("timeline surface", list(timeline.final_nodes), want["nodes"])
    return diff("timeline surface", list(timeline.surface_at(base + len(events) - 1)),
                want["nodes"])


def _check_restore(case: dict, version: int) -> list[str]:
    want = case["session_restore"]
    restore = _optional("workbench.core.restore")
    if restore is None:
        return ["session_restore: restore not implemented (workbench.core.restore is missing)"]
    try:
        got = restore.restore_session(case["events"], version=version)
    except restore.RestoreError as err:
        if "error" not in want:
            return [f"session_restore raised {err.message!r}, want ok"]
        problems = diff("session_restore.message", err.message, want["error"]["message"])
        if "kind" in want["error"]:
            problems += diff("session_restore.kind", err.kind, want["error"]["kind"])
        return problems
    if "error" in want:
        return [f"session_restore succeeded, want error {want['error']}"]
    problems = diff("session_restore.nodes", list(got.nodes), want["nodes"])
    if "appendedEndSeed" in want:
        problems += diff("session_restore.appendedEndSeed", got.appended_end_seed,
                         want["appendedEndSeed"])
    return problems


def _check_relationships(case: dict) -> list[str]:
    want = case["relationships"]
    module = _optional("workbench.core.relationships")
    if module is None:
        return ["relationships: not implemented (workbench.core.relationships is missing)"]
    violations = list(module.check_relationships(V4_META, case["events"], inherited_event_count=0))
    if "error" not in want:
        if violations:
            v = violations[0]
            return [f"relationships: got {v.name}: {v.message}, want ok"]
        return []
    if not violations:
        return [f"relationships: got ok, want {want['error']}"]
    v = violations[0]
    return diff("relationships.error", {"name": v.name, "message": v.message}, want["error"])


def check(case: dict, path: Path, version: int) -> list[str]:
    problems = _check_fold(case, version)
    problems += _check_timeline(case, version)
    if "session_restore" in case:
        problems += _check_restore(case, version)
    if "relationships" in case:
        problems += _check_relationships(case)
    return problems


__all__: list[Any] = ["check"]
