"""Fixtures of the frames tests (helpers live in `frame_scripts`)."""
from __future__ import annotations

import pytest
from frame_scripts import script, session_of

from workbench.build import LogBuilder
from workbench.session import Session


@pytest.fixture(params=[0, 4], ids=["v0", "v4"])
def version(request) -> int:
    return request.param


@pytest.fixture
def built(version: int) -> tuple[LogBuilder, Session]:
    b = script(version)
    return b, session_of(b)
