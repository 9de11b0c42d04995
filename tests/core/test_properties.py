"""Property tests of the one-pass timeline against full refolds, over generated valid v4 logs
(system head, user/assistant/tool rounds, compactions with nested checkpoints, tool-result
rewrites, system-head rewrites, image offloads).

Invariants (v4 spec §4): the timeline's surface at every seq equals a refold of that prefix;
the lineages of a surface's nodes cover every appended node up to that seq exactly once; the
diff between two seqs, applied to the first surface, gives the second; messages equal the fold's
projection."""
from __future__ import annotations

import copy
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from walk_check import assert_walk_matches

import workbench.core.timeline as timeline_module
from workbench.core.projection import surface_messages
from workbench.core.surface import fold_surface
from workbench.core.timeline import SurfaceTimeline
from workbench.errors import FoldError

ACTIONS = ("user", "round", "text", "empty", "log", "compact", "prune", "system", "offload",
           "developer")


class LogBuilder:
    """Builds a valid v4 event list while tracking the surface it should fold to."""

    def __init__(self) -> None:
        self.events: list[dict] = []
        self.nodes: list[int] = []
        self.images: dict[int, int] = {}      # node seq -> images not yet offloaded (count)
        self.offloaded: dict[int, set] = {}
        self.calls = 0
        self.emit({"type": "turn/start", "data": {"turn": 1}})
        self.emit({"type": "step/start", "data": {"turn": 1, "step": 1}})
        self.append(self.message("system/message", "system", [{"type": "text", "text": "sys"}]))

    @property
    def seq(self) -> int:
        return len(self.events)

    def emit(self, event: dict) -> int:
        seq = self.seq
        self.events.append({"type": event["type"], "seq": seq, "time": seq,
                            **{k: v for k, v in event.items() if k != "type"}})
        return seq

    def message(self, etype: str, role: str, content: list, **extra) -> dict:
        msg = {"id": f"m-{self.seq}", "role": role, "content": content,
               "source": {"kind": {"system": "system-prompt", "user": "user", "developer": "",
                                   "assistant": "model"}[role]}}
        if etype == "user/message":
            return {"type": etype, "data": msg, **extra}
        if role == "assistant":
            msg["source"].update(provider="mock", model="m")
        return {"type": etype, "data": {"turn": 1, "step": 1, "message": msg}, **extra}

    def append(self, event: dict) -> int:
        seq = self.emit({**event, "surfaceOp": "append"})
        self.nodes.append(seq)
        return seq

    def replace(self, event: dict, i: int, j: int, sources: list[int]) -> int:
        shadowed = self.nodes[i:j + 1]
        op = {"op": "replace", "startSeq": shadowed[0], "endSeq": shadowed[-1]}
        seq = self.emit({**event, "surfaceOp": op, "sourceEventSeqs": sources})
        self.nodes[i:j + 1] = [seq]
        return seq

    def tool_result(self, call: str, content: list, msg_id: str | None = None) -> dict:
        return {"type": "tool/result", "data": {"turn": 1, "step": 1, "message": {
            "id": msg_id or f"t-{self.seq}", "role": "tool", "source": {"kind": "tool", "callId": call},
            "toolCallId": call, "content": content, "isError": False}}}

    def act(self, action: str, a: int, b: int) -> None:
        head = 1 if self.events[self.nodes[0]]["type"] == "system/message" else 0
        if action == "user":
            self.append(self.message("user/message", "user", [{"type": "text", "text": "q"}]))
        elif action == "round":
            self.calls += 1
            call = f"c{self.calls}"
            self.append(self.message("assistant/message", "assistant", [
                {"type": "tool-call", "id": call, "name": "bash", "arguments": "{}"}],
                stream=[]))
            call_seq = self.emit({"type": "tool/call", "data": {
                "turn": 1, "step": 1, "callId": call, "name": "bash", "arguments": "{}"}})
            images = a % 3
            content = [{"type": "text", "text": "out" * (b % 5 + 1)}] + [
                {"type": "image", "attachment": {"attachmentId": f"i{k}", "mediaType": "image/png",
                                                 "bytes": 1, "width": 1, "height": 1}}
                for k in range(images)]
            result = self.tool_result(call, content)
            seq = self.emit({**result, "surfaceOp": "append", "sourceEventSeqs": [call_seq]})
            self.nodes.append(seq)
            if images:
                self.images[seq] = images
        elif action in ("text", "empty"):
            content = [] if action == "empty" else [{"type": "text", "text": "a"}]
            self.append(self.message("assistant/message", "assistant", content, stream=[]))
        elif action == "log":
            self.emit({"type": "todo/write", "data": {"todos": []}})
        elif action == "compact" and len(self.nodes) > head:
            i = head + a % (len(self.nodes) - head)
            j = i + b % (len(self.nodes) - i)
            shadowed = self.nodes[i:j + 1]
            start = self.emit({"type": "compaction/start", "data": {"compactionId": "k", "turn": 1}})
            summary = self.emit({"type": "compaction/summary", "data": {
                "compactionId": "k", "shadowedSeqs": list(shadowed),
                "shadowedRange": {"start": shadowed[0], "end": shadowed[-1]}}})
            checkpoint = self.message("user/message", "user", [{"type": "text", "text": "sum"}])
            checkpoint["data"]["source"] = {"kind": "compact-checkpoint", "compactionId": "k"}
            self.replace(checkpoint, i, j, [start, summary, *shadowed])
            self.emit({"type": "compaction/end", "data": {"compactionId": "k", "turn": 1}})
        elif action == "prune":
            tools = [k for k, s in enumerate(self.nodes) if self.events[s]["type"] == "tool/result"]
            if tools:
                k = tools[a % len(tools)]
                original = self.events[self.nodes[k]]
                self.emit({"type": "compaction/prune", "data": {"shadowedSeqs": [self.nodes[k]]}})
                pruned = copy.deepcopy({"type": "tool/result", "data": original["data"]})
                pruned["data"]["message"]["content"] = [{"type": "text", "text": "[pruned]"}]
                self.replace(pruned, k, k, [self.nodes[k]])
        elif action == "system" and head:
            self.replace(self.message("system/message", "system",
                                      [{"type": "text", "text": f"sys{a}"}]), 0, 0, [self.nodes[0]])
        elif action == "developer":
            header = self.emit({"type": "request/header", "data": {"reason": "change", "header": {
                "config": {"provider": "mock", "model": "m"},
                "tools": [{"name": "grep", "description": "d", "parameters": {"type": "object"},
                           "deferLoading": True}]}}})
            blocks = [{"type": "tool-addition", "toolName": "grep"}] if a % 2 else [
                {"type": "tool-removal", "toolName": "grep"}]
            message = self.message("developer/message", "developer", blocks)
            message["data"]["message"]["source"] = {"kind": "tool-registry"}
            if a % 2:
                message["data"]["headerSeq"] = header
            self.append(message)
        elif action == "offload":
            live = [s for s in self.nodes if self.images.get(s)]
            if live:
                target = live[a % len(live)]
                done = self.offloaded.setdefault(target, set())
                left = [k for k in range(self.images[target]) if k not in done]
                if left:
                    index = left[b % len(left)]
                    done.add(index)
                    self.emit({"type": "image/offload",
                               "data": {"targets": [{"seq": target, "imageIndexes": [index]}]}})


