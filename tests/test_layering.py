"""Dependencies only point downward: io → core → frames → views → cli/report.

Walks every module of each layer with `ast` and lists forbidden imports, e.g.
`{"core/classify.py": ["pandas"]}`. Every import counts: at module level, under
``TYPE_CHECKING``, and lazy ones inside functions (`ast.walk` visits them all), plus
``from workbench import X`` for the package's lazy names.

Inside the frames layer, `workbench/session.py` (the `Session` face: the core analysed log,
`workbench.core.analysis.AnalysedLog`, plus a frame cache) sits on top of the frame builders in
`workbench/frames/`, which read the members of that core object only; only `frames/many.py`
(many sessions, above one session) may import `workbench.session`, and `session.py` imports the
builders lazily, inside the frame methods. So the session↔frames circle cannot come back. The
one pass over a log is defined once (`workbench.core.log_pass`): only the analysed log, the
direct fold of `brackets.compactions` and a followed log's frames start it."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "workbench"

_ABOVE_CORE = ("workbench.frames", "workbench.session", "workbench.views", "workbench.cli",
               "workbench.report", "workbench.build")
FORBIDDEN = {
    "io": ("pandas", "numpy", "pyarrow", "ipywidgets", "plotly", "anywidget", "workbench.core") + _ABOVE_CORE,
    "core": ("pandas", "pyarrow", "ipywidgets", "plotly", "anywidget") + _ABOVE_CORE,
    "frames": ("ipywidgets", "plotly", "anywidget", "workbench.session", "workbench.views",
               "workbench.cli", "workbench.report"),
    "session.py": ("ipywidgets", "plotly", "anywidget", "workbench.frames.many",
                   "workbench.views", "workbench.cli", "workbench.report"),
    "views": ("workbench.cli", "workbench.report"),
}
ALLOWED = {"frames/many.py": {"workbench.session"}}
"""The one module of a layer's directory that sits above the session face."""
LAZY_NAMES = {"load": "workbench.session", "Session": "workbench.session",
              "load_sessions": "workbench.frames.many", "SessionFrames": "workbench.frames.many",
              "Workbench": "workbench.views", "show": "workbench.views"}
"""`from workbench import X` resolves to these modules (`workbench/__init__.py`)."""


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
            if node.module == "workbench":
                names.update(LAZY_NAMES[a.name] for a in node.names if a.name in LAZY_NAMES)
        elif isinstance(node, ast.ImportFrom) and node.level > 0:
            names.add("<relative import>")  # the package uses absolute imports only
    return names


def _violations(layer: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    paths = [PKG / layer] if layer.endswith(".py") else sorted((PKG / layer).rglob("*.py"))
    for path in paths:
        allowed = ALLOWED.get(str(path.relative_to(PKG)), set())
        bad = sorted(n for n in _imports(path) if n not in allowed and (n == "<relative import>" or
                     any(n == f or n.startswith(f + ".") for f in FORBIDDEN[layer])))
        if bad:
            found[str(path.relative_to(PKG))] = bad
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_imports_point_downward(layer: str) -> None:
    assert _violations(layer) == {}


def test_import_workbench_loads_no_widgets() -> None:
    _leaves_unimported("import workbench", ("ipywidgets", "plotly", "anywidget"))


def test_the_walk_sees_lazy_and_type_checking_imports(tmp_path: Path) -> None:
    """The checker itself: an import inside a function or under TYPE_CHECKING is an import."""
    module = tmp_path / "m.py"
    module.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                      "    from workbench.session import Session\n"
                      "def f():\n    import workbench.views.data\n    from workbench import load\n")
    assert {"workbench.session", "workbench.views.data"} <= _imports(module)


def test_no_frame_builder_reaches_the_session() -> None:
    """The session↔frames circle: `session.py` imports the builders, so no builder (lazily or
    for types) may import `workbench.session`; they read `core.analysis.AnalysedLog`'s members."""
    found = {str(p.relative_to(PKG)) for p in (PKG / "frames").rglob("*.py")
             if "workbench.session" in _imports(p)}
    assert found <= set(ALLOWED)
    assert not any(n.startswith("workbench.frames.many") for n in _imports(PKG / "session.py"))


