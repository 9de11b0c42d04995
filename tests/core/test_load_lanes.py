"""The loader's dispatch lanes (`workbench.core.load`) change no outcome.

The pipeline hands each event only to the stages whose types it concerns, skips quiet types,
shares shape results between the stored validation and restore, and its restore reads the
log's one fold (the surface timeline's builder, fed every event) instead of folding the events
it is handed. Each stage's result must equal the stage run on its own over every event through its
plain ``accept`` (`check_relationships`, `validate_stored_events`, `restore_session`,
`open_turn_closers`), on the shared corpus and on built damaged logs.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.core import stored
from workbench.core import surface_rules as surface
from workbench.core.load import evaluate_bytes, evaluate_path
from workbench.core.relationships import check_relationships
from workbench.core.repair import open_turn_closers
from workbench.core.restore import RestoreError, restore_session
from workbench.core.stored import surface_metadata_problem, validate_stored_events
from workbench.core.surface import SurfaceState, plan_event
from workbench.core.timeline import APPENDED, REJECTED, TimelineBuilder
from workbench.errors import FoldError
from workbench.io.generations import nested_streams, rules_for


def _standalone(report) -> tuple:
    log = report.log
    events = list(log.events)
    version = rules_for(log.format_version)
    meta = log.meta if log.meta is not None else (log.header or {})
    relationships = (check_relationships(meta, events, inherited_event_count=log.inherited_event_count,
                                         collect=True, version=version) if nested_streams(version) else [])
    found = validate_stored_events(meta, events, version=version, location=log.path, collect=True)
    closers = open_turn_closers(events, "interrupted", version=version)
    try:
        resume = restore_session(events + closers, version=version,
                                 header=log.meta if nested_streams(version) else None,
                                 inherited_event_count=log.inherited_event_count)
        resumed = (resume.nodes, resume.appended_end_seed)
    except RestoreError as exc:
        resumed = (exc.kind, exc.message, exc.index)
    return sorted(map(repr, relationships)), list(map(repr, found)), repr(closers), resumed


def _pipeline(report) -> tuple:
    resume = report.resume
    resumed = ((resume.nodes, resume.appended_end_seed) if not isinstance(resume, RestoreError)
               else (resume.kind, resume.message, resume.index))
    return (sorted(map(repr, report.relationships)), list(map(repr, report.stored)), repr(report.closers),
            resumed)


def _corpus(shared_dir: Path) -> list[Path]:
    corpus = shared_dir / "corpus"
    paths = sorted(p for p in corpus.rglob("*") if p.suffix in (".jsonl", ".zstd"))
    if not paths:
        pytest.skip("../shared/corpus holds no logs")
    return paths


def test_corpus_stage_results_equal_the_stages_run_alone(shared_dir: Path) -> None:
    compared = 0
    for path in _corpus(shared_dir):
        report = evaluate_path(path)
        if report.read.header is None or not report.read.header.readable:
            continue  # no rows were read: no stage ran
        assert _pipeline(report) == _standalone(report), path.name
        compared += 1
    assert compared > 100


HEADER = {"type": "session", "version": 4, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}


def _log(events: list[dict]) -> bytes:
    return b"".join(json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in [HEADER, *events])


def _event(seq: int, kind: str, data: dict, **extra: object) -> dict:
    return {"type": kind, "seq": seq, "time": seq, "data": data, **extra}


DAMAGED = {
    "quiet-types-carry-surface-fields": [
        _event(0, "job/registered", {}, surfaceOp="append"),
        _event(1, "todo/write", {}, sourceEventSeqs=[0]),
        _event(2, "session-log-deepseek/delivery-accepted", {"sessionFormatVersion": 4, "throughSeq": 5,
                                                             "sessionId": "other"}),
    ],
    "unknown-and-ignorable": [
        _event(0, "future/thing", {}),
        _event(1, "future/other", {}, ignorable=True),
        _event(2, "job/settled", {}, ignorable=True),
    ],
    "open-turn-with-tools": [
        _event(0, "turn/start", {"turn": 1}),
        _event(1, "step/start", {"turn": 1, "step": 1}),
        _event(2, "assistant/message", {"turn": 1, "step": 1, "stream": [], "message": {
            "id": "m", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"},
            "content": [{"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}]}},
               surfaceOp="append"),
        _event(3, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}"}),
        _event(4, "job/registered", {}),
    ],
    "message-lane": [  # v4 message rows row admission lets through, each failing a later stage
        _event(0, "turn/start", {"turn": 1}),
        _event(1, "user/message", {"id": "u", "role": "assistant", "content": [], "source": {"kind": "user"}},
               surfaceOp="append"),
        _event(2, "step/start", {"turn": 1, "step": 1}),
        _event(3, "assistant/message", {"turn": 1, "step": 1, "message": {  # no stream: settlement
            "id": "m", "role": "assistant", "source": {"kind": "model", "provider": "p", "model": "m"},
            "content": [{"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}]}},
               surfaceOp="append"),
        _event(4, "assistant/message", {"turn": 1, "step": 1, "stream": [], "message": {
            "id": "m2", "role": "assistant", "source": {"kind": "model"}, "content": []}}, surfaceOp="append"),
        _event(5, "tool/result", {"turn": 1, "step": 2, "message": {
            "id": "r", "role": "tool", "toolCallId": "c1", "source": {"kind": "tool", "callId": "c1"},
            "content": []}}, surfaceOp="append", sourceEventSeqs=[3]),
        _event(6, "system/message", {"turn": 1, "step": 1, "message": {
            "id": "s", "role": "system", "source": {"kind": "user"}, "content": []}}, surfaceOp="append"),
        _event(7, "user/message", {"id": "u2", "role": "user", "content": "x", "source": {"kind": "user"}},
               surfaceOp="append"),
        _event(8, "tool/result", {"turn": 1, "step": 1, "message": {
            "id": "r2", "role": "tool", "toolCallId": "c1", "source": {"kind": "tool", "callId": "c1"},
            "content": []}}, surfaceOp="append", sourceEventSeqs=[9]),
    ],
    "bad-shapes": [
        _event(0, "user/message", {"id": "", "role": "user", "content": [], "source": {"kind": "user"}},
               surfaceOp="append"),
        _event(1, "tool/result", {"message": {"id": "r", "role": "tool", "content": []}},
               surfaceOp="append", sourceEventSeqs=[0, 0]),
        _event(2, "request/header", {"header": {"tools": []}}),
    ],
}


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_damaged_logs_stage_results_equal_the_stages_run_alone(name: str) -> None:
    report = evaluate_bytes(_log(DAMAGED[name]), name="session.v4.jsonl")
    assert _pipeline(report) == _standalone(report)


_entry = st.one_of(st.integers(-2, 12), st.just(3.0), st.just(True), st.just("3"), st.just(-0.0))


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["tool/result", "assistant/message", "user/message", "todo/write"]),
       sources=st.one_of(st.none(), st.lists(_entry, max_size=5)), version=st.sampled_from([0, 4]),
       op=st.sampled_from(["append", "replace"]))
def test_plain_append_shortcut_agrees_with_the_fold(kind: str, sources: list | None, version: int,
                                                    op: str) -> None:
    event: dict = {"type": kind, "seq": 10, "time": 0, "data": {}, "surfaceOp": op}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    try:
        fold_op = surface._surface_op(event, kind, 10, version)
        if fold_op is not None:
            surface._check_sources(event, kind, 10, version)
        accepted = True
    except FoldError:
        accepted = False
    if stored._plain_append(event, kind, 10, version):
        assert accepted
    assert (surface_metadata_problem(event, version=version) is None) == accepted


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(["tool/result", "assistant/message", "user/message", "developer/message", "todo/write"]),
       sources=st.one_of(st.none(), st.lists(_entry, max_size=5)), version=st.sampled_from([0, 4]),
       op=st.sampled_from(["append", "replace", None]))
@example(kind="assistant/message", sources=[3], version=4, op="append")
@example(kind="assistant/message", sources=[3], version=0, op="append")
@example(kind="tool/result", sources=[3, 5], version=4, op="append")
@example(kind="tool/result", sources=[5, 3, 5], version=4, op="append")
@example(kind="developer/message", sources=[3], version=4, op="append")
@example(kind="todo/write", sources=[3], version=4, op=None)
def test_the_fold_lanes_agree_with_plan_event(kind: str, sources: list | None, version: int,
                                              op: str | None) -> None:
    """The timeline's shortcuts (log-only event, plain append with plain sources) give what
    `plan_event` gives: the same error, or an append exactly when its plan is an append."""
    event: dict = {"type": kind, "seq": 10, "time": 0, "data": {}}
    if op is not None:
        event["surfaceOp"] = op if op == "append" else {"op": op, "startSeq": 3, "endSeq": 4}
    if sources is not None:
        event["sourceEventSeqs"] = sources
    builder = TimelineBuilder([], version=version, base_seq=10)
    builder.feed(event)
    try:
        plan = plan_event(SurfaceState(), event, 10, version=version, events=[], base_seq=10)
        error = None
    except FoldError as exc:
        plan, error = None, exc
    if error is not None:
        assert builder.status[0] == REJECTED and builder.errors[0].message == error.message
    else:
        assert not builder.errors
        assert (builder.status[0] == APPENDED) == (plan is not None and plan.kind == "append")
        assert builder.state.nodes == ([10] if plan is not None and plan.kind == "append" else [])


_text = st.one_of(st.just(""), st.just("c1"), st.just("c2"), st.integers(0, 2), st.none())
_absent = st.just(None)


@settings(max_examples=400, deadline=None)
@given(mid=_text, role=st.sampled_from(["tool", "user", "assistant", 3]), tool_call_id=_text,
       source=st.one_of(st.none(), st.just("x"), st.fixed_dictionaries(
           {}, optional={"kind": st.sampled_from(["tool", "model", "plugin", "", 1]), "callId": _text})),
       content=st.one_of(st.just([]), st.just("text"), st.just([{"type": "text", "text": "a"}])),
       error=st.booleans(), is_error=st.sampled_from([True, False, None, "yes"]))
def test_an_admitted_tool_result_passes_the_stored_shape_and_sources(mid, role, tool_call_id, source, content,
                                                                     error, is_error) -> None:
    """`ShapeMemo.cleared` takes a v4 ``tool/result``'s shape verdict from row admission, and the
    pipeline's message lane takes the relationship source rule from the shape verdict."""
    from workbench.core.lifecycle_values import Violation
    from workbench.core.relationships import message_sources
    from workbench.io.admission_v4 import SyntaxRefusal, admit_row

    message: dict = {"role": role, "content": content}
    for key, value in (("id", mid), ("toolCallId", tool_call_id), ("source", source), ("isError", is_error)):
        if value is not None:
            message[key] = value
    data: dict = {"turn": 1, "step": 1, "message": message}
    if error:
        data["error"] = {"name": "E", "code": "C"}
    row = {"type": "tool/result", "seq": 5, "time": 0, "data": data, "surfaceOp": "append"}
    try:
        admit_row(row, json.dumps(row).encode())
    except SyntaxRefusal:
        return
    assert stored.message_shape_problem(row, version=4) is None
    assert stored.event_data_problem(row) is None
    message_sources(row)  # raises Violation if the source rule failed
    memo = stored.ShapeMemo(4)
    assert memo.cleared(row, "tool/result") and memo.shape(row) is None and memo.surface(row) is None
    del Violation


