"""The header record: version dispatch and the v0 / v4 header checks. Layer: io (stdlib only).

Reference order (v0 spec §1.3, v4 spec §0.1 and §1.3; reference ``parseHeaderRecord``,
``refuseForeignFormatVersion``, ``assertNoRetiredHeaderFields``, ``isHeaderLine``,
``fromHeaderLine``):

1. the first record is exactly one complete line, else ``empty or header-less session log``;
2. it parses as JSON (UTF-8 with replacement, a BOM is not whitespace), else corrupt;
3. v4 only: it is a JSON object (v0 lets a scalar fall through to step 5);
4. **version refusal first**: a numeric ``version`` other than the reader's is refused as
   unsupported (not corruption) before any shape check, naming the id through ``String(id)``;
5. v4: retired policy keys, then the exact header shape (unknown keys are errors);
   v0: the header shape (unknown keys are dropped), then retired policy keys.

Which reader applies is the *generation*: given by the caller, else by the file name
(``session.jsonl`` = 0, ``session.v3.jsonl`` = 3, ``session.v4.jsonl`` = 4, spec v4 §0.1 item 3),
else by the header's own ``version``. Inside a generation-0 or generation-4 file any other numeric
version is refused with the reference texts. Generation 3 (DSH 0.1.5) has the v4 header shape
(``isSeeded``, exact keys); a ``session.v3.jsonl`` holding another version is refused the same way.
Generations 1 and 2 were never released and are refused as "older than the supported v4", distinct
from corruption (`workbench.io.generations`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.io import jsjson, jsvalues
from workbench.io.generations import READABLE
from workbench.io.jsjson import is_neg_zero, is_safe_int
from workbench.io.layout import generation_from_name
from workbench.io.scan import ScanIssue


_V4_REQUIRED = ("type", "version", "id", "createdAt", "isSeeded", "delegationDepth")
_V4_KEYS = frozenset(_V4_REQUIRED + ("cwd", "parentSession", "origin", "agentPreset"))

HEADER_MISSING = "empty or header-less session log"
HEADER_NOT_JSON = "corrupt session log: header line is not valid JSON"


@dataclass(frozen=True, slots=True)
class HeaderResult:
    """Outcome of reading the header record.

    `generation` is the reader that applies (0, 3 or 4; for an invalid header the one its features
    suggest, so a lenient reader can still show the rows). `meta` is the reference's parsed header
    (``fromHeaderLine``) when the header is valid; `issue` the first problem, if any. `raw` is the
    parsed JSON value (absent when the record is missing or not JSON).
    """

    generation: int
    meta: dict | None
    raw: Any
    issue: ScanIssue | None

    @property
    def readable(self) -> bool:
        """Whether rows can be read at all (a refusal or an unparsable header stops reading)."""
        return self.issue is None or self.issue.kind in ("header_invalid", "header_retired_fields",
                                                         "header_name_mismatch")


def version_refusal(session_id: Any, version: Any, *, reader: int) -> str:
    """The reference's direction-aware refusal text (reference: sessionFormatVersionRefusal)."""
    sid = session_id if type(session_id) is str else jsvalues.js_str(session_id)
    shown = jsvalues.js_str(version)
    if reader == 0:
        return (f'session "{sid}" uses log format v{shown}, but this harness reads only v0: '
                "the log was written by a newer harness \u2014 upgrade the harness to open it")
    if version > 4:
        return (f'session "{sid}" uses log format v{shown}, but this harness reads only v4: '
                "the log was written by a newer harness \u2014 upgrade the harness to open it")
    if reader == 3:
        return (f'session "{sid}" uses log format v{shown}, but its file is a v3 generation '
                "(session.v3.jsonl): the file name and the header disagree")
    return (f'session "{sid}" uses log format v{shown}, older than the supported v4, '
            "and this build ships no upgrade path for it")


def _refusal(raw: dict, version: Any, reader: int) -> ScanIssue:
    """A version refusal; kinds: v0 ``unsupported_version``, v4 ``unsupported_newer``/``_older``."""
    kind = ("unsupported_version" if reader == 0 else "unsupported_newer" if version > 4
            else "unsupported_older" if reader == 4 or version < 3 else "unsupported_generation")
    return ScanIssue(kind,
                     version_refusal(raw.get("id", jsjson.ABSENT), version, reader=reader),
                     "SessionFormatUnsupportedError", "unsupported", line=0)


def _count(value: Any) -> bool:
    return is_safe_int(value) and value >= 0 and not is_neg_zero(value)


def is_header_v4(value: dict) -> bool:
    """Reference ``isHeaderLine`` of format v4: exact key set and field types."""
    if any(key not in value for key in _V4_REQUIRED) or any(key not in _V4_KEYS for key in value):
        return False
    cwd = value.get("cwd", jsjson.ABSENT)
    origin = value.get("origin", jsjson.ABSENT)
    preset = value.get("agentPreset", jsjson.ABSENT)
    parent = value.get("parentSession", jsjson.ABSENT)
    return (value["type"] == "session" and jsjson.is_number(value["version"])
            and type(value["id"]) is str and _count(value["createdAt"])
            and _count(value["delegationDepth"])
            and (cwd is jsjson.ABSENT or (type(cwd) is str and cwd.startswith("/")))
            and (parent is jsjson.ABSENT or type(parent) is str)
            and type(value["isSeeded"]) is bool
            and (origin is jsjson.ABSENT or origin == "subagent")
            and (preset is jsjson.ABSENT or type(preset) is str))


