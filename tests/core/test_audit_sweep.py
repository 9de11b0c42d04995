"""The one-pass compaction audit (`workbench.core.compaction.sweep`, `eventfacts`) gives
exactly what the per-attempt reference computations give: pairing from each node's event, lost facts from the
joined hidden text, the cache break from two rebuilt requests. Checked on generated logs with
every kind of attempt (pressure, overflow, manual, failed with and without a summary, a rejected
checkpoint, interrupted and stale brackets, prunes, header changes, a v4 developer message and
an image offload), in memory and lazily parsed, with the facts collected during the audit's own
fold, read in a pass of their own or fed by a caller; and the fast fact scan against the plain
patterns."""
from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.build import LogBuilder
from workbench.core.compaction.audit import (
    CompactionAudit,
    _attempt_around,
    _hidden_set,
    audit_events,
    audit_log,
    loader_protocol,
)
from workbench.core.compaction.brackets import compactions, price_cache
from workbench.core.compaction.checks import compaction_checks
from workbench.core.compaction.eventfacts import EventFacts
from workbench.core.compaction.probe import (
    _FACTS,
    _PATTERNS,
    _PLAIN_FACTS,
    cache_break,
    lost_probe,
    message_text,
    probe_facts,
    text_facts,
)
from workbench.core.load import evaluate_path, load_log
from workbench.core.requests import iter_attempts
from workbench.core.timeline import SurfaceTimeline

TOOLS = [{"name": n, "description": f"{n} tool", "parameters": {"type": "object"}}
         for n in ("read", "grep", "bash")]
IMAGE = {"type": "image", "attachment": {"attachmentId": "att-1", "mediaType": "image/png",
                                         "bytes": 120, "width": 4, "height": 4}}


def _step(b: LogBuilder, rng: random.Random, n: int) -> None:
    name = rng.choice(["read", "grep", "bash"])
    attempt = b.assistant(f"Using {name} on item-{n}.", reasoning="Check src/app/main.py first.",
                          tool_calls=[(name, {"path": f"/srv/app/mod_{n % 7}.py", "n": n})])
    call = attempt.call_ids[0]
    b.tool_call(call)
    b.tool_result(call, text=f"item-{n}: FileNotFoundError at line {n}\n"
                  + ",".join(str(i) for i in range(n, n + 9)) + "\n" + "x " * (n % 40))


def _build(path: Path, version: int, turns: int = 36, seed: int = 5) -> None:
    rng = random.Random(seed)
    b = LogBuilder(version=version, stream_to=path, seed=seed, batch_events=16)
    v4 = version >= 4
    n = 0
    for turn in range(1, turns + 1):
        if turn > 1:
            b.end_seed()
        if turn % 9 == 4:   # a manual /compact between turns
            b.compact(summary="Manual: keep src/app/main.py and parseConfig.", command=True)
        offloaded = False
        with b.turn():
            for step in range(1, rng.randint(4, 8)):
                with b.step():
                    if step == 1:
                        if turn == 1 and v4:
                            b.system("You are a test agent. Keep answers short. " * 4)
                        user = b.user([{"type": "text", "text": f"Turn {turn}: fix ValueError in "
                                        f"src/app/mod_{turn}.py"}, *([IMAGE] if v4 else [])])
                        b.request_header(tools=TOOLS[:1 + turn % 3], max_tokens=1024)
                    if v4 and step == 3 and turn % 4 == 1:
                        b._emit("developer/message", {"turn": turn, "step": step, "message": {
                            "id": f"dev-{turn}", "role": "developer",
                            "content": [{"type": "tool-removal", "toolName": "grep"}],
                            "source": {"kind": "tool-registry"}}}, surface_op="append")
                    if rng.random() < 0.1:
                        b.attempt_failed()
                    n += 1
                    _step(b, rng, n)
                    if step == 3 and turn % 6 == 5:   # overflow: inside the open step
                        b.compact(summary=f"Overflow recovery of turn {turn}.")
                roll = rng.random()
                nodes = list(b.surface)
                if v4 and turn % 5 == 2 and user in nodes[:-1] and not offloaded:
                    # a span after the turn's prompt, whose image is offloaded before the next
                    # request: the two requests differ at the prompt, before the checkpoint
                    offloaded = True
                    b.compact(nodes[nodes.index(user) + 1], nodes[-1], summary="Mid span.")
                    b.log("image/offload", {"targets": [{"seq": user, "imageIndexes": [0]}]})
                elif roll < 0.3:
                    b.compact(summary=[(f"Turn {turn}: mod_{turn}.py raised ValueError; "
                                        f"see https://example.com/t/{turn}"), f"Next: item-{n}"])
                elif roll < 0.36:
                    b.compact(error="summary is not smaller than the shadowed content (900 "
                              "estimated framed tokens >= 20)", summary_logged=True)
                elif roll < 0.4:
                    b.compact(error="AbortError: the operation was aborted")
                elif roll < 0.5:
                    results = [s for s in b.surface if b.state.node_events.get(s, {}).get(
                        "type") == "tool/result"]
                    if results:
                        b.prune(results[0], head=8, tail=8)
        if turn == turns - 1:   # killed mid-compaction, then resumed: stale
            b.compact(interrupted=True, summary_logged=True)
    with b.turn(), b.step():
        n += 1
        _step(b, rng, n)
    if not v4:   # a checkpoint naming another bracket: the v0 invariant's first failure
        a, z = b.surface[-2:]
        start = b.raw({"type": "compaction/start", "data": {"compactionId": "cmp-x", "turn": None}})
        summary = b.raw({"type": "compaction/summary", "data": {
            "compactionId": "cmp-x", "summary": [{"type": "text", "text": "x"}],
            "shadowedRange": {"start": a, "end": z}, "shadowedSeqs": [a, z],
            "shadowedTokenCount": 1}})
        b.raw({"type": "user/message", "surfaceOp": {"op": "replace", "start": a, "end": z},
               "sourceEventSeqs": [start, summary, a, z], "data": {
                   "id": "cp-x", "role": "user", "content": [{"type": "text", "text": "cp"}],
                   "source": {"kind": "plugin", "plugin": "compact", "compactionId": "cmp-y"}}})
        b.raw({"type": "compaction/end", "data": {"compactionId": "cmp-x", "turn": None}})
    b.raw({"type": "compaction/end", "data": {"compactionId": "cmp-orphan", "turn": None}})
    b.compact(interrupted=True)   # the log ends inside a bracket: interrupted
    b.close()


