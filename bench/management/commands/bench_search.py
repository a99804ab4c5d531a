"""Benchmark: hybrid search at N chunks, as the API runs it; last line is JSON.

The corpus (bench.synthetic.Corpus: clustered vectors shaped like the product's embeddings of real
text, words with a Zipf distribution) is built once in a bench user and reused; the model is not
needed for it. Queries are new points of the corpus' topics with words of those topics, given to
the search with their vectors, so the latency excludes the query embedding, which is measured and
reported on its own.

Beside the latency it reports the recall of the HNSW index against exact nearest neighbours (the
vector side the search statement reads, at each `--ef-search` value, with that value's latency), a
tiny owner's latency in the same database (a large owner must not slow the others down), the build's
phases, the disk taken and PostgreSQL's memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import time

import numpy as np
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction
from django.utils import timezone

from bench import bulk as bulk_mod
from bench import pgmemory
from bench import vector_search as vector_search_option
from bench.synthetic import Corpus
from memories import embedding
from memories.models import Memory, MemoryChunk
from memories.search import hybrid_search, lexical
from memories.search.statement import ef_search_for, owner_chunk_count
from memories.services import memories_restore_from_trash, memories_trash

BENCH_USER = "bench-search"
CHUNKS_PER_MEMORY = bulk_mod.CHUNKS_PER_MEMORY
BATCH = 2000
BULK_FROM = 200_000  # corpora this large always take the bulk path
RECALL_K = 10
QUERY_STREAM = 1  # the queries' random stream, apart from the corpus' own


def _pct(timings: list[float], p: float) -> float:
    ordered = sorted(timings)
    return round(ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))], 2)


def _search(owner, text, vector, group_by: str):
    """One search as the API's POST /search runs it (the service, the API's default grouping)."""
    return hybrid_search(owner.pk, text, limit=10, query_vector=vector, group_by=group_by)


def _timed_queries(owner, texts, vectors, group_by: str = "memory", warm: int = 10) -> tuple[list[float], set[int]]:
    """Each query's latency in ms (after `warm` of them to warm the caches), and every memory id found."""
    for text, vector in zip(texts[:warm], vectors[:warm], strict=True):
        _search(owner, text, vector, group_by)
    timings, found = [], set()
    for text, vector in zip(texts, vectors, strict=True):
        started = time.perf_counter()
        response = _search(owner, text, vector, group_by)
        timings.append((time.perf_counter() - started) * 1000)
        found.update(r.memory_id for r in response.results)
    return timings, found


def _latency(timings: list[float]) -> dict:
    return {"p50_ms": _pct(timings, 50), "p95_ms": _pct(timings, 95), "p99_ms": _pct(timings, 99)}


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
        **_latency(timings),
        "p50_ratio": round(_pct(timings, 50) / max(_pct(before, 50), 1e-9), 3),
        "p95_ratio": round(_pct(timings, 95) / max(_pct(before, 95), 1e-9), 3),
        "after_restore_p50_ms": _pct(after, 50),
        "after_restore_p95_ms": _pct(after, 95),
        "trashed_in_results": len(found & set(chosen)),
        "trash_s": round(trash_s, 2),
        "restore_s": round(restore_s, 2),
    }


