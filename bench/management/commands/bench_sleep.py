"""Benchmark: one full sleep cycle over N memories, then one idle cycle (nothing changed). Last line: JSON.

Memories are short texts (the opening sentences of SciFact abstracts, cycled, so spaCy and YAKE see
real prose), seeded once in a bench user with batch embedding and reused. Before the full cycle the
user's memories are made due for every step: auto tags 8 days old, no summaries, no graph, no earlier
cycle, so Link covers everything.
"""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.utils import timezone

from bench.datasets import read_jsonl
from graph.models import Entity, MemoryExtraction, MemoryLink
from memories.models import Memory
from memories.services import MemoryInput, memory_create_many
from sleep.child import cycle_in_child
from sleep.models import SleepRun
from sleep.pipeline import sleep_run_execute, sleep_run_request

BENCH_USER = "bench-sleep"


def short_texts(data: Path, n: int) -> list[tuple[str, str]]:
    docs = [d for d in read_jsonl(data / "corpus.jsonl") if d.get("text")]
    texts = []
    for i in range(n):
        doc = docs[i % len(docs)]
        sentences = re.split(r"(?<=[.!?])\s+", doc["text"])
        texts.append((doc["title"][:200] or f"Note {i}", " ".join(sentences[:2])[:400] + f" (note {i})"))
    return texts


class Command(BaseCommand):
    help = "Time one full and one idle sleep cycle over N short memories."

    def add_arguments(self, parser):
        parser.add_argument("--memories", type=int, default=10_000)
        parser.add_argument("--data", default="../shared/bench/scifact")
        parser.add_argument("--user", default=BENCH_USER)
        parser.add_argument(
            "--via-worker",
            action="store_true",
            help="run each cycle as the scheduled task does: in a child process of its own "
            "(sleep.child), started and waited for here",
        )

    def handle(self, *args, memories, data, user, via_worker=False, **options):
        self.via_worker = via_worker
        if memories < 1:
            raise CommandError("--memories must be at least 1")
        owner, _ = get_user_model().objects.get_or_create(username=user, defaults={"email": f"{user}@bench.invalid"})
        have = Memory.objects.filter(owner=owner).count()
        if have != memories:
            Memory.objects.filter(owner=owner).delete()
            started = time.perf_counter()
            texts = short_texts(Path(data), memories)
            for start in range(0, memories, 500):
                memory_create_many(
                    owner=owner,
                    items=[MemoryInput(title=t, content=c, source="chat") for t, c in texts[start : start + 500]],
                )
            self.stderr.write(f"seeded {memories} memories in {time.perf_counter() - started:.1f} s")
        self._make_everything_due(owner)
        full = self._cycle(owner)
        idle = self._cycle(owner)
        steps = {s.step: round(s.metrics.get("duration_ms", 0) / 1000, 2) for s in full.steps.order_by("position")}
        idle_steps = {s.step: round(s.metrics.get("duration_ms", 0) / 1000, 3) for s in idle.steps.order_by("position")}
        self.stderr.write(
            f"full: {full.status}, {full.tasks_completed} tasks, {full.tasks_failed} failed; idle steps: {idle_steps}"
        )
        self.stdout.write(
            json.dumps(
                {
                    "memories": memories,
                    "full_cycle_s": round(full.duration_seconds, 2),
                    "idle_cycle_s": round(idle.duration_seconds, 2),
                    "steps": steps,
                    "idle_steps": idle_steps,
                    "failed": full.tasks_failed,
                    "path": "child process (scheduled)" if via_worker else "in process",
                }
            )
        )

    def _make_everything_due(self, owner) -> None:
        Memory.objects.filter(owner=owner).update(
            auto_tagged_at=timezone.now() - timedelta(days=8), summary="", preview="", summarized_hash=""
        )
        MemoryExtraction.objects.filter(memory__owner=owner).delete()
        MemoryLink.objects.filter(owner=owner).delete()
        Entity.objects.filter(owner=owner).delete()
        SleepRun.objects.filter(owner=owner).delete()

    def _cycle(self, owner) -> SleepRun:
        run, _ = sleep_run_request(trigger=SleepRun.Trigger.MANUAL, owner=owner)
        if self.via_worker:
            if cycle_in_child(run.pk)["status"] == "busy":
                raise CommandError("another sleep cycle is running; try again when it ends")
        elif sleep_run_execute(run_id=run.pk) is None:
            raise CommandError("another sleep cycle is running; try again when it ends")
        run.refresh_from_db()
        return run
