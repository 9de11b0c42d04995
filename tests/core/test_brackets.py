"""Compaction building blocks: bracket records and statuses, triggers, the v0 invariant's exact
messages, entry state and lock, tool pairing, range selection and the tool-result pruner
(v0/v4 spec §5)."""
from __future__ import annotations

import pytest
from compaction_script import Script

from workbench.core.compaction.brackets import (
    compactions,
    frame_summary,
    framed_summary_tokens,
)
from workbench.core.compaction.entry import inspect_compaction_entry_state
from workbench.core.compaction.invariant import check_compaction_invariant
from workbench.core.compaction.pairing import (
    ToolPairing,
    ToolPairingError,
    cut_balanced,
)
from workbench.core.compaction.pruner import (
    PRUNE_MARKER,
    PruneConfig,
    PruneConfigError,
    measure_content,
    prune_content,
    resolve_config,
)
from workbench.core.compaction.selection import select_compactable_range
from workbench.core.compaction.shapes import bracket_json, error_kind

# -- records and statuses --------------------------------------------------------------------------


def _two_turns(version: int = 4) -> Script:
    s = Script(version)
    s.turn_start()
    s.step_start()
    if version >= 4:
        s.system("You are a test agent.")
    s.user("Make the parser accept trailing commas in src/parser.py " * 8)
    s.assistant("Looking at the parser. " * 10)
    s.step_end()
    s.turn_end()
    s.turn_start()
    s.user("Also report line numbers for SyntaxError at /srv/app/main.py " * 8)
    return s


def test_completed_bracket_record_has_every_seq_and_price() -> None:
    s = _two_turns()
    seqs = s.compact(3, 8, "## Primary Request\n- trailing commas")
    (record,) = compactions(s.events, version=4).records
    assert (record.start_seq, record.summary_seq, record.replacement_seq, record.end_seq) == (
        seqs["start"], seqs["summary"], seqs["replacement"], seqs["end"])
    assert record.status == "completed"
    assert record.trigger.kind == "pressure" and record.trigger.turn == 2
    assert record.fold_shadowed_seqs == (3, 4, 8) == record.logged_shadowed_seqs
    assert record.fold_tokens == record.logged_shadowed_tokens == sum(s.price(x) for x in (3, 4, 8))
    assert record.duration_ms == 30
    assert record.provider == "mock" and record.model == "summary-model"


@pytest.mark.parametrize("case, expected", [
    ("failed", "failed"), ("open", "interrupted"), ("open-then-seed", "stale"),
], ids=["end-with-error", "no-end", "no-end-then-end-seed"])
def test_status(case: str, expected: str) -> None:
    s = _two_turns()
    s.compact(3, 8, "x", error="summary unavailable" if case == "failed" else None,
              summarize=case != "failed", close=case == "failed")
    if case == "open-then-seed":
        s.turn_end("interrupted")
        s.end_seed()
    (record,) = compactions(s.events, version=4).records
    assert record.status == expected
    assert (record.end_seed_seq is not None) == (expected == "stale")


def test_overflow_and_manual_triggers() -> None:
    s = _two_turns()
    s.step_start()
    s.compact(3, 4, "x")                       # inside an open step: overflow recovery
    s.step_end()
    s.turn_end()
    run = s.add("command/run", {"commandId": "cmd-7", "name": "compact", "args": ""})
    s.compact(s.surface()[1], s.surface()[-1], "y", cid="cmp-2", command="cmd-7")
    overflow, manual = compactions(s.events, version=4).records
    assert overflow.trigger.kind == "overflow"
    assert (manual.trigger.kind, manual.trigger.command_seq, manual.trigger.command,
            manual.owner) == ("manual", run, "/compact", None)


def test_checkpoint_of_another_id_is_not_attached() -> None:
    s = _two_turns(version=0)
    seqs = s.compact(2, 3, "x", cid="real")
    s.events[seqs["replacement"]]["data"]["source"]["compactionId"] = "other"
    (record,) = compactions(s.events, version=0).records
    assert record.replacement_seq is None and record.status == "completed"
    assert "replacementRange" not in bracket_json(record, version=0)


