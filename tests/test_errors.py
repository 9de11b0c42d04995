"""One exception tree: every exception class the package defines derives from `WorkbenchError`
and is listed in `workbench/errors.py`'s docstring, and no module raises a built-in exception
(or another library's) directly."""
from __future__ import annotations

import ast
import builtins
import importlib
import pkgutil
import re
from pathlib import Path

import workbench
from workbench import errors

PKG = Path(workbench.__file__).resolve().parent
BUILTIN_EXCEPTIONS = {name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, BaseException)}


def _modules() -> list:
    return [importlib.import_module(info.name)
            for info in pkgutil.walk_packages([str(PKG)], prefix="workbench.")]


def test_every_exception_class_is_in_the_tree_and_listed() -> None:
    classes = {value for module in _modules() for value in vars(module).values()
               if isinstance(value, type) and issubclass(value, BaseException)
               and value.__module__.startswith("workbench")}
    assert errors.WorkbenchError in classes
    outside = sorted(c.__qualname__ for c in classes if not issubclass(c, errors.WorkbenchError))
    unlisted = sorted(c.__qualname__ for c in classes if not re.search(rf"\b{c.__name__}\b", errors.__doc__))
    assert (outside, unlisted) == ([], [])


def _raised(node: ast.Raise) -> ast.expr | None:
    exc = node.exc
    return exc.func if isinstance(exc, ast.Call) else exc


def test_no_builtin_or_foreign_exception_is_raised() -> None:
    found = []
    for path in sorted(PKG.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            target = _raised(node)
            if isinstance(target, ast.Name) and target.id in BUILTIN_EXCEPTIONS:
                found.append(f"{path.relative_to(PKG)}:{node.lineno} {target.id}")
            elif (isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
                  and target.attr[:1].isupper()):  # a class of another module: `lib.SomeError`
                found.append(f"{path.relative_to(PKG)}:{node.lineno} {target.value.id}.{target.attr}")
    assert found == []


def test_caller_mistakes_still_catchable_as_builtins() -> None:
    assert issubclass(errors.UnknownName, KeyError)
    assert issubclass(errors.InvalidArgument, ValueError)
    assert issubclass(errors.SeqOutOfRange, IndexError)
    assert issubclass(errors.MissingAttribute, AttributeError)
    try:
        workbench.no_such_name  # noqa: B018
    except errors.WorkbenchError as exc:
        assert isinstance(exc, AttributeError)
    else:  # pragma: no cover
        raise AssertionError("module __getattr__ did not raise")
