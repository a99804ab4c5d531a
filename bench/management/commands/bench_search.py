"""Benchmark: hybrid_search latency over a synthetic corpus of N chunks; last line is JSON.

The corpus (random unit vectors, text drawn from a realistic vocabulary) is built once in a bench
user and reused; the model is not needed for it. Queries use fixed query vectors, so the latency
excludes embedding, which is measured and reported on its own.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import time

import numpy as np
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.utils import timezone

from bench import bulk as bulk_mod
from bench import vector_search as vector_search_option
from bench.synthetic import sentence
from memories import embedding
from memories.models import Memory, MemoryChunk
from memories.search import hybrid_search, lexical
from memories.services import memories_restore_from_trash, memories_trash

BENCH_USER = "bench-search"
CHUNKS_PER_MEMORY = bulk_mod.CHUNKS_PER_MEMORY
BATCH = 2000
BULK_FROM = 200_000  # corpora this large always take the bulk path


def _pct(timings: list[float], p: float) -> float:
    ordered = sorted(timings)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


def _timed_queries(owner, texts, vectors) -> tuple[list[float], set[int]]:
    """Each query's latency in ms (after ten to warm the caches), and every memory id found."""
    for text, vector in zip(texts[:10], vectors[:10], strict=True):
        hybrid_search(owner.pk, text, limit=10, query_vector=vector)
    timings, found = [], set()
    for text, vector in zip(texts, vectors, strict=True):
        started = time.perf_counter()
        response = hybrid_search(owner.pk, text, limit=10, query_vector=vector)
        timings.append((time.perf_counter() - started) * 1000)
        found.update(r.memory_id for r in response.results)
    return timings, found


def _trash_run(owner, texts, vectors, *, share: float, rng: random.Random, before: list[float]) -> dict:
    """The same queries with `share` of the memories in the trash (moved there by the service, then
    restored, then run once more): their latency beside the runs before and after, and how many results
    were trashed memories (0)."""
    ids = list(Memory.objects.filter(owner=owner).values_list("pk", flat=True))
    chosen = rng.sample(ids, max(1, int(len(ids) * min(share, 1.0))))
    started = time.perf_counter()
    for start in range(0, len(chosen), 500):
        memories_trash(owner_id=owner.pk, memory_ids=chosen[start : start + 500])
    trash_s = time.perf_counter() - started
    try:
        timings, found = _timed_queries(owner, texts, vectors)
    finally:
        started = time.perf_counter()
        for start in range(0, len(chosen), 500):
            memories_restore_from_trash(owner_id=owner.pk, memory_ids=chosen[start : start + 500])
        restore_s = time.perf_counter() - started
    # Once more with the trash empty again, so a drift of the shared machine shows beside the ratio.
    after, _ = _timed_queries(owner, texts, vectors)
    return {
        "share": share,
        "trashed_memories": len(chosen),
        "p50_ms": _pct(timings, 50),
        "p95_ms": _pct(timings, 95),
        "p99_ms": _pct(timings, 99),
        "p50_ratio": round(_pct(timings, 50) / max(_pct(before, 50), 1e-9), 3),
        "p95_ratio": round(_pct(timings, 95) / max(_pct(before, 95), 1e-9), 3),
        "after_restore_p50_ms": _pct(after, 50),
        "after_restore_p95_ms": _pct(after, 95),
        "trashed_in_results": len(found & set(chosen)),
        "trash_s": round(trash_s, 2),
        "restore_s": round(restore_s, 2),
    }


