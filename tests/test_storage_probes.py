"""Only io knows how a log is stored: no module above io asks an event container whether it is
parsed on demand or reaches for the store's own readers (`lazy`, `type_of`, `indexes_of_type`,
`iter_at`), by attribute or by `getattr` name. They read events through
`workbench.io.payloads` (`read_events`, `seqs_of_type`, `type_reader`)."""
from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "workbench"
PROBES = frozenset({"lazy", "type_of", "indexes_of_type", "iter_at"})


def _probes(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and node.attr in PROBES:
            found.append(f"{node.lineno}: .{node.attr}")
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in PROBES):
            found.append(f"{node.lineno}: {node.func.id}(..., {node.args[1].value!r})")
    return found


def test_no_module_above_io_probes_the_storage() -> None:
    found = {str(p.relative_to(PKG)): hits for p in sorted(PKG.rglob("*.py"))
             if p.relative_to(PKG).parts[0] != "io" and (hits := _probes(p))}
    assert found == {}


def test_the_check_sees_attribute_and_getattr_probes(tmp_path: Path) -> None:
    sample = tmp_path / "m.py"
    sample.write_text("def f(events):\n    return events.lazy or getattr(events, 'iter_at', None)\n")
    assert _probes(sample) == ["2: .lazy", "2: getattr(..., 'iter_at')"]
