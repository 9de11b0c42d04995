"""The v3→v4 migration step (v4 spec §0.4) as one set of rules shared by `migrate_v3` and the load's
v3 checks: the ``turn/end`` closer of a turn left open before the next ``turn/start``, the renamed
unknown ignorable event types, the refused shapes, and seq references remapped after a closer
(integral floats included, v4 spec §1.4). Small logs built here; no corpus needed."""
from __future__ import annotations

import json
from typing import Any

import pytest

from workbench.core.load import load_bytes
from workbench.core.migration import lift_event, migrate_v3, migrated, unsupported_v3
from workbench.core.relationships import check_relationships
from workbench.errors import MigrationRefused

HEADER = {"type": "session", "version": 3, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}
USER = {"content": [{"type": "text", "text": "hi"}], "source": {"kind": "user"}, "role": "user", "id": "m1"}


def _events(*rows: tuple[str, dict]) -> list[dict]:
    out = []
    for seq, (kind, data) in enumerate(rows):
        event: dict[str, Any] = {"type": kind, "seq": seq, "time": 10 + seq, "data": data}
        if kind == "user/message":
            event["surfaceOp"] = "append"
        out.append(event)
    return out


def _log_bytes(events: list[dict]) -> bytes:
    return b"".join(json.dumps(row).encode() + b"\n" for row in [HEADER, *events])


# turn 1 is left open (a next-turn splice) when turn 2 starts; turn 2 ends normally
OPEN_TURN = _events(("turn/start", {"turn": 1}), ("turn/start", {"turn": 2}), ("user/message", USER),
                    ("turn/end", {"turn": 2, "reason": {"kind": "completed"}}))
CLOSER = {"type": "turn/end", "seq": 1, "time": 10, "data": {"turn": 1, "reason": {"kind": "interrupted"}}}


def test_a_v3_turn_left_open_before_the_next_turn_start_reads_as_the_migration_closes_it() -> None:
    log = load_bytes(_log_bytes(OPEN_TURN), name="session.v3.jsonl")
    assert (log.verdict, [d.rule for d in log.defects]) == ("clean", [])
    assert check_relationships(HEADER, OPEN_TURN, version=3, collect=True) == []
    _, events = migrated(log)
    assert events[1] == CLOSER
    assert [e["seq"] for e in events] == list(range(5))
    # the v4 view reads back clean with the v4 rules
    v4 = load_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in [{**HEADER, "version": 4}, *events]),
                    name="session.v4.jsonl")
    assert (v4.verdict, [d.rule for d in v4.defects]) == ("clean", [])


def test_a_v3_turn_left_open_inside_a_step_stays_corrupt_and_unmigrated() -> None:
    # the migration has no documented closer for it: the load still refuses the turn/start
    events = _events(("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}),
                     ("turn/start", {"turn": 2}))
    log = load_bytes(_log_bytes(events), name="session.v3.jsonl")
    assert log.verdict == "corrupt"
    assert any("turn/start does not open the expected turn" in d.message for d in log.defects)
    with pytest.raises(MigrationRefused, match="left open inside a step"):
        migrate_v3(events)


def test_a_v4_log_keeps_refusing_a_turn_left_open() -> None:
    # the closer is the v3→v4 step's: a v4 log with the same shape is still corrupt
    log = load_bytes(b"".join(json.dumps(r).encode() + b"\n" for r in [{**HEADER, "version": 4}, *OPEN_TURN]),
                     name="session.v4.jsonl")
    assert log.verdict == "corrupt"


def test_integral_float_seq_references_are_remapped_after_an_inserted_closer() -> None:
    title = {"title": "Hi", "messageSeqs": [2.0], "source": {"kind": "fallback"}}
    events = _events(("turn/start", {"turn": 1}), ("turn/start", {"turn": 2}), ("user/message", USER),
                     ("session/title", title))
    events[2]["sourceEventSeqs"] = [1.0]
    out = migrate_v3(events)
    assert out[1] == CLOSER
    assert out[3]["sourceEventSeqs"] == [2]   # the turn/start, now at seq 2
    assert out[4]["data"]["messageSeqs"] == [3]   # the user/message, now at seq 3
    assert [e["seq"] for e in out] == list(range(6))


def test_unknown_ignorable_event_types_are_renamed_into_the_plugin_namespace() -> None:
    note = {"type": "acme/note", "seq": 1, "time": 1, "data": {"x": 1}, "ignorable": True}
    assert lift_event(note) == {**note, "type": "plugin:acme/note"}
    assert list(lift_event(note)) == list(note)   # the key order is kept
    for kept in ({**note, "type": "plugin:acme"},                      # already a plugin record
                 {k: v for k, v in note.items() if k != "ignorable"},  # not ignorable: refused at load
                 {**note, "type": "todo/write"}):                      # a known type
        assert lift_event(kept) is kept
    out = migrate_v3(_events(("turn/start", {"turn": 1})) + [note])
    assert out[1]["type"] == "plugin:acme/note"


@pytest.mark.parametrize(("event", "reason"), [
    ({"type": "request/header", "seq": 3, "time": 1,
      "data": {"header": {"config": {}, "tools": [{"name": "bash", "deferLoading": True}]}, "reason": "initial"}},
     "deferLoading on the request/header tool schema 'bash'"),
    ({"type": "session-log-deepseek/delivery-accepted", "seq": 3, "time": 1,
      "data": {"sessionId": "s", "sessionFormatVersion": 4.0, "throughSeq": 2}},
     "a delivery marker claiming format v4"),
    ({"type": "tool/result", "seq": 3, "time": 1,
      "data": {"message": {"role": "user", "source": {"kind": "tool", "callId": "c"}, "id": "r",
                           "content": [{"type": "tool-result", "toolCallId": "c",
                                        "content": [{"type": "tool-result", "toolCallId": "c", "content": []}]}]}}},
     "a nested tool result"),
])
def test_the_shapes_the_v3_step_refuses_are_refused_naming_the_seq(event: dict, reason: str) -> None:
    assert unsupported_v3(event).startswith(reason)
    with pytest.raises(MigrationRefused, match=f"^seq 3: {reason}"):
        migrate_v3([*_events(("turn/start", {"turn": 1}), ("user/message", USER), ("step/start", {})), event])


def test_what_the_v3_step_supports_is_not_refused() -> None:
    v3_marker = {"type": "session-log-deepseek/delivery-accepted", "seq": 0, "time": 1,
                 "data": {"sessionId": "s", "sessionFormatVersion": 3, "throughSeq": 0}}
    plain = {"type": "request/header", "seq": 0, "time": 1,
             "data": {"header": {"config": {}, "tools": [{"name": "bash"}]}, "reason": "initial"}}
    result = {"type": "tool/result", "seq": 0, "time": 1,
              "data": {"message": {"role": "user", "source": {"kind": "tool", "callId": "c"}, "id": "r",
                                   "content": [{"type": "tool-result", "toolCallId": "c",
                                                "content": [{"type": "text", "text": "x"}]}]}}}
    assert [unsupported_v3(e) for e in (v3_marker, plain, result)] == [None, None, None]
