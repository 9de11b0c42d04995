"""`events_df` and `timeline_df` select what the core computed: every per-event value equals the
core's own answer for that seq (timeline status, shadowing, node price, usage samples)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from frame_scripts import script, session_of

from workbench.build import LogBuilder
from workbench.core.preview import PREVIEW_CHARS
from workbench.core.tokens.counts import LogTokens
from workbench.core.tokens.heuristic import node_price
from workbench.core.tokens.usage import usage_samples, usage_totals


def test_one_row_per_event_in_seq_order(built) -> None:
    b, session = built
    df = session.events_df()
    assert len(df) == len(b.events)
    assert df["seq"].tolist() == list(range(len(b.events)))
    assert df["type"].astype(str).tolist() == [e["type"] for e in b.events]
    assert str(df["time"].dtype) == "datetime64[ms, UTC]"
    epoch_ms = (df["time"] - pd.Timestamp(0, tz="UTC")) // pd.Timedelta(milliseconds=1)
    assert epoch_ms.tolist() == [e["time"] for e in b.events]


def test_surface_columns_equal_the_timeline(built) -> None:
    b, session = built
    df = session.events_df()
    timeline = session.timeline
    for row in df.itertuples():
        status = timeline.status_at_end(row.seq)
        assert row.surface_status == status, row.seq
        assert row.on_surface == (status == "current")
        hidden = timeline.shadowed_by(row.seq)
        assert (None if pd.isna(row.shadowed_by) else row.shadowed_by) == (
            None if hidden is None else hidden.hidden_at)
    final = list(timeline.final_nodes)
    on = df[df["on_surface"]].sort_values("surface_position")
    assert on["seq"].tolist() == final
    assert on["surface_position"].tolist() == list(range(len(final)))


def test_tokens_are_node_prices_of_surface_events(built) -> None:
    b, session = built
    df = session.events_df()
    for row, event in zip(df.itertuples(), b.events, strict=True):
        if pd.isna(row.surface_op):
            assert pd.isna(row.tokens)
        else:
            assert row.tokens == node_price(event, version=b.version)


def test_turn_and_step_are_structural(built) -> None:
    _, session = built
    df = session.events_df()
    starts = df[df["type"] == "turn/start"]
    ends = df[df["type"] == "turn/end"]
    assert starts["turn"].tolist() == [1, 2] and ends["turn"].tolist() == [1, 2]
    between = df[(df["seq"] > ends["seq"].iloc[0]) & (df["seq"] < starts["seq"].iloc[1])]
    assert between["turn"].isna().all()
    step_rows = df[df["type"].isin(["step/start", "step/end"])]
    assert step_rows["step"].notna().all()


def test_source_seqs_and_replace_ranges(built) -> None:
    b, session = built
    df = session.events_df()
    for row, event in zip(df.itertuples(), b.events, strict=True):
        want = event.get("sourceEventSeqs")
        got = row.source_seqs
        assert (None if got is pd.NA or got is None else list(got)) == want
        op = event.get("surfaceOp")
        if isinstance(op, dict):
            start = op.get("startSeq", op.get("start"))
            assert (row.surface_op, row.replace_start) == ("replace", start)


def test_previews_are_short_single_lines(built) -> None:
    _, session = built
    previews = session.events_df()["preview"].dropna()
    assert len(previews) > 0
    assert previews.str.len().max() <= PREVIEW_CHARS
    assert not previews.str.contains("\n").any()
    first_user = session.events_df().query("type == 'user/message'")["preview"].iloc[0]
    assert first_user == "Upgrade dependencies <b>now</b>"  # text, not HTML: views escape it


def test_timeline_tokens_equal_the_core_meter(built) -> None:
    """Invariant: the surface total after every seq equals the core meter's positional fold."""
    b, session = built
    df = session.timeline_df()
    want = LogTokens(b.events, version=b.version, progress=False).surface_totals("dsh")
    assert df["surface_tokens_dsh"].tolist() == [int(x) for x in want]
    sizes = [len(session.timeline.surface_at(s)) for s in range(len(b.events))]
    assert df["surface_size"].tolist() == sizes
    generations = [session.timeline.replace_generation_at(s) for s in range(len(b.events))]
    assert df["replace_generation"].tolist() == generations


def test_timeline_usage_sums_to_the_session_totals(built) -> None:
    b, session = built
    df = session.timeline_df()
    totals = usage_totals(usage_samples(b.events, version=b.version))
    counted = df[df["usage_counted"].fillna(False)]
    assert counted["usage_input"].sum() == totals.input_tokens
    assert counted["usage_output"].sum() == totals.output_tokens
    assert counted["usage_total"].sum() == totals.total_tokens
    assert len(counted) == totals.calls


