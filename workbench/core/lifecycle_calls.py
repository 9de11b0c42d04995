"""The tool-call, developer-message, PTC-dispatch and retry rules of the v4 lifecycle state
machine (`workbench.core.lifecycle`). Layer: core (pure; imports io only).

`CallRules` is a mixin of `Lifecycle`: tool calls advertised by the step's ``assistant/message``,
started once by an exact ``tool/call`` and answered before ``step/end`` / ``turn/end`` (a call
never started only by the exact ``TOOL_NOT_STARTED`` repair, `not_started_repair`); developer
messages; PTC dispatch pairs; retry chains per (turn, step, provider, policyKey). State lives on
the `Lifecycle` instance.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.core.lifecycle_values import (
    Violation,
    array,
    count,
    earlier,
    get,
    record,
    same,
    text,
)
from workbench.io.jsjson import ABSENT
from workbench.io.jsvalues import deep_equal, js_str

_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                     "Retry it if it is still needed.")


class CallRules:
    """Tool calls, developer messages, dispatches and retries (module doc)."""

    tools: dict[str, dict]
    dispatches: dict[str, dict]
    retries: list[dict]
    started_retries: set
    turn: Any
    step: Any
    provider: Any

    def _advertise(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        """``assistant/message``: its tool-call blocks are the step's advertised calls."""
        self._require_step(kind, data)
        tools = self.tools
        message = record(data.get("message", ABSENT), "assistant message")
        for block in array(message.get("content", ABSENT), "assistant content"):
            if type(block) is not dict:
                record(block, "assistant content block")
            if block.get("type") != "tool-call":
                continue
            call_id = block.get("id", ABSENT)
            if type(call_id) is not str or not call_id:
                text(call_id, "tool call id")
            if call_id in tools:
                raise Violation(f"assistant/message repeats advertised tool call {call_id}")
            tools[call_id] = {"name": block.get("name", ABSENT), "arguments": block.get("arguments", ABSENT),
                              "started": False}

    def _start(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        """``tool/call``: starts one advertised call, exactly as advertised."""
        self._require_step(kind, data)
        call_id = data.get("callId", ABSENT)
        if type(call_id) is not str or not call_id:
            text(call_id, "tool call id")
        pending = self.tools.get(call_id)
        if pending is None:
            raise Violation(f"{kind} {call_id} has no advertised tool lifecycle")
        if (pending["started"] or not same(pending["name"], data.get("name", ABSENT))
                or not same(pending["arguments"], data.get("arguments", ABSENT))):
            raise Violation(f"tool/call {call_id} does not match one advertised tool call")
        pending["started"] = True

    def _answer(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        """``tool/result``: an appended result answers a started call (or repairs one never
        started); a replacement only needs an open turn."""
        op = event.get("surfaceOp")
        if not (type(op) is str and op == "append"):
            self._require_turn(kind)
            return
        self._require_step(kind, data)
        message = record(data.get("message", ABSENT), "tool result message")
        call_id = message.get("toolCallId", ABSENT)
        if type(call_id) is not str or not call_id:
            text(call_id, "tool call id")
        tools = self.tools
        pending = tools.get(call_id)
        if pending is None:
            raise Violation(f"{kind} {call_id} has no advertised tool lifecycle")
        if not pending["started"] and not not_started_repair(event, data, message, call_id):
            raise Violation(f"tool/result {call_id} is not the exact TOOL_NOT_STARTED repair")
        del tools[call_id]

    def _developer(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        if "headerSeq" not in data:
            return
        header_seq = earlier(data["headerSeq"], seq, "developer/message headerSeq")
        header_event = self.event_at(int(header_seq))
        if type(header_event) is not dict or header_event.get("type") != "request/header":
            raise Violation("developer/message headerSeq must reference an earlier request/header")
        header = record(record(header_event.get("data", ABSENT), "request/header data").get("header", ABSENT),
                         "request header")
        tools = header.get("tools")
        content = array(get(record(get(data, "message"), "developer message"), "content"), "developer content")
        shown = int(header_seq)
        for value in content:
            if type(value) is not dict or value.get("type") != "tool-addition":
                continue
            name = value.get("toolName", ABSENT)
            definitions = [t for t in tools if type(t) is dict and same(t.get("name", ABSENT), name)] \
                if type(tools) is list else []
            if len(definitions) != 1:
                raise Violation(f'developer/message tool-addition "{js_str(name)}" must name exactly one tool '
                                 f"in headerSeq {shown}")
            definition = definitions[0]
            if type(definition.get("description")) is not str or type(definition.get("parameters")) is not dict:
                raise Violation(f'developer/message tool-addition "{js_str(name)}" requires a complete tool '
                                 f"definition in headerSeq {shown}")

    def _dispatch(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        self._require_turn(kind)
        sub = text(get(data, "subCallId"), "PTC subCallId")
        root = text(get(data, "rootCallId"), "PTC rootCallId")
        parent = text(get(data, "parentCallId"), "PTC parentCallId")
        existing = self.dispatches.get(sub)
        if existing is not None and not same(existing["data"].get("rootCallId", ABSENT), root):
            raise Violation("PTC dispatch changes its rootCallId")
        if parent != root:
            owner = self.dispatches.get(parent)
            if owner is None or not same(owner["data"].get("rootCallId", ABSENT), root):
                raise Violation("PTC parentCallId does not belong to rootCallId")
        if kind == "tool/ptc-dispatch-start":
            if existing is not None:
                raise Violation("PTC dispatch repeats subCallId")
            self.dispatches[sub] = {"data": data, "settled": False}
            return
        if existing is None or existing["settled"]:
            raise Violation("PTC dispatch has no unique start")
        for key in ("rootCallId", "parentCallId", "name", "arguments"):
            a, b = existing["data"].get(key, ABSENT), data.get(key, ABSENT)
            if (a is ABSENT) != (b is ABSENT) or (a is not ABSENT and not deep_equal(a, b)):
                raise Violation("PTC dispatch does not match its start")
        existing["settled"] = True

    def _retry(self, event: Mapping[str, Any], kind: str, seq: Any, data: dict) -> None:
        rid = text(get(data, "retryId"), "retryId")
        attempt = count(get(data, "retry"), "retry")
        if kind == "llm/retry-started":
            scheduled = next((item for item in self.retries
                              if same(item.get("retryId", ABSENT), rid) and same(item.get("retry", ABSENT), attempt)),
                             None)
            if scheduled is None:
                raise Violation("llm/retry-started pairs no prior scheduled attempt")
            if not same(get(scheduled, "turn"), get(data, "turn")) or \
                    not same(get(scheduled, "step"), get(data, "step")):
                raise Violation("llm/retry-started changes scheduled coordinates")
            key = (rid, attempt)
            if key in self.started_retries:
                raise Violation("llm/retry-started repeats one scheduled attempt")
            self.started_retries.add(key)
            return
        step = self.step if self.step is not None else self.next_step - 1
        if self.turn is None or not same(get(data, "turn"), self.turn) or not same(get(data, "step"), step):
            raise Violation("llm/retry does not match the current turn and step")
        if not same(get(data, "provider"), self.provider):
            raise Violation("llm/retry provider does not match the open request/header")
        prior = None
        for item in reversed(self.retries):
            if all(same(item.get(k, ABSENT), data.get(k, ABSENT)) for k in ("turn", "step", "provider", "policyKey")):
                prior = item
                break
        expected = 1 if prior is None else count(get(prior, "retry"), "prior retry") + 1
        if not same(attempt, expected):
            raise Violation("llm/retry skips its policy attempt sequence")
        if (any(same(item.get("retryId", ABSENT), rid) for item in self.retries) if prior is None
                else not same(get(prior, "retryId"), rid)):
            raise Violation("llm/retry must keep one retryId per policy chain")
        self.retries.append(data)


def not_started_repair(event: Mapping[str, Any], data: dict, message: dict, call_id: str) -> bool:
    """The exact ``TOOL_NOT_STARTED`` closer that may answer a call never started."""
    error = record(get(data, "error"), "not-started error")
    if (error.get("name") != "ToolNotStartedError" or error.get("code") != "TOOL_NOT_STARTED"
            or message.get("isError") is not True or "sourceEventSeqs" in event):
        return False
    mid = text(get(message, "id"), "not-started message id")
    if mid.startswith(f"forked-tool-result-{call_id}-"):
        return True
    prefix = f"interrupted-tool-result-{call_id}-"
    suffix = mid[len(prefix):]
    content = array(get(message, "content"), "not-started content")
    block = content[0] if content else ABSENT
    return (mid.startswith(prefix) and suffix.isascii() and suffix.isdigit()
            and (suffix == "0" or suffix[0] != "0") and int(suffix) <= 2**53 - 1 and len(content) == 1
            and type(block) is dict and block.get("type") == "text" and block.get("text") == _NOT_STARTED_TEXT)
