"""The v3→v4 migration step of DSH 0.2.1, event by event (v4 spec §0.4, §3.5, §3.12). Layer: core.

What the current runtime makes of a DSH 0.1.5 (format v3) log when it opens it: the reference for
`workbench migrate` and `Session.migrated(4)`, checked event for event against DSH 0.2.1's own view
of real v3 logs (the corpus' ``migrated/`` files). Per event (`lift_event`):

* a ``tool/result`` message (``role: "user"`` wrapping one ``tool-result`` block) becomes a tool-role
  message ``{role, source, toolCallId, content, isError, id}``: the wrapper's ``toolCallId``,
  ``content`` and ``isError`` move up; other message fields are kept as ``plugin:message:<key>``,
  other wrapper fields as ``plugin:result:<key>``;
* every ``{kind: "plugin", plugin: NAME}`` message source becomes a producer kind (`PLUGIN_KINDS`;
  ``@deepseek-ai/dsh-system-prompt`` is ``system-prompt`` on a system-role message and
  ``runtime-context`` otherwise; any other NAME ``plugin:NAME``); the ``plugin`` field is dropped,
  the other fields keep their order;
* content blocks of unknown types are renamed ``plugin:<type>``;
* an event of a type unknown to v3 marked ``ignorable: true`` is renamed ``plugin:<type>`` (one
  already in that namespace is kept as it is).

Refused (`unsupported_v3`, the step's "unsupported" list): a nested tool result (a ``tool-result``
block inside a tool result's wrapper block), ``deferLoading`` on a ``request/header`` tool schema, a
delivery marker claiming format v4.

Across events (`migrate_v3`): a turn still open when the next ``turn/start`` comes, or when the log
ends, and with no open step, gets ``turn/end {reason: {kind: "interrupted"}}`` (the last event's
time; the rule is `OpenTurns`), seqs are renumbered and every seq reference remapped. A turn left
open inside a step has no documented closer: `MigrationRefused` rather than a guess. The load
checks a v3 log's lifecycle with the same closers (`workbench.core.relationships`). The runtime's
step also adds one ``subagent/catalog`` per child log of the same store that the parent does not
list yet; DSH 0.1.5 already logs a catalog fact for each child it creates, and this step reads the
one log only.

DSH 0.2.1's own view of a v3 log killed inside a compaction ends with that inserted ``turn/end``
after the unclosed ``compaction/start``; the v4 relationship rules refuse a turn crossing an open
bracket unless a later ``session/end-seed`` orphans it, so that view, read back as a v4 log, is
corrupt (as written by DSH, which appends the end-seed only when it resumes the session).

`lift_event` also serves validation: the load checks a v3 log's message shapes and lifecycle
relationships on the lifted events, as the runtime does after migrating.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from workbench.core.events import known_types
from workbench.core.lifecycle_values import same
from workbench.errors import MigrationRefused
from workbench.io.generations import CURRENT, rules_for
from workbench.io.jsjson import is_nonneg_safe_int

SYSTEM_PROMPT_PLUGIN = "@deepseek-ai/dsh-system-prompt"

PLUGIN_KINDS: dict[str, str] = {
    "compact": "compact-checkpoint", "tools-code-mode": "ptc-mode", "tools-ptc": "ptc-mode",
    "dsh-compaction-basic": "compact-basic",
    **{name: name for name in (
        "agent-instructions", "session-reference", "team-message", "goal", "skill-invocation",
        "skill-catalog", "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message",
        "model-selection", "plan-mode", "time-context", "tmux-context", "user-approval",
        "repeat-tool-reminder", "tool-cordis", "cordis-host-runner", "tool-goal", "tool-jobs", "hooks-codex",
        "hooks-claude-code", "schedule", "dsh-session-title-llm")},
}
"""v4 spec §3.5: the producer kind of each v3 plugin source (the system prompt is per role)."""

KNOWN_BLOCKS = frozenset(("text", "reasoning", "image", "file", "tool-call", "tool-addition", "tool-removal"))
"""Content block types v4 keeps as they are (§3.12); a wrapper ``tool-result`` is lifted, any other
type becomes ``plugin:<type>``."""

_KNOWN_V3 = known_types(3)
"""The event types v3 knows (the v4 vocabulary); an ignorable event of another type is renamed."""


def lift_source(source: Any, role: Any) -> Any:
    """A v3 message source in its v4 spelling (unchanged when it is not a plugin source)."""
    if type(source) is not dict or source.get("kind") != "plugin" or type(source.get("plugin")) is not str:
        return source
    name = source["plugin"]
    if name == SYSTEM_PROMPT_PLUGIN:
        kind = "system-prompt" if role == "system" else "runtime-context"
    else:
        kind = PLUGIN_KINDS.get(name, f"plugin:{name}")
    out: dict[str, Any] = {}
    for key, value in source.items():
        if key == "kind":
            out["kind"] = kind
        elif key != "plugin":
            out[key] = value
    return out


def _blocks(content: Any) -> Any:
    if type(content) is not list:
        return content
    if all(type(b) is not dict or b.get("type") in KNOWN_BLOCKS or type(b.get("type")) is not str
           for b in content):
        return content
    return [{**b, "type": f"plugin:{b['type']}"} if type(b) is dict and type(b.get("type")) is str
            and b["type"] not in KNOWN_BLOCKS else b for b in content]


def _message(message: Any, role: Any = None) -> Any:
    if type(message) is not dict:
        return message
    out = dict(message)
    if "source" in out:
        out["source"] = lift_source(out["source"], out.get("role", role))
    if "content" in out:
        out["content"] = _blocks(out["content"])
    return out


def lift_tool_message(message: Any) -> Any:
    """A v3 tool result message (one wrapped ``tool-result`` block) as a v4 tool-role message."""
    if type(message) is not dict:
        return message
    content = message.get("content")
    block = content[0] if type(content) is list and len(content) == 1 else None
    if type(block) is not dict or block.get("type") != "tool-result":
        return _message(message)
    out: dict[str, Any] = {"role": "tool", "source": lift_source(message.get("source"), "tool")}
    if "toolCallId" in block:
        out["toolCallId"] = block["toolCallId"]
    out["content"] = _blocks(block.get("content"))
    if "isError" in block:
        out["isError"] = block["isError"]
    if "id" in message:
        out["id"] = message["id"]
    for key, value in message.items():
        if key not in ("role", "source", "content", "id"):
            out[f"plugin:message:{key}"] = value
    for key, value in block.items():
        if key not in ("type", "toolCallId", "content", "isError"):
            out[f"plugin:result:{key}"] = value
    return out


def lift_event(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """One v3 event in its v4 spelling (the same object when nothing changes)."""
    kind = event.get("type")
    if type(kind) is str and kind not in _KNOWN_V3:
        if event.get("ignorable") is True and not kind.startswith("plugin:"):
            return {**event, "type": f"plugin:{kind}"}
        return event
    data = event.get("data")
    if type(data) is not dict:
        return event
    if kind == "user/message":
        new = _message(data, "user")
    elif kind == "tool/result":
        new = {**data, "message": lift_tool_message(data.get("message"))} if "message" in data else data
    elif kind in ("system/message", "assistant/message", "developer/message"):
        new = {**data, "message": _message(data.get("message"))} if "message" in data else data
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        key = "inserted" if kind == "agent/inbox/spliced" else "messages"
        messages = data.get(key)
        new = {**data, key: [_message(m, "user") for m in messages]} if type(messages) is list else data
    else:
        return event
    return event if new == data and _same_order(new, data) else {**event, "data": new}


_DELIVERY = "session-log-deepseek/delivery-accepted"


def unsupported_v3(event: Mapping[str, Any]) -> str | None:
    """Why DSH 0.2.1 refuses to migrate a log holding this v3 event (format "unsupported", the
    log left untouched; v4 spec §0.4 step v3→v4), or None."""
    kind = event.get("type")
    data = event.get("data")
    if type(data) is not dict:
        return None
    if kind == "tool/result":
        message = data.get("message")
        content = message.get("content") if type(message) is dict else None
        block = content[0] if type(content) is list and len(content) == 1 else None
        inner = block.get("content") if type(block) is dict and block.get("type") == "tool-result" else None
        if type(inner) is list and any(type(b) is dict and b.get("type") == "tool-result" for b in inner):
            return "a nested tool result (a tool-result block inside the tool/result's wrapper block)"
    elif kind == "request/header":
        header = data.get("header")
        tools = header.get("tools") if type(header) is dict else None
        for tool in tools if type(tools) is list else ():
            if type(tool) is dict and "deferLoading" in tool:
                return f"deferLoading on the request/header tool schema {tool.get('name')!r}"
    elif kind == _DELIVERY and same(data.get("sessionFormatVersion"), CURRENT):
        return f"a delivery marker claiming format v{CURRENT} (sessionFormatVersion {data['sessionFormatVersion']!r})"
    return None


class OpenTurns:
    """The v3→v4 step's turn closer (v4 spec §0.4): a turn still open when the next ``turn/start``
    comes, or when the log ends, and with no open step, is closed by ``turn/end {turn, reason:
    {kind: "interrupted"}}`` at the last event's time. One home for the rule: `migrate_v3` writes
    the closers, the load's lifecycle check of a v3 log (`workbench.core.relationships`) replays
    them. Feed `closer` then `observe` each event in seq order, then `at_end`."""

    __slots__ = ("turn", "step_open", "time")

    def __init__(self) -> None:
        self.turn: Any = None
        self.step_open = False
        self.time: Any = None

    def closer(self, event: Mapping[str, Any]) -> dict | None:
        """The closer to insert before `event` (its ``seq`` None: the caller numbers it), or None;
        `MigrationRefused` when the open turn has an open step (no documented closer)."""
        if event.get("type") != "turn/start" or self.turn is None:
            return None
        data = event.get("data")
        return self._close(f"when turn {data.get('turn') if type(data) is dict else None} starts")

    def at_end(self) -> dict | None:
        """The closer of a turn the log leaves open (None: none is open)."""
        return None if self.turn is None else self._close("at the end of the log")

    def _close(self, at: str) -> dict:
        if self.step_open:
            raise MigrationRefused(f"turn {self.turn} is left open inside a step {at}: DSH 0.2.1's closer for "
                                   "it is not documented, so no exact v4 view can be built")
        turn, self.turn = self.turn, None
        return {"type": "turn/end", "seq": None, "time": self.time,
                "data": {"turn": turn, "reason": {"kind": "interrupted"}}}

    def observe(self, event: Mapping[str, Any]) -> None:
        """Track the open turn and step after `event`."""
        self.time = event.get("time")
        kind = event.get("type")
        if kind == "turn/start":
            data = event.get("data")
            self.turn, self.step_open = (data.get("turn") if type(data) is dict else None), False
        elif kind == "turn/end":
            self.turn, self.step_open = None, False
        elif kind == "step/start":
            self.step_open = True
        elif kind == "step/end":
            self.step_open = False


def _same_order(a: Any, b: Any) -> bool:
    return a is b or (type(a) is dict and list(a) == list(b)
                      and all(_same_order(a[k], b[k]) for k in a)) or (type(a) is not dict and a == b)


def migrate_v3(events: Iterable[Mapping[str, Any]], *, header: Mapping[str, Any] | None = None) -> list[dict]:
    """The v4 events DSH 0.2.1 builds from a v3 log's events (seq order); raises `MigrationRefused`
    (naming the seq) for an event the step does not support (`unsupported_v3`)."""
    out: list[dict] = []
    turns = OpenTurns()
    shift = 0
    remap: dict[int, int] = {}

    def insert(closer: dict | None) -> None:
        nonlocal shift
        if closer is not None:
            closer["seq"] = len(out)
            out.append(closer)
            shift += 1

    for event in events:
        seq = event.get("seq")
        problem = unsupported_v3(event)
        if problem is not None:
            raise MigrationRefused(f'seq {seq}: {problem}: DSH 0.2.1 refuses to migrate it (format "unsupported")')
        insert(turns.closer(event))
        lifted = dict(lift_event(event))
        if shift:
            lifted["seq"] = seq + shift
            remap[seq] = seq + shift
            lifted = _remapped(lifted, remap)
        out.append(lifted)
        turns.observe(event)
    insert(turns.at_end())
    return out


def _remapped(event: dict, remap: Mapping[int, int]) -> dict:
    """Seq references of a renumbered event (replace endpoints, sources, compaction ranges, titles,
    command sources) through `remap` (seqs not in it are unchanged: they precede every shift)."""
    def m(value: Any) -> Any:
        return remap.get(int(value), value) if is_nonneg_safe_int(value) else value
    if "sourceEventSeqs" in event and type(event["sourceEventSeqs"]) is list:
        event["sourceEventSeqs"] = [m(s) for s in event["sourceEventSeqs"]]
    op = event.get("surfaceOp")
    if type(op) is dict:
        event["surfaceOp"] = {k: (m(v) if k in ("startSeq", "endSeq") else v) for k, v in op.items()}
    data = event.get("data")
    if type(data) is dict:
        new = dict(data)
        if type(new.get("shadowedRange")) is dict:
            new["shadowedRange"] = {k: m(v) for k, v in new["shadowedRange"].items()}
        for key in ("shadowedSeqs", "messageSeqs"):
            if type(new.get(key)) is list:
                new[key] = [m(s) for s in new[key]]
        if "sourceEventSeq" in new:
            new["sourceEventSeq"] = m(new["sourceEventSeq"])
        event["data"] = new
    return event


V0_REFUSAL = (
    "a v0 log (DSH 0.1.x) reaches v4 through the v0->v1, v1->v2 and v2->v3 steps as well: DSH 0.2.1 "
    "renumbers every seq when it folds the assistant chunks into nested streams, and inserts "
    "system/message nodes whose ids (v2-to-v3-system-<sha256>) hash an input that is not documented "
    "(its own view of a log whose prompts are all equal even replaces the first one); this build cannot "
    "reproduce that view exactly, so it prints none (open the v0 log itself, or let DSH 0.2.1 migrate it)")


def migrated(log: Any, to: int = CURRENT) -> tuple[dict, list[dict]]:
    """`(header, events)` of the v4 view DSH 0.2.1 builds when it opens `log` (a loaded `Log`).

    A v4 log is its own view; a v3 log goes through `migrate_v3` (header: only the version
    changes, spec §0.4). Raises `MigrationRefused`, naming the reason, for another target, a
    refused or corrupt log (the runtime would not open it), a v0 log (`V0_REFUSAL`), and a v3 log
    whose open turn has no documented closer."""
    if to != CURRENT:
        raise MigrationRefused(f"migration targets v{CURRENT} only (asked for v{to})")
    if log.verdict == "refused" or log.header is None:
        reason = log.defects[0].message if log.defects else "no session header"
        raise MigrationRefused(f"the log cannot be read, so it has no v4 view: {reason}")
    if log.verdict == "corrupt":
        first = next((d for d in log.defects if d.severity == "corrupt"), None)
        raise MigrationRefused("DSH refuses to open a corrupt log, so it has no v4 view"
                               + (f": {first.rule}: {first.message}" if first is not None else ""))
    version = rules_for(log.format_version)
    header = dict(log.header)
    if version == CURRENT:
        return header, [dict(e) for e in log.events]
    if version == 3:
        header["version"] = CURRENT
        return header, migrate_v3(log.events)
    raise MigrationRefused(V0_REFUSAL)


__all__ = ["KNOWN_BLOCKS", "OpenTurns", "PLUGIN_KINDS", "V0_REFUSAL", "lift_event", "lift_source",
           "lift_tool_message", "migrate_v3", "migrated", "unsupported_v3"]