def test_the_log_index_loads_without_pandas_or_arrow() -> None:
    """The one per-seq store lives in core (`workbench.core.index`): loading a log and building
    its index and compaction audit imports neither pandas nor pyarrow (the frames layer turns the
    index's text buffers into Arrow arrays)."""
    _leaves_unimported(
        "from workbench.core.load import load_log; from workbench.core.index_builder import LogIndexBuilder; "
        "import workbench.core.compaction.audit; "
        "log = load_log(LOG); "
        "b = LogIndexBuilder(version=4); [b.feed(e) for e in log.events]; index = b.finish(); "
        "assert index.n == len(log.events) > 0")


def _leaves_unimported(code: str, modules: tuple[str, ...] = ("pandas", "pyarrow")) -> None:
    """`code` runs in a fresh interpreter (``LOG``: a sample v4 log's path) and leaves none of
    `modules` imported."""
    import subprocess
    import sys
    log = PKG.parent / "sample_logs" / "pruning__session.v4.jsonl"
    script = (f"import sys; from pathlib import Path; LOG = Path({str(log)!r}); {code}; "
              f"bad = [m for m in {modules!r} if m in sys.modules]; print(bad); "
              "sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def _module_level_imports(path: Path) -> set[str]:
    """Imports run when the module is imported (module body and `if` blocks such as
    ``TYPE_CHECKING``; not those inside functions or classes)."""
    names: set[str] = set()
    todo = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.If):
            todo.extend(node.body + node.orelse)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


FACE_MIXINS = {"workbench.frames.quality"}
"""Frames modules whose class `Session` mixes in (its quality frames): imported with it."""


def test_the_session_imports_no_frame_builder_at_import() -> None:
    """`session.py` is the analysed log plus a frame cache: at import it reads core (the
    analysed log) and its mixins only; each builder is imported by the frame method using it."""
    frames = {n for n in _module_level_imports(PKG / "session.py")
              if n.startswith("workbench.frames")}
    assert frames <= FACE_MIXINS, frames - FACE_MIXINS
    assert "workbench.core.analysis" in _module_level_imports(PKG / "session.py")


def test_the_core_object_is_below_the_session() -> None:
    """Core never reaches the frames layer or the session face (not even for types), and the
    frame builders name the core object, never a session type of their own."""
    for path in sorted((PKG / "core").rglob("*.py")):
        bad = {n for n in _imports(path) if n.startswith(("workbench.frames", "workbench.session"))}
        assert not bad, (path, bad)
    for path in sorted((PKG / "frames").rglob("*.py")):
        assert "FrameSource" not in path.read_text(encoding="utf-8"), path


ONE_PASS_USERS = {"core/analysis.py", "core/compaction/brackets.py", "frames/live.py"}
"""The modules that start the one pass (`workbench.core.log_pass`): the analysed log, the
direct fold of `brackets.compactions` without a timeline, and a followed log."""


def test_the_one_pass_is_defined_once_and_started_by_the_analysed_log() -> None:
    """No CLI subcommand, report section, view or frame builder assembles a pass of its own:
    they read `AnalysedLog` (the CLI through `cli.common.load_or_exit`)."""
    users = {str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
             if "workbench.core.log_pass" in _imports(p)} - {"core/log_pass.py"}
    assert users <= ONE_PASS_USERS, users - ONE_PASS_USERS
    feeding = {str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
               if "feeders=" in p.read_text(encoding="utf-8")}
    assert feeding <= {"core/analysis.py", "core/load.py", "core/follow.py", "frames/live.py"}, feeding


def test_the_analysed_log_computes_its_members_without_pandas() -> None:
    """The core object loads, indexes, folds, audits and measures quality with no pandas or
    pyarrow imported (the frames layer adds those)."""
    _leaves_unimported(
        "from workbench.core.analysis import AnalysedLog; a = AnalysedLog.load(LOG); "
        "assert a.index.n == len(a) > 0 and a.compactions.records and a.audit.compactions; "
        "a.quality.citations; a.surface.size; a.usage; a.attempts")
