"""Sample sessions for the view tests, written by the log builder and loaded like a user would."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.build import LogBuilder

TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]

PAYLOADS = ("<script>window.__pwned = 1</script>",
            '<img src=x onerror="window.__pwned = 2">',
            '<a href="javascript:window.__pwned = 3">click me</a>')


def sample_script(version: int = 4, *, user_text: str = "Upgrade dependencies") -> LogBuilder:
    """Seqs (v4): 2 system, 3 user, 6 assistant (2 calls), 8/10 results, 17-18 prune of 8,
    19-23 compaction (checkpoint 22 replaces 3..13), 28-32 nested compaction (31 replaces
    22..26), 34-36 failed, 37-43 manual (41), 44 interrupted start, 46 end-seed."""
    b = LogBuilder(version=version, session_id="session-test")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user(user_text)
            b.request_header(tools=TOOLS, max_tokens=2048)
            b.request_context(context_window=20000)
            a = b.assistant("Reading both files.", reasoning="Look first.",
                            tool_calls=[("read", {"path": "pyproject.toml"}),
                                        ("read", {"path": "setup.cfg"})])
            b.tool_result(a.call_ids[0], text="[project]\nname = 'x'\n" * 300)
            b.tool_result(a.call_ids[1], text="nothing here")
        with b.step():
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


def load_session(path: Path):
    import workbench
    return workbench.load(path)


@pytest.fixture
def payloads() -> tuple[str, ...]:
    return PAYLOADS


@pytest.fixture
def load():
    return load_session


@pytest.fixture
def session(tmp_path: Path):
    path = tmp_path / "session.v4.jsonl"
    sample_script().write(path)
    return load_session(path)


@pytest.fixture
def payload_session(tmp_path: Path):
    path = tmp_path / "payload.v4.jsonl"
    b = LogBuilder(version=4, session_id="<b>session</b>")
    with b.turn():
        with b.step():
            b.system(PAYLOADS[0])
            b.user(" ".join(PAYLOADS))
            b.request_header(tools=TOOLS)
            call = b.assistant(PAYLOADS[1], tool_calls=[("read", {"path": PAYLOADS[2]})])
            b.tool_result(call.call_ids[0], text=" ".join(reversed(PAYLOADS)))
    b.write(path)
    return load_session(path)
