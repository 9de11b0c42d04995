"""Compaction quality on the real v4 corpus: numbers that agree with the log. The ledger's dsh
hidden tokens are the logged `shadowedTokenCount`, the summary call's usage is the logged one,
the estimated re-sent tokens equal the audit's rebuilt-request cache break, totals are the sums
of their parts; no anchor is a tool-schema word; every kept anchor is in its summary. Skips
when ../shared is absent."""
from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

import workbench
from workbench.core.quality.citation import summary_text
from workbench.frames.quality import LEDGER_SUMMED

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"


def _logs() -> list[Path]:
    return sorted(REAL.glob("*.jsonl*")) if REAL.is_dir() else []


@pytest.fixture(scope="module", params=_logs(), ids=lambda p: p.name.split("__")[0])
def session(request):
    return workbench.load(request.param)


def test_ledger_agrees_with_the_log(session) -> None:
    ledger = session.ledger_df(("dsh", "deepseek"))
    dsh = ledger[ledger["meter"] == "dsh"].set_index("compaction_id")
    audits = {c.record.compaction_id: c for c in session.audit.compactions}
    assert set(dsh.index) == {str(k) for k in audits}
    for cid, audit in audits.items():
        row, record = dsh.loc[cid], audit.record
        if record.status == "completed" and record.replacement_seq is not None:
            assert row["shadowed_tokens"] == record.logged_shadowed_tokens
            assert row["summary_tokens"] == session.price(record.replacement_seq)
        if isinstance(record.usage, dict) and "inputTokens" in record.usage:
            assert row["call_source"] == "logged"
            assert row["call_input_tokens"] == record.usage["inputTokens"]
            assert row["call_output_tokens"] == record.usage["outputTokens"]
        cb = audit.cache_break
        if cb is not None and not cb.envelope_changed and row["resent_source"] == "estimated":
            assert row["resent_tokens"] == cb.tokens_after - cb.prefix_tokens
    assert (ledger["net_tokens"] == ledger["shadowed_tokens"] - ledger["summary_tokens"]
            - ledger["resent_tokens"] - ledger["refetch_tokens"]).all()
    parts = ledger["call_cost"] + ledger["resent_cost"] + ledger["refetch_cost"] - ledger["saving"]
    assert ((ledger["cost"] - parts).abs() < 1e-12).all()
    totals = session.ledger_df(("dsh", "deepseek"), per="session").set_index("meter")
    assert list(totals.index) == ["dsh", "deepseek"]   # one row per meter, with or without rows
    for meter in ("dsh", "deepseek"):
        for name in LEDGER_SUMMED:
            assert math.isclose(totals.loc[meter, name],
                                ledger.loc[ledger["meter"] == meter, name].sum(), abs_tol=1e-12)
    refetch = session.refetch_df()
    for cid, group in refetch.groupby("compaction_id", observed=True):
        assert dsh.loc[cid, "refetch_tokens"] == group["tokens"].sum()
        assert dsh.loc[cid, "refetches"] == len(group)


def test_anchors_are_facts_of_the_log(session) -> None:
    from workbench.core.compaction.anchors import SCHEMA_WORDS, states
    anchors = session.anchors_df()
    assert not set(anchors["text"]) & (SCHEMA_WORDS | session.quality.reader.stop)
    summaries = {str(c.compaction_id): summary_text(r.summary)
                 for c, r in ((c, session.compactions.records[c.index])
                              for c in session.quality.citations)}
    for row in anchors.itertuples():
        bound = row.summary_seq if pd.isna(row.replacement_seq) else row.replacement_seq
        assert row.born_seq <= bound
        assert (row.status == "kept") == states(summaries[row.compaction_id], row.kind,
                                                row.text) or row.status == "invented"
    lifelines = session.lifelines_df()
    assert len(lifelines) == (anchors["status"] != "invented").sum()
