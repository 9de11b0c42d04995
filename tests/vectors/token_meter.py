"""Handler for `conformance*/token_meter/*.json` (heuristic pricing, spec §6).

Case shapes (see the INDEX.md of each folder): message vectors (`message`), header vectors
(`header`), surface vectors (`events` with `expect.nodes`) and, v4 only, measure vectors (`events`
with `expect.measurements` or `expect.error`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from vectors._compare import diff
from workbench.core.header import canonical_header
from workbench.core.tokens.heuristic import (
    estimate_content,
    estimate_message,
    estimate_system_message,
    estimate_system_text,
    estimate_tools,
    structural_json,
)
from workbench.core.tokens.measure import measure_log
from workbench.core.tokens.surface_prices import fold_surface_tokens
from workbench.errors import MeterError
from workbench.io.jsjson import ABSENT, js_len, stringify

_ARMS = {0: {"text", "reasoning", "tool-call", "tool-result"}, 4: {"text", "reasoning", "tool-call"}}


def _block_rows(content: list, version: int) -> list[dict]:
    rows = []
    for block in content:
        row: dict[str, Any] = {"type": block.get("type"), "tokens": estimate_content([block], version=version)}
        if block.get("type") not in _ARMS[4 if version >= 4 else 0]:
            text = structural_json(block, version=version)
            row["json"] = text
            row["jsonLength"] = js_len(text)
        rows.append(row)
    return rows


def _check_message(case: dict, version: int) -> list[str]:
    message = case["message"]
    want = case["expect"]
    got: dict[str, Any] = {"tokens": estimate_message(message, version=version)}
    if "systemTokens" in want:
        got["systemTokens"] = estimate_system_message(message)
    if "contentTokens" in want:
        got["contentTokens"] = estimate_content(message["content"], version=version)
    got["blocks"] = _block_rows(message["content"], version)
    return diff("message", got, want)


def _v0_prices(header: Any) -> dict:
    if type(header) is not dict:
        return {"systemTokens": 0, "toolsTokens": 0, "headerTokens": 0}
    system = estimate_system_text(header.get("system", ABSENT))
    tools = estimate_tools(header.get("tools", ABSENT))
    return {"systemTokens": system, "toolsTokens": tools, "headerTokens": system + tools}


def _check_header(case: dict, version: int) -> list[str]:
    header = case["header"]
    want = case["expect"]
    tools = header.get("tools", ABSENT) if type(header) is dict else ABSENT
    canonical = canonical_header(header, version=version)
    if version >= 4:
        got: dict[str, Any] = {
            "toolsTokens": estimate_tools(tools),
            "canonical": canonical,
            "canonicalToolsTokens": estimate_tools(canonical.get("tools", ABSENT) if canonical else ABSENT),
        }
    else:
        got = _v0_prices(header)
        got["canonical"] = _v0_prices(canonical)
    if tools is not ABSENT:
        got["toolsJsonLength"] = js_len(stringify(tools))
    if "toolsJsonLength" not in want:
        got.pop("toolsJsonLength", None)
    return diff("header", got, want)


def _check_surface(case: dict, version: int) -> list[str]:
    result = fold_surface_tokens(case["events"], version=version)
    got: dict[str, Any] = {
        "nodes": [{"seq": s, "tokens": t} for s, t in result.nodes],
        "surfaceTokens": result.surface_tokens,
    }
    if "steps" in case["expect"]:
        got["steps"] = [{"seq": s, "tokens": t, "deltaTokens": d} for s, t, d in result.steps]
    return diff("surface", got, case["expect"])


def _check_measure(case: dict, version: int) -> list[str]:
    events = case["events"]
    after = case.get("measureAt")
    try:
        measurements = measure_log(events, version=version, after_seqs=after,
                                   request_header=case.get("requestHeader", ABSENT))
        got: dict = {"measurements": [m.to_json() for m in measurements]}
    except MeterError as exc:
        got = {"error": {"message": str(exc)}}
    return diff("measure", got, case["expect"])


def check(case: dict, path: Path, version: int) -> list[str]:
    if "message" in case:
        return _check_message(case, version)
    if "header" in case:
        return _check_header(case, version)
    expect = case["expect"]
    if "measurements" in expect or "error" in expect:
        return _check_measure(case, version)
    if "nodes" in expect:
        return _check_surface(case, version)
    return [f"{path.name}: unrecognised token_meter case"]
