"""workbench: load DSH session logs, fold their surfaces, audit compactions, count tokens.

    import workbench
    session = workbench.load("session.v4.jsonl")      # a Session: lazy, cached DataFrames
    session.events_df(); session.surface_df(120); session.compactions_df()
    frames = workbench.load_sessions("~/.dsh/sessions")  # many sessions, one set of frames
    fleet = workbench.fleet("store/")                    # SQL over `workbench export ROOT -o store/`
    cf = session.whatif.policy(threshold_ratio=0.6, summarizer="mask")  # a counterfactual
    workbench.compare(session, cf).figure()                # side by side

`import workbench` stays light: it never loads widgets or plots (views live in
`workbench.views`), and pandas is imported only when `load`/`load_sessions` is first used.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Fleet", "Session", "SessionFrames", "Workbench", "__version__", "compare", "fleet",
           "follow", "load", "load_sessions", "show"]

if TYPE_CHECKING:
    from workbench.frames.fleet import Fleet, fleet
    from workbench.frames.many import SessionFrames, load_sessions
    from workbench.session import Session, load
    from workbench.views import Workbench, follow, show
    from workbench.views.compare import compare

_LAZY = {
    "load": "workbench.session",
    "Session": "workbench.session",
    "load_sessions": "workbench.frames.many",
    "SessionFrames": "workbench.frames.many",
    "fleet": "workbench.frames.fleet",       # SQL over an exported store (DuckDB)
    "Fleet": "workbench.frames.fleet",
    "Workbench": "workbench.views",   # widgets load only when asked for
    "show": "workbench.views",
    "follow": "workbench.views",   # a Workbench following a growing log
    "compare": "workbench.views.compare",   # real vs a what-if session, side by side
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'workbench' has no attribute {name!r}"
        from workbench.errors import MissingAttribute
        raise MissingAttribute(msg)
    import importlib
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
