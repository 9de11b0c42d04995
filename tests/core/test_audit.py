"""The compaction audit: a well-formed log passes every check; three broken logs fail exactly
the check that names their fault, with the seqs in the evidence; the JSON shape; probes."""
from __future__ import annotations

import pytest
from compaction_script import Script

from workbench.core.compaction.audit import audit_events
from workbench.core.compaction.checks import COMPACTION_CHECKS
from workbench.core.compaction.probe import extract_facts

# -- logs ------------------------------------------------------------------------------------------


def _session(version: int = 4) -> Script:
    """A finished turn with a tool round, then open turn 2 after its own tool round: the
    compactable span ends before the turn's call, so its newest result stays visible."""
    s = Script(version)
    s.turn_start()
    s.step_start()
    if version >= 4:
        s.system("You are a test agent.")
    s.user("Fix the crash in src/app/main.py: ValueError at line 42. " * 6)
    s.assistant("Reading the file.", calls=("c1",))
    s.tool_result("c1", "def main():\n    raise ValueError('bad')  # line 42\n" * 8)
    s.step_end()
    s.step_start()
    s.assistant("The parseConfig helper raises ValueError; see https://example.com/doc. " * 4)
    s.step_end()
    s.turn_end()
    s.turn_start()
    s.step_start()
    s.user("Now add a regression test. " * 4)
    s.assistant("Listing tests.", calls=("c2",))
    s.tool_result("c2", "tests/test_main.py")
    s.step_end()
    return s


def _first_and_last_compactable(s: Script) -> tuple[int, int]:
    nodes = s.surface()
    first = 1 if s.version >= 4 else 0
    return nodes[first], nodes[-3]


def _request_after(s: Script) -> None:
    s.step_start()
    s.assistant("Writing the test.")
    s.step_end()


def _failed(report) -> dict[str, str]:
    (audit,) = report.compactions
    return {c.name: c.detail for c in audit.checks if not c.ok}


@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
def test_well_formed_compaction_passes_every_check(version: int) -> None:
    s = _session(version)
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "## Files and Code\n- src/app/main.py: ValueError at line 42")
    _request_after(s)
    report = audit_events(s.events, version=version)
    (audit,) = report.compactions
    assert _failed(report) == {}
    names = [c.name for c in audit.checks]
    assert tuple(names) == COMPACTION_CHECKS == (
        "bracket_closed", "inside_bracket", "replacement_cites_sources",
        "checkpoint_after_summary", "checkpoint_is_framed_summary", "shadowed_seqs_match_fold",
        "shadowed_tokens_match", "checkpoint_smaller", "tool_pairing_after",
        "newest_tool_result_visible", "next_request_sees_checkpoint", "originals_preserved")
    assert audit.computed_shadowed_tokens == audit.record.logged_shadowed_tokens
    assert audit.compression_ratio > 1
    assert audit.cache_break is not None and audit.cache_break.position == (1 if version else 0)
    assert audit.lost is not None and "src/app/main.py" in audit.lost.kept["paths"]
    assert report.ok and report.as_json()["compactions"][0]["replacement_seq"] == \
        seqs["replacement"]


def test_summary_larger_than_what_it_hid_fails_checkpoint_smaller() -> None:
    s = _session()
    nodes = s.surface()
    seqs = s.compact(nodes[1], nodes[1], "A very long summary. " * 200)
    _request_after(s)
    failed = _failed(audit_events(s.events, version=4))
    assert list(failed) == ["checkpoint_smaller"]
    hidden = s.price(nodes[1])
    added = s.price(seqs["replacement"])
    assert failed["checkpoint_smaller"] == (f"checkpoint {seqs['replacement']} prices {added} "
                                            f"tokens >= {hidden} hidden")


def test_start_without_end_fails_bracket_closed() -> None:
    s = _session()
    start = s.add("compaction/start", {"compactionId": "cmp-open", "turn": 2})
    s.add("session-log-deepseek/delivery-accepted", {"throughSeq": start})
    report = audit_events(s.events, version=4)
    failed = _failed(report)
    assert list(failed) == ["bracket_closed"]
    assert failed["bracket_closed"] == (f"start {start} has no compaction/end and no later "
                                        f"session/end-seed (log ends at seq {start + 1}): "
                                        "interrupted, the compaction lock is still held")
    assert report.compactions[0].record.status == "interrupted" and not report.ok


def test_stale_start_passes_bracket_closed_with_its_end_seed() -> None:
    s = _session()
    start = s.add("compaction/start", {"compactionId": "cmp-open", "turn": 2})
    s.turn_end("interrupted")
    seed = s.end_seed()
    report = audit_events(s.events, version=4)
    (audit,) = report.compactions
    assert audit.record.status == "stale"
    assert [(c.name, c.ok) for c in audit.checks] == [("bracket_closed", True)]
    assert f"session/end-seed {seed}" in audit.checks[0].detail and str(start) in \
        audit.checks[0].detail


