"""Deterministic text for the sample logs: file contents, tool outputs, summaries, payloads.

Nothing here is random at run time: every generator takes a seed, so `make_samples.py` writes the
same bytes on every machine. The texts only need to look like what a coding agent reads and
writes (lock files, source, test output); their sizes are what the samples are about.
"""
from __future__ import annotations

import hashlib
import random

SYSTEM_PROMPT = (
    "You are an AI agent powered by DeepSeek Harness.\n\n"
    "You are a coding agent. Work in the user's repository, read before you edit, run the tests "
    "after every change, and report what you changed and why.")

TOOLS = [
    {"name": "read", "description": "Read a file of the workspace.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"}},
                    "required": ["path"]}},
    {"name": "edit", "description": "Replace text in a file of the workspace.",
     "parameters": {"type": "object", "properties": {"path": {"type": "string"},
                                                     "old": {"type": "string"},
                                                     "new": {"type": "string"}},
                    "required": ["path", "old", "new"]}},
    {"name": "bash", "description": "Run a shell command in the workspace.",
     "parameters": {"type": "object", "properties": {"command": {"type": "string"}},
                    "required": ["command"]}},
    {"name": "grep", "description": "Search the workspace for a pattern.",
     "parameters": {"type": "object", "properties": {"pattern": {"type": "string"},
                                                     "path": {"type": "string"}},
                    "required": ["pattern"]}},
]

SUBAGENT_TOOLS = TOOLS + [
    {"name": "subagent", "description": "Start a helper agent on a separate task.",
     "parameters": {"type": "object", "properties": {"description": {"type": "string"},
                                                     "prompt": {"type": "string"}},
                    "required": ["prompt"]}},
    {"name": "subagent_fork", "description": "Fork a helper agent from this conversation.",
     "parameters": {"type": "object", "properties": {"description": {"type": "string"},
                                                     "prompt": {"type": "string"}},
                    "required": ["prompt"]}},
]

_WORDS = ("request handler limiter bucket window token refill burst config route client cache "
          "retry timeout header status middleware metric counter gauge budget quota upstream "
          "downstream session schema migration index column backfill worker queue").split()


def package_lock(chars: int = 80_000, seed: int = 7) -> str:
    """A package-lock.json-like file of exactly `chars` characters (the seed story's big read)."""
    rnd = random.Random(seed)
    head = ('{\n  "name": "shop-frontend",\n  "version": "3.4.0",\n  "lockfileVersion": 3,\n'
            '  "requires": true,\n  "packages": {\n')
    pinned = {"react": "18.2.0", "lodash": "4.17.20", "axios": "0.27.2"}
    parts = [head]
    for name, version in pinned.items():
        parts.append(_lock_entry(name, version))
    n = 0
    while sum(map(len, parts)) < chars:
        n += 1
        name = f"{rnd.choice(_WORDS)}-{rnd.choice(_WORDS)}-{n}"
        parts.append(_lock_entry(name, f"{rnd.randint(0, 9)}.{rnd.randint(0, 30)}."
                                       f"{rnd.randint(0, 40)}"))
    text = "".join(parts)[: chars - 6]
    return text + "\n  }\n}"


def _lock_entry(name: str, version: str) -> str:
    digest = hashlib.sha512(f"{name}@{version}".encode()).hexdigest()[:86]
    return (f'    "node_modules/{name}": {{\n      "version": "{version}",\n'
            f'      "resolved": "registry:{name}/-/{name}-{version}.tgz",\n'
            f'      "integrity": "sha512-{digest}==",\n      "license": "MIT"\n    }},\n')


def source_file(path: str, lines: int, seed: int) -> str:
    """A Python-looking module of `lines` lines."""
    rnd = random.Random(seed)
    out = [f'"""{path}: {rnd.choice(_WORDS)} {rnd.choice(_WORDS)} support."""',
           "from __future__ import annotations", ""]
    while len(out) < lines:
        a, b = rnd.choice(_WORDS), rnd.choice(_WORDS)
        out += [f"def {a}_{b}_{len(out)}(value, *, limit={rnd.randint(1, 500)}):",
                f'    """Return the {a} {b} for `value`, capped at `limit`."""',
                f"    result = min(value.{a}, limit) if value.{b} else {rnd.randint(0, 9)}",
                "    return result", ""]
    return "\n".join(out[:lines]) + "\n"


