"""Builder scripts for tool calls and other log-only events. Layer: build.
Mixed into `LogBuilder` (it uses the builder's `_emit`, `state`, `ids`).

Shapes (v0 spec §3.8, v4 spec §3.2, §3.8): a `tool/call` copies the advertised call's name and
argument string exactly; a `tool/result` cites its `tool/call` (`sourceEventSeqs`) and, in v4, is
a tool-role message; `job/registered` / `job/settled` (v4 only) accompany bash calls as the real
runtime logs them; `session-log-deepseek/delivery-accepted` (v4 only) marks a request the provider
accepted, with ``throughSeq`` below its own seq.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from workbench.build import shapes
from workbench.build.state import BuildError, PendingCall

if TYPE_CHECKING:
    from workbench.build.builder import LogBuilder


class ToolScript:
    """Tool calls, results, jobs, delivery markers and todo lists for `LogBuilder`."""

    def _pending(self: LogBuilder, call_id: str) -> PendingCall:
        call = self.state.pending.get(call_id)
        if call is None:
            raise BuildError(f"tool call {call_id!r} was not advertised by an assistant message "
                             "of the open step")
        return call

    def tool_call(self: LogBuilder, call_id: str) -> int:
        """`tool/call`: the advertised call starts (name and arguments copied exactly)."""
        turn, step = self.state.require_step("tool/call")
        call = self._pending(call_id)
        if call.call_seq is not None:
            raise BuildError(f"tool call {call_id!r} already started at seq {call.call_seq}")
        return self._emit("tool/call", {"turn": turn, "step": step, "callId": call_id,
                                        "name": call.name, "arguments": call.arguments})

    def job(self: LogBuilder, call_id: str, *, kind: str = "bash", label: str | None = None,
            status: str = "completed", detail: str = "exit code 0") -> tuple[int, int]:
        """v4 `job/registered` + `job/settled` for a running tool call (as bash calls log them)."""
        if self.version < 4:
            raise BuildError("job/* events exist only in format v4")
        call = self._pending(call_id)
        job_id = f"{kind}-{self.ids.uuid().replace('-', '')[:16]}"
        started = self.clock
        base = {"jobId": job_id, "owner": self.session_id, "kind": kind,
                "label": label or call.name, "startedAt": started,
                "toolCall": {"callId": call_id, "rootCallId": call_id}}
        registered = self._emit("job/registered", base)
        settled = self._emit("job/settled", {**base, "finishedAt": self.clock + 1,
                                             "status": status, "cause": "producer",
                                             "producerReported": True, "detail": detail})
        return registered, settled

    def tool_result(self: LogBuilder, call_id: str, text: str = "", *,
                    content: Sequence[dict] | None = None, is_error: bool = False,
                    error: dict | None = None, meta: dict | None = None) -> int:
        """`tool/result` for an advertised call (logs its `tool/call` first if not yet started)."""
        turn, step = self.state.require_step("tool/result")
        call = self._pending(call_id)
        if call.call_seq is None:
            self.tool_call(call_id)
        body = shapes.text_content(text) if content is None else [dict(b) for b in content]
        message = shapes.tool_message(call_id, body, is_error or error is not None,
                                      self.ids.uuid(), version=self.version)
        data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
        if meta is not None:
            data["meta"] = meta
        if error is not None:
            data["error"] = error
        return self._emit("tool/result", data, surface_op="append", sources=[call.call_seq])

    # -- other log-only events -----------------------------------------------------------------

    def delivery_accepted(self: LogBuilder, through: int | None = None) -> int:
        """v4 `session-log-deepseek/delivery-accepted`: the provider took the log up to
        `through`."""
        if self.version < 4:
            raise BuildError("delivery-accepted markers are not a format v0 event type")
        through = self.state.seq - 1 if through is None else through
        return self._emit("session-log-deepseek/delivery-accepted", {
            "sessionId": self.session_id, "sessionFormatVersion": 4, "throughSeq": through})

    def todo_write(self: LogBuilder, todos: Sequence[dict]) -> int:
        return self._emit("todo/write", {"todos": [dict(t) for t in todos]})
