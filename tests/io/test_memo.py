"""`io.memo.Memo`: a bounded memo holds at most `limit` entries whatever it is fed, one entry at
a time or many at once, and what it holds is what it was last told for that key."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.memo import Memo

_FEEDS = st.lists(st.one_of(
    st.tuples(st.just("one"), st.integers(0, 12), st.integers()),
    st.tuples(st.just("many"), st.dictionaries(st.integers(0, 12), st.integers(), max_size=9))),
    max_size=12)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), _FEEDS)
def test_a_memo_stays_bounded_and_holds_the_last_values(limit: int, feeds: list) -> None:
    memo = Memo(limit)
    last: dict[int, int] = {}
    for feed in feeds:
        if feed[0] == "one":
            _, key, value = feed
            assert memo.remember(key, value) == value
            last[key] = value
            assert memo[key] == value
        else:
            memo.remember_many(feed[1])
            last.update(feed[1])
        assert len(memo) <= limit
        assert all(last[key] == value for key, value in memo.items())