@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
def test_replacement_omitting_a_shadowed_seq_is_reported_not_raised(version: int) -> None:
    s = _session(version)
    start, end = _first_and_last_compactable(s)
    surface = list(s.surface())
    span = surface[surface.index(start):surface.index(end) + 1]
    omitted = span[1]
    start_seq = len(s.events)
    sources = [start_seq, start_seq + 1, *(x for x in span if x != omitted)]
    seqs = s.compact(start, end, "short", sources=sources)
    _request_after(s)
    report = audit_events(s.events, version=version)
    failed = _failed(report)
    assert list(failed) == ["replacement_cites_sources"]
    detail = failed["replacement_cites_sources"]
    assert detail.startswith(f"the fold rejects seq {seqs['replacement']} "
                             "(source_seqs_missing_shadowed): surface replace: sourceEventSeqs "
                             f"must include every shadowed surface node; missing {omitted}")
    assert report.fold_error is not None and report.fold_error.seq == seqs["replacement"]
    assert not report.ok


def test_failed_attempt_only_checks_its_bracket() -> None:
    s = _session()
    s.compact(0, 0, "", summarize=False,
              error="summary is not smaller than the shadowed content (300 estimated framed "
                    "tokens >= 20)")
    (audit,) = audit_events(s.events, version=4).compactions
    assert audit.record.status == "failed" and audit.record.not_smaller == (300, 20)
    assert [(c.name, c.ok) for c in audit.checks] == [("bracket_closed", True)]


@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
def test_checkpoint_that_is_not_the_framed_summary_fails(version: int) -> None:
    """v0 §5.5 / v4 §5.5: the checkpoint is preamble + open tag, the summary's blocks verbatim,
    the close tag; a checkpoint that says something else fails, naming both seqs."""
    s = _session(version)
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "## Files and Code\n- src/app/main.py")
    content = s.events[seqs["replacement"]]["data"]["content"]
    content[1] = {"type": "text", "text": "a different summary than the one logged"}
    _request_after(s)
    report = audit_events(s.events, version=version)
    failed = _failed(report)
    assert list(failed) == ["checkpoint_is_framed_summary"]
    assert failed["checkpoint_is_framed_summary"].startswith(
        f"checkpoint {seqs['replacement']} content is not summary {seqs['summary']} framed")
    assert not report.ok


def test_unframed_checkpoint_fails() -> None:
    s = _session()
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "summary text")
    s.events[seqs["replacement"]]["data"]["content"] = [{"type": "text", "text": "summary text"}]
    assert list(_failed(audit_events(s.events, version=4))) == ["checkpoint_is_framed_summary"]


def test_failed_attempt_with_a_summary_checks_the_summary() -> None:
    """v0 §6.5 / v4 §6.5 hold for every compaction/summary, and the shrink check ran before the
    summary was logged (v0 §5.4): a commit-stage failure keeps its summary checks."""
    s = _session()
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "summary", token_count=5, error="compaction: session surface "
                     "changed during summarization")
    del s.events[seqs["replacement"]]   # the commit failed: no checkpoint
    for seq, event in enumerate(s.events):
        event["seq"] = seq
    (audit,) = audit_events(s.events, version=4).compactions
    assert audit.record.status == "failed" and audit.record.replacement_seq is None
    checks = {c.name: c for c in audit.checks}
    assert list(checks) == ["bracket_closed", "inside_bracket", "shadowed_seqs_match_fold",
                            "shadowed_tokens_match", "checkpoint_smaller"]
    assert not checks["shadowed_tokens_match"].ok
    assert checks["shadowed_tokens_match"].detail.startswith(
        "logged shadowedTokenCount 5 vs heuristic")
    assert checks["checkpoint_smaller"].ok and checks["checkpoint_smaller"].detail.startswith(
        "framed summary prices")


@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
def test_checkpoint_not_right_after_its_summary_fails(version: int) -> None:
    s = _session(version)
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "summary")
    between = {"type": "session-log-deepseek/delivery-accepted", "seq": seqs["replacement"],
               "time": 0, "data": {"throughSeq": seqs["summary"]}}
    s.events.insert(seqs["replacement"], between)
    for seq, event in enumerate(s.events):
        event["seq"] = seq
    replacement = seqs["replacement"] + 1
    s.events[replacement]["data"]["id"] = f"checkpoint-{replacement}"
    report = audit_events(s.events, version=version)
    failed = _failed(report)
    assert list(failed) == ["checkpoint_after_summary"]
    assert failed["checkpoint_after_summary"].startswith(
        f"checkpoint {replacement} does not immediately follow summary {seqs['summary']}")