def test_output(passed: int, failed: int = 0, seed: int = 0) -> str:
    """pytest-like output."""
    rnd = random.Random(seed)
    lines = ["============================= test session starts =============================="]
    for i in range(max(1, (passed + failed) // 12)):
        lines.append(f"tests/test_{rnd.choice(_WORDS)}_{i}.py " + "." * rnd.randint(6, 14))
    if failed:
        lines.append("FAILED tests/test_limiter.py::test_refill_after_window - AssertionError: "
                     "expected 10 tokens, got 9")
    lines.append(f"======================= {passed} passed"
                 + (f", {failed} failed" if failed else "") + " in 3.41s =======================")
    return "\n".join(lines) + "\n"


def log_lines(count: int, seed: int) -> str:
    """Server log lines (a large tool result the pruner will cut)."""
    rnd = random.Random(seed)
    return "\n".join(
        f"2026-09-21T10:{i // 60 % 60:02d}:{i % 60:02d}Z INFO gateway {rnd.choice(_WORDS)}="
        f"{rnd.randint(0, 9999)} route=/api/{rnd.choice(_WORDS)} status="
        f"{rnd.choice((200, 200, 200, 429, 503))} latency_ms={rnd.randint(1, 900)}"
        for i in range(count)) + "\n"


def summary(topic: str, done: list[str], pending: str) -> str:
    """A Markdown checkpoint body in the sections DSH's summarizer asks for."""
    bullets = "\n".join(f"- {d}" for d in done)
    return (f"## Primary Request and Intent\n- {topic}\n\n## Key Technical Concepts\n"
            f"- token bucket rate limiting, per-route budgets\n\n## Files and Code\n{bullets}\n\n"
            f"## Pending Jobs\n- {pending}\n\n## Next Step\n- {pending}")


# -- Chinese ------------------------------------------------------------------------------------

CHINESE_SYSTEM = "你是一个编程助手。请先阅读代码再修改，每次修改后运行测试，并用中文汇报你做了什么以及原因。"

CHINESE_DOC = (
    "# 订单服务设计说明\n\n订单服务负责创建、支付和取消订单。每个订单都有唯一的编号，"
    "状态依次为：待支付、已支付、已发货、已完成或已取消。支付回调必须是幂等的，"
    "同一个回调重复到达时不能重复扣款。库存在下单时预占，在支付超时后释放。"
    "所有金额以分为单位存储，避免浮点误差。退款需要人工审核，审核通过后由财务系统发起。\n")


_CHINESE_TITLES = ["总体设计", "状态机", "支付回调", "库存预占", "金额精度", "退款流程", "监控告警",
                   "数据迁移", "接口约定", "错误处理", "日志规范", "发布流程"]


def chinese_doc(sections: int) -> str:
    """A Chinese design document of `sections` sections (the heuristic prices it at less than
    half of what the DeepSeek tokenizer counts)."""
    return "\n".join("## 第{}节：{}\n".format(i + 1, _CHINESE_TITLES[i % len(_CHINESE_TITLES)])
                     + CHINESE_DOC for i in range(sections))


# -- hostile payloads ---------------------------------------------------------------------------

MARK = "__wb_pwned"
"""A page that runs any payload below sets `window.__wb_pwned` (the browser test checks it)."""

PAYLOADS = (
    f"<script>window.{MARK} = 'script tag'</script>",
    f"<img src=x onerror=\"window.{MARK}='img onerror'\">",
    f"<a href=\"javascript:window.{MARK}='javascript link'\">open the docs</a>",
    "[the docs](javascript:alert(document.cookie))",
    f"</script><script>window.{MARK}='script breakout'</script>",
    f"<svg onload=\"window.{MARK}='svg onload'\"><circle r=4 /></svg>",
    "<iframe src=\"https://evil.example/steal\"></iframe>",
    "<link rel=\"stylesheet\" href=\"http://evil.example/x.css\">",
    "<style>body { background: url(http://evil.example/bg.png) }</style>",
    f"<!-- </textarea></title><script>window.{MARK}='comment breakout'</script> -->",
    "line\u2028separator and paragraph\u2029separator",
    "&lt;already escaped&gt; &amp; {{7*7}} ${alert(1)} ' \" `",
    f"<details open ontoggle=\"window.{MARK}='details ontoggle'\">x</details>",
)
