"""Surface frames read the core timeline: the surface at every seq, lineage, replacements and
hidden nodes agree with `SurfaceTimeline` and with each other."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from frame_scripts import script, session_of

from workbench.build import LogBuilder
from workbench.errors import MeterError


def test_surface_at_every_seq_is_the_timeline_surface(built) -> None:
    """Invariant: `surface_df(s)` lists `surface_at(s)` in order, its token sum is the timeline
    total at s, and its lineage sizes add up to the nodes appended through s."""
    b, session = built
    totals = session.timeline_df()["surface_tokens_dsh"]
    timeline = session.timeline
    for seq in range(len(b.events)):
        df = session.surface_df(seq)
        assert df["seq"].tolist() == list(timeline.surface_at(seq))
        assert df["position"].tolist() == list(range(len(df)))
        assert df["tokens_dsh"].sum() == totals.iloc[seq]
        assert df["lineage_size"].sum() == len(timeline.appended_through(seq))


def test_surface_default_is_the_end(built) -> None:
    _, session = built
    assert session.surface_df()["seq"].tolist() == list(session.timeline.final_nodes)
    checkpoint = session.surface_df().query("is_replacement")
    assert len(checkpoint) >= 1
    assert (checkpoint["lineage_size"] > 1).any()


def test_surface_with_a_real_tokenizer() -> None:
    session = session_of(script(4))
    try:
        df = session.surface_df(meters="dsh,o200k")
    except MeterError as exc:  # tokenizer files are a package, but may be absent
        pytest.skip(f"o200k tokenizer unavailable: {exc}")
    assert list(df.columns[-2:]) == ["tokens_dsh", "tokens_o200k"]
    assert (df["tokens_o200k"] > 0).all()
    assert df["tokens_o200k"].dtype == "Int64"


def test_unknown_meter_is_refused_by_name() -> None:
    session = session_of(script(4))
    with pytest.raises(MeterError, match="unknown meter 'o300k'"):
        session.timeline_df(meters="dsh,o300k")


def test_replacements_match_the_timeline(built) -> None:
    _, session = built
    df = session.replacements_df()
    reps = session.timeline.replacements
    assert df["seq"].tolist() == [r.seq for r in reps]
    assert [list(x) for x in df["shadowed_seqs"]] == [list(r.shadowed) for r in reps]
    assert df["replace_generation"].tolist() == list(range(1, len(reps) + 1))
    assert (df["saved_tokens"] == df["shadowed_tokens"] - df["replacement_tokens"]).all()
    kinds = df["kind"].astype(str).tolist()
    assert kinds.count("prune") == 1 and kinds.count("compaction") == len(reps) - 1
    for row in df.itertuples():
        before = session.timeline.surface_at(row.seq - 1)
        assert list(before[row.start_position:row.end_position + 1]) == list(row.shadowed_seqs)


def test_shadow_rows_are_the_hidden_nodes_with_their_roots(built) -> None:
    _, session = built
    df = session.shadow_df()
    events = session.events_df()
    assert sorted(df["seq"]) == sorted(events.loc[events["surface_status"] == "shadowed", "seq"])
    final = set(session.timeline.final_nodes)
    for row in df.itertuples():
        assert session.timeline.representative(row.seq) == row.lineage_root
        assert row.lineage_root in final
        assert row.seq in session.timeline.lineage(row.lineage_root) or row.depth >= 1
    nested = df[df["depth"] > 1]
    assert len(nested) > 0  # the nested compaction re-hid an earlier checkpoint's span


def test_shadowed_by_kind_names_the_compaction() -> None:
    session = session_of(script(4))
    df = session.shadow_df()
    compactions = session.compactions_df().set_index("replacement_seq")
    by_compaction = df[df["shadowed_by_kind"] == "compaction"]
    for row in by_compaction.itertuples():
        assert compactions.loc[row.shadowed_by, "compaction_id"] == row.compaction_id
    assert pd.isna(df.loc[df["shadowed_by_kind"] == "prune", "compaction_id"]).all()


def test_deeply_nested_compactions_stay_linear() -> None:
    """Every checkpoint hides the previous one: depth grows by one per compaction, and the
    lineage root of everything is the last checkpoint (computed in O(n), not O(n * depth))."""
    b = LogBuilder(version=4, session_id="nested")
    rounds = 150
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("start")
            b.assistant("ok")
        for k in range(rounds):
            b.compact(summary=f"checkpoint {k}")
            with b.step():
                b.user(f"more {k}")
                b.assistant("ok")
    session = session_of(b)
    df = session.shadow_df().set_index("seq")
    first_user = int(session.events_df().query("type == 'user/message'")["seq"].iloc[0])
    assert df.loc[first_user, "depth"] == rounds
    checkpoints = session.compactions_df()["replacement_seq"].tolist()
    assert set(df["lineage_root"]) == {checkpoints[-1]}
    assert df.loc[checkpoints[0], "depth"] == rounds - 1


CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
REAL_LOGS = [log for folder in sorted(CORPUS.glob("dsh-*")) for log in sorted(folder.glob("*.jsonl*"))[:2]]


@pytest.mark.parametrize("path", REAL_LOGS, ids=[p.name for p in REAL_LOGS])
def test_whole_log_counts_read_only_candidate_nodes_and_equal_every_event_counted(path) -> None:
    """`fill_log_prices` reads the events whose type can derive a message (index price >= 0)
    for every real meter at once: the same per-seq counts as each meter counting every event."""
    import workbench
    from workbench.core.tokens.meters import get_meter
    from workbench.frames.meters import fill_log_prices
    try:
        meters = [get_meter(m, version=4) for m in ("o200k", "deepseek")]
    except MeterError as exc:
        pytest.skip(f"a real tokenizer is unavailable: {exc}")
    session = workbench.load(path)
    fill_log_prices(session.analysis, ("dsh", "o200k", "deepseek"))
    events = list(session.events)
    for meter in meters:
        every = get_meter(meter.name, version=session.version).count_events(events)
        assert session.meter_counts[meter.name].tolist() == every.tolist()
        assert every.any()


def test_a_followed_log_extends_the_real_counts_by_the_appended_events(tmp_path) -> None:
    """Counts made before a followed log grew are extended by reading only the appended
    candidate nodes: the same counts as a fresh count of the whole grown log."""
    import workbench
    from workbench.core.tokens.meters import get_meter
    source = CORPUS / "dsh-real-v4" / "dev-long-auto-compaction__session.v4.jsonl"
    if not source.exists():
        pytest.skip(f"{source} is absent")
    try:
        get_meter("o200k", version=4)
    except MeterError as exc:
        pytest.skip(f"o200k unavailable: {exc}")
    lines = source.read_bytes().splitlines(keepends=True)
    target = tmp_path / source.name
    target.write_bytes(b"".join(lines[: len(lines) // 2]))
    session = workbench.load(target, follow=True)
    first = len(session)
    session.timeline_df(meters=("dsh", "o200k"))
    with target.open("ab") as out:
        out.write(b"".join(lines[len(lines) // 2:]))
    assert session.refresh().added == len(lines) - 1 - first
    fresh = workbench.load(target)
    expected = get_meter("o200k", version=4).count_events(list(fresh.events))
    assert session.meter_counts["o200k"].tolist() == expected.tolist()
    assert session.timeline_df(meters=("dsh", "o200k"))["surface_tokens_o200k"].tolist() \
        == fresh.timeline_df(meters=("dsh", "o200k"))["surface_tokens_o200k"].tolist()
