"""The one exception tree of the workbench: every exception the package raises derives from
`WorkbenchError`. The public classes live here; a few are defined next to the rule they carry
(their home is named below) and are re-exported by no one else. `tests/test_errors.py` checks
that every exception class defined anywhere in the package is listed here and derives from
`WorkbenchError`, and that no module raises a built-in exception directly.

    WorkbenchError
    ├── LogUnreadable           the path cannot be read at all: missing, a directory, no permission
    ├── LogRefused              a log of a format version we do not read ("upgrade the harness")
    ├── LogChanged              a loaded log's file changed on disk (replaced, truncated, rewritten)
    ├── LogCorrupt              only in strict mode: the reference loader would reject the log
    ├── FoldError               a surface-fold rule broken at a seq; carries a stable `kind`
    ├── MeterError              a token meter cannot count (tokenizer files missing, bad replay)
    ├── StoreUnusable           a session store that is not one, or that another export is writing
    ├── MigrationRefused        no exact v4 view of an older log can be built (`workbench migrate`)
    ├── OutputUnwritable        (OSError) an output path cannot be written (folder, permission, disk)
    ├── caller mistakes (each also derives from the built-in a caller would catch)
    │   ├── InvalidArgument     (ValueError) a bad argument value (engine, compression, lengths)
    │   ├── UnknownName         (KeyError) an unknown frame or meter name
    │   ├── SeqOutOfRange       (IndexError) a seq or index outside the log
    │   ├── NotAnAttempt        (LookupError) a seq that is not a model-call attempt
    │   ├── MissingAttribute    (AttributeError) a module or frame attribute that does not exist
    │   ├── UnsupportedValue    (TypeError) a value JSON cannot represent
    │   ├── PriceError          (ValueError) a price table the cost ledger cannot use
    │   └── StepOutOfRange      (traitlets.TraitError) a widget step outside the log [views.state]
    ├── InternalError           (RuntimeError) a broken internal invariant: please report
    │   └── Unimplemented       (NotImplementedError) an interface method a subclass must provide
    ├── io: reading bytes into events (caught inside io; they become `Defect`s)
    │   ├── JSONError           (ValueError) not JSON as `JSON.parse` reads it   [io.jsjson]
    │   ├── IssueError          a scan issue (zstd structure, limits)           [io.scan]
    │   ├── RowIssue            a row the reference rejects, with its kind      [io.scan]
    │   ├── RowError            (ValueError) a malformed v0 packed row          [io.rows_v0]
    │   ├── RowDecodeError      a malformed v4 stored row                       [io.rows_v4]
    │   ├── SyntaxRefusal       a v3 or v4 row refused by admission             [io.retired]
    │   └── _Wrapper            a released tool-result wrapper found (internal) [io.retired]
    ├── core: semantics (caught inside core; they become defects or fold errors)
    │   ├── Violation           a broken v4 relationship/lifecycle rule         [core.lifecycle_values]
    │   ├── RestoreError        a seed the restore stage rejects                [core.restore]
    │   ├── StreamError         an invalid assistant stream record              [core.streams]
    │   ├── SettlementError     a settlement that disagrees with its stream     [core.streams]
    │   ├── AssemblyError       an assistant stream that cannot assemble        [core.assembly]
    │   ├── ToolPairingError    tool call/result pairing broken at a seq        [core.compaction.pairing]
    │   ├── PruneConfigError    an invalid tool-result pruner configuration     [core.compaction.pruner]
    │   ├── PruneError          a prune the pruner cannot reproduce             [core.compaction.pruner]
    │   ├── _Fail               the v0 compaction invariant failed (internal)   [core.compaction.invariant]
    │   └── WhatIfError         a counterfactual DSH could not have produced    [core.whatif.remap]
    │       └── DroppedReference  a kept event cites a dropped event            [core.whatif.remap]
    └── build: writing logs
        └── BuildError          a builder call that would write an invalid log  [build.state]

Data problems in a log are normally *not* raised: loading returns the valid prefix plus a list of
`Defect`s (see `workbench.io.model`). Exceptions are for callers that ask for strictness, for
caller mistakes, and for inputs that are not a log at all.
"""
from __future__ import annotations


class WorkbenchError(Exception):
    """Root of every error this package raises."""


class LogUnreadable(WorkbenchError):
    """The path cannot be read (missing, a directory without sessions, permission denied)."""


class LogChanged(WorkbenchError):
    """A loaded log's file no longer holds what the load read (replaced, deleted, truncated or
    rewritten): events read back later cannot be trusted; load the log again."""


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


class InvalidArgument(WorkbenchError, ValueError):
    """A caller passed an argument value the function does not accept."""


class UnknownName(WorkbenchError, KeyError):
    """A caller named a frame (or another registered thing) that does not exist."""


class SeqOutOfRange(WorkbenchError, IndexError):
    """A seq or index outside the log."""


class NotAnAttempt(WorkbenchError, LookupError):
    """A seq that is not a model-call attempt."""


class MissingAttribute(WorkbenchError, AttributeError):
    """An attribute that does not exist (module-level lazy names, frames by attribute)."""


class UnsupportedValue(WorkbenchError, TypeError):
    """A value JSON cannot represent."""


class InternalError(WorkbenchError, RuntimeError):
    """A broken internal invariant: a bug, never a property of the input."""


class Unimplemented(InternalError, NotImplementedError):
    """An interface method that a subclass must provide."""


class PriceError(InvalidArgument):
    """A price table the cost ledger cannot use (unknown model, missing or negative price)."""


class StoreUnusable(WorkbenchError):
    """A session store (`workbench.frames.store`) that cannot be used: the directory holds
    something that is not a store, or another export is writing it."""


class OutputUnwritable(WorkbenchError, OSError):
    """An output path (a Parquet folder, a file to write) cannot be written; the message names
    the path and the operating system's reason."""


class MigrationRefused(WorkbenchError):
    """An older log cannot be migrated to v4 exactly as DSH 0.2.1 would (the message says why)."""
