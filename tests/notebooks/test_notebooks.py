"""The three notebooks: committed clean, and they run top to bottom headless (nbclient).

Each notebook is executed from a copy in a temporary folder (the repository is never written):
`WORKBENCH_SAMPLES` tells it where the bundled sample logs are, `WORKBENCH_LOG` (when set) is
the user's own log or session root that its first cell accepts.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = REPO / "notebooks"
SAMPLES = REPO / "sample_logs"
NAMES = ("01_surface_replace.ipynb", "02_compaction_quality.ipynb", "03_replay_debugging.ipynb")
TIMEOUT_S = 600


def test_the_three_notebooks_are_there() -> None:
    assert sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) == list(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs_or_widget_state(name: str) -> None:
    nb = json.loads((NOTEBOOKS / name).read_text(encoding="utf-8"))
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert all(not c.get("outputs") and c.get("execution_count") is None for c in code)
    assert "widgets" not in nb["metadata"]
    first = "".join(code[0]["source"])
    assert 'os.environ.get("WORKBENCH_LOG"' in first      # the user's log goes in the first cell


def _execute(name: str, tmp_path: Path, log: Path | None = None) -> list[str]:
    """Run a copy of notebook `name`; returns the text of its outputs. Fails on any error."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    work = tmp_path / "run"
    work.mkdir()
    copy = Path(shutil.copy(NOTEBOOKS / name, work / name))
    nb = nbformat.read(copy, as_version=4)
    saved = {k: os.environ.get(k) for k in ("WORKBENCH_SAMPLES", "WORKBENCH_LOG", "PYTHONPATH")}
    os.environ["WORKBENCH_SAMPLES"] = str(SAMPLES)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), saved["PYTHONPATH"]]))
    if log is None:
        os.environ.pop("WORKBENCH_LOG", None)
    else:
        os.environ["WORKBENCH_LOG"] = str(log)
    try:
        client = nbclient.NotebookClient(nb, timeout=TIMEOUT_S, kernel_name="python3",
                                         resources={"metadata": {"path": str(work)}})
        client.execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    texts = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("output_type") != "error", f"{name}: {out.get('ename')}: {out.get('evalue')}"
            texts.append(out.get("text", "") or out.get("data", {}).get("text/plain", ""))
    return texts


@pytest.mark.slow
def test_01_builds_the_seed_story(tmp_path: Path) -> None:
    out = "\n".join(_execute(NAMES[0], tmp_path))
    assert "surface after:  [10, 6, 7]" in out
    assert "identical to the bundled sample: True" in out
    assert "seq 2 still holds 80,000 characters ≈ 20,012 tokens" in out


@pytest.mark.slow
def test_02_measures_every_sample(tmp_path: Path) -> None:
    out = "\n".join(_execute(NAMES[1], tmp_path))
    assert "12 completed compactions" in out
    assert "session-chinese" in out


@pytest.mark.slow
def test_03_finds_the_interrupted_bracket(tmp_path: Path) -> None:
    out = "\n".join(_execute(NAMES[2], tmp_path))
    assert "bracket opened at seq 97 (turn 6)" in out
    assert "CONTEXT_WINDOW_EXCEEDED" in out
    assert "deepseek count of the same request: 20,987 tokens" in out
    assert "repairable" in out


@pytest.mark.slow
@pytest.mark.parametrize(("name", "log"), [
    (NAMES[0], SAMPLES / "pruning__session.v4.jsonl"),
    (NAMES[1], SAMPLES / "--work-shop--"),
    (NAMES[2], SAMPLES / "multi-day__session.v4.jsonl.zstd"),
], ids=["01-own-log", "02-own-session-root", "03-own-log-without-crash"])
def test_notebooks_accept_the_users_log(name: str, log: Path, tmp_path: Path) -> None:
    _execute(name, tmp_path, log)


V3_CORPUS = REPO.parent / "shared" / "corpus" / "dsh-0.1.5-v3"


@pytest.mark.slow
@pytest.mark.skipif(not V3_CORPUS.is_dir(), reason="../shared/corpus/dsh-0.1.5-v3 is absent")
@pytest.mark.parametrize(("name", "log"), [
    (NAMES[0], V3_CORPUS / "dev-tool-result-prune-then-compaction__session.v3.jsonl"),
    (NAMES[1], V3_CORPUS),
    (NAMES[2], V3_CORPUS / "dev-killed-mid-compaction__session.v3.jsonl"),
], ids=["01-v3-log", "02-v3-corpus", "03-v3-killed"])
def test_notebooks_run_on_dsh_015_v3_logs(name: str, log: Path, tmp_path: Path) -> None:
    _execute(name, tmp_path, log)


@pytest.mark.skipif(not V3_CORPUS.is_dir(), reason="../shared/corpus/dsh-0.1.5-v3 is absent")
def test_report_on_a_v3_log(tmp_path: Path) -> None:
    from workbench.report import write_report
    source = V3_CORPUS / "dev-summary-failures-then-success__session.v3.jsonl"
    result = write_report(str(source), str(tmp_path / "report.html"))
    page = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert result.bytes > 0 and "v3" in page
    assert "summary is not smaller than the shadowed content" in page   # a failed bracket, in words
