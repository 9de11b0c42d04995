#!/usr/bin/env python3
"""Write the sample logs of this folder with the project's log builder (`workbench.build`).

    .venv/bin/python sample_logs/make_samples.py            # rewrite every sample
    .venv/bin/python sample_logs/make_samples.py --check    # exit 1 if a sample is out of date

Every scenario is a short, readable script over `LogBuilder`; the builder assigns seqs and times,
prices nodes with the DSH heuristic and writes the files exactly as DSH's JSONL backend would
(compact JSON lines, or one zstd frame per write batch). The output is deterministic: the same
script writes the same bytes. README.md in this folder says what each log shows.
"""
from __future__ import annotations

import argparse
import filecmp
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:
    sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import sample_texts as tx  # noqa: E402

from workbench.build import LogBuilder, shapes  # noqa: E402
from workbench.core.compaction.selection import select_compactable_range  # noqa: E402

MINUTE, HOUR = 60_000, 3_600_000
Call = tuple  # (tool name, arguments dict, result text[, is_error])


# -- small script helpers ----------------------------------------------------------------------

def tool_step(b: LogBuilder, text: str, calls: Sequence[Call], *, reasoning: str | None = None,
              think_ms: int = 4_000) -> None:
    """One step: the model answers with tool calls, the tools run, their results come back."""
    with b.step():
        _model_turn(b, text, calls, reasoning=reasoning, think_ms=think_ms)


def _model_turn(b: LogBuilder, text: str, calls: Sequence[Call], *, reasoning: str | None,
                think_ms: int) -> None:
    b.advance(think_ms)
    attempt = b.assistant(text, reasoning=reasoning,
                          tool_calls=[(name, args) for name, args, *_ in calls])
    for call_id, (_, _, result, *error) in zip(attempt.call_ids, calls):
        b.advance(700)
        b.tool_result(call_id, text=result, is_error=bool(error and error[0]))


def answer_step(b: LogBuilder, text: str, *, reasoning: str | None = None) -> None:
    with b.step():
        b.advance(3_000)
        b.assistant(text, reasoning=reasoning)


def opening_step(b: LogBuilder, prompt: str, text: str, calls: Sequence[Call] = (), *,
                 system: str | None = None, header: dict | None = None,
                 context_window: int | None = None, reasoning: str | None = None) -> None:
    """The first step of a turn: (system prompt,) the user's prompt, (the request header when
    this process has not logged one yet,) the model's first answer and its tool results."""
    with b.step():
        if system is not None:
            b.system(system)
        b.user(prompt)
        if header is not None:
            b.request_header(**header)
        if context_window is not None:
            b.request_context(context_window=context_window)
        if calls:
            _model_turn(b, text, calls, reasoning=reasoning, think_ms=5_000)
        else:
            b.advance(4_000)
            b.assistant(text, reasoning=reasoning)


def pressure_range(b: LogBuilder, retain_tokens: int) -> tuple[int, int]:
    """The head-anchored range DSH's pressure compaction would pick (spec §5.3)."""
    nodes = b.surface
    picked = select_compactable_range(nodes, [b.state.prices[s] for s in nodes], b.events,
                                      version=b.version, retain_tokens=retain_tokens)
    if picked is None:
        raise SystemExit(f"{b.session_id}: nothing to compact at seq {b.seq}")
    return picked.start, picked.end


def compact_pressure(b: LogBuilder, summary: str, *, retain_tokens: int = 2_500,
                     **kw) -> object:
    start, end = pressure_range(b, retain_tokens)
    b.advance(9_000)
    return b.compact(start, end, summary, **kw)


HEADER = {"tools": tx.TOOLS, "max_tokens": 4096, "reasoning_effort": "high"}


# -- 1. the seed story (format v0, exactly the seqs) -----------------------------------

