"""Property: wherever a user asks for a compaction in a real log, with whatever span and summary,
the answer is either a refusal naming a DSH rule or a counterfactual the loader reads as clean,
that folds, and whose audit passes (hypothesis over the seqs of a real v4 log)."""
from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import workbench
from workbench.core.whatif import WhatIfError

LOG = (Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"
       / "dev-long-auto-compaction__session.v4.jsonl")
RULES = ("compaction lock", "step open", "system head", "tool-call pairing", "surface span",
         "nothing to compact", "shrink check", "newest tool result")

_real: list[workbench.Session] = []


def _session() -> workbench.Session:
    if not LOG.is_file():
        pytest.skip(f"{LOG} is absent (../shared corpus not available)")
    if not _real:
        _real.append(workbench.load(LOG))
    return _real[0]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(at=st.integers(0, 404), first=st.one_of(st.none(), st.integers(0, 404)),
       width=st.integers(0, 40), summary=st.sampled_from(["truncate", "extractive", "mask"]))
def test_compact_anywhere_is_refused_by_rule_or_clean(at: int, first: int | None, width: int,
                                                      summary: str) -> None:
    real = _session()
    last = None if first is None else min(first + width, 404)
    try:
        cf = real.whatif.compact(at=at, first=first, last=last, summary=summary)
    except WhatIfError as exc:
        assert any(rule in str(exc) for rule in RULES), str(exc)
        return
    assert cf.verdict == "clean", cf.defects[:2]
    report = cf.audit
    assert report.fold_error is None and report.protocol == ()
    assert report.ok
