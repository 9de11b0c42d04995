"""`session.whatif.compact`: a compaction the log does not have, with DSH's legality rules, each
refusal naming its rule; the counterfactual is a clean log that folds and passes the audit.
Skips when ../shared is absent."""
from __future__ import annotations

from pathlib import Path

import pytest

import workbench
from workbench.core.whatif import WhatIfError
from workbench.errors import InvalidArgument, SeqOutOfRange

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"


def _load(name: str) -> workbench.Session:
    path = REAL / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (../shared corpus not available)")
    return workbench.load(path)


@pytest.fixture(scope="module")
def real() -> workbench.Session:
    return _load("dev-long-auto-compaction__session.v4.jsonl")


def _first(real: workbench.Session, kind: str, after: int = 0) -> int:
    return next(e["seq"] for e in real.events if e["type"] == kind and e["seq"] > after)


def test_compact_at_a_pre_step_point(real: workbench.Session) -> None:
    at = _first(real, "step/end", after=60)
    cf = real.whatif.compact(at=at, summary="truncate")
    assert cf.verdict == "clean" and cf.audit.ok and cf.label == "truncate"
    (mine, *_rest) = [r for r in cf.compactions.records if r.start_seq == at + 1]
    assert mine.status == "completed" and mine.trigger.kind == "pressure"
    surface = cf.timeline.surface_at(mine.end_seq)
    assert surface[0] == 7 and surface[1] == mine.replacement_seq   # the system head stays first
    assert len(cf) == len(real) + 4
    # every later real compaction still happens, over the new surface
    assert sum(r.status == "completed" for r in cf.compactions.records) == 4


def test_compact_between_turns_is_a_compact_command(real: workbench.Session) -> None:
    at = _first(real, "turn/end", after=60)
    cf = real.whatif.compact(at=at, summary=lambda messages: f"{len(messages)} messages summarized")
    assert cf.verdict == "clean" and cf.audit.ok
    record = next(r for r in cf.compactions.records if r.start_seq == at + 2)
    assert record.trigger.kind == "manual" and record.owner is None
    assert [cf.events[s]["type"] for s in (at + 1, record.end_seq + 1)] == ["command/run",
                                                                           "command/done"]


def test_compact_refusals_name_the_rule(real: workbench.Session) -> None:
    at = _first(real, "step/end", after=60)
    with pytest.raises(WhatIfError, match="system head"):
        real.whatif.compact(at=at, first=7, last=9, summary="truncate")
    call = next(e for e in real.events if e["type"] == "assistant/message" and 8 < e["seq"] < at
                and any(b.get("type") == "tool-call" for b in e["data"]["message"]["content"]))
    with pytest.raises(WhatIfError, match="tool-call pairing"):
        real.whatif.compact(at=at, first=8, last=call["seq"], summary="truncate")
    with pytest.raises(WhatIfError, match="step open"):
        real.whatif.compact(at=_first(real, "step/start", after=60), summary="truncate")
    with pytest.raises(WhatIfError, match="surface span"):
        real.whatif.compact(at=at, first=8, last=at + 50, summary="truncate")
    killed = _load("dev-killed-mid-compaction__session.v4.jsonl")
    with pytest.raises(WhatIfError, match="compaction lock"):
        killed.whatif.compact(at=len(killed) - 1, summary="truncate")


def test_compact_reads_at_by_the_one_seq_rule(real: workbench.Session) -> None:
    """`at` follows core/seqs.py like every seq argument: negative from the end, a numpy
    integer is a seq, a bool, float or string is refused, and so is a seq outside the log."""
    import numpy as np

    at = _first(real, "step/end", after=60)
    same = real.whatif.compact(at=np.int64(at - len(real)), summary="truncate")
    assert list(same.events) == list(real.whatif.compact(at=at, summary="truncate").events)
    for bad in (True, float(at), str(at)):
        with pytest.raises(InvalidArgument, match="is not an integer"):
            real.whatif.compact(at=bad, summary="truncate")
    with pytest.raises(SeqOutOfRange, match="outside the log"):
        real.whatif.compact(at=len(real), summary="truncate")
    with pytest.raises(InvalidArgument, match="is not an integer"):
        real.whatif.compact(at=at, first=8.0, last=9, summary="truncate")
    for retain in (-1, 1.5, float("nan")):
        with pytest.raises(InvalidArgument, match="retain_tokens"):
            real.whatif.compact(at=at, summary="truncate", retain_tokens=retain)


def test_policy_settings_are_checked(real: workbench.Session) -> None:
    with pytest.raises(WhatIfError, match="unknown policy setting"):
        real.whatif.policy(threshold=0.5)
    with pytest.raises(WhatIfError, match="unknown summarizer"):
        real.whatif.policy(summarizer="gpt")


def test_a_logged_prune_of_a_result_the_counterfactual_hid_is_dropped() -> None:
    real = _load("dev-tool-result-prune-then-compaction__session.v4.jsonl")
    at = max(e["seq"] for e in real.events if e["type"] == "step/end" and 92 < e["seq"] < 128)
    cf = real.whatif.compact(at=at, summary="truncate", retain_tokens=500)
    assert cf.verdict == "clean" and cf.audit.ok
    mine = next(r for r in cf.compactions.records if r.start_seq == at + 1)
    assert 92 in mine.fold_shadowed_seqs
    pruned = [p.record.shadowed_seqs if hasattr(p.record, "shadowed_seqs") else p
              for p in cf.audit.prunes]
    assert len(pruned) == 2 == len(real.audit.prunes) - 1    # 40 and 57 stay pruned, 92 is gone
    assert len(cf) == len(real) + 4 - 2


def test_a_blank_summary_from_a_summarizer_is_a_failed_attempt(real: workbench.Session) -> None:
    """DSH fails a summarization without text (v4 §5.6, corpus dev-summary-errors): a blank
    summarizer result is a failed attempt logged as DSH logs it, never a completed compaction."""
    for blank in ("", " \n\t"):
        cf = real.whatif.policy(summarizer=lambda messages, b=blank: b, threshold_ratio=0.75,
                                headroom_tokens=1024, retain_tokens=2500)
        records = cf.compactions.records
        assert records and {r.status for r in records} == {"failed"}
        assert cf.verdict == "clean" and cf.audit.ok
        ends = [e["data"] for e in cf.events if e["type"] == "compaction/end"]
        assert {d.get("error") for d in ends} == {"summarization produced no text summary content"}
        assert not any(e["type"] == "compaction/summary" for e in cf.events)
        at = _first(real, "step/end", after=60)
        one = real.whatif.compact(at=at, summary=lambda messages, b=blank: b)
        (mine,) = [r for r in one.compactions.records if r.start_seq == at + 1]
        assert mine.status == "failed" and one.verdict == "clean"


@pytest.mark.parametrize("text", ["", "   ", 5, {"a": 1}, None])
def test_a_summary_text_given_directly_must_be_text(real: workbench.Session, text) -> None:
    cid = real.compactions_df()["compaction_id"].iloc[0]
    rule = "blank summary" if isinstance(text, str) else "must be a str"
    with pytest.raises(WhatIfError, match=rule):
        real.whatif.replace_summary(cid, text)
    with pytest.raises(WhatIfError, match=rule):
        real.whatif.compact(at=_first(real, "step/end", after=60), summary=text)