def seed_story(out: Path) -> list[Path]:
    """A dependency upgrade whose first span is compacted: after seq 10 the surface is
    [10, 6, 7]; the 20,000-token package-lock.json read stays in the log at seq 2.

    A minimal v0 log (no turn records, messages without streams) so the seqs stay small and
    match the story; the bracket is a standalone one (owner null)."""
    b = LogBuilder(version=0, session_id="seed-story", cwd="/work/shop", seed=1)
    route = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}

    def bare(event: dict) -> int:
        # The builder has no script call for a message outside a turn and without its stream
        # records: append it verbatim, then let the builder's state track it like its own.
        seq = b.raw(event)
        b.state.track(b.events[-1])
        return seq

    def assistant(content: list[dict]) -> int:
        b.advance(4_000)
        message = shapes.assistant_message(content, dict(route), b.ids.uuid())
        return bare({"type": "assistant/message", "seq": b.seq, "time": b.clock,
                     "data": {"turn": 1, "step": 1, "message": message},
                     "sourceEventSeqs": [], "surfaceOp": "append"})

    b.user("Please upgrade our dependencies.")                                        # 0
    read = assistant([{"type": "tool-call", "id": "call_lock", "name": "read",
                       "arguments": '{"path":"package-lock.json"}'}])                 # 1
    b.advance(300)
    lock = shapes.tool_message("call_lock", [{"type": "text", "text": tx.package_lock()}],
                               False, b.ids.uuid(), version=0)
    bare({"type": "tool/result", "seq": b.seq, "time": b.clock,
          "data": {"turn": 1, "step": 1, "message": lock},
          "sourceEventSeqs": [read], "surfaceOp": "append"})                          # 2
    assistant([{"type": "text", "text": "Three packages are outdated: react 18.2.0 (latest "
                "19.1.0), lodash 4.17.20 (4.17.21) and axios 0.27.2 (1.7.9)."}])    # 3
    b.advance(2 * MINUTE)
    b.user("Upgrade them all.")                                                        # 4
    assistant([{"type": "text", "text": "Done: package.json now pins react ^19.1.0, lodash "
                "^4.17.21 and axios ^1.7.9, and the lock file was regenerated."}])  # 5
    b.advance(MINUTE)
    b.user("Run the tests.")                                                           # 6
    assistant([{"type": "text", "text": "All 214 tests pass with the upgraded packages."}])  # 7
    b.advance(30_000)
    b.compact(0, 5, "The user asked to upgrade the project's dependencies. package-lock.json "
              "(read at the start) showed react 18.2.0, lodash 4.17.20 and axios 0.27.2 as "
              "outdated. All three were upgraded in package.json (react ^19.1.0, lodash "
              "^4.17.21, axios ^1.7.9) and the lock file was regenerated.")           # 8..11
    b.advance(5 * MINUTE)
    b.user("Commit the upgrade with a short message.")                                 # 12
    assistant([{"type": "text", "text": "Committed: \"Upgrade react, lodash and axios\"."}])
    return [b.write(out / "seed-story__session.jsonl")]


# -- 2. several days, nested compactions --------------------------------------------------------

