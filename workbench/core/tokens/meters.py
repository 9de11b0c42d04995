"""Interchangeable token meters: one small protocol, several sources. Layer: core.

A `Meter` counts what the model sees: a message (`count_message`), the request envelope
(`count_envelope`: v0 system prompt + tool schemas, v4 tool schemas only, since the v4 system prompt
is a surface node) and, for whole logs, the node of every event (`count_events`: 0 for events whose
projection is none, v0 §4.8 / v4 §4.8).

* `dsh`: the DSH heuristic reproduced exactly (`heuristic`, spec §6).
* `o200k`, `cl100k`: tiktoken encodings built from local files (`offline`).
* `deepseek`: DeepSeek V4's own tokenizer (`offline`).

Real tokenizers count the text the model sees: text and reasoning, tool-call name and arguments,
(v0) the blocks inside a tool result, and the JSON text of any other block (v4 images without their
`offloaded` mark), each piece encoded separately, plus a fixed per-message framing (`framing`):
3 + 1 role token for the OpenAI encodings (OpenAI's documented chat accounting), 2 for DeepSeek
(role marker and end marker of its chat template). These framings are approximations; the piece
counts are exact. Whole logs are counted in batches (one tokenizer call per ~1 MB of text), with
a tqdm bar when counting takes more than a moment; events are read with
`workbench.io.payloads.read_events`.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from itertools import accumulate
from typing import Any, Protocol, runtime_checkable

import numpy as np

from workbench.core.header import canonical_header
from workbench.core.tokens.heuristic import (
    derive_message,
    estimate_header,
    estimate_message,
    node_price,
    price_events,
)
from workbench.core.tokens.offline import deepseek_tokenizer, tiktoken_encoding
from workbench.core.tokens.pieces import (
    NodePieces,
    envelope_pieces,
    message_pieces,
    node_pieces,
)
from workbench.errors import InvalidArgument, MeterError, Unimplemented
from workbench.io.jsjson import js_len
from workbench.io.memo import Memo
from workbench.io.payloads import read_events

BATCH_CHARS = 1 << 20
"""Characters per tokenizer batch call when counting a whole log."""

PROGRESS_DELAY = 0.5
"""Seconds before the progress bar of a long count appears."""

_PRICE_BATCH = 64
"""Events priced per call: a small batch stays in the CPU cache and out of the cyclic GC's old
generations (see bench/README.md)."""


@runtime_checkable
class Meter(Protocol):
    """What every meter offers. `version` is the session format the messages come from."""

    name: str
    version: int

    def count_text(self, text: str) -> int: ...

    def count_message(self, message: dict) -> int: ...

    def count_envelope(self, header: dict | None) -> int: ...

    def count_event(self, event: dict) -> int: ...

    def count_events(self, events: Sequence[dict], *, progress: bool = False,
                     positions: Iterable[int] | None = None) -> np.ndarray: ...


# -- the heuristic

class DshMeter:
    """The DSH token-meter heuristic (exact; spec §6)."""

    def __init__(self, *, version: int = 4) -> None:
        self.name = "dsh"
        self.version = version

    def count_text(self, text: str) -> int:
        return (js_len(text) + 3) // 4

    def count_message(self, message: dict) -> int:
        return estimate_message(message, version=self.version)

    def count_envelope(self, header: dict | None) -> int:
        return estimate_header(canonical_header(header, version=self.version), version=self.version)

    def count_event(self, event: dict) -> int:
        return node_price(event, version=self.version)

    def count_events(self, events: Sequence[dict], *, progress: bool = False,
                     positions: Iterable[int] | None = None) -> np.ndarray:
        """Per-event node prices of a log, in batches (a large log's events are never all held
        at once). `positions` may restrict the pass to the events that can be nodes (the others
        count 0)."""
        version = self.version
        counts = np.zeros(len(events), dtype=np.int64)
        where: list[int] = []
        batch: list[Any] = []
        for position, event in read_events(events, range(len(events)) if positions is None else positions):
            where.append(position)
            batch.append(event)
            if len(batch) >= _PRICE_BATCH:
                counts[where] = price_events(batch, version=version)
                where, batch = [], []
        if batch:
            counts[where] = price_events(batch, version=version)
        return counts


# -- real tokenizers

def _progress_bar(total: int, enabled: bool | Callable[[int, str], Any], desc: str) -> Any:
    """No bar, a tqdm bar (`enabled` True) or the bar the factory `enabled(total, desc)` makes."""
    if not enabled:
        return None
    if callable(enabled):
        return enabled(total, desc)
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is a declared dependency
        return None
    return tqdm(total=total, unit="char", unit_scale=True, delay=PROGRESS_DELAY, desc=desc, leave=False)


ENVELOPES_KEPT = 16
ENVELOPE_CHARS_KEPT = 1 << 26
"""At most this many envelopes, of this many characters in all, are remembered per meter."""

PIECE_CHARS = 1 << 18
"""Longest text a tokenizer is handed at once (256 Ki characters). A tokenizer holds some 150
bytes a character while it encodes (a 300 MB message took 15 GB and more), so a longer text is
counted piece by piece, cut before a space between two words in a piece's second half (the
pre-tokenizers of these encodings start a word there, so the count is the same) and hard at
`PIECE_CHARS` otherwise (a cut that may split one token)."""


class _TokenizerMeter:
    """Shared counting over pieces; subclasses provide `_encode(texts)`."""

    name: str
    version: int
    framing: int

    def __init__(self) -> None:
        self._envelopes = Memo(ENVELOPES_KEPT, ENVELOPE_CHARS_KEPT)

    def _encode(self, texts: list[str]) -> list[int]:
        """The tokenizer's own lengths of `texts`, each at most `PIECE_CHARS` long."""
        raise Unimplemented

    def _encode_lengths(self, texts: list[str]) -> list[int]:
        """Encoded lengths of `texts`, a text over `PIECE_CHARS` counted piece by piece."""
        if not texts or max(map(len, texts)) <= PIECE_CHARS:
            return self._encode(texts)
        return [sum(self._encode([piece])[0] for piece in _pieces(text))
                if len(text) > PIECE_CHARS else self._encode([text])[0] for text in texts]

    def count_text(self, text: str) -> int:
        return self._encode_lengths([text])[0] if text else 0

    def _count_pieces(self, pieces: list[str]) -> int:
        pieces = [p for p in pieces if p]
        return sum(self._encode_lengths(pieces)) if pieces else 0

    def count_message(self, message: dict) -> int:
        return self._count_pieces(message_pieces(message, version=self.version)) + self.framing

    def count_envelope(self, header: dict | None) -> int:
        """The envelope's count; up to `ENVELOPES_KEPT` distinct envelopes are remembered
        (a log re-sends the same tool schemas at every step; `io.memo.Memo`)."""
        pieces = tuple(envelope_pieces(header, version=self.version))
        count = self._envelopes.get(pieces)
        return count if count is not None else self._envelopes.remember(
            pieces, self._count_pieces(list(pieces)), sum(map(len, pieces)))

    def count_event(self, event: dict) -> int:
        message = derive_message(event, version=self.version)
        return 0 if message is None else self.count_message(message)

    def count_events(self, events: Sequence[dict], *, progress: bool = False,
                     positions: Iterable[int] | None = None) -> np.ndarray:
        """Per-event node counts of a whole log, batched. `positions` may restrict the pass to
        the events that can be nodes (the others count 0)."""
        chosen = range(len(events)) if positions is None else positions
        pieces = node_pieces(read_events(events, chosen), len(events), self.version)
        return self.count_pieces(pieces, progress=progress)

    def count_pieces(self, pieces: NodePieces, *,
                     progress: bool | Callable[[int, str], Any] = False) -> np.ndarray:
        """Per-event node counts from pieces `node_pieces` read: one read of a log serves every
        real meter of its version. `progress`: a tqdm bar when True, or a bar factory
        ``(total characters, desc) -> bar`` with ``update(n)`` and ``close()``."""
        counts = np.zeros(pieces.n, dtype=np.int64)
        if not pieces.nodes:
            return counts
        texts = pieces.texts
        where = np.asarray(pieces.nodes, dtype=np.int64)
        counts[where] = self.framing
        # One entry per piece, empty pieces included (they encode to nothing). A text is encoded
        # once however often it occurs (tool names, repeated prompts and outputs): identical
        # texts have identical counts, and hashing costs far less than encoding.
        distinct = list(dict.fromkeys(texts))
        sizes = list(accumulate(map(len, distinct)))
        bar = _progress_bar(sizes[-1] if sizes else 0, progress, f"{self.name} tokens")
        try:
            encoded = dict(zip(distinct, self._batched(distinct, sizes, bar)))
        finally:
            if bar is not None:
                bar.close()
        if texts:
            lengths = list(map(encoded.__getitem__, texts))
            per_node = np.diff(np.asarray(pieces.ends, dtype=np.int64), prepend=0)
            owners = np.repeat(where, per_node)
            counts += np.bincount(owners, weights=np.asarray(lengths, dtype=np.float64),
                                  minlength=pieces.n).astype(np.int64)
        return counts

    def _batched(self, texts: list[str], sizes: list[int], bar: Any) -> list[int]:
        """Encoded lengths of `texts` (`sizes`: their cumulative lengths), one tokenizer call per
        run of texts reaching `BATCH_CHARS` characters."""
        out: list[int] = []
        start, count = 0, len(texts)
        while start < count:
            base = sizes[start - 1] if start else 0
            end = min(count, bisect_left(sizes, base + BATCH_CHARS, start) + 1)
            out.extend(self._encode_lengths(texts[start:end]))
            if bar is not None:
                bar.update(sizes[end - 1] - base)
            start = end
        return out