def _recall(owner, texts, vectors, *, ef_values: list[int], recall_queries: int, hybrid_queries: int) -> dict:
    """Recall@10 of the HNSW index against exact nearest neighbours, and the search latency, at each
    ef_search; and how many of the hybrid search's top ten the index path shares with the exact path.

    The ground truth is computed in memory from every active vector of the owner, so it costs one
    read of the table, not one sequential scan per query."""
    started = time.perf_counter()
    ids, matrix = vector_search_option.active_vectors(owner.pk)
    sample = vectors[:recall_queries]
    truth = vector_search_option.exact_nearest(ids, matrix, sample, RECALL_K)
    del matrix
    truth_s = round(time.perf_counter() - started, 1)
    candidates = settings.KYBERNESIS_SEARCH_VECTOR_CANDIDATES
    sweep = []
    for ef in ef_values:
        found = [
            vector_search_option.index_nearest(owner.pk, v, k=RECALL_K, candidates=candidates, ef_search=ef)
            for v in sample
        ]
        with vector_search_option.overridden(
            KYBERNESIS_SEARCH_EF_SEARCH=ef, KYBERNESIS_SEARCH_CHUNKS_PER_EF=0, KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS=0
        ):
            timings, _ = _timed_queries(owner, texts, vectors)
        sweep.append(
            {
                "ef_search": max(ef, candidates),
                "recall_at_10": vector_search_option.recall_at(found, truth, RECALL_K),
                **_latency(timings),
            }
        )
    # The whole search both ways on a smaller sample (the exact path scans every chunk of the owner).
    shared = []
    for text, vector in zip(texts[:hybrid_queries], vectors[:hybrid_queries], strict=True):
        tops = []
        for bound in (0, 2**62):
            with vector_search_option.overridden(KYBERNESIS_SEARCH_EXACT_MAX_CHUNKS=bound):
                response = hybrid_search(owner.pk, text, limit=10, query_vector=vector, min_score=0.0)
            tops.append([r.chunk_id for r in response.results])
        index_top, exact_top = tops
        shared.append(len(set(index_top) & set(exact_top)) / max(1, len(exact_top)))
    return {
        "k": RECALL_K,
        "vector_candidates": candidates,
        "queries": len(sample),
        "ground_truth_s": truth_s,
        "ef_search": sweep,
        "hybrid_top10_overlap": round(float(np.mean(shared)), 4) if shared else None,
        "hybrid_queries": len(shared),
    }


