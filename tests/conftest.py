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


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict:
    """Every event store made during the test counts its reparses (a read parses its line) in
    ``counted["n"]``: a full pass after the load shows as about
    ``len(log)`` reparses (the load's own scan parses each event once, without reparsing)."""
    from workbench.io import store
    reads = {"n": 0}
    original = store.EventStore.__init__

    def init(self, source, reparse):
        def counting(row):
            reads["n"] += 1
            return reparse(row)
        original(self, source, counting)
    monkeypatch.setattr(store.EventStore, "__init__", init)
    return reads
