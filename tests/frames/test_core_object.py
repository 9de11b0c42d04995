"""Frames are functions of the core analysed log (`workbench.core.analysis.AnalysedLog`):
`Session` adds a frame cache, nothing else a builder reads."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.analysis import AnalysedLog

SAMPLES = sorted((Path(__file__).resolve().parents[2] / "sample_logs").glob("*.jsonl*"))


@pytest.mark.parametrize("path", SAMPLES[:3], ids=[p.name for p in SAMPLES[:3]])
def test_frames_are_functions_of_the_analysed_log(path: Path) -> None:
    """Every single-session frame builder takes the core object itself (no session needed)
    and gives the session's frame."""
    import workbench
    from workbench.frames.calls import requests_frame, tool_calls_frame
    from workbench.frames.compactions import compactions_frame, prunes_frame
    from workbench.frames.events import events_frame
    from workbench.frames.surface import replacements_frame, shadow_frame, surface_frame
    from workbench.frames.timeline import timeline_frame
    from workbench.frames.turns import turns_frame
    session, analysed = workbench.load(path), AnalysedLog.load(path)
    mid = len(session) // 2
    pairs = [(session.events_df(), events_frame(analysed)),
             (session.surface_df(mid), surface_frame(analysed, mid)),
             (session.replacements_df(), replacements_frame(analysed)),
             (session.shadow_df(), shadow_frame(analysed)),
             (session.compactions_df(), compactions_frame(analysed)),
             (session.prunes_df(), prunes_frame(analysed)),
             (session.tool_calls_df(), tool_calls_frame(analysed)),
             (session.requests_df(), requests_frame(analysed)),
             (session.turns_df(), turns_frame(analysed)),
             (session.timeline_df(), timeline_frame(analysed))]
    for of_session, of_core in pairs:
        assert of_session.equals(of_core) and list(of_session.dtypes) == list(of_core.dtypes)
