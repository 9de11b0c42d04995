"""`workbench lab`: JupyterLab on the workbench notebooks, the first one open. Layer: cli.

    workbench lab                      # open a browser on notebooks/01_surface_replace.ipynb
    workbench lab --no-browser --port 8890

The server is the installed JupyterLab (`python -m jupyterlab` of this interpreter, so its
kernel imports this workbench), rooted at the folder that holds `notebooks/` and `sample_logs/`
(the repository checkout) with the chosen notebook opened. It listens on 127.0.0.1 only and
keeps Jupyter's token authentication; the URL with the token is printed by Lab itself. Lab's
news feed, update check and PyPI extension manager are off (`OFFLINE`), and `--allow-root` is
added when running as root (containers). The process is replaced by Lab (`exec`), so Ctrl-C and
signals reach the server directly.

Exit codes: 2 when the notebooks cannot be found or Lab cannot be started; otherwise Lab's own.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

EXIT_UNUSABLE = 2
FIRST_NOTEBOOK = "01_surface_replace.ipynb"
_REPO = Path(__file__).resolve().parents[2]
OFFLINE = ("--LabApp.news_url=None",
           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
           "--LabApp.extension_manager=readonly")
"""Lab settings so the server itself contacts nothing: no news feed, no update check, no PyPI
extension manager (the workbench needs none of them)."""


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "lab", help="start JupyterLab on the workbench notebooks",
        description="Start JupyterLab on the workbench notebooks (notebooks/ of the checkout) "
                    "with the first notebook open. Listens on 127.0.0.1 with token "
                    "authentication.",
        epilog="Exit codes: 2 notebooks or JupyterLab not found; otherwise JupyterLab's own.")
    parser.add_argument("--no-browser", action="store_true",
                        help="do not open a browser (headless machines; open the printed URL)")
    parser.add_argument("--port", type=int, default=8888,
                        help="port to listen on (default 8888; the next free one if taken)")
    parser.add_argument("--root", type=Path, default=None, metavar="DIR",
                        help="folder holding notebooks/ (default: this checkout)")
    parser.add_argument("--notebook", default=FIRST_NOTEBOOK, metavar="NAME",
                        help=f"notebook to open (default {FIRST_NOTEBOOK})")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the JupyterLab command instead of running it")
    parser.set_defaults(run=run)


def lab_command(root: Path, notebook: str, *, port: int, no_browser: bool) -> list[str]:
    """The JupyterLab command line `workbench lab` runs."""
    cmd = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={root}",
           "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}", *OFFLINE]
    if no_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")   # containers and fresh machines often run as root
    cmd.append(f"notebooks/{notebook}")
    return cmd


def run(args: argparse.Namespace) -> int:
    root = (args.root or _REPO).resolve()
    notebook = root / "notebooks" / args.notebook
    if not notebook.is_file():
        print(f"workbench lab: {notebook} not found (run from a workbench checkout, or pass "
              "--root DIR holding notebooks/)", file=sys.stderr)
        return EXIT_UNUSABLE
    if not 0 < args.port < 65536:
        print(f"workbench lab: --port {args.port} is not a TCP port", file=sys.stderr)
        return EXIT_UNUSABLE
    if importlib.util.find_spec("jupyterlab") is None:
        print("workbench lab: JupyterLab is not installed in this environment "
              "(bash run.sh installs it)", file=sys.stderr)
        return EXIT_UNUSABLE
    cmd = lab_command(root, args.notebook, port=args.port, no_browser=args.no_browser)
    if args.dry_run:
        print(" ".join(cmd))
        return 0
    sys.stdout.flush()
    sys.stderr.flush()
    os.chdir(root)
    try:
        os.execv(cmd[0], cmd)
    except OSError as exc:
        print(f"workbench lab: cannot start JupyterLab: {exc}", file=sys.stderr)
        return EXIT_UNUSABLE
    return 0  # not reached
