"""`workbench.core.analysis.AnalysedLog`: one analysed log, whatever pass it was loaded with.

The notebook's pass (index, usage, attempts), the audit's pass (probe texts and quality node
facts, no index) and no pass at all (`ride=False`, members made on first use) give the same
members; the surface read from the load's own fold at any seq is what a fold of the prefix
gives, errors included; `workbench fold` folds the log once."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.core.analysis import AnalysedLog
from workbench.core.surface import fold_surface
from workbench.errors import FoldError

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT.parent / "shared"
SAMPLES = sorted((ROOT / "sample_logs").glob("*.jsonl*"))
ERRORS = [SHARED / "conformance-v4" / "loading" / "load-tool-rewrite-error-at-resume.jsonl",
          SHARED / "conformance-v4" / "loading" / "load-system-head-shadowed.jsonl",
          SHARED / "corpus" / "dsh-fixtures" / "apps--web--cordis-tool-round--session.jsonl"]
FOLDED = SAMPLES + [p for p in ERRORS if p.is_file()]


def _outcome(fold_at):
    try:
        fold = fold_at()
    except FoldError as err:
        return ("error", err.kind, err.seq, err.message)
    return (fold.nodes, [(r.seq, r.start, r.end, r.shadowed) for r in fold.replacements],
            fold.replace_generation, fold.content_generation)


@pytest.mark.parametrize("path", FOLDED, ids=[p.name for p in FOLDED])
def test_the_surface_at_any_seq_is_the_fold_of_that_prefix(path: Path) -> None:
    analysed = AnalysedLog.load(path, ride=False)
    events, version = analysed.events, analysed.version
    n = len(events)
    seqs = range(n) if n <= 400 else sorted({*range(0, n, max(1, n // 150)), n - 1})
    for at in seqs:
        expected = _outcome(lambda: fold_surface(events, version=version, through=at))
        assert _outcome(lambda: analysed.surface_fold(at)) == expected, at
    if any(p == path for p in ERRORS):
        assert analysed.timeline.errors


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_every_pass_gives_the_same_members(path: Path) -> None:
    notebook, audit, bare = (AnalysedLog.load(path), AnalysedLog.load(path, audit=True),
                             AnalysedLog.load(path, ride=False))
    for other in (audit, bare):
        assert other.index.price.tolist() == notebook.index.price.tolist()
        assert other.prices.tolist() == notebook.prices.tolist()
        assert [other.timeline.surface_at(s) for s in range(len(other))] == \
            [notebook.timeline.surface_at(s) for s in range(len(notebook))]
        assert other.compactions.records == notebook.compactions.records
        assert other.compactions.prunes == notebook.compactions.prunes
        assert list(other.usage) == list(notebook.usage)
        assert list(other.attempts) == list(notebook.attempts)
        assert other.surface.size.tolist() == notebook.surface.size.tolist()
        assert [c.as_json() for c in other.quality.citations] == \
            [c.as_json() for c in notebook.quality.citations]
    assert bare.audit.as_json() == notebook.audit.as_json()
    assert audit.probes and not notebook.probes     # the audit's pass kept the probe texts
    assert [(c.record, c.checks) for c in audit.audit.compactions] == \
        [(c.record, c.checks) for c in notebook.audit.compactions]


@pytest.mark.parametrize("command", ["fold", "tokens"])
def test_the_cli_reads_the_surface_from_the_loads_fold(command: str, counted: dict,
                                                       capsys: pytest.CaptureFixture) -> None:
    """`workbench fold/tokens --at` read the surface from the load's own fold: with the store
    forced lazy (each read reparses a line) the log is parsed once, by the load."""
    from workbench.cli.main import main
    path = ROOT / "sample_logs" / "multi-day__session.v4.jsonl.zstd"
    args = [command, "--json", "--at", "-20", str(path)] + (["--meter", "dsh"] if command == "tokens" else [])
    assert main(args) == 0
    assert '"at": ' in capsys.readouterr().out
    n = len(AnalysedLog.load(path, ride=False))
    assert n > 100 and counted["n"] < n // 4, (counted["n"], n)

