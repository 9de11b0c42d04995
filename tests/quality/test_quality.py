"""Compaction quality on a log whose every anchor, fate and re-fetch is known in advance
(`quality_script`): kept, lost, invented, decayed at level 2, the re-fetch after the first
compaction, the ledger's parts and sums, lifelines, and the frames' schemas on an empty log."""
from __future__ import annotations

import math

import pandas as pd
import pytest
from frame_scripts import empty_session, session_of
from quality_script import quality_script

from workbench.frames.columns import empty
from workbench.frames.quality import LEDGER_SUMMED, SCHEMAS, SessionLedgerColumns


@pytest.fixture(scope="module", params=[4, 0], ids=["v4", "v0"])
def built(request):
    b = quality_script(request.param)
    return b, session_of(b)


def _expected(b) -> list[tuple]:
    user, call1, result1, call2, result2, _ = b.first.shadowed_seqs
    checkpoint, user2, _, _, _ = b.second.shadowed_seqs
    c1, c2 = b.first.compaction_id, b.second.compaction_id
    return [
        (c1, "path", "src/app.py", user, "kept", 1),
        (c1, "path", "setup.cfg", user, "lost", 1),
        (c1, "constraint", "Never edit setup.cfg by hand.", user, "lost", 1),
        (c1, "identifier", "parse_config", result1, "kept", 1),
        (c1, "error", "KeyError", result1, "kept", 1),
        (c1, "command", "pytest -q tests", call2, "kept", 1),
        (c1, "number", "collected 3", result2, "lost", 1),
        (c1, "error", "exit code 1", result2, "lost", 1),
        (c1, "url", "https://docs.example.com/fix", checkpoint, "invented", 1),
        (c1, "identifier", "9f8e7d6c", checkpoint, "invented", 1),
        # the second summary: what the first carried, one level up (decay at level 2) ...
        (c2, "path", "src/app.py", user, "lost", 2),
        (c2, "identifier", "parse_config", result1, "kept", 2),
        (c2, "error", "KeyError", result1, "lost", 2),
        (c2, "command", "pytest -q tests", call2, "lost", 2),
        (c2, "url", "https://docs.example.com/fix", checkpoint, "lost", 2),
        (c2, "identifier", "9f8e7d6c", checkpoint, "lost", 2),
        # ... and its own hidden turn at level 1
        (c2, "path", "README.md", user2, "kept", 1),
    ]


def test_every_anchor_and_fate(built) -> None:
    b, s = built
    df = s.anchors_df()
    got = [tuple(r) for r in df[["compaction_id", "kind", "text", "born_seq", "status",
                                 "level"]].itertuples(index=False)]
    assert got == _expected(b)
    assert set(df["replacement_seq"]) == {b.first.replacement_seq, b.second.replacement_seq}


def test_scores(built) -> None:
    b, s = built
    df = s.citations_df().set_index("compaction_id")
    first = df.loc[b.first.compaction_id]
    # recall by kind: path 1/2, constraint 0, identifier 1, error 1/2, command 1, number 0
    recall = (0.5 + 0 + 1 + 0.5 + 1 + 0) / 6
    precision = 1 - 2 / (4 + 2)
    assert math.isclose(first["recall"], recall)
    assert math.isclose(first["precision"], precision)
    assert math.isclose(first["score"], 2 * recall * precision / (recall + precision))
    assert (first["kept"], first["lost"], first["invented"]) == (4, 4, 2)
    assert first["recall_path"] == 0.5 and pd.isna(first["recall_url"])
    assert first["invented_url"] == 1 and first["invented_identifier"] == 1
    second = df.loc[b.second.compaction_id]
    assert (second["kept"], second["lost"], second["invented"]) == (2, 5, 0)
    assert second["precision"] == 1.0


