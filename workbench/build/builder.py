"""`LogBuilder`: write valid DSH session logs from a readable script. Layer: build (io + core).

    b = LogBuilder(version=4, session_id="session-1", cwd="/work/demo")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("Upgrade dependencies")
            b.request_header(tools=[{"name": "read", "description": "Read a file",
                                     "parameters": {"type": "object"}}])
            call = b.assistant("Reading.", tool_calls=[("read", {"path": "pyproject.toml"})])
            b.tool_result(call.call_ids[0], text="[project]\\n...")
        b.compact(summary="The user asked for an upgrade.")
    b.write("session.v4.jsonl", compression="zstd")

Both formats: v4 (nested assistant streams, tool-role results, `startSeq`/`endSeq` replaces,
`system/message` nodes, `isSeeded` headers) and v0 (top-level `assistant/chunk` events, optionally
packed into storage rows, wrapped `tool-result` blocks, `start`/`end` replaces, the system prompt in
`request/header`, `seedLength` headers). Every event goes through one `_emit`, which assigns seq
and time, feeds `ScriptState.track` and batches the event for the writer. Tool calls and other
log-only events live in `workbench.build.tools`; request headers and model calls (streams,
failed attempts) in `workbench.build.model_calls`; compaction, pruning, repair closers, forks
and subagents in `workbench.build.lineage` (all mixed in here).

Two output modes: in memory (`b.events`; `write()` / `write_to_root()` afterwards), or streaming
(`LogBuilder(..., stream_to=path)`, then `close()`), which never holds the whole log: batches go
to disk as they are completed and only the current surface is kept.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from workbench.build import shapes
from workbench.build.lineage import LineageScript
from workbench.build.model_calls import ModelCallScript
from workbench.build.state import BuildError, ScriptState
from workbench.build.tools import ToolScript
from workbench.build.writer import Compression, LogWriter, log_filename, write_log
from workbench.core.repair import CloserTracker
from workbench.io.layout import encode_segment, project_dir_name

DEFAULT_CREATED_AT = 1_790_000_000_000
"""2026-09-21 UTC: an arbitrary fixed epoch-ms so scripts are reproducible."""


class LogBuilder(ModelCallScript, ToolScript, LineageScript):
    """A readable script that appends a valid DSH log (see the module docstring)."""

    def __init__(self, *, version: int = 4, session_id: str | None = None,
                 cwd: str | None = "/work/demo", created_at: int = DEFAULT_CREATED_AT,
                 parent_session: str | None = None, origin: str | None = None,
                 delegation_depth: int = 0, agent_preset: str | None = None,
                 provider: str = "deepseek-official", model: str = "deepseek-v4-flash",
                 seed: int = 0, tick_ms: int = 3, batch_events: int = 64,
                 pack_rows: bool = True, stream_to: str | os.PathLike | None = None,
                 compression: Compression = "none") -> None:
        if version not in (0, 4):
            raise BuildError(f"the builder writes format 0 or 4, not {version!r}")
        self.version = version
        self.ids = shapes.Ids(seed)
        self.session_id = session_id or (("session-" if version >= 4 else "") + self.ids.uuid())
        self.cwd, self.created_at = cwd, created_at
        self.parent_session, self.origin = parent_session, origin
        self.delegation_depth, self.agent_preset = delegation_depth, agent_preset
        self.is_seeded = False
        self.seed_length: int | None = None
        self.default_route = (provider, model)
        self.tick_ms, self.batch_events = tick_ms, batch_events
        self.pack_rows = pack_rows and version == 0
        self.clock = created_at
        self.state = ScriptState(version)
        self.events: list[dict] | None = None if stream_to is not None else []
        self._batch: list[dict] = []
        self._batch_ends: list[int] = []
        self._stream_to = Path(stream_to) if stream_to is not None else None
        self._compression: Compression = compression
        self._writer: LogWriter | None = None
        self._call_counter = 0
        self._v0_system: str | None = None
        self._pending_descriptor: dict | None = None  # a spawned child's subagent/descriptor
        self._closer_tracker = CloserTracker(version=version)

    # -- header and output ---------------------------------------------------------------------

    def header(self) -> dict:
        """The header line, in the writer's key order (v0 §1.3, v4 §1.3)."""
        h: dict[str, Any] = {"type": "session", "version": self.version, "id": self.session_id,
                             "createdAt": self.created_at}
        if self.cwd is not None:
            h["cwd"] = self.cwd
        if self.parent_session is not None:
            h["parentSession"] = self.parent_session
        if self.version >= 4:
            h["isSeeded"] = self.is_seeded
        elif self.seed_length is not None:
            h["seedLength"] = self.seed_length
        if self.origin is not None:
            h["origin"] = self.origin
        h["delegationDepth"] = self.delegation_depth
        if self.agent_preset is not None:
            h["agentPreset"] = self.agent_preset
        return h

    @property
    def seq(self) -> int:
        """The seq the next event will get (= events so far)."""
        return self.state.seq

    @property
    def surface(self) -> tuple[int, ...]:
        """Current surface nodes (the builder's own bookkeeping)."""
        return tuple(self.state.nodes)

    def batches(self) -> Iterator[list[dict]]:
        """The in-memory events grouped into the write batches the script produced."""
        events = self._memory("batches()")
        start = 0
        for end in [*self._batch_ends, len(events)]:
            if end > start:
                yield events[start:end]
            start = end

    def write(self, path: str | os.PathLike, *, compression: Compression = "none",
              pack_rows: bool | None = None) -> Path:
        """Write the in-memory log (one zstd frame per batch) and return the path."""
        self._memory("write()")
        pack = self.pack_rows if pack_rows is None else (pack_rows and self.version == 0)
        return write_log(path, self.header(), self.batches(), compression=compression,
                         pack_rows=pack)

    def write_to_root(self, root: str | os.PathLike, *, compression: Compression = "zstd") -> Path:
        """Write the log where DSH's JSONL backend would: ``root/--slug--/<id>/session...``."""
        directory = Path(root) / project_dir_name(self.cwd) / encode_segment(self.session_id)
        return self.write(directory / log_filename(self.version, compression),
                          compression=compression)

    def flush(self) -> None:
        """End the current write batch (the next events go to a new zstd frame)."""
        if not self._batch:
            return
        if self.events is not None:
            self._batch_ends.append(len(self.events))
        else:
            if self._writer is None:
                assert self._stream_to is not None
                self._writer = LogWriter(self._stream_to, self.header(),
                                         compression=self._compression, pack_rows=self.pack_rows)
            self._writer.write_batch(self._batch)
        self._batch = []

    def close(self) -> Path | None:
        """Streaming mode: flush and close the file (returns its path). No-op in memory mode."""
        if self._stream_to is None:
            return None
        if self._writer is None:
            self._writer = LogWriter(self._stream_to, self.header(),
                                     compression=self._compression, pack_rows=self.pack_rows)
        self.flush()
        self._writer.close()
        return self._stream_to

    def __enter__(self) -> LogBuilder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _memory(self, what: str) -> list[dict]:
        if self.events is None:
            raise BuildError(f"{what} needs an in-memory builder (this one streams to a file)")
        return self.events

    # -- the one way events enter the log ------------------------------------------------------

    def advance(self, ms: int) -> None:
        """Move the clock forward (times are wall-clock-like and need not be monotonic)."""
        self.clock += ms

    def _now(self) -> int:
        self.clock += self.tick_ms
        return self.clock

    def _emit(self, etype: str, data: Any, *, surface_op: Any = None,
              sources: Sequence[int] | None = None, time: int | None = None) -> int:
        event: dict[str, Any] = {"type": etype, "seq": self.state.seq,
                                 "time": self._now() if time is None else time, "data": data}
        if sources is not None:
            event["sourceEventSeqs"] = list(sources)
        if surface_op is not None:
            event["surfaceOp"] = surface_op
        return self._push(event)

    def _push(self, event: dict) -> int:
        self.state.track(event)
        self._closer_tracker.observe(event)
        if self.events is not None:
            self.events.append(event)
        self._batch.append(event)
        if len(self._batch) >= self.batch_events:
            self.flush()
        return event["seq"]

    def raw(self, event: Any) -> int:
        """Append a record verbatim, for fault injection: it is written as given (missing
        ``seq``/``time`` are filled in for dicts) but not interpreted, so the builder's surface,
        turn and call bookkeeping ignore it. Returns the seq it was given."""
        seq = self.state.seq
        if isinstance(event, dict):
            event = dict(event)
            event.setdefault("seq", seq)
            event.setdefault("time", self._now())
        self.state.seq = seq + 1
        if self.events is not None:
            self.events.append(event)
        self._batch.append(event)
        if len(self._batch) >= self.batch_events:
            self.flush()
        return seq

    def log(self, etype: str, data: Any) -> int:
        """Append any log-only event."""
        return self._emit(etype, data)

    def _replace_op(self, start: int, end: int) -> dict:
        if self.version >= 4:
            return {"op": "replace", "startSeq": start, "endSeq": end}
        return {"op": "replace", "start": start, "end": end}

    # -- turns and steps -----------------------------------------------------------------------

    def turn_start(self) -> int:
        if self.state.open_turn is not None:
            raise BuildError(f"turn {self.state.open_turn} is still open")
        turn = self.state.last_turn + 1
        self._emit("turn/start", {"turn": turn})
        if self._pending_descriptor is not None:
            self._emit("subagent/descriptor", self._pending_descriptor)
            self._pending_descriptor = None
        return turn

    def turn_end(self, reason: dict | None = None) -> int:
        turn = self.state.open_turn
        if turn is None:
            raise BuildError("no open turn to end")
        if self.state.open_step is not None:
            raise BuildError(f"step {self.state.open_step} of turn {turn} is still open")
        seq = self._emit("turn/end", {"turn": turn, "reason": reason or {"kind": "completed"}})
        self.flush()
        return seq

    @contextmanager
    def turn(self, *, reason: dict | None = None, end: bool = True) -> Iterator[int]:
        """``turn/start`` … ``turn/end`` (``end=False`` leaves the turn open: a crash)."""
        turn = self.turn_start()
        yield turn
        if end:
            self.turn_end(reason)

    def step_start(self) -> int:
        if self.state.open_turn is None:
            raise BuildError("a step needs an open turn")
        if self.state.open_step is not None:
            raise BuildError(f"step {self.state.open_step} is still open")
        step = self.state.last_step + 1
        self._emit("step/start", {"turn": self.state.open_turn, "step": step})
        return step

    def step_end(self) -> int:
        turn, step = self.state.require_step("step/end")
        unanswered = [cid for cid, call in self.state.pending.items() if not call.answered]
        if unanswered and self.version >= 4:
            raise BuildError(f"step {step} ends with unanswered tool calls {unanswered}")
        seq = self._emit("step/end", {"turn": turn, "step": step})
        self.flush()
        return seq

    @contextmanager
    def step(self, *, end: bool = True) -> Iterator[int]:
        step = self.step_start()
        yield step
        if end:
            self.step_end()

    # -- messages ------------------------------------------------------------------------------

    def system(self, text: str | Sequence[dict]) -> int | None:
        """The system prompt: v4 a `system/message` (appended as the protected head, or replacing
        it); v0 it goes into the next `request/header` (returns None)."""
        if self.version < 4:
            self._v0_system = text if isinstance(text, str) else None
            return None
        turn, step = self.state.require_step("system/message")
        message = shapes.system_message(text, self.ids.uuid())
        data = {"turn": turn, "step": step, "message": message}
        head = self.state.system_head
        if head is None:
            if self.state.nodes:
                raise BuildError("a system/message append on a non-empty surface without a "
                                 "protected head is invalid (v4 §4.3)")
            return self._emit("system/message", data, surface_op="append")
        return self._emit("system/message", data, surface_op=self._replace_op(head, head),
                          sources=[head])

    def user(self, content: str | Sequence[dict], *, source: dict | None = None,
             sources: Sequence[int] | None = None) -> int:
        """A `user/message` append (default source `{kind: "user"}`)."""
        message = shapes.user_message(shapes.text_content(content), source or {"kind": "user"},
                                      self.ids.uuid())
        return self._emit("user/message", message, surface_op="append", sources=sources)

    def end_seed(self, *, inherited: bool = False) -> int:
        """`session/end-seed`: a process lifecycle boundary (also makes an open bracket stale)."""
        seq = self._emit("session/end-seed", {"inherited": True} if inherited else {})
        self.flush()
        return seq
