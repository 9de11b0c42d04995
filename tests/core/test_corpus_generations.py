"""The logs of every released DSH runtime: format v4 (0.2.1), v3 (0.1.5) and v0 as 0.1.2 writes it.

Against each corpus folder's manifest and the logs' own records: every log loads with its story's
verdict and the manifest's logical event count; the fold's replacements shadow exactly each logged
``shadowedSeqs``; the dsh meter equals each logged ``shadowedTokenCount``; every bracket has its
status (completed, failed with its logged error, interrupted at its unclosed start); prunes are
found. Then `workbench migrate` / `Session.migrated(4)` against DSH 0.2.1's own view of the v3 logs
(``migrated/``), the v0 refusal, the versions nobody writes, and generations in one session directory.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import workbench
from workbench.cli.main import main
from workbench.core.load import load_bytes, load_log
from workbench.core.migration import V0_REFUSAL, lift_event
from workbench.core.timeline import SurfaceTimeline
from workbench.core.tokens.compactions import compaction_tokens
from workbench.core.tokens.counts import LogTokens
from workbench.errors import MigrationRefused
from workbench.io.discover import find_sessions
from workbench.io.generations import rules_for
from workbench.io.layout import encode_segment, project_dir_name

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
FOLDERS = {"dsh-real-v4": 4, "dsh-0.1.5-v3": 3, "dsh-0.1.2-v0": 0}


def _entries() -> list[tuple[str, dict]]:
    out = []
    for folder in FOLDERS:
        manifest = CORPUS / folder / "manifest.json"
        if manifest.is_file():
            out.extend((folder, entry) for entry in json.loads(manifest.read_text(encoding="utf-8")))
    return out


ENTRIES = _entries()
needs_corpus = pytest.mark.skipif(not ENTRIES, reason="../shared/corpus (with its manifests) is absent")
IDS = [f"{folder}/{entry['file']}" for folder, entry in ENTRIES]


def _path(folder: str, entry: dict) -> Path:
    return CORPUS / folder / entry["file"]


def test_all_three_generations_are_in_the_corpus() -> None:
    if not ENTRIES:
        pytest.skip("../shared/corpus is absent")
    assert {folder for folder, _ in ENTRIES} == set(FOLDERS)


@needs_corpus
@pytest.mark.parametrize(("folder", "entry"), ENTRIES, ids=IDS)
def test_log_loads_clean_with_the_manifest_event_count(folder: str, entry: dict) -> None:
    log = load_log(_path(folder, entry))
    assert log.format_version == FOLDERS[folder] == entry["header"]["version"]
    assert rules_for(log.format_version) == FOLDERS[folder]
    # every story is a clean log; the killed ones are clean too, with crash-repair closers pending
    assert (log.verdict, [d.rule for d in log.defects if d.severity != "warning"]) == ("clean", [])
    assert len(log.events) == entry.get("logical_events", entry.get("events"))
    if "killed-mid-compaction__" in entry["file"]:  # the runtime died inside a turn
        assert [c["type"] for c in log.closers][-1] == "turn/end"


@needs_corpus
@pytest.mark.parametrize(("folder", "entry"), ENTRIES, ids=IDS)
def test_fold_shadows_exactly_what_the_harness_logged(folder: str, entry: dict) -> None:
    log = load_log(_path(folder, entry))
    version = rules_for(log.format_version)
    events = list(log.events)
    timeline = SurfaceTimeline(events, version=version)
    assert timeline.errors == ()
    logged = {}
    for seq, event in enumerate(events):
        if event["type"] in ("compaction/summary", "compaction/prune"):
            logged[seq] = event["data"]["shadowedSeqs"]
    shadowed = sorted(list(r.shadowed) for r in timeline.replacements)
    # one replacement per logged shadow set (checkpoints and pruned results), nothing else
    assert shadowed == sorted(logged.values())
    assert len(timeline.replacements) == entry["surface_replace_ops"]
    for seq, seqs in logged.items():
        if events[seq]["type"] == "compaction/prune":
            assert list(timeline.replacement_by_seq[seq + 1].shadowed) == seqs


@needs_corpus
@pytest.mark.parametrize(("folder", "entry"), ENTRIES, ids=IDS)
def test_dsh_meter_reproduces_every_logged_shadowed_token_count(folder: str, entry: dict) -> None:
    session = workbench.load(_path(folder, entry))
    compactions = session.compactions_df()
    completed = compactions[compactions["summary_seq"].notna() & compactions["replacement_seq"].notna()]
    assert (completed["logged_shadowed_tokens"] == completed["shadowed_tokens"]).all()
    tokens = LogTokens(session.events, version=session.version, progress=False)
    rows = [r for r in compaction_tokens(tokens, ("dsh",)) if r.status == "completed"]
    assert len(rows) == entry["compaction_summary"] + entry["compaction_prune"]
    assert [r.hidden["dsh"] for r in rows] == [r.logged_shadowed_tokens for r in rows]
    prunes = session.prunes_df()
    assert len(prunes) == entry["compaction_prune"]
    assert (prunes["logged_shadowed_tokens"] == prunes["shadowed_tokens"]).all()


@needs_corpus
@pytest.mark.parametrize(("folder", "entry"), ENTRIES, ids=IDS)
def test_every_bracket_has_its_status(folder: str, entry: dict) -> None:
    compactions = workbench.load(_path(folder, entry)).compactions_df()
    assert len(compactions) == entry["compaction_start"]
    failed = compactions[compactions["status"] == "failed"]
    assert failed["error"].tolist() == entry["compaction_end_errors"]
    interrupted = compactions[compactions["status"].isin(["interrupted", "stale"])]
    assert interrupted["start_seq"].tolist() == entry["compaction_unclosed_start_seqs"]
    completed = compactions[compactions["status"] == "completed"]
    assert len(completed) == entry["compaction_summary"] == len(compactions) - len(failed) - len(interrupted)
    assert completed["check_shadowed_seqs_match_fold"].all()


# -- migration ------------------------------------------------------------------------------------

def _migrated_files(folder: str) -> list[tuple[Path, Path]]:
    directory = CORPUS / folder / "migrated"
    if not directory.is_dir():
        return []
    return [(CORPUS / folder / p.name.split(".dsh-0.2.1")[0], p)
            for p in sorted(directory.glob("*.events.jsonl"))]


V3_MIGRATED = _migrated_files("dsh-0.1.5-v3")
V0_MIGRATED = _migrated_files("dsh-0.1.2-v0")


@pytest.mark.skipif(not V3_MIGRATED, reason="../shared/corpus/dsh-0.1.5-v3/migrated is absent")
@pytest.mark.parametrize(("source", "reference"), V3_MIGRATED, ids=[s.name for s, _ in V3_MIGRATED])
def test_migrate_v3_equals_dsh_021_event_for_event(source: Path, reference: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(source), "--to", "4"]) == 0
    out = capsys.readouterr().out
    assert out.encode("utf-8", "surrogatepass") == reference.read_bytes()
    target = tmp_path / "view.jsonl"
    assert main(["migrate", str(source), "--to", "4", "-o", str(target)]) == 0
    assert target.read_bytes() == reference.read_bytes()
    # the same view in Python, read back with the v4 rules
    session = workbench.load(source).migrated(4)
    expected = [json.loads(line) for line in reference.read_text(encoding="utf-8").splitlines()]
    assert session.version == 4 and [dict(e) for e in session.events] == expected


@pytest.mark.skipif(not V0_MIGRATED, reason="../shared/corpus/dsh-0.1.2-v0/migrated is absent")
@pytest.mark.parametrize(("source", "reference"), V0_MIGRATED, ids=[s.name for s, _ in V0_MIGRATED])
def test_migrate_v0_is_refused_not_approximated(source: Path, reference: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["migrate", str(source), "--to", "4"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "not migrated: a v0 log" in captured.err
    with pytest.raises(MigrationRefused, match="v0 log"):
        workbench.load(source).migrated(4)
    assert V0_REFUSAL.startswith("a v0 log")


def test_migrate_never_writes_over_the_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not V3_MIGRATED:
        pytest.skip("../shared/corpus/dsh-0.1.5-v3/migrated is absent")
    copy = tmp_path / "session.v3.jsonl"
    shutil.copy(V3_MIGRATED[-1][0], copy)
    before = copy.read_bytes()
    assert main(["migrate", str(copy), "-o", str(copy)]) == 2
    assert copy.read_bytes() == before
    assert "refusing to write over the input" in capsys.readouterr().err


def test_lift_renames_plugin_sources_by_the_spec_table() -> None:
    def user(source: dict) -> dict:
        return {"type": "user/message", "seq": 3, "time": 0, "data": {"content": [], "source": source, "id": "m"}}
    assert lift_event(user({"kind": "plugin", "plugin": "goal", "change": 1}))["data"]["source"] == \
        {"kind": "goal", "change": 1}
    assert lift_event(user({"kind": "plugin", "plugin": "tools-code-mode"}))["data"]["source"] == {"kind": "ptc-mode"}
    assert lift_event(user({"kind": "plugin", "plugin": "my-ext"}))["data"]["source"] == {"kind": "plugin:my-ext"}
    plain = user({"kind": "user"})
    assert lift_event(plain) is plain


# -- versions nobody writes ----------------------------------------------------------------------

@pytest.mark.parametrize("version", [1, 2, 5, 7])
def test_unwritten_versions_are_refused_naming_the_version(version: int) -> None:
    header = {"type": "session", "version": version, "id": "s", "createdAt": 1, "isSeeded": False,
              "delegationDepth": 0}
    data = (json.dumps(header) + "\n").encode()
    for name in (f"session.v{version}.jsonl", "log.jsonl"):
        log = load_bytes(data, name=name)
        assert log.verdict == "refused"
        assert f"log format v{version}" in log.defects[0].message


def test_a_v3_header_in_a_v4_file_stays_refused() -> None:
    header = b'{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'
    log = load_bytes(header, name="session.v4.jsonl")
    assert log.verdict == "refused" and log.defects[0].rule == "unsupported_older"
    assert load_bytes(header, name="session.v3.jsonl").verdict == "clean"


# -- generations in one session directory -----------------------------------------------------------

def _store(tmp_path: Path) -> tuple[Path, Path]:
    """A DSH store whose session directory holds session.jsonl, session.v3.jsonl and session.v4.jsonl."""
    source = next(s for s, _ in V3_MIGRATED if "long-auto" in s.name)
    header = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    directory = tmp_path / "root" / project_dir_name(header["cwd"]) / encode_segment(header["id"])
    directory.mkdir(parents=True)
    shutil.copy(source, directory / "session.v3.jsonl")
    v0 = json.dumps({"type": "session", "version": 0, "id": header["id"], "createdAt": header["createdAt"],
                     "cwd": header["cwd"], "delegationDepth": 0})
    (directory / "session.jsonl").write_text(v0 + "\n", encoding="utf-8")
    workbench.load(source).migrated(4).write(directory / "session.v4.jsonl")
    return tmp_path / "root", directory


def test_a_session_with_three_generations_is_listed_once(tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    if not V3_MIGRATED:
        pytest.skip("../shared/corpus/dsh-0.1.5-v3/migrated is absent")
    root, directory = _store(tmp_path)
    refs = find_sessions(root)
    assert len(refs) == 1
    assert refs[0].path == directory / "session.v4.jsonl" and refs[0].generation == 4
    assert refs[0].older_generations == (directory / "session.jsonl", directory / "session.v3.jsonl")
    assert main(["info", str(root), "--json"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    summary = json.loads(lines[0])
    assert summary["format_version"] == 4 and summary["verdict"] == "clean"
    assert summary["older_generations"] == [str(directory / "session.jsonl"), str(directory / "session.v3.jsonl")]
    assert main(["info", str(root)]) == 0
    assert "older generations kept beside it (not read): session.jsonl, session.v3.jsonl" in capsys.readouterr().out
    # an older generation named on its own reads as itself and points at the session's log
    assert main(["info", str(directory / "session.v3.jsonl"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["format_version"] == 3 and summary["older_generations"] == [str(directory / "session.jsonl")]
    assert any("session.v4.jsonl" in note for note in summary["notes"])


def test_v3_rows_refuse_what_the_v2_to_v3_step_retired() -> None:
    header = b'{"type":"session","version":3,"id":"s","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'

    def load(*rows: dict) -> tuple[str, list[str]]:
        log = load_bytes(header + b"".join(json.dumps(r).encode() + b"\n" for r in rows), name="session.v3.jsonl")
        return log.verdict, [d.message for d in log.defects if d.severity != "warning"]

    turn = {"type": "turn/start", "seq": 0, "time": 1, "data": {"turn": 1}}
    system = {"type": "request/header", "seq": 1, "time": 1,
              "data": {"header": {"config": {"provider": "p", "model": "m"}, "system": "x"}, "reason": "initial"}}
    assert load(turn, system) == ("corrupt", ["format v3 request/header rejects retired header.system"])
    dispatch = {"type": "tool/code-dispatch", "seq": 1, "time": 1, "data": {}}
    verdict, messages = load(turn, dispatch)
    assert verdict == "refused" and messages[0] == "format v3 rejects retired event type tool/code-dispatch"
    # v3's own spelling of a tool result (a wrapped block, a plugin source) is not retired syntax
    wrapped = {"type": "user/message", "seq": 1, "time": 1, "surfaceOp": "append",
               "data": {"content": [], "source": {"kind": "plugin", "plugin": "compact"}, "role": "user", "id": "m"}}
    assert load(turn, wrapped)[1] == []
