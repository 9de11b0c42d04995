#!/usr/bin/env python3
"""Run DSH conformance vectors: `python tests/conformance.py DIR...`.

Each DIR is a folder in the format of `shared/conformance/` (format v0) or
`shared/conformance-v4/` (format v4; recognised by its INDEX.md title). Every `*.json` case file
in a category folder (`fold/`, `chunk_rows/`, `streams/`, `token_meter/`, `compaction/`,
`loading/`) is checked by the handler `tests/vectors/<category>.py`, whose
`check(case, path, version) -> list[str]` returns the mismatches (empty: the case passes).

Prints one line per failing case, a visible count for every category without a handler, and a
final line `N passed, M failed[, K skipped]`. Exits 1 when any case fails.
"""
from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from workbench.io import jsjson  # noqa: E402

SHARED = REPO.parent / "shared"
DEFAULT_DIRS = (SHARED / "conformance", SHARED / "conformance-v4")


@dataclass(frozen=True)
class Case:
    version: int
    category: str
    path: Path

    @property
    def id(self) -> str:
        return f"v{self.version}/{self.category}/{self.path.stem}"

    def load(self) -> dict:
        return jsjson.loads(self.path.read_bytes())


def detect_version(folder: Path) -> int:
    index = folder / "INDEX.md"
    if index.is_file():
        first = index.read_text(encoding="utf-8").splitlines()[0]
        if "v4" in first:
            return 4
        return 0
    return 4 if folder.name.endswith("-v4") else 0


def iter_cases(dirs: list[Path]) -> Iterator[Case]:
    for folder in dirs:
        version = detect_version(folder)
        for category_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
            for path in sorted(category_dir.glob("*.json")):
                yield Case(version, category_dir.name, path)


def handler(category: str):
    try:
        return importlib.import_module(f"vectors.{category}")
    except ModuleNotFoundError as exc:
        if exc.name in (f"vectors.{category}",):
            return None
        raise


def run_case(case: Case) -> list[str] | None:
    """Mismatches of one case ([] when it passes), or None when its category has no handler."""
    module = handler(case.category)
    if module is None:
        return None
    try:
        return list(module.check(case.load(), case.path, case.version))
    except Exception:  # a crash is a failure with its traceback, never a silent pass
        return ["handler crashed:\n" + traceback.format_exc()]


def main(argv: list[str]) -> int:
    dirs = [Path(a) for a in argv] or [d for d in DEFAULT_DIRS if d.is_dir()]
    if not dirs:
        print("no conformance folders given and ../shared is absent", file=sys.stderr)
        return 2
    passed = failed = 0
    skipped: dict[str, int] = {}
    for case in iter_cases(dirs):
        problems = run_case(case)
        if problems is None:
            key = f"v{case.version}/{case.category}"
            skipped[key] = skipped.get(key, 0) + 1
        elif problems:
            failed += 1
            print(f"FAIL {case.id}: {problems[0]}")
            for extra in problems[1:3]:
                print(f"     {extra}")
        else:
            passed += 1
    for key, count in sorted(skipped.items()):
        print(f"skipped {count} cases of {key}: no handler yet")
    tail = f", {sum(skipped.values())} skipped" if skipped else ""
    print(f"{passed} passed, {failed} failed{tail}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