def test_rejected_events_keep_the_fold_going() -> None:
    b = script(4)
    n, t = len(b.events), b.events[-1]["time"]
    b.events.append({"type": "user/message", "seq": n, "time": t,
                     "surfaceOp": {"op": "replace", "startSeq": 3, "endSeq": 4},
                     "sourceEventSeqs": [3, 4],
                     "data": {"id": "x", "role": "user", "content": [],
                              "source": {"kind": "user"}}})
    b.events.append({"type": "user/message", "seq": n + 1, "time": t, "surfaceOp": "append",
                     "data": {"id": "y", "role": "user", "source": {"kind": "user"},
                              "content": [{"type": "text", "text": "after"}]}})
    session = session_of(b)
    assert [e.seq for e in session.timeline.errors] == [n]
    df = session.events_df()
    assert df["surface_status"].iloc[-2] == "rejected"
    assert df["surface_status"].iloc[-1] == "current"
    timeline = session.timeline_df()
    assert timeline["surface_change"].iloc[-2] == "rejected"
    sizes = timeline["surface_size"]
    assert sizes.iloc[-2] == sizes.iloc[-3] and sizes.iloc[-1] == sizes.iloc[-2] + 1


def test_shadowed_at_is_the_time_of_the_replacement(built) -> None:
    _, session = built
    df = session.events_df()
    hidden = df[df["shadowed_by"].notna()]
    assert len(hidden) > 0
    times = df.set_index("seq")["time"]
    assert (hidden["shadowed_at"].to_numpy() ==
            times.loc[hidden["shadowed_by"].astype("int64")].to_numpy()).all()
    assert np.array_equal(hidden["surface_status"].astype(str).unique(), ["shadowed"])


@pytest.mark.parametrize("name", ["multi-day__session.v4.jsonl.zstd", "seed-story__session.jsonl",
                                  "crash-mid-compaction__session.v4.jsonl"])
def test_the_pass_riding_on_the_load_is_the_pass_over_the_events(name: str) -> None:
    """`workbench.load` scans and folds while the loader parses; a `Session` of a log loaded
    without it makes the same pass afterwards. Both give the same scan and timeline."""
    import workbench
    from workbench.core.load import load_log
    from workbench.session import Session
    path = Path(__file__).resolve().parents[2] / "sample_logs" / name
    riding, after = workbench.load(path), Session(load_log(path))
    feeding = riding.analysis._feeding     # the pass that rode on the load, before it is read
    assert feeding is not None and feeding.started and feeding.count == len(riding)
    a, b = riding.index, after.index
    for column in ("type_codes", "price", "surface_op", "source_offsets", "source_values",
                   "source_present", "role_codes"):
        assert getattr(a, column).tolist() == getattr(b, column).tolist(), column
    assert a.time.values.tolist() == b.time.values.tolist()
    assert a.turn.values.tolist() == b.turn.values.tolist()
    assert list(a.preview) == list(b.preview) and list(a.tools.rows()) == list(b.tools.rows())
    assert [riding.timeline.surface_at(s) for s in range(len(riding))] == \
        [after.timeline.surface_at(s) for s in range(len(after))]
    assert riding.timeline.errors == after.timeline.errors


def test_hostile_numbers_become_missing_values() -> None:
    b = script(4)
    n = len(b.events)
    b.events.append({"type": "turn/start", "seq": n, "time": 10**30, "data": {"turn": 2**70}})
    b.events.append({"type": "todo/write", "seq": n + 1, "time": "noon", "data": {"todos": []}})
    df = session_of(b).events_df()
    assert df["time"].iloc[-2:].isna().all()
    assert df["turn"].iloc[-2:].isna().all()


class LazyEvents(list):
    """A list posing as a lazily parsed store (`lazy`, `type_of`), counting payload reads."""

    lazy = True

    def __init__(self, events) -> None:
        super().__init__(events)
        self.reads = 0

    def type_of(self, index: int) -> str:
        return list.__getitem__(self, index)["type"]

    def __getitem__(self, index):
        self.reads += 1
        return list.__getitem__(self, index)


def test_frames_of_a_lazy_store_equal_the_in_memory_ones(built) -> None:
    """Passes that read only some payloads of a lazy store give the same frames."""
    b, session = built
    lazy_log = session_of(b).log
    lazy_log.events = LazyEvents(b.events)
    from workbench.session import Session
    lazy = Session(lazy_log)
    for name in ("events", "timeline", "requests", "turns", "tool_calls", "compactions"):
        pd.testing.assert_frame_equal(getattr(lazy, f"{name}_df")(),
                                      getattr(session, f"{name}_df")(), obj=name)
    reads = lazy_log.events.reads
    lazy.usage  # already computed: no more reads
    assert lazy_log.events.reads == reads


def test_lone_surrogates_in_log_text_survive_every_frame() -> None:
    """JSON may hold a lone surrogate (io keeps it, JS semantics); Arrow strings cannot: frames
    show U+FFFD instead of failing."""
    b = LogBuilder(version=4, session_id="sur\ud800rogate")
    with b.turn():
        with b.step():
            b.user("bad \ud83d text")
            a = b.assistant("calling", tool_calls=[("read\udc00", {"p": "\ud800"})])
            b.tool_call(a.call_ids[0])
            b.tool_result(a.call_ids[0], text="out \udfff")
    session = session_of(b)
    for name, df in session.frames().items():
        assert df is not None, name
    preview = session.events_df().query("type == 'user/message'")["preview"].iloc[0]
    assert preview == "bad \ufffd text"
    assert session.tool_calls_df()["name"].iloc[0] == "read\ufffd"
