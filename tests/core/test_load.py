"""The full loading pipeline (`workbench.core.load`) over the shared corpus and built logs.

Invariants: loading never raises for data problems (only `LogUnreadable`); every problem is a
`Defect` with the reference text; the real v4 logs load clean with their manifest event counts;
the one known-bad v0 fixture reports its precise fold reason; crash closers equal the events the
real harness appended on resume; lazily parsed events equal the kept ones."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from decoded import Decoded

from workbench.build import LogBuilder
from workbench.core.load import evaluate_bytes, evaluate_path, load_bytes, load_log
from workbench.core.relationships import check_relationships
from workbench.core.repair import interrupted_turn_closers, open_turn_closers
from workbench.core.restore import RestoreError, restore_session
from workbench.errors import LogCorrupt, LogRefused, LogUnreadable
from workbench.io import zstd
from workbench.io.read import scan_path

CORDIS = "apps--web--cordis-tool-round--session.jsonl"


@pytest.fixture(scope="module")
def fixtures(shared_dir: Path) -> list[Path]:
    paths = sorted((shared_dir / "corpus" / "dsh-fixtures").glob("*.jsonl"))
    if not paths:
        pytest.skip("../shared/corpus/dsh-fixtures holds no fixtures")
    return paths


@pytest.fixture(scope="module")
def real_v4(shared_dir: Path) -> tuple[Path, list[dict]]:
    folder = shared_dir / "corpus" / "dsh-real-v4"
    if not (folder / "manifest.json").is_file():
        pytest.skip("../shared/corpus/dsh-real-v4 is absent")
    return folder, json.loads((folder / "manifest.json").read_text())


# -- corpus ---------------------------------------------------------------------------------------

def test_every_v0_fixture_loads_and_only_cordis_has_a_fold_defect(fixtures: list[Path]) -> None:
    assert len(fixtures) == 169
    folds = {}
    for path in fixtures:
        log = load_log(path)
        assert log.format_version == 0, path.name
        folds.update({path.name: d for d in log.defects if d.rule.startswith("fold:")})
    assert list(folds) == [CORDIS]
    defect = folds[CORDIS]
    assert defect.rule == "fold:source_seqs_not_earlier"
    assert defect.message == ("invalid seed event at index 11: sourceEventSeqs must reference earlier "
                              "events: 11 >= current seq 11")
    assert defect.seq == 11


def test_fixture_snapshots_are_numbered_implicitly(fixtures: list[Path]) -> None:
    log = load_log(next(p for p in fixtures if p.name == CORDIS))
    assert log.implicit_seqs
    assert [e["seq"] for e in log.events] == list(range(len(log.events)))
    assert {d.rule for d in log.defects} >= {"implicit_seqs", "header_invalid"}


def test_every_real_v4_log_loads_clean_with_its_manifest_count(real_v4: tuple[Path, list[dict]]) -> None:
    folder, manifest = real_v4
    assert any(entry["file"].endswith(".zstd") for entry in manifest)
    for entry in manifest:
        log = load_log(folder / entry["file"])
        assert log.verdict == "clean", (entry["file"], log.defects[:3])
        assert log.defects == [], entry["file"]
        assert len(log.events) == entry["events"], entry["file"]
        assert log.format_version == 4
        assert log.encoding == ("zstd" if entry["file"].endswith(".zstd") else "jsonl")


def test_killed_mid_compaction_closers_equal_what_the_harness_appended(real_v4: tuple[Path, list[dict]]) -> None:
    """The log killed mid-compaction is clean (an open turn is repaired, not cut); its closers are
    one turn/end {interrupted} (no step was open, v4 §1.7) reusing the last time, exactly the event
    the real harness wrote on resume; the open compaction/start is not closed."""
    folder, _ = real_v4
    killed = evaluate_path(folder / "dev-killed-mid-compaction__session.v4.jsonl")
    resumed = load_log(folder / "dev-killed-mid-compaction-then-resumed__session.v4.jsonl")
    log = killed.log
    assert log.verdict == "clean"
    last = log.events[len(log.events) - 1]
    assert killed.closers == [{"type": "turn/end", "seq": 257, "time": last["time"],
                               "data": {"turn": 13, "reason": {"kind": "interrupted"}}}]
    assert log.closers == killed.closers
    assert resumed.events[257] == killed.closers[0]
    assert resumed.events[258]["type"] == "session/end-seed"
    assert killed.resume_appended == ["turn/end", "session/end-seed"]


def _store_and_decoded(path: Path) -> tuple:
    decoded = Decoded()
    return scan_path(path, observer=decoded).log.events, decoded.events


def test_store_reads_back_the_decoded_events(real_v4: tuple[Path, list[dict]]) -> None:
    """Events are re-read from the file (raw: pread; zstd: frames) as the scan decoded them."""
    folder, _ = real_v4
    for name in ("dev-long-auto-compaction__session.v4.jsonl", "dev-zstd-auto-compaction__session.v4.jsonl.zstd"):
        lazy, kept = _store_and_decoded(folder / name)
        assert list(lazy) == kept and len(kept) > 10
        assert lazy[len(lazy) - 1] == kept[len(kept) - 1] and lazy[5] == kept[5]
        assert lazy.type_of(7) == kept[7]["type"]


@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_v0_packed_rows_read_back_the_decoded_events(tmp_path: Path, compression: str) -> None:
    """v0 packed-row members are re-read from their row line (one parse per row)."""
    b = LogBuilder(version=0, session_id="lazy-v0")
    for _ in range(3):
        with b.turn():
            with b.step():
                b.user("count to ten")
                b.assistant("one two three four five six seven eight nine ten", reasoning="easy " * 20)
    path = b.write(tmp_path / ("session.jsonl" + (".zstd" if compression == "zstd" else "")),
                   compression=compression)
    assert load_log(path).defects == []
    lazy, kept = _store_and_decoded(path)
    assert list(lazy) == kept
    assert [lazy[i] for i in range(len(lazy) - 1, -1, -3)] == [kept[i] for i in range(len(kept) - 1, -1, -3)]
    assert any(lazy.line_of(i) == lazy.line_of(i + 1) for i in range(len(lazy) - 1))


# -- never raises, strict mode ------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "rule"), [
    pytest.param(b"", "header_missing", id="empty"),
    pytest.param(b"\x00\x01\x02 not a log\n", "header_not_json", id="binary"),
    pytest.param(b"[]\n{}\n", "header_not_object", id="array-header"),
    pytest.param(zstd.MAGIC_BYTES + b"\x04", "header_missing", id="zstd-stub"),
    pytest.param(zstd.MAGIC_BYTES + b"\x0c\x00\x00", "zstd_structure", id="zstd-reserved-bit"),
])
def test_garbage_becomes_defects_not_exceptions(data: bytes, rule: str) -> None:
    log = load_bytes(data, name="x.jsonl")
    assert log.defects[0].rule == rule
    assert len(log.events) == 0
    with pytest.raises(LogCorrupt):
        load_bytes(data, name="x.jsonl", strict=True)


def test_newer_version_is_refused_not_corrupt() -> None:
    data = b'{"type":"session","version":9,"id":"s"}\n{"type":"x"}\n'
    log = load_bytes(data, name="session.v4.jsonl")
    assert log.verdict == "refused" and log.defects[0].rule == "unsupported_newer"
    with pytest.raises(LogRefused):
        load_bytes(data, name="session.v4.jsonl", strict=True)


def test_unreadable_paths_raise(tmp_path: Path) -> None:
    with pytest.raises(LogUnreadable):
        load_log(tmp_path / "missing.jsonl")
    with pytest.raises(LogUnreadable):
        load_log(tmp_path)


def test_a_session_directory_stands_for_its_highest_generation(tmp_path: Path) -> None:
    session = tmp_path / "--work-demo--" / "session-dir"
    session.mkdir(parents=True)
    b = LogBuilder(version=4, session_id="session-dir")
    with b.turn():
        with b.step():
            b.user("hi")
    b.write(session / "session.v4.jsonl")
    (session / "session.jsonl").write_bytes(b'{"type":"session","version":0,"id":"session-dir"}\n')
    log = load_log(session)
    assert log.path.endswith("session.v4.jsonl") and log.verdict == "clean"


def test_input_file_is_never_written(tmp_path: Path) -> None:
    b = LogBuilder(version=4, session_id="session-ro")
    with b.turn(end=False):
        with b.step():
            b.user("hi")
    path = b.write(tmp_path / "session.v4.jsonl")
    before = path.read_bytes() + b'{"type":"tod'
    path.write_bytes(before)
    log = load_log(path)
    assert log.torn_tail and log.verdict == "repairable"
    assert path.read_bytes() == before


# -- relationships, closers, restore ---------------------------------------------------------------

META = {"version": 4, "id": "session-r", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}


def _event(seq: int, kind: str, data: dict, **extra: object) -> dict:
    return {"type": kind, "seq": seq, "time": 100 + seq, "data": data, **extra}


def test_collect_lists_every_violation_and_default_only_the_first() -> None:
    events = [_event(0, "turn/start", {"turn": 2}),
              _event(1, "step/start", {"turn": 1, "step": 3}),
              _event(2, "request/context", {"provider": "p", "model": "m"}),
              _event(3, "turn/end", {"turn": 5, "reason": {"kind": "completed"}})]
    first = check_relationships(META, events)
    every = check_relationships(META, events, collect=True)
    assert [(v.seq, v.message) for v in first] == [(0, "turn/start does not open the expected turn")]
    assert [(v.seq, v.name, v.message) for v in every] == [
        (0, "SessionFormatError", "turn/start does not open the expected turn"),
        (1, "SessionFormatError", "step/start does not match the open turn and next step"),
        (2, "SessionFormatError", "request/context is outside an open turn"),
        (3, "SessionFormatError", "turn/end does not match the open turn with no open step"),
    ]


def test_turn_may_cross_only_an_orphaned_compaction() -> None:
    """A turn boundary inside an open bracket is fine when a later end-seed orphans it (§5.2)."""
    start = _event(2, "compaction/start", {"compactionId": "c", "turn": 1})
    crash = [_event(0, "turn/start", {"turn": 1}), _event(1, "step/start", {"turn": 1, "step": 1}),
             _event(2, "step/end", {"turn": 1, "step": 1}), {**start, "seq": 3},
             _event(4, "turn/end", {"turn": 1, "reason": {"kind": "interrupted"}})]
    assert [v.message for v in check_relationships(META, crash)] == ["turn/end crosses an open compaction"]
    assert check_relationships(META, [*crash, _event(5, "session/end-seed", {})]) == []


TOOL_CALL = {"type": "tool-call", "id": "c1", "name": "read", "arguments": "{}"}


def _assistant(seq: int, version: int, calls: list[dict]) -> dict:
    message = {"id": f"a{seq}", "role": "assistant", "content": calls,
               "source": {"kind": "model", "provider": "p", "model": "m"}}
    data = {"turn": 1, "step": 1, "message": message}
    if version >= 4:
        data["stream"] = []
    return _event(seq, "assistant/message", data, surfaceOp="append")


@pytest.mark.parametrize("version", [0, 4])
def test_closers_answer_pending_calls_then_close_step_and_turn(version: int) -> None:
    second = {**TOOL_CALL, "id": "c2"}
    events = [_event(0, "turn/start", {"turn": 1}), _event(1, "step/start", {"turn": 1, "step": 1}),
              _assistant(2, version, [TOOL_CALL, second]),
              _event(3, "tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "read", "arguments": "{}"})]
    closers = interrupted_turn_closers(events, version=version)
    assert [(c["type"], c["seq"], c["time"]) for c in closers] == [
        ("tool/result", 4, 103), ("tool/result", 5, 103), ("step/end", 6, 103), ("turn/end", 7, 103)]
    unknown, not_started = closers[0], closers[1]
    assert unknown["sourceEventSeqs"] == [3] and "sourceEventSeqs" not in not_started
    assert unknown["data"]["error"] == {"name": "ToolOutcomeUnknownError", "code": "TOOL_OUTCOME_UNKNOWN"}
    assert not_started["data"]["error"] == {"name": "ToolNotStartedError", "code": "TOOL_NOT_STARTED"}
    assert not_started["data"]["message"]["id"] == "interrupted-tool-result-c2-5"
    role = not_started["data"]["message"]["role"]
    assert role == ("tool" if version >= 4 else "user")
    assert closers[3]["data"] == {"turn": 1, "reason": {"kind": "interrupted"}}
    forked = open_turn_closers(events, "forked", version=version)
    assert forked[1]["data"]["message"]["id"] == "forked-tool-result-c2-5"
    assert forked[3]["data"]["reason"] == {"kind": "forked"}


def test_balanced_log_has_no_closers() -> None:
    events = [_event(0, "turn/start", {"turn": 1}), _event(1, "turn/end", {"turn": 1, "reason": {"kind": "blocked"}})]
    assert interrupted_turn_closers(events, version=4) == []
    assert interrupted_turn_closers([], version=4) == []


@pytest.mark.parametrize(("events", "kind", "message"), [
    pytest.param([_event(0, "turn/start", {"turn": 1}, extra=1)], "seed_envelope",
                 "seed event at index 0 has an invalid event envelope", id="envelope"),
    pytest.param([_event(1, "turn/start", {"turn": 1})], "seed_seq",
                 "seed event at index 0 has seq 1 (expected 0); seed must be contiguous from 0", id="seq"),
    pytest.param([_event(0, "user/message", {"role": "user", "content": [], "source": {"kind": "user"}},
                         surfaceOp="append")], "seed_message_unidentified",
                 "seed user/message at index 0 lacks an identified message", id="message-id"),
    pytest.param([_event(0, "user/message", {"id": "u", "role": "user", "content": [], "source": {"kind": "user"}},
                         surfaceOp={"op": "replace", "start": 0, "end": 0})], "seed_surface:invalid_replace_op",
                 'invalid seed event at index 0: session event "user/message" carries an invalid replace surfaceOp',
                 id="fold"),
])
def test_restore_errors_have_exact_texts(events: list[dict], kind: str, message: str) -> None:
    with pytest.raises(RestoreError) as caught:
        restore_session(events, version=4)
    assert (caught.value.kind, caught.value.message) == (kind, message)


def test_restore_appends_an_end_seed_unless_the_log_ends_with_one() -> None:
    user = _event(0, "user/message", {"id": "u", "role": "user", "content": [], "source": {"kind": "user"}},
                  surfaceOp="append")
    assert restore_session([user], version=4).appended_end_seed is True
    done = restore_session([user, _event(1, "session/end-seed", {})], version=4)
    assert done.nodes == (0,) and done.appended_end_seed is False


def test_built_log_with_violations_lists_each_as_a_defect() -> None:
    b = LogBuilder(version=4, session_id="session-defects")
    with b.turn():
        with b.step():
            b.user("hi")
    lines = [json.dumps(b.header())] + [json.dumps(e) for e in b.events]
    lines.append(json.dumps(_event(len(b.events), "step/start", {"turn": 1, "step": 1})))
    lines.append(json.dumps(_event(len(b.events) + 1, "acme/unknown", {})))
    report = evaluate_bytes(("\n".join(lines) + "\n").encode(), name="session.v4.jsonl")
    rules = [(d.rule, d.severity, d.seq) for d in report.log.defects]
    assert ("relationships", "corrupt", len(b.events)) in rules
    assert ("unsupported_newer", "refused", len(b.events) + 1) in rules
    assert report.scan_error.message == "step/start does not match the open turn and next step"
    assert report.log.verdict == "refused"
