"""Builder scripts for the requests and model calls of a log. Layer: build.
Mixed into `LogBuilder` (it uses the builder's `_emit`, `state`, `ids`, `clock`).

Shapes (v0 spec §3.3-3.4, v4 spec §3.3-3.4): a `request/header` carries the route's config, the
tool schemas and, in v0 only, the system prompt; its ``reason`` is ``initial`` for the first one,
``resume`` after an end-seed, else ``change``. A successful call is its stream plus the
`assistant/message` (v4: the stream nested in the message event; v0: top-level
`assistant/chunk` events the message cites); a failed one is a finish chunk of kind
``error``/``aborted`` (v4: an `assistant/attempt`).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from workbench.build import shapes
from workbench.build.state import BuildError
from workbench.core.streams import pack_chunks
from workbench.core.tokens.heuristic import estimate_tools

if TYPE_CHECKING:
    from workbench.build.builder import LogBuilder


@dataclass(frozen=True, slots=True)
class Attempt:
    """One logged model-call attempt: the message seq and the ids of the calls it advertised."""

    seq: int
    message_id: str | None
    call_ids: tuple[str, ...]


class ModelCallScript:
    """Request headers, request contexts, model calls and failed attempts for `LogBuilder`."""

    def request_header(self: LogBuilder, *, provider: str | None = None, model: str | None = None,
                       tools: Sequence[dict] | None = None, system: str | None = None,
                       max_tokens: int | None = None, reasoning_effort: str | None = None,
                       adapter_defaults: dict | None = None, reason: str | None = None,
                       starts_series: bool | None = None) -> int:
        """A `request/header` (reason defaults: initial, resume after an end-seed, else change)."""
        if self.state.open_turn is None and self.version >= 4:
            raise BuildError("request/header must be inside a turn (v4 §3.3)")
        route = self.state.route or self.default_route
        config: dict[str, Any] = {"provider": provider or route[0], "model": model or route[1]}
        if max_tokens is not None:
            config["maxTokens"] = max_tokens
        if reasoning_effort is not None:
            config["reasoningEffort"] = reasoning_effort
        header: dict[str, Any] = {"config": config}
        if adapter_defaults:
            header["adapterDefaults"] = dict(adapter_defaults)
        prompt = system if system is not None else self._v0_system
        if self.version < 4 and prompt:
            header["system"] = prompt
        if tools:
            header["tools"] = [dict(t) for t in tools]
        if reason is None:
            if self.state.header is None:
                reason = "initial"
            elif self.state.seeded_since_header:
                reason = "resume"
            else:
                reason = "change"
        data: dict[str, Any] = {"header": header, "reason": reason}
        if starts_series:
            data["startsSeries"] = True
        return self._emit("request/header", data)

    def request_context(self: LogBuilder, *, context_window: int | None = 128_000) -> int:
        provider, model = self.state.route or self.default_route
        data: dict[str, Any] = {"provider": provider, "model": model}
        if context_window is not None:
            data["contextWindow"] = context_window
        return self._emit("request/context", data)

    def _calls(self: LogBuilder, tool_calls: Sequence[tuple]) -> list[tuple[str, str, str]]:
        calls = []
        for call in tool_calls:
            if len(call) == 3:
                call_id, name, args = call
            else:
                self._call_counter += 1
                (name, args), call_id = call, f"toolu_{self._call_counter:04d}"
            calls.append((call_id, name, shapes.arguments_text(args)))
        return calls

    def _auto_usage(self: LogBuilder, blocks: list[dict]) -> dict:
        header = self.state.header or {}
        inputs = self.state.surface_tokens + estimate_tools(header.get("tools"))
        chars = sum(len(b.get("text", "")) + len(b.get("arguments", "")) for b in blocks)
        usage = {"inputTokens": inputs, "outputTokens": shapes.approx_tokens(chars) + 1}
        if self.version >= 4:
            usage["totalTokens"] = usage["inputTokens"] + usage["outputTokens"]
        return usage

    def assistant(self: LogBuilder, text: str | None = None, *, reasoning: str | None = None,
                  tool_calls: Sequence[tuple] = (), usage: dict | None | bool = True,
                  finish: dict | None = None, interrupted: bool = False,
                  piece_chars: int = 24) -> Attempt:
        """One successful model call: its stream and the `assistant/message` (v4 nested stream;
        v0 top-level `assistant/chunk` events cited by the message). `tool_calls` items are
        ``(name, args)`` or ``(call_id, name, args)``; `usage=True` derives a plausible usage
        from the surface, a dict is used as given, None/False logs none. `interrupted=True` is a
        cancelled stream: tool calls dropped, no finish chunk."""
        turn, step = self.state.require_step("assistant/message")
        calls = [] if interrupted else self._calls(tool_calls)
        blocks = shapes.assistant_content(reasoning=reasoning, text=text, calls=calls)
        usage_value = self._auto_usage(blocks) if usage is True else (usage or None)
        if interrupted:
            finish_value = None
        else:
            finish_value = finish or {"kind": "tool-calls" if calls else "stop"}
        chunks = shapes.stream_chunks(blocks, usage=usage_value, finish=finish_value,
                                      time0=self._now(), piece_chars=piece_chars)
        provider, model = self.state.route or self.default_route
        message = shapes.assistant_message(
            blocks, {"kind": "model", "provider": provider, "model": model}, self.ids.uuid())
        data: dict[str, Any] = {"turn": turn, "step": step, "message": message}
        if usage_value is not None:
            data["usage"] = usage_value
        if self.version >= 4:
            data["stream"] = pack_chunks(chunks)
            if interrupted:
                data["interrupted"] = True
            self.clock = max(self.clock, chunks[-1][0]) if chunks else self.clock
            seq = self._emit("assistant/message", data, surface_op="append")
        else:
            cited = [self._emit("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk},
                                time=time) for time, chunk in chunks]
            self.clock = max(self.clock, chunks[-1][0]) if chunks else self.clock
            if interrupted:
                data["interrupted"] = True
            seq = self._emit("assistant/message", data, surface_op="append", sources=cited)
        return Attempt(seq, message["id"], tuple(c[0] for c in calls))

    def attempt_failed(self: LogBuilder, code: str = "SERVER", message: str = "provider error", *,
                       kind: str = "error") -> int:
        """A failed attempt (finish `error`/`aborted`): v4 `assistant/attempt`, v0 a chunk."""
        turn, step = self.state.require_step("assistant/attempt")
        chunk = {"type": "finish", "reason": {"kind": kind,
                                              "failure": {"message": message, "code": code}}}
        time = self._now()
        if self.version >= 4:
            return self._emit("assistant/attempt", {"turn": turn, "step": step, "stream": [
                {"type": "chunk", "time": time, "chunk": chunk}]}, time=time)
        return self._emit("assistant/chunk", {"turn": turn, "step": step, "chunk": chunk},
                          time=time)


__all__ = ["Attempt", "ModelCallScript"]
