#!/usr/bin/env python3
"""Field-decoder benchmark: `python bench/bench_decoder.py [FILE] [--only KIND ...] [--exact]`.

Does decoding only the fields the load indexes beat the orjson parse floor, and does a faster
decoder make `workbench.load` faster end to end? On one log (default: the 1.3M-event v4 log of
`bench/make_large_log.py`, raw, from `/work/benchdata/` when present, else `bench/out/`), each
measurement in a fresh process, CPU time of that process (`time.process_time`; the machine is
shared) and its peak RSS; the decode loops run with the cyclic GC paused, as the loader's scan:

* ``floor``        — `orjson.loads` of every line, the value dropped (the parse floor);
* ``msgspec``      — `msgspec.json.Decoder().decode` of every line (generic: dicts and lists);
* ``msgspec-lines`` — `Decoder.decode_lines` over blocks of about 4 MiB (one call per block);
* ``orjson-array`` — `orjson.loads` of ``[line,line,...]`` per block of 4,096 lines (one call);
* ``struct-raw``   — a `msgspec.Struct` of the envelope (type, seq, time, surfaceOp,
  sourceEventSeqs) with ``data`` kept as raw JSON bytes (`msgspec.Raw`: payload decoded later);
* ``struct-index`` — a Struct of the fields a per-seq index reads up front (the envelope; data's
  turn, step, callId, compactionId; the message's role, id, source), the rest skipped;
* ``struct-then-data`` — ``struct-raw`` and then the generic decode of every ``data`` (what
  the load pays when its checks read every value anyway: index fields first, payload after);
* ``load``         — `workbench.load(FILE)` as it is (orjson in the scanner's batch loop);
* ``load-msgspec`` — the same with the scanner's batch loop decoding with msgspec (everything
  else unchanged: a measurement, not an adopted path).

`--exact` checks each generic decoder against the loader's reader (`workbench.io.jsjson.loads`)
and against the stdlib exact path of JavaScript's `JSON.parse` rules (`jsjson.slow_loads`) on
hand-made edge texts (negative zero, integers past 2**53 and 2**64, 1e400, duplicate keys,
lone surrogates, invalid UTF-8, deep nesting) and on every line of the conformance vectors
(`../shared/conformance*/**/*.jsonl`): a decoder is usable in the fast path only if it either
returns the same value (same types, the sign of zero included) or refuses the text (the exact
slow path then reads it).
"""
import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

from _common import peak_rss_mib, run_fresh

ROOT = Path(__file__).resolve().parent.parent
DATA = Path("/work/benchdata")
OUT = ROOT / "bench" / "out"
SHARED = ROOT.parent / "shared"
KINDS = ("floor", "msgspec", "msgspec-lines", "orjson-array", "struct-raw", "struct-index",
         "struct-then-data", "load", "load-msgspec")
BLOCK_BYTES = 4 << 20
BLOCK_LINES = 4096


def default_file() -> Path:
    base = DATA if (DATA / "large-v4.jsonl").exists() else OUT
    return base / "large-v4.jsonl"


def _structs():
    import msgspec
    from msgspec import Raw, Struct, UNSET, UnsetType

    class Envelope(Struct):
        type: str
        seq: int
        time: float | int | None = None
        surfaceOp: Raw | UnsetType = UNSET
        sourceEventSeqs: Raw | UnsetType = UNSET
        data: Raw | UnsetType = UNSET

    class Message(Struct):
        role: str | None = None
        id: str | None = None
        source: Raw | UnsetType = UNSET

    class Data(Struct):
        turn: int | None = None
        step: int | None = None
        callId: str | None = None
        compactionId: str | None = None
        message: Message | None = None
        role: str | None = None
        id: str | None = None
        source: Raw | UnsetType = UNSET

    class Indexed(Struct):
        type: str
        seq: int
        time: float | int | None = None
        surfaceOp: Raw | UnsetType = UNSET
        sourceEventSeqs: Raw | UnsetType = UNSET
        data: Data | None = None

    return msgspec, Envelope, Indexed


def _body(path: Path) -> bytes:
    with open(path, "rb") as fh:
        fh.readline()   # the header record
        return fh.read()


def _blocks(data: bytes, size: int):
    start = 0
    while start < len(data):
        end = data.find(b"\n", min(start + size, len(data) - 1))
        end = len(data) if end == -1 else end + 1
        yield data[start:end]
        start = end


