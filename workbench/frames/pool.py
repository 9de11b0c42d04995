"""The per-session parallel map under `load_sessions` and the store export. Layer: frames.

`map_sessions(fn, tasks)` calls ``fn(*task)`` once per task (a tuple whose first item is the
path of a log) and yields ``(index, result)`` as results arrive, on one of three runners:

* in this process (one worker, or a small amount of work: starting a worker costs more than
  reading a few small logs);
* a local pool of *spawned* worker processes (the default engine, ``"pandas"``);
* ``dask.distributed`` (``engine="dask"``): the `Client` the caller passes (any cluster), or a
  temporary `LocalCluster` of worker processes, one thread each.

How many workers (`plan_workers`): never more than the cores, the logs, the work (about
`BYTES_PER_WORKER` of log per worker) and the memory available divided by what the largest log
needs (`memory_per_worker`: about 1 GiB for a 1.3M-event, 700 MB raw log).

Invariants: a failed runner never looks like a failed log. Spawned workers re-import the main
script; a script that calls `load_sessions` at its top level without an
``if __name__ == "__main__":`` guard would make every worker re-run it and die, so such a call
(`main_guarded` reads the script's syntax tree) runs in this process, with a warning. If a pool
breaks anyway (a worker killed, a start-up failure) the logs it had not finished run in this
process, with a warning; the dask runner has no such fallback and raises, since its caller chose
the cluster.
"""
from __future__ import annotations

import ast
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from workbench.errors import InvalidArgument

BYTES_PER_WORKER = 4 << 20
"""Work (plaintext log bytes, plus `SESSION_BYTES` per log) that makes starting one more worker
worth it: a worker takes seconds to start (imports, tokenizers) and builds every frame of about
200-400 KB of log per second."""
SESSION_BYTES = 32 << 10
"""The fixed cost of one log (open, header, empty frames), in bytes of work."""
ZSTD_RATIO = 4
"""Plaintext per compressed byte assumed for ``.zstd`` logs (DSH's frames compress ~4x)."""
MEMORY_PER_RAW_BYTE = 1.5
"""Peak worker memory per plaintext byte of a log (1.3M events, 700 MB raw: about 1 GiB)."""
MEMORY_FLOOR = 384 << 20
"""A worker's memory with nothing loaded (interpreter, pandas, pyarrow, workbench)."""


def plaintext_bytes(path: str) -> int:
    """Estimated plaintext size of the log at `path` (0 when it cannot be statted)."""
    try:
        size = os.stat(path).st_size
    except OSError:
        return 0
    return size * ZSTD_RATIO if path.endswith(".zstd") else size


def memory_per_worker(sizes: Sequence[int]) -> int:
    """Bytes one worker needs for the largest of `sizes` (plaintext bytes per log)."""
    return MEMORY_FLOOR + int(MEMORY_PER_RAW_BYTE * max(sizes, default=0))


def _available_memory() -> int:
    import psutil
    return int(psutil.virtual_memory().available)


def plan_workers(sizes: Sequence[int], workers: int | None = None) -> int:
    """Worker count for logs of `sizes` plaintext bytes: `workers` if given (at most one per
    log), else bounded by cores, work and memory (module doc). 1 means in this process."""
    if not sizes:
        return 1
    if workers is not None:
        return max(1, min(int(workers), len(sizes)))
    by_work = -(-(sum(sizes) + SESSION_BYTES * len(sizes)) // BYTES_PER_WORKER)
    by_memory = _available_memory() // memory_per_worker(sizes)
    return max(1, min(os.cpu_count() or 1, len(sizes), by_work, by_memory))


def main_guarded() -> bool:
    """False when the current call runs at the top level of a main script (``python x.py`` or
    ``python -m x``) outside an ``if __name__ == "__main__":`` block: spawned workers would
    re-run it. Notebooks, ``python -c`` and calls from guarded code are fine."""
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    if main is None or not isinstance(path, str):
        return True
    frame = sys._getframe(1)
    while frame is not None and not (frame.f_globals is main.__dict__
                                     and frame.f_code.co_name == "<module>"):
        frame = frame.f_back
    if frame is None:
        return True
    try:
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read())
    except (OSError, SyntaxError, ValueError):
        return False
    line = frame.f_lineno
    return any(isinstance(node, ast.If) and _is_main_test(node.test)
               and node.lineno <= line <= (node.end_lineno or node.lineno)
               for node in ast.walk(tree))


