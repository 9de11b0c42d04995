"""The inspector's per-part token table prices a request by the one rule the frames use: for
every model request of every corpus log (v0, v3, v4, fixtures) and of the sample logs, its DSH
total equals `requests_df`'s ``estimated_prompt_tokens`` (envelope by `Meter.count_envelope`,
with DSH's +4 system and tools overheads, plus the surface), and its system + tools rows equal
``envelope_tokens``."""
from __future__ import annotations

from pathlib import Path

from tour_script import tour_script

import workbench
from workbench.core.requests import rebuild_request
from workbench.views.data import view_data
from workbench.views.inspector import request_totals

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"


def _logs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.name.endswith((".jsonl", ".jsonl.zstd")))


def _disagreements(path: Path) -> tuple[int, list[str]]:
    session = workbench.load(path)
    requests = session.requests_df()
    requests = requests[requests["estimated_prompt_tokens"].notna()]
    if requests.empty:
        return 0, []
    data = view_data(session)
    wrong = []
    for row in requests.itertuples():
        request = rebuild_request(session.events, data.timeline, data.attempts[int(row.seq)],
                                  version=session.version, session_id=session.session_id)
        parts = dict(request_totals(request, ("dsh",), version=session.version))
        envelope = sum(parts[p]["dsh"] for p in ("system", "tools") if p in parts)
        if (parts["total"]["dsh"], envelope) != (row.estimated_prompt_tokens,
                                                  row.envelope_tokens):
            wrong.append(f"{path.name} v{session.version} seq {row.seq}: inspector "
                         f"{parts['total']['dsh']} (envelope {envelope}), requests_df "
                         f"{row.estimated_prompt_tokens} (envelope {row.envelope_tokens})")
    return len(requests), wrong


def test_sample_logs_inspector_totals_are_the_frames_estimates(tmp_path):
    built = [tour_script(v, context_window=20000).write(
        tmp_path / ("session.v4.jsonl" if v == 4 else "session.jsonl")) for v in (0, 4)]
    checked, wrong = 0, []
    for path in [*built, *_logs(SAMPLES)]:
        n, bad = _disagreements(path)
        checked, wrong = checked + n, wrong + bad
    assert checked > 0 and wrong == []


def test_corpus_inspector_totals_are_the_frames_estimates(shared_dir):
    checked, versions, wrong = 0, set(), []
    for path in _logs(shared_dir / "corpus"):
        n, bad = _disagreements(path)
        checked, wrong = checked + n, wrong + bad
        if n:
            versions.add(workbench.load(path).version)
    assert {0, 3, 4} <= versions and checked > 100
    assert wrong == []
