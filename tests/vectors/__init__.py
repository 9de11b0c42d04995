"""Conformance handlers, one module per vector category (see tests/conformance.py).

Each module defines `check(case: dict, path: pathlib.Path, version: int) -> list[str]`.
"""
