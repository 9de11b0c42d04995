"""Message projection: which model message a surface node stands for, and the human transcript.
Layer: core (pure; imports io only).

* `derive_message` is the reference's `deriveEventMessage` (v0 spec §4.8, v4 spec §4.8): a
  `user/message` projects to its whole `data`; `assistant/message` (and in v4 `system/message`,
  `developer/message`) to `data.message` unless its content is empty (then no message: the node
  stays on the surface, it only hosts `usage`); `tool/result` to `data.message`; anything else to
  none. A v4 `image/offload` projection of the node (when given) wins over the event's own message.
* `offload_images` / `image_offload_messages` are the reference's `offloadMessageImages` /
  `imageOffloadProjection` (v4 spec §4.8): they mark image blocks `offloaded: true`, validating the
  event exactly as the runtime does; failures raise `FoldError` with the reference message.
* `transcript_seqs` is the append-origin transcript (v0 spec §4.9, v4 §4.9): what a human saw,
  in log order, including nodes that a later replacement hid; replacement copies are model-only,
  and in v4 so are the `system/message` and `developer/message` nodes.

Projected messages are never mutated: a projection copies the message and the changed blocks.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from workbench.core.events import surface_types
from workbench.errors import FoldError
from workbench.io.generations import nested_streams
from workbench.io.jsjson import is_neg_zero, is_safe_int
from workbench.io.jsvalues import js_str

_MESSAGE_IN_MESSAGE_FIELD = frozenset({"assistant/message", "system/message", "developer/message"})
_TRANSCRIPT_TYPES = frozenset({"user/message", "assistant/message", "tool/result"})


def _is_index(value: Any) -> bool:
    """The reference's `isIndex`/`isEventSeq`: a non-negative safe integer that is not -0."""
    return is_safe_int(value) and value >= 0 and not is_neg_zero(value)


def _empty_content(message: Any) -> bool:
    """`message.content.length === 0` for the shapes a validated log holds (array or string)."""
    content = message.get("content") if isinstance(message, dict) else None
    return isinstance(content, (list, str)) and len(content) == 0


def derive_message(event: Mapping[str, Any], *, version: int,
                   projected: Mapping[int, dict] | None = None) -> dict | None:
    """The model message `event` derives, or None (reference: deriveEventMessage).

    `projected` maps seqs to their current `image/offload` projection (v4); pass the projection of
    the same log prefix (a fold's `projected_messages`)."""
    if projected:
        seq = event.get("seq")
        if is_safe_int(seq):
            message = projected.get(int(seq))
            if message is not None:
                return message
    etype = event.get("type")
    data = event.get("data")
    if etype == "user/message":
        return data
    if etype == "tool/result":
        return data.get("message") if isinstance(data, dict) else None
    if etype in _MESSAGE_IN_MESSAGE_FIELD and (nested_streams(version) or etype == "assistant/message"):
        message = data.get("message") if isinstance(data, dict) else None
        if message is None or _empty_content(message):
            return None
        return message
    return None


def surface_messages(nodes: Iterable[int], events: Sequence[Mapping[str, Any]], *, version: int,
                     projected: Mapping[int, dict] | None = None,
                     base_seq: int = 0) -> list[tuple[int, dict]]:
    """The model history of a surface: `(seq, message)` for every node that derives one."""
    out = []
    for seq in nodes:
        message = derive_message(events[seq - base_seq], version=version, projected=projected)
        if message is not None:
            out.append((seq, message))
    return out


def transcript_seqs(events: Iterable[Mapping[str, Any]], *, version: int) -> tuple[int, ...]:
    """Seqs of the append-origin transcript, in log order (reference: isAppendSurfaceEvent).

    In v4 the `system/message`/`developer/message` nodes are model-only context (v4 §4.9)."""
    kinds = _TRANSCRIPT_TYPES if nested_streams(version) else surface_types(version)
    out = []
    for event in events:
        if event.get("type") in kinds and event.get("surfaceOp") == "append":
            seq = event.get("seq")
            if is_safe_int(seq):
                out.append(int(seq))
    return tuple(out)