def multi_day(out: Path) -> list[Path]:
    """Three working days (one process per day, `session/end-seed` at each resume), automatic
    compactions inside turns, a manual /compact between turns, each later checkpoint
    swallowing the previous one (nested)."""
    b = LogBuilder(version=4, session_id="session-multi-day", cwd="/work/gateway", seed=2)
    files = {p: tx.source_file(p, n, i) for i, (p, n) in enumerate(
        [("gateway/app.py", 120), ("gateway/limits.py", 90), ("gateway/config.py", 60),
         ("tests/test_limits.py", 80), ("gateway/metrics.py", 70)])}

    def work(prompt: str, n: int, *, system: str | None = None, header: dict | None = None,
             context_window: int | None = None, mid: Callable[[], None] | None = None) -> None:
        path = list(files)[n % len(files)]
        with b.turn():
            opening_step(b, prompt, f"Reading {path} and the tests first.",
                         [("read", {"path": path}, files[path]),
                          ("grep", {"pattern": "limit", "path": "gateway"},
                           "\n".join(f"gateway/app.py:{10 + 7 * i}: limit = config.limit_{i}"
                                     for i in range(25)))],
                         system=system, header=header, context_window=context_window,
                         reasoning="Look at the code before changing anything.")
            if mid is not None:
                mid()
            tool_step(b, f"Applying the change to {path}.",
                      [("edit", {"path": path, "old": "limit=100", "new": "limit=120"},
                        f"Edited {path}: 1 replacement.")])
            tool_step(b, "Running the test suite.",
                      [("bash", {"command": "pytest -q"}, tx.test_output(180 + n, seed=n))])
            answer_step(b, f"Done with step {n + 1}: {prompt.rstrip('.')} — tests pass.")
        b.advance(7 * MINUTE)

    day = 24 * HOUR
    prompts = ["Add a token-bucket rate limiter to the API gateway.",
               "Make the bucket size configurable per route.",
               "Expose the limiter state as Prometheus metrics.",
               "Return Retry-After headers on 429 responses.",
               "Add a burst allowance for authenticated clients.",
               "Write tests for the refill timing.",
               "Document the configuration keys.",
               "Handle clock skew between gateway replicas.",
               "Add an admin endpoint to reset a client's bucket.",
               "Load-test the limiter at 5k requests per second.",
               "Clean up the metrics names.",
               "Prepare the release notes."]
    work(prompts[0], 0, system=tx.SYSTEM_PROMPT, header=HEADER, context_window=32_000)
    for n in (1, 2):
        work(prompts[n], n)
    work(prompts[3], 3, mid=lambda: compact_pressure(b, tx.summary(
        prompts[0], ["gateway/limits.py: token bucket added", "gateway/config.py: per-route "
                     "sizes", "gateway/metrics.py: limiter gauges"], prompts[3])))
    b.advance(day)                                                  # day 2: a new process
    b.end_seed()
    work(prompts[4], 4, header=HEADER)
    work(prompts[5], 5)
    work(prompts[6], 6, mid=lambda: compact_pressure(b, tx.summary(
        prompts[0], ["earlier checkpoint merged: bucket, per-route sizes, metrics, "
                     "Retry-After", "burst allowance for authenticated clients", "refill "
                     "timing tests"], prompts[6])))
    work(prompts[7], 7)
    b.advance(day)                                                  # day 3
    b.end_seed()
    work(prompts[8], 8, header=HEADER)
    b.advance(2 * MINUTE)
    b.compact(*pressure_range(b, 2_000), tx.summary(               # manual /compact
        prompts[0], ["two earlier checkpoints merged", "clock skew handled with monotonic "
                     "refill", "admin reset endpoint"], prompts[9]), command=True)
    work(prompts[9], 9)
    work(prompts[10], 10, mid=lambda: compact_pressure(b, tx.summary(
        prompts[0], ["three earlier checkpoints merged", "load test: 5k rps sustained"],
        prompts[10])))
    work(prompts[11], 11)
    return [b.write(out / "multi-day__session.v4.jsonl.zstd", compression="zstd")]


# -- 3. failed summaries ------------------------------------------------------------------------

