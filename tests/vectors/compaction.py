"""compaction/ vectors (both formats): bracket analysis, entry state, tool pairing, range
selection, the v0 invariant / v4 relationships, and the tool-result pruner.

Every key of `expect` is computed and compared exactly (an unknown key is a failure, never
skipped):

* `invariant` (v0): `check_compaction_invariant` → `{ok: true}` or `{error: message}`.
* `relationships` (v4): `workbench.core.relationships.check_relationships` with a valid header.
* `brackets` / `prunes`: `workbench.core.compaction.shapes.bracket_json` / `prune_json` of the
  records of `workbench.core.compaction.brackets.compactions`.
* `entryState`: `inspect_compaction_entry_state`; `toolPairing`: `cut_balanced` over the final
  surface (or the reference error: a string in v0, `{message}` in v4).
* `surface`: final nodes and heuristic node prices (+ `surfaceTokens` in v0).
* `selections` (v4): `select_compactable_range` for every `retainTokens`.
* `foldError` (v4): the first fold violation (`{at_seq, kind, message, message_contains}` keys,
  whichever the vector gives).
* `mode: "prune"` (v4): `resolve_config`, `measure_content`, `prune_content`.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vectors._compare import diff
from vectors.fold import V4_META, _optional
from workbench.core.compaction.brackets import compactions, price_cache
from workbench.core.compaction.entry import inspect_compaction_entry_state
from workbench.core.compaction.invariant import check_compaction_invariant
from workbench.core.compaction.pairing import ToolPairingError, cut_balanced
from workbench.core.compaction.pruner import (
    PruneConfigError,
    measure_content,
    prune_content,
    resolve_config,
)
from workbench.core.compaction.selection import select_compactable_range
from workbench.core.compaction.shapes import bracket_json, prune_json
from workbench.core.timeline import SurfaceTimeline


def _pairing(nodes: tuple[int, ...], events: list, version: int) -> dict[str, Any]:
    try:
        return {"cutBalanced": list(cut_balanced(nodes, events))}
    except ToolPairingError as exc:
        return {"error": exc.message if version < 4 else {"message": exc.message}}


def _selections(case: dict, nodes: tuple[int, ...], prices: list[int], events: list,
                version: int) -> list[dict[str, Any]]:
    out = []
    for retain in case.get("retainTokens", []):
        try:
            found = select_compactable_range(nodes, prices, events, version=version,
                                             retain_tokens=retain)
        except ToolPairingError as exc:
            out.append({"retainTokens": retain, "error": exc.message})
            continue
        out.append({"retainTokens": retain, "range": None if found is None else found.as_json()})
    return out


def _relationships(events: list) -> dict[str, Any]:
    module = _optional("workbench.core.relationships")
    if module is None:
        return {"unavailable": "workbench.core.relationships is missing"}
    violations = list(module.check_relationships(V4_META, events, inherited_event_count=0))
    if not violations:
        return {"ok": True}
    return {"error": {"name": violations[0].name, "message": violations[0].message}}


def _fold_error(timeline: SurfaceTimeline, want: dict[str, Any]) -> list[str]:
    if not timeline.errors:
        return [f"foldError: got none, want {want}"]
    err = timeline.errors[0]
    got = {"at_seq": err.seq, "seq": err.seq, "kind": err.kind, "message": err.message}
    problems = []
    for key, value in want.items():
        if key == "message_contains":
            if value not in err.message:
                problems.append(f"foldError.message lacks {value!r}: {err.message!r}")
        elif key in got:
            problems += diff(f"foldError.{key}", got[key], value)
        else:
            problems.append(f"foldError: unhandled key {key!r}")
    return problems


def _check_log(case: dict, version: int) -> list[str]:
    events = case["events"]
    want = case["expect"]
    timeline = SurfaceTimeline(events, version=version)
    price = price_cache(events, version=version)
    found = compactions(events, version=version, timeline=timeline, price=price)
    nodes = timeline.final_nodes
    prices = [price(s) for s in nodes]
    problems: list[str] = []
    for key, value in want.items():
        if key == "invariant" and version < 4:
            failure = check_compaction_invariant(events)
            got: Any = {"ok": True} if failure is None else {"error": failure.message}
        elif key == "relationships" and version >= 4:
            got = _relationships(events)
        elif key == "brackets":
            got = [bracket_json(r, version=version) for r in found.records]
        elif key == "prunes":
            got = [prune_json(p, version=version) for p in found.prunes]
        elif key == "entryState":
            got = inspect_compaction_entry_state(events).as_json(version=version)
        elif key == "toolPairing":
            got = _pairing(nodes, events, version)
        elif key == "surface":
            got = {"nodes": list(nodes),
                   "priced": [{"seq": s, "tokens": t} for s, t in zip(nodes, prices)]}
            if "surfaceTokens" in value:
                got["surfaceTokens"] = sum(prices)
        elif key == "selections":
            got = _selections(case, nodes, prices, events, version)
        elif key == "foldError":
            problems += _fold_error(timeline, value)
            continue
        else:
            problems.append(f"unhandled expect key {key!r}")
            continue
        if key == "brackets" and isinstance(value, list) and len(value) == len(got):
            for index, (g, w) in enumerate(zip(got, value)):
                problems += diff(f"brackets[{index}]", g, w)
        else:
            problems += diff(key, got, value)
    if "foldError" not in want and timeline.errors:
        problems.append(f"fold error {timeline.errors[0]!r} not expected")
    return problems


def _check_prune(case: dict) -> list[str]:
    want = case["expect"]
    try:
        config = resolve_config(case.get("config"))
    except PruneConfigError as exc:
        if "error" not in want:
            return [f"resolve_config raised {exc}, want success"]
        expected = want["error"]
        expected = expected.get("message") if isinstance(expected, dict) else expected
        return diff("error", str(exc), expected)
    content = case["content"]
    pruned = prune_content(content, config)
    got: dict[str, Any] = {"config": config.as_json(), "charsBefore": measure_content(content),
                           "pruned": pruned}
    if pruned is not None:
        got["charsAfter"] = measure_content(pruned)
    problems = []
    for key, value in want.items():
        if key not in got:
            problems.append(f"unhandled or missing expect key {key!r}")
            continue
        problems += diff(key, got[key], value)
    return problems


def check(case: dict, path: Path, version: int) -> list[str]:
    if case.get("mode") == "prune":
        return _check_prune(case)
    return _check_log(case, version)