def test_framed_summary_costs_98_plus_the_summary_blocks() -> None:
    summary = [{"type": "text", "text": "x" * 53}]
    assert framed_summary_tokens(summary, version=0) == 98 + 14 + 4
    assert frame_summary(summary)[1] == summary[0]
    assert frame_summary(summary)[0]["text"].endswith("\n\n<compacted-summary>")
    assert len(frame_summary(summary)[0]["text"]) == 321


@pytest.mark.parametrize("text, kind", [
    ("summary is not smaller than the shadowed content (237 estimated framed tokens >= 23)",
     "summary-not-smaller"),
    ("compaction: session surface changed during summarization", "surface-changed"),
    ("compaction: the selected span changed during summarization", "surface-changed"),
    ("summarization produced no text summary content", "empty-summary"),
    ("This operation was aborted", "cancelled"),
    ("summary unavailable", "other"),
], ids=["not-smaller", "surface", "span", "empty", "aborted", "other"])
def test_error_kind(text: str, kind: str) -> None:
    assert error_kind(text) == kind


# -- v0 invariant --------------------------------------------------------------------------------


def _v0() -> Script:
    s = Script(version=0)
    s.turn_start()
    s.step_start()
    s.user("hello " * 40)
    s.assistant("reply " * 40)
    s.step_end()
    return s