def measure(kind: str, path: Path) -> dict:
    sys.path.insert(0, os.environ.get("BENCH_SRC") or str(ROOT))
    result: dict = {"kind": kind, "file": path.name}
    if kind in ("load", "load-msgspec"):
        import workbench
        if kind == "load-msgspec":
            import msgspec
            from types import SimpleNamespace
            from workbench.io import scan
            scan.orjson = SimpleNamespace(loads=msgspec.json.Decoder().decode,
                                          JSONDecodeError=msgspec.DecodeError)
        c0 = time.process_time()
        session = workbench.load(path)
        result["cpu"] = time.process_time() - c0
        result["events"] = len(session)
        result["peak_rss_mib"] = peak_rss_mib()
        return result
    gc.disable()   # as the loader does while it scans
    data = _body(path)
    lines = data.split(b"\n")
    if not lines[-1]:
        lines.pop()
    count = 0
    c0 = time.process_time()
    if kind == "floor":
        import orjson
        loads = orjson.loads
        for line in lines:
            loads(line)
            count += 1
    elif kind == "msgspec":
        import msgspec
        decode = msgspec.json.Decoder().decode
        for line in lines:
            decode(line)
            count += 1
    elif kind == "msgspec-lines":
        import msgspec
        decode_lines = msgspec.json.Decoder().decode_lines
        for block in _blocks(data, BLOCK_BYTES):
            count += len(decode_lines(block))
    elif kind == "orjson-array":
        import orjson
        for i in range(0, len(lines), BLOCK_LINES):
            count += len(orjson.loads(b"[" + b",".join(lines[i:i + BLOCK_LINES]) + b"]"))
    elif kind in ("struct-raw", "struct-index"):
        msgspec, envelope, indexed = _structs()
        decode = msgspec.json.Decoder(envelope if kind == "struct-raw" else indexed).decode
        for line in lines:
            decode(line)
            count += 1
    elif kind == "struct-then-data":
        msgspec, envelope, _ = _structs()
        decode, generic = msgspec.json.Decoder(envelope).decode, msgspec.json.Decoder().decode
        for line in lines:
            data = decode(line).data
            if data is not msgspec.UNSET:
                generic(data)
            count += 1
    else:
        raise SystemExit(f"unknown kind {kind}")
    result["cpu"] = time.process_time() - c0
    result["lines"] = count
    result["peak_rss_mib"] = peak_rss_mib()
    return result


# -- exactness ---------------------------------------------------------------------------------

EDGE_TEXTS = [b"-0", b"[-0]", b'{"a":-0}', b"-0.0", b"0", b"9007199254740993",
              b"18446744073709551616", b"123456789012345678901234567890", b"1e400", b"-1e400",
              b"1.0", b"1E2", b"5e-324", b'{"a":1,"a":2}', b'{"a":{"b":1},"a":3}', b'"\\ud800"',
              b'"\\udc00x"', b'"\\ud83d\\ude00"', b'"\xff"', b'"\xed\xa0\x80"', b"NaN",
              b"Infinity", b'"\\u0000"', b"[" * 2000 + b"]" * 2000, b" 1 ", b"1 2", b"\xef\xbb\xbf1"]


def _typed(value):
    """A comparable form of a parsed value: types kept (1 vs 1.0 vs True), the sign of zero."""
    if isinstance(value, bool) or value is None:
        return ("const", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", repr(value))
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(_typed(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple((k, _typed(v)) for k, v in value.items()))
    return ("other", repr(value))


def _outcome(decode, text: bytes):
    if decode is not None and _NEG_ZERO.search(text):
        return "refused", None   # the scanner sends it to the exact path (`jsjson.loads`)
    try:
        return "value", _typed(decode(text))
    except RecursionError:
        return "refused", None
    except Exception:  # noqa: BLE001 - any refusal sends the line to the exact path
        return "refused", None


def _outcome_exact(decode, text: bytes):
    try:
        return "value", _typed(decode(text))
    except Exception:  # noqa: BLE001 - not JSON for JSON.parse either
        return "refused", None


_NEG_ZERO = None


def exactness() -> dict:
    sys.path.insert(0, str(ROOT))
    import msgspec
    import orjson
    from workbench.io import jsjson
    global _NEG_ZERO
    from workbench.io.jsjson import INT_NEG_ZERO as _NEG_ZERO
    decoders = {"orjson": orjson.loads, "msgspec": msgspec.json.Decoder().decode}
    texts = list(EDGE_TEXTS)
    for folder in ("conformance", "conformance-v4"):
        for path in sorted((SHARED / folder).rglob("*.jsonl")):
            texts += [line.rstrip(b"\r") for line in path.read_bytes().split(b"\n") if line]
    report: dict = {"texts": len(texts)}
    references = {"the loader's reader": jsjson.loads,
                  "JSON.parse (stdlib exact path)": lambda t: jsjson.slow_loads(
                      t.decode("utf-8", "replace"))}
    for (ref_name, reference), (name, decode) in (
            (r, d) for r in references.items() for d in decoders.items()):
        same = refused = 0
        wrong: list[str] = []
        for text in texts:
            want = _outcome_exact(reference, text)
            got = _outcome(decode, text)
            if got[0] == "refused":
                refused += 1
            elif want == got:
                same += 1
            else:
                wrong.append(text[:200].decode("utf-8", "replace"))
        report[f"{name} vs {ref_name}"] = {"same": same, "refused": refused, "differs": len(wrong),
                        "differs_e.g.": wrong[:8]}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path)
    parser.add_argument("--only", action="append", choices=KINDS)
    parser.add_argument("--exact", action="store_true", help="only the exactness check")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(measure(args.child[0], Path(args.child[1]))))
        return 0
    if args.exact:
        print(json.dumps(exactness(), indent=1, ensure_ascii=False))
        return 0
    path = args.file or default_file()
    if not path.exists():
        print(f"{path} is missing: run `python bench/make_large_log.py` first", file=sys.stderr)
        return 2
    results = []
    for kind in args.only or list(KINDS):
        res = run_fresh(__file__, "--child", kind, str(path))
        results.append(res)
        print(json.dumps(res), flush=True)
    floor = next((r["cpu"] for r in results if r["kind"] == "floor"), None)
    print(f"\n### {path.name}\n\n| decoder | CPU s | / floor | peak RSS MiB |\n|---|---:|---:|---:|")
    for r in results:
        ratio = f"{r['cpu'] / floor:.2f}x" if floor else ""
        print(f"| {r['kind']} | {r['cpu']:.2f} | {ratio} | {r['peak_rss_mib']:.0f} |")
    if args.json_out:
        args.json_out.write_text("\n".join(json.dumps(r) for r in results) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
