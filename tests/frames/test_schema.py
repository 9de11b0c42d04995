"""Every frame keeps its declared schema: same columns, same dtypes, whatever the log.

Invariant: for each frame name, the frame of an empty log, of a v0 fixture without times, and of
full v0 and v4 logs has exactly the columns of `SCHEMAS[name]`, in order, each with its declared
dtype (a categorical keeps its fixed categories as a prefix: unknown values are appended)."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from frame_scripts import empty_session, script, session_of

from workbench.frames.columns import EVENT_TYPE
from workbench.frames.schema import FRAME_NAMES, SCHEMAS, columns_doc, empty_frame
from workbench.session import Session, load


def assert_schema(df: pd.DataFrame, name: str) -> None:
    want = empty_frame(name)
    assert list(df.columns) == list(want.columns)
    for column in want.columns:
        got, declared = df[column].dtype, want[column].dtype
        if isinstance(declared, pd.CategoricalDtype):
            assert isinstance(got, pd.CategoricalDtype), column
            assert list(got.categories[:len(declared.categories)]) == list(declared.categories)
        else:
            assert got == declared, (column, got, declared)


def sessions() -> list:
    return [
        pytest.param(lambda: empty_session(4), id="empty-v4"),
        pytest.param(lambda: empty_session(0), id="empty-v0"),
        pytest.param(lambda: session_of(script(0), implicit=True), id="v0-fixture-no-times"),
        pytest.param(lambda: session_of(script(0)), id="v0"),
        pytest.param(lambda: session_of(script(4)), id="v4"),
    ]


@pytest.mark.parametrize("make", sessions())
@pytest.mark.parametrize("name", FRAME_NAMES)
def test_frame_keeps_declared_schema(make, name: str) -> None:
    session: Session = make()
    df = getattr(session, f"{name}_df")()
    assert_schema(df, name)


@pytest.mark.parametrize("name", FRAME_NAMES)
def test_empty_log_frames_are_empty(name: str) -> None:
    assert len(getattr(empty_session(), f"{name}_df")()) == 0


def test_every_column_is_documented() -> None:
    for name, columns in SCHEMAS.items():
        doc = columns_doc(name)
        assert list(doc["column"]) == [c.name for c in columns]
        assert doc["meaning"].str.len().min() > 0, name
        assert len({c.name for c in columns}) == len(columns), f"duplicate column in {name}"


def test_unknown_frame_name_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown frame 'event'; known: events, surface"):
        columns_doc("event")


def test_fixture_without_times_has_no_times() -> None:
    session = session_of(script(0), implicit=True)
    for name, column in [("events", "time"), ("events", "shadowed_at"), ("turns", "start_time"),
                         ("tool_calls", "call_time"), ("compactions", "start_time"),
                         ("timeline", "time"), ("requests", "settled")]:
        assert getattr(session, f"{name}_df")()[column].isna().all(), (name, column)
    assert session.tool_calls_df()["duration"].isna().all()


def test_unknown_event_types_extend_the_categories() -> None:
    b = script(4)
    b.raw({"type": "plugin:acme/note", "data": {"x": 1}, "ignorable": True})
    df = session_of(b).events_df()
    assert df["type"].iloc[-1] == "plugin:acme/note"
    assert list(df["type"].dtype.categories[:len(EVENT_TYPE.categories)]) == \
        list(EVENT_TYPE.categories)


def test_returned_frames_are_independent_copies() -> None:
    session = session_of(script(4))
    first = session.events_df()
    first["seq"] = 0
    del first["type"]
    again = session.events_df()
    assert list(again["seq"]) == list(range(len(session)))
    assert "type" in again.columns


FIXTURE = (Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-fixtures"
           / "examples--headless-agent--compaction-recovery--session.jsonl")


@pytest.mark.parametrize("name", FRAME_NAMES)
def test_real_v0_fixture_without_times(name: str) -> None:
    """A committed v0 fixture (no seq/time on disk, v0 §1.11): declared schema, no times."""
    if not FIXTURE.is_file():
        pytest.skip(f"{FIXTURE} is absent (../shared not mounted)")
    session = load(FIXTURE)
    assert session.log.implicit_seqs
    df = getattr(session, f"{name}_df")()
    assert_schema(df, name)
    for column in df.columns:
        if isinstance(df[column].dtype, pd.DatetimeTZDtype) and column != "first_time":
            assert df[column].isna().all(), column


def test_int_column_cells_follow_one_rule() -> None:
    """An Int64 column reads ints and finite floats (truncated); a bool, a string, a number past
    int64, Infinity or NaN is NA, whichever lane the values take."""
    from workbench.frames.columns import int64_or_none, int_array
    values = [1, True, "3", 2.7, float("inf"), float("nan"), 2 ** 70, None, -4]
    got = list(int_array(values))
    assert [None if v is pd.NA else int(v) for v in got] == [int64_or_none(v) for v in values]
    assert [None if v is pd.NA else int(v) for v in got] == [1, None, None, 2, None, None, None,
                                                             None, -4]
    assert list(int_array(iter([5, None]))) == [5, pd.NA]
