#!/usr/bin/env python3
"""Write LARGE valid DSH logs for the load benchmark: `python bench/make_large_log.py [--events N]`.

The structure follows the real 0.2.1 headless corpus log `dev-large-multistep` (v4 spec §8): one
process per turn (`session/end-seed {}` + `request/header` reason `resume` before every turn after
the first), turns of many steps with one tool call per step (bash with `job/registered` /
`job/settled`, read, grep, todo_write with `todo/write`), `delivery-accepted` markers before every
model call, and automatic compactions whenever the priced surface passes a threshold, placed
between steps and head-anchored after the system node, so every checkpoint after the first shadows
the previous one (nested checkpoints). The v0 variant is the same script in format v0: top-level
`assistant/chunk` events (packed into storage rows on disk), no job or delivery events.

Outputs (git-ignored) in `bench/out/`: `large-v4.jsonl`, `large-v4.jsonl.zstd`, `large-v0.jsonl`,
`large-v0.jsonl.zstd`. The builder streams every batch to disk (only the surface is kept in
memory); the `.zstd` twin is framed from the raw file like the DSH writer frames it (header alone
in frame 1, then one frame per step batch, checksums on, no content size).
"""
from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from workbench.build import LogBuilder, LogWriter  # noqa: E402
from workbench.io.jsjson import loads  # noqa: E402

OUT = ROOT / "bench" / "out"
CWD = "/srv/bench/large/work"
THRESHOLD = 15_000   # tokens: compact when the surface is priced above this (as in the corpus)
RETAIN = 2_500       # tokens kept after the compacted span
STEPS_PER_TURN = (18, 34)

TOOLS = [
    {"name": name, "description": desc + " " + "Details about the tool and its limits. " * 6,
     "parameters": {"type": "object", "properties": {k: {"type": "string", "description": k}
                                                     for k in props}, "required": props[:1]}}
    for name, desc, props in [
        ("bash", "Execute a bash command and return its output.", ["description", "command"]),
        ("read", "Read a text file (offset, limit).", ["file_path", "offset", "limit"]),
        ("grep", "Search file contents with a regular expression.", ["pattern", "path"]),
        ("glob", "Find files by path pattern.", ["pattern"]),
        ("write", "Write a file.", ["file_path", "content"]),
        ("edit", "Edit a file in place.", ["file_path", "old", "new"]),
        ("todo_write", "Replace the todo list.", ["todos"]),
        ("job_output", "Collect a background job's output.", ["job_id", "wait"]),
    ]]
SYSTEM = ("You are an AI agent powered by DeepSeek Harness.\n\nYou are a coding agent powered by "
          "the bench model.\n\n" + "Check every bash result; investigate failures. " * 20)
REASONING = ["Review the tool output so far, then continue with the script.",
             "The user scripted this step. Execute the next pending directive.",
             "Check the remaining directives and pick the next scripted action."]


def _tool_step(rng: random.Random, n: int) -> tuple[str, dict, str]:
    kind = rng.choices(["bash", "read", "grep", "todo_write"], weights=[6, 2, 1, 1])[0]
    if kind == "bash":
        args = {"description": "Emit one work item",
                "command": f"echo item-{n}; seq {n} {n + 12} | paste -sd,"}
        out = f"item-{n}\n" + ",".join(str(i) for i in range(n, n + 13)) + "\n"
        if rng.random() < 0.03:
            out += "line of a long listing\n" * rng.randint(50, 300)
    elif kind == "read":
        args = {"file_path": f"{CWD}/alpha.txt", "offset": n % 40, "limit": 8}
        out = f"<path>{CWD}/alpha.txt</path>\n<type>file</type>\n<content>\n" + "".join(
            f"{n % 40 + i}: alpha line {n % 40 + i} of the sample file\n" for i in range(8)) + \
            "</content>"
    elif kind == "grep":
        args = {"pattern": f"item-{n % 97}", "path": CWD}
        out = f"Found {n % 5} matches\n" + f"{CWD}/log.txt:{n % 300}: item-{n % 97}\n" * (n % 5)
    else:
        args = {"todos": [{"content": f"batch {n}", "status": "in_progress"},
                          {"content": "final report", "status": "pending"}]}
        out = "Updated todo list (2 items)."
    return kind, args, out


def _compact_range(b: LogBuilder) -> tuple[int, int] | None:
    """Head-anchored range keeping ~RETAIN tokens, ending at a tool-balanced cut (v4 §5.3)."""
    state = b.state
    nodes, first = state.nodes, state.first_compactable()
    kept, k = 0, len(nodes)
    while k > first and kept < RETAIN:
        k -= 1
        kept += state.prices[nodes[k]]
    balance, balanced = 0, set()
    for i in range(first, k):
        event = state.node_events[nodes[i]]
        if event["type"] == "assistant/message":
            balance += sum(1 for blk in event["data"]["message"]["content"]
                           if blk["type"] == "tool-call")
        elif event["type"] == "tool/result":
            balance -= 1
        if balance == 0:
            balanced.add(i + 1)
    while k > first and k not in balanced:
        k -= 1
    return None if k <= first else (nodes[first], nodes[k - 1])


