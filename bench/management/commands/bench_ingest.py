"""Benchmark: ingest N synthetic ~3 KB documents through memory_create; last line is JSON.

overhead_ratio compares the pipeline with the model alone called the same way (once per
document), so it measures what chunking, hashing, the transaction and the inserts add.
batched_overhead_ratio compares it with the model's best case (all chunks in one call).

--concurrency N (default 2) ingests from N threads, as N clients of a web worker do: one
document's database writes overlap the next one's embedding, and creates that arrive while the
model is busy share one model call (memories.embedding_batcher). --concurrency 1 is one by one.
"""

from __future__ import annotations

import contextlib
import json
import random
import threading
import time

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import connections

from bench.synthetic import document
from memories import auto_tags, embedding
from memories.models import Memory, MemoryChunk
from memories.services import memory_create
from memories.services.history import history_off

BENCH_USER = "bench-ingest"


class Command(BaseCommand):
    help = "Time the ingestion pipeline against model.encode alone on the same chunks."

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=500)
        parser.add_argument("--doc-chars", type=int, default=3000)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark memories afterwards.")
        parser.add_argument("--concurrency", type=int, default=2, help="threads creating memories at once")
        parser.add_argument(
            "--history",
            choices=("on", "off"),
            default="on",
            help="off: keep no versions or activity (what history costs: compare, or run bench_history)",
        )

    def handle(
        self, *args, docs: int, doc_chars: int, seed: int, keep: bool, concurrency: int, history: str, **options
    ):
        rng = random.Random(seed)
        user, _ = get_user_model().objects.get_or_create(
            username=BENCH_USER, defaults={"email": "bench-ingest@localhost"}
        )
        Memory.objects.filter(owner=user).delete()
        texts = [document(rng, target_chars=doc_chars) for _ in range(docs)]

        # Load the model and the tagger and warm them up outside both timings, as a server's worker
        # does before its first request (kybernesis.gunicorn_conf.post_worker_init).
        embedding.embed_texts(["warm-up sentence for the benchmark"] * 4)
        auto_tags.warm_up()

        started = time.perf_counter()
        _ingest(user, texts, max(1, concurrency), history_on=history == "on")
        pipeline_s = time.perf_counter() - started

        per_memory: dict[int, list[str]] = {}
        for memory_id, text in (
            MemoryChunk.objects.filter(owner=user).order_by("memory_id", "position").values_list("memory_id", "text")
        ):
            per_memory.setdefault(memory_id, []).append(text)
        # The configured backend (embedding.backend_id()), exactly as the pipeline calls it.
        encode = {"batch_size": settings.KYBERNESIS_EMBED_BATCH_SIZE}

        # The model alone, called exactly as the pipeline calls it: once per document.
        started = time.perf_counter()
        for texts_of_one in per_memory.values():
            embedding.embed_texts(texts_of_one, **encode)
        encode_s = time.perf_counter() - started

        # The model's best case, for reference: every chunk in one call, sorted into full batches.
        chunk_texts = [text for texts_of_one in per_memory.values() for text in texts_of_one]
        started = time.perf_counter()
        embedding.embed_texts(chunk_texts, **encode)
        batched_s = time.perf_counter() - started

        if not keep:
            Memory.objects.filter(owner=user).delete()
        chunks = len(chunk_texts)
        result = {
            "backend": embedding.backend_id(),
            "docs": docs,
            "concurrency": max(1, concurrency),
            "history": history,
            "chunks": chunks,
            "seconds": round(pipeline_s, 3),
            "chunks_per_s": round(chunks / pipeline_s, 2) if pipeline_s else None,
            "encode_only_chunks_per_s": round(chunks / encode_s, 2) if encode_s else None,
            "overhead_ratio": round(pipeline_s / encode_s, 3) if encode_s else None,
            "encode_batched_chunks_per_s": round(chunks / batched_s, 2) if batched_s else None,
            "batched_overhead_ratio": round(pipeline_s / batched_s, 3) if batched_s else None,
        }
        self.stdout.write(json.dumps(result))


def _ingest(user, texts: list[str], concurrency: int, *, history_on: bool = True) -> None:
    # history_off() is per thread (the version triggers are ignored on the thread's own connection).
    scope = contextlib.nullcontext if history_on else history_off
    if concurrency == 1:
        with scope():
            for i, text in enumerate(texts):
                memory_create(owner=user, title=f"Benchmark document {i}", content=text)
        return
    pending = iter(enumerate(texts))
    lock = threading.Lock()
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            while not errors:
                with lock:
                    item = next(pending, None)
                if item is None:
                    return
                with scope():
                    memory_create(owner=user, title=f"Benchmark document {item[0]}", content=item[1])
        except BaseException as exc:  # noqa: BLE001 - raised again in the main thread
            errors.append(exc)
        finally:
            connections.close_all()  # this thread's own connection

    threads = [threading.Thread(target=worker) for _ in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
