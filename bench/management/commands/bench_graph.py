"""Benchmark: entity and relationship extraction over realistic chunks (SciFact abstracts); last line is JSON.

The abstracts are stored as memories once (untimed; embedding is not what is measured) and kept in
a dedicated user for the next run. The timed part is graph_extract_memories, the service the upload
task and the sleep agent call: spaCy plus every database write. extract_only_chunks_per_s times
the spaCy pass alone on the same chunks (--compare), so the ratio shows what the writes add.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count

from bench.datasets import read_jsonl
from core import workers
from graph import extraction
from graph.models import Entity, EntityMention, MemoryLink, Relationship
from graph.services import graph_extract_memories
from memories.models import Memory, MemoryChunk
from memories.services import MemoryInput, memory_create_many

BENCH_USER = "bench-graph"
DEFAULT_DATA = Path(settings.BASE_DIR).parent / "shared" / "bench" / "scifact"


class Command(BaseCommand):
    help = "Time graph extraction (spaCy + writes) on SciFact chunks."

    def add_arguments(self, parser):
        parser.add_argument("--chunks", type=int, default=2000)
        parser.add_argument("--data", default=str(DEFAULT_DATA), help="folder with a BEIR corpus.jsonl")
        parser.add_argument("--batch", type=int, default=250, help="memories per graph_extract_memories call")
        parser.add_argument("--compare", action="store_true", help="also time the spaCy pass alone")

    def handle(self, *args, chunks: int, data: str, batch: int, compare: bool, **options):
        if chunks < 1 or batch < 1:
            raise CommandError("--chunks and --batch must be at least 1")
        corpus_path = Path(data) / "corpus.jsonl"
        if not corpus_path.exists():
            raise CommandError(f"no corpus.jsonl in {data}")
        owner, _ = get_user_model().objects.get_or_create(
            username=BENCH_USER, defaults={"email": f"{BENCH_USER}@localhost"}
        )
        memory_ids = self._load(owner, read_jsonl(corpus_path), chunks)
        Entity.objects.filter(owner=owner).delete()
        MemoryLink.objects.filter(owner=owner).delete()
        extraction.extract_texts(["Warm-up: Alice works with the Product Team in San Francisco."])

        texts = list(MemoryChunk.objects.filter(memory_id__in=memory_ids).values_list("text", flat=True))
        started = time.perf_counter()
        for start in range(0, len(memory_ids), batch):
            graph_extract_memories(memory_ids=memory_ids[start : start + batch])
        seconds = time.perf_counter() - started
        result = {
            "chunks": len(texts),
            "chunks_per_s": round(len(texts) / seconds, 2),
            "entities": Entity.objects.filter(owner=owner).count(),
            "relationships": Relationship.objects.filter(owner=owner).count(),
            "mentions": EntityMention.objects.filter(owner=owner).count(),
            "memories": len(memory_ids),
            "seconds": round(seconds, 2),
            "processes": workers.processes(),
        }
        if compare:
            started = time.perf_counter()
            extraction.extract_texts(
                texts, processes=workers.processes(), max_chars=settings.KYBERNESIS_GRAPH_MAX_CHUNK_CHARS
            )
            alone = time.perf_counter() - started
            result["extract_only_chunks_per_s"] = round(len(texts) / alone, 2)
            result["write_overhead_ratio"] = round(seconds / alone, 3)
        self.stdout.write(json.dumps(result))

    def _load(self, owner, corpus: list[dict], chunks: int) -> list[int]:
        """The first memories of the corpus holding at least `chunks` chunks, ingesting what is missing."""

        def loaded() -> dict[str, tuple[int, int]]:
            rows = (
                Memory.objects.filter(owner=owner)
                .annotate(n=Count("chunks"))
                .values_list("metadata__beirId", "pk", "n")
            )
            return {beir_id: (pk, n) for beir_id, pk, n in rows}

        known = loaded()
        chosen: list[int] = []
        total = 0
        pending: list[dict] = []
        for doc in corpus:
            if total >= chunks:
                break
            if doc["_id"] in known:
                pk, n = known[doc["_id"]]
                chosen.append(pk)
                total += n
                continue
            pending.append(doc)
            # Rough guess of chunks per abstract, so ingestion stops near the target.
            if total + len(pending) * 2 >= chunks or len(pending) == 64:
                for memory in self._ingest(owner, pending):
                    if total < chunks:
                        chosen.append(memory.pk)
                        total += memory.chunk_count
                pending = []
        self.stderr.write("")
        return chosen

    def _ingest(self, owner, docs: list[dict]) -> list:
        memories = memory_create_many(
            owner=owner,
            items=[
                MemoryInput(
                    title=(doc.get("title") or doc["_id"])[:500],
                    content=f"{doc.get('title', '')}\n\n{doc['text']}".strip(),
                    metadata={"beirId": doc["_id"]},
                )
                for doc in docs
            ],
        )
        self.stderr.write(f"\ringested {len(memories)} more memories", ending="")
        return memories
