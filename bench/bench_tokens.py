#!/usr/bin/env python3
"""Token meter benchmark (issue 5): `python bench/bench_tokens.py [FILE] [--sample-mb N] [--full]`.

FILE defaults to `bench/out/large-v4.jsonl` (1.3M events, `bench/make_large_log.py`). Each
measurement runs in a fresh subprocess; CPU time (`time.process_time`, all threads) is what the
rates, ratios and verdicts use, since the machine is shared; wall time is printed next to it.

**The `dsh` meter over all events** (target >= 1M events/s). A large log is parsed on demand
(`workbench.io.store.EventStore`): the loader keeps offsets, not dicts, so "all events" must be
decoded from disk again before any meter sees them, and decoding costs far more than pricing.
Both rates are reported:

* ``dsh@K``    — pure pricing: the log's events decoded in chunks of K (untimed, their decoding
  CPU time is reported apart), `price_events(chunk)` timed over every chunk; the rate is events /
  pricing CPU, over all events (message or not). Memory locality decides the rate (the loop is
  bound by cache misses on the event dicts; reshaping it changes nothing), so three chunk sizes
  are measured: 64 (streamed: the meters price a lazy log's events as they are parsed, still in
  the CPU cache), 4,096 (events scattered over recycled memory: no library path holds events this
  way, the worst layout seen) and 200,000 (resident, allocated in order: like the largest log the
  store keeps parsed); the decoding time of large chunks also carries the cyclic GC's passes;
* ``dsh-meter`` — end to end: `get_meter("dsh").count_events(log.events)` on the lazy store
  (decodes every event in order, then prices it);
* ``dsh-logtokens`` — end to end through the library path: `LogTokens(events).prices("dsh")`
  (the events whose type can be a node, found by type codes, read in order);
* ``dsh-passes`` — the other `LogTokens` passes over the whole lazy log, each timed: the fold
  shape (`shape`, surface-eligible events), `surface_totals("dsh")` over cached prices, and the
  provider usage samples (`usage()`).

**Real tokenizers** (`o200k`, `deepseek`; target: meter within 1.5x of the bare tokenizer). The
sample is the first `--sample-mb` MB (default 20; 0 = the whole log) of message text of the log:
message events in log order until the texts their nodes show the model (`message_pieces`) reach
that many characters, written once to `bench/out/tokens-sample-*.jsonl` and read back with orjson
(untimed). For each tokenizer:

* ``<tok>-meter``  — `get_meter(tok).count_events(sample events)`: everything the meter does
  (projection, piece extraction, batching, tokenizer calls, per-event sums);
* ``<tok>-direct`` — the baseline: the tokenizer called directly on the same texts concatenated
  (joined by a newline, cut into ~1 MB strings): tiktoken `encode_ordinary` per string, DeepSeek
  `encode_batch_fast` over the strings;
* ``<tok>-pieces`` — the tokenizer called directly on each text separately (tiktoken in a loop,
  DeepSeek `encode_batch_fast` per ~1 MB batch): the floor for any meter that counts per node;
* ``<tok>-distinct`` — the same over the distinct texts only, once each (the meter encodes a
  repeated text once): meter / distinct is the meter's own overhead. The bench log is synthetic
  and repetitive (46% of its message characters repeat an earlier text; 2-33% in the real v4
  corpus logs), so meter / direct flatters the meter more than a real log would;
* with ``--full``: ``<tok>-log`` — `LogTokens(events).prices(tok)` over the whole lazy log
  (decoding included).

Tokenizers are built and warmed before timing. Prints a table (and one JSON summary line) and
exits 0. ``--profile KIND`` runs one measurement under cProfile instead.
"""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Self

from _common import best_of, peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
DEFAULT = OUT / "large-v4.jsonl"
CHUNKS = (64, 4096, 200_000)
CONCAT_CHARS = 1 << 20
TARGET_EVENTS_PER_S = 1_000_000
TARGET_TOKENIZER_RATIO = 1.5
TOKENIZERS = ("o200k", "deepseek")


class _Clock:
    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def __enter__(self) -> Self:
        self._w, self._c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall += time.perf_counter() - self._w
        self.cpu += time.process_time() - self._c


def _load(path: Path):
    from workbench.core.load import load_log
    with _Clock() as clock:
        log = load_log(path)
    return log, clock


def sample_path(path: Path, sample_mb: float) -> Path:
    tag = "all" if sample_mb <= 0 else f"{sample_mb:g}mb"
    return OUT / f"tokens-sample-{path.name.replace('.', '-')}-{tag}.jsonl"