def failed_summaries(out: Path) -> list[Path]:
    """Automatic compaction failing three ways (the runtime's own error strings), the session
    carrying on after each, then a successful attempt."""
    b = LogBuilder(version=4, session_id="session-failed-summaries", cwd="/work/gateway", seed=3)
    errors = ["summarization produced no text summary content",
              "summarization truncated at the token cap (incomplete checkpoint)",
              None,  # the shrink check, worded with the real numbers below
              ]
    for n in range(6):
        with b.turn():
            path = f"gateway/module_{n}.py"
            opening_step(b, f"Review {path} and tighten its error handling.",
                         f"Reading {path}.", [("read", {"path": path},
                                               tx.source_file(path, 140, 30 + n))],
                         system=tx.SYSTEM_PROMPT if n == 0 else None,
                         header=HEADER if n == 0 else None,
                         context_window=20_000 if n == 0 else None)
            if n >= 2:
                k = n - 2
                start, end = pressure_range(b, 2_500)
                if k < 2:
                    b.compact(start, end, "", error=errors[k])
                elif k == 2:
                    hidden = sum(b.state.prices[s] for s in b.state.span(start, end))
                    b.compact(start, end, "", error="summary is not smaller than the shadowed "
                              f"content ({hidden + 1873} estimated framed tokens >= {hidden})")
                else:
                    b.compact(start, end, tx.summary(
                        "Tighten error handling module by module.",
                        [f"gateway/module_{i}.py reviewed and fixed" for i in range(n)],
                        f"review gateway/module_{n}.py"))
            tool_step(b, "Fixing the bare except clauses.",
                      [("edit", {"path": path, "old": "except:", "new": "except OSError:"},
                        f"Edited {path}: 3 replacements.")])
            answer_step(b, f"{path}: three bare `except:` clauses now catch OSError only.")
        b.advance(4 * MINUTE)
    return [b.write(out / "failed-summaries__session.v4.jsonl")]


# -- 4. a crash mid-compaction, and the same session resumed -----------------------------------

GUIDE = "docs/账单迁移指南.md"
"""The Chinese migration guide whose read overflows the window in the crash scenario."""


def _crash_script(b: LogBuilder) -> int:
    """Five ported modules, then a Chinese migration guide so long that the next request
    overflows the context window — although DSH's heuristic, which undercounts Chinese, still
    sees room — and the overflow compaction is interrupted by a crash. Returns the guide's seq."""
    for n in range(5):
        with b.turn():
            path = f"services/billing_{n}.py"
            opening_step(b, f"Port {path} to the new invoice API.", f"Reading {path}.",
                         [("read", {"path": path}, tx.source_file(path, 150, 50 + n))],
                         system=tx.SYSTEM_PROMPT if n == 0 else None,
                         header=HEADER if n == 0 else None,
                         context_window=20_000 if n == 0 else None)
            if n == 3:
                compact_pressure(b, tx.summary("Port billing services to the invoice API.",
                                               ["billing_0..2 ported"], "port billing_3"))
            tool_step(b, "Porting.", [("edit", {"path": path, "old": "Invoice(", "new":
                                                "invoice_api.create("}, f"Edited {path}.")])
            answer_step(b, f"{path} now uses the invoice API.")
        b.advance(3 * MINUTE)
    b.turn_start()
    with b.step():
        b.user(f"Read {GUIDE} and port services/billing_5.py the way it says.")
        _model_turn(b, "Reading the migration guide first.",
                    [("read", {"path": GUIDE}, tx.chinese_doc(150))], reasoning=None,
                    think_ms=4_000)
    guide = b.surface[-1]
    b.step_start()                       # the provider counts more tokens than the window
    b.advance(2_000)
    b.attempt_failed("CONTEXT_WINDOW_EXCEEDED", "This model's maximum context length is 20000 "
                     "tokens. However, your messages resulted in 20987 tokens.")
    compact_pressure(b, "", retain_tokens=0, interrupted=True)   # killed during the summary
    return guide


def crash_mid_compaction(out: Path) -> list[Path]:
    """A long Chinese document made the next request overflow the context window (the DSH
    heuristic saw about half of its tokens); DSH started an overflow compaction inside the step
    and the process was killed during its summary request: an unmatched `compaction/start` at the
    tail of an open step and turn (as DSH left it)."""
    b = LogBuilder(version=4, session_id="session-crash", cwd="/work/billing", seed=4)
    _crash_script(b)
    return [b.write(out / "crash-mid-compaction__session.v4.jsonl")]