def build(version: int, path: Path, target_events: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    b = LogBuilder(version=version, session_id="session-bench-large" if version else "bench-large",
                   cwd=CWD, model="bench-model", stream_to=path, batch_events=16, seed=seed)
    v4 = version >= 4
    b.log("permission/preset", {"preset": "danger-full-access"})
    b.log("sandbox/mode", {"mode": "danger-full-access"})
    b.log("approval/policy", {"policy": "never"})
    item = 100
    turn = 0
    while b.seq < target_events:
        turn += 1
        if turn > 1:
            b.end_seed()
        prompt = f"Step {turn} of the bulk replay exercise: follow the directives below.\n" + \
            "".join(f"@tool bash echo item-{item + i}\n" for i in range(12))
        b.log("agent/inbox/spliced", {"target": "next-turn", "start": 0,
                                      "inserted": [{"content": [{"type": "text", "text": prompt}],
                                                    "source": {"kind": "user"}}]})
        with b.turn():
            b.log("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1,
                                          "inserted": []})
            steps = rng.randint(*STEPS_PER_TURN)
            for step in range(1, steps + 1):
                with b.step():
                    if step == 1:
                        if turn == 1:
                            b.system(SYSTEM)
                        b.user(prompt)
                        b.request_header(tools=TOOLS, max_tokens=2048, reasoning_effort="high",
                                         adapter_defaults={"reasoningEffort": True,
                                                           "maxTokens": True})
                        if turn == 1:
                            b.request_context(context_window=20_000)
                    if v4:
                        b.delivery_accepted()
                    if step == steps:
                        b.assistant(f"Finished the scripted steps of turn {turn}.",
                                    reasoning=rng.choice(REASONING))
                        continue
                    item += 1
                    kind, args, out = _tool_step(rng, item)
                    attempt = b.assistant(f"Using {kind} now.", reasoning=rng.choice(REASONING),
                                          tool_calls=[(kind, args)])
                    call_id = attempt.call_ids[0]
                    b.tool_call(call_id)
                    if kind == "bash" and v4:
                        b.job(call_id, label=args["command"])
                    if kind == "todo_write":
                        b.todo_write(args["todos"])
                    b.tool_result(call_id, text=out, meta={"cwd": CWD} if v4 else None)
                if b.state.surface_tokens > THRESHOLD and step < steps:
                    span = _compact_range(b)
                    if span is not None:
                        b.compact(*span, summary=(
                            "## Primary Request and Intent\n"
                            f"- Drive the scripted turns (turn {turn})."
                            "\n\n## Current Work\n- Merged the prior checkpoint with newer turns.\n"
                            f"\n## Next Step\n- Continue from step {step + 1}.\n"))
                if b.seq >= target_events and step < steps - 1:
                    break  # stop the turn early: finish it with its last step
        b.advance(rng.randint(500, 3000))
    b.close()
    return b.seq


def frame_copy(raw: Path, target: Path) -> int:
    """Frame a raw log as DSH does: header alone, then one frame per step batch."""
    with open(raw, "rb") as fh:
        header = loads(fh.readline())
        with LogWriter(target, header, compression="zstd") as writer:
            batch: list[bytes] = []
            for line in fh:
                batch.append(line)
                if line.startswith((b'{"type":"step/end"', b'{"type":"turn/end"')) or \
                        len(batch) >= 16:
                    writer.write_bytes(b"".join(batch))
                    batch = []
            if batch:
                writer.write_bytes(b"".join(batch))
            return writer.frames


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_300_000, help="events per log")
    parser.add_argument("--formats", default="4,0", help="comma-separated format versions")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for version in (int(v) for v in args.formats.split(",")):
        raw = args.out / f"large-v{version}.jsonl"
        t0 = time.perf_counter()
        events = build(version, raw, args.events)
        t1 = time.perf_counter()
        frames = frame_copy(raw, raw.with_name(raw.name + ".zstd"))
        t2 = time.perf_counter()
        zsize = raw.with_name(raw.name + ".zstd").stat().st_size
        print(f"v{version}: {events} events, {raw.stat().st_size / 2**20:.1f} MiB raw in "
              f"{t1 - t0:.1f} s; zstd {zsize / 2**20:.1f} MiB in {frames} frames "
              f"in {t2 - t1:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
