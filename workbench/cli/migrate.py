"""`workbench migrate PATH --to 4 [-o FILE]`: the v4 view DSH 0.2.1 builds from an older log.
Layer: cli.

Prints one logical event per line (compact ``JSON.stringify``, seq order, no header line: the
format of DSH's own ``session/page`` records, as in the corpus' ``migrated/`` files) to stdout,
or writes them to ``-o FILE`` (never over the input, never beside it unless that path is asked
for; written to a temporary name, then renamed). The rules are `workbench.core.migration.migrated`:
a v3 log is migrated exactly; a v0 log, a corrupt or refused one, a v3 turn with no documented
closer, or a v3 event the step does not support (`workbench.core.migration.unsupported_v3`, named
by its seq) is refused with one line naming the reason (exit 2) and nothing is printed. A log with
a torn tail migrates what the reference would keep, with exit 1, and says how many events it
printed (kept, and closers inserted).
"""
from __future__ import annotations

import os
import sys
from typing import Any

from workbench.cli.common import (
    EXIT_FINDINGS,
    EXIT_OK,
    EXIT_UNUSABLE,
    load_or_exit,
    say,
)
from workbench.core.migration import migrated
from workbench.errors import MigrationRefused
from workbench.io.generations import CURRENT
from workbench.io.jsjson import stringify
from workbench.io.output import not_replaceable, same_file, write_replacing


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "migrate", help="print the v4 view DSH 0.2.1 builds from an older (v3) log",
        description="Migrate a session log to format v4 exactly as DSH 0.2.1 does when it opens it "
                    "(one event per line); a log that cannot be migrated exactly is refused.")
    parser.add_argument("path", metavar="PATH", help="session log (.jsonl or .jsonl.zstd)")
    parser.add_argument("--to", type=int, choices=(CURRENT,), default=CURRENT, metavar="VERSION",
                        help=f"target format version (only {CURRENT})")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the events to FILE instead of stdout")
    parser.set_defaults(run=run)


def _write(path: str, lines: list[str], source: str) -> None:
    target = os.path.realpath(path)
    if same_file(source, target):
        raise MigrationRefused(f"refusing to write over the input log {source}")
    problem = not_replaceable(target)
    if problem is not None:
        raise MigrationRefused(problem)
    write_replacing(target, "".join(line + "\n" for line in lines).encode("utf-8", "surrogatepass"))


def run(args: Any) -> int:
    analysed = load_or_exit("migrate", args.path, ride=False)   # reads the log only
    if isinstance(analysed, int):
        return analysed
    log = analysed.log
    try:
        _, events = migrated(log, args.to)
        lines = [stringify(e) for e in events]
        if args.output:
            _write(args.output, lines, args.path)
        else:
            out = sys.stdout
            for line in lines:
                out.write(line + "\n")
            out.flush()
    except MigrationRefused as exc:
        say("migrate", args.path, f"not migrated: {exc}")
        return EXIT_UNUSABLE
    except OSError as exc:   # the output file's; stdout's (a full disk, `| head`): `cli.main`
        if not args.output:
            raise
        say("migrate", args.output, exc.strerror or exc)
        return EXIT_UNUSABLE
    if log.verdict != "clean":
        kept = len(log.events)
        inserted = len(events) - kept   # the migration only inserts (turn/end closers)
        say("migrate", args.path, f"migrated the {kept} events the reference keeps"
                                  + (f" and inserted {inserted} closer event(s), {len(events)} in all"
                                     if inserted else "") + f" (verdict {log.verdict})")
        return EXIT_FINDINGS
    return EXIT_OK
