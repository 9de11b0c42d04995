"""Session-root discovery: DSH layout, generations, parent links, single files, bad roots."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.errors import LogUnreadable
from workbench.io.discover import find_sessions
from workbench.io.layout import (
    canonical_generation,
    decode_segment,
    encode_segment,
    project_dir_name,
)


def _session(version: int = 4, **kw) -> LogBuilder:
    b = LogBuilder(version=version, **kw)
    with b.turn():
        with b.step():
            b.system("sys")
            b.user("hello")
    return b


@pytest.mark.parametrize(("cwd", "expected"), [
    ("/work/demo", "--work-demo--"),
    ("C:\\Users\\me", "--C-Users-me--"),
    ("/a//b/", "--a-b---"),
    ("/", "--root--"),
    ("/home/~me/x y", "--home-~007Eme-x~0020y--"),
    (None, "_no-cwd"),
], ids=["posix", "windows", "runs", "root", "escapes", "no-cwd"])
def test_project_dir_name(cwd, expected: str) -> None:
    assert project_dir_name(cwd) == expected


@pytest.mark.parametrize(("raw", "encoded"), [
    ("session-1", "session-1"), (".", "~002E"), ("..", "~002E~002E"), ("a/b", "a~002Fb"),
    ("😀", "~D83D~DE00"), ("~", "~007E"),
], ids=["plain", "dot", "dotdot", "slash", "astral", "tilde"])
def test_segment_encoding_round_trips(raw: str, encoded: str) -> None:
    assert encode_segment(raw) == encoded
    assert decode_segment(encoded) == raw


@pytest.mark.parametrize(("name", "generation"), [
    ("session.jsonl", 0), ("session.jsonl.zstd", 0), ("session.v4.jsonl", 4),
    ("session.v12.jsonl.zstd", 12), ("session.v0.jsonl", None), ("session.v04.jsonl", None),
    ("session.V4.jsonl", None), ("session.migration.ab12.jsonl.tmp", None),
    ("session.v4.jsonl.ab12cd.tmp", None),
], ids=lambda v: str(v))
def test_canonical_generation(name: str, generation) -> None:
    assert canonical_generation(name) == generation


def test_root_with_parent_children_and_generations(tmp_path: Path) -> None:
    parent = _session(session_id="session-parent", cwd="/work/demo")
    with parent.turn():
        spawned = parent.spawn_subagent("child-spawn", label="helper")
    with spawned.turn():
        pass
    fork = parent.fork("child-fork", subagent=True)
    other = _session(session_id="session-other", cwd="/elsewhere")
    path = parent.write_to_root(tmp_path, compression="zstd")
    spawned.write_to_root(tmp_path, compression="zstd")
    fork.write_to_root(tmp_path, compression="zstd")
    other.write_to_root(tmp_path, compression="zstd")
    # an older generation and a migration temp file next to the parent's log
    old = _session(version=0, session_id="session-parent", cwd="/work/demo")
    old.write(path.parent / "session.jsonl.zstd", compression="zstd")
    (path.parent / "session.migration.0a1b.jsonl.zstd.tmp").write_bytes(b"junk")

    refs = find_sessions(tmp_path)
    ids = [r.session_id for r in refs]
    assert ids == ["session-other", "session-parent", "child-spawn", "child-fork"]
    by_id = {r.session_id: r for r in refs}
    p = by_id["session-parent"]
    assert p.path == path and p.generation == 4 and p.format_version == 4
    assert p.older_generations == (path.parent / "session.jsonl.zstd",)
    assert p.children == ("child-spawn", "child-fork")
    assert p.project_dir == "--work-demo--" and p.encoding == "zstd" and p.notes == ()
    s, f = by_id["child-spawn"], by_id["child-fork"]
    assert (s.parent_session, s.depth, s.is_seeded, s.origin) == ("session-parent", 1, False,
                                                                  "subagent")
    assert (f.parent_session, f.depth, f.is_seeded) == ("session-parent", 1, True)


def test_v0_seed_length_and_flat_files(tmp_path: Path) -> None:
    parent = _session(version=0, session_id="p0")
    child = parent.fork("c0")
    parent.write(tmp_path / "parent__session.jsonl")
    child.write(tmp_path / "child__session.jsonl")
    (tmp_path / "notes.jsonl").write_text('{"not": "a session"}\n')
    refs = find_sessions(tmp_path)
    assert [r.session_id for r in refs] == ["p0", "c0"]
    assert refs[1].seed_length == len(parent.events) and refs[1].is_seeded is True
    assert refs[0].generation == 0 and refs[0].project_dir is None


def test_single_file_and_list(tmp_path: Path) -> None:
    a = _session(session_id="a").write(tmp_path / "a.jsonl")
    b = _session(session_id="b").write(tmp_path / "b.jsonl.zstd", compression="zstd")
    assert [r.session_id for r in find_sessions(a)] == ["a"]
    assert [r.session_id for r in find_sessions([str(b), a, a])] == ["a", "b"]


def test_identity_mismatch_is_noted(tmp_path: Path) -> None:
    b = _session(session_id="real-id", cwd="/work/demo")
    b.write(tmp_path / "--work-demo--" / "other-id" / "session.v4.jsonl")
    (ref,) = find_sessions(tmp_path)
    assert ref.notes == ("header id 'real-id' does not map to directory 'other-id'",)


def test_unreadable_header_is_reported_not_raised(tmp_path: Path) -> None:
    directory = tmp_path / "--x--" / "s1"
    directory.mkdir(parents=True)
    (directory / "session.v4.jsonl").write_bytes(b"")
    (ref,) = find_sessions(tmp_path)
    assert ref.header_error == "empty file: no header line" and ref.session_id is None


def test_header_read_is_bounded(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"x" * (3 << 20))
    (ref,) = find_sessions(path)
    assert ref.header_error == "no header line within the first 1048576 bytes"


@pytest.mark.parametrize("make", [
    lambda p: p.mkdir(),
    lambda p: (p.mkdir(), (p / "readme.txt").write_text("hi")),
], ids=["empty", "no-logs"])
def test_directory_without_sessions_is_a_clear_error(tmp_path: Path, make) -> None:
    root = tmp_path / "root"
    make(root)
    with pytest.raises(LogUnreadable, match=r"root: no DSH session logs found in this directory"):
        find_sessions(root)


def test_missing_path(tmp_path: Path) -> None:
    with pytest.raises(LogUnreadable, match="nope: no such file or directory"):
        find_sessions(tmp_path / "nope")


def test_corpus_subagent_family(shared_dir: Path) -> None:
    refs = find_sessions(shared_dir / "corpus" / "dsh-real-v4")
    parent = next(r for r in refs if r.path.name.startswith("dev-subagent-parent"))
    assert len(parent.children) == 2
    assert all(r.header_error is None and r.format_version == 4 for r in refs)


def test_a_loose_file_whose_name_claims_a_log_is_listed_with_its_header_error(tmp_path: Path):
    """A name claiming a generation makes a loose file a log: torn, not JSON or empty, it is
    listed (with `header_error`), never dropped; other names let the header decide."""
    (tmp_path / "notjson__session.v4.jsonl").write_text("this is not json\n")
    (tmp_path / "torn__session.v4.jsonl").write_text('{"type":"session","vers')
    (tmp_path / "empty--session.jsonl").write_bytes(b"")
    (tmp_path / "notes.jsonl").write_text("not a log\n")
    (tmp_path / "empty.jsonl").write_bytes(b"")
    refs = {Path(r.path).name: r for r in find_sessions(tmp_path)}
    assert set(refs) == {"notjson__session.v4.jsonl", "torn__session.v4.jsonl",
                         "empty--session.jsonl"}
    assert all(r.header_error for r in refs.values())