class Command(BaseCommand):
    help = (
        "p50/p95/p99 of hybrid_search at N chunks (built once, reused). --bulk (automatic from "
        f"{BULK_FROM:,} chunks) loads the corpus with COPY first and builds the indexes afterwards, in one "
        "transaction that drops the HNSW, GIN and lexical indexes and re-creates them from their own "
        "definitions; it locks the chunk table for the whole build, so run it on a benchmark database only."
    )

    def add_arguments(self, parser):
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--queries", type=int, default=500)
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--rebuild", action="store_true")
        parser.add_argument(
            "--user", default=BENCH_USER, help="the bench user (one per corpus size keeps each corpus built)"
        )
        parser.add_argument(
            "--bulk",
            action="store_true",
            help=f"load first, index afterwards (automatic from {BULK_FROM:,} chunks; benchmark database only: "
            "it locks the chunk table while it runs)",
        )
        parser.add_argument(
            "--trash-share",
            type=float,
            default=0.0,
            help="after the run, move this share of the memories to the trash and run the same queries again "
            "(then restore them): the cost of leaving the trash out, measured in one run",
        )
        vector_search_option.add_argument(parser)

    def handle(
        self,
        *args,
        chunks: int,
        queries: int,
        seed: int,
        rebuild: bool,
        user: str,
        vector_search: str,
        bulk: bool = False,
        trash_share: float = 0.0,
        **options,
    ):
        if chunks < 1:
            raise CommandError("--chunks must be at least 1")
        vector_search_option.apply(vector_search)
        bulk_mod.index_definitions()  # the production indexes are all there (fails loudly if not)
        rng = random.Random(seed)
        owner, _ = get_user_model().objects.get_or_create(username=user, defaults={"email": f"{user}@localhost"})
        have = MemoryChunk.objects.filter(owner=owner).count()
        build = None
        if rebuild or have != chunks:
            if bulk or chunks >= BULK_FROM:
                build = bulk_mod.bulk_build(owner, chunks, rng, progress=self.stderr.write)
            else:
                Memory.all_objects.filter(owner=owner).delete()
                started = time.perf_counter()
                self._build(owner, chunks, rng)
                build = {"mode": "incremental", "build_s": round(time.perf_counter() - started, 1)}

        np_rng = np.random.default_rng(seed)
        sample = list(MemoryChunk.objects.filter(owner=owner).order_by("?").values_list("embedding", flat=True)[:64])
        texts = [" ".join(sentence(rng).split()[: rng.randint(2, 6)]) for _ in range(queries)]
        vectors = []
        for _ in range(queries):
            # A query near a real chunk (as real queries are), not a uniformly random point.
            base = np.asarray(sample[rng.randrange(len(sample))]) + np_rng.normal(0, 0.05, 384)
            vectors.append((base / np.linalg.norm(base)).astype(np.float32))

        timings, _ = _timed_queries(owner, texts, vectors)
        trash = _trash_run(owner, texts, vectors, share=trash_share, rng=rng, before=timings) if trash_share else None

        embedding.embed_query("warm-up")
        embed_times = []
        for text in texts[:50]:
            started = time.perf_counter()
            embedding.embed_query(text, cache=False)
            embed_times.append((time.perf_counter() - started) * 1000)

        self.stdout.write(
            json.dumps(
                {
                    "chunks": MemoryChunk.objects.filter(owner=owner).count(),
                    "p50_ms": _pct(timings, 50),
                    "p95_ms": _pct(timings, 95),
                    "p99_ms": _pct(timings, 99),
                    "embed_query_ms": round(statistics.median(embed_times), 2),
                    "queries": len(timings),
                    "vector_search": vector_search_option.used_for(owner.pk),
                    "load_average": [round(x, 2) for x in os.getloadavg()],
                    "build": build,
                    **({"trash": trash} if trash else {}),
                }
            )
        )

    def _build(self, owner, chunks: int, rng: random.Random) -> None:
        np_rng = np.random.default_rng(rng.randrange(2**32))
        now = timezone.now()
        built = 0
        while built < chunks:
            n = min(BATCH, chunks - built)
            n_memories = -(-n // CHUNKS_PER_MEMORY)
            with transaction.atomic():
                memories = Memory.objects.bulk_create(
                    [
                        Memory(
                            owner=owner,
                            title=sentence(rng)[:80],
                            content="(synthetic benchmark memory)",
                            content_hash=hashlib.sha256(f"{built}-{i}".encode()).hexdigest(),
                            auto_tags=[{"tag": "upload", "confidence": 1.0}],
                            tags=["upload"],
                            created_at=now,
                            updated_at=now,
                        )
                        for i in range(n_memories)
                    ]
                )
                vectors = np_rng.normal(size=(n, 384)).astype(np.float32)
                vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
                with (
                    connection.cursor() as cursor,
                    cursor.copy(
                        "COPY memories_memorychunk (owner_id, memory_id, position, text, char_start, char_end, "
                        "text_hash, embedding, embedding_model, tier) FROM STDIN"
                    ) as copy,
                ):
                    for i in range(n):
                        text = " ".join(sentence(rng) for _ in range(rng.randint(4, 8)))
                        copy.write_row(
                            (
                                owner.pk,
                                memories[i // CHUNKS_PER_MEMORY].pk,
                                i % CHUNKS_PER_MEMORY,
                                text,
                                0,
                                len(text),
                                hashlib.sha256(text.encode()).hexdigest(),
                                "[" + ",".join(f"{x:.6f}" for x in vectors[i]) + "]",
                                embedding.model_name(),
                                "hot",
                            )
                        )
                lexical.index_memories(owner_id=owner.pk, memory_ids=[m.pk for m in memories])
            built += n
            self.stderr.write(f"\rbuilt {built}/{chunks} chunks", ending="")
        self.stderr.write("")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memorychunk; ANALYZE memories_chunkterm; ANALYZE memories_memory")
