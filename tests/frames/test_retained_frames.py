"""A frame object kept alive after its function returned keeps that function's locals (a
sampling profiler's, as Dask's workers run one, or a traceback's). The package must not bind a
numpy view of a buffer it later resizes (`workbench.core.index_columns` module doc): here a
profile hook keeps every returned frame while each sample log is loaded and framed, and no
session may fail (before the fix every one did, with ``BufferError``)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from workbench.frames.many import session_frames

SAMPLES = sorted(p for p in (Path(__file__).parents[2] / "sample_logs").iterdir()
                 if ".jsonl" in p.name)


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_frames_survive_frames_kept_after_return(path: Path) -> None:
    kept: list = []

    def keep(frame, event, arg) -> None:
        if event == "return":
            kept.append(frame)

    sys.setprofile(keep)
    try:
        result = session_frames(path)
    finally:
        sys.setprofile(None)
    assert kept, "the profile hook saw no returns"
    assert result.summary.get("error") is None, result.summary.get("error")
    assert result.frames
