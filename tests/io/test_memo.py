"""`io.memo.Memo`: a bounded memo holds at most `limit` entries whatever it is fed, one entry at
a time or many at once, and what it holds is what it was last told for that key."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.memo import Memo, Recent

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


_COSTED = st.lists(st.tuples(st.integers(0, 12), st.integers(), st.integers(0, 50)), max_size=30)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(0, 100), _COSTED)
def test_a_memo_with_a_budget_stays_within_it(limit: int, budget: int, feeds: list) -> None:
    memo = Memo(limit, budget)
    for key, value, cost in feeds:
        assert memo.remember(key, value, cost) == value
        assert len(memo) <= limit and memo.held <= budget
        assert key not in memo or memo[key] == value


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(0, 100), _COSTED)
def test_recent_keeps_the_newest_within_its_count_and_bytes(limit: int, budget: int, feeds: list) -> None:
    """`Recent`: at most `limit` entries and `budget` bytes, plus the newest entry whatever its
    cost; its bookkeeping is the sum of what it holds; the last-kept entries, most recent last."""
    recent = Recent(limit, budget)
    costs: dict[int, int] = {}
    for key, value, cost in feeds:
        assert recent.keep(key, value, cost) == value
        costs[key] = cost
        assert next(reversed(recent)) == key and recent[key] == value
        assert len(recent) <= limit
        assert recent.held == sum(costs[k] for k in recent)
        assert recent.held <= budget or len(recent) == 1
    recent.clear()
    assert recent.held == 0 and not recent
