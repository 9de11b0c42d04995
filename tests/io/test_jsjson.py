"""`workbench.io.jsjson` against JavaScript itself: numbers as `JSON.parse` holds them and
`String(n)` spells them, `JSON.stringify(value, null, 2)`, and the reference's deep equality.
Node (the machine's `node`) is the oracle; the tests skip with a reason when it is absent."""
from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.io.jsjson import (
    RECALL_MIN_BYTES,
    loads,
    number_to_str,
    same_text,
    stringify,
    stringify_recalled,
)
from workbench.io.jsvalues import deep_equal

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed: no JavaScript oracle")


def _node(script: str, payload: list[str]) -> list[str]:
    done = subprocess.run([NODE, "-e", script], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def _literals() -> list[str]:
    rng = random.Random(12)
    edges = [2**53 - 1, 2**53, 2**53 + 1, 2**53 + 3, 10**16 - 1, 10**17 - 1, 99999999999999999,
             2**63 - 1, 2**63 + 1, 2**64 - 1, 2**64 + 1, 10**21 - 1, 10**21, 10**22 + 7, 0, 7]
    ints = edges + [rng.randrange(10 ** rng.randrange(1, 26)) for _ in range(300)]
    floats = [repr(rng.uniform(-1e25, 1e25)) for _ in range(100)] + ["1e400", "-1e400", "0.1", "4.0", "1e21", "1e-7"]
    floats += [repr(rng.uniform(-1, 1) * 10.0 ** rng.randrange(-9, 23)) for _ in range(400)]
    floats += ["0.0001", "0.00001", "1e16", "9999999999999998.0", "123.5", "-0.5", "5e-324",
               "1.7976931348623157e308", "0.1e1", "100.0"]
    return [str(v) for v in ints] + [f"-{v}" for v in ints[::3]] + floats


@needs_node
def test_numbers_are_spelled_as_javascript_holds_them():
    literals = _literals()
    expected = _node("const a = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                     "process.stdout.write(JSON.stringify(a.map(s => String(JSON.parse(s)))))", literals)
    got = [number_to_str(loads(text)) for text in literals]
    assert [(t, g) for t, g, e in zip(literals, got, expected) if g != e] == []


@needs_node
def test_stringify_compact_and_spaced_is_javascripts():
    texts = ['{"a":[1,{"b":2,"1":3,"0":[]}],"c":{},"d":"x\\ud800y","e":[[],[{}]]}',
             '[9007199254740993,99999999999999999,-0,4.0,1e21,1e-7,"\\u2028",true,null]',
             '{"messages":[{"role":"user","content":[{"type":"text","text":"héllo 😀"}]}]}',
             '{"01":1,"1a":2,"4294967295":3,"4294967294":4,"2":5,"":6,"b":[0.5,-0.25,123.5]}',
             '["q\\"uote","back\\\\slash","\\u0000\\u001f\\u007f\\u00a0\\t\\n\\b\\f\\r","\\udfff"]',
             "[]", "{}", '"plain"', "12"]
    expected = _node("const a = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                     "process.stdout.write(JSON.stringify(a.map(t => [JSON.stringify(JSON.parse(t)),"
                     " JSON.stringify(JSON.parse(t), null, 2)])))", texts)
    assert [[stringify(loads(text)), stringify(loads(text), 2)] for text in texts] == expected


def test_numbers_past_the_safe_range_compare_as_doubles():
    assert deep_equal(loads("9007199254740993"), loads("9007199254740992"))
    assert deep_equal({"n": loads("99999999999999999")}, {"n": 1e17})
    assert not deep_equal(loads("9007199254740991"), loads("9007199254740990"))
    assert not deep_equal(1, True)
    assert deep_equal([2**53, 2**64], [2**53 + 1, 2**64 + 1])
    assert deep_equal([1, 2], [1.0, 2]) and not deep_equal([1, 0], [True, 0])
    assert not deep_equal([2**53 - 1], [2**53 - 2])


_edge_ints = st.sampled_from([0, 1, -1, 2**53 - 2, 2**53 - 1, 2**53, 2**53 + 1, -(2**53 - 1),
                              -(2**53), -(2**53) - 1, 2**64, 2**64 + 1])
_list_items = _edge_ints | st.integers(-5, 5) | st.booleans() | st.sampled_from([0.0, 1.0, 2.0**53])


@settings(max_examples=600, deadline=None)
@given(st.lists(_list_items, max_size=5), st.data())
def test_lists_compare_as_their_items_do(a, data):
    """The list shortcut (plain safe ints by Python's ==) is the item-by-item definition."""
    b = [data.draw(st.sampled_from([x, x + 1, x - 1, float(x), _list_items]))
         if type(x) is int else x for x in a]
    b = [data.draw(x) if isinstance(x, st.SearchStrategy) else x for x in b]
    b = data.draw(st.sampled_from([b, b + [0], a]))
    expected = len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    assert deep_equal(a, b) == expected
    assert deep_equal(a, list(a))


_scalars = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
            | st.floats(allow_nan=True, allow_infinity=True)
            | st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xFFFF), max_size=8))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.sampled_from(["a", "b", "1", "0", "10", "z"]),
                                         inner, max_size=4), max_leaves=12)


@settings(max_examples=400, deadline=None)
@given(_values, _values)
def test_same_text_is_equality_of_the_stringify_texts(a, b):
    assert same_text(a, b) == (stringify(a) == stringify(b))
    assert same_text(a, a)


@settings(max_examples=200, deadline=None)
@given(_values)
def test_recalled_text_is_the_stringify_text(value):
    big = [value, "x" * RECALL_MIN_BYTES]     # large enough to be remembered
    assert stringify_recalled(big) == stringify(big)
    assert stringify_recalled(big) == stringify(big)     # read back from the memo
    assert stringify_recalled(value) == stringify(value)


def test_recall_tells_apart_what_javascript_tells_apart():
    pad = "x" * RECALL_MIN_BYTES
    for a, b in [({"a": 1, "b": 2}, {"b": 2, "a": 1}), ([True], [1]), ([1.0], [1]),
                 ([float("nan")], [None]), ([2**64], [2**64 + 1]), (["\ud800"], ["\ud800"])]:
        assert stringify_recalled([a, pad]) == stringify([a, pad])
        assert stringify_recalled([b, pad]) == stringify([b, pad])
        assert same_text(a, b) == (stringify(a) == stringify(b))