def _write_sample(path: Path, sample_mb: float) -> dict:
    """The first `sample_mb` MB of message text of the log, as decoded message events."""
    import orjson

    from workbench.core.tokens.heuristic import derive_message
    from workbench.core.tokens.meters import message_pieces
    log, _ = _load(path)
    version = log.format_version
    limit = sample_mb * 1e6 if sample_mb > 0 else float("inf")
    target = sample_path(path, sample_mb)
    chars = pieces = events = 0
    tmp = target.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        fh.write(orjson.dumps({"version": version, "source": path.name}) + b"\n")
        for event in log.events:
            message = derive_message(event, version=version)
            if message is None:
                continue
            texts = [p for p in message_pieces(message, version=version) if p]
            fh.write(orjson.dumps(event) + b"\n")
            events += 1
            pieces += len(texts)
            chars += sum(map(len, texts))
            if chars >= limit:
                break
    tmp.replace(target)
    return {"kind": "sample", "file": str(target), "events": events, "pieces": pieces,
            "chars": chars}


def _read_sample(path: Path, sample_mb: float) -> tuple[int, list[dict]]:
    import orjson
    lines = sample_path(path, sample_mb).read_bytes().splitlines()
    return orjson.loads(lines[0])["version"], [orjson.loads(line) for line in lines[1:]]


def _texts(events: list[dict], version: int) -> list[str]:
    from workbench.core.tokens.heuristic import derive_message
    from workbench.core.tokens.meters import message_pieces
    out = []
    for event in events:
        message = derive_message(event, version=version)
        if message is not None:
            out.extend(p for p in message_pieces(message, version=version) if p)
    return out


def _concatenated(texts: list[str]) -> list[str]:
    out, part, size = [], [], 0
    for text in texts:
        part.append(text)
        size += len(text) + 1
        if size >= CONCAT_CHARS:
            out.append("\n".join(part))
            part, size = [], 0
    if part:
        out.append("\n".join(part))
    return out


def _measure(kind: str, path: Path, sample_mb: float) -> dict:
    sys.path.insert(0, str(ROOT))
    result: dict = {"kind": kind}
    if kind == "sample":
        return _write_sample(path, sample_mb)
    if kind.startswith("dsh") or kind.endswith("-log"):  # the whole log
        log, load = _load(path)
        version, events = log.format_version, log.events
        result.update(events=len(events), load_cpu=load.cpu, load_wall=load.wall)
        if kind.startswith("dsh@"):
            from workbench.core.tokens.heuristic import price_events
            chunk_size = int(kind.partition("@")[2])
            decode, price = _Clock(), _Clock()
            it, total = iter(events), 0
            while True:
                with decode:
                    chunk = list(itertools.islice(it, chunk_size))
                if not chunk:
                    break
                with price:
                    total += sum(price_events(chunk, version=version))
            result.update(cpu=price.cpu, wall=price.wall, decode_cpu=decode.cpu,
                          decode_wall=decode.wall, tokens=total)
        elif kind == "dsh-meter":
            from workbench.core.tokens.meters import get_meter
            meter = get_meter("dsh", version=version)
            with _Clock() as clock:
                counts = meter.count_events(events)
            result.update(cpu=clock.cpu, wall=clock.wall, tokens=int(counts.sum()))
        elif kind == "dsh-passes":
            from workbench.core.tokens.counts import LogTokens
            tokens = LogTokens(events, version=version, progress=False)
            clocks = {name: _Clock() for name in ("prices", "shape", "totals", "usage")}
            with clocks["prices"]:
                tokens.prices("dsh")
            with clocks["shape"]:
                shape = tokens.shape
            with clocks["totals"]:
                totals = tokens.surface_totals("dsh")
            with clocks["usage"]:
                samples = tokens.usage()
            result.update(cpu=sum(c.cpu for c in clocks.values()),
                          wall=sum(c.wall for c in clocks.values()),
                          passes={k: [c.cpu, c.wall] for k, c in clocks.items()},
                          nodes=int(shape.surface.sum()), final_total=int(totals[-1]),
                          samples=len(samples))
        else:
            from workbench.core.tokens.counts import LogTokens
            name = "dsh" if kind == "dsh-logtokens" else kind.removesuffix("-log")
            tokens = LogTokens(events, version=version, progress=False)
            tokens.meter(name).count_text("warm up")
            with _Clock() as clock:
                counts = tokens.prices(name)
            result.update(cpu=clock.cpu, wall=clock.wall, tokens=int(counts.sum()))
    else:
        name, _, how = kind.partition("-")
        version, events = _read_sample(path, sample_mb)
        result["events"] = len(events)
        from workbench.core.tokens.meters import get_meter
        meter = get_meter(name, version=version)
        meter.count_text("warm up")
        if how == "meter":
            with _Clock() as clock:
                counts = meter.count_events(events)
            result.update(tokens=int(counts.sum()) - meter.framing * int((counts > 0).sum()))
        else:
            texts = _texts(events, version)
            result.update(pieces=len(texts), chars=sum(map(len, texts)))
            if how == "distinct":
                texts = list(dict.fromkeys(texts))
                result.update(distinct=len(texts), distinct_chars=sum(map(len, texts)))
            inputs = _concatenated(texts) if how == "direct" else texts
            if name == "deepseek":
                from workbench.core.tokens.offline import deepseek_tokenizer
                tok = deepseek_tokenizer()
                batches = [inputs] if how == "direct" else _concatenated_batches(inputs)
                with _Clock() as clock:
                    tokens = 0
                    for batch in batches:
                        tokens += sum(len(e.ids) for e in tok.encode_batch_fast(
                            batch, add_special_tokens=False))
            else:
                from workbench.core.tokens.offline import tiktoken_encoding
                encode = tiktoken_encoding(f"{name}_base").encode_ordinary
                with _Clock() as clock:
                    tokens = sum([len(encode(text)) for text in inputs])
            result["tokens"] = tokens
        result.update(cpu=clock.cpu, wall=clock.wall)
    result["maxrss_mib"] = peak_rss_mib()
    return result