def crash_then_resume(out: Path) -> list[Path]:
    """The same session after the next start: crash repair closed the step and the turn
    (`turn/end {interrupted}`), a `session/end-seed` released the stale lock, and the new
    process pruned the guide's tool result and compacted before retrying the work."""
    b = LogBuilder(version=4, session_id="session-crash", cwd="/work/billing", seed=4)
    guide = _crash_script(b)
    b.repair()
    b.advance(20 * MINUTE)
    b.end_seed()
    with b.turn():
        b.prune(guide)
        compact_pressure(b, tx.summary("Port billing services to the invoice API.",
                                       ["billing_0..4 ported", f"{GUIDE} read: amounts in "
                                        "cents, idempotent callbacks"], "port billing_5"))
        opening_step(b, "Port services/billing_5.py the way the guide says.", "Porting it now.",
                     [("edit", {"path": "services/billing_5.py", "old": "Invoice(",
                                "new": "invoice_api.create("}, "Edited services/billing_5.py.")],
                     header=HEADER)
        answer_step(b, "services/billing_5.py now uses the invoice API.")
    return [b.write(out / "crash-then-resume__session.v4.jsonl")]


# -- 5. tool-result pruning ---------------------------------------------------------------------

def pruning(out: Path) -> list[Path]:
    """Three oversized tool results cut by the tool-result pruner (head 4096 + marker + tail
    1024 code points, same message id), then a summary compaction that folds the pruned copies."""
    b = LogBuilder(version=4, session_id="session-pruning", cwd="/work/gateway", seed=5)
    big = [("bash", {"command": "tail -n 400 logs/gateway.log"}, tx.log_lines(400, 1)),
           ("read", {"path": "gateway/app.py"}, tx.source_file("gateway/app.py", 700, 2)),
           ("bash", {"command": "journalctl -u gateway -n 300"}, tx.log_lines(300, 3))]
    targets: list[int] = []
    for n in range(7):
        with b.turn():
            if n in (2, 4):
                for seq in list(targets):
                    b.prune(seq)
                targets.clear()
            if n == 5:
                compact_pressure(b, tx.summary("Find why the gateway returns 503s.",
                                               ["logs show 503 bursts at the top of each "
                                                "minute", "app.py retries upstream without "
                                                "backoff"], "add jittered backoff"))
            call = big[n % 3] if n < 4 else ("grep", {"pattern": "503"}, "logs/gateway.log: "
                                              "41 matches")
            opening_step(b, "Why does the gateway return 503s under load?" if n == 0 else
                         f"Keep going (round {n + 1}).", "Looking at the evidence.", [call],
                         system=tx.SYSTEM_PROMPT if n == 0 else None,
                         header=HEADER if n == 0 else None,
                         context_window=24_000 if n == 0 else None)
            if n < 4:
                targets.append(b.surface[-1])
            answer_step(b, "The 503s line up with upstream retries at the top of each minute.")
        b.advance(5 * MINUTE)
    return [b.write(out / "pruning__session.v4.jsonl")]


# -- 6. a Chinese-heavy session ----------------------------------------------------------------

def chinese(out: Path) -> list[Path]:
    """A conversation in Chinese. The DSH heuristic (UTF-16 units / 4) prices CJK text at
    about half of what a real tokenizer counts, so the surface is fuller than DSH believes."""
    b = LogBuilder(version=4, session_id="session-chinese", cwd="/work/orders", seed=6)
    asks = ["请阅读订单服务的设计文档，找出支付回调的幂等性问题。",
            "请修复支付回调的重复扣款问题，并补充测试。",
            "请检查库存预占在支付超时后是否正确释放。",
            "请把金额计算统一改成以分为单位的整数。",
            "请总结今天的全部修改，准备代码评审。"]
    for n, ask in enumerate(asks):
        with b.turn():
            if n == 3:
                compact_pressure(b, "## 主要请求\n- 修复订单服务的支付回调幂等性问题\n\n## 已完成\n"
                                 "- 阅读设计文档\n- 回调按订单号加锁，重复回调直接返回\n- 补充了重复回调测试\n\n"
                                 "## 下一步\n- 检查库存释放与金额精度", retain_tokens=800)
            opening_step(b, ask, "我先阅读相关文件。",
                         [("read", {"path": f"docs/订单服务设计_{n}.md"}, tx.chinese_doc(8 + n))],
                         system=tx.CHINESE_SYSTEM if n == 0 else None,
                         header=HEADER if n == 0 else None,
                         context_window=16_000 if n == 0 else None,
                         reasoning="先看文档，再决定改哪里。")
            answer_step(b, "已完成：" + ask.removeprefix("请") + "相关的代码已经修改，测试全部通过。"
                        "支付回调现在按订单号加锁，重复到达的回调会直接返回上一次的结果。")
        b.advance(6 * MINUTE)
    return [b.write(out / "chinese__session.v4.jsonl")]