@pytest.mark.parametrize("order", ["shadowed-first", "extra-seq"])
def test_sources_other_than_start_summary_shadowed_fail(order: str) -> None:
    """v0 §5.1 step 4 / v4 §5.1(b): sourceEventSeqs = [startSeq, summarySeq, ...shadowedSeqs];
    citing all of them in another order, or one more seq, is not that list."""
    s = _session()
    start, end = _first_and_last_compactable(s)
    surface = list(s.surface())
    span = surface[surface.index(start):surface.index(end) + 1]
    at = len(s.events)
    sources = ([*span, at, at + 1] if order == "shadowed-first"
               else [at, at + 1, *span, surface[-1]])
    seqs = s.compact(start, end, "summary", sources=sources)
    failed = _failed(audit_events(s.events, version=4))
    assert list(failed) == ["replacement_cites_sources"]
    detail = failed["replacement_cites_sources"]
    how = "cite them in another order" if order == "shadowed-first" else f"also cite [{surface[-1]}]"
    assert f"of replacement {seqs['replacement']} {how}: not [start, summary, ...shadowedSeqs]" \
        in detail


def test_integral_float_sources_are_canonical() -> None:
    s = _session()
    start, end = _first_and_last_compactable(s)
    seqs = s.compact(start, end, "summary")
    event = s.events[seqs["replacement"]]
    event["sourceEventSeqs"] = [float(x) for x in event["sourceEventSeqs"]]
    assert _failed(audit_events(s.events, version=4)) == {}


def test_prune_records_and_checks() -> None:
    s = _session()
    result = next(x for x in s.surface() if s.events[x]["type"] == "tool/result")
    original = s.events[result]
    prune = s.add("compaction/prune", {"shadowedRange": {"start": result, "end": result},
                                       "shadowedSeqs": [result],
                                       "shadowedTokenCount": s.price(result)})
    data = {**original["data"], "message": {**original["data"]["message"],
                                            "content": [{"type": "text", "text": "short"}]}}
    replacement = s.add("tool/result", data, op=s.replace_op(result, result), sources=[result])
    (p,) = audit_events(s.events, version=4).prunes
    assert (p.record.prune_seq, p.record.original_seq, p.record.replacement_seq) == (
        prune, result, replacement)
    assert p.record.call_id == "c1" and p.record.chars_after == 5
    assert p.ok, p.checks


def test_json_shape_names_the_documented_keys() -> None:
    s = _session()
    start, end = _first_and_last_compactable(s)
    s.compact(start, end, "summary")
    data = audit_events(s.events, version=4, session_id="session-x").as_json()
    assert set(data) >= {"session_id", "compactions", "prunes", "ok"}
    assert set(data["compactions"][0]) >= {
        "id", "status", "trigger", "start_seq", "summary_seq", "replacement_seq", "end_seq",
        "shadowed_seqs", "logged_shadowed_tokens", "computed_shadowed_tokens", "summary_tokens",
        "error", "checks", "lost", "cache_break"}
    assert set(data["compactions"][0]["checks"][0]) == {"name", "ok", "detail"}


def test_extract_facts_categories() -> None:
    facts = extract_facts("open /srv/app/main.py and notes.md; parse_config raised "
                          "FileNotFoundError (FS_NOT_FOUND), exit code: 2, see "
                          "https://example.com/x?q=1 after 1500 ms via parseConfig")
    assert facts["urls"] == ["https://example.com/x?q=1"]
    assert facts["paths"] == ["/srv/app/main.py", "notes.md"]
    assert facts["errors"] == ["FileNotFoundError", "FS_NOT_FOUND", "exit code: 2"]
    assert facts["identifiers"] == ["parse_config", "parseConfig"]
    assert facts["numbers"] == ["1500"]


_FLAG_CHECKS = {"replacementAdjacentToSummary": "checkpoint_after_summary",
                "replacementContentIsFramedSummary": "checkpoint_is_framed_summary"}


def test_checkpoint_checks_agree_with_every_compaction_vector(shared_dir) -> None:
    """The vectors' bracket flags (`replacementAdjacentToSummary`, `replacementSourcesCanonical`,
    v0 `replacementContentIsFramedSummary`) and the audit's checks say the same of each
    checkpoint (only `compaction-non-adjacent-replacement` breaks one)."""
    import json
    broken = []
    for folder, version in (("conformance", 0), ("conformance-v4", 4)):
        for path in sorted((shared_dir / folder / "compaction").glob("*.json")):
            vector = json.loads(path.read_text())
            brackets = (vector.get("expect") or {}).get("brackets")
            if "events" not in vector or not brackets:
                continue
            report = audit_events(vector["events"], version=version)
            by_start = {a.record.start_seq: {c.name: c for c in a.checks}
                        for a in report.compactions}
            for bracket in brackets:
                checks = by_start[bracket["startSeq"]]
                for flag, name in _FLAG_CHECKS.items():
                    if flag in bracket:
                        assert checks[name].ok is bracket[flag], (path.name, name)
                        if not bracket[flag]:
                            broken.append((path.stem, name))
                if bracket.get("replacementSourcesCanonical") is False:
                    assert not checks["replacement_cites_sources"].ok, path.name
    assert broken == [("compaction-non-adjacent-replacement", "checkpoint_after_summary")]
