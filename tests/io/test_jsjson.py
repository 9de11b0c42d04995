"""`workbench.io.jsjson` against JavaScript itself: numbers as `JSON.parse` holds them and
`String(n)` spells them, `JSON.stringify(value, null, 2)`, and the reference's deep equality.
Node (the machine's `node`) is the oracle; the tests skip with a reason when it is absent."""
from __future__ import annotations

import json
import random
import shutil
import subprocess

import pytest

from workbench.io.jsjson import deep_equal, loads, number_to_str, stringify

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