# -- 7. a parent with a spawned and a forked subagent, as a DSH session root --------------------

def subagents(out: Path) -> list[Path]:
    """`--work-shop--/<id>/session.v4.jsonl.zstd` for the parent and both children: a spawned
    child (empty seed, `subagent/descriptor`) and an in-process fork (`isSeeded`, the parent's
    first turns copied, `session/end-seed {inherited: true}`)."""
    b = LogBuilder(version=4, session_id="session-parent", cwd="/work/shop", seed=7)
    header = dict(HEADER, tools=tx.SUBAGENT_TOOLS)
    with b.turn():
        opening_step(b, "Audit the test suite and the docs; use helpers where it helps.",
                     "Listing the workspace first.",
                     [("bash", {"command": "ls -1"}, "docs\nsrc\ntests\npackage.json\n")],
                     system=tx.SYSTEM_PROMPT, header=header, context_window=32_000)
        answer_step(b, "The workspace has docs/, src/ and tests/.")
    b.advance(2 * MINUTE)
    with b.turn():
        with b.step():
            b.user("Delegate the test-suite audit to a helper.")
            b.advance(3_000)
            call = b.assistant("Starting a helper for the tests.", tool_calls=[(
                "subagent", {"description": "Audit tests", "prompt": "List the slowest tests "
                             "and any that are skipped."})])
            b.tool_call(call.call_ids[0])
            child = b.spawn_subagent(label="Audit tests")
            b.tool_result(call.call_ids[0], text=f"started subagent {child.session_id}")
        answer_step(b, "The helper is running; I will report when it settles.")
    with child.turn():
        with child.step():
            child.system(tx.SYSTEM_PROMPT)
            child.user("List the slowest tests and any that are skipped.")
            child.request_header(**HEADER)
            _model_turn(child, "Timing the suite.", [
                ("bash", {"command": "pytest --durations=5 -q"},
                 tx.test_output(214, seed=9) + "slowest: test_checkout_flow 4.2s, "
                 "test_search_index 3.9s\n2 skipped: test_legacy_payment, test_ie11")],
                reasoning=None, think_ms=3_000)
        answer_step(child, "Slowest: test_checkout_flow (4.2 s) and test_search_index (3.9 s). "
                    "Skipped: test_legacy_payment, test_ie11.")
    b.advance(2 * MINUTE)
    with b.turn():
        with b.step():
            b.user([{"type": "text", "text": f"Background subagent {child.session_id} finished."},
                    {"type": "text", "text": "Slowest: test_checkout_flow (4.2 s), "
                     "test_search_index (3.9 s). Skipped: test_legacy_payment, test_ie11."}],
                   source={"kind": "subagent-settled", "form": "notice",
                           "summary": "Test audit finished", "senderSessionId": child.session_id})
            b.advance(3_000)
            call = b.assistant("Forking a reviewer that knows this conversation.", tool_calls=[(
                "subagent_fork", {"description": "Review docs", "prompt": "Check the docs "
                                  "mention the two skipped tests."})])
            b.tool_call(call.call_ids[0])
            fork = b.fork(subagent=True)
            b.log("subagent/catalog", {"version": 1, "childId": fork.session_id,
                                       "childCreatedAt": fork.created_at, "mode": "one-shot",
                                       "label": "Review docs"})
            b.tool_result(call.call_ids[0], text=f"started subagent {fork.session_id}")
        answer_step(b, "The reviewer is running.")
    fork.log("subagent/descriptor", {"version": 3, "mode": "one-shot", "provider": "fork",
                                     "label": "Review docs", "agentProvider": "deepseek-official",
                                     "agentModel": "deepseek-v4-flash"})
    with fork.turn():
        opening_step(fork, "Check the docs mention the two skipped tests.", "Searching the docs.",
                     [("grep", {"pattern": "skipped", "path": "docs"},
                       "docs/testing.md:12: test_ie11 is skipped (IE11 support dropped)")],
                     header=HEADER)
        answer_step(fork, "docs/testing.md explains test_ie11; test_legacy_payment is not "
                    "documented.")
    return [b.write_to_root(out), child.write_to_root(out), fork.write_to_root(out)]