def _concatenated_batches(texts: list[str]) -> list[list[str]]:
    """Texts grouped into ~1 MB batches (what the meter hands the tokenizer per call)."""
    out, part, size = [], [], 0
    for text in texts:
        part.append(text)
        size += len(text)
        if size >= CONCAT_CHARS:
            out.append(part)
            part, size = [], 0
    if part:
        out.append(part)
    return out


def _run(kind: str, path: Path, sample_mb: float, repeat: int = 1) -> dict:
    result = best_of(repeat, lambda: run_fresh(__file__, str(path), "--measure", kind, "--sample-mb",
                                               str(sample_mb), check=False), "cpu")
    return {"kind": kind, **result}


def _line(r: dict, extra: str = "") -> str:
    if "error" in r:
        return f"  {r['kind']:16s} ERROR: {r['error']}"
    return (f"  {r['kind']:16s} {r['cpu']:7.2f} s CPU {r['wall']:7.2f} s wall  "
            f"peak RSS {r['maxrss_mib']:6.0f} MiB{extra}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT)
    parser.add_argument("--measure", help=argparse.SUPPRESS)
    parser.add_argument("--cprofile", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sample-mb", type=float, default=20.0,
                        help="MB of message text for the tokenizer sample (0: the whole log)")
    parser.add_argument("--only", default="dsh,tokenizers",
                        help="comma-separated groups: dsh, tokenizers")
    parser.add_argument("--tokenizers", default=",".join(TOKENIZERS))
    parser.add_argument("--full", action="store_true",
                        help="also count the whole lazy log with each tokenizer (LogTokens)")
    parser.add_argument("--repeat", type=int, default=1, help="keep the fastest of N runs")
    parser.add_argument("--profile", metavar="KIND", help="cProfile one measurement")
    args = parser.parse_args(argv)
    if args.measure:
        if args.cprofile:
            import cProfile
            import pstats
            profiler = cProfile.Profile()
            profiler.enable()
            result = _measure(args.measure, args.file, args.sample_mb)
            profiler.disable()
            print(result)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(30)
            return 0
        print(json.dumps(_measure(args.measure, args.file, args.sample_mb)))
        return 0
    path = args.file
    if not path.exists():
        print(f"no log {path}: run `python bench/make_large_log.py` first", file=sys.stderr)
        return 0
    if args.profile:
        subprocess.run([sys.executable, __file__, str(path), "--measure", args.profile, "--cprofile",
                        "--sample-mb", str(args.sample_mb)], check=False)
        return 0
    with open(path, "rb") as fh:  # warm the page cache in pieces (keep this parent small)
        while fh.read(1 << 20):
            pass
    groups = args.only.split(",")
    summary: dict = {"file": path.name}
    print(f"== {path.name}: {path.stat().st_size / 2**20:.1f} MiB on disk")
    if "dsh" in groups:
        for chunk in CHUNKS:
            pure = _run(f"dsh@{chunk}", path, args.sample_mb, args.repeat)
            if "error" in pure:
                print(_line(pure))
                continue
            n = pure["events"]
            rate = n / pure["cpu"]
            e2e = n / (pure["cpu"] + pure["decode_cpu"])
            ok = "PASS" if rate >= TARGET_EVENTS_PER_S else "FAIL"
            print(_line(pure, f"  {n} events, {pure['tokens']} tokens: pricing {rate / 1e6:.2f}M "
                        f"events/s CPU ({n / pure['wall'] / 1e6:.2f}M wall) {ok} (target >= "
                        f"{TARGET_EVENTS_PER_S / 1e6:.0f}M); decoding {pure['decode_cpu']:.2f} s "
                        f"CPU {pure['decode_wall']:.2f} s wall; decode + price {e2e / 1e6:.2f}M "
                        f"events/s CPU; load {pure['load_cpu']:.2f} s CPU"))
            summary[f"dsh@{chunk}_events_per_s_cpu"] = rate
            summary[f"dsh@{chunk}_events_per_s_wall"] = n / pure["wall"]
            summary[f"dsh@{chunk}_decode_price_events_per_s_cpu"] = e2e
        for kind in ("dsh-meter", "dsh-logtokens", "dsh-passes"):
            r = _run(kind, path, args.sample_mb, args.repeat)
            if "error" in r:
                print(_line(r))
                continue
            if kind == "dsh-passes":
                parts = ", ".join(f"{k} {c:.2f} s CPU {w:.2f} s wall" for k, (c, w) in r["passes"].items())
                print(_line(r, f"  {parts}; {r['nodes']} surface events, final surface "
                            f"{r['final_total']} tokens, {r['samples']} usage samples"))
                summary.update({f"passes_{k}_cpu": c for k, (c, _) in r["passes"].items()})
                continue
            rate = r["events"] / r["cpu"]
            print(_line(r, f"  {r['tokens']} tokens: {rate / 1e6:.2f}M events/s CPU "
                        f"({r['events'] / r['wall'] / 1e6:.2f}M wall), decoding included"))
            summary[f"{kind}_events_per_s_cpu"] = rate
    if "tokenizers" in groups:
        sample = sample_path(path, args.sample_mb)
        if not sample.exists() or sample.stat().st_mtime < path.stat().st_mtime:
            info = _run("sample", path, args.sample_mb)
            if "error" in info:
                print(f"  sample ERROR: {info['error']}")
                return 0
        _, events = _read_sample(path, args.sample_mb)  # small: a few MB of events
        print(f"  sample: {len(events)} message events, {sample.stat().st_size / 2**20:.1f} MiB "
              f"({sample.name})")
        del events
        for name in args.tokenizers.split(","):
            rows = {how: _run(f"{name}-{how}", path, args.sample_mb, args.repeat)
                    for how in ("meter", "direct", "pieces", "distinct")}
            for r in rows.values():
                extra = ""
                if "tokens" in r:
                    extra = f"  {r['tokens']} tokens"
                if "distinct" in r:
                    extra += f", {r['distinct']} distinct texts, {r['distinct_chars'] / 1e6:.1f} M chars"
                elif "chars" in r:
                    extra += f", {r['pieces']} texts, {r['chars'] / 1e6:.1f} M chars" \
                             f" ({r['chars'] / r['cpu'] / 1e6:.2f} M chars/s CPU)"
                print(_line(r, extra))
            meter, direct, pieces = rows["meter"], rows["direct"], rows["pieces"]
            distinct = rows["distinct"]
            if all("cpu" in r for r in rows.values()):
                ratio = meter["cpu"] / direct["cpu"]
                ok = "PASS" if ratio <= TARGET_TOKENIZER_RATIO else "FAIL"
                print(f"    {name}: meter / direct = {ratio:.2f}x CPU, "
                      f"{meter['wall'] / direct['wall']:.2f}x wall (target <= "
                      f"{TARGET_TOKENIZER_RATIO}x) {ok}; meter / per-text = "
                      f"{meter['cpu'] / pieces['cpu']:.2f}x CPU; meter / distinct = "
                      f"{meter['cpu'] / distinct['cpu']:.2f}x CPU; per-text / direct = "
                      f"{pieces['cpu'] / direct['cpu']:.2f}x CPU")
                summary[f"{name}_meter_vs_direct_cpu"] = ratio
                summary[f"{name}_meter_vs_direct_wall"] = meter["wall"] / direct["wall"]
                summary[f"{name}_meter_vs_pieces_cpu"] = meter["cpu"] / pieces["cpu"]
                summary[f"{name}_meter_vs_distinct_cpu"] = meter["cpu"] / distinct["cpu"]
            if args.full:
                r = _run(f"{name}-log", path, args.sample_mb)
                if "error" in r:
                    print(_line(r))
                else:
                    print(_line(r, f"  {r['tokens']} tokens over {r['events']} events "
                                f"(whole lazy log, decoding included)"))
                    summary[f"{name}_log_cpu"] = r["cpu"]
    print("  " + json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
