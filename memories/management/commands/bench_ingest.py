"""Benchmark: ingest N synthetic ~3 KB documents through memory_create; last line is JSON."""

from __future__ import annotations

import json
import random
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from memories import embedding
from memories.bench.synthetic import document
from memories.models import Memory, MemoryChunk
from memories.services import memory_create

BENCH_USER = "bench-ingest"


class Command(BaseCommand):
    help = "Time the ingestion pipeline against model.encode alone on the same chunks."

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=500)
        parser.add_argument("--doc-chars", type=int, default=3000)
        parser.add_argument("--seed", type=int, default=7)
        parser.add_argument("--keep", action="store_true", help="Keep the benchmark memories afterwards.")

    def handle(self, *args, docs: int, doc_chars: int, seed: int, keep: bool, **options):
        rng = random.Random(seed)
        user, _ = get_user_model().objects.get_or_create(username=BENCH_USER,
                                                         defaults={"email": "bench-ingest@localhost"})
        Memory.objects.filter(owner=user).delete()
        texts = [document(rng, target_chars=doc_chars) for _ in range(docs)]

        # Load the model and warm it up outside both timings.
        embedding.embed_texts(["warm-up sentence for the benchmark"] * 4)

        started = time.perf_counter()
        for i, text in enumerate(texts):
            memory_create(owner=user, title=f"Benchmark document {i}", content=text)
        pipeline_s = time.perf_counter() - started

        chunk_texts = list(MemoryChunk.objects.filter(owner=user).order_by("memory_id", "position")
                           .values_list("text", flat=True))
        started = time.perf_counter()
        embedding.get_model().encode(chunk_texts, batch_size=32, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        encode_s = time.perf_counter() - started

        if not keep:
            Memory.objects.filter(owner=user).delete()
        chunks = len(chunk_texts)
        result = {
            "docs": docs,
            "chunks": chunks,
            "seconds": round(pipeline_s, 3),
            "chunks_per_s": round(chunks / pipeline_s, 2) if pipeline_s else None,
            "encode_only_chunks_per_s": round(chunks / encode_s, 2) if encode_s else None,
            "overhead_ratio": round(pipeline_s / encode_s, 3) if encode_s else None,
        }
        self.stdout.write(json.dumps(result))