def is_header_v0(value: Any) -> bool:
    """Reference ``isHeaderLine`` of format v0: optional fields other than origin/preset unchecked."""
    if type(value) is not dict:
        return False
    origin = value.get("origin", jsjson.ABSENT)
    preset = value.get("agentPreset", jsjson.ABSENT)
    return (value.get("type") == "session" and jsjson.is_number(value.get("version"))
            and type(value.get("id")) is str and _count(value.get("createdAt"))
            and _count(value.get("delegationDepth"))
            and (origin is jsjson.ABSENT or origin == "subagent")
            and (preset is jsjson.ABSENT or type(preset) is str))


def _meta(value: dict, generation: int) -> dict:
    """Reference ``fromHeaderLine``: the logical header in writer key order, unknown keys dropped."""
    meta: dict[str, Any] = {"version": generation, "id": value["id"], "createdAt": value["createdAt"]}
    for key in ("cwd", "parentSession"):
        if key in value:
            meta[key] = value[key]
    if generation == 0:  # DSH 0.1.2 writes seedLength only in a forked child's header
        if "seedLength" in value:
            meta["seedLength"] = value["seedLength"]
    else:
        meta["isSeeded"] = value["isSeeded"]
    if "origin" in value:
        meta["origin"] = value["origin"]
    meta["delegationDepth"] = value["delegationDepth"]
    if "agentPreset" in value:
        meta["agentPreset"] = value["agentPreset"]
    return meta


def _sniff(value: Any) -> int:
    """The generation an invalid header's features suggest (spec v4 §0.3): v4 has ``isSeeded``."""
    if type(value) is dict and "isSeeded" in value and "seedLength" not in value:
        return 4
    return 0


def _invalid(message: str = "corrupt session log: first line is not a session header",
             kind: str = "header_invalid") -> ScanIssue:
    return ScanIssue(kind, message, line=0)


_RETIRED = ScanIssue("header_retired_fields", "session header uses retired policy baseline fields", line=0)


def parse_header_record(record: bytes, *, generation: int | None = None,
                        name: str | None = None) -> HeaderResult:
    """Read the first record (including its ``\\n``) with the reader `generation`.

    `generation` None: decided by `name` (`generation_from_name`), else by the header's version.
    """
    gen = claimed = generation if generation is not None else generation_from_name(name)
    fallback = gen if gen in READABLE else 4
    if not record or record[-1:] != b"\n" or record.find(b"\n") != len(record) - 1:
        return HeaderResult(fallback, None, jsjson.ABSENT, _invalid(HEADER_MISSING, "header_missing"))
    try:
        value = jsjson.loads(record[:-1])
    except (ValueError, UnicodeDecodeError, RecursionError):
        return HeaderResult(fallback, None, jsjson.ABSENT,
                            _invalid(HEADER_NOT_JSON, "header_not_json"))
    version = value.get("version", jsjson.ABSENT) if type(value) is dict else jsjson.ABSENT
    numeric = jsjson.is_number(version)
    sniffed = gen is None or gen not in READABLE
    if sniffed:
        if numeric and version in READABLE:
            gen = int(version)
        elif numeric:
            return HeaderResult(4, None, value, _refusal(value, version, 4))
        else:
            gen = _sniff(value) if type(value) is dict else fallback
    if gen >= 3:
        if type(value) is not dict:
            return HeaderResult(gen, None, value, _invalid("corrupt session log: first line is not a JSON object",
                                                           "header_not_object"))
        if numeric and version != gen:
            return HeaderResult(gen, None, value, _refusal(value, version, gen))
        if "sandboxMode" in value or "approvalPolicy" in value:
            return HeaderResult(gen, None, value, _RETIRED)
        if not is_header_v4(value):
            return HeaderResult(_sniff(value) if sniffed else gen, None, value, _invalid())
        return HeaderResult(gen, _meta(value, gen), value, _disagreement(claimed, gen))
    if numeric and version != 0:
        return HeaderResult(0, None, value, _refusal(value, version, 0))
    if not is_header_v0(value):
        return HeaderResult(0, None, value, _invalid())
    if "sandboxMode" in value or "approvalPolicy" in value:
        return HeaderResult(0, None, value, _RETIRED)
    return HeaderResult(0, _meta(value, 0), value, _disagreement(claimed, 0))


def _disagreement(claimed: int | None, generation: int) -> ScanIssue | None:
    """Spec v4 §0.1 item 3: a file named for a generation this build does not read (1, 2, above 4)
    whose valid header is of a readable one is corrupt; its rows are still read by the header's
    reader (a lenient display). A readable generation's own mismatches are refusals above."""
    if claimed is None or claimed == generation:
        return None
    return ScanIssue("header_name_mismatch", "corrupt session log: the file name says generation "
                     f"{claimed} (session.v{claimed}.jsonl) but the header is version {generation}",
                     line=0)


__all__ = ["HeaderResult", "READABLE", "is_header_v0", "is_header_v4",
           "parse_header_record", "version_refusal"]