class TiktokenMeter(_TokenizerMeter):
    """An OpenAI tiktoken encoding (`o200k_base` or `cl100k_base`), offline."""

    framing = 4

    def __init__(self, encoding: str = "o200k_base", *, version: int = 4) -> None:
        super().__init__()
        self.encoding_name = encoding
        self.name = encoding.removesuffix("_base")
        self.version = version
        self._encoding = tiktoken_encoding(encoding)

    def _encode(self, texts: list[str]) -> list[int]:
        # A plain loop: tiktoken's threaded batch API is several times slower on small texts.
        return list(map(len, map(self._encoding.encode_ordinary, texts)))


class DeepSeekMeter(_TokenizerMeter):
    """DeepSeek V4's tokenizer (`tokenizer.json` of the `deepseek-tokenizer` package), offline."""

    framing = 2

    def __init__(self, *, version: int = 4) -> None:
        super().__init__()
        self.name = "deepseek"
        self.version = version
        self._tokenizer = deepseek_tokenizer()

    def _encode(self, texts: list[str]) -> list[int]:
        if len(texts) == 1:
            try:
                return [len(self._tokenizer.encode(texts[0], add_special_tokens=False).ids)]
            except TypeError:   # a lone surrogate (valid in a JSON string, not in UTF-8)
                return [len(self._tokenizer.encode(_scrubbed(texts[0]),
                                                   add_special_tokens=False).ids)]
        try:
            encoded = self._tokenizer.encode_batch_fast(texts, add_special_tokens=False)
        except TypeError:   # a lone surrogate in one of them
            encoded = self._tokenizer.encode_batch_fast(list(map(_scrubbed, texts)),
                                                        add_special_tokens=False)
        return [len(e.ids) for e in encoded]


