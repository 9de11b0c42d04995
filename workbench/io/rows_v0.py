"""Packed chunk storage rows of format v0. Layer: io (stdlib + jsjson only).

A v0 JSONL line is either one session event or one *packed chunk row* standing for a run of
consecutive ``assistant/chunk`` delta events (spec v0 §2). Rows are a storage encoding, never
events: reading is layout-blind, so every line goes through `decode_storage_record`, which
passes non-row values through as a one-element list and validates + expands rows.

Invariants (reference: chunk-rows ``decodeStorageRecord`` / ``validateRow`` / ``expandRow``):

* a value is a row iff it is an object whose ``type`` is exactly one of `ROW_TAGS`; anything
  else (null, numbers, strings, arrays, plain events, unpacked chunks) passes through unvalidated;
* an invalid row raises `RowError` whose ``kind`` follows the reference's validation order
  (envelope, seq0, time0, data_type, data_keys, id_name, turn_step_index, payload, dt, dt_arity,
  seq_range, time_range) and whose ``message`` is the reference text
  ``malformed ${tag} storage row: ${why}``;
* expansion yields events in the reference key order (``type, seq, time, data``;
  ``data = {turn, step, chunk}``); member seq/time are exact integers (integral floats such as
  ``2.0`` come out as ``2``; a ``-0`` time0 stays negative zero on member 0, as in JavaScript);
  turn, step and index are copied verbatim (the decoder only checks ``typeof === "number"``).

`pack_chunk_runs` is the encoder (reference: ``packChunkRuns`` / ``classify`` / ``continues`` /
``buildRow``): runs of at least `MIN_RUN` whitelisted, contiguous, same-block deltas become one
row; everything else stays verbatim. ``decode(pack(events)) == events`` for every input.
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.errors import WorkbenchError
from workbench.io.jsjson import MAX_SAFE_INTEGER, is_neg_zero, is_number, is_safe_int

ROW_TAGS = frozenset(("text-chunks", "reasoning-chunks", "tool-call-chunks"))
"""Storage-row tags (no ``/``: they can never collide with an event type)."""

MIN_RUN = 3
"""The encoder packs runs of at least this many members (the decoder accepts any non-empty row)."""

_ENVELOPE = frozenset(("type", "seq0", "time0", "data"))
_TEXT_KEYS = frozenset(("turn", "step", "index", "dt", "texts"))
_TOOL_KEYS = frozenset(("turn", "step", "index", "id", "dt", "args"))
_TOOL_KEYS_NAMED = _TOOL_KEYS | {"name"}
_EVENT_KEYS = frozenset(("type", "seq", "time", "data"))
_DATA_KEYS = frozenset(("turn", "step", "chunk"))
_TEXT_CHUNK_KEYS = frozenset(("type", "index", "text"))
_TOOL_CHUNK_KEYS = frozenset(("type", "index", "id", "argumentsDelta"))
_TOOL_CHUNK_KEYS_NAMED = _TOOL_CHUNK_KEYS | {"name"}

_DELTA_OF_TAG = {"text-chunks": "text-delta", "reasoning-chunks": "reasoning-delta"}
_TAG_OF_DELTA = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks",
                 "tool-call-delta": "tool-call-chunks"}


class RowError(WorkbenchError, ValueError):
    """A malformed packed row: `kind` is the validation step, `message` the reference text."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message

    def __repr__(self) -> str:
        return f"RowError(kind={self.kind!r}, message={self.message!r})"


def is_row(value: Any) -> bool:
    """Whether a parsed line value is row-tagged (and so must validate and expand)."""
    if type(value) is not dict:
        return False
    tag = value.get("type")
    return type(tag) is str and tag in ROW_TAGS


def decode_storage_record(value: Any) -> list:
    """The events one parsed JSONL value stores, in log order (reference: decodeStorageRecord).

    Raises `RowError` for a row-tagged value that is malformed.
    """
    if type(value) is not dict:
        return [value]
    tag = value.get("type")
    if type(tag) is not str or tag not in ROW_TAGS:
        return [value]
    return _expand(value, tag, _validate(value, tag))


