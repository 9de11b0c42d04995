"""One bad entry never hides the others: unreadable directories (really unreadable: the check
runs as an unprivileged user, since root reads a chmod-000 directory), FIFOs and device links in a
session root, long session ids in listings, and the exit code of `info ROOT`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from tour_script import tour_script

from workbench.cli.main import main
from workbench.io.discover import find_sessions
from workbench.io.layout import encode_segment

REPO = Path(__file__).resolve().parents[2]
SETPRIV = shutil.which("setpriv")
NOBODY = 65534


def _root(base: Path) -> Path:
    """A DSH root: two readable sessions, one unreadable session directory, a FIFO log and a
    link to a character device."""
    root = base / "root"
    project = root / "--work-demo--"
    for sid in ("session-a", "session-b"):
        target = project / encode_segment(sid)
        target.mkdir(parents=True)
        tour_script(4, session_id=sid).write(target / "session.v4.jsonl")
    locked = project / encode_segment("session-locked")
    locked.mkdir()
    tour_script(4, session_id="session-locked").write(locked / "session.v4.jsonl")
    locked.chmod(0)
    fifo_dir = project / encode_segment("session-fifo")
    fifo_dir.mkdir()
    os.mkfifo(fifo_dir / "session.v4.jsonl")
    os.symlink("/dev/zero", root / "zero.session.v4.jsonl")
    return root


@pytest.fixture
def world_root():
    base = Path(tempfile.mkdtemp(prefix="wb-roots-"))
    base.chmod(0o755)
    try:
        root = _root(base)
        for path in [root, *root.rglob("*")]:
            if path.is_symlink() or path.name == encode_segment("session-locked"):
                continue
            path.chmod(0o755 if path.is_dir() else 0o644)
        yield root
    finally:
        for path in base.rglob("*"):
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        shutil.rmtree(base)


def _as_nobody(code: str) -> subprocess.CompletedProcess:
    if SETPRIV is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run a check as an unprivileged user")
    return subprocess.run(
        [SETPRIV, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable,
         "-c", code], capture_output=True, text=True, cwd="/", timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)})


def test_an_unreadable_directory_hides_nothing(world_root):
    locked = next(world_root.rglob(encode_segment("session-locked")))
    probe = _as_nobody(f"import os\ntry:\n    os.listdir({str(locked)!r})\n    print('readable')\n"
                       "except PermissionError:\n    print('denied')")
    assert probe.stdout.strip() == "denied", probe  # the failure is real for this user
    code = f"""
import json, sys
from workbench.cli.main import main
from workbench.frames.many import load_sessions
frames = load_sessions({str(world_root)!r}, workers=1, progress=False)
rows = frames["sessions"][["path", "verdict", "error"]].astype(str).to_dict("records")
print(json.dumps(rows))
sys.stdout.flush()
print("EXIT", main(["info", {str(world_root)!r}]))
"""
    run = _as_nobody(code)
    assert "Traceback" not in run.stderr, run.stderr
    rows = json.loads(run.stdout.splitlines()[0])
    by_path = {Path(r["path"]).parent.name if r["path"].endswith(".jsonl") and "zero" not in
               r["path"] else Path(r["path"]).name: r for r in rows}
    for sid in ("session-a", "session-b"):
        assert by_path[encode_segment(sid)]["verdict"] != "unreadable", rows
    assert by_path[encode_segment("session-locked")]["verdict"] == "unreadable"
    assert "Permission denied" in by_path[encode_segment("session-locked")]["error"]
    assert run.stdout.splitlines()[-1] == "EXIT 1"  # some logs fine, some not: findings
    assert "cannot list directory" in run.stderr
    assert "FIFO" in run.stderr and "character device" in run.stderr


def test_fifos_and_devices_are_listed_and_never_opened(world_root, capsys):
    refs = find_sessions(world_root)
    skipped = {r.path.name: r.skipped for r in refs if r.skipped}
    assert "FIFO" in skipped["session.v4.jsonl"]
    assert "character device" in skipped["zero.session.v4.jsonl"]
    assert main(["info", str(world_root)]) == 1   # root reads the locked directory itself
    err = capsys.readouterr().err
    assert "FIFO" in err and "character device" in err and "Traceback" not in err


def test_a_huge_session_id_is_shortened_in_listings(tmp_path, capsys):
    sid = "session-" + "x" * 3_000_000
    path = tour_script(4, session_id=sid).write(tmp_path / "big.session.v4.jsonl")
    assert main(["info", str(path)]) in (0, 1)
    out = capsys.readouterr()
    assert max(len(line) for line in (out.out + out.err).splitlines()) < 5_000
    assert "3000008 chars" in out.out


@pytest.mark.parametrize("odd", ["empty-id", "link-loop", "fifo"])
def test_one_odd_session_never_hides_the_others(tmp_path, odd, capsys):
    """A header id of "" (it maps to no directory), a log that is a symbolic link to itself
    and a FIFO log: listed, skipped or noted; `info`, `export` and `load_sessions` read the rest."""
    import workbench
    project = tmp_path / "root" / "--work-demo--"
    good = project / encode_segment("session-good")
    good.mkdir(parents=True)
    tour_script(4, session_id="session-good").write(good / "session.v4.jsonl")
    other = project / "session-odd"
    other.mkdir()
    target = other / "session.v4.jsonl"
    if odd == "empty-id":
        tour_script(4, session_id="").write(target)
    elif odd == "link-loop":
        target.symlink_to(target.name)
    else:
        os.mkfifo(target)
    root = str(tmp_path / "root")
    assert main(["info", root]) in (0, 1)
    assert main(["export", root, "-o", str(tmp_path / "store")]) in (0, 1)
    frames = workbench.load_sessions(root)
    assert "internal error" not in capsys.readouterr().err
    assert frames.sessions["session_id"].astype("string").eq("session-good").any()


def test_a_log_name_that_is_not_utf8_is_exported_and_queried(tmp_path, capsys):
    """Arrow and DuckDB hold only UTF-8: the store shows such a name's bytes as \\xNN (the
    `session` key, `path`), keeps the exact path in the manifest (a second export finds the log
    unchanged) and tells two logs apart by `log`; a header id with a lone surrogate is queried too."""
    from workbench.frames.fleet import fleet
    root = tmp_path / "root"
    root.mkdir()
    for name in (b"odd-\xff__session.v4.jsonl", b"odd-\xfe__session.v4.jsonl", b"plain__session.v4.jsonl"):
        tour_script(4, session_id=name.decode("latin-1") + "\ud800").write(Path(os.fsdecode(bytes(root) + b"/" + name)))
    store = str(tmp_path / "store")
    assert main(["export", str(root), "-o", store, "--quiet"]) == 0
    assert main(["export", str(root), "-o", store, "--json"]) == 0
    out = capsys.readouterr()
    assert json.loads(out.out)["unchanged"] == 3 and "internal error" not in out.err
    con = fleet(store)
    keys = con.sql("select session, count(*) as n, count(distinct log) as logs from events "
                   "group by 1 order by 1")
    assert list(keys["session"]) == ["odd-\\xfe__session.v4.jsonl", "odd-\\xff__session.v4.jsonl",
                                     "plain__session.v4.jsonl"]
    assert (keys["logs"] == 1).all() and (keys["n"] > 0).all()
    manifest = con.sql("select path, session_id from manifest order by session")
    assert manifest["path"].str.contains("\\\\xff").sum() == 1
    assert manifest["session_id"].str.endswith("\ufffd").all()
