"""DSH's names on disk: a session's directory and its canonical log file names. Layer: io.

The JSONL backend stores one directory per session (v0 spec §1.1, v4 spec §1.1)::

    <root>/--<project-slug>--/<escaped session id>/session[.vN].jsonl[.zstd]
    <root>/_no-cwd/<escaped session id>/...

* `encode_segment` / `decode_segment`: a session id as a directory name and back (reference
  encodeSegment: every UTF-16 unit outside ``[A-Za-z0-9._-]``, and ``~``, as ``~XXXX``;
  ``.`` and ``..`` escaped). Injective; decoding is lenient (a malformed escape stays literal).
* `project_dir_name`: a cwd as its project directory (reference projectKey: each run of path
  separators one ``-``, at most 251 slug characters).
* `canonical_generation`: the generation a canonical file name declares: ``session.jsonl`` is
  0, ``session.vN.jsonl`` is N (N >= 1, no leading zero), each optionally ``.zstd``; any other
  name is not a session log (reference parseSessionFormatLogFilename).
* `generation_from_name`: the generation a log file's name claims when it is read on its own (a
  hint, spec v4 §0.1 item 3): its canonical base name, also behind a flattened copy's label
  (``<label>__session.v4.jsonl``, ``<label>--session.jsonl``, as the corpus names its copies);
  any other name (``my-session.jsonl``, ``x.jsonl``) claims nothing and the header decides.
"""
from __future__ import annotations

import re

from workbench.errors import InvalidArgument

_CANONICAL = re.compile(r"^session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?$")
_SAFE_UNIT = re.compile(r"[A-Za-z0-9._-]")


def _escape_unit(code: int) -> str:
    return f"~{code:04X}"


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [raw[i] | (raw[i + 1] << 8) for i in range(0, len(raw), 2)]


def encode_segment(raw: str) -> str:
    """A session id as its directory name (injective; ``.``/``..`` escaped)."""
    if raw == "":
        raise InvalidArgument("cannot encode an empty path segment")
    if raw == ".":
        return "~002E"
    if raw == "..":
        return "~002E~002E"
    out = []
    for code in _utf16_units(raw):
        ch = chr(code)
        out.append(ch if ch != "~" and _SAFE_UNIT.fullmatch(ch) else _escape_unit(code))
    return "".join(out)


def decode_segment(name: str) -> str:
    """Inverse of `encode_segment` (lenient: a malformed escape is kept literally)."""
    if "~" not in name:
        return name
    units: list[int] = []
    i = 0
    while i < len(name):
        if name[i] == "~" and re.fullmatch(r"[0-9A-F]{4}", name[i + 1:i + 5]):
            units.append(int(name[i + 1:i + 5], 16))
            i += 5
        else:
            units.extend(_utf16_units(name[i]))
            i += 1
    data = b"".join(u.to_bytes(2, "little") for u in units)
    return data.decode("utf-16-le", "surrogatepass")


def project_dir_name(cwd: str | None) -> str:
    """The project directory of a session cwd: ``--<slug>--`` or ``_no-cwd``."""
    if cwd is None:
        return "_no-cwd"
    if cwd == "":
        raise InvalidArgument("cannot encode an empty project path")
    out: list[str] = []
    separator_run = False
    for code in _utf16_units(cwd):
        ch = chr(code)
        if ch in "/\\:":
            if not separator_run:
                out.append("-")
            separator_run = True
        else:
            out.append(ch if ch != "~" and _SAFE_UNIT.fullmatch(ch) else _escape_unit(code))
            separator_run = False
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def canonical_generation(name: str) -> int | None:
    """The generation a canonical session file name declares, else None."""
    match = _CANONICAL.match(name)
    if match is None:
        return None
    return int(match.group(1)) if match.group(1) else 0


def generation_from_name(name: str | None) -> int | None:
    """The generation a log file's name claims (see the module docstring), else None."""
    if not name:
        return None
    base = re.split(r"[/\\]", name)[-1]
    return canonical_generation(re.split(r"__|--", base)[-1])


__all__ = ["canonical_generation", "decode_segment", "encode_segment", "generation_from_name",
           "project_dir_name"]
