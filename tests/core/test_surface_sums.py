"""The audit's per-surface sums in numpy (`sweep.AuditFacts.cut_balanced`, `newest_result`)
against the rule's own walk (`pairing.cut_balanced`, the newest ``tool/result`` by type), on
every surface the fold produced and on node lists the rule refuses (out of range, a result
before its call, reversed, a bool)."""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from tour_script import tour_script

from workbench.core.compaction.audit import _read_facts
from workbench.core.compaction.brackets import compactions
from workbench.core.compaction.pairing import ToolPairingError, cut_balanced
from workbench.core.compaction.sweep import newest_result
from workbench.core.load import load_log

REAL = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "dsh-real-v4"


def _logs(tmp_path: Path) -> list[Path]:
    made = [tour_script(v, session_id=f"session-sums-{v}").write(tmp_path / name)
            for v, name in ((0, "t0.session.jsonl"), (4, "t4.session.v4.jsonl"))]
    return made + (sorted(REAL.glob("*.jsonl"))[:3] if REAL.is_dir() else [])


def _walk(nodes, events):
    try:
        return cut_balanced(nodes, events)
    except ToolPairingError as exc:
        return ("error", exc.message)


def _sums(facts, nodes):
    try:
        return tuple(facts.cut_balanced(nodes))
    except ToolPairingError as exc:
        return ("error", exc.message)


def test_numpy_sums_equal_the_walk(tmp_path):
    rng = random.Random(12)
    for path in _logs(tmp_path):
        log = load_log(path)
        events, version = log.events, log.format_version or 0
        found = compactions(events, version=version)
        facts, _hidden, _attempts = _read_facts(found, events, version, None)
        timeline = found.timeline
        surfaces = [list(timeline.surface_at(s)) for s in range(len(events))]
        odd = []
        for surface in surfaces[:: max(1, len(surfaces) // 50)]:
            odd += [surface[::-1], surface + [len(events)], [True, *surface], surface[1:],
                    rng.sample(surface, len(surface)), []]
        for nodes in surfaces + odd:
            assert _sums(facts, nodes) == _walk(nodes, events), (path.name, nodes)
            if all(type(s) is int for s in nodes):   # as the checks pass a surface
                seqs = np.asarray(nodes, dtype=np.int64)
                assert _sums(facts, seqs) == _walk(nodes, events), (path.name, nodes)
                if all(0 <= s < len(events) for s in nodes):
                    assert facts.newest_result(seqs) == newest_result(nodes, events)
            if all(isinstance(s, int) and 0 <= s < len(events) for s in nodes):
                assert facts.newest_result(nodes) == newest_result(nodes, events)


@pytest.mark.parametrize("bad", [-1, 2**40, 1.0, "3", None])
def test_a_node_that_is_no_seq_is_named_by_the_walk(tmp_path, bad):
    log = load_log(_logs(tmp_path)[1])
    found = compactions(log.events, version=4)
    facts, _, _ = _read_facts(found, log.events, 4, None)
    nodes = [*found.timeline.surface_at(len(log.events) - 1), bad]
    assert _sums(facts, nodes) == _walk(nodes, log.events)
    assert _sums(facts, nodes)[0] == "error"