def _nested(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.add("compaction/start", {"compactionId": "b", "turn": 1})


def _end_without_summary(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.add("compaction/end", {"compactionId": "a", "turn": 1})


def _wrong_summary_id(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.add("compaction/summary", {"compactionId": "b", "summary": [], "shadowedRange":
                                 {"start": 2, "end": 2}, "shadowedSeqs": [2],
                                 "shadowedTokenCount": 1})


def _turn_crosses(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.turn_end()


def _empty_id(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "", "turn": 1})


def _range_mismatch(s: Script) -> None:
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.add("compaction/summary", {"compactionId": "a", "summary": [], "shadowedRange":
                                 {"start": 2, "end": 4}, "shadowedSeqs": [2],
                                 "shadowedTokenCount": 1})


@pytest.mark.parametrize("build, message", [
    (_nested, "compaction/start while turn 1 is still compacting"),
    (_end_without_summary, "successful compaction/end requires one compaction/summary"),
    (_wrong_summary_id, "compaction/summary id b does not match compaction/start id a"),
    (_turn_crosses, "turn/end cannot cross an open compaction for turn 1"),
    (_empty_id, "compaction/start compactionId must be a non-empty string"),
    (_range_mismatch, "compaction/summary shadowedRange must match the first and last "
                      "shadowedSeqs"),
], ids=["nested", "end-without-summary", "summary-id", "turn-crosses", "empty-id",
        "range-mismatch"])
def test_v0_invariant_messages(build, message: str) -> None:
    s = _v0()
    build(s)
    failure = check_compaction_invariant(s.events)
    assert failure is not None and failure.message == message
    assert failure.seq == len(s.events) - 1


def test_v0_invariant_lets_repair_cross_a_stale_orphan() -> None:
    s = _v0()
    s.add("compaction/start", {"compactionId": "a", "turn": 1})
    s.turn_end("interrupted")
    s.end_seed()
    s.turn_start()
    assert check_compaction_invariant(s.events) is None


# -- entry state ---------------------------------------------------------------------------------


def test_entry_state_lock_and_stale_start() -> None:
    s = _v0()
    start = s.add("compaction/start", {"compactionId": "a", "turn": 1})
    live = inspect_compaction_entry_state(s.events)
    assert (live.open_turn, live.unmatched_start_seq, live.lock_active) == (1, start, True)
    s.turn_end("interrupted")
    seed = s.end_seed()
    stale = inspect_compaction_entry_state(s.events)
    assert (stale.open_turn, stale.unmatched_start_seq, stale.latest_end_seed_seq,
            stale.lock_active) == (None, start, seed, False)
    assert stale.as_json(version=4)["unmatchedCompactionStart"] == start
    assert stale.as_json(version=0)["unmatchedCompactionStartSeq"] == start


# -- tool pairing and selection ------------------------------------------------------------------


def _tools() -> Script:
    s = Script()
    s.turn_start()
    s.step_start()
    s.system("sys")
    s.user("u" * 40)
    s.assistant("calling", calls=("c1", "c2"))
    s.tool_result("c1", "one " * 20)
    s.tool_result("c2", "two " * 20)
    s.assistant("done " * 10)
    return s


def test_cut_balance_counts_open_calls() -> None:
    s = _tools()
    nodes = s.surface()
    assert cut_balanced(nodes, s.events) == (True, True, True, False, False, True, True)
    pairing = ToolPairing.of(nodes, s.events)
    assert pairing.balanced_before(nodes[-1]) and not pairing.balanced_after(nodes[2])
    with pytest.raises(ToolPairingError) as info:
        pairing.balanced_before(999)
    assert info.value.message == "tool-pairing balance: surface seq 999 not found"


def test_orphan_result_is_a_corrupt_surface() -> None:
    s = _tools()
    nodes = s.surface()
    with pytest.raises(ToolPairingError) as info:
        cut_balanced((nodes[0], nodes[4]), s.events)
    assert info.value.message == (f"tool-pairing balance: tool/result at surface seq {nodes[4]} "
                                  "has no matching tool-call (corrupt surface)")


@pytest.mark.parametrize("retain, expected", [(0, (1, 5)), (20, (1, 5)), (10_000, None)],
                         ids=["retain-0", "retain-small", "retain-all"])
def test_selection_skips_the_system_head_and_unbalanced_cuts(retain, expected) -> None:
    s = _tools()
    nodes = s.surface()
    prices = [s.price(n) for n in nodes]
    found = select_compactable_range(nodes, prices, s.events, version=4, retain_tokens=retain)
    want = None if expected is None else (nodes[expected[0]], nodes[expected[1] - 1])
    assert (None if found is None else (found.start, found.end)) == want


def test_selection_without_system_head_starts_at_node_0() -> None:
    s = _v0()
    nodes = s.surface()
    found = select_compactable_range(nodes, [s.price(n) for n in nodes], s.events, version=0,
                                     retain_tokens=0)
    assert (found.start, found.end) == (nodes[0], nodes[0])


# -- pruner --------------------------------------------------------------------------------------


@pytest.mark.parametrize("config, message", [
    ({"bogus": 1}, 'ToolResultPruneConfig: unknown key "bogus" (allowed: thresholdChars, '
                   'headChars, tailChars)'),
    ({"thresholdChars": 0}, "ToolResultPruneConfig: thresholdChars (0) must be a positive "
                            "integer"),
    ({"headChars": 1.5}, "ToolResultPruneConfig: headChars (1.5) must be a non-negative integer"),
    ({"tailChars": True}, "ToolResultPruneConfig: tailChars (true) must be a non-negative "
                          "integer"),
    ({"thresholdChars": 100, "headChars": 40, "tailChars": 40},
     "ToolResultPruneConfig: headChars + marker + tailChars (119) must be at most "
     "thresholdChars (100)"),
], ids=["unknown-key", "zero-threshold", "fractional-head", "boolean-tail", "too-large"])
def test_resolve_config_messages(config, message: str) -> None:
    with pytest.raises(PruneConfigError) as info:
        resolve_config(config)
    assert str(info.value) == message


def test_resolve_config_defaults_and_null() -> None:
    assert resolve_config({"headChars": None}) == PruneConfig(8192, 4096, 1024)
    assert resolve_config({"thresholdChars": 6000.0}).threshold_chars == 6000


def test_prune_counts_code_points_not_utf16_units() -> None:
    config = resolve_config({"thresholdChars": 50, "headChars": 5, "tailChars": 5})
    text = "😀" * 30 + "x" * 30          # 60 code points, 90 UTF-16 units
    pruned = prune_content([{"type": "text", "text": text}], config)
    assert pruned == [{"type": "text", "text": "😀" * 5 + PRUNE_MARKER + "x" * 5}]
    assert measure_content(pruned) == 5 + 39 + 5
    assert prune_content([{"type": "text", "text": "😀" * 50}], config) is None
