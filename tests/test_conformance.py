"""Every conformance vector of ../shared/conformance (v0) and ../shared/conformance-v4 (v4).

The same runner as `python tests/conformance.py`; a category without a handler is skipped
visibly, never passed silently."""
from __future__ import annotations

import pytest
from conformance import DEFAULT_DIRS, Case, iter_cases, run_case

_DIRS = [d for d in DEFAULT_DIRS if d.is_dir()]
_CASES = list(iter_cases(_DIRS)) if _DIRS else []


@pytest.mark.skipif(not _DIRS, reason="../shared/conformance* is absent: conformance vectors not run")
@pytest.mark.parametrize("case", _CASES, ids=[c.id for c in _CASES])
def test_vector(case: Case) -> None:
    problems = run_case(case)
    if problems is None:
        pytest.skip(f"no handler for {case.category} vectors yet")
    assert not problems, "\n".join(problems)