logs = st.lists(st.tuples(st.sampled_from(ACTIONS), st.integers(0, 50), st.integers(0, 50)),
                min_size=8, max_size=80)


def build(actions) -> LogBuilder:
    builder = LogBuilder()
    for action, a, b in actions:
        builder.act(action, a, b)
    return builder


def check_invariants(events: list[dict]) -> None:
    timeline = SurfaceTimeline(events, version=4)
    assert timeline.errors == ()
    surfaces = {}
    for seq in range(len(events)):
        fold = fold_surface(events, version=4, through=seq)
        surface = timeline.surface_at(seq)
        assert surface == fold.nodes, f"surface at {seq}"
        assert timeline.replace_generation_at(seq) == fold.replace_generation
        assert timeline.content_generation_at(seq) == fold.content_generation
        assert [m for _, m in timeline.messages_at(seq)] == [
            m for _, m in surface_messages(fold.nodes, events, version=4,
                                           projected=fold.projected_messages)]
        covered = [orig for node in surface for orig in timeline.lineage(node)]
        assert covered == list(timeline.appended_through(seq)), f"lineage at {seq}"
        surfaces[seq] = surface
    seqs = list(surfaces)
    for a in seqs[::3]:
        for b in seqs[::2]:
            assert timeline.diff(a, b).apply(surfaces[a]) == surfaces[b], (a, b)
    for rep in timeline.replacements:
        for hidden in rep.shadowed:
            assert tuple(timeline.shadowed_by(hidden)) == (rep.seq, rep.seq)
            assert timeline.status_at_end(hidden) == "shadowed"
    for node in timeline.final_nodes:
        assert timeline.status_at_end(node) == "current"
    assert_walk_matches(timeline, random.Random(len(events)))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs)
