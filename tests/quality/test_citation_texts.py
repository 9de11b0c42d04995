"""The citation audit's substring test (`citation._inside`, with `_Seen.may_hold` ruling values
out before the surface's texts are joined) against its definition: a value occurs inside the
hidden and surface texts joined with line breaks, as the surface walks on (texts joining and
leaving, coming back, and values spanning two texts)."""
from __future__ import annotations

from itertools import chain

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.quality.citation import _inside, _Seen

TEXTS = st.text(alphabet="ab\nc", max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 6), TEXTS), max_size=4),
                          st.lists(st.integers(0, 6), max_size=3),
                          st.sets(TEXTS, max_size=3),
                          st.lists(TEXTS, min_size=1, max_size=4)), max_size=8),
       st.sampled_from([_Seen.SLACK, 0]))
def test_inside_is_the_joined_substring_test(moves, slack) -> None:
    """With no slack the blocks are rebuilt whenever texts have left the surface."""
    seen, texts, present = _Seen(), {}, set()
    seen.SLACK = slack
    for joins, leaves, support, values in moves:
        left = [s for s in dict.fromkeys(leaves) if s in present]
        seen.drop(left, texts)
        present -= set(left)
        for seq, text in joins:
            if seq not in present:
                texts[seq] = (text,)
                seen.add([seq], texts)
                present.add(seq)
        assert set(seen.counts) == {texts[s][0] for s in present}
        joined: dict[str, str] = {}
        for value in values:
            want = value in "\n".join(chain(support, seen.counts))
            assert _inside(value, support, seen.counts, seen, joined) == want, value


class _Crowded(_Seen):
    """Four window flags and no slack: every hash collides, the blocks rebuilt at each test."""

    WINDOW_BITS = 2
    SLACK = 0


class _Pieces(_Seen):
    """Texts hashed a byte at a time: every window reaches into the next piece."""

    PIECE = 1


@settings(max_examples=300, deadline=None)
@given(st.sampled_from([_Seen, _Crowded, _Pieces]), st.data())
def test_may_hold_rules_out_only_what_no_surface_text_contains(kind, data) -> None:
    seen, texts, present = kind(), {}, set()
    words = st.text(alphabet="abé\ud800😀", min_size=1, max_size=12)
    for _ in range(data.draw(st.integers(1, 6))):
        left = [s for s in data.draw(st.lists(st.integers(0, 6), max_size=3)) if s in present]
        seen.drop(list(dict.fromkeys(left)), texts)
        present -= set(left)
        for seq in data.draw(st.lists(st.integers(0, 6), max_size=3)):
            if seq not in present:
                texts[seq] = (data.draw(words),)
                seen.add([seq], texts)
                present.add(seq)
        on_surface = list(seen.counts)
        for text in on_surface:   # every piece of a surface text may be held
            start = data.draw(st.integers(0, len(text) - 1))
            assert seen.may_hold(text[start:data.draw(st.integers(start + 1, len(text)))])
        value = data.draw(words)
        assert seen.may_hold(value) or not any(value in text for text in on_surface)
