"""`workbench.compare` and `workbench whatif` on a real log: frames with declared dtypes, one plot
with both timelines on the real-seq axis, the widget mode, the CLI's exit codes, --json, and -o
writing only when asked. Skips when ../shared is absent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import workbench
from workbench.cli.main import main
from workbench.frames.compare import COMPACTION_COLUMNS, SESSION_COLUMNS

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "corpus" / "dsh-real-v4"
LOG = REAL / "dev-long-auto-compaction__session.v4.jsonl"
POLICY = {"threshold_ratio": 0.6, "retain_tokens": 4000, "headroom_tokens": 1024}


@pytest.fixture(scope="module")
def pair() -> tuple[workbench.Session, workbench.Session]:
    if not LOG.is_file():
        pytest.skip(f"{LOG} is absent (../shared corpus not available)")
    real = workbench.load(LOG)
    return real, real.whatif.policy(summarizer="truncate", **POLICY)


def test_comparison_frames(pair) -> None:
    real, cf = pair
    c = workbench.compare(real, cf)
    for name, dtype in COMPACTION_COLUMNS.items():
        assert str(c.compactions[name].dtype) == dtype, name
    for name, dtype in SESSION_COLUMNS.items():
        assert str(c.sessions[name].dtype) == dtype, name
    sides = c.sessions.set_index("side")
    assert sides.loc["real", "compactions"] == len(real.compactions.records) == 3
    assert sides.loc["whatif:truncate", "compactions"] == len(cf.compactions.records) > 3
    assert sides.loc["whatif:truncate", "peak_surface_tokens"] < sides.loc["real", "peak_surface_tokens"]
    rows = c.compactions[c.compactions["side"] == "whatif:truncate"]
    assert set(rows["summarizer"]) == {"truncate"}
    assert (rows["real_seq"] <= rows["start_seq"]).all()        # placed at the real seq it follows
    assert rows["cache_break_position"].notna().all()
    # both timelines share the real-seq axis and end at the real log's last seq
    ends = c.timeline.groupby("side")["real_seq"].max()
    assert set(ends) == {len(real) - 1}


def test_comparison_figure_and_widget(pair) -> None:
    real, cf = pair
    c = workbench.compare(real, cf)
    figure = c.figure()
    names = [t.name for t in figure.data]
    assert "real · dsh" in names and "whatif:truncate · dsh" in names
    assert figure.layout.xaxis.title.text == "real seq"
    widget = workbench.compare(real, cf, widget=True)
    assert len(widget.children) == 2


def test_comparison_with_nothing_to_compare(pair) -> None:
    real, _ = pair
    child = workbench.load(REAL / "dev-subagent-spawn-child__session.v4.jsonl")
    c = workbench.compare(child, child.whatif.policy(summarizer="mask", **POLICY))
    assert c.compactions.empty
    for name, dtype in COMPACTION_COLUMNS.items():
        assert str(c.compactions[name].dtype) == dtype


def test_cli_whatif(pair, tmp_path: Path, capsys) -> None:
    out = tmp_path / "cf.jsonl"
    code = main(["whatif", str(LOG), "--policy", "threshold_ratio=0.6,retain_tokens=4000,"
                 "headroom_tokens=1024", "--summarizer", "truncate", "--json"])
    assert code == 0 and not out.exists()
    found = json.loads(capsys.readouterr().out)
    assert found["counterfactual_clean"] and found["written"] is None
    assert [s["side"] for s in found["sessions"]] == ["real", "whatif:truncate"]
    code = main(["whatif", str(LOG), "--policy", "threshold_ratio=0.6,retain_tokens=4000,"
                 "headroom_tokens=1024", "--summarizer", "truncate", "-o", str(out)])
    assert code == 0 and workbench.load(out).verdict == "clean"
    assert "wrote" in capsys.readouterr().out


def test_cli_whatif_errors(pair, capsys) -> None:
    assert main(["whatif", str(LOG), "--policy", "threshold=0.6"]) == 2
    assert "bad --policy item" in capsys.readouterr().err
    assert main(["whatif", str(LOG), "-o", str(LOG)]) == 2
    assert "refusing to write over the input" in capsys.readouterr().err
    assert main(["whatif", str(LOG), "--policy", "threshold_ratio=0.3,headroom_tokens=1024"]) == 2
    assert "no logged summary left" in capsys.readouterr().err
    assert main(["whatif", str(LOG)]) == 0
    assert "pressure compaction is disabled" in capsys.readouterr().err


@pytest.mark.parametrize("setting", ["threshold_ratio=nan", "threshold_ratio=inf", "threshold_ratio=0",
                                     "threshold_ratio=-1", "retain_ratio=-3", "retain_ratio=1.5",
                                     "retain_ratio=nan", "context_window=-5", "context_window=0",
                                     "headroom_tokens=-1", "compaction_retries=1000000000"])
def test_a_policy_dsh_could_not_run_is_a_usage_error(setting, capsys) -> None:
    """Checked by `Policy` itself (the library's `whatif.policy` too), before the log is read:
    the log path does not even have to exist."""
    assert main(["whatif", "/nonexistent/session.v4.jsonl", "--policy", setting]) == 2
    err = capsys.readouterr().err
    assert f"policy setting {setting.split('=')[0]} must be" in err and "internal error" not in err
    from workbench.core.whatif.policy import Policy
    from workbench.errors import InvalidArgument
    key, value = setting.split("=")
    with pytest.raises(InvalidArgument):
        Policy(**{key: float(value) if "ratio" in key else int(value)})


def test_an_output_the_writer_refuses_is_a_usage_error_before_the_replay(tmp_path: Path,
                                                                         capsys) -> None:
    """The one output check refuses what the writer refuses (a device, a FIFO), so `-o
    /dev/null` is a usage error before the log is even read (it was refused after the replay)."""
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for target in ("/dev/null", str(fifo)):
        assert main(["whatif", "/nonexistent/session.v4.jsonl", "-o", target]) == 2
        err = capsys.readouterr().err
        assert "usage: workbench whatif" in err and "not a regular file" in err, err


@pytest.mark.parametrize("pruner", ["-1,0,0", "0,0,0", "10,8,8", "1,2"])
def test_a_pruner_dsh_could_not_run_is_a_usage_error(pruner: str, capsys) -> None:
    """Checked by `Policy` itself, before the log is read (it failed during the replay)."""
    assert main(["whatif", "/nonexistent/session.v4.jsonl", f"--pruner={pruner}"]) == 2
    err = capsys.readouterr().err
    assert "usage: workbench whatif" in err and "pruner" in err and "internal" not in err, err


@pytest.mark.parametrize("pruner", ["x", {"thresholdChars": 0}, {"thresholdChars": 100, "x": 1}])
def test_policy_checks_its_pruner(pruner) -> None:
    from workbench.core.whatif.policy import Policy
    from workbench.errors import InvalidArgument
    with pytest.raises(InvalidArgument, match="policy setting pruner"):
        Policy(pruner=pruner)


def test_a_byte_identical_replay_places_its_compactions_where_the_real_ones_are() -> None:
    """Both sides' ``real_seq`` follow one rule: a replay that writes the log back byte for byte
    has its compactions at the real ones' real_seq (they were one seq early), so the sides join."""
    from workbench.frames.compare import comparison
    if not LOG.is_file():
        pytest.skip(f"{LOG} is absent (../shared corpus not available)")
    real = workbench.load(LOG)
    cf = real.whatif.policy(threshold_ratio=0.75, headroom_tokens=1024, retain_tokens=2500)
    assert cf.log_bytes == LOG.read_bytes()
    rows = comparison(real, cf).compactions
    sides = [rows[rows["side"] == s]["real_seq"].tolist() for s in ("real", "whatif:logged")]
    assert sides[0] == sides[1] == real.compactions_df()["start_seq"].tolist()