def _fail(tag: str, kind: str, why: str) -> RowError:
    return RowError(kind, f"malformed {tag} storage row: {why}")


def _validate(row: dict, tag: str) -> list:
    """Check a row-tagged object in the reference order; return its member payload."""
    if row.keys() != _ENVELOPE:
        raise _fail(tag, "envelope", "envelope must be exactly {type, seq0, time0, data}")
    seq0 = row["seq0"]
    if not is_safe_int(seq0) or seq0 < 0:
        raise _fail(tag, "seq0", "seq0 must be a non-negative safe integer")
    if not is_safe_int(row["time0"]):
        raise _fail(tag, "time0", "time0 must be a safe integer")
    data = row["data"]
    if type(data) is list:  # an array is an object to JS: it fails the exact-key check instead
        keys: Any = frozenset(str(i) for i in range(len(data)))
    elif type(data) is dict:
        keys = data.keys()
    else:
        raise _fail(tag, "data_type", "data must be an object")
    if tag == "tool-call-chunks":
        with_name = keys == _TOOL_KEYS_NAMED
        if not with_name and keys != _TOOL_KEYS:
            raise _fail(tag, "data_keys",
                        "data must be exactly {turn, step, index, id, name?, dt, args}")
        if type(data["id"]) is not str or (with_name and type(data["name"]) is not str):
            raise _fail(tag, "id_name", "id (and name when present) must be strings")
        payload_key = "args"
    else:
        if keys != _TEXT_KEYS:
            raise _fail(tag, "data_keys", "data must be exactly {turn, step, index, dt, texts}")
        payload_key = "texts"
    if not (is_number(data["turn"]) and is_number(data["step"]) and is_number(data["index"])):
        raise _fail(tag, "turn_step_index", "turn/step/index must be numbers")
    payload = data[payload_key]
    if type(payload) is not list or not payload or any(type(m) is not str for m in payload):
        raise _fail(tag, "payload", f"{payload_key} must be a non-empty string array")
    dt = data["dt"]
    if type(dt) is not list or not all(is_safe_int(gap) for gap in dt):
        raise _fail(tag, "dt", "dt must be an array of safe integers")
    if len(dt) != len(payload) - 1:
        raise _fail(tag, "dt_arity", f"dt length {len(dt)} does not match {len(payload)} members")
    # Exact integer arithmetic agrees with JS doubles here: while the running value stays safe
    # every double step is exact, and the first unsafe value is unsafe in both.
    if int(seq0) + len(payload) - 1 > MAX_SAFE_INTEGER:
        raise _fail(tag, "seq_range", "member seqs must stay safe integers")
    time = int(row["time0"])
    for gap in dt:
        time += int(gap)
        if not -MAX_SAFE_INTEGER <= time <= MAX_SAFE_INTEGER:
            raise _fail(tag, "time_range", "member times must stay safe integers")
    return payload


def _expand(row: dict, tag: str, members: list) -> list[dict]:
    """The row's events in the reference key order (reference: expandRow)."""
    data = row["data"]
    turn, step, index = data["turn"], data["step"], data["index"]
    seq = int(row["seq0"])
    time0 = row["time0"]
    time: int | float = time0 if is_neg_zero(time0) else int(time0)
    dt = data["dt"]
    out: list[dict] = []
    if tag == "tool-call-chunks":
        call_id = data["id"]
        named = "name" in data
        name = data.get("name")
        for k, member in enumerate(members):
            if k:
                time = time + int(dt[k - 1])
            chunk = ({"type": "tool-call-delta", "index": index, "id": call_id, "name": name,
                      "argumentsDelta": member} if named else
                     {"type": "tool-call-delta", "index": index, "id": call_id,
                      "argumentsDelta": member})
            out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                        "data": {"turn": turn, "step": step, "chunk": chunk}})
        return out
    delta = _DELTA_OF_TAG[tag]
    for k, member in enumerate(members):
        if k:
            time = time + int(dt[k - 1])
        out.append({"type": "assistant/chunk", "seq": seq + k, "time": time,
                    "data": {"turn": turn, "step": step,
                             "chunk": {"type": delta, "index": index, "text": member}}})
    return out


