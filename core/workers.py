"""CPU-bound batch work (spaCy, YAKE) spread over forked worker processes.

A pool is forked once per process and kept: the children inherit the loaded models for free, and
forking a process that holds them costs about a second, too much to pay per call. A process that
may not fork (a django-q2 worker is daemonic) runs the batches itself, in order.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

_pool: ProcessPoolExecutor | None = None
_pool_size = 0
_pool_prepared: set = set()  # the `prepare` functions run before the pool was forked
_pool_lock = threading.Lock()


def can_fork() -> bool:
    return not multiprocessing.current_process().daemon and "fork" in multiprocessing.get_all_start_methods()


def processes() -> int:
    """KYBERNESIS_WORKER_PROCESSES, or one per core (at most 4) when it is 0."""
    from django.conf import settings

    configured = settings.KYBERNESIS_WORKER_PROCESSES
    return configured if configured > 0 else max(1, min(os.cpu_count() or 1, 4))


def _workers(size: int, prepare: Callable[[], object] | None) -> ProcessPoolExecutor:
    global _pool, _pool_size
    with _pool_lock:
        fresh = False
        if prepare is not None and prepare not in _pool_prepared:
            prepare()
            _pool_prepared.add(prepare)
            fresh = True
        if _pool is None or _pool_size != size or fresh:
            # (Re)fork after loading, so every child shares what the parent loaded.
            if _pool is not None:
                _pool.shutdown(wait=False, cancel_futures=True)
            _pool = ProcessPoolExecutor(max_workers=size, mp_context=multiprocessing.get_context("fork"))
            _pool_size = size
        return _pool


def shutdown(*, wait: bool = False) -> None:
    """Stop the worker pool (the next map_batches forks a new one).

    Forked workers hold copies of every file descriptor the parent had when they were forked; a
    parent that must see a pipe close (a test harness talking to a browser driver, say) stops them
    first."""
    global _pool
    with _pool_lock:
        if _pool is not None:
            _pool.shutdown(wait=wait, cancel_futures=True)
        _pool = None
        _pool_prepared.clear()


def map_batches(
    function: Callable,
    batches: Iterable[list],
    *,
    workers: int,
    min_items: int = 16,
    prepare: Callable[[], object] | None = None,
) -> Iterator:
    """function(batch) for each batch, yielded in order.

    With workers > 1, a process allowed to fork and at least `min_items` items in all, every batch
    goes to the worker pool at once: while the caller handles one result, the workers go on with
    the next batches. `prepare` (say, loading a model) runs once in this process before the pool is
    forked, so the children share its result. `function` must be importable by name (a module-level
    function or a partial of one); its results are pickled back.
    """
    batches = [list(batch) for batch in batches]
    if workers <= 1 or not can_fork() or sum(map(len, batches)) < min_items:
        for batch in batches:
            yield function(batch)
        return
    pool = _workers(workers, prepare)
    futures = [pool.submit(function, batch) for batch in batches]
    try:
        for future in futures:
            yield future.result()
    except BrokenProcessPool:
        shutdown()  # a worker died (killed, out of memory): the next call starts afresh
        raise
    finally:
        for future in futures:
            future.cancel()