def test_lifelines(built) -> None:
    b, s = built
    df = s.lifelines_df()
    app = df[df["text"] == "src/app.py"]
    assert list(app["level"]) == [1, 2] and list(app["stated"]) == [True, False]
    assert list(app["compaction_id"]) == [b.first.compaction_id, b.second.compaction_id]
    assert "invented" not in set(df.columns)
    line = s.lifeline("src/app.py")
    assert list(zip(line["level"], line["stated"], line["replacement_seq"])) == [
        (1, True, b.first.replacement_seq), (2, False, b.second.replacement_seq)]
    assert line["born_seq"].iloc[0] == b.first.shadowed_seqs[0]
    cfg = s.lifeline("setup.cfg")
    assert list(cfg["stated"]) == [False] and cfg["kind"].iloc[0] == "path"
    free = s.lifeline("crash in")
    assert list(free["kind"]) == ["text"] and list(free["stated"]) == [False]
    assert s.lifeline("Thanks.").empty          # still on the surface
    assert s.lifeline("no such text anywhere").empty


def test_refetch(built) -> None:
    b, s = built
    df = s.refetch_df()
    _, call1, _, _, _, _ = b.first.shadowed_seqs
    _, _, call3, result3, _ = b.second.shadowed_seqs
    assert [tuple(r) for r in df[["compaction_id", "seq", "text", "tool", "shadowed_seq",
                                  "result_seq"]].itertuples(index=False)] == [
        (b.first.compaction_id, call3, "src/app.py", "read", call1, result3)]
    assert df["tokens"].iloc[0] == s.price(result3)


def test_ledger_parts_and_sums(built) -> None:
    b, s = built
    df = s.ledger_df(("dsh", "o200k"))
    assert list(df["meter"]) == ["dsh", "o200k", "dsh", "o200k"]
    dsh = df[df["meter"] == "dsh"].set_index("compaction_id")
    first, second = dsh.loc[b.first.compaction_id], dsh.loc[b.second.compaction_id]
    assert first["shadowed_tokens"] == b.first.shadowed_token_count
    assert second["shadowed_tokens"] == b.second.shadowed_token_count
    assert first["summary_tokens"] == s.price(b.first.replacement_seq)
    assert first["call_source"] == "logged"
    assert first["call_input_tokens"] == b.first.shadowed_token_count + 200   # builder's usage
    assert first["resent_source"] == "logged" and first["resent_tokens"] == 40 + 7
    assert second["resent_source"] == "estimated"
    assert first["refetches"] == 1
    assert first["refetch_tokens"] == s.refetch_df()["tokens"].sum()
    assert second["refetches"] == 0 and second["refetch_tokens"] == 0
    assert (df["net_tokens"] == df["shadowed_tokens"] - df["summary_tokens"]
            - df["resent_tokens"] - df["refetch_tokens"]).all()
    parts = df["call_cost"] + df["resent_cost"] + df["refetch_cost"] - df["saving"]
    assert ((df["cost"] - parts).abs() < 1e-15).all()
    totals = s.ledger_df(("dsh", "o200k"), per="session").set_index("meter")
    for name in LEDGER_SUMMED:
        for meter in ("dsh", "o200k"):
            assert math.isclose(totals.loc[meter, name],
                                df[df["meter"] == meter][name].sum(), abs_tol=1e-15)


def test_price_table_override(built) -> None:
    _, s = built
    base = s.ledger_df("dsh")
    doubled = s.ledger_df("dsh", prices={"cache_hit": 0.0056, "cache_miss": 0.28,
                                         "output": 0.56})
    assert ((doubled["cost"] - 2 * base["cost"]).abs() < 1e-12).all()
    from workbench.errors import PriceError
    with pytest.raises(PriceError):
        s.ledger_df("dsh", prices={"cache_hit": -1, "cache_miss": 1, "output": 1})
    with pytest.raises(PriceError):
        s.ledger_df("dsh", prices="no-such-model")


@pytest.mark.parametrize("name", sorted(SCHEMAS))
def test_empty_log_schemas(name: str) -> None:
    s = empty_session()
    df = getattr(s, f"{name}_df")()
    want = empty(SCHEMAS[name])
    assert list(df.columns) == list(want.columns)
    assert list(df.dtypes) == list(want.dtypes) and df.empty


def test_full_schemas_match(built) -> None:
    _, s = built
    for name, columns in SCHEMAS.items():
        df = getattr(s, f"{name}_df")()
        assert list(df.dtypes) == list(empty(columns).dtypes), name
    totals = s.ledger_df(per="session")
    assert list(totals.dtypes) == list(empty(SessionLedgerColumns).dtypes)
    assert list(totals["meter"]) == ["dsh", "o200k", "deepseek"]


