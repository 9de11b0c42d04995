"""Exception tree of the workbench. Each layer raises its own class; all share one root.

    WorkbenchError
    ├── LogUnreadable        (io)   the path cannot be read at all: missing, a directory, no permission
    ├── LogRefused           (io)   a log of a format version we do not read ("upgrade the harness")
    ├── LogCorrupt           (io)   only in strict mode: the reference loader would reject the log
    ├── FoldError            (core) a surface-fold rule broken at a seq; carries a stable `kind`
    └── MeterError           (core) a token meter cannot count (tokenizer files missing, bad replay)

Data problems in a log are normally *not* raised: loading returns the valid prefix plus a list of
`Defect`s (see `workbench.io.model`). Exceptions are for callers that ask for strictness, and for
inputs that are not a log at all.
"""
from __future__ import annotations


class WorkbenchError(Exception):
    """Root of every error this package raises on purpose."""


class LogUnreadable(WorkbenchError):
    """The path cannot be read (missing, a directory without sessions, permission denied)."""


class LogRefused(WorkbenchError):
    """The log declares a format version this build does not read."""


class LogCorrupt(WorkbenchError):
    """Strict loading: the reference loader would reject this log as corrupt."""


class FoldError(WorkbenchError):
    """A surface-fold rule broken by the event at `seq`.

    `kind` is one of the stable kinds of `shared/conformance*/INDEX.md` (for example
    ``replace_start_not_found``); `message` is the reference's exact text.
    """

    def __init__(self, kind: str, seq: int | None, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.seq = seq
        self.message = message

    def __repr__(self) -> str:
        return f"FoldError(kind={self.kind!r}, seq={self.seq!r}, message={self.message!r})"


class MeterError(WorkbenchError):
    """A token meter cannot produce a count."""