# -- encoder ------------------------------------------------------------------------------------

def _classify(event: Any) -> str | None:
    """The delta kind of a packable event, else None (reference: classify)."""
    if type(event) is not dict or event.get("type") != "assistant/chunk":
        return None
    if event.keys() != _EVENT_KEYS:
        return None
    seq, time = event["seq"], event["time"]
    if not is_safe_int(seq) or seq < 0 or not is_safe_int(time):
        return None
    data = event["data"]
    if type(data) is not dict or data.keys() != _DATA_KEYS:
        return None
    if not is_number(data["turn"]) or not is_number(data["step"]):
        return None
    chunk = data["chunk"]
    if type(chunk) is not dict or not is_number(chunk.get("index")):
        return None
    kind = chunk.get("type")
    if kind == "text-delta" or kind == "reasoning-delta":
        ok = chunk.keys() == _TEXT_CHUNK_KEYS and type(chunk["text"]) is str
        return kind if ok else None
    if kind == "tool-call-delta":
        keys = chunk.keys()
        valid_keys = keys == _TOOL_CHUNK_KEYS or (
            keys == _TOOL_CHUNK_KEYS_NAMED and type(chunk["name"]) is str)
        ok = valid_keys and type(chunk["id"]) is str and type(chunk["argumentsDelta"]) is str
        return kind if ok else None
    return None


def _continues(prev: dict, nxt: dict, kind: str) -> bool:
    """Whether `nxt` extends the run ending in `prev` (reference: continues)."""
    if nxt["seq"] != prev["seq"] + 1:
        return False
    if abs(int(nxt["time"]) - int(prev["time"])) > MAX_SAFE_INTEGER:
        return False
    pd, nd = prev["data"], nxt["data"]
    if nd["turn"] != pd["turn"] or nd["step"] != pd["step"]:
        return False
    pc, nc = pd["chunk"], nd["chunk"]
    if nc["index"] != pc["index"]:
        return False
    if kind != "tool-call-delta":
        return True
    return (pc["id"] == nc["id"] and ("name" in pc) == ("name" in nc)
            and pc.get("name") == nc.get("name"))


def _build_row(kind: str, run: list[dict]) -> dict:
    """One packed row for a classified run, in the writer's key order (reference: buildRow)."""
    first = run[0]
    fdata = first["data"]
    fchunk = fdata["chunk"]
    times = [int(e["time"]) for e in run]
    data: dict[str, Any] = {
        "turn": fdata["turn"], "step": fdata["step"], "index": fchunk["index"],
        "dt": [b - a for a, b in zip(times, times[1:])],
    }
    if kind == "tool-call-delta":
        data["id"] = fchunk["id"]
        if "name" in fchunk:
            data["name"] = fchunk["name"]
        data["args"] = [e["data"]["chunk"]["argumentsDelta"] for e in run]
    else:
        data["texts"] = [e["data"]["chunk"]["text"] for e in run]
    return {"type": _TAG_OF_DELTA[kind], "seq0": int(first["seq"]), "time0": times[0],
            "data": data}


def pack_chunk_runs(events: Iterable[Any]) -> list:
    """Storage records for one write batch: packed rows for runs of >= MIN_RUN deltas, the rest
    verbatim, in unchanged logical order (reference: packChunkRuns)."""
    out: list = []
    kind: str | None = None
    run: list[dict] = []

    def flush() -> None:
        if kind is not None and len(run) >= MIN_RUN:
            out.append(_build_row(kind, run))
        else:
            out.extend(run)

    for event in events:
        next_kind = _classify(event)
        if next_kind is None:
            flush()
            kind, run = None, []
            out.append(event)
            continue
        if next_kind == kind and run and _continues(run[-1], event, next_kind):
            run.append(event)
            continue
        flush()
        kind, run = next_kind, [event]
    flush()
    return out
