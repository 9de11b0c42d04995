"""Session-root discovery: which session logs live under a path. Layer: io (stdlib, zstandard).

DSH's JSONL backend stores one directory per session, named as `workbench.io.layout` says
(v0 spec §1.1, v4 spec §1.1). Rules applied here (reference: resolveGenerationInDirectory):

* only canonical file names (`layout.canonical_generation`) are session logs; anything else in a
  session directory (``*.tmp`` migration files, ``session.v0.jsonl``, uppercase) is ignored;
* the numerically highest generation of a session directory is the session's log (one listing
  per session); older generations (DSH 0.2.1 keeps ``session.jsonl`` / ``session.v3.jsonl`` after
  migrating them) stay in place and are named in `SessionRef.older_generations`, not read; a
  generation file named on its own names its siblings the same way;
* only the header is read — the first line of a raw file, or the first zstd frame (which holds
  only the header line, §1.6) — and never more than `HEADER_LIMIT` bytes of plaintext, so a
  listing stays cheap on 1.3M-event logs and bounded on hostile input;
* subagent children and forks link to their parent through the header's ``parentSession``;
  ``delegationDepth``, ``seedLength`` (v0) / ``isSeeded`` (v4) are reported as found.

A directory may also hold loose log files (the shared corpus, copied fixtures): ``*.jsonl`` /
``*.jsonl.zstd`` files directly inside it whose first line is a ``"type":"session"`` header are
listed too, and so is every loose file whose name claims a generation
(``<label>__session.v4.jsonl``, `layout.generation_from_name`) whatever its first line holds: a
log whose header is torn, not JSON or missing (an empty file) is listed with its
`SessionRef.header_error`, never dropped. Any other name lets the header decide (README: a
file's name is a hint). Discovery never validates a log (that is the loader's job); a header
that cannot be read is reported in `SessionRef.header_error` instead of raising.

One bad entry never hides the others: a directory below the root that cannot be listed, and a
log name that is not a regular file (a FIFO, a device, a link to one: opening it could block or
never end) are listed as `SessionRef`s with `skipped` saying why, and never opened. Only a root
that cannot be listed at all raises `LogUnreadable`.
"""
from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

import zstandard

from workbench.errors import InvalidArgument, LogUnreadable
from workbench.io.jsjson import (
    JSONError,
    is_nonneg_safe_int,
    is_number,
    is_safe_int,
    loads,
)
from workbench.io.layout import (
    canonical_generation,
    encode_segment,
    generation_from_name,
    project_dir_name,
)
from workbench.io.output import entry_is_file, special_file

HEADER_LIMIT = 1 << 20
"""Most plaintext bytes read to find the header line (a real header is a few hundred bytes)."""

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_MAX_WALK_DEPTH = 2  # root -> project dir -> session dir


@dataclass(frozen=True, slots=True)
class SessionRef:
    """One session found under a root, described by its header only."""

    path: Path
    session_id: str | None
    generation: int | None          # from the canonical file name; None for loose files without one
    format_version: int | float | None  # header `version` as found (a number), else None
    parent_session: str | None
    depth: int | None               # header delegationDepth
    is_seeded: bool | None          # v4 `isSeeded`; for v0 derived from the presence of seedLength
    seed_length: int | None         # v0 `seedLength`
    origin: str | None
    created_at: int | None
    cwd: str | None
    project_dir: str | None         # `--<slug>--` / `_no-cwd` directory (DSH layout only)
    encoding: Literal["jsonl", "zstd"]
    children: tuple[str, ...] = ()  # ids of sessions found here whose parentSession is this id
    older_generations: tuple[Path, ...] = ()
    header_error: str | None = None
    notes: tuple[str, ...] = ()     # layout observations (identity mismatch, mixed encodings, ...)
    skipped: str | None = None      # why this entry was listed but not read (see the module doc)


# -- header reading ------------------------------------------------------------------------------

