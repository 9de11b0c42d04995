"""`workbench fold PATH --follow` and `workbench info PATH --follow`: a log as DSH writes it.
Layer: cli.

Both follow the log (`workbench.load(path, follow=True)`, `Session.refresh()` a few times a
second) until interrupted; Ctrl-C ends them quietly with exit code 130 (like ``tail -f``).

* ``fold --follow`` prints the surface once, then each surface change as it happens: ``+`` an
  appended node, ``~`` a replacement followed by the ``-`` nodes it hid, ``!`` an event the fold
  rejected, ``[``/``]`` a compaction bracket opening and closing (with its status), ``#`` notices
  (the log was rewritten and loaded again, a newer generation file appeared, the log is gone and
  what was loaded stays shown). ``--json``: one object per change and line (``op``: append,
  replace, rejected, compaction-open, compaction-close, reload, notice, newer-generation).
* ``info --follow`` keeps one status line current (events, turns, the last event, running
  brackets with their elapsed time, bytes still being written, verdict, a newer generation of the
  session that appeared beside the log, with the command that follows it): rewritten in place on a
  terminal, a new line per change otherwise; ``--json`` one object per change.

Log text is untrusted: everything printed from a log goes through the CLI's escaping.
"""
from __future__ import annotations

import json
import signal
import sys
import time
from typing import Any

from workbench.cli.common import EXIT_UNUSABLE, clean, say

POLL_SECONDS = 0.25
"""Pause between two refreshes (a few per second, like the widget)."""
INTERRUPTED = 130


def _open(command: str, path: str) -> Any:
    import workbench
    from workbench.errors import WorkbenchError
    try:
        return workbench.load(path, follow=True)
    except (WorkbenchError, OSError) as exc:
        say(command, path, exc.strerror if isinstance(exc, OSError) and exc.strerror else exc)
        return EXIT_UNUSABLE


def _emit(as_json: bool, record: dict, text: str) -> None:
    print(json.dumps(record, ensure_ascii=False) if as_json else text)


