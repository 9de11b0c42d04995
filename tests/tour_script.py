"""The "tour" log shared by the builder, frames and view tests: two turns with tools, a prune,
then completed, nested, failed, manual and interrupted compaction brackets and an end-seed.

One script with a few switches, so every layer's tests exercise the same story."""
from __future__ import annotations

from typing import Any

from workbench.build import LogBuilder

TOOLS = [{"name": "read", "description": "Read a file", "parameters": {"type": "object"}}]


def tour_script(version: int, *, session_id: str = "session-test",
                user_text: str = "Upgrade dependencies",
                first_reply: str = "Reading both files.",
                context_window: int | None = None,
                second_result_error: bool = False,
                failed_attempt: bool = False,
                **builder_options: Any) -> LogBuilder:
    b = LogBuilder(version=version, session_id=session_id, **builder_options)
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user(user_text)
            b.request_header(tools=TOOLS, max_tokens=2048)
            if context_window is not None:
                b.request_context(context_window=context_window)
            a = b.assistant(first_reply, reasoning="Look first.",
                            tool_calls=[("read", {"path": "pyproject.toml"}),
                                        ("read", {"path": "setup.cfg"})])
            b.tool_result(a.call_ids[0], text="[project]\nname = 'x'\n" * 300)
            if second_result_error:
                b.tool_result(a.call_ids[1], text="missing", is_error=True)
            else:
                b.tool_result(a.call_ids[1], text="nothing here")
        with b.step():
            if failed_attempt:
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