def read_header_line(path: Path) -> tuple[bytes, Literal["jsonl", "zstd"]]:
    """The first plaintext line of a log (without its newline) and the sniffed encoding.

    Reads at most `HEADER_LIMIT` plaintext bytes. Raises `OSError` when the file cannot be read
    and `ValueError` (one line, naming no path) when no complete first line is found.
    """
    with open(path, "rb") as fh:
        magic = fh.read(4)
        fh.seek(0)
        if magic == ZSTD_MAGIC:
            return _first_frame_line(fh), "zstd"
        data = fh.read(HEADER_LIMIT + 1)
    end = data.find(b"\n")
    if end < 0:
        if not data:
            raise InvalidArgument("empty file: no header line")
        if len(data) > HEADER_LIMIT:
            raise InvalidArgument(f"no header line within the first {HEADER_LIMIT} bytes")
        raise InvalidArgument("header line has no terminating newline")
    return data[:end], "jsonl"


def _first_frame_line(fh: Any) -> bytes:
    # A stream reader bounds the output of each read: a hostile frame may expand to gigabytes.
    reader = zstandard.ZstdDecompressor().stream_reader(fh, read_across_frames=False)
    out = bytearray()
    try:
        while len(out) <= HEADER_LIMIT and b"\n" not in out:
            chunk = reader.read(1 << 16)
            if not chunk:
                break
            out += chunk
    except zstandard.ZstdError as exc:
        raise InvalidArgument(f"first zstd frame does not decompress: {exc}") from None
    end = out.find(b"\n")
    if end < 0:
        if len(out) > HEADER_LIMIT:
            raise InvalidArgument(f"no header line within the first {HEADER_LIMIT} plaintext bytes")
        raise InvalidArgument("first zstd frame holds no complete header line")
    return bytes(out[:end])


def _header_fields(header: dict) -> dict[str, Any]:
    def text(key: str) -> str | None:
        value = header.get(key)
        return value if type(value) is str else None

    def count(key: str) -> int | None:
        value = header.get(key)
        return int(value) if is_nonneg_safe_int(value) else None

    version = header.get("version")
    seed_length = count("seedLength")
    seeded = header.get("isSeeded")
    if type(seeded) is bool:
        is_seeded: bool | None = seeded                 # v2+ headers
    elif "seedLength" in header:
        is_seeded = True                                # v0/v1: seeded iff seedLength is present
    elif is_number(version) and version < 2:
        is_seeded = False
    else:
        is_seeded = None
    return {
        "session_id": text("id"),
        "format_version": (int(version) if is_safe_int(version) else version)
        if is_number(version) else None,
        "parent_session": text("parentSession"),
        "depth": count("delegationDepth"),
        "is_seeded": is_seeded,
        "seed_length": seed_length,
        "origin": text("origin"),
        "created_at": count("createdAt"),
        "cwd": text("cwd"),
    }


def describe(path: Path, *, generation: int | None = None,
             project_dir: str | None = None) -> SessionRef:
    """A `SessionRef` for one log file, from its header only (never raises for bad content)."""
    fields: dict[str, Any] = dict.fromkeys(
        ("session_id", "format_version", "parent_session", "depth", "is_seeded", "seed_length",
         "origin", "created_at", "cwd"))
    error = None
    encoding: Literal["jsonl", "zstd"] = "zstd" if path.name.endswith(".zstd") else "jsonl"
    try:
        line, encoding = read_header_line(path)
        header = loads(line)
        if type(header) is not dict:
            error = "first line is not a JSON object"
        else:
            fields.update(_header_fields(header))
            if header.get("type") != "session":
                error = "first line is not a session header (type is not \"session\")"
    except OSError as exc:
        error = f"cannot read: {exc.strerror or exc}"
    except JSONError:
        error = "header line is not valid JSON"
    except ValueError as exc:
        error = str(exc)
    if generation is None:
        generation = generation_from_name(path.name)
    return SessionRef(path=path, generation=generation, project_dir=project_dir,
                      encoding=encoding, header_error=error, **fields)