def _reference(log) -> list[dict]:
    """The audit rows computed attempt by attempt from the events (the pre-sweep code path)."""
    events = list(log.events)
    version = log.format_version or 0
    found = compactions(events, version=version)
    timeline, price = found.timeline, found.price
    attempts = sorted(iter_attempts(events, version=version), key=lambda a: a.before)
    befores = [a.before for a in attempts]
    rows = []
    for record in found.records:
        hidden = _hidden_set(record, timeline, events, version)
        computed = None if hidden is None else sum(price(s) for s in hidden)
        added = (record.replacement_tokens if record.replacement_seq is not None
                 else record.framed_summary_tokens)
        before, after = _attempt_around(attempts, befores, record)
        checks = compaction_checks(record, events, timeline, price, version=version,
                                   hidden=hidden, computed=computed, next_request=after)
        probe = None
        if record.summary_seq is not None and hidden is not None:
            messages = [timeline.message_at(s, record.summary_seq) for s in hidden]
            probe = lost_probe([m for m in messages if m is not None], record.summary)
        cache = None
        if before is not None and after is not None and record.replacement_seq is not None:
            cache = cache_break(events, timeline, before, after, version=version)
        rows.append(CompactionAudit(record, checks, hidden, computed, added, probe,
                                    cache).as_json())
    return rows


