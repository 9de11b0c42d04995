"""Compaction, prune, tool-call, request and turn frames of a known script: statuses, pairing
and counts are what the script logged, and the frames agree with each other."""
from __future__ import annotations

import pandas as pd
import pytest
from frame_scripts import script, session_of

from workbench.build import LogBuilder
from workbench.core.requests import iter_attempts


def test_compaction_statuses_and_triggers(built) -> None:
    _, session = built
    df = session.compactions_df()
    assert df["status"].astype(str).tolist() == [
        "completed", "completed", "failed", "completed", "stale"]
    assert df["trigger"].astype(str).tolist() == [
        "pressure", "pressure", "manual", "manual", "manual"]
    assert df["owner_turn"].tolist()[:2] == [2, 2] and df["owner_turn"].iloc[2:].isna().all()
    assert df["command"].iloc[3] == "/compact"
    assert df["error_kind"].iloc[2] == "summary-not-smaller"
    assert df["end_seq"].isna().tolist() == [False] * 4 + [True]
    assert df["end_seed_seq"].notna().tolist() == [False] * 4 + [True]
    assert df["replacement_landed"].tolist() == [True, True, False, True, False]
    landed = df[df["replacement_landed"]]
    assert (landed["logged_shadowed_tokens"] == landed["shadowed_tokens"]).all()
    assert landed["check_shadowed_tokens_match"].all()
    assert df["check_inside_bracket"].iloc[4] is pd.NA or pd.isna(df["check_inside_bracket"].iloc[4])


def test_audit_columns_follow_the_core_audit(built) -> None:
    _, session = built
    df = session.compactions_df()
    for row, audit in zip(df.itertuples(), session.audit.compactions, strict=True):
        assert row.audit_ok == audit.ok
        failed = [c.name for c in audit.checks if not c.ok]
        assert (row.checks_failed if isinstance(row.checks_failed, str) else "") == \
            ", ".join(dict.fromkeys(failed))
        for check in audit.checks:
            assert getattr(row, f"check_{check.name}") == check.ok or not check.ok


def test_prune_row(built) -> None:
    _, session = built
    df = session.prunes_df()
    assert len(df) == 1
    row = df.iloc[0]
    assert row["replacement_seq"] == row["prune_seq"] + 1
    assert row["chars_after"] < row["chars_before"]
    assert row["logged_shadowed_tokens"] == row["shadowed_tokens"]
    assert row["saved_tokens"] == row["shadowed_tokens"] - row["replacement_tokens"]
    assert bool(row["audit_ok"])


def test_tool_calls_pair_call_and_result(built) -> None:
    _, session = built
    df = session.tool_calls_df()
    assert df["outcome"].astype(str).tolist() == ["ok", "error"]
    assert (df["result_seq"] > df["call_seq"]).all() and (df["call_seq"] > df["assistant_seq"]).all()
    assert df["duration"].notna().all() and (df["duration"] >= pd.Timedelta(0)).all()
    assert df["pruned_seq"].notna().tolist() == [True, False]
    assert df["result_on_surface"].tolist() == [False, False]  # compacted away later
    prunes = session.prunes_df()
    assert df["pruned_seq"].iloc[0] == prunes["replacement_seq"].iloc[0]


def test_interrupted_turn_closers_are_synthetic(version: int) -> None:
    b = LogBuilder(version=version, session_id="crash")
    b.turn_start()
    b.step_start()
    b.user("go")
    a = b.assistant("Calling.", tool_calls=[("read", {"path": "a"}), ("read", {"path": "b"})])
    b.tool_call(a.call_ids[0])
    b.repair()
    df = session_of(b).tool_calls_df()
    assert df["outcome"].astype(str).tolist() == ["interrupted", "interrupted"]
    assert df["synthetic"].tolist() == [True, True]
    assert df["call_seq"].notna().tolist() == [True, False]
    turns = session_of(b).turns_df()
    assert turns["end_reason"].astype(str).tolist() == ["interrupted"]


def test_requests_are_the_core_attempts(built) -> None:
    b, session = built
    df = session.requests_df()
    attempts = sorted(iter_attempts(b.events, version=b.version), key=lambda a: a.seq)
    assert df["seq"].tolist() == [a.seq for a in attempts]
    assert df["finish"].astype(str).tolist() == ["tool-calls", "error", "stop", "stop"]
    failed = df[df["message_seq"].isna()]
    assert failed["failure_code"].tolist() == ["SERVER"]
    assert failed["usage_total"].isna().all()
    assert (df["provider"] == "deepseek-official").all()
    assert df["tools"].tolist() == [1, 1, 1, 1]
    sizes = session.timeline_df()["surface_size"]
    for row in df.itertuples():
        before = row.seq - 1  # v4: the settling event; v0: the first chunk
        assert row.surface_size == sizes.iloc[before]
    assert (df["estimated_prompt_tokens"] == df["envelope_tokens"] + df["surface_tokens"]).all()


def test_turn_counts_agree_with_the_other_frames(built) -> None:
    _, session = built
    turns = session.turns_df().set_index("turn")
    calls = session.tool_calls_df().groupby("turn").size()
    requests = session.requests_df().groupby("turn").size()
    assert turns["end_reason"].astype(str).tolist() == ["completed", "completed"]
    assert turns["tool_calls"].to_dict() == {1: calls.get(1, 0), 2: calls.get(2, 0)}
    assert turns["requests"].to_dict() == {1: requests.get(1, 0), 2: requests.get(2, 0)}
    assert turns["failed_requests"].tolist() == [1, 0]
    assert turns["tool_errors"].tolist() == [1, 0]
    assert turns["compactions"].tolist() == [0, 2]
    timeline = session.timeline_df()
    counted = timeline[timeline["usage_counted"].fillna(False)]
    assert turns["usage_total"].sum() == counted["usage_total"].sum()
    assert turns["prompt_preview"].iloc[0] == "Upgrade dependencies <b>now</b>"
    assert (turns["duration"] >= pd.Timedelta(0)).all()


@pytest.mark.parametrize("implicit", [False, True], ids=["times", "fixture-no-times"])
def test_durations_need_times(implicit: bool) -> None:
    session = session_of(script(0), implicit=implicit)
    assert session.turns_df()["duration"].isna().all() == implicit
    assert session.compactions_df()["duration"].isna().all() == implicit