def test_timeline_equals_refold(actions):
    check_invariants(build(actions).events)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs)
def test_timeline_equals_refold_with_frequent_checkpoints(actions):
    saved = timeline_module._CHECKPOINT_EVERY
    timeline_module._CHECKPOINT_EVERY = 2
    try:
        check_invariants(build(actions).events)
    finally:
        timeline_module._CHECKPOINT_EVERY = saved


@settings(max_examples=80, deadline=None)
@given(logs, st.integers(0, 10_000))
def test_broken_event_is_recorded_and_skipped(actions, where):
    events = build(actions).events
    bad = where % len(events)
    broken = copy.deepcopy(events)
    broken[bad] = {**broken[bad], "surfaceOp": {"op": "replace", "startSeq": 0, "endSeq": 0},
                   "sourceEventSeqs": ["x"]}
    timeline = SurfaceTimeline(broken, version=4)
    try:
        fold_surface(broken, version=4)
    except FoldError as err:
        first = timeline.errors[0]
        assert (first.seq, first.kind, first.message) == (err.seq, err.kind, err.message)
        assert first.seq == bad
        assert timeline.status_at_end(bad) == "rejected"
        for seq in range(bad):
            assert timeline.surface_at(seq) == fold_surface(broken, version=4, through=seq).nodes
        assert_walk_matches(timeline, random.Random(where))
    else:
        raise AssertionError("a replace op with an invalid source must fail the fold")


def test_long_generated_logs():
    """A few long logs (hypothesis favours short ones): many nested compactions and rewrites."""
    import random

    for seed in (1, 2, 3):
        rng = random.Random(seed)
        builder = LogBuilder()
        for _ in range(220):
            builder.act(rng.choice(ACTIONS), rng.randrange(50), rng.randrange(50))
        timeline = SurfaceTimeline(builder.events, version=4)
        assert sum(any(s in timeline.replacement_by_seq for s in r.shadowed)
                   for r in timeline.replacements) >= 5  # nested replacements occur
        check_invariants(builder.events)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=False) | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["seq", "type", "op", "startSeq", "endSeq", "start", "end", "message",
                         "content", "role", "headerSeq", "targets", "imageIndexes", "toolName",
                         "tools", "header", "x"]), inner, max_size=4),
    max_leaves=8)
fields = st.sampled_from([
    ("seq",), ("type",), ("data",), ("surfaceOp",), ("sourceEventSeqs",), ("ignorable",),
    ("data", "message"), ("data", "headerSeq"), ("data", "targets"), ("data", "header"),
    ("data", "message", "content"), ("data", "message", "role"), ("surfaceOp", "startSeq")])


def _set(event: dict, path: tuple, value) -> None:
    for key in path[:-1]:
        event = event.get(key)
        if not isinstance(event, dict):
            return
    event[path[-1]] = value


@settings(max_examples=300, deadline=None)
@given(logs, st.lists(st.tuples(st.integers(0, 10_000), fields, json_values), max_size=4),
       st.sampled_from([0, 4]))
def test_arbitrary_damage_raises_only_fold_errors(actions, damage, version):
    """Untrusted logs: whatever a field holds, the fold raises FoldError or nothing."""
    events = copy.deepcopy(build(actions).events)
    for where, path, value in damage:
        _set(events[where % len(events)], path, value)
    timeline = SurfaceTimeline(events, version=version)      # records errors, never crashes
    try:
        fold = fold_surface(events, version=version)
    except FoldError as err:
        assert (err.seq, err.message) == (timeline.errors[0].seq, timeline.errors[0].message)
    else:
        assert timeline.errors == () and timeline.final_nodes == fold.nodes