_WORD_SPACE = re.compile(r"(?<=\S) (?=\S)")
"""A space between two words: where the pre-tokenizers start a new word."""


def _pieces(text: str) -> Iterable[str]:
    """`text` in pieces of at most `PIECE_CHARS` characters, each cut before the last space
    between two words in the piece's second half, else at `PIECE_CHARS` (`PIECE_CHARS`)."""
    start, size = 0, len(text)
    while size - start > PIECE_CHARS:
        end = start + PIECE_CHARS
        for match in _WORD_SPACE.finditer(text, start + PIECE_CHARS // 2, end):
            end = match.start()
        yield text[start:end]
        start = end
    yield text[start:]


def _scrubbed(text: str) -> str:
    """`text` with each lone surrogate as U+FFFD, as tiktoken's `encode_ordinary` counts it (the
    Rust tokenizers take only text that UTF-8 can hold)."""
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


# -- registry

_FACTORIES: dict[str, Callable[[int], Meter]] = {
    "dsh": lambda version: DshMeter(version=version),
    "o200k": lambda version: TiktokenMeter("o200k_base", version=version),
    "cl100k": lambda version: TiktokenMeter("cl100k_base", version=version),
    "deepseek": lambda version: DeepSeekMeter(version=version),
}
_ALIASES = {"o200k_base": "o200k", "cl100k_base": "cl100k", "heuristic": "dsh"}
METER_NAMES: tuple[str, ...] = tuple(_FACTORIES)
"""Meters `get_meter` knows (the provider's own report is `usage`, a log reading, not a meter)."""

_INSTANCES: dict[tuple[str, int], Meter] = {}


def get_meter(name: str, *, version: int = 4) -> Meter:
    """The meter called `name` for messages of format `version` (instances are shared)."""
    key = _ALIASES.get(name, name)
    if key not in _FACTORIES:
        raise MeterError(f"unknown meter {name!r}; known: {', '.join(METER_NAMES)}")
    meter = _INSTANCES.get((key, version))
    if meter is None:
        meter = _INSTANCES[(key, version)] = _FACTORIES[key](version)
    return meter


def parse_meter_names(spec: str | Iterable[str], *, empty: bool = False) -> tuple[str, ...]:
    """`"dsh,o200k"` → `("dsh", "o200k")`, validated and without duplicates. A spec that is
    neither a string nor an iterable of strings is `InvalidArgument`; so is one naming no meter
    (``""``, ``()``) unless `empty` (a caller with another source of counts)."""
    if isinstance(spec, str):
        names: list = spec.split(",")
    else:
        try:
            names = list(spec)
        except TypeError:
            names = [spec]
    wrong = [n for n in names if not isinstance(n, str)]
    if wrong:
        msg = (f"meters {spec!r}: a meter is named by a string ({wrong[0]!r} is not); "
               f"known: {', '.join(METER_NAMES)}")
        raise InvalidArgument(msg)
    out: list[str] = []
    for raw in names:
        name = _ALIASES.get(raw.strip(), raw.strip())
        if not name:
            continue
        if name not in _FACTORIES:
            raise MeterError(f"unknown meter {raw.strip()!r}; known: {', '.join(METER_NAMES)}")
        if name not in out:
            out.append(name)
    if not out and not empty:
        msg = f"meters {spec!r} names no meter; known: {', '.join(METER_NAMES)}"
        raise InvalidArgument(msg)
    return tuple(out)


__all__ = [
    "BATCH_CHARS", "METER_NAMES", "DeepSeekMeter", "DshMeter", "Meter", "TiktokenMeter",
    "envelope_pieces", "get_meter", "message_pieces", "parse_meter_names",
]
