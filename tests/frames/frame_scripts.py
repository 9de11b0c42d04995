"""Sessions built in memory from `workbench.build` scripts, for the frames tests."""
from __future__ import annotations

from tour_script import tour_script

from workbench.build import LogBuilder
from workbench.io.model import Log
from workbench.session import Session


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
    return tour_script(version, session_id="session-frames",
                       user_text="Upgrade dependencies <b>now</b>",
                       second_result_error=True, failed_attempt=True)


