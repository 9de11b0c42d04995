"""Sessions built in memory from `workbench.build` scripts, for the frames tests."""
from __future__ import annotations

from workbench.build import LogBuilder
from workbench.io.model import Log
from workbench.session import Session

TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]


def session_of(b: LogBuilder, *, implicit: bool = False) -> Session:
    """A Session over a builder's in-memory events (no file, no loader)."""
    events = b.events
    if implicit:  # a v0 fixture snapshot: seq by position, time 0 (v0 spec §1.11)
        events = [{**e, "time": 0} for e in events]
    header = b.header()
    return Session(Log(path=f"<{b.session_id}>", encoding="jsonl",
                       format_version=b.version, header=header, meta=header,
                       events=events, byte_length=0, implicit_seqs=implicit))


def empty_session(version: int = 4) -> Session:
    header = {"type": "session", "version": version, "id": "empty", "createdAt": 0,
              "delegationDepth": 0}
    return Session(Log(path="<empty>", encoding="jsonl", format_version=version, header=header,
                       meta=header, events=[], byte_length=0))


def script(version: int) -> LogBuilder:
    """Two turns with parallel tools (one failing), a prune, completed / nested / failed /
    manual / interrupted compactions, a failed attempt and a resumed lifecycle."""
    b = LogBuilder(version=version, session_id="session-frames")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("Upgrade dependencies <b>now</b>")
            b.request_header(tools=TOOLS, max_tokens=2048)
            a = b.assistant("Reading both files.", reasoning="Look first.",
                            tool_calls=[("read", {"path": "pyproject.toml"}),
                                        ("read", {"path": "setup.cfg"})])
            b.tool_result(a.call_ids[0], text="[project]\nname = 'x'\n" * 300)
            b.tool_result(a.call_ids[1], text="missing", is_error=True)
        with b.step():
            b.attempt_failed("SERVER", "provider error")
            b.assistant("Both read.")
    with b.turn():
        b.prune(b.surface[-3], head=100, tail=50)
        b.compact(summary="The user asked for an upgrade.")
        with b.step():
            b.user("Continue.")
            b.assistant("Continuing.")
        b.compact(summary="Nested summary.")
    b.compact(summary="too big", error="summary is not smaller than the shadowed content "
                                        "(9 estimated framed tokens >= 3)")
    b.compact(summary="Manual summary.", command=True)
    b.compact(summary="never finished", interrupted=True)
    b.end_seed()
    return b
