"""The citation audit's chain (`citation._Chain`: the texts of everything the hidden checkpoints
stood for, asked of the nodes holding a text) against its eager definition: a set of nodes per
landed compaction, its hidden set and the surface its summary was written against, unioned with
the sets of the checkpoints it hid (the whole citation audit run with each, compared). Random
logs of nested compactions over random spans, summaries stating random anchors (some only ever
on nodes hidden two levels down, so that only the chain keeps them from being called
invented)."""
from __future__ import annotations

import pytest
from frame_scripts import session_of
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.build import LogBuilder
from workbench.core.quality import citation, hidden_sets
from workbench.core.quality.citation import _Chain
from workbench.core.timeline import Shadowing, SurfaceTimeline

PATHS = [f"src/m{i}.py" for i in range(8)]
MENTIONS = st.lists(st.integers(0, len(PATHS) - 1), max_size=3)
STEP = st.one_of(st.tuples(st.just("user"), MENTIONS),
                 st.tuples(st.just("compact"), st.integers(0, 30), st.integers(0, 30),
                           MENTIONS))


def _eager_chain(timeline: SurfaceTimeline, hidden_by: dict[int, tuple[int, ...]]) -> type:
    """`_Chain` by its definition, for one log (`hidden_by`: each replacement seq's hidden
    set): the nodes of every member's surface when its summary was written
    (`timeline.surface_at`) and of its hidden set, kept as a set; a text is in the chain when
    a node holding it is in that set."""

    class EagerChain:
        def __init__(self) -> None:
            self.ats: list[int] = []
            self.nodes: set[int] = set()

        def merged(self, other: EagerChain) -> EagerChain:
            self.ats += other.ats
            self.nodes |= other.nodes
            return self

        def add(self, at: int, hider: int) -> None:
            self.ats.append(at)
            self.nodes.update(timeline.surface_at(at), hidden_by[hider])

        def holds(self, nodes, _timeline) -> bool:
            return any(node in self.nodes for node in nodes)

    return EagerChain


def _log(steps) -> LogBuilder:
    b = LogBuilder(version=4, session_id="chain", cwd="/work/demo")
    with b.turn():
        with b.step():
            b.system("You are a coding agent.")
            b.user("Start with " + PATHS[0] + ".")
    for step in steps:
        if step[0] == "user":
            with b.turn():
                with b.step():
                    b.user("Look at " + " and ".join(PATHS[i] for i in step[1]) + ".")
            continue
        _, a, z, stated = step
        state = b.state
        first = state.first_compactable()
        movable = len(state.nodes) - first
        if movable < 1:
            continue
        i, j = sorted((first + a % movable, first + z % movable))
        b.compact(state.nodes[i], state.nodes[j],
                  summary="Done with " + " and ".join(PATHS[k] for k in stated) + ".")
    return b


@settings(max_examples=120, deadline=None)
@given(st.lists(STEP, min_size=1, max_size=14))
@example([("user", []), ("user", [2]), ("compact", 0, 0, []), ("compact", 1, 2, []),
          ("compact", 0, 0, [2])])   # m2 only on the surface the first member's summary read
def test_chain_is_the_union_of_its_members_texts(steps) -> None:
    quality = session_of(_log(steps)).analysis.quality
    hidden = hidden_sets(quality.records)
    eager = _eager_chain(quality.timeline,
                         {r.replacement_seq: h for r, h in zip(quality.records, hidden)})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(citation, "_Chain", eager)
        want = citation.citations(quality.records, hidden, quality.timeline, quality.reader)
    assert quality.citations == want


def test_only_the_chain_keeps_a_nested_anchor_from_invented() -> None:
    """A path hidden by the first compaction and dropped by its summary is stated again by the
    third, which hid only the second's checkpoint: not invented (the chain), while a path no
    node ever held is."""
    b = _log([("user", [3]), ("compact", 1, 1, []), ("user", [4]), ("compact", 1, 2, [4]),
              ("user", [5]), ("compact", 1, 1, [3, 6])])
    found = session_of(b).analysis.quality.citations
    assert [c.of("invented", "path") for c in found] == [(), (), ("src/m6.py",)]


class _Lifetimes:
    """The two questions `_Chain.holds` asks of a timeline, over given node lifetimes (seq ->
    the seq that hid it, or None while on the surface): cases a builder cannot write, a node
    appended after the summary that its replacement hid and a node hidden exactly at a
    member's summary seq minus one."""

    def __init__(self, until: dict[int, int | None]) -> None:
        self.until = until

    def is_node(self, seq: int) -> bool:
        return seq in self.until

    def shadowed_by(self, seq: int):
        hidden_at = self.until[seq]
        return None if hidden_at is None else Shadowing(hidden_at, hidden_at)


def test_holds_is_on_the_surface_at_a_member_or_hidden_by_one() -> None:
    chain = _Chain()
    chain.add(9, 12)                                  # summary 10, replacement 12
    lives = _Lifetimes({3: 12, 11: 12, 5: 9, 8: None, 10: 30, 13: None, 4: 7})
    assert chain.holds([11], lives)                   # appended after the summary, hidden by it
    # on the surface at 9: 3 (hidden by the member) and 8; not 5 (hidden at 9 itself), 4
    # (gone at 7), 10 and 13 (appended after 9, hidden by another seq or never)
    assert [chain.holds([n], lives) for n in (3, 8, 5, 4, 10, 13)] == [
        True, True, False, False, False, False]
    assert not chain.holds([42], lives)               # never a node
    assert chain.holds([4, 42, 8], lives)             # any holder will do
