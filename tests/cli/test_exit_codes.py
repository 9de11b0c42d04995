"""Every subcommand agrees on exit codes: 0 ok, 1 findings (a damaged log), 2 unusable input
(refused version, missing file, not a session log), each problem as one stderr line."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from tour_script import tour_script

from workbench.cli.main import main

COMMANDS = ("info", "fold", "audit", "tokens", "report", "export")



def _inputs(tmp: Path) -> dict[str, Path]:
    clean = tour_script(4, session_id="session-exit").write(tmp / "clean.session.v4.jsonl")
    data = clean.read_bytes()
    lines = data.split(b"\n")
    torn = tmp / "torn.session.v4.jsonl"
    torn.write_bytes(data[: len(data) - 40])
    corrupt = tmp / "corrupt.session.v4.jsonl"
    corrupt.write_bytes(b"\n".join(lines[:4] + [b"{broken"] + lines[5:]))
    refused = tmp / "refused.session.v4.jsonl"
    refused.write_text('{"type":"session","version":9,"id":"x","createdAt":0}\n')
    warned = tmp / "warned.session.jsonl"   # a v0 fixture snapshot: no seq/time, a warning only
    v0 = tour_script(0, session_id="session-exit").write(tmp / "v0.session.jsonl").read_text()
    warned.write_text("".join(json.dumps({k: v for k, v in json.loads(line).items()
                                          if k not in ("seq", "time")}) + "\n"
                              for line in v0.splitlines()))
    not_log = tmp / "notes.jsonl"
    not_log.write_text("# just notes\n")
    return {"clean": clean, "warned": warned, "torn": torn, "corrupt": corrupt, "refused": refused,
            "not-a-log": not_log, "missing": tmp / "missing.jsonl"}


EXPECTED = {"clean": None, "warned": None, "torn": 1, "corrupt": 1, "refused": 2, "not-a-log": 2, "missing": 2}


@pytest.mark.parametrize("kind", sorted(EXPECTED))
@pytest.mark.parametrize("command", COMMANDS)
def test_exit_code(command: str, kind: str, tmp_path: Path, capsys) -> None:
    path = _inputs(tmp_path)[kind]
    extra = {"report": ["-o", str(tmp_path / "r.html"), "-q"],
             "export": ["-o", str(tmp_path / "frames"), "--quiet"]}.get(command, [])
    code = main([command, str(path), *extra])
    err = capsys.readouterr().err
    want = EXPECTED[kind]
    if want is None:   # the tour log ends with an interrupted bracket: a failed audit check;
        want = 1 if command in ("audit", "report") else 0   # a warning is no finding (info too)
    assert code == want, err
    if want == 2:
        lines = [line for line in err.splitlines() if line.strip()]
        assert len(lines) == 1 and lines[0].startswith(f"workbench {command}: "), err
        assert "Traceback" not in err


@pytest.mark.parametrize(("kinds", "want"), [(("warned",), 0), (("warned", "corrupt"), 1)])
def test_a_store_export_of_a_directory_takes_the_same_rule(kinds, want, tmp_path: Path, capsys) -> None:
    """`export DIR`: findings when some session's verdict is not clean; warnings are none."""
    logs = _inputs(tmp_path)
    root = tmp_path / "root"
    for i, kind in enumerate(kinds):
        name = "session.jsonl" if kind == "warned" else "session.v4.jsonl"
        target = root / "--proj--" / f"s{i}" / name
        target.parent.mkdir(parents=True)
        target.write_bytes(logs[kind].read_bytes())
    code = main(["export", str(root), "-o", str(tmp_path / "store"), "--quiet"])
    assert code == want, capsys.readouterr().err


EMPTY_PREFIX_RUNS = (["info"], ["fold"], ["fold", "--at", "-1"], ["audit", "--json"],
                     ["tokens", "--meter", "usage,dsh"], ["tokens", "--meter", "usage", "--json"],
                     ["probes"], ["migrate"], ["whatif", "--json"])


@pytest.mark.parametrize("first_row", [None, b'{"type":"bogus"}\n'], ids=["header-only", "bad-first-row"])
@pytest.mark.parametrize("run", EMPTY_PREFIX_RUNS, ids=" ".join)
def test_a_log_with_no_valid_event_is_no_internal_error(run, first_row, tmp_path: Path, capsys) -> None:
    """Every option that takes a position works when the valid prefix is empty (the end is -1):
    a result, a finding, or a usage error (`--at -1` of nothing; what-if of a damaged log)."""
    clean = tour_script(4, session_id="session-exit").write(tmp_path / "c.session.v4.jsonl")
    log = tmp_path / "e.session.v4.jsonl"
    log.write_bytes(clean.read_bytes().split(b"\n")[0] + b"\n" + (first_row or b""))
    assert main([run[0], str(log), *run[1:]]) in (0, 1, 2)
    assert "internal error" not in capsys.readouterr().err
