"""`session.whatif`: counterfactual sessions branched from a real one. Layer: frames.

Each method builds the counterfactual events in core (`workbench.core.whatif`), serialises them
exactly as DSH writes a log (compact `JSON.stringify` lines, the real header first) and reads the
bytes back with the real loader (`workbench.core.load.load_bytes`), so the result is an ordinary
`Session`: every frame, view, audit and the CLI work on it unchanged, and its `verdict` is the
loader's own. Nothing touches the disk until `Session.write(path)` is called.

A counterfactual session carries `label` (its summarizer), `branched_from` (the real path),
`fired` (one record per compaction or prune the counterfactual decided), `origin` (per seq,
the real seq it follows, for side-by-side plots) and `notices` (what it cannot know, in words).
"""
from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from workbench.core.whatif import Policy, WhatIfError, replay_policy
from workbench.core.whatif.edits import compact, replace_summary
from workbench.core.whatif.replay import Replay
from workbench.core.whatif.summarizers import resolve
from workbench.io.jsjson import stringify
from workbench.io.output import not_replaceable, same_file, write_replacing

SessionLike = Any
"""A `workbench.session.Session` (the frames layer never imports it: `tests/test_layering.py`)."""


def log_bytes(header: Mapping[str, Any] | None, events: Sequence[Mapping[str, Any]]) -> bytes:
    """The raw `.jsonl` bytes of a log, as DSH writes them (header line, one event per line)."""
    lines = ([stringify(header)] if header is not None else []) + [stringify(e) for e in events]
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogatepass")


def write_session(session: SessionLike, path: str | os.PathLike) -> str:
    """Write `session`'s log to `path` (raw JSONL; Zstandard when the name ends in ``.zstd``).

    Refuses to write over the file the session (or the session it branched from) was read from."""
    target = os.path.realpath(os.fspath(path))
    for source in (session.path, getattr(session, "branched_from", None)):
        if source and same_file(source, target):
            raise WhatIfError(f"refusing to write over the input log {source}")
    problem = not_replaceable(target)
    if problem is not None:
        raise WhatIfError(problem)
    data = getattr(session, "log_bytes", None) or log_bytes(session.log.header, session.events)
    if target.endswith(".zstd"):
        import zstandard
        first, _, rest = data.partition(b"\n")
        cctx = zstandard.ZstdCompressor(level=3, write_checksum=True, write_content_size=False)
        data = cctx.compress(first + b"\n") + (cctx.compress(rest) if rest else b"")
    write_replacing(target, data)
    return target


def _session(real: SessionLike, replay: Replay, label: str) -> SessionLike:
    from workbench.core.load import load_bytes
    data = log_bytes(real.log.header, replay.out)
    name = f"whatif[{label}]:{os.path.basename(real.path)}"
    session = type(real)(load_bytes(data, name=name, encoding="jsonl"))  # a Session, as `real` is
    session.label = label
    session.branched_from = real.path
    session.fired = list(replay.fired)
    session.origin = list(replay.origin)
    session.notices = list(replay.notices)
    session.log_bytes = data
    return session


class WhatIf:
    """Counterfactuals of one real session (`session.whatif`; module doc)."""

    def __init__(self, session: SessionLike) -> None:
        self.session = session

    def _events(self) -> tuple[Sequence[Mapping[str, Any]], Mapping[str, Any]]:
        s = self.session
        if s.version < 4 or s.log.header is None:
            raise WhatIfError("what-if needs a format v4 log with a header")
        if s.verdict != "clean":
            raise WhatIfError(f"what-if needs a clean log; this one is {s.verdict}")
        return s.events, s.log.header

    def replace_summary(self, compaction_id: str, text: str, *, label: str = "replaced") -> SessionLike:
        """The same bracket and range with another summary text."""
        events, header = self._events()
        return _session(self.session, replace_summary(events, header, compaction_id, text,
                                                      label=label), label)

    def compact(self, at: int, first: int | None = None, last: int | None = None, *,
                summary: Any = "mask", retain_tokens: int = 0) -> SessionLike:
        """A compaction right after seq `at` over first..last (default: DSH's own range with
        `retain_tokens`); `summary` is a text, a callable or a baseline name."""
        events, header = self._events()
        if isinstance(summary, str) and summary in ("mask", "extractive", "truncate"):
            fn, label = resolve(summary)
        elif callable(summary):
            fn, label = resolve(summary)
        else:
            fn, label = summary, "text"
        return _session(self.session, compact(events, header, at=at, first=first, last=last,
                                              summary=fn, label=label,
                                              retain_tokens=retain_tokens), label)

    def policy(self, *, summarizer: Any = "logged", **settings: Any) -> SessionLike:
        """DSH's automatic compaction replayed with other settings (`Policy` fields:
        context_window, threshold_ratio, retain_tokens, retain_ratio, headroom_tokens,
        max_tokens, compaction_retries, pruner)."""
        events, header = self._events()
        unknown = sorted(set(settings) - set(Policy.__dataclass_fields__))
        if unknown:
            known = ", ".join(Policy.__dataclass_fields__)
            raise WhatIfError(f"unknown policy setting(s) {', '.join(unknown)}; known: {known}")
        fn, label = resolve(summarizer)
        replay = replay_policy(events, header, Policy(**settings), fn, label=label)
        return _session(self.session, replay, label)