# -- walking -------------------------------------------------------------------------------------

def _scan(directory: Path) -> list[os.DirEntry]:
    try:
        with os.scandir(directory) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError as exc:
        raise LogUnreadable(f"{directory}: cannot list directory: {exc.strerror or exc}") from None


def _skipped(path: Path, why: str) -> SessionRef:
    """A listed entry that is not read (an unreadable directory, a FIFO or device)."""
    return SessionRef(path=path, session_id=None, generation=canonical_generation(path.name),
                      format_version=None, parent_session=None, depth=None, is_seeded=None,
                      seed_length=None, origin=None, created_at=None, cwd=None, project_dir=None,
                      encoding="zstd" if path.name.endswith(".zstd") else "jsonl",
                      header_error=why, skipped=why)


def _not_regular(entry: os.DirEntry) -> SessionRef | None:
    kind = special_file(entry.path)
    if kind is None:
        return None
    return _skipped(Path(entry.path), f"skipped: {kind}, not a regular file (never opened)")


def _session_in_dir(directory: Path, entries: list[os.DirEntry]) -> SessionRef | None:
    """The session of one session directory (highest canonical generation), if any."""
    found: list[tuple[int, bool, Path]] = []
    special: list[SessionRef] = []
    for entry in entries:
        generation = canonical_generation(entry.name)
        if generation is not None and entry_is_file(entry) and special_file(entry.path) is None:
            found.append((generation, entry.name.endswith(".zstd"), Path(entry.path)))
        elif generation is not None and (odd := _not_regular(entry)) is not None:
            special.append(odd)
    if not found:
        return special[-1] if special else None
    found.sort(key=lambda g: (g[0], g[1]))
    generation, _, path = found[-1]
    notes = []
    encodings = {z for _, z, _ in found}
    if len(encodings) > 1:
        notes.append("session directory mixes .jsonl and .jsonl.zstd generations "
                     "(the harness refuses such a directory)")
    parent = directory.parent.name
    project = parent if (parent.startswith("--") and parent.endswith("--")) or \
        parent == "_no-cwd" else None
    ref = describe(path, generation=generation, project_dir=project)
    if ref.session_id == "":
        notes.append(f"header id is empty: it maps to no directory, not {directory.name!r}")
    elif ref.session_id is not None and encode_segment(ref.session_id) != directory.name:
        notes.append(f"header id {ref.session_id!r} does not map to directory {directory.name!r}")
    if project is not None and ref.header_error is None and ref.cwd != "":
        expected = project_dir_name(ref.cwd)
        if expected != project:
            notes.append(f"header cwd maps to project directory {expected!r}, not {project!r}")
    if (ref.format_version is not None and ref.header_error is None
            and ref.format_version != generation):
        notes.append(f"file name says generation {generation}, header version is "
                     f"{ref.format_version}")
    older = tuple(p for _, _, p in found[:-1])
    return replace(ref, older_generations=older, notes=ref.notes + tuple(notes))


def _single_file(path: Path) -> SessionRef:
    """One log file named on its own: a canonical generation file also names the other
    generations beside it (older ones listed; a newer one, which is the session's log, noted)."""
    generation = canonical_generation(path.name)
    ref = describe(path, generation=generation)
    if generation is None:
        return ref
    try:
        siblings = [(canonical_generation(e.name), Path(e.path)) for e in _scan(path.parent)]
    except LogUnreadable:
        return ref
    siblings = sorted((g, p) for g, p in siblings if g is not None and p.name != path.name)
    older = tuple(p for g, p in siblings if g < generation)
    newer = [p.name for g, p in siblings if g > generation]
    notes = (f"a newer generation of this session is beside it: {newer[-1]} "
             "(the highest generation is the session's log)",) if newer else ()
    return replace(ref, older_generations=older, notes=ref.notes + notes)


def _is_loose_name(name: str) -> bool:
    return (name.endswith(".jsonl") or name.endswith(".jsonl.zstd")) \
        and canonical_generation(name) is None


