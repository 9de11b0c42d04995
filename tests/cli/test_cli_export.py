"""`workbench export`: a worker count below 1 is a usage error before any work (it was read as
1, silently), in the library too."""
from __future__ import annotations

from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.cli.main import main
from workbench.errors import InvalidArgument


def _root(tmp_path: Path) -> Path:
    b = LogBuilder(version=4, session_id="export-workers")
    with b.turn():
        with b.step():
            b.user("hi")
            b.assistant("hello")
    b.write_to_root(tmp_path / "root")
    return tmp_path / "root"


@pytest.mark.parametrize("workers", ["0", "-3"])
def test_workers_below_one_is_a_usage_error(tmp_path: Path, workers: str, capsys) -> None:
    root = _root(tmp_path)
    assert main(["export", str(root), "-o", str(tmp_path / "store"), f"--workers={workers}"]) == 2
    err = capsys.readouterr().err
    assert "usage: workbench export" in err and "--workers must be" in err, err
    assert not (tmp_path / "store").exists()


@pytest.mark.parametrize("workers", [0, -3, 1.5, True])
def test_the_library_refuses_them_too(tmp_path: Path, workers) -> None:
    from workbench.frames.many import load_sessions
    from workbench.frames.store import export_store
    root = _root(tmp_path)
    with pytest.raises(InvalidArgument, match="workers must be"):
        export_store(root, tmp_path / "store", workers=workers, progress=False)
    assert not (tmp_path / "store").exists()
    with pytest.raises(InvalidArgument, match="workers must be"):
        load_sessions(root, workers=workers, progress=False)
