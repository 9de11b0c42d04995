"""What every subcommand does alike: load a log or say in one line why not, and turn the
log's own defects into the findings exit code. Layer: cli."""
from __future__ import annotations

import re
import sys
from typing import Any

from workbench.errors import WorkbenchError

EXIT_OK, EXIT_FINDINGS, EXIT_UNUSABLE = 0, 1, 2
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def clean(text: Any) -> str:
    """One printable line: control and bidi characters escaped (log text is untrusted)."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), str(text))


def short(text: Any, limit: int = 120) -> str:
    """`text` for a listing: at most about `limit` characters (a session id may be megabytes
    long): its head, an ellipsis with the full length, and its tail."""
    text = str(text)
    if len(text) <= limit:
        return text
    keep = max(limit // 2 - 10, 8)
    return f"{text[:keep]}…[{len(text)} chars]…{text[-keep // 2:]}"


def say(command: str, path: Any, message: str) -> None:
    """The one-line stderr message: `workbench COMMAND: PATH: message` (shortened to a line)."""
    path_text, message = str(path), str(message)
    if message.startswith(path_text + ": "):   # loader messages may already name the file
        message = message[len(path_text) + 2:]
    print(f"workbench {command}: {clean(short(path_text, 1000))}: {clean(short(message, 2000))}",
          file=sys.stderr)


def load_or_exit(command: str, path: str) -> Any:
    """The loaded `Log`, or the exit code 2 after one line on stderr (missing, unreadable,
    refused, or no session header at all)."""
    from workbench.core.load import load_log
    try:
        log = load_log(path)
    except (WorkbenchError, OSError) as exc:
        say(command, path, exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
        return EXIT_UNUSABLE
    if log.verdict == "refused":
        reason = log.defects[0].message if log.defects else "format version not supported"
        say(command, path, f"refused: {reason}")
        return EXIT_UNUSABLE
    if log.header is None:
        reason = log.defects[0].message if log.defects else "no session header"
        say(command, path, f"not a session log: {reason}")
        return EXIT_UNUSABLE
    return log


def defects_code(command: str, log: Any) -> int:
    """EXIT_FINDINGS (with one stderr line) when the log itself has defects, else EXIT_OK.

    The output was computed on everything readable; the exit code still says the log is damaged."""
    serious = [d for d in log.defects if d.severity != "warning"]
    if not serious and log.verdict == "clean":
        return EXIT_OK
    first = f"; first: {serious[0].rule}: {serious[0].message}" if serious else ""
    say(command, log.path, f"{len(serious)} defect(s), verdict {log.verdict}{first}")
    return EXIT_FINDINGS
