"""The package is clean under pyflakes' rules (ruff's ``F``): no undefined name (a `NameError`
on a path the tests did not walk: `fold --follow --at` reported an internal error for a usage
error), no unused import, no redefinition. Tests and benchmarks: no undefined name."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")


@pytest.mark.skipif(RUFF is None, reason="ruff is not installed (a dev dependency)")
@pytest.mark.parametrize(("rules", "paths"), [("F", ["workbench"]), ("F821", ["tests", "bench"])])
def test_pyflakes_rules_hold(rules: str, paths: list[str]) -> None:
    done = subprocess.run([RUFF, "check", "--isolated", "--no-cache", "--select", rules,
                           "--output-format", "concise", *paths],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
