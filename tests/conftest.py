"""Shared test configuration: import paths and the location of ../shared."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SHARED = REPO.parent / "shared"
for p in (str(REPO), str(TESTS)):
    if p not in sys.path:
        sys.path.insert(0, p)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only ../shared folder (specs, vectors, corpus); skips the test when absent."""
    if not SHARED.is_dir():
        pytest.skip("../shared is absent: tests that read the shared corpus are skipped")
    return SHARED