def _is_main_test(test: ast.expr) -> bool:
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq)):
        return False
    sides = [test.left, test.comparators[0]]
    names = [s for s in sides if isinstance(s, ast.Name) and s.id == "__name__"]
    consts = [s for s in sides if isinstance(s, ast.Constant) and s.value == "__main__"]
    return len(names) == 1 and len(consts) == 1


def check_workers(workers: Any) -> None:
    """`workers` is None (chosen by `plan_workers`) or an integer of at least 1, else
    `InvalidArgument` (0 or a negative count was read as 1)."""
    if workers is not None and (not isinstance(workers, int) or isinstance(workers, bool)
                                or workers < 1):
        raise InvalidArgument(f"workers must be an integer of at least 1, not {workers!r}")


def map_sessions(fn: Callable[..., Any], tasks: Sequence[tuple], *,
                 engine: str = "pandas", workers: int | None = None, client: Any = None,
                 progress: bool = True, desc: str = "sessions") -> Iterator[tuple[int, Any]]:
    """Yield ``(i, fn(*tasks[i]))`` for every task, in completion order (module doc)."""
    from tqdm.auto import tqdm
    check_workers(workers)
    sizes = [plaintext_bytes(t[0]) for t in tasks]
    bar = tqdm(total=len(tasks), desc=desc, unit="session", disable=not progress)
    try:
        if engine == "dask":
            runner = _dask(fn, tasks, sizes, workers, client)
        elif engine == "pandas":
            n = plan_workers(sizes, workers)
            if n > 1 and not main_guarded():
                warnings.warn("workbench: reading sessions in this process: the calling script "
                              "runs load_sessions at its top level without an `if __name__ == "
                              "'__main__':` guard, so worker processes cannot start",
                              RuntimeWarning, stacklevel=3)
                n = 1
            runner = _local(fn, tasks, sizes, n)
        else:
            msg = f"unknown engine {engine!r}; use 'pandas' or 'dask'"
            raise InvalidArgument(msg)
        for item in runner:
            bar.update(1)
            yield item
    finally:
        bar.close()


def _local(fn: Callable[..., Any], tasks: Sequence[tuple], sizes: Sequence[int], n: int) -> Iterator[tuple[int, Any]]:
    pending = set(range(len(tasks)))
    if n > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool
        context = multiprocessing.get_context("spawn")
        order = sorted(pending, key=lambda i: -sizes[i])  # largest first: shorter tail
        try:
            with ProcessPoolExecutor(max_workers=n, mp_context=context) as pool:
                futures = {pool.submit(fn, *tasks[i]): i for i in order}
                for future in as_completed(futures):
                    i = futures[future]
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        raise
                    except Exception:  # noqa: BLE001 - retried below, where it can raise
                        continue
                    pending.discard(i)
                    yield i, result
        except (BrokenProcessPool, OSError) as exc:
            warnings.warn(f"workbench: the worker pool failed ({type(exc).__name__}: {exc}); "
                          f"reading the {len(pending)} remaining session(s) in this process",
                          RuntimeWarning, stacklevel=4)
    for i in sorted(pending):
        yield i, fn(*tasks[i])


def _dask(fn: Callable[..., Any], tasks: Sequence[tuple], sizes: Sequence[int],
          workers: int | None, client: Any) -> Iterator[tuple[int, Any]]:
    from distributed import Client, LocalCluster, as_completed
    cluster = None
    if client is None:
        if not main_guarded():
            msg = ("engine='dask' starts a LocalCluster of worker processes, which needs the "
                   "calling script's top level under `if __name__ == '__main__':` (or pass "
                   "client=Client(...))")
            raise InvalidArgument(msg)
        n = plan_workers(sizes, workers)
        cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                               memory_limit=memory_per_worker(sizes), dashboard_address=None)
        client = Client(cluster)
    try:
        order = sorted(range(len(tasks)), key=lambda i: -sizes[i])
        index = {client.submit(fn, *tasks[i], pure=False): i for i in order}
        for future, result in as_completed(list(index), with_results=True):
            yield index[future], result
            future.release()
    finally:
        if cluster is not None:
            client.close()
            cluster.close()