# -- 8. hostile payloads ------------------------------------------------------------------------

def hostile(out: Path) -> list[Path]:
    """HTML and JavaScript in every place log text can reach a page: prompts, answers, tool-call
    arguments, tool results, a compaction summary, the session title. Every view must show
    them as text; nothing may run or load."""
    b = LogBuilder(version=4, session_id="session-hostile", cwd="/work/site", seed=8)
    payloads = "\n".join(tx.PAYLOADS)
    with b.turn():
        opening_step(b, "Render this snippet for me:\n" + payloads,
                     "Here is the snippet, verbatim:\n" + payloads,
                     [("read", {"path": "index.html", "note": tx.PAYLOADS[0]},
                       "<!doctype html>\n" + payloads)],
                     system=tx.SYSTEM_PROMPT + "\n" + tx.PAYLOADS[1], header=HEADER,
                     context_window=16_000)
        b.log("session/title", {"title": tx.PAYLOADS[0], "messageSeqs": [b.surface[1]],
                                "source": {"kind": "fallback"}})
        answer_step(b, tx.PAYLOADS[4] + " " + tx.PAYLOADS[2])
    for n in range(3):
        with b.turn():
            if n == 2:
                compact_pressure(b, "Summary: " + " ".join(tx.PAYLOADS[:3]), retain_tokens=200)
            opening_step(b, f"Again {n}: " + tx.PAYLOADS[n + 5], tx.PAYLOADS[n],
                         [("bash", {"command": f"echo '{tx.PAYLOADS[n]}'"}, tx.PAYLOADS[n + 3])])
            answer_step(b, tx.PAYLOADS[-1])
    return [b.write(out / "hostile-payloads__session.v4.jsonl")]


SCENARIOS: tuple[Callable[[Path], list[Path]], ...] = (
    seed_story, multi_day, failed_summaries, crash_mid_compaction, crash_then_resume, pruning,
    chinese, subagents, hostile)


def generated(folder: Path) -> list[Path]:
    """The files a previous run wrote into `folder` (logs and session-root project dirs)."""
    return sorted([*folder.glob("*.jsonl"), *folder.glob("*.jsonl.zstd"), *folder.glob("--*--")])


def write_all(folder: Path) -> list[Path]:
    for old in generated(folder):
        shutil.rmtree(old) if old.is_dir() else old.unlink()
    return [p for scenario in SCENARIOS for p in scenario(folder)]


def _same_tree(a: Path, b: Path) -> bool:
    names_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    names_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    return names_a == names_b and all(filecmp.cmp(a / n, b / n, shallow=False) for n in names_a)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write into a temporary folder and compare with this folder")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    args = parser.parse_args(argv)
    if args.check:
        with tempfile.TemporaryDirectory() as tmp:
            write_all(Path(tmp))
            here = Path(tmp) / "_here"
            here.mkdir()
            for p in generated(args.out):
                (shutil.copytree if p.is_dir() else shutil.copy2)(p, here / p.name)
            fresh = Path(tmp) / "_fresh"
            fresh.mkdir()
            for p in generated(Path(tmp)):
                shutil.move(p, fresh / p.name)
            if not _same_tree(here, fresh):
                print("sample_logs/ is out of date: run sample_logs/make_samples.py",
                      file=sys.stderr)
                return 1
        return 0
    for path in write_all(args.out):
        print(f"{path.relative_to(args.out)}  {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