def test_load_sessions_many(tmp_path) -> None:
    """Every quality frame over a root of several sessions: each session's rows under its key,
    declared dtypes, the same as the single-session frames."""
    import workbench
    from workbench.build import LogBuilder
    built = []
    for i, version in enumerate((4, 0, 4)):
        b = quality_script(version)
        b.session_id = f"session-q{i}"
        b.write_to_root(tmp_path)
        built.append(b)
    quiet = LogBuilder(version=4, session_id="session-quiet")
    with quiet.turn():
        with quiet.step():
            quiet.user("hello")
            quiet.assistant("hi")
    quiet.write_to_root(tmp_path)
    frames = workbench.load_sessions(tmp_path, frames=list(SCHEMAS), workers=1, progress=False)
    for name, columns in SCHEMAS.items():
        df = frames[name]
        assert list(df.columns) == ["session", *empty(columns).columns], name
        assert list(df.dtypes)[1:] == list(empty(columns).dtypes), name
    anchors = frames.anchors
    assert set(anchors["session"].astype(str)) == {"session-q0", "session-q1", "session-q2"}
    for path in sorted(tmp_path.rglob("session*.jsonl*")):
        single = workbench.load(path)
        if single.session_id == "session-quiet":
            continue
        mine = anchors[anchors["session"] == single.session_id].drop(columns="session")
        pd.testing.assert_frame_equal(mine.reset_index(drop=True), single.anchors_df())


@pytest.mark.parametrize("version", [4, 0], ids=["v4", "v0"])
def test_one_cache_break_is_charged_once(version: int) -> None:
    """Two compactions between the same two requests (a nested pair of one pre-step phase):
    that request's cache break is charged to the last of them only (ledger module doc), so the
    session total re-sends it once."""
    from workbench.build import LogBuilder
    b = LogBuilder(version=version, session_id="session-nested", cwd="/w")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("Read a.txt. " * 40)
            b.assistant("Reading a.txt. " * 40)
        with b.step():
            b.assistant("Still reading. " * 40)
    with b.turn():
        with b.step():
            b.user("Now read b.txt. " * 40)
            b.assistant("Reading b.txt. " * 40)
    first = b.compact(summary="Read a.txt.")
    second = b.compact(summary="Read a.txt and b.txt.")
    with b.turn():
        with b.step():
            b.user("Thanks.")
            b.assistant("Bye.")
    s = session_of(b)
    df = s.ledger_df("dsh").set_index("compaction_id")
    one, two = df.loc[first.compaction_id], df.loc[second.compaction_id]
    assert one["request_after_seq"] == two["request_after_seq"]
    assert one["break_position"] == two["break_position"]
    assert (one["resent_tokens"], one["resent_source"], one["resent_cost"]) == (0, "none", 0)
    assert two["resent_tokens"] > 0 and two["resent_source"] == "estimated"
    total = s.ledger_df("dsh", per="session").iloc[0]
    assert total["resent_tokens"] == two["resent_tokens"]
    assert total["net_tokens"] == df["net_tokens"].sum()


@pytest.mark.parametrize("version", [4, 0], ids=["v4", "v0"])
def test_precision_counts_every_anchor_the_summary_states(version: int) -> None:
    """precision = 1 − invented / stated over the distinct anchors the summary states (citation
    module doc): an anchor it states that is still on the surface (b.txt) is stated, neither
    kept nor invented, and stays in the denominator."""
    from workbench.build import LogBuilder
    b = LogBuilder(version=version, session_id="session-precision", cwd="/w")
    with b.turn():
        with b.step():
            if version >= 4:
                b.system("You are a coding agent.")
            first = b.user("Please read a.txt for me. " * 20)
            last = b.assistant("I read a.txt; it lists the inventory. " * 20).seq
    with b.turn():
        with b.step():
            b.user("Next, b.txt please.")
            b.assistant("Reading b.txt next.")
    done = b.compact(first, last, summary="Read a.txt; then b.txt and c.txt are next.")
    s = session_of(b)
    row = s.citations_df().set_index("compaction_id").loc[done.compaction_id]
    assert (row["kept"], row["invented"]) == (1, 1)
    assert math.isclose(row["precision"], 1 - 1 / 3)
    assert math.isclose(row["score"], 2 * 1.0 * (2 / 3) / (1.0 + 2 / 3))
