"""The events a scan decoded: an observer of the loader that keeps what it is handed (what the
load's pass sees), to check what a store reads back against."""
from __future__ import annotations

from typing import Any


class Decoded:
    """`workbench.io.reader.Observer` keeping every event the scan accepted, in order."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def start(self, header: object, events: object) -> None:
        pass

    def accept(self, events: list) -> None:
        self.events.extend(events)