def _loop(session: Any, step: Any) -> int:
    """Refresh `session` every `POLL_SECONDS` and hand each refresh to `step` until Ctrl-C
    (also when the shell started the command with SIGINT ignored, as ``cmd &`` does)."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while True:
            step(session.refresh())
            sys.stdout.flush()
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        return INTERRUPTED


# -- fold --follow ------------------------------------------------------------------------------

class _FoldPrinter:
    def __init__(self, session: Any, as_json: bool) -> None:
        self.session = session
        self.json = as_json
        self.newer: str | None = None
        self.notice: str | None = None

    def _node(self, seq: int, at: int) -> tuple[str, str, str]:
        from workbench.cli.fold import preview
        event = self.session.events[seq]
        timeline = self.session.timeline
        message = timeline.message_at(seq, at)
        role = message.get("role") if isinstance(message, dict) else ""
        return clean(str(event.get("type"))), clean(str(role or "")), preview(message)

    def surface(self) -> None:
        session = self.session
        at = len(session) - 1
        nodes = session.timeline.surface_at(at) if len(session) else ()
        if self.json:
            _emit(True, {"op": "surface", "at": at, "nodes": list(nodes)}, "")
            return
        print(f"{clean(session.path)}: surface at seq {at}: {len(nodes)} nodes (following; Ctrl-C stops)")
        for seq in nodes:
            kind, role, text = self._node(seq, at)
            print(f"  {seq:>7}  {kind:<18} {role:<10} {text}")

    def step(self, result: Any) -> None:
        if result.newer and result.newer != self.newer:
            self.newer = result.newer
            _emit(self.json, {"op": "newer-generation", "path": result.newer},
                  f"# a newer generation of this session appeared (DSH migrated the log): "
                  f"{clean(result.newer)}; follow it with: workbench fold {clean(result.newer)} --follow")
        if result.reloaded:
            _emit(self.json, {"op": "reload", "notice": result.notice}, f"# {clean(str(result.notice))}")
            self.surface()
            return
        if result.notice and result.notice != self.notice:   # the log is gone: said once
            self.notice = result.notice
            _emit(self.json, {"op": "notice", "notice": result.notice}, f"# {clean(result.notice)}")
        for seq in range(result.first, result.first + result.added):
            self.change(seq)

    def change(self, seq: int) -> None:
        session = self.session
        timeline = session.timeline
        event = session.events[seq]
        kind = event.get("type")
        rep = timeline.replacement_by_seq.get(seq)
        if rep is not None:
            _, role, text = self._node(seq, seq)
            hidden = list(rep.shadowed)
            _emit(self.json, {"op": "replace", "seq": seq, "type": kind, "hidden": hidden, "preview": text},
                  f"~ {seq:>7}  {clean(str(kind)):<18} {role:<10} replaces {len(hidden)} nodes: {text}")
            if not self.json:
                for h in hidden:
                    hk, hr, ht = self._node(h, seq - 1)
                    print(f"  - {h:>5}  {hk:<18} {hr:<10} {ht}")
        elif timeline.status_at_end(seq) == "rejected":
            error = next((e for e in timeline.errors if e.seq == seq), None)
            message = error.message if error is not None else "rejected"
            _emit(self.json, {"op": "rejected", "seq": seq, "kind": getattr(error, "kind", None),
                              "message": message}, f"! {seq:>7}  fold error: {clean(message)}")
        elif timeline.is_node(seq):
            k, role, text = self._node(seq, seq)
            _emit(self.json, {"op": "append", "seq": seq, "type": kind, "role": role, "preview": text},
                  f"+ {seq:>7}  {k:<18} {role:<10} {text}")
        if kind == "compaction/start":
            record = next((r for r in session.compactions.records if r.start_seq == seq), None)
            trigger = record.trigger.kind if record is not None else None
            cid = record.compaction_id if record is not None else None
            _emit(self.json, {"op": "compaction-open", "seq": seq, "id": cid, "trigger": trigger},
                  f"[ {seq:>7}  compaction {clean(str(cid))} opened ({trigger})")
        elif kind == "compaction/end":
            record = next((r for r in session.compactions.records if r.end_seq == seq), None)
            status = record.status if record is not None else None
            cid = record.compaction_id if record is not None else None
            _emit(self.json, {"op": "compaction-close", "seq": seq, "id": cid, "status": status,
                              "start_seq": record.start_seq if record is not None else None},
                  f"] {seq:>7}  compaction {clean(str(cid))} closed: {status}")


def follow_fold(path: str, as_json: bool) -> int:
    session = _open("fold", path)
    if isinstance(session, int):
        return session
    printer = _FoldPrinter(session, as_json)
    try:
        printer.surface()
    except KeyboardInterrupt:
        return INTERRUPTED
    return _loop(session, printer.step)


# -- info --follow ------------------------------------------------------------------------------

def status(session: Any) -> dict:
    """The one-line status of a followed session, as data."""
    from workbench.frames.live import running_brackets
    n = len(session)
    last = session.events[n - 1] if n else None
    running = running_brackets(session) if n else []
    return {
        "path": session.path, "events": n,
        "turns": len(session.index.seq_of_type("turn/start")) if n else 0,
        "last": None if last is None else {"seq": n - 1, "type": last.get("type"), "time": last.get("time")},
        "running": [{"id": r.compaction_id, "start_seq": r.start_seq, "trigger": r.trigger,
                     "elapsed_ms": r.elapsed_ms} for r in running],
        "pending_bytes": session.live.tail.pending if session.live is not None else 0,
        "verdict": session.verdict, "defects": len(session.defects),
        "newer_generation": session.live.newer if session.live is not None else None,
    }


def status_line(info: dict) -> str:
    parts = [f"{info['events']:,} events", f"{info['turns']:,} turns"]
    if info["last"] is not None:
        parts.append(f"last #{info['last']['seq']} {clean(str(info['last']['type']))}")
    for r in info["running"]:
        elapsed = "" if r["elapsed_ms"] is None else f" {r['elapsed_ms'] / 1000:.1f} s"
        parts.append(f"compaction running{elapsed} (since #{r['start_seq']})")
    if info["pending_bytes"]:
        parts.append(f"{info['pending_bytes']:,} B being written")
    parts.append(info["verdict"] + (f", {info['defects']} defects" if info["defects"] else ""))
    if info["newer_generation"]:
        parts.append(f"newer generation: {clean(info['newer_generation'])} "
                     f"(workbench info {clean(info['newer_generation'])} --follow)")
    return "live · " + " · ".join(parts)


def follow_info(path: str, as_json: bool) -> int:
    session = _open("info", path)
    if isinstance(session, int):
        return session
    tty = sys.stdout.isatty() and not as_json
    shown: list[Any] = [None]
    noted: list[Any] = [None]

    def step(result: Any) -> None:
        info = status(session)
        if result.reloaded or (result.notice and result.notice != noted[0]):
            noted[0] = result.notice
            note = {"op": "reload" if result.reloaded else "notice", "notice": result.notice}
            print(("\n" if tty else "") + (json.dumps(note) if as_json else f"# {clean(str(result.notice))}"))
        line = json.dumps(info, ensure_ascii=False) if as_json else status_line(info)
        if line == shown[0]:
            return
        shown[0] = line
        if tty:
            sys.stdout.write("\r\x1b[K" + line)
        else:
            print(line)

    code = _loop(session, step)
    if tty:
        print()
    return code


__all__ = ["POLL_SECONDS", "follow_fold", "follow_info", "status", "status_line"]
