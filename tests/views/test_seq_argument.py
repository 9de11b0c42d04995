"""One rule for a seq argument (`workbench.core.seqs`): 0..LAST or negative from the end (-1 =
the last event), an integer only; the CLI's ``--at``, the widget's `goto` / ``step=`` and the
library's `Session.surface_df` / `Session.price` / `Inspector.save_request` read it alike, and
refuse alike (`SeqOutOfRange` outside the log, `InvalidArgument` for what is no integer)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import workbench
from workbench.build import LogBuilder
from workbench.cli.common import resolve_at
from workbench.core.seqs import resolve_seq, seq_index
from workbench.errors import InvalidArgument, SeqOutOfRange, WorkbenchError
from workbench.views import Workbench

NOT_SEQS = (True, False, 2.5, 1.0, "3", None, [1], np.float64(2.0))


def test_the_rule_is_a_python_index_and_integers_only():
    seqs = list(range(5))
    for value in range(-8, 9):
        inside = -5 <= value < 5
        assert seq_index(value, 4) == resolve_at(value, 4) == (seqs[value] if inside else None)
        if inside:
            assert resolve_seq(value, 4) == resolve_seq(np.int64(value), 4) == seqs[value]
        else:
            with pytest.raises(SeqOutOfRange, match=r"outside the log \(seqs 0\.\.4, or -1\.\.-5"):
                resolve_seq(value, 4)
    for value in NOT_SEQS:
        with pytest.raises(InvalidArgument, match="not an integer"):
            resolve_seq(value, 4)
    for value in (0, -1):
        with pytest.raises(SeqOutOfRange, match="the log is empty"):
            resolve_seq(value, -1)


@pytest.fixture(scope="module")
def crash_session():
    return workbench.load(Path(__file__).resolve().parents[2] / "sample_logs"
                          / "crash-then-resume__session.v4.jsonl")


def test_session_methods_read_a_seq_by_the_rule(crash_session):
    s = crash_session
    last = len(s) - 1
    final = s.surface_df()["seq"].tolist()
    assert final and s.surface_df(-1)["seq"].tolist() == s.surface_df(last)["seq"].tolist() == final
    assert s.surface_df(-len(s))["seq"].tolist() == s.surface_df(0)["seq"].tolist()
    assert s.surface_df(-2)["seq"].tolist() == s.surface_df(last - 1)["seq"].tolist()
    assert s.price(-1) == s.price(last)
    for method in (s.surface_df, s.price):
        for value in (len(s), 10**6, -(len(s) + 1)):
            with pytest.raises(SeqOutOfRange, match=f"seqs 0..{last}"):
                method(value)
        for value in NOT_SEQS[:-3]:
            with pytest.raises(InvalidArgument):
                method(value)


def test_widget_cli_and_library_agree_on_every_seq(crash_session):
    s = crash_session
    last = len(s) - 1
    wb = Workbench(s, meters="dsh", step=-1)
    assert wb.state.step == last
    for value in (*range(-len(s) - 2, -len(s) + 3), *range(-3, 3), *range(last - 2, last + 3)):
        expected = resolve_at(value, last)
        if expected is None:
            with pytest.raises(SeqOutOfRange):
                wb.goto(value)
            with pytest.raises(SeqOutOfRange):
                s.surface_df(value)
        else:
            assert wb.goto(value) == expected == resolve_seq(value, last)
    assert wb.goto("7") == 7 and wb.goto(np.int64(-1)) == last
    for bad in (*NOT_SEQS[:3], "x", "compaction:²", "request:²", "compaction:", "request:x",
                "turn:3"):
        with pytest.raises(InvalidArgument):
            wb.goto(bad)
    with pytest.raises(InvalidArgument):
        wb.inspector.save_request("/tmp/never-written.json", True)
    with pytest.raises(SeqOutOfRange):
        wb.inspector.save_request("/tmp/never-written.json", len(s))
    wb.close()


def test_an_empty_log_has_one_empty_step(tmp_path):
    s = workbench.load(LogBuilder(version=4, session_id="s").write(tmp_path / "session.v4.jsonl"))
    assert len(s) == 0
    wb = Workbench(s, meters="dsh", step=-1)
    assert wb.goto(-1) == wb.goto(0) == 0 == wb.state.step
    with pytest.raises(SeqOutOfRange, match="the log is empty"):
        wb.goto(1)
    assert len(s.surface_df()) == 0
    with pytest.raises(WorkbenchError, match="the log is empty"):
        s.surface_df(-1)
    wb.close()


def test_goto_request_reads_its_seq_by_the_rule(crash_session):
    """``"request:SEQ"``: SEQ is a seq like any other (negative from the end, refused outside)."""
    s = crash_session
    wb = Workbench(s, meters="dsh", step=0)
    requests = wb.data.navigator.requests
    last = len(s) - 1
    for value in (-len(s), -3, -1, 0, int(requests[0]), last):
        seq = resolve_seq(value, last)
        after = [int(r) for r in requests if r >= seq]
        if after:
            assert wb.goto(f"request:{value}") == after[0]
        else:
            with pytest.raises(InvalidArgument, match=f"no model request at or after seq {seq}"):
                wb.goto(f"request:{value}")
    for value in (len(s), 999999, -len(s) - 1):
        with pytest.raises(SeqOutOfRange, match="outside the log"):
            wb.goto(f"request:{value}")
    wb.close()


@pytest.mark.parametrize("call", [
    lambda s: Workbench("a/path"), lambda s: Workbench(3), lambda s: workbench.show(3),
    lambda s: Workbench(s, settings=3), lambda s: Workbench(s, meters=""),
    lambda s: Workbench(s, meters=None), lambda s: Workbench(s, meters="dsh").set_meters(None),
    lambda s: Workbench(s, meters="dsh").set_meters(""),
    lambda s: Workbench(s, meters="dsh").set_meters(3),
    lambda s: workbench.compare(s, "x"), lambda s: workbench.compare(None, s),
], ids=["wb-path", "wb-int", "show-int", "settings", "meters-empty", "meters-none",
        "set-none", "set-empty", "set-int", "compare-str", "compare-none"])
def test_widget_entry_points_refuse_wrong_arguments_by_name(crash_session, call):
    with pytest.raises(InvalidArgument) as info:
        call(crash_session)
    assert str(info.value)
