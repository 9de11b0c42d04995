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
_COSTED_FEEDS = st.lists(st.one_of(
    st.tuples(st.just("one"), st.integers(0, 12), st.integers(), st.integers(0, 50)),
    st.tuples(st.just("many"), st.dictionaries(st.integers(0, 12), st.tuples(
        st.integers(), st.integers(0, 30)), max_size=9))), max_size=20)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 6), st.integers(0, 100), _COSTED_FEEDS)
def test_a_memo_with_a_budget_stays_within_it(limit: int, budget: int, feeds: list) -> None:
    """Entry by entry or many at once, what a memo with a budget holds costs at most the budget
    (its bookkeeping `held` never counts less than that), and it is what it was last told."""
    memo = Memo(limit, budget)
    costs: dict[int, int] = {}
    last: dict[int, int] = {}
    for feed in feeds:
        if feed[0] == "one":
            _, key, value, cost = feed
            assert memo.remember(key, value, cost) == value
            costs[key], last[key] = cost, value
        else:
            entries = {key: value for key, (value, _) in feed[1].items()}
            memo.remember_many(entries, sum(cost for _, cost in feed[1].values()))
            costs.update({key: cost for key, (_, cost) in feed[1].items()})
            last.update(entries)
        assert len(memo) <= limit
        assert sum(costs[key] for key in memo) <= memo.held <= budget
        assert all(last[key] == value for key, value in memo.items())


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
