#!/usr/bin/env python3
"""Record, and compare against, the CLI's `--json` output on every log of a corpus.

    bench/golden.py record OUT [--src DIR] [ROOTS...]   # run `info`, `fold`, `audit`, `tokens`
    bench/golden.py compare OUT [--src DIR] [--ignore FIELD ...] [--recorded-only] [ROOTS...]

`record` writes one JSON file per log into OUT (keep it outside the repository): for each of the
four subcommands its exit code, its stdout (parsed as JSON lines where it parses) and its stderr.
`--src` runs the package found in DIR instead of the installed one, so a recording can be made
from a pinned commit (`git archive COMMIT | tar -x -C DIR`). `compare` re-runs the same commands
and reports every log whose outputs differ; `--ignore` drops a top-level or nested field name
(fields added on purpose) from both sides before comparing. Exit 0 when nothing differs.

Each log runs in its own process (no state is shared between logs); the four subcommands run
in-process through `workbench.cli.main.main`.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

COMMANDS = ("info", "fold", "audit", "tokens")
DEFAULT_ROOTS = ("../shared/corpus", "sample_logs")
_CHILD = r"""
import contextlib, io, json, sys
from workbench.cli.main import main
out = {}
for command in %(commands)r:
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            code = main([command, "--json", sys.argv[1]])
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:  # recorded, so that a crash is an output like any other
            code = "raised " + type(exc).__name__
    out[command] = {"rc": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}
sys.stdout.write(json.dumps(out))
"""


def logs(roots: list[str]) -> list[tuple[Path, str]]:
    """Every log under `roots`, each with its name relative to its root's folder (the same
    from any checkout)."""
    found: list[tuple[Path, str]] = []
    for root in roots:
        base = Path(root)
        found += sorted((p, f"{base.resolve().name}/{p.relative_to(base).as_posix()}")
                        for p in base.rglob("*") if p.is_file() and
                        (p.name.endswith(".jsonl") or p.name.endswith(".jsonl.zstd")))
    return found


def key(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()[:12] + "-" + name.rsplit("/", 1)[-1]


def run(path: Path, src: str | None) -> dict:
    env = dict(os.environ)
    if src:
        env["PYTHONPATH"] = src + os.pathsep + env.get("PYTHONPATH", "")
    # -P: `python -c` would put the working directory (a checkout) before `src` on sys.path
    proc = subprocess.run([sys.executable, "-P", "-c", _CHILD % {"commands": COMMANDS}, str(path)],
                          capture_output=True, text=True, env=env, check=False)
    if proc.returncode != 0:
        return {c: {"rc": f"process {proc.returncode}", "stdout": "", "stderr": proc.stderr[-2000:]}
                for c in COMMANDS}
    result = json.loads(proc.stdout)
    for entry in result.values():
        entry["json"] = _json_lines(entry["stdout"])
    return result


def _json_lines(text: str):
    try:
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError:
        return None


def _drop(value, ignore: set[str]):
    if isinstance(value, dict):
        return {k: _drop(v, ignore) for k, v in value.items() if k not in ignore}
    if isinstance(value, list):
        return [_drop(v, ignore) for v in value]
    return value


def comparable(entry: dict, ignore: set[str]) -> dict:
    body = entry["json"] if entry.get("json") is not None else entry["stdout"]
    return {"rc": entry["rc"], "out": _drop(body, ignore), "stderr": entry["stderr"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=("record", "compare"))
    parser.add_argument("out", help="recording directory (outside the repository)")
    parser.add_argument("roots", nargs="*", default=list(DEFAULT_ROOTS))
    parser.add_argument("--src", help="directory whose `workbench` package is run")
    parser.add_argument("--ignore", action="append", default=[], help="field added on purpose")
    parser.add_argument("--recorded-only", action="store_true",
                        help="compare only the logs the recording holds (a partial recording)")
    args = parser.parse_intermixed_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ignore = set(args.ignore)
    differing = 0
    paths = logs(args.roots)
    if args.recorded_only:
        paths = [(p, name) for p, name in paths if (out / (key(name) + ".json")).exists()]
    for path, name in paths:
        result = run(path, args.src)
        target = out / (key(name) + ".json")
        if args.mode == "record":
            target.write_text(json.dumps({"path": name, "result": result}))
            continue
        if not target.exists():
            print(f"NEW  {path}")
            differing += 1
            continue
        before = json.loads(target.read_text())["result"]
        changed = [c for c in COMMANDS
                   if comparable(before[c], ignore) != comparable(result[c], ignore)]
        if changed:
            differing += 1
            print(f"DIFF {path}: {', '.join(changed)}")
    if args.mode == "compare":
        print(f"{len(paths)} logs, {differing} differ")
    else:
        print(f"recorded {len(paths)} logs into {out}")
    return 1 if differing else 0


if __name__ == "__main__":
    with contextlib.suppress(BrokenPipeError):
        sys.exit(main())
