"""The usage samples' columns (`core.tokens.usage_table`) read back every sample exactly, and the
timeline frame's usage columns follow the one cell rule (`frames.columns.int64_or_none`)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.core.tokens.usage_table import SOURCES, UsageSample, UsageTable

_ODD_NUMBERS = st.one_of(st.integers(-2**70, 2**70), st.just(math.inf), st.floats(0, 1e20))
_KEYS = st.one_of(st.none(), st.integers(-2**66, 2**66), st.text(max_size=3), st.floats(0, 10))
_SAMPLES = st.builds(
    UsageSample, st.integers(0, 2**40) | _KEYS, _KEYS, _KEYS, st.sampled_from(SOURCES),
    _ODD_NUMBERS, _ODD_NUMBERS, _ODD_NUMBERS, _ODD_NUMBERS, st.none() | _ODD_NUMBERS,
    st.none() | _ODD_NUMBERS, st.booleans(), st.none() | _KEYS)


def _same(a: UsageSample, b: UsageSample) -> bool:
    """Equal field by field, NaN-free and type-exact (3 is not 3.0, True is not 1)."""
    return all(type(x) is type(y) and x == y for x, y in zip(
        (getattr(a, f) for f in UsageSample.__slots__), (getattr(b, f) for f in UsageSample.__slots__)))


@settings(max_examples=150, deadline=None)
@given(st.lists(_SAMPLES, max_size=12), st.data())
def test_a_table_reads_back_every_sample_and_a_view_keeps_its_rows(samples, data) -> None:
    table = UsageTable()
    for sample in samples:
        table.append(sample)
    view = table.view()
    replaced = {}
    if samples:
        row = data.draw(st.integers(0, len(samples) - 1))
        seq = data.draw(_KEYS)
        table.set_replaced_by(row, seq)
        replaced[row] = seq
    table.append(UsageSample(1, 1, 1, "message", 1, 1, 1, 1, None, None))
    assert len(view) == len(samples) and len(table) == len(samples) + 1
    for i, sample in enumerate(samples):
        expected = sample if i not in replaced else UsageSample(
            *(getattr(sample, f) for f in UsageSample.__slots__[:-1]), replaced[i])
        assert _same(view[i], expected) and _same(list(view)[i], expected)
        assert _same(table[i - len(table)], expected)


@settings(max_examples=100, deadline=None)
@given(st.lists(_SAMPLES, max_size=10))
def test_timeline_usage_columns_are_the_cell_rule_of_each_sample(samples) -> None:
    pytest.importorskip("pandas")
    from workbench.frames.columns import int64_or_none
    from workbench.frames.timeline import usage_columns
    rows = [UsageSample(seq, *(getattr(s, f) for f in UsageSample.__slots__[1:]))
            for seq, s in enumerate(samples)]
    table = UsageTable()
    for sample in rows:
        table.append(sample)
    n = len(rows) + 2
    out = usage_columns(table.view(), n)
    for name in ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
                 "reasoning_tokens", "total_tokens"):
        column = out[name]
        expected = [int64_or_none(getattr(s, name)) for s in rows] + [None, None]
        got = [None if column.isna()[i] else int(column[i]) for i in range(n)]
        assert got == expected, name
    counted = out["counted"]
    assert [None if counted.isna()[i] else bool(counted[i]) for i in range(n)] == \
        [s.counted for s in rows] + [None, None]
    assert list(out["source"].astype(object)[:len(rows)]) == [s.source for s in rows]
    assert np.all(np.asarray(out["source"].isna())[len(rows):])


@settings(max_examples=100, deadline=None)
@given(st.lists(_SAMPLES, max_size=16), st.data())
def test_rows_moved_into_the_columns_in_batches_read_back_every_sample(samples, data) -> None:
    """`add` keeps rows as given and moves them a batch at a time; a replacement set on a row not
    moved yet lands on it."""
    import workbench.core.tokens.usage_table as module
    saved, module.PENDING_ROWS = module.PENDING_ROWS, data.draw(st.integers(1, 4))
    replaced = {}
    try:
        table = UsageTable()
        for i, sample in enumerate(samples):
            table.append(sample)
            if data.draw(st.booleans()):
                row, seq = data.draw(st.integers(0, i)), data.draw(_KEYS)
                table.set_replaced_by(row, seq)
                replaced[row] = seq
    finally:
        module.PENDING_ROWS = saved
    view = table.view()
    assert len(view) == len(samples)
    for i, sample in enumerate(samples):
        expected = UsageSample(*(getattr(sample, f) for f in UsageSample.__slots__[:-1]),
                               replaced.get(i, sample.replaced_by))
        assert _same(view[i], expected) and _same(list(view)[i], expected)
