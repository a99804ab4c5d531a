"""Summarize: an extractive summary and a one-line preview for new or changed memories."""

from __future__ import annotations

from django.db.models import F, Q

from memories.models import Memory
from memories.services import memory_summaries_save
from sleep.steps import BatchOutcome, Scope, Step, failure
from sleep.summarizer import summarize


class SummarizeStep(Step):
    name = "summarize"
    batch_size = 500

    def due(self, scope: Scope):
        return scope.memories().filter(~Q(summarized_hash=F("content_hash")))

    def process(self, scope: Scope, ids: list[int]) -> BatchOutcome:
        outcome = BatchOutcome()
        summaries: dict[int, tuple[str, str, str]] = {}
        for memory in Memory.objects.filter(pk__in=ids).only("pk", "content", "content_hash", "summary"):
            try:
                summary, preview = summarize(memory.content)
            except Exception as exc:  # noqa: BLE001 - one memory's text must not stop the others
                outcome.failures.append(failure(memory.pk, exc))
                continue
            outcome.processed += 1
            outcome.changed += summary != memory.summary
            summaries[memory.pk] = (summary, preview, memory.content_hash)
        memory_summaries_save(summaries=summaries)
        return outcome
