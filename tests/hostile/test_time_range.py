"""Times a log may hold but a `datetime` (years 1-9999) or pandas (years 1677-2262) cannot: the
report, the widget's panels and its time axis show them as no time, never fail."""
from __future__ import annotations

import pytest
from tour_script import tour_script

import workbench
from workbench.cli.main import main
from workbench.views import Workbench
from workbench.views.payload import utc_moment, utc_text


def test_moments_outside_datetime_are_none():
    assert utc_moment(285_000_000_000_000) is None and utc_moment(-8.64e15) is None
    assert utc_moment(float("nan")) is None and utc_moment(True) is None
    assert utc_moment(253_402_300_799_000).year == 9999
    assert utc_text(0) is None and utc_text(1_764_478_227_165) == "2025-11-30 04:50:27.165 UTC"


@pytest.mark.parametrize("created_at", [285_000_000_000_000, 10_500_000_000_000, -8.6e15])
def test_report_and_widget_read_far_times(tmp_path, created_at):
    log = tour_script(4, session_id="far", created_at=created_at).write(
        tmp_path / "session.v4.jsonl")
    assert main(["report", str(log), "-o", str(tmp_path / "r.html"), "-q"]) in (0, 1)
    wb = Workbench(workbench.load(log))
    wb.goto(-1)
    wb.set_axis("time")
    assert [type(v).__name__ for v in wb.views if getattr(v, "last_error", None) is not None] == []
    wb.close()
