"""Benchmark: what version history and the activity trail cost on the ingest and edit paths, against
history off, in one run; last line is JSON.

Rounds alternate history on and off (memories.services.history.history_off: the version triggers
ignored and no activity written), so the shared machine's drift falls on both sides alike:
- ingest: memory_create of --docs synthetic documents per side, chunks per second;
- content edits: memory_update of each memory's content to a new text (re-chunked, new text embedded);
- light edits: memory_update of the priority alone, where history's share of the work is largest.
A ratio of 1.05 means history adds 5%.
"""

from __future__ import annotations

import contextlib
import json
import random
import statistics
import time

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from bench.synthetic import document
from memories import auto_tags, embedding
from memories.models import Memory, MemoryChunk
from memories.services import memory_create, memory_update
from memories.services.history import history_off

BENCH_USER = "bench-history"


class Command(BaseCommand):
    help = "Time ingest and edits with version history on and off, alternating, in one run."

    def add_arguments(self, parser):
        parser.add_argument("--docs", type=int, default=60, help="documents per side and round")
        parser.add_argument("--rounds", type=int, default=4)
        parser.add_argument("--doc-chars", type=int, default=3000)
        parser.add_argument("--seed", type=int, default=31)

    def handle(self, *args, docs: int, rounds: int, doc_chars: int, seed: int, **options):
        rng = random.Random(seed)
        user, _ = get_user_model().objects.get_or_create(
            username=BENCH_USER, defaults={"email": "bench-history@localhost"}
        )
        Memory.objects.filter(owner=user).delete()
        embedding.embed_texts(["warm-up sentence for the benchmark"] * 4)
        auto_tags.warm_up()
        times: dict[str, dict[str, list[float]]] = {
            part: {"on": [], "off": []} for part in ("ingest", "content_edit", "light_edit")
        }
        chunks: dict[str, int] = {"on": 0, "off": 0}
        for round_no in range(rounds):
            order = ("on", "off") if round_no % 2 == 0 else ("off", "on")
            for side in order:
                texts = [document(rng, target_chars=doc_chars) for _ in range(docs)]
                edits = [document(rng, target_chars=doc_chars) for _ in range(docs)]
                made, stored_chunks, ingest_s, content_s, light_s = _side(user, texts, edits, side == "off", rng)
                times["ingest"][side].append(ingest_s)
                times["content_edit"][side].append(content_s)
                times["light_edit"][side].append(light_s)
                chunks[side] += stored_chunks
                Memory.objects.filter(pk__in=[m.pk for m in made]).delete()
        result: dict = {"docs_per_side_and_round": docs, "rounds": rounds, "backend": embedding.backend_id()}
        for part, sides in times.items():
            on, off = sum(sides["on"]), sum(sides["off"])
            result[part] = {
                "history_on_s": round(on, 3),
                "history_off_s": round(off, 3),
                "ratio": round(on / off, 3) if off else None,
                "median_round_ratio": round(
                    statistics.median(a / b for a, b in zip(sides["on"], sides["off"], strict=True) if b), 3
                ),
            }
        total_on, total_off = sum(times["ingest"]["on"]), sum(times["ingest"]["off"])
        result["ingest"]["chunks_per_s_on"] = round(chunks["on"] / total_on, 2) if total_on else None
        result["ingest"]["chunks_per_s_off"] = round(chunks["off"] / total_off, 2) if total_off else None
        Memory.objects.filter(owner=user).delete()
        self.stdout.write(json.dumps(result))


def _side(user, texts, edits, off: bool, rng):
    """Ingest the texts, edit each memory's content, then its priority; seconds of each part."""
    with history_off() if off else contextlib.nullcontext():
        started = time.perf_counter()
        made = [
            memory_create(owner=user, title=f"Benchmark document {i}", content=text) for i, text in enumerate(texts)
        ]
        ingest_s = time.perf_counter() - started
        stored_chunks = MemoryChunk.objects.filter(memory__in=made).count()
        started = time.perf_counter()
        for memory, text in zip(made, edits, strict=True):
            memory_update(memory=memory, content=text)
        content_s = time.perf_counter() - started
        started = time.perf_counter()
        for memory in made:
            memory_update(memory=memory, priority=round(rng.uniform(0.05, 0.95), 2))
        light_s = time.perf_counter() - started
    return made, stored_chunks, ingest_s, content_s, light_s