@pytest.fixture(scope="module", params=[0, 4], ids=["v0", "v4"])
def generated(request, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("sweep") / f"varied-v{request.param}.jsonl"
    _build(path, request.param)
    return path


def test_generated_log_covers_every_kind_of_attempt(generated: Path) -> None:
    report = audit_log(load_log(generated))
    statuses = {c.record.status for c in report.compactions}
    triggers = {c.record.trigger.kind for c in report.compactions}
    assert statuses == {"completed", "failed", "interrupted", "stale"}
    assert triggers == {"pressure", "overflow", "manual"}
    assert report.prunes and any(c.cache_break for c in report.compactions)
    assert any(c.cache_break.envelope_changed for c in report.compactions if c.cache_break)
    assert any(c.lost is not None and c.record.replacement_seq is None
               for c in report.compactions)
    assert len(report.compactions) > 20
    assert report.protocol   # the orphan compaction/end (v0 invariant, v4 relationships)


@pytest.mark.parametrize("listed", [False, True], ids=["store", "list"])
def test_audit_equals_the_per_attempt_reference(generated: Path, listed: bool) -> None:
    log = evaluate_path(generated).log
    assert log.verdict != "refused"
    if listed:   # the same events in a plain list (a rebuilt log)
        log = dataclasses.replace(log, events=list(log.events))
    report = audit_log(log).as_json()
    assert report["compactions"] == _reference(load_log(generated))
    assert report == audit_log(load_log(generated)).as_json()


@pytest.mark.parametrize("how", ["own-timeline", "fed-facts"])
def test_audit_on_a_callers_timeline_equals_the_reference(generated: Path, how: str) -> None:
    """A caller that folds the log itself (a session) hands its timeline and prices over: the
    audit then reads what it needs in its own pass (v0: riding on the attempts' pass), or from
    facts the caller fed during its fold."""
    log = evaluate_path(generated).log
    version = log.format_version or 0
    timeline = SurfaceTimeline(log.events, version=version)
    facts = None
    if how == "fed-facts":
        facts = EventFacts.growing(log.events, version=version, texts=True)
        for seq, event in enumerate(log.events):
            facts.feed(seq, event)
        facts.finish()
    found = compactions(log.events, version=version, timeline=timeline,
                        price=price_cache(log.events, version=version), facts=facts)
    assert (found.facts is None) == (how == "own-timeline")
    report = audit_events(log.events, version=version, found=found,
                          protocol=loader_protocol(log))
    assert report.as_json()["compactions"] == _reference(load_log(generated))


def test_v0_attempts_found_during_the_fold(generated: Path) -> None:
    """A lazily parsed v0 log's model attempts are found in the audit's own fold (no pass of
    their own), equal to `iter_attempts` over the events; the audit equals the reference."""
    log = evaluate_path(generated).log
    version = log.format_version or 0
    found = compactions(log.events, version=version)
    expected = list(iter_attempts(list(log.events), version=version))
    assert found.facts is not None
    if version >= 4:
        assert found.facts.attempts is None
    else:
        assert found.facts.attempts == expected
    assert audit_log(log).as_json()["compactions"] == _reference(load_log(generated))


def test_v4_projection_and_developer_message_reach_the_compared_requests(tmp_path: Path) -> None:
    path = tmp_path / "v4.jsonl"
    _build(path, 4)
    log = load_log(path)
    report = audit_log(log)
    timeline = compactions(list(log.events), version=4).timeline
    projected = {s for s in range(len(log.events)) if timeline.projected_at(s) is not None}
    hidden = {s for c in report.compactions for s in (c.hidden_seqs or ())}
    assert projected & hidden
    breaks = [c.cache_break for c in report.compactions if c.cache_break is not None]
    assert any(b.position > 1 and not b.envelope_changed for b in breaks)
    developer = {s for s in range(len(log.events))
                 if log.events[s].get("type") == "developer/message"}
    assert developer & hidden


# -- the fact scan ---------------------------------------------------------------------------------

_PIECES = list("aAbeEfFtTxrhpsz:/._-@+~ \t\n\u00a0\u2003\x0b\x1c\x1f0123456789,;()[]{}<>\"'`ZIıſKµé_") + [
    "http://", "https://", "Error", "Exception", "exit code: ", "exit code ", "error", "Traceback",
    "FATAL", ".py", ".json", ".ts", "../", "~/", "ERR_X", "-a.py", "parseConfig", "snake_case"]


def _matches(pattern, text: str) -> list[tuple[str | None, int, int]]:
    return [(m.lastgroup, m.start(), m.end()) for m in pattern.finditer(text)]


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=40).map("".join))
def test_fast_fact_scan_matches_the_plain_patterns(text: str) -> None:
    assert _matches(_FACTS.unicode, text) == _matches(_PLAIN_FACTS, text)
    assert _matches(_FACTS.scanner(text), text) == _matches(_PLAIN_FACTS, text)
    names = {f"g{i}": name for i, (name, _) in enumerate(_PATTERNS)}
    plain = []
    for m in _PLAIN_FACTS.finditer(text):
        name, value = names[m.lastgroup], m.group()
        plain.append((name, value.rstrip(".,;:") if name in ("urls", "paths") else value.strip()))
    assert text_facts(text) == plain


@settings(max_examples=500, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_PIECES), max_size=25).map("".join), max_size=6))
def test_facts_of_joined_texts_are_the_facts_of_each_text(texts: list[str]) -> None:
    messages = [{"content": [{"type": "text", "text": t}]} for t in texts]
    summary = [{"type": "text", "text": texts[0] if texts else ""}]
    parts = [(len(message_text(m)), text_facts(message_text(m))) for m in messages]
    assert probe_facts(parts, summary) == lost_probe(messages, summary)
