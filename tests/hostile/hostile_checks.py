"""What every hostile-input test asserts about one log: every frame builds, every CLI subcommand
and the report run, and nothing prints a traceback or an internal error."""
from __future__ import annotations

import hashlib
from pathlib import Path

from workbench.cli.main import main
from workbench.frames.schema import FRAME_NAMES
from workbench.session import load

COMMANDS = ("info", "fold", "audit", "tokens", "report", "export")


def digest(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def every_frame(path: Path) -> str:
    """Load and build every frame (and a mid-log surface); returns the verdict."""
    session = load(path)
    for name in FRAME_NAMES:
        if name != "surface":
            getattr(session, f"{name}_df")()
    session.surface_df()
    if len(session):
        session.surface_df(len(session) // 2)
    session.summary()
    return session.verdict


def every_command(path: Path, out: Path, capsys, commands=COMMANDS) -> dict[str, int]:
    """Run each subcommand on `path`; asserts one-line, traceback-free stderr; returns the codes."""
    codes = {}
    for command in commands:
        extra = {"report": ["-o", str(out / "report.html"), "-q"],
                 "export": ["-o", str(out / "frames"), "--quiet"],
                 "info": ["--json"], "fold": ["--json"]}.get(command, [])
        codes[command] = main([command, str(path), *extra])
        captured = capsys.readouterr()
        for text in (captured.err, captured.out):
            assert "Traceback" not in text, (command, text[-3000:])
            assert "internal error" not in text, (command, text[-3000:])
        assert codes[command] in (0, 1, 2), (command, codes[command])
    return codes
