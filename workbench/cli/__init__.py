"""The `workbench` command line. Layer: cli (may import every layer below).

One module per subcommand; each exposes `register(subparsers)` adding its parser with
`set_defaults(run=callable)`. `main.py` wires them. Exit codes everywhere: 0 ok, 1 findings
(defects, failed checks, fold violations), 2 unusable input (refused, unreadable, bad usage).
"""
from workbench.cli.main import main

__all__ = ["main"]