class Command(BaseCommand):
    help = (
        "Hybrid search at N chunks (built once, reused): latency, recall of the HNSW index against exact "
        "search, a tiny owner's latency beside it, build phases, disk and PostgreSQL memory. --bulk (automatic "
        f"from {BULK_FROM:,} chunks) loads the corpus with COPY first and builds the indexes afterwards, in one "
        "transaction that drops the HNSW and lexical indexes and re-creates them from their own "
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
            "--tiny-chunks",
            type=int,
            default=200,
            help="chunks of a second, tiny owner in the same database, searched in the same run (0: none)",
        )
        parser.add_argument(
            "--recall-queries", type=int, default=200, help="queries whose exact nearest neighbours are computed"
        )
        parser.add_argument(
            "--hybrid-recall-queries",
            type=int,
            default=20,
            help="queries searched both through the index and exactly (each exact one scans the owner's chunks)",
        )
        parser.add_argument(
            "--ef-search",
            default="",
            help="comma-separated hnsw.ef_search values to measure recall and latency at (default: the one the "
            "search uses for this owner's size)",
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
        tiny_chunks: int = 200,
        recall_queries: int = 200,
        hybrid_recall_queries: int = 20,
        ef_search: str = "",
        trash_share: float = 0.0,
        **options,
    ):
        if chunks < 1 or queries < 1:
            raise CommandError("--chunks and --queries must be at least 1")
        try:
            ef_values = [int(v) for v in ef_search.split(",") if v.strip()]
        except ValueError:
            raise CommandError("--ef-search takes comma-separated integers, for example 40,80,120") from None
        if any(v < 1 or v > 1000 for v in ef_values):
            raise CommandError("--ef-search values must be between 1 and 1000 (pgvector's range)")
        begun = time.perf_counter()
        vector_search_option.apply(vector_search)
        bulk_mod.index_definitions()  # the production indexes are all there (fails loudly if not)
        rng = random.Random(seed)
        users = get_user_model().objects
        owner, _ = users.get_or_create(username=user, defaults={"email": f"{user}@localhost"})
        build = None
        if rebuild or MemoryChunk.objects.filter(owner=owner).count() != chunks:
            if bulk or chunks >= BULK_FROM:
                build = bulk_mod.bulk_build(owner, chunks, Corpus(seed), progress=self.stderr.write)
            else:
                started = time.perf_counter()
                self._build(owner, chunks, Corpus(seed))
                build = {"mode": "incremental", "build_s": round(time.perf_counter() - started, 1)}
        tiny = None
        if tiny_chunks:
            tiny, _ = users.get_or_create(username=f"{user}-tiny", defaults={"email": f"{user}-tiny@localhost"})
            if rebuild or MemoryChunk.objects.filter(owner=tiny).count() != tiny_chunks:
                self._build(tiny, tiny_chunks, Corpus(seed + 1))

        owner_ef_search = ef_search_for(owner_chunk_count(owner.pk))  # what the product uses for this owner
        ef_values = ef_values or [owner_ef_search]
        texts, vectors = Corpus(seed, stream=QUERY_STREAM).queries(queries)
        # The first searches after a build read the index from disk: every query runs once before
        # the timed run, so the figures are those of a server in use.
        with pgmemory.Sampler(pgmemory.backend_pid()) as memory:
            timings, _ = _timed_queries(owner, texts, vectors, warm=len(texts))
        chunk_grouped, _ = _timed_queries(owner, texts, vectors, group_by="chunk")
        tiny_figures = None
        if tiny is not None:
            tiny_texts, tiny_vectors = Corpus(seed + 1, stream=QUERY_STREAM).queries(queries)
            tiny_timings, _ = _timed_queries(tiny, tiny_texts, tiny_vectors)
            tiny_figures = {
                "chunks": MemoryChunk.objects.filter(owner=tiny).count(),
                "vector_search": vector_search_option.used_for(tiny.pk),
                **_latency(tiny_timings),
            }
        recall = None
        if recall_queries:
            recall = _recall(
                owner,
                texts,
                vectors,
                ef_values=ef_values,
                recall_queries=min(recall_queries, queries),
                hybrid_queries=min(hybrid_recall_queries, queries),
            )
        trash = _trash_run(owner, texts, vectors, share=trash_share, rng=rng, before=timings) if trash_share else None

        embedding.embed_query("warm-up")
        embed_times = []
        for text in texts[:50]:
            started = time.perf_counter()
            embedding.embed_query(text, cache=False)
            embed_times.append((time.perf_counter() - started) * 1000)
        with connection.cursor() as cursor:
            cursor.execute("SHOW shared_buffers")
            shared_buffers = cursor.fetchone()[0]

        self.stdout.write(
            json.dumps(
                {
                    "chunks": MemoryChunk.objects.filter(owner=owner).count(),
                    **_latency(timings),
                    "group_by": "memory",
                    "chunk_grouped": _latency(chunk_grouped),
                    "embed_query_ms": round(statistics.median(embed_times), 2),
                    "queries": len(timings),
                    "vector_search": vector_search_option.used_for(owner.pk),
                    "hnsw": {**bulk_mod.hnsw_parameters(), "ef_search": owner_ef_search},
                    "recall": recall,
                    "tiny_owner": tiny_figures,
                    "sizes_mb": bulk_mod.sizes_mb(),
                    "memory": {"shared_buffers": shared_buffers, "search_peaks_mb": memory.peaks},
                    "load_average": [round(x, 2) for x in os.getloadavg()],
                    "build": build,
                    "total_s": round(time.perf_counter() - begun, 1),
                    **({"trash": trash} if trash else {}),
                }
            )
        )

    def _build(self, owner, chunks: int, corpus: Corpus) -> None:
        """Row by row with every index in place, as the product inserts (small corpora)."""
        Memory.all_objects.filter(owner=owner).delete()
        now = timezone.now()
        model = embedding.model_name()
        built = 0
        for titles, texts, vectors in corpus.chunks(chunks, per_memory=CHUNKS_PER_MEMORY, batch=BATCH):
            with transaction.atomic():
                memories = Memory.objects.bulk_create(
                    [
                        Memory(
                            owner=owner,
                            title=title[:80],
                            content="(synthetic benchmark memory)",
                            content_hash=hashlib.sha256(f"{owner.pk}-{built}-{i}".encode()).hexdigest(),
                            auto_tags=[{"tag": "upload", "confidence": 1.0}],
                            tags=["upload"],
                            created_at=now,
                            updated_at=now,
                        )
                        for i, title in enumerate(titles)
                    ]
                )
                with (
                    connection.cursor() as cursor,
                    cursor.copy(
                        "COPY memories_memorychunk (owner_id, memory_id, position, text, char_start, char_end, "
                        "text_hash, embedding, embedding_model, tier) FROM STDIN"
                    ) as copy,
                ):
                    for i, text in enumerate(texts):
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
                                model,
                                "hot",
                            )
                        )
                lexical.index_memories(owner_id=owner.pk, memory_ids=[m.pk for m in memories])
            built += len(texts)
            self.stderr.write(f"\rbuilt {built}/{chunks} chunks", ending="")
        self.stderr.write("")
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE memories_memorychunk; ANALYZE memories_chunkterm; ANALYZE memories_memory")