def _walk(root: Path) -> list[SessionRef]:
    refs: list[SessionRef] = []
    pending = [(root, 0)]
    while pending:
        directory, depth = pending.pop(0)
        try:
            entries = _scan(directory)
        except LogUnreadable as exc:
            if depth == 0:
                raise
            refs.append(_skipped(directory, str(exc).removeprefix(f"{directory}: ")))
            continue
        ref = _session_in_dir(directory, entries)
        if ref is not None:
            refs.append(ref)
            continue  # a session directory holds no further sessions
        if depth == 0:
            for entry in entries:
                if not _is_loose_name(entry.name):
                    continue
                odd = _not_regular(entry)
                if odd is not None:
                    refs.append(odd)
                elif entry_is_file(entry):
                    loose = describe(Path(entry.path))
                    if loose.header_error is None or loose.session_id is not None \
                            or generation_from_name(entry.name) is not None:
                        refs.append(loose)    # its name claims a log: listed, header error and all
        if depth < _MAX_WALK_DEPTH:
            pending.extend((Path(e.path), depth + 1) for e in entries
                           if e.is_dir(follow_symlinks=False))
    return refs


def _link(refs: list[SessionRef]) -> list[SessionRef]:
    """Fill `children` and order parents before their children (roots by project, time, id)."""
    by_id: dict[str, list[int]] = {}
    for i, ref in enumerate(refs):
        if ref.session_id is not None:
            by_id.setdefault(ref.session_id, []).append(i)
    kids: dict[int, list[int]] = {}
    roots: list[int] = []
    for i, ref in enumerate(refs):
        parents = by_id.get(ref.parent_session or "", [])
        parents = [p for p in parents if p != i]
        if parents:
            same_project = [p for p in parents if refs[p].project_dir == ref.project_dir]
            kids.setdefault((same_project or parents)[0], []).append(i)
        else:
            roots.append(i)

    def key(i: int) -> tuple:
        r = refs[i]
        return (r.project_dir or "", r.created_at or 0, r.session_id or "", str(r.path))

    ordered: list[SessionRef] = []
    seen: set[int] = set()

    def visit(i: int) -> None:
        if i in seen:
            return
        seen.add(i)
        children = sorted(kids.get(i, []), key=key)
        ordered.append(replace(refs[i], children=tuple(
            refs[c].session_id for c in children if refs[c].session_id is not None)))
        for c in children:
            visit(c)

    for i in sorted(roots, key=key):
        visit(i)
    for i in sorted(range(len(refs)), key=key):  # parent cycles: keep everything exactly once
        visit(i)
    return ordered


def find_sessions(root: str | os.PathLike | Iterable[str | os.PathLike]) -> list[SessionRef]:
    """Every session under `root` (a session root, project or session directory, a single log
    file, or a list of these), parents before their children.

    Raises `LogUnreadable` for a missing path and for a directory holding no session.
    """
    if isinstance(root, (str, os.PathLike)):
        paths = [Path(root)]
    else:
        paths = [Path(p) for p in root]
    refs: list[SessionRef] = []
    seen: set[Path] = set()
    for path in paths:
        if path.is_dir():
            found = _walk(path)
            if not found:
                raise LogUnreadable(f"{path}: no DSH session logs found in this directory "
                                    "(expected --<project>--/<id>/session[.vN].jsonl[.zstd] "
                                    "or *.jsonl files)")
        elif path.exists():
            kind = special_file(path)
            found = [_single_file(path) if kind is None else
                     _skipped(path, f"skipped: {kind}, not a regular file (never opened)")]
        else:
            raise LogUnreadable(f"{path}: no such file or directory")
        for ref in found:
            try:
                key = ref.path.resolve()
            except (OSError, RuntimeError):   # a symbolic link loop (3.11 raises RuntimeError)
                key = ref.path.absolute()
            if key not in seen:
                seen.add(key)
                refs.append(ref)
    return _link(refs)
