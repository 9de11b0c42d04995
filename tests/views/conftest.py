"""Sample sessions for the view tests, written by the log builder and loaded like a user would."""
from __future__ import annotations

from pathlib import Path

import pytest
from tour_script import TOOLS, tour_script

from workbench.build import LogBuilder

PAYLOADS = ("<script>window.__pwned = 1</script>",
            '<img src=x onerror="window.__pwned = 2">',
            '<a href="javascript:window.__pwned = 3">click me</a>')


def sample_script(version: int = 4, *, user_text: str = "Upgrade dependencies") -> LogBuilder:
    """Seqs (v4): 2 system, 3 user, 6 assistant (2 calls), 8/10 results, 17-18 prune of 8,
    19-23 compaction (checkpoint 22 replaces 3..13), 28-32 nested compaction (31 replaces
    22..26), 34-36 failed, 37-43 manual (41), 44 interrupted start, 46 end-seed."""
    return tour_script(version, user_text=user_text, context_window=20000)


def load_session(path: Path):
    import workbench
    return workbench.load(path)


def _bracket_rows(fig) -> dict[int, list[tuple]]:
    """Each attempt's drawn points in a bracket chart, by its row (customdata[0]):
    (seq, stop, y label, trace index); gaps between attempts' segments are skipped."""
    rows: dict[int, list[tuple]] = {}
    for index, trace in enumerate(fig.data):
        for x, y, custom in zip(trace.x, trace.y, trace.customdata):
            if custom is None:
                assert x is None and y is None
                continue
            rows.setdefault(custom[0], []).append((x, custom[1], y, index))
    return rows


@pytest.fixture
def bracket_rows():
    """`_bracket_rows`: an attempt's points in a bracket chart, by row."""
    return _bracket_rows


@pytest.fixture
def payloads() -> tuple[str, ...]:
    return PAYLOADS


@pytest.fixture
def load():
    return load_session


@pytest.fixture
def session(tmp_path: Path):
    path = tmp_path / "session.v4.jsonl"
    sample_script().write(path)
    return load_session(path)


@pytest.fixture
def payload_session(tmp_path: Path):
    path = tmp_path / "payload.v4.jsonl"
    b = LogBuilder(version=4, session_id="<b>session</b>")
    with b.turn():
        with b.step():
            b.system(PAYLOADS[0])
            b.user(" ".join(PAYLOADS))
            b.request_header(tools=TOOLS)
            call = b.assistant(PAYLOADS[1], tool_calls=[("read", {"path": PAYLOADS[2]})])
            b.tool_result(call.call_ids[0], text=" ".join(reversed(PAYLOADS)))
    b.write(path)
    return load_session(path)