# -- image/offload (v4 §4.8) -------------------------------------------------------------------

def _fail(kind: str, seq: int, message: str) -> FoldError:
    return FoldError(f"image_offload_{kind}", seq, message)


def offload_images(message: dict, indexes: Sequence[Any], seq: int) -> dict:
    """A copy of `message` whose image occurrences `indexes` are `offloaded: true`
    (reference: offloadMessageImages; image blocks are counted in top-level content order)."""
    content = message.get("content") if isinstance(message, dict) else None
    blocks = content if isinstance(content, list) else []
    image_index = 0
    selected = 0
    new_blocks: list[Any] | None = None
    for position, block in enumerate(blocks):
        projected = block
        if isinstance(block, dict) and block.get("type") == "image":
            if selected < len(indexes) and image_index == indexes[selected]:
                if block.get("offloaded") is True:
                    raise _fail("already_offloaded", seq,
                                f"image/offload: image index {image_index} is already offloaded")
                projected = dict(block)
                projected["offloaded"] = True
                selected += 1
            image_index += 1
        if projected is not block and new_blocks is None:
            new_blocks = list(blocks[:position])
        if new_blocks is not None:
            new_blocks.append(projected)
    if selected != len(indexes):
        raise _fail("missing_index", seq,
                    f"image/offload: image index {js_str(indexes[selected])} does not exist")
    out = dict(message) if isinstance(message, dict) else {}
    out["content"] = new_blocks if new_blocks is not None else content
    return out


def image_offload_messages(event: Mapping[str, Any], seq: int, *, is_node, event_at,
                           current: Mapping[int, dict]) -> dict[int, dict]:
    """Validate one `image/offload` event and return its new projected messages by seq
    (reference: imageOffloadProjection). `is_node(seq)` says whether a seq is a current surface
    node, `event_at(seq)` returns the event at a seq (or None), `current` holds the projections
    already in force; `seq` is the offload event's own position (for the error)."""
    data = event.get("data")
    targets = data.get("targets") if isinstance(data, dict) else None
    if not isinstance(data, dict) or len(data) != 1 or not isinstance(targets, list) or not targets:
        raise _fail("data", seq, "image/offload: data must contain a nonempty targets array")
    messages: dict[int, dict] = {}
    for target in targets:
        indexes = target.get("imageIndexes") if isinstance(target, dict) else None
        if (not isinstance(target, dict) or len(target) != 2 or not _is_index(target.get("seq"))
                or not isinstance(indexes, list) or not indexes):
            raise _fail("target_shape", seq,
                        "image/offload: each target must contain a seq and nonempty imageIndexes")
        target_seq = int(target["seq"])
        shown = js_str(target["seq"])
        if target_seq in messages:
            raise _fail("duplicate_target", seq, f"image/offload: duplicate target seq {shown}")
        if not is_node(target_seq):
            raise _fail("target_not_node", seq,
                        f"image/offload: target seq {shown} is not a current surface node")
        source = event_at(target_seq)
        stype = source.get("type") if isinstance(source, dict) else None
        if stype != "user/message" and stype != "tool/result":
            raise _fail("target_type", seq,
                        f"image/offload: target seq {shown} must be user/message or tool/result")
        previous = -1
        for index in indexes:
            if not _is_index(index) or index <= previous:
                raise _fail("indexes", seq, "image/offload: imageIndexes must be strictly "
                                            "increasing non-negative safe integers")
            previous = index
        base = current.get(target_seq)
        if base is None:
            sdata = source.get("data")
            base = sdata if stype == "user/message" else (
                sdata.get("message") if isinstance(sdata, dict) else None)
        messages[target_seq] = offload_images(base, indexes, seq)
    return messages
