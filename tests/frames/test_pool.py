"""The per-session parallel map: a worker pool that cannot start or breaks never looks like
unreadable logs; a script without a main guard gives the verdicts of an in-process run; the
worker count follows the work and the memory."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from store_helpers import die_in_child, make_root

from workbench.frames import pool
from workbench.frames.many import DEFAULT_FRAMES, load_sessions

HERE = Path(__file__).resolve().parent


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("pool-root")
    make_root(root, 4)
    broken = root / "--x--" / "broken"
    broken.mkdir(parents=True)
    (broken / "session.v4.jsonl").write_bytes(b"not a log\n")
    return root


def _verdicts(frames) -> dict[str, str]:
    s = frames.sessions
    return dict(zip(s["path"], s["verdict"].astype(str), strict=True))


SCRIPT = """
import json, sys, warnings
sys.path.insert(0, {here!r})
import workbench
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    frames = workbench.load_sessions({root!r}, workers=2, progress=False)
s = frames.sessions
print(json.dumps({{"verdicts": dict(zip(s["path"], s["verdict"].astype(str))),
                  "warnings": [str(w.message) for w in caught]}}))
"""


@pytest.mark.parametrize("guarded", [False, True])
def test_a_script_gives_the_in_process_verdicts(root: Path, tmp_path: Path, guarded: bool) -> None:
    body = SCRIPT.format(here=str(HERE), root=str(root))
    if guarded:
        body = "if __name__ == '__main__':\n" + textwrap.indent(body, "    ")
    script = tmp_path / "analysis.py"
    script.write_text(body)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=False, cwd=tmp_path, timeout=600)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    want = _verdicts(load_sessions(root, workers=1, progress=False))
    assert out["verdicts"] == want
    assert list(want.values()).count("unreadable") + list(want.values()).count("corrupt") == 1
    no_guard = [w for w in out["warnings"] if "guard" in w]
    assert bool(no_guard) is not guarded


def test_a_broken_pool_falls_back_in_process(root: Path) -> None:
    paths = sorted(str(p) for p in root.rglob("session*.jsonl*"))
    with pytest.warns(RuntimeWarning, match="worker pool failed"):
        got = dict(pool.map_sessions(die_in_child, [(p, DEFAULT_FRAMES) for p in paths],
                                     workers=2, progress=False))
    assert sorted(got) == list(range(len(paths)))
    want = _verdicts(load_sessions(root, workers=1, progress=False))
    assert {paths[i]: str(r.summary["verdict"]) for i, r in got.items()} == want


def test_main_guard_detection(tmp_path: Path) -> None:
    assert pool.main_guarded()  # pytest's own main is not the caller's module
    code = ("import sys; sys.path.insert(0, {here!r}); from workbench.frames.pool import "
            "main_guarded\nprint(main_guarded())\nif __name__ == '__main__':\n"
            "    print(main_guarded())\n")
    script = tmp_path / "s.py"
    script.write_text(code.format(here=str(HERE.parent.parent)))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          check=True)
    assert done.stdout.split() == ["False", "True"]


def test_workers_follow_the_work_and_memory(monkeypatch) -> None:
    monkeypatch.setattr(pool, "_available_memory", lambda: 64 << 30)
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 8)
    assert pool.plan_workers([10_000] * 12) == 1                        # small root
    assert pool.plan_workers([pool.BYTES_PER_WORKER] * 3) == 3          # one per log
    assert pool.plan_workers([pool.BYTES_PER_WORKER] * 100) == 8        # the cores
    assert pool.plan_workers([700 << 20] * 100) == 8
    monkeypatch.setattr(pool, "_available_memory", lambda: 3 << 30)
    assert pool.plan_workers([700 << 20] * 100) == 2                    # ~1.4 GiB each
    assert pool.plan_workers([10] * 5, workers=9) == 5
    assert pool.plan_workers([]) == 1
