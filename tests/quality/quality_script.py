"""A log written with `workbench.build` whose every anchor, fate and re-fetch is known in advance
(the expectations live in `test_quality.py`, written by hand from the script)."""
from __future__ import annotations

from workbench.build import LogBuilder

TOOLS = [{"name": "read", "description": "Read a file", "parameters": {
    "type": "object", "properties": {"file_path": {"type": "string"}}}},
         {"name": "bash", "description": "Run a command", "parameters": {
             "type": "object", "properties": {"command": {"type": "string"},
                                              "sandbox_permissions": {"type": "string"}}}}]

SUMMARY_1 = ("Fixed src/app.py: parse_config raised KeyError. Ran pytest -q tests. "
             "See https://docs.example.com/fix and commit 9f8e7d6c.")
SUMMARY_2 = "Updated README.md after fixing parse_config."


def quality_script(version: int = 4) -> LogBuilder:
    b = LogBuilder(version=version, session_id="session-quality", cwd="/work/demo")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("Fix the crash in src/app.py. Never edit setup.cfg by hand.")
            b.request_header(tools=TOOLS)
            call = b.assistant("Reading.", tool_calls=[("read", {"file_path": "src/app.py"})])
            b.tool_result(call.call_ids[0], text="def parse_config():\n    raise KeyError\n"
                          + "    pass  # filler\n" * 30)   # the summary must be smaller
        with b.step():
            call = b.assistant("Testing.", tool_calls=[(
                "bash", {"command": "pytest -q tests", "sandbox_permissions": "none"})])
            b.tool_result(call.call_ids[0], text="collected 3 items\n[exit code: 1]")
        with b.step():
            b.assistant("Found it.")
    first = b.compact(summary=SUMMARY_1)
    with b.turn():
        with b.step():
            b.user("Now update README.md too.")
            call = b.assistant("Re-reading.", tool_calls=[("read", {"file_path": "src/app.py"})],
                               usage={"inputTokens": 40, "cacheReadTokens": 100,
                                      "cacheWriteTokens": 7, "outputTokens": 9})
            b.tool_result(call.call_ids[0], text="def parse_config():\n    return {}")
        with b.step():
            b.assistant("Done.")
    second = b.compact(summary=SUMMARY_2)
    with b.turn():
        with b.step():
            b.user("Thanks.")
            b.assistant("Bye.")
    b.first, b.second = first, second  # type: ignore[attr-defined]
    return b
