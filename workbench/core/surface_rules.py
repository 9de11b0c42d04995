"""The fold's per-event rules (v0 spec §4, v4 spec §4): `surfaceOpOf`, provenance and coverage,
developer/message data, the replacement range, the tool/result rewrite and the protected system
head. Layer: core (pure; imports io only).

Each check raises `FoldError(kind, seq, message)` with the reference's exact message and never
mutates; `workbench.core.surface.plan_event` calls them in the reference order (see its module
doc for that order).
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from workbench.core.events import known_types, surface_types
from workbench.errors import FoldError
from workbench.io.generations import nested_streams, seq_replace_keys, tool_role
from workbench.io.jsjson import is_neg_zero, is_number, is_safe_int
from workbench.io.jsvalues import deep_equal, js_str

if TYPE_CHECKING:
    from workbench.core.surface import SurfaceState

# -- helpers -----------------------------------------------------------------------------------

_MISSING = object()
_SURFACE_V0 = surface_types(0)
_SURFACE_V4 = surface_types(4)


def _is_event_seq(value: Any, version: int) -> bool:
    """isEventSeq: a non-negative safe integer; v4 also refuses -0 (v0 accepts it: -0 >= 0)."""
    if not is_safe_int(value) or value < 0:
        return False
    return not nested_streams(version) or not is_neg_zero(value)


def _event_at(events: Sequence[Mapping[str, Any]], seq: Any, base_seq: int) -> Any:
    """`events[seq - baseSeq]` with JS semantics: out of range (or not an index) is undefined."""
    if not is_safe_int(seq):
        return None
    index = int(seq) - base_seq
    if 0 <= index < len(events):
        return events[index]
    return None


def _type_of(event: Any) -> Any:
    return event.get("type") if isinstance(event, dict) else None


def _spread(value: Any) -> dict:
    """`{...value}` for the JSON values a log holds (non-objects spread to nothing)."""
    return dict(value) if isinstance(value, dict) else {}


# -- checks ------------------------------------------------------------------------------------

def _surface_op(event: Mapping[str, Any], etype: Any, seq: int, version: int) -> Any:
    """surfaceOpOf: None (no surface op), "append", or the validated replace object."""
    is_str = type(etype) is str
    if not (is_str and etype in (_SURFACE_V4 if nested_streams(version) else _SURFACE_V0)):
        if "surfaceOp" not in event and "sourceEventSeqs" not in event:
            return None
        if (nested_streams(version) and not (is_str and etype in known_types(version))
                and event.get("ignorable") is True):
            return None
        name = js_str(etype)
        if "surfaceOp" in event:
            raise FoldError("surface_op_on_ineligible", seq, f'session event "{name}" is not '
                            "surface-eligible and cannot carry surfaceOp")
        if "sourceEventSeqs" in event:
            raise FoldError("source_seqs_on_ineligible", seq, f'session event "{name}" is not '
                            "surface-eligible and cannot carry sourceEventSeqs")
        return None
    name = etype
    op = event.get("surfaceOp", _MISSING)
    if op is _MISSING:
        raise FoldError("missing_surface_op", seq, f'session event "{name}" is surface-eligible '
                        "and requires a surfaceOp marker")
    if type(op) is str and op == "append":
        return op
    if not isinstance(op, dict):
        raise FoldError("invalid_surface_op", seq,
                        f'session event "{name}" carries an invalid surfaceOp')
    start_key, end_key = ("startSeq", "endSeq") if seq_replace_keys(version) else ("start", "end")
    if not (len(op) == 3 and "op" in op and start_key in op and end_key in op
            and op["op"] == "replace" and type(op["op"]) is str
            and _is_event_seq(op[start_key], version) and _is_event_seq(op[end_key], version)):
        raise FoldError("invalid_replace_op", seq,
                        f'session event "{name}" carries an invalid replace surfaceOp')
    return op


def _check_sources(event: Mapping[str, Any], etype: Any, seq: int, version: int) -> set | None:
    """Provenance of one event (assertSourceEventReferences / assertProvenance) without coverage.
    Returns the cited seqs, or None when the field is absent."""
    raw = event.get("sourceEventSeqs", _MISSING)
    if nested_streams(version) and etype == "assistant/message" and raw is not _MISSING:
        raise FoldError("assistant_source_seqs", seq, "assistant/message embeds its source "
                        "stream and cannot carry sourceEventSeqs")
    if raw is _MISSING:
        return None
    if not isinstance(raw, list):
        raise FoldError("source_seqs_not_array", seq,
                        f"sourceEventSeqs on event at seq {seq} must be an array when present")
    if not raw:
        if nested_streams(version):
            raise FoldError("source_seqs_empty", seq, "sourceEventSeqs must not be empty")
        if etype != "assistant/message":
            raise FoldError("source_seqs_empty", seq,
                            "sourceEventSeqs must not be empty except on assistant/message")
    sources: set = set()
    non_earlier: Any = _MISSING
    for source in raw:
        if not _is_event_seq(source, version):
            raise FoldError("source_seqs_invalid_entry", seq, f'session event "{js_str(etype)}" '
                            "sourceEventSeqs must densely contain non-negative safe integers")
        sources.add(source)
        if non_earlier is _MISSING and source >= seq:
            non_earlier = source
    if len(sources) != len(raw):
        raise FoldError("source_seqs_duplicate", seq, "sourceEventSeqs must not contain duplicates")
    if non_earlier is not _MISSING:
        raise FoldError("source_seqs_not_earlier", seq, "sourceEventSeqs must reference earlier "
                        f"events: {js_str(non_earlier)} >= current seq {seq}")
    return sources


_INT = frozenset((int,))


def plain_sources(sources: Any, etype: Any, seq: int, version: int) -> bool:
    """Whether `_check_sources` surely passes an event of type `etype` at `seq` (an int) whose
    ``sourceEventSeqs`` is `sources` (`_MISSING`: absent): distinct integer seqs before `seq`
    (a shortcut: False means "run the check")."""
    if sources is _MISSING:
        return True
    if type(sources) is not list or not sources or (nested_streams(version) and etype == "assistant/message"):
        return False
    if len(sources) == 1:
        source = sources[0]
        return type(source) is int and 0 <= source < seq
    return (set(map(type, sources)) == _INT and min(sources) >= 0 and max(sources) < seq
            and len(set(sources)) == len(sources))


def _check_coverage(sources: set | None, shadowed: tuple[int, ...], seq: int) -> None:
    cited = sources or ()
    missing = [s for s in shadowed if s not in cited]
    if missing:
        raise FoldError("source_seqs_missing_shadowed", seq, "surface replace: sourceEventSeqs "
                        "must include every shadowed surface node; missing "
                        + ", ".join(str(s) for s in missing))


def _check_developer(event: Mapping[str, Any], seq: int, events: Sequence[Mapping[str, Any]],
                     base_seq: int) -> None:
    """assertDeveloperHeader (with validateSessionEventData's developer rules), v4 only."""
    subject = f"developer/message at seq {seq}"
    data = event.get("data")
    if not isinstance(data, dict):
        return
    message = data.get("message")
    if isinstance(message, dict):
        if message.get("role") != "developer":
            raise FoldError("developer_role", seq,
                            f"{subject} developer/message and developer role must occur together")
        content = message.get("content")
        if isinstance(content, list):
            has_additions = False
            for block in content:
                btype = block.get("type") if isinstance(block, dict) else None
                if btype != "tool-addition" and btype != "tool-removal":
                    continue
                name = block.get("toolName")
                if type(name) is not str or not name:
                    raise FoldError("developer_tool_name", seq,
                                    f"{subject} {btype} requires a nonempty toolName")
                if btype == "tool-addition":
                    has_additions = True
                    if "tool" in block:
                        raise FoldError("developer_inline_tool", seq,
                                        f"{subject} tool-addition must omit inline tool definitions")
            bad = (not _is_event_seq(data.get("headerSeq"), 4)) if has_additions else "headerSeq" in data
            if bad:
                raise FoldError("developer_header_seq_presence", seq, f"{subject} requires "
                                "headerSeq exactly when tool additions are present")
    if "headerSeq" not in data:
        return
    header_seq = data["headerSeq"]
    header_event = _event_at(events, header_seq, base_seq)
    if (not is_number(header_seq) or header_seq >= seq
            or _type_of(header_event) != "request/header"):
        raise FoldError("developer_header_seq_ref", seq,
                        "developer/message headerSeq must reference an earlier request/header")
    shown = js_str(header_seq)
    header = header_event.get("data")
    header = header.get("header") if isinstance(header, dict) else None
    tools = header.get("tools") if isinstance(header, dict) else None
    blocks = message.get("content") if isinstance(message, dict) else None
    for block in blocks if isinstance(blocks, list) else ():
        if not isinstance(block, dict) or block.get("type") != "tool-addition":
            continue
        name = block.get("toolName")
        definitions = [t for t in tools if isinstance(t, dict) and t.get("name") == name
                       and type(t.get("name")) is type(name)] if isinstance(tools, list) else []
        if len(definitions) != 1:
            raise FoldError("developer_tool_not_unique", seq, f'developer/message tool-addition '
                            f'"{js_str(name)}" must name exactly one tool in headerSeq {shown}')
        definition = definitions[0]
        if type(definition.get("description")) is not str or not isinstance(
                definition.get("parameters"), dict):
            raise FoldError("developer_tool_incomplete", seq, f'developer/message tool-addition '
                            f'"{js_str(name)}" requires a complete tool definition in headerSeq {shown}')
        if "deferLoading" in definition and definition["deferLoading"] is not True:
            raise FoldError("developer_defer_loading", seq, "developer/message referenced tool "
                            "deferLoading must be true when present")


def _replacement_range(state: SurfaceState, start: Any, end: Any,
                       seq: int) -> tuple[int, int, tuple[int, ...]]:
    """replacementRange: positions of the endpoints among the current nodes, start <= end."""
    start_idx = state.order.get(start, -1)
    if start_idx == -1:
        raise FoldError("replace_start_not_found", seq,
                        f"surface replace: start seq {js_str(start)} not found in surface")
    end_idx = state.order.get(end, -1)
    if end_idx == -1:
        raise FoldError("replace_end_not_found", seq,
                        f"surface replace: end seq {js_str(end)} not found in surface")
    if start_idx > end_idx:
        raise FoldError("replace_start_after_end", seq,
                        f"surface replace: start seq {js_str(start)} (index {start_idx}) is after "
                        f"end seq {js_str(end)} (index {end_idx})")
    return start_idx, end_idx, tuple(state.nodes[start_idx:end_idx + 1])


def _rewrite_rest(data: Any, version: int) -> dict:
    """The `data` of a tool/result with its content nulled (v4: `message.content`; v0: the
    first block's `content`, later blocks dropped)."""
    rest = _spread(data)
    message = _spread(rest.get("message"))
    if tool_role(version):
        message["content"] = None
    else:
        content = message.get("content")
        first = content[0] if isinstance(content, list) and content else None
        block = _spread(first)
        block["content"] = None
        message["content"] = [block]
    rest["message"] = message
    return rest


def _check_tool_rewrite(event: Mapping[str, Any], shadowed: tuple[int, ...], seq: int,
                        events: Sequence[Mapping[str, Any]], base_seq: int, version: int) -> None:
    """assertToolResultRewrite: a tool/result replacement rewrites one tool/result's content."""
    if len(shadowed) != 1:
        raise FoldError("tool_result_rewrite_count", seq,
                        "tool/result surface replacement must rewrite exactly one current node")
    original = _event_at(events, shadowed[0], base_seq)
    if _type_of(original) != "tool/result":
        raise FoldError("tool_result_rewrite_target", seq,
                        "tool/result surface replacement must target a current tool/result")
    if not deep_equal(_rewrite_rest(original.get("data"), version),
                      _rewrite_rest(event.get("data"), version)):
        raise FoldError("tool_result_rewrite_field", seq,
                        "tool/result surface replacement may change only content")


def _check_system_head(etype: Any, state: SurfaceState, start_idx: int, shadowed: tuple[int, ...],
                       seq: int, events: Sequence[Mapping[str, Any]], base_seq: int) -> None:
    """assertSystemHeadRewrite: node 0 holding a system/message is rewritten only by a
    system/message over exactly that node (v4)."""
    if start_idx != 0:
        return
    if _type_of(_event_at(events, state.nodes[0], base_seq)) != "system/message":
        return
    if etype != "system/message" or len(shadowed) != 1:
        raise FoldError("system_head_rewrite", seq, "surface replace: node 0 holds the system "
                        "prompt and may be rewritten only by a system/message over exactly that node")
