"""Micro-batching of concurrent embedding calls: one model call for the texts of every caller that
arrives while the model is busy (or within a short, bounded wait).

A web worker runs several request threads, and the model runs one call at a time per process
(memories.embedding). Without this, four concurrent single creates make four model calls in a
row, each paying the call's fixed cost. Here the first caller of a batch leads it: it waits at most
KYBERNESIS_EMBED_BATCH_WAIT_MS (default 2 ms; 0 for none) and then for the model to be free, while
later callers add their texts to the same batch; then it makes one call and hands every caller its
own rows. A lone caller on an idle model waits only the bounded wait. A batch closes early at
KYBERNESIS_EMBED_BATCH_MAX_TEXTS texts (default 256). An error in the call is raised in every
caller of that batch, so nothing is stored without its vectors.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from memories import embedding


class _Batch:
    __slots__ = ("closed", "done", "error", "texts", "vectors")

    def __init__(self):
        self.texts: list[str] = []
        self.closed = False
        self.done = threading.Event()
        self.vectors: np.ndarray | None = None
        self.error: BaseException | None = None


_state_lock = threading.Lock()  # guards _open and a batch's texts/closed
_run_lock = threading.Lock()  # one batch at a time reaches the model; the next fills meanwhile
_open: _Batch | None = None
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def _forget_pool() -> None:
    global _pool
    _pool = None  # a forked child has none of its parent's threads


os.register_at_fork(after_in_child=_forget_pool)


def _settings() -> tuple[float, int]:
    from django.conf import settings

    wait_ms = getattr(settings, "KYBERNESIS_EMBED_BATCH_WAIT_MS", 2)
    max_texts = getattr(settings, "KYBERNESIS_EMBED_BATCH_MAX_TEXTS", 256)
    return max(0.0, min(float(wait_ms), 50.0)) / 1000, max(1, int(max_texts))


def _join(texts: Sequence[str], max_texts: int) -> tuple[_Batch, int, bool]:
    """Add texts to the open batch (or open one); returns the batch, where they start, and whether
    this caller leads it."""
    global _open
    with _state_lock:
        batch, leader = _open, False
        if batch is None or batch.closed or (batch.texts and len(batch.texts) + len(texts) > max_texts):
            if batch is not None:
                batch.closed = True
            batch = _open = _Batch()
            leader = True
        start = len(batch.texts)
        batch.texts.extend(texts)
        if len(batch.texts) >= max_texts:
            batch.closed = True
            _open = None
        return batch, start, leader


def _close(batch: _Batch) -> None:
    global _open
    with _state_lock:
        batch.closed = True
        if _open is batch:
            _open = None


def _lead(batch: _Batch, wait_s: float) -> None:
    if wait_s:
        time.sleep(wait_s)
    with _run_lock:  # while the previous batch runs, this one keeps taking callers
        _close(batch)
        try:
            batch.vectors = embedding.embed_texts(batch.texts)
        except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
            batch.error = exc
        finally:
            batch.done.set()


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    """Like memories.embedding.embed_texts, but shares one model call with concurrent callers."""
    texts = list(texts)
    if not texts:
        return embedding.embed_texts([])
    wait_s, max_texts = _settings()
    batch, start, leader = _join(texts, max_texts)
    if leader:
        _lead(batch, wait_s)
    else:
        batch.done.wait()
    if batch.error is not None:
        raise batch.error
    return batch.vectors[start : start + len(texts)]


def embed_texts_async(texts: Sequence[str]) -> Future:
    """embed_texts on a background thread: the caller does its own work meanwhile (the model runs
    outside the GIL, so pure-Python work such as keyword extraction overlaps it) and then takes
    `.result()`, which raises the model's error if it failed."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="embed")
        return _pool.submit(embed_texts, list(texts))