_block = st.one_of(st.sampled_from(["text", "tool-addition", "tool-removal", "tool-call", "tool-result", 7]).map(
    lambda kind: {"type": kind, "text": "a", "toolName": "t"}), st.just("loose"))


@settings(max_examples=400, deadline=None)
@given(kind=st.sampled_from(["system/message", "user/message", "assistant/message", "tool/result"]),
       role=st.sampled_from(["developer", "user", "assistant", "system", "tool", None]),
       content=st.one_of(st.lists(_block, max_size=3), st.just("text")),
       shape=st.sampled_from(["object", "message-not-object", "data-not-object"]),
       error=st.booleans(), is_error=st.sampled_from([True, False, None]), escaped=st.booleans())
def test_an_admitted_message_row_passes_the_stored_event_data_rules(kind, role, content, shape, error, is_error,
                                                                   escaped) -> None:
    """`ShapeMemo.cleared` takes a v4 message row's ``validateSessionEventData`` verdict from row
    admission: every row of the four cleared types that admission lets through passes it, the
    tool-change names spelled literally or with a ``\\u00XX`` escape in the line's bytes."""
    from workbench.io.admission_v4 import SyntaxRefusal, admit_row

    message: dict = {"id": "m1", "content": content, "source": {"kind": "tool", "callId": "c1"}, "toolCallId": "c1"}
    if role is not None:
        message["role"] = role
    if is_error is not None:
        message["isError"] = is_error
    data = message if kind == "user/message" else {"turn": 1, "step": 1, "message": message}
    if shape == "message-not-object":
        data = "m" if kind == "user/message" else {"turn": 1, "step": 1, "message": "m"}
    elif shape == "data-not-object":
        data = ["d"]
    if error and type(data) is dict:
        data["error"] = {"name": "E", "code": "C"}
    row = {"type": kind, "seq": 5, "time": 0, "data": data, "surfaceOp": "append"}
    raw = json.dumps(row).encode()
    if escaped:
        raw = raw.replace(b'"tool-', b'"\\u0074ool-')
        assert json.loads(raw) == row
    try:
        admit_row(row, raw)
    except SyntaxRefusal:
        return
    assert stored.event_data_problem(row) is None
